import asyncio
from collections.abc import Awaitable
from typing import Any, Protocol

__all__ = ["GrpcAbort", "H2Protocol", "Stream"]

ACCEPT_ENCODING: bytes

class GrpcAbort(Exception):
    code: int
    details: str
    def __init__(self, code: int, details: str = "") -> None: ...

class _Route(Protocol):
    request_streaming: bool
    def call(self, stream: Stream, message: bytes | None) -> bytes | Awaitable[Any] | None: ...

class _Router(Protocol):
    routes: dict[bytes, Any]
    def route(self, path: bytes) -> Any: ...

class Stream:
    stream_id: int
    initial_metadata: list[tuple[str, str | bytes]]
    trailing_metadata: list[tuple[str, str | bytes]]
    @property
    def path(self) -> str: ...
    @property
    def metadata(self) -> tuple[tuple[str, str | bytes], ...]: ...
    @property
    def deadline(self) -> float | None: ...
    @property
    def peer(self) -> str: ...
    @property
    def cancelled(self) -> bool: ...
    async def read(self) -> bytes | None:
        """The next request message; None once the client half-closed; raises
        asyncio.CancelledError if the client reset the stream."""
    async def write(self, message: bytes) -> None:
        """One response message queued; waits while 1 MiB is unsent; raises
        ConnectionResetError once the stream is closed (the client left, or the call ended)."""

class H2Protocol(asyncio.BufferedProtocol):
    def __init__(
        self,
        router: _Router,
        *,
        max_receive_message_length: int = ...,
        max_concurrent_streams: int = ...,
    ) -> None: ...
    @property
    def active_streams(self) -> int: ...
    def connection_made(self, transport: asyncio.BaseTransport) -> None: ...
    def get_buffer(self, sizehint: int) -> memoryview: ...
    def buffer_updated(self, nbytes: int) -> None: ...
    def data_received(self, data: bytes) -> None: ...
    def eof_received(self) -> bool: ...
    def connection_lost(self, exc: Exception | None) -> None: ...
    def pause_writing(self) -> None: ...
    def resume_writing(self) -> None: ...
    def goaway(self) -> None:
        """GOAWAY: no new streams; the calls in flight go on, then the connection closes."""
    def close(self) -> None:
        """Every call in flight cancelled, the connection closed."""
