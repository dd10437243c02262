"""gzip and deflate bodies through the fastest deflate library installed.

HTTP bodies may be compressed (``Content-Encoding: gzip`` or ``deflate``); this module is the one
place that compresses and inflates them, for the REST codec, the server and the clients. The
library is picked once, at import, by what is installed (:data:`BACKEND` says which):

- ``isal`` (python-isal, Intel's ISA-L) at level 2, ISA-L's default: tens of times faster than
  zlib's level 6 at about its ratio, where level 1 is no faster and larger on JSON text
  (docs/measurements.md, "Compression");
- ``zlib_ng`` (zlib-ng, zlib's API) at level 2, which keeps level 6's ratio: when ISA-L is absent;
- the standard library's ``zlib`` at level 6 (zlib's default): the fallback.

``pip install oipcodec[fast-compression]`` installs ISA-L (the ``server`` and ``bench`` extras
include it). Whichever library runs, the bytes on the wire are standard gzip (RFC 1952) and
zlib-wrapped deflate (RFC 1950), which any peer reads, and inflating keeps the same size cap.
"""

from __future__ import annotations

import importlib
import zlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from oipcodec._shared.buffers import byte_view
from oipcodec.errors import DecodeError, EncodeError, LimitError
from oipcodec.limits import DEFAULT_LIMITS

__all__ = ["BACKEND", "LEVEL", "MAX_LEVEL", "compress", "decompress"]


@dataclass(frozen=True)
class _Backend:
    name: str  # what BACKEND reports
    module: str  # the zlib-compatible module to import
    level: int  # the level compress() uses when none is given
    max_level: int


# In order of preference; each module has zlib's compressobj/decompressobj API.
_BACKENDS = (
    _Backend("isal", "isal.isal_zlib", 2, 3),
    _Backend("zlib-ng", "zlib_ng.zlib_ng", 2, 9),
    _Backend("zlib", "zlib", 6, 9),
)


def _pick() -> tuple[_Backend, ModuleType]:
    for backend in _BACKENDS:
        try:
            return backend, importlib.import_module(backend.module)
        except ImportError:
            continue
    raise AssertionError("the standard library's zlib is always importable")  # pragma: no cover


_backend, _lib = _pick()

#: The library in use: ``"isal"``, ``"zlib-ng"`` or ``"zlib"``.
BACKEND: str = _backend.name
#: The level :func:`compress` uses by default (on :data:`BACKEND`'s own scale).
LEVEL: int = _backend.level
#: The highest level :data:`BACKEND` takes (3 for ISA-L, 9 for the others).
MAX_LEVEL: int = _backend.max_level

# Errors a malformed stream raises (ISA-L's is not a subclass of zlib.error).
_ERRORS: tuple[type[BaseException], ...] = tuple({zlib.error, _lib.error})


def _wbits(encoding: str, error: type[Exception], stream: memoryview | None = None) -> int:
    """The window bits for ``encoding``: gzip, or zlib-wrapped deflate; when inflating (a
    ``stream`` given), ``deflate`` without the zlib header is bare deflate."""
    if encoding == "gzip":
        return 16 + zlib.MAX_WBITS
    if encoding == "deflate":
        if stream is None:
            return zlib.MAX_WBITS
        # RFC 1950 header: method 8 in the low nibble, and the first two bytes a multiple of 31.
        zlib_header = (
            len(stream) >= 2 and (stream[0] & 0x0F) == 8 and (stream[0] * 256 + stream[1]) % 31 == 0
        )
        return zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS
    raise error(f"unsupported Content-Encoding {encoding!r}; expected gzip or deflate")


def decompress(
    data: Any, encoding: str, max_size: int = DEFAULT_LIMITS.max_decompressed_bytes
) -> bytes:
    """Inflate a ``gzip`` or ``deflate`` body, refusing to grow past ``max_size`` bytes.

    Parameters
    ----------
    data
        The compressed body.
    encoding
        ``"gzip"`` or ``"deflate"``; ``deflate`` accepts both the zlib wrapper (what the HTTP
        spec says) and bare deflate (what some clients send).
    max_size
        The cap, checked while inflating, so a small "zip bomb" costs at most ``max_size`` bytes
        of memory.

    Raises
    ------
    LimitError
        The body inflates past ``max_size``.
    DecodeError
        A truncated stream, or bytes after the end of the stream.
    """
    view = byte_view(data, "body")
    encoding = encoding.strip().lower()
    inflater = _lib.decompressobj(_wbits(encoding, DecodeError, view))
    chunks: list[bytes] = []
    size = 0
    pending: Any = view
    try:
        while not inflater.eof:
            # At most one byte past the cap: enough to know the cap was passed. The libraries
            # grow their output as it fills, so a large cap costs nothing up front, and a
            # well-formed body comes out in one call (no chunks to join).
            chunk = inflater.decompress(pending, max_size - size + 1)
            pending = inflater.unconsumed_tail
            if not chunk and not pending:
                break  # input used up and nothing more comes out: the stream is truncated
            size += len(chunk)
            if size > max_size:
                # The traceback keeps this frame: not the inflated bytes with it.
                chunks.clear()
                del chunk
                raise LimitError(f"the {encoding} body inflates past the limit of {max_size} bytes")
            chunks.append(chunk)
    except _ERRORS as exc:
        raise DecodeError(f"invalid {encoding} body: {exc}") from None
    if not inflater.eof:
        raise DecodeError(f"the {encoding} body is truncated")
    if inflater.unused_data:
        raise DecodeError(
            f"{len(inflater.unused_data)} bytes follow the end of the {encoding} stream"
        )
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def compress(data: Any, encoding: str, level: int | None = None) -> bytes:
    """Compress a body for ``Content-Encoding: gzip`` or ``deflate`` (zlib-wrapped, per HTTP).

    Parameters
    ----------
    data
        The body.
    encoding
        ``"gzip"`` or ``"deflate"``.
    level
        On :data:`BACKEND`'s scale, 0 to :data:`MAX_LEVEL`; the default is :data:`LEVEL`, the
        level picked for that library.
    """
    wbits = _wbits(encoding.strip().lower(), EncodeError)
    if level is None:
        level = LEVEL
    elif not 0 <= level <= MAX_LEVEL:
        raise EncodeError(
            f"compression level {level} is out of range: {BACKEND} takes 0 to {MAX_LEVEL}"
        )
    deflater = _lib.compressobj(level, zlib.DEFLATED, wbits)
    return deflater.compress(byte_view(data, "body")) + deflater.flush()
