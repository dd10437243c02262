"""The native gRPC server (``grpc_impl="native"``): grpcio's generic handlers served on the
HTTP/2 connection of :mod:`oipcodec.server.h2._session`.

:class:`NativeGrpcServer` is the part of ``grpc.aio.Server`` the runtime uses, so the runtime
holds either server alike. The connection looks a request's ``:path`` up in
:attr:`NativeGrpcServer.routes`; on a miss it asks :meth:`NativeGrpcServer.route` once, which
asks the generic handlers (as grpcio does) and keeps what they serve: every RPC they register
is served, and a path nobody serves is not kept (a client cannot grow the table).

A :class:`Route` adapts one ``grpc.RpcMethodHandler``. A unary call's handler coroutine is
started in the connection's own call: one that ends without waiting (a model that answers at
once) is answered with no task, one that waits goes on as the task the connection makes for it.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib.util
import inspect
import logging
import socket
import types
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NamedTuple

from oipcodec.server.resumed import Resumed

__all__ = ["NativeGrpcServer", "Route", "native_grpc_available"]

log = logging.getLogger("oipcodec.server")

#: Whether the native HTTP/2 connection is built (without it, grpcio serves).
_BUILT = importlib.util.find_spec("oipcodec.server.h2._session") is not None

#: The most streams a client may open at once on one connection (grpcio's default is 100 too).
MAX_CONCURRENT_STREAMS = 100


def native_grpc_available() -> bool:
    """Whether the native gRPC server is built (and the pure kernels are not chosen)."""
    from oipcodec import kernels

    return _BUILT and kernels.IMPLEMENTATION == "native"


class _CallDetails(NamedTuple):
    """What a generic handler's ``service`` reads (``grpc.HandlerCallDetails``'s fields)."""

    method: str
    invocation_metadata: tuple[tuple[str, str | bytes], ...]


class Route:
    """One RPC method as the connection calls it: ``call(stream, message)``.

    Parameters
    ----------
    handler
        A ``grpc.RpcMethodHandler`` (request and response streaming or not, its deserializer
        and serializer, None for bytes in and out; a handler an async function, an async
        generator, or a plain function run on the loop).
    """

    __slots__ = (
        "_behavior",
        "_context_type",
        "_deserialize",
        "_serialize",
        "call",
        "request_streaming",
    )

    def __init__(self, handler: Any) -> None:
        # Imported once per route, not per call: a route exists only once the native
        # connection (which call_context needs) is built.
        from oipcodec.server.h2.call_context import CallContext

        self._context_type = CallContext
        self.request_streaming: bool = handler.request_streaming
        self._deserialize = handler.request_deserializer
        self._serialize = handler.response_serializer
        if handler.request_streaming:
            self._behavior = (
                handler.stream_stream if handler.response_streaming else handler.stream_unary
            )
        else:
            self._behavior = (
                handler.unary_stream if handler.response_streaming else handler.unary_unary
            )
        self.call = (
            self._streamed
            if handler.response_streaming
            else self._collected
            if handler.request_streaming
            else self._unary
        )

    def _context(self, stream: Any) -> Any:
        return self._context_type(stream, self._deserialize, self._serialize)

    def _unary(self, stream: Any, message: bytes) -> bytes | Awaitable[bytes]:
        """A unary call: the response's bytes, or an awaitable of them when the handler
        waits (its first step run here, the rest by the connection's task)."""
        context = self._context_type(stream, self._deserialize, self._serialize)
        request = message if self._deserialize is None else context.request(message)
        work = self._behavior(request, context)
        if type(work) is not types.CoroutineType:
            return context.answer(work)
        # In a context of its own, as a task would run it: a handler that sets a context
        # variable and resets it after an await must find it in the same context.
        run = contextvars.copy_context()
        try:
            waiting = run.run(work.send, None)
        except StopIteration as done:
            return context.answer(done.value)
        return _answered(context, Resumed(work, waiting, run))

    async def _collected(self, stream: Any, message: None) -> bytes:
        """A request-streaming call with one response."""
        context = self._context(stream)
        return context.answer(await self._behavior(context.requests(), context))

    async def _streamed(self, stream: Any, message: bytes | None) -> None:
        """A call with streamed responses: yielded by an async generator or written with
        ``context.write``; the status follows (None: the connection sends the trailers)."""
        context = self._context(stream)
        request = context.requests() if message is None else context.request(message)
        work = self._behavior(request, context)
        if inspect.isasyncgen(work):
            async for response in work:
                await context.write(response)
        elif inspect.isawaitable(work):
            await work
        context.ended()


async def _answered(context: Any, work: Awaitable[Any]) -> bytes:
    return context.answer(await work)


class NativeGrpcServer:
    """The native gRPC server, ``grpc.aio.Server``'s methods the runtime uses.

    Parameters
    ----------
    max_receive_message_length
        The largest request message, inflated (larger: RESOURCE_EXHAUSTED).
    bind
        ``bind(host, port)``: a bound, non-blocking socket, not yet listening (the runtime's,
        so that a port in use is named as the other ports name it).
    backlog
        The listen backlog.
    """

    def __init__(
        self,
        *,
        max_receive_message_length: int,
        bind: Callable[[str, int], socket.socket],
        backlog: int,
    ) -> None:
        self.max_receive_message_length = max_receive_message_length
        self._bind = bind
        self._backlog = backlog
        #: ``:path`` -> its route, filled as paths are first asked for.
        self.routes: dict[bytes, Route] = {}
        self._handlers: list[Any] = []
        self._sockets: list[socket.socket] = []
        self._servers: list[asyncio.Server] = []
        self._connections: set[Any] = set()

    def add_generic_rpc_handlers(self, handlers: Iterable[Any]) -> None:
        self._handlers.extend(handlers)
        self.routes.clear()  # a path first served by a later handler now finds the earlier

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        """Nothing to do: grpcio's generated code adds the same handlers as a generic handler
        first (add_generic_rpc_handlers), which serves them here."""

    def route(self, path: bytes) -> Route | None:
        """The route of ``path`` (``/package.Service/Method``), kept in :attr:`routes`; None
        when no handler serves it (not kept)."""
        details = _CallDetails(path.decode("utf-8", "replace"), ())
        for handler in self._handlers:
            found = handler.service(details)
            if found is not None:
                route = self.routes[path] = Route(found)
                return route
        return None

    def add_insecure_port(self, address: str) -> int:
        """Bind ``address`` (``host:port``, ``[v6]:port``; port 0 picks one), listening from
        :meth:`start`; returns the port."""
        host, _, port = address.rpartition(":")
        sock = self._bind(host.strip("[]"), int(port))
        self._sockets.append(sock)
        return sock.getsockname()[1]

    async def start(self) -> None:
        from oipcodec.server.h2._session import H2Protocol

        connections = self._connections

        class Connection(H2Protocol):
            """A connection the server keeps until it is lost, to stop it."""

            def connection_lost(self, exc: Exception | None) -> None:
                super().connection_lost(exc)
                connections.discard(self)

        def connection() -> Any:
            protocol = Connection(
                self,
                max_receive_message_length=self.max_receive_message_length,
                max_concurrent_streams=MAX_CONCURRENT_STREAMS,
            )
            connections.add(protocol)
            return protocol

        loop = asyncio.get_running_loop()
        for sock in self._sockets:
            sock.listen(self._backlog)
            self._servers.append(await loop.create_server(connection, sock=sock))

    async def stop(self, grace: float | None) -> None:
        """Stop accepting, send every connection GOAWAY, give the calls in flight ``grace``
        seconds (None: none), then cancel what is left and close the connections."""
        for server in self._servers:
            server.close()
        for protocol in list(self._connections):
            protocol.goaway()
        if grace:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + grace
            while loop.time() < deadline and any(p.active_streams for p in self._connections):
                await asyncio.sleep(0.01)
        for protocol in list(self._connections):
            protocol.close()
        for server in self._servers:
            await server.wait_closed()
        self._servers.clear()
        for sock in self._sockets:
            sock.close()
        self._sockets.clear()
