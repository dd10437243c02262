"""System shared memory for a client on the server's host: regions, tensors in them, and the
clients' shared-memory calls.

:class:`SharedMemoryRegion` makes (or opens) a POSIX shared-memory object with the standard
library (``shm_open``; no libcshm, no resource tracker), writes arrays into it
(:meth:`~SharedMemoryRegion.input`) and reads them back (:meth:`~SharedMemoryRegion.array`).
:class:`SharedMemoryCalls` (and its asyncio twin) are the register / unregister / status
methods of every client, the same over HTTP and gRPC.

An output the server wrote into a region registered through a client comes back as an array
read from that region. Nothing is mapped (bytes move with ``pwritev``/``preadv``), so an object
the server shrank or a full /dev/shm is an error, never a SIGBUS. docs/shared-memory.md has a
worked example.
"""

# Invariant: a region registered through a client is opened by that client too, so an output
# the server wrote there comes back as an array read from the region.

from __future__ import annotations

import contextlib
import os
import secrets
from typing import Any, Literal

import numpy as np

from oipcodec import datatypes
from oipcodec.errors import DecodeError
from oipcodec.raw import array_to_raw, raw_to_array
from oipcodec.sharedmem import Location, open_key, parameters_for, unlink_key
from oipcodec.types import RequestedOutput, Tensor

__all__ = ["AsyncSharedMemoryCalls", "RegionTable", "SharedMemoryCalls", "SharedMemoryRegion"]


