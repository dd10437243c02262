"""The system shared-memory extension: the regions a server has registered, and the one place
where a tensor's shared-memory parameters become bytes, for every front end.

:meth:`~SharedMemoryRegions.register` opens a POSIX shared-memory object (a name, never a
path of the client's choice, inside the operator's prefix if one is set), checks ``offset +
byte_size`` lies inside it and keeps its descriptor; :meth:`~SharedMemoryRegions.resolve`
reads a tensor's bytes with ``preadv``, :meth:`~SharedMemoryRegions.write` writes an output
with ``pwritev``; :meth:`~SharedMemoryRegions.unregister` closes the descriptor.

Invariants: off unless the operator enables it; nothing is mapped, so a sparse, shrunk or
full object gives the request a 400, never the server a SIGBUS; one descriptor per region,
at most ``max_regions`` regions and ``max_bytes`` registered bytes. docs/shared-memory.md has
the protocol, the safety rules and the trust model.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    NotFoundError,
    UnavailableError,
    UnsupportedError,
)
from oipcodec.raw import array_to_raw
from oipcodec.sharedmem import Location, check_key, open_key
from oipcodec.types import Tensor

__all__ = [
    "AlreadyExistsError",
    "CopyOffLoop",
    "DEFAULT_MAX_SHM_BYTES",
    "DEFAULT_MAX_SHM_REGIONS",
    "Reader",
    "SharedMemoryRegions",
    "check_prefix",
    "cuda_unsupported",
    "shared_memory_disabled",
]

log = logging.getLogger("oipcodec.server")

#: Most regions one server keeps registered (each holds one file descriptor).
DEFAULT_MAX_SHM_REGIONS = 256
#: Most bytes all registered regions span together, and so the most the requests in flight
#: may copy out of shared memory together (1 GiB).
DEFAULT_MAX_SHM_BYTES = 1 << 30

# preadv/pwritev move at most this many bytes a call on Linux (MAX_RW_COUNT).
_CHUNK = 0x7FFFF000


def check_prefix(prefix: object) -> str:
    """``prefix`` if it can begin a POSIX shared-memory name (``/`` then at most 255
    characters, no other ``/`` or NUL), else ``ValueError``."""
    if not isinstance(prefix, str):
        raise ValueError(f"shared_memory_prefix must be a string, got {prefix!r}")
    rest = prefix[1:]
    if not prefix.startswith("/") or "/" in rest or "\x00" in rest or len(rest) > 255:
        raise ValueError(
            "shared_memory_prefix must be the start of a POSIX shared memory name: '/' "
            f"followed by at most 255 characters without '/', got {prefix!r}"
        )
    return prefix


class CopyOffLoop(Exception):
    """Raised by a :class:`Reader` made for the event loop before a copy too large for it:
    the caller decodes the request again in a worker thread. Not an
    :class:`~oipcodec.errors.OIPError`, so no codec turns it into an answer."""


@dataclass(eq=False)
class _Region:
    name: str
    key: str
    offset: int
    byte_size: int
    fd: int
    # Reads running on it (in codec threads too), and whether it was unregistered meanwhile:
    # its descriptor is closed by the last read, never under one.
    users: int = 0
    retired: bool = False

    def status(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "key": self.key,
            "offset": self.offset,
            "byte_size": self.byte_size,
        }

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class SharedMemoryRegions:
    """The system shared-memory regions registered with one server process.

    ``prefix``: keys must start with it (``None``: any key, as Triton); ``max_regions`` and
    ``max_bytes``: the most regions, and registered bytes, held at once, and the most bytes
    the requests in flight copy out of them together (:class:`Reader`). Registered and
    unregistered from the server's event loop; :meth:`resolve` also runs in codec threads (a
    large request is decoded there): what it shares with the loop is locked.
    """

    def __init__(
        self,
        prefix: str | None = None,
        max_regions: int = DEFAULT_MAX_SHM_REGIONS,
        max_bytes: int = DEFAULT_MAX_SHM_BYTES,
    ) -> None:
        self.prefix = None if prefix is None else check_prefix(prefix)
        self.max_regions = max_regions
        self.max_bytes = max_bytes
        self._regions: dict[str, _Region] = {}
        self._bytes = 0
        # Bytes copied out of shared memory by the requests in flight (each request's Reader
        # gives its own back when the request ends), and the lock of that count and of the
        # regions' read pins (a read in a codec thread pins its region).
        self._copied = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._regions)

    @property
    def registered_bytes(self) -> int:
        """The bytes all registered regions span together."""
        return self._bytes

    def register(self, name: str, key: Any, offset: Any, byte_size: Any) -> None:
        """Open ``byte_size`` bytes at ``offset`` of the object ``key`` as region ``name`` (each
        value is checked: they come from the wire)."""
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError("a shared memory region needs a non-empty name")
        if name in self._regions:
            raise AlreadyExistsError(f"shared memory region '{name}' already in manager")
        check_key(key)
        failed = f"failed to register shared memory region '{name}'"
        if self.prefix is not None and not key.startswith(self.prefix):
            raise InvalidArgumentError(
                f"{failed}: key '{key}' is outside the prefix '{self.prefix}' this server "
                "allows (--shared-memory-prefix)"
            )
        for label, value in (("offset", offset), ("byte_size", byte_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgumentError(
                    f"{failed}: {label} must be a non-negative integer, got {value!r}"
                )
        if byte_size == 0:
            raise InvalidArgumentError(f"{failed}: byte_size must be > 0")
        for region in self._regions.values():
            if region.key == key:
                raise InvalidArgumentError(
                    f'registering an active shared memory key, "{key}", under a different '
                    "name is not currently supported"
                )
        if len(self._regions) >= self.max_regions:
            raise InvalidArgumentError(
                f"{failed}: {len(self._regions)} regions are registered, the most this server "
                "holds (--max-shm-regions); unregister one first"
            )
        if self._bytes + byte_size > self.max_bytes:
            raise InvalidArgumentError(
                f"{failed}: its {byte_size} bytes would bring the registered regions to "
                f"{self._bytes + byte_size} bytes, over this server's budget of "
                f"{self.max_bytes} (--shared-memory-budget); unregister regions first"
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
                    f"{failed}: invalid args (offset {offset} + byte_size {byte_size} is "
                    f"beyond the {info.st_size} bytes of '{key}')"
                )
        except BaseException:
            os.close(fd)
            raise
        # No mmap: bytes move with preadv/pwritev, which answer a sparse, shrunk or full
        # object with an error where a mapping's page fault is a SIGBUS, and keep one fd.
        self._regions[name] = _Region(name, key, offset, byte_size, fd)
        self._bytes += byte_size
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
        """Forget region ``name`` (every region when empty) and close its descriptor; an
        unknown name is no error (as Triton)."""
        names = list(self._regions) if not name else [name]
        for each in names:
            region = self._regions.pop(each, None)
            if region is not None:
                self._bytes -= region.byte_size
                with self._lock:
                    region.retired = True
                    if not region.users:  # else the last read running on it closes it
                        region.close()
                log.info("unregistered shared memory region '%s'", each)

    def close(self) -> None:
        """Unregister every region (server shutdown)."""
        self.unregister()

    def _place(self, where: Location, tensor: str, kind: str) -> tuple[_Region, int]:
        """The region ``where`` names and the object offset it starts at, checked."""
        region = self._find(where, tensor, kind)
        return region, self._start(region, where, tensor, kind)

    def _find(self, where: Location, tensor: str, kind: str) -> _Region:
        region = self._regions.get(where.region)
        if region is None:
            raise InvalidArgumentError(
                f"{kind} '{tensor}': Unable to find shared memory region: '{where.region}'"
            )
        return region

    def _start(self, region: _Region, where: Location, tensor: str, kind: str) -> int:
        """The object offset ``where`` starts at in ``region``, checked."""
        if where.offset + where.byte_size > region.byte_size:
            raise InvalidArgumentError(
                f"{kind} '{tensor}': Invalid offset for shared memory region: "
                f"'{where.region}': offset {where.offset} + byte_size {where.byte_size} is "
                f"beyond the region's {region.byte_size} bytes"
            )
        if os.fstat(region.fd).st_size < region.offset + region.byte_size:
            raise _shrunk(where, tensor, kind)
        return region.offset + where.offset

    def resolve(self, where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        """A copy of the ``where.byte_size`` bytes at ``where.offset`` of the region
        ``where.region`` (:data:`oipcodec.sharedmem.Resolver`): read-only unless
        ``writable``. A region shrunk under the read is a 400, not a fault; one unregistered
        during the read (from the event loop, while this runs in a codec thread) stays open
        until the read is done."""
        with self._lock:
            region = self._find(where, tensor, kind)
            region.users += 1
        try:
            start = self._start(region, where, tensor, kind)
            buffer = np.empty(where.byte_size, np.uint8).data  # not zeroed: preadv fills it
            done = 0
            while done < where.byte_size:
                try:
                    got = os.preadv(region.fd, [buffer[done : done + _CHUNK]], start + done)
                except OSError as exc:
                    raise _failed(where, tensor, kind, exc) from None
                if got == 0:
                    raise _shrunk(where, tensor, kind)
                done += got
        finally:
            with self._lock:
                region.users -= 1
                if region.retired and not region.users:
                    region.close()
        return buffer if writable else buffer.toreadonly()

    def _reserve(self, where: Location, tensor: str, kind: str) -> None:
        """Count ``where.byte_size`` bytes more copied by the requests in flight, or refuse
        them with :class:`UnavailableError` (503: the request is valid, and fits once
        requests in flight end) naming the region, the bytes, the budget and the bytes in
        flight."""
        size = where.byte_size
        with self._lock:
            if self._copied + size > self.max_bytes:
                raise UnavailableError(
                    f"{kind} '{tensor}': reading its {size} bytes of shared memory region "
                    f"'{where.region}' would bring the bytes copied by the requests in flight "
                    f"from {self._copied} to {self._copied + size}, over this server's budget "
                    f"of {self.max_bytes} (--shared-memory-budget); retry when fewer requests "
                    "are in flight"
                )
            self._copied += size

    def _release(self, size: int) -> None:
        with self._lock:
            self._copied -= size

    @property
    def copied_bytes(self) -> int:
        """The bytes copied out of shared memory by the requests in flight."""
        return self._copied

    def write(self, tensor: Tensor, where: Location) -> Location:
        """Write ``tensor``'s raw bytes (BYTES: length-prefixed) at ``where`` (a requested
        output's location); returns where they are (``byte_size``: the bytes written).
        :class:`InvalidArgumentError` when they do not fit in ``where.byte_size`` or the
        object cannot take them (shrunk, or its file system full)."""
        raw = memoryview(array_to_raw(tensor.data, tensor.datatype)).cast("B")
        if len(raw) > where.byte_size:
            raise InvalidArgumentError(
                f"output '{tensor.name}' holds {len(raw)} bytes, more than the "
                f"{where.byte_size} bytes given in shared memory region '{where.region}'"
            )
        region, start = self._place(where, tensor.name, "output")
        done = 0
        while done < len(raw):
            try:
                done += os.pwritev(region.fd, [raw[done : done + _CHUNK]], start + done)
            except OSError as exc:
                raise _failed(where, tensor.name, "output", exc) from None
        return Location(where.region, len(raw), where.offset)


class Reader:
    """The :data:`~oipcodec.sharedmem.Resolver` of one request: reads through
    :meth:`SharedMemoryRegions.resolve` (``regions`` None: the extension is off, every
    tensor in shared memory is refused). One request reads at most ``max_bytes`` (more: a
    400, it never fits), and the requests in flight together as much (more: a 503, it fits
    later): :meth:`release`, when the request ends (on every path), gives its bytes back.
    ``copy_below``: the decode runs on the event loop, which copies less than that many bytes
    at a time; a larger copy raises :class:`CopyOffLoop` first (then :meth:`off_loop`, and
    the decode runs again in a worker thread)."""

    __slots__ = ("_copy_below", "_held", "_left", "_regions")

    def __init__(self, regions: SharedMemoryRegions | None, copy_below: int | None = None):
        self._regions = regions
        self._copy_below = copy_below
        self._left = 0 if regions is None else regions.max_bytes
        self._held = 0

    def __call__(self, where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        regions = self._regions
        if regions is None:
            return shared_memory_disabled(where, tensor, kind, writable)
        if where.byte_size > self._left:  # never fits: a 400, where the next check is a 503
            raise InvalidArgumentError(
                f"{kind} '{tensor}': the request's tensors in shared memory (region "
                f"'{where.region}' the last) hold more than the {regions.max_bytes} bytes one "
                "request may read (--shared-memory-budget)"
            )
        if self._copy_below is not None and where.byte_size >= self._copy_below:
            raise CopyOffLoop(where.region)
        regions._reserve(where, tensor, kind)
        try:
            copied = regions.resolve(where, tensor, kind, writable)
        except BaseException:
            regions._release(where.byte_size)
            raise
        self._left -= where.byte_size
        self._held += where.byte_size
        return copied

    def release(self) -> None:
        """The request is over: its copies no longer count against the budget."""
        if self._held and self._regions is not None:
            self._regions._release(self._held)
            self._left += self._held
        self._held = 0

    def off_loop(self) -> None:
        """The decode starts again in a worker thread: the copies made so far are given
        back, and no copy is refused for its size any more."""
        self.release()
        self._copy_below = None


def _shrunk(where: Location, tensor: str, kind: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"{kind} '{tensor}': shared memory region '{where.region}' was shrunk below its "
        "registered size; register it again"
    )


def _failed(where: Location, tensor: str, kind: str, exc: OSError) -> InvalidArgumentError:
    verb = "read" if kind == "input" else "write"
    return InvalidArgumentError(
        f"{kind} '{tensor}': cannot {verb} shared memory region '{where.region}': "
        f"{exc.strerror or exc}"
    )


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
