"""The system shared-memory extension: the regions a server has mapped, and the one place
where a tensor's shared-memory parameters become bytes, for every front end.

:meth:`~SharedMemoryRegions.register` opens a POSIX shared-memory object (a name, never a
path of the client's choice), checks ``offset + byte_size`` lies inside it and maps it;
:meth:`~SharedMemoryRegions.resolve` hands out a memoryview of a tensor's bytes (read-only for
an input); :meth:`~SharedMemoryRegions.unregister` forgets a region.

Invariants: off unless the operator enables it; the object's size is checked again at each use,
so a client that shrank it gets a 400, not a server killed by SIGBUS; no request ever reads
unmapped memory: a region still in use is unmapped when its last view is released.
docs/shared-memory.md has the protocol and the safety rules.
"""

from __future__ import annotations

import logging
import mmap
import os
import stat
from dataclasses import dataclass
from typing import Any

from oipcodec.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    NotFoundError,
    UnsupportedError,
)
from oipcodec.raw import array_to_raw
from oipcodec.sharedmem import Location, check_key, open_key
from oipcodec.types import Tensor

__all__ = [
    "AlreadyExistsError",
    "SharedMemoryRegions",
    "cuda_unsupported",
    "shared_memory_disabled",
]

log = logging.getLogger("oipcodec.server")


@dataclass(eq=False)
class _Region:
    name: str
    key: str
    offset: int
    byte_size: int
    fd: int
    map: mmap.mmap

    def status(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "key": self.key,
            "offset": self.offset,
            "byte_size": self.byte_size,
        }

    def close(self) -> None:
        """Close the descriptor, and the mapping unless arrays made from it are alive (then
        it is unmapped when the last of them goes)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        try:
            self.map.close()
        except BufferError:
            log.info("shared memory region '%s' is in use; unmapped when released", self.name)


class SharedMemoryRegions:
    """The system shared-memory regions registered with one server process.

    Used from the server's event loop (both front ends run on it); not thread-safe.
    """

    def __init__(self) -> None:
        self._regions: dict[str, _Region] = {}

    def __len__(self) -> int:
        return len(self._regions)

    def register(self, name: str, key: Any, offset: Any, byte_size: Any) -> None:
        """Map ``byte_size`` bytes at ``offset`` of the object ``key`` under ``name`` (each
        value is checked: they come from the wire)."""
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError("a shared memory region needs a non-empty name")
        if name in self._regions:
            raise AlreadyExistsError(f"shared memory region '{name}' already in manager")
        check_key(key)
        for label, value in (("offset", offset), ("byte_size", byte_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgumentError(
                    f"failed to register shared memory region '{name}': {label} must be a "
                    f"non-negative integer, got {value!r}"
                )
        if byte_size == 0:
            raise InvalidArgumentError(
                f"failed to register shared memory region '{name}': byte_size must be > 0"
            )
        for region in self._regions.values():
            if region.key == key:
                raise InvalidArgumentError(
                    f'registering an active shared memory key, "{key}", under a different '
                    "name is not currently supported"
                )
        try:
            fd = open_key(key)
        except OSError as exc:
            raise InvalidArgumentError(
                f"Unable to open shared memory region: '{key}' ({exc.strerror})"
            ) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise InvalidArgumentError(f"Invalid shared memory region: '{key}'")
            if offset + byte_size > info.st_size:
                raise InvalidArgumentError(
                    f"failed to register shared memory region '{name}': invalid args "
                    f"(offset {offset} + byte_size {byte_size} is beyond the "
                    f"{info.st_size} bytes of '{key}')"
                )
            mapping = mmap.mmap(fd, offset + byte_size, mmap.MAP_SHARED)
        except BaseException:
            os.close(fd)
            raise
        self._regions[name] = _Region(name, key, offset, byte_size, fd, mapping)
        log.info("registered shared memory region '%s' (%s, %d bytes)", name, key, byte_size)

    def status(self, name: str = "") -> list[dict[str, Any]]:
        """``{name, key, offset, byte_size}`` of region ``name``, or of every region."""
        if not name:
            return [region.status() for region in self._regions.values()]
        region = self._regions.get(name)
        if region is None:
            raise NotFoundError(f"Unable to find system shared memory region: '{name}'")
        return [region.status()]

    def unregister(self, name: str = "") -> None:
        """Forget region ``name`` (every region when empty) and close its mapping; an
        unknown name is no error (as Triton)."""
        names = list(self._regions) if not name else [name]
        for each in names:
            region = self._regions.pop(each, None)
            if region is not None:
                region.close()
                log.info("unregistered shared memory region '%s'", each)

    def close(self) -> None:
        """Unregister every region (server shutdown)."""
        self.unregister()

    def resolve(self, where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        """The ``where.byte_size`` bytes at ``where.offset`` of the region ``where.region``
        (:data:`oipcodec.sharedmem.Resolver`): read-only unless ``writable``."""
        region = self._regions.get(where.region)
        if region is None:
            raise InvalidArgumentError(
                f"{kind} '{tensor}': Unable to find shared memory region: '{where.region}'"
            )
        if where.offset + where.byte_size > region.byte_size:
            raise InvalidArgumentError(
                f"{kind} '{tensor}': Invalid offset for shared memory region: "
                f"'{where.region}': offset {where.offset} + byte_size {where.byte_size} is "
                f"beyond the region's {region.byte_size} bytes"
            )
        if os.fstat(region.fd).st_size < region.offset + region.byte_size:
            raise InvalidArgumentError(
                f"{kind} '{tensor}': shared memory region '{where.region}' was shrunk below "
                "its registered size; register it again"
            )
        start = region.offset + where.offset
        view = memoryview(region.map)[start : start + where.byte_size]
        return view if writable else view.toreadonly()

    def write(self, tensor: Tensor, where: Location) -> Location:
        """Write ``tensor``'s raw bytes (BYTES: length-prefixed) at ``where`` (a requested
        output's location); returns where they are (``byte_size``: the bytes written).
        :class:`InvalidArgumentError` when they do not fit in ``where.byte_size``."""
        raw = memoryview(array_to_raw(tensor.data, tensor.datatype)).cast("B")
        if len(raw) > where.byte_size:
            raise InvalidArgumentError(
                f"output '{tensor.name}' holds {len(raw)} bytes, more than the "
                f"{where.byte_size} bytes given in shared memory region '{where.region}'"
            )
        view = self.resolve(where, tensor.name, "output", True)
        view[: len(raw)] = raw
        return Location(where.region, len(raw), where.offset)


def shared_memory_disabled(where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
    """The :data:`~oipcodec.sharedmem.Resolver` of a server without the extension."""
    raise InvalidArgumentError(
        f"{kind} '{tensor}' names shared memory region '{where.region}', but shared memory is "
        "not enabled on this server (start it with --shared-memory system)"
    )


def cuda_unsupported(name: str) -> UnsupportedError:
    """The answer to a CUDA shared-memory registration: this server has no GPU support (the
    words of a Triton built without it)."""
    return UnsupportedError(
        f"failed to register CUDA shared memory region: '{name}', GPUs not supported"
    )