class SharedMemoryRegion:
    """``byte_size`` bytes at ``offset`` of the POSIX shared-memory object ``key``.

    Make one with :meth:`create` (a new object, removed again by :meth:`close`) or
    :meth:`attach` (an existing one, e.g. made by tritonclient.utils.shared_memory).

    Parameters
    ----------
    name
        The region's name on servers, once registered.
    key
        The POSIX shared-memory object (``/name``).
    byte_size, offset
        The bytes of the object the region covers.
    owner
        This region made the object, and :meth:`close` removes it.
    """

    def __init__(
        self, name: str, key: str, byte_size: int, offset: int = 0, *, owner: bool = False
    ) -> None:
        if byte_size <= 0 or offset < 0:
            raise ValueError(f"byte_size must be > 0 and offset >= 0, got {byte_size}, {offset}")
        self.name = name
        self.key = key
        self.byte_size = byte_size
        self.offset = offset
        self.owner = owner
        fd = open_key(key, create=owner)
        try:
            if owner:
                # Pages made now: a /dev/shm too small for the region fails here, not later.
                if hasattr(os, "posix_fallocate"):
                    os.posix_fallocate(fd, 0, offset + byte_size)
                else:  # pragma: no cover - macOS
                    os.ftruncate(fd, offset + byte_size)
            elif os.fstat(fd).st_size < offset + byte_size:
                raise ValueError(
                    f"shared memory object {key} holds {os.fstat(fd).st_size} bytes, fewer "
                    f"than offset {offset} + byte_size {byte_size}"
                )
        except BaseException:
            os.close(fd)
            if owner:
                unlink_key(key)
            raise
        # The descriptor, no mapping: the server may shrink the object at any time, and a
        # read through a mapping past its end is a SIGBUS where preadv is a short read.
        self._fd: int | None = fd

    @classmethod
    def create(cls, name: str, byte_size: int, key: str | None = None) -> SharedMemoryRegion:
        """A new object of ``byte_size`` bytes.

        Parameters
        ----------
        name
            The region's name on servers.
        byte_size
            The object's size.
        key
            The object's key; ``/oipcodec-<random>`` by default.
        """
        key = key or f"/oipcodec-{os.getpid()}-{secrets.token_hex(6)}"
        return cls(name, key, byte_size, owner=True)

    @classmethod
    def attach(cls, name: str, key: str, byte_size: int, offset: int = 0) -> SharedMemoryRegion:
        """The existing object ``key`` (left in place by :meth:`close`).

        Parameters
        ----------
        name
            The region's name on servers.
        key
            The object's key.
        byte_size, offset
            The bytes of the object the region covers.

        Raises
        ------
        OSError
            (``FileNotFoundError``...) when it cannot be opened.
        """
        return cls(name, key, byte_size, offset)

    # ------------------------------------------------------------------ tensors

    def put(self, array: Any, datatype: str | None = None, offset: int = 0) -> Location:
        """Write ``array``'s raw bytes at ``offset``; returns where they are.

        Parameters
        ----------
        array
            The elements (BYTES: written length-prefixed).
        datatype
            The OIP datatype to write them as; default the array's.
        offset
            Where in the region.

        Raises
        ------
        OSError
            The object cannot take them (its file system is full).
        """
        data = np.asarray(array)
        datatype = datatype or datatypes.datatype_of(data)
        raw = memoryview(array_to_raw(data, datatype)).cast("B")
        fd = self._check(offset, len(raw), "write")
        done = 0
        while done < len(raw):
            done += os.pwritev(fd, [raw[done:]], self.offset + offset + done)
        return Location(self.name, len(raw), offset)

    def input(self, name: str, array: Any, offset: int = 0, datatype: str | None = None) -> Tensor:
        """An input tensor ``name`` holding ``array``, written into this region.

        Its parameters name the region, and no data travels with the request.

        Parameters
        ----------
        name
            The input's name.
        array
            The elements.
        offset
            Where in the region.
        datatype
            The OIP datatype; default the array's.
        """
        data = np.asarray(array)
        datatype = datatype or datatypes.datatype_of(data)
        where = self.put(data, datatype, offset)
        return Tensor(name, datatype, data.shape, data, parameters_for(where))

    def output(self, name: str, byte_size: int | None = None, offset: int = 0) -> RequestedOutput:
        """A requested output the server writes into this region.

        Parameters
        ----------
        name
            The output's name.
        byte_size
            At most this many bytes; default the rest of the region.
        offset
            Where in the region.
        """
        size = self.byte_size - offset if byte_size is None else byte_size
        self._check(offset, size, "use")
        return RequestedOutput(name, parameters_for(Location(self.name, size, offset)))

    def array(
        self, datatype: str, shape: Any, offset: int = 0, byte_size: int | None = None
    ) -> np.ndarray[Any, Any]:
        """The array of ``datatype`` and ``shape`` at ``offset``: a read-only copy from the region.

        Parameters
        ----------
        datatype, shape
            The tensor's.
        offset
            Where in the region.
        byte_size
            Needed for BYTES (decoded from their framing): the framed size, an output's
            ``shared_memory_byte_size`` in the answer.
        """
        row = datatypes.get(datatype)
        if byte_size is None:
            if row.is_bytes:
                raise ValueError("reading BYTES from shared memory needs their byte_size")
            byte_size = int(np.prod(shape, dtype=np.int64)) * row.itemsize
        view = self.view(Location(self.name, byte_size, offset))
        return raw_to_array(view, datatype, shape)

    def view(self, where: Location, writable: bool = False) -> memoryview:
        """A copy of the bytes at ``where``.

        Parameters
        ----------
        where
            Their offset and size.
        writable
            Read-only unless true.

        Raises
        ------
        ValueError
            The object was shrunk below them.
        """
        fd = self._check(where.offset, where.byte_size, "read")
        buffer = np.empty(where.byte_size, np.uint8).data  # not zeroed: preadv fills it
        done = 0
        while done < where.byte_size:
            got = os.preadv(fd, [buffer[done:]], self.offset + where.offset + done)
            if got == 0:
                raise ValueError(
                    f"shared memory region '{self.name}' was shrunk below the "
                    f"{where.offset + where.byte_size} bytes to read (object {self.key})"
                )
            done += got
        return buffer if writable else buffer.toreadonly()

    def _check(self, offset: int, size: int, what: str) -> int:
        if self._fd is None:
            raise ValueError(f"shared memory region '{self.name}' is closed")
        if offset < 0 or size < 0 or offset + size > self.byte_size:
            raise ValueError(
                f"cannot {what} {size} bytes at offset {offset} of shared memory region "
                f"'{self.name}' ({self.byte_size} bytes)"
            )
        return self._fd

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close the descriptor and, for a region made by :meth:`create`, remove the object
        (arrays read from it stay valid: they are copies)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.close(fd)
        if self.owner:
            with contextlib.suppress(FileNotFoundError):
                unlink_key(self.key)

    def __enter__(self) -> SharedMemoryRegion:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"SharedMemoryRegion({self.name!r}, key={self.key!r}, byte_size={self.byte_size}, "
            f"offset={self.offset})"
        )


