import asyncio
from typing import Any

class GrpcAbort(Exception):
    code: int
    details: str
    def __init__(self, code: int, details: str = "") -> None: ...

class Stream:
    path: str
    metadata: tuple[tuple[str, str | bytes], ...]
    deadline: float | None
    peer: str
    cancelled: bool
    initial_metadata: list[tuple[str, str | bytes]]
    trailing_metadata: list[tuple[str, str | bytes]]
    async def read(self) -> bytes | None: ...
    async def write(self, message: bytes) -> None: ...

class H2Protocol(asyncio.Protocol):
    def __init__(
        self,
        router: Any,
        *,
        max_receive_message_length: int = ...,
        max_concurrent_streams: int = ...,
    ) -> None: ...
    @property
    def active_streams(self) -> int: ...
    def goaway(self) -> None: ...
    def close(self) -> None: ...
