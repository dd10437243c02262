"""Keeping freed heap memory for the next request: glibc's ``M_TOP_PAD``.

A server that decodes megabyte tensors allocates and frees several buffers of that size per
request. With glibc's defaults each malloc arena gives the free top of its heap back to the
kernel and takes it again for the next request, so every request pays for fresh zeroed pages.
``M_TOP_PAD`` makes each heap keep that much free memory at its top, so megabyte buffers are
carved from memory the process already has. The default, 64 MiB, cut page faults per request
by more than 20 times; a smaller pad is worse than none, as setting any malloc parameter also
fixes glibc's mmap threshold at 128 KiB (docs/measurements.md#malloc-top-pad).
"""

from __future__ import annotations

import ctypes
import logging
import os

__all__ = ["set_malloc_top_pad"]

log = logging.getLogger("oipcodec.server")

#: ``M_TOP_PAD`` of glibc's <malloc.h>.
_M_TOP_PAD = -2

#: Environment variables through which an operator already tunes glibc's malloc.
_OPERATOR_SETTINGS = ("MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def _glibc() -> ctypes.CDLL | None:
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        return None  # not a GNU C library (musl, macOS, Windows)
    if not version or not version.startswith("glibc"):
        return None
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def set_malloc_top_pad(nbytes: int) -> bool:
    """Set glibc's ``M_TOP_PAD`` to ``nbytes`` for this whole process; True when it took effect.

    Nothing is changed, and False returned, when ``nbytes`` is 0, where the C library is not
    glibc (musl, macOS, Windows: their allocators have no such parameter), and when the
    environment already tunes glibc's malloc (``MALLOC_TOP_PAD_``, ``MALLOC_TRIM_THRESHOLD_``
    or ``GLIBC_TUNABLES``): the operator's choice wins. The process keeps up to about
    ``nbytes`` of freed memory per malloc arena instead of returning it to the system.
    """
    if nbytes < 0:
        raise ValueError(f"malloc_top_pad must be >= 0 bytes, got {nbytes}")
    if nbytes == 0:
        return False
    if any(name in os.environ for name in _OPERATOR_SETTINGS):
        log.debug("malloc: left as the environment tunes it")
        return False
    libc = _glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    if not mallopt(_M_TOP_PAD, min(nbytes, 2**31 - 1)):
        return False
    log.debug("malloc: M_TOP_PAD set to %d bytes", nbytes)
    return True
