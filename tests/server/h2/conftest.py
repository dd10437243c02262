"""A tiny router and a server of H2Protocol on 127.0.0.1, run in the test's own event loop."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

session = pytest.importorskip(
    "oipcodec.server.h2._session", reason="the native HTTP/2 connection is not built"
)

Handler = Callable[[Any, Any], Any]


class Route:
    def __init__(self, call: Handler, request_streaming: bool = False) -> None:
        self.call = call
        self.request_streaming = request_streaming


class Router:
    """``routes`` by path; ``route()`` counts the misses it is asked about."""

    def __init__(self, routes: dict[bytes, Route]) -> None:
        self.routes = dict(routes)
        self.misses: list[bytes] = []

    def route(self, path: bytes) -> Route | None:
        self.misses.append(path)
        if path == b"/t.S/RouterBug":
            raise RuntimeError("a router's bug")
        return None


@contextlib.asynccontextmanager
async def serve(
    routes: dict[bytes, Route], **options: Any
) -> AsyncIterator[tuple[int, Router, list[Any]]]:
    """A server on a free port of 127.0.0.1; yields (port, router, the connections made)."""
    loop = asyncio.get_running_loop()
    router = Router(routes)
    made: list[Any] = []

    def factory() -> Any:
        protocol = session.H2Protocol(router, **options)
        made.append(protocol)
        return protocol

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = await loop.create_server(factory, sock=sock)
    try:
        yield sock.getsockname()[1], router, made
    finally:
        server.close()
        for protocol in made:
            protocol.close()
        await server.wait_closed()


def run(coro: Awaitable[Any], timeout: float = 30.0) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())