class RegionTable:
    """The regions a client registered, by name: what it reads outputs in shared memory
    from (:meth:`resolve` is the :data:`~oipcodec.sharedmem.Resolver` its decoders get).

    A region registered by key (not as a :class:`SharedMemoryRegion`) is opened on first
    use, and closed again when it is unregistered.
    """

    def __init__(self) -> None:
        self._known: dict[str, SharedMemoryRegion | tuple[str, int, int]] = {}
        self._opened: dict[str, SharedMemoryRegion] = {}

    def add(self, name: str, region: SharedMemoryRegion | tuple[str, int, int]) -> None:
        """Remember a region under ``name``.

        Parameters
        ----------
        name
            The region's name.
        region
            A :class:`SharedMemoryRegion`, or its ``(key, byte_size, offset)``.
        """
        self.remove(name)
        self._known[name] = region

    def remove(self, name: str = "") -> None:
        """Forget ``name``; regions this table opened are closed.

        Parameters
        ----------
        name
            The region; every region when empty.
        """
        for each in list(self._known) if not name else [name]:
            self._known.pop(each, None)
            opened = self._opened.pop(each, None)
            if opened is not None:
                opened.close()

    def resolve(self, where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        region = self._opened.get(where.region) or self._known.get(where.region)
        if region is None:
            raise DecodeError(
                f"is in shared memory region '{where.region}', which was not registered "
                "through this client; read it from the region"
            )
        try:
            if isinstance(region, tuple):
                key, byte_size, offset = region
                region = SharedMemoryRegion.attach(where.region, key, byte_size, offset)
                self._opened[where.region] = region
            return region.view(where, writable)
        except (ValueError, OSError) as exc:
            raise DecodeError(str(exc)) from None


# ----------------------------------------------------------------------------- client methods

#: A system shared-memory call: what each transport's ``_shm_request`` is asked to do.
Action = Literal["register", "unregister", "status"]


class SharedMemoryCalls:
    """The system shared-memory methods of a client, one implementation for every transport.

    These methods keep the client's ``regions`` (a :class:`RegionTable`) in step with the
    server, so that outputs in a registered region come back read from it.
    """

    # A client provides ``regions`` and ``_shm_request``, which sends one call over its protocol
    # and returns the status list ([] for register and unregister; async in
    # AsyncSharedMemoryCalls' clients).
    regions: RegionTable

    def _shm_request(
        self, action: Action, name: str, fields: dict[str, Any], timeout: float | None
    ) -> list[dict[str, Any]]:
        raise NotImplementedError

    def register_system_shared_memory(
        self, name: str, key: str, byte_size: int, offset: int = 0, timeout: float | None = None
    ) -> None:
        """Register bytes of a POSIX shared-memory object as a region.

        The server must run with its shared-memory extension on.

        Parameters
        ----------
        name
            The region's name.
        key
            The object's key.
        byte_size, offset
            The bytes of the object the region covers.
        timeout
            Seconds, overriding the client's.
        """
        fields = {"key": key, "offset": offset, "byte_size": byte_size}
        self._shm_request("register", name, fields, timeout)
        self.regions.add(name, (key, byte_size, offset))

    def register_region(self, region: SharedMemoryRegion, timeout: float | None = None) -> None:
        """Register ``region`` under its name.

        Parameters
        ----------
        region
            A :class:`SharedMemoryRegion`.
        timeout
            Seconds, overriding the client's.
        """
        self.register_system_shared_memory(
            region.name, region.key, region.byte_size, region.offset, timeout
        )
        self.regions.add(region.name, region)

    def unregister_system_shared_memory(self, name: str = "", timeout: float | None = None) -> None:
        """Unregister a region.

        Parameters
        ----------
        name
            The region; every region when empty.
        timeout
            Seconds, overriding the client's.
        """
        self._shm_request("unregister", name, {}, timeout)
        self.regions.remove(name)

    def system_shared_memory_status(
        self, name: str = "", timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """``[{name, key, offset, byte_size}]`` of a region, or of every region.

        Parameters
        ----------
        name
            The region; every region when empty.
        timeout
            Seconds, overriding the client's.
        """
        return self._shm_request("status", name, {}, timeout)


class AsyncSharedMemoryCalls:
    """:class:`SharedMemoryCalls` for an asyncio client; the same methods, as coroutines."""

    regions: RegionTable

    async def _shm_request(
        self, action: Action, name: str, fields: dict[str, Any], timeout: float | None
    ) -> list[dict[str, Any]]:
        raise NotImplementedError

    async def register_system_shared_memory(
        self, name: str, key: str, byte_size: int, offset: int = 0, timeout: float | None = None
    ) -> None:
        """As :meth:`SharedMemoryCalls.register_system_shared_memory`.

        Parameters
        ----------
        name, key, byte_size, offset, timeout
            As there.
        """
        fields = {"key": key, "offset": offset, "byte_size": byte_size}
        await self._shm_request("register", name, fields, timeout)
        self.regions.add(name, (key, byte_size, offset))

    async def register_region(
        self, region: SharedMemoryRegion, timeout: float | None = None
    ) -> None:
        """As :meth:`SharedMemoryCalls.register_region`.

        Parameters
        ----------
        region, timeout
            As there.
        """
        await self.register_system_shared_memory(
            region.name, region.key, region.byte_size, region.offset, timeout
        )
        self.regions.add(region.name, region)

    async def unregister_system_shared_memory(
        self, name: str = "", timeout: float | None = None
    ) -> None:
        """As :meth:`SharedMemoryCalls.unregister_system_shared_memory`.

        Parameters
        ----------
        name, timeout
            As there.
        """
        await self._shm_request("unregister", name, {}, timeout)
        self.regions.remove(name)

    async def system_shared_memory_status(
        self, name: str = "", timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """As :meth:`SharedMemoryCalls.system_shared_memory_status`.

        Parameters
        ----------
        name, timeout
            As there.
        """
        return await self._shm_request("status", name, {}, timeout)
