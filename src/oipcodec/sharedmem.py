"""Tensors in shared memory: the tensor parameters of the shared-memory extensions.

A tensor whose bytes are in a region registered with the server carries no data; its
parameters say where they are, as in Triton's system shared-memory extension:
``shared_memory_region`` (the registered name), ``shared_memory_byte_size`` and
``shared_memory_offset`` (default 0). On an input the server reads the tensor there; on a
requested output it writes it there and answers with these parameters and no data.

The codecs read the parameters with :func:`location` and get the bytes from a
:data:`Resolver` (the server's mapped regions, or a client's); the bytes become an array as
the binary extension's do (:func:`oipcodec.raw.raw_to_array`: exact size, BYTES framing
validated, no copy). Invariant: this module holds no region itself. docs/shared-memory.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oipcodec.errors import DecodeError, InvalidArgumentError
from oipcodec.types import Parameters

__all__ = [
    "SHM_BYTE_SIZE",
    "SHM_OFFSET",
    "SHM_PARAMETERS",
    "SHM_REGION",
    "KEY_MAX_LENGTH",
    "Location",
    "Resolver",
    "check_key",
    "location",
    "names_region",
    "no_regions",
    "open_key",
    "parameters_for",
    "unlink_key",
]

SHM_REGION = "shared_memory_region"
SHM_BYTE_SIZE = "shared_memory_byte_size"
SHM_OFFSET = "shared_memory_offset"
#: The three parameter names: they steer the transport, not the model.
SHM_PARAMETERS = frozenset({SHM_REGION, SHM_BYTE_SIZE, SHM_OFFSET})


@dataclass(frozen=True, slots=True)
class Location:
    """Where a tensor's bytes are: ``byte_size`` bytes at ``offset`` in region ``region``."""

    region: str
    byte_size: int
    offset: int = 0


#: ``resolve(location, tensor, kind, writable)``: the ``location.byte_size`` bytes of the
#: region (a memoryview, read-only unless ``writable``), or a :class:`~oipcodec.errors.
#: RequestError` / :class:`DecodeError` naming the tensor (``kind``: "input" or "output").
#: The codecs answer its errors as a bad request (a :class:`DecodeError` at the tensor),
#: except an :class:`~oipcodec.errors.UnavailableError` (the server is full for now), raised
#: as it is.
Resolver = Callable[[Location, str, str, bool], memoryview]


def names_region(parameters: Parameters | None) -> bool:
    """Whether ``parameters`` put their tensor in a shared-memory region."""
    return parameters is not None and SHM_REGION in parameters


def location(parameters: Parameters) -> Location | None:
    """The region location the tensor ``parameters`` give, ``None`` when they name no region.

    Raises :class:`DecodeError` for a region name that is not a non-empty string, a missing
    byte size, or a size or offset that is not a non-negative integer.
    """
    region = parameters.get(SHM_REGION)
    if region is None:
        for name in (SHM_BYTE_SIZE, SHM_OFFSET):
            if name in parameters:
                raise DecodeError(f"has '{name}' but no '{SHM_REGION}'")
        return None
    if not isinstance(region, str) or not region:
        raise DecodeError(f"'{SHM_REGION}' must be a non-empty string, got {region!r}")
    if SHM_BYTE_SIZE not in parameters:
        raise DecodeError(f"names shared memory region '{region}' but has no '{SHM_BYTE_SIZE}'")
    byte_size = _non_negative(parameters[SHM_BYTE_SIZE], SHM_BYTE_SIZE)
    offset = _non_negative(parameters.get(SHM_OFFSET, 0), SHM_OFFSET)
    return Location(region, byte_size, offset)


def parameters_for(where: Location) -> Parameters:
    """The tensor parameters that put a tensor at ``where`` (no offset parameter for 0, as
    tritonclient writes them)."""
    parameters: Parameters = {SHM_REGION: where.region, SHM_BYTE_SIZE: where.byte_size}
    if where.offset:
        parameters[SHM_OFFSET] = where.offset
    return parameters


def _non_negative(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DecodeError(f"'{name}' must be a non-negative integer, got {value!r}")
    return value


def no_regions(where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
    """The :data:`Resolver` of a decoder that was given none: a tensor in shared memory is
    refused, naming its region."""
    raise DecodeError(
        f"is in shared memory region '{where.region}', and no shared memory regions are known "
        "here (a server needs its shared-memory extension enabled; a client, the region "
        "registered through it)"
    )


# ----------------------------------------------------------------------------- POSIX objects

#: The longest POSIX shared-memory name after its leading ``/`` (NAME_MAX).
KEY_MAX_LENGTH = 255


def check_key(key: object) -> str:
    """``key`` if it is a POSIX shared-memory name (``/`` then 1 to 255 characters, none of
    them ``/`` or NUL, not ``.`` or ``..``), else :class:`~oipcodec.errors.
    InvalidArgumentError`: a key never names a path of the caller's choice."""
    if not isinstance(key, str):
        raise InvalidArgumentError(f"shared memory key must be a string, got {key!r}")
    rest = key[1:]
    if (
        not key.startswith("/")
        or not rest
        or len(rest) > KEY_MAX_LENGTH
        or "/" in rest
        or "\x00" in rest
        or rest in (".", "..")
    ):
        raise InvalidArgumentError(
            f"invalid shared memory key {key!r}: a key is a POSIX shared memory name, '/' "
            f"followed by 1 to {KEY_MAX_LENGTH} characters without '/'"
        )
    return key


def open_key(key: str, create: bool = False) -> int:
    """A read-write descriptor of the POSIX shared-memory object ``key`` (``shm_open``, as
    multiprocessing.shared_memory opens it; on Linux a file of ``/dev/shm``), made new (and
    empty, mode 0600) when ``create``, else an existing one. ``key`` must pass
    :func:`check_key`. Raises ``OSError``."""
    check_key(key)
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    try:
        import _posixshmem  # type: ignore[import-not-found]  # the stdlib's shm_open
    except ImportError:  # pragma: no cover - every POSIX CPython has it
        return os.open("/dev/shm" + key, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fd: int = _posixshmem.shm_open(key, flags, mode=0o600)
    return fd


def unlink_key(key: str) -> None:
    """Remove the POSIX shared-memory object ``key`` (``shm_unlink``); mappings of it stay
    valid until closed. Raises ``OSError``."""
    check_key(key)
    try:
        import _posixshmem
    except ImportError:  # pragma: no cover
        os.unlink("/dev/shm" + key)
        return
    _posixshmem.shm_unlink(key)
