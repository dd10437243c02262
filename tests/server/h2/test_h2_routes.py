"""The Python half of the native gRPC server, driven directly: routes built from grpcio's
method handlers and the servicer context, over a stream stand-in with the Stream's methods
(the connection's own tests are test_h2_session; the whole server over real sockets,
test_h2_grpc_server)."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from oipcodec.server.h2._session import GrpcAbort
from oipcodec.server.h2.grpc_server import NativeGrpcServer, Route


class StreamStandIn:
    """The attributes and methods of ``_session.Stream`` the Python side uses, in Python:
    ``messages`` are read in turn, then None (the client half-closed); writes are kept."""

    def __init__(
        self,
        messages: tuple[bytes, ...] = (),
        metadata: tuple[tuple[str, str | bytes], ...] = (),
        deadline: float | None = None,
    ) -> None:
        self.path = "/test.Service/Method"
        self.metadata = metadata
        self.deadline = deadline
        self.peer = "ipv4:127.0.0.1:5555"
        self.cancelled = False
        self.initial_metadata: list[tuple[str, str | bytes]] = []
        self.trailing_metadata: list[tuple[str, str | bytes]] = []
        self.messages = list(messages)
        self.written: list[bytes] = []
        self.gone = False

    async def read(self) -> bytes | None:
        await asyncio.sleep(0)
        return self.messages.pop(0) if self.messages else None

    async def write(self, message: bytes) -> None:
        if self.gone:
            raise ConnectionResetError("the stream was reset")
        assert isinstance(message, bytes)
        self.written.append(message)


def _upper(data: bytes) -> bytes:
    return data.upper()


def run(awaitable: Any) -> Any:
    async def main() -> Any:
        return await awaitable

    return asyncio.run(main())


def test_a_unary_handler_that_does_not_wait_is_answered_in_the_call() -> None:
    seen: list[Any] = []

    async def behavior(request: bytes, context: Any) -> str:
        seen.append((request, context.invocation_metadata(), context.peer()))
        context.set_trailing_metadata([("answered", "now")])
        return "answer"

    route = Route(
        grpc.unary_unary_rpc_method_handler(
            behavior, request_deserializer=_upper, response_serializer=str.encode
        )
    )
    stream = StreamStandIn(metadata=(("key", "value"),))
    assert route.request_streaming is False
    assert route.call(stream, b"request") == b"answer"  # bytes, not an awaitable
    assert seen == [(b"REQUEST", (("key", "value"),), "ipv4:127.0.0.1:5555")]
    assert stream.trailing_metadata == [("answered", "now")]


VARIABLE: contextvars.ContextVar[str] = contextvars.ContextVar("VARIABLE", default="unset")


def test_a_unary_handler_that_waits_goes_on_as_a_task_in_its_own_context() -> None:
    """Started in the connection's call, continued by the task: a context variable set before
    the first wait and reset after it is in one context (tracing's carrier does so)."""

    async def behavior(request: bytes, context: Any) -> bytes:
        token = VARIABLE.set("set")
        try:
            await asyncio.sleep(0)
            return request + VARIABLE.get().encode()
        finally:
            VARIABLE.reset(token)

    route = Route(grpc.unary_unary_rpc_method_handler(behavior))

    async def main() -> bytes:
        answer = route.call(StreamStandIn(), b"x")
        assert not isinstance(answer, bytes)
        assert VARIABLE.get() == "unset"  # the handler's setting stays in its own context
        return await asyncio.get_running_loop().create_task(answer)  # as the connection does

    assert asyncio.run(main()) == b"xset"


@pytest.mark.parametrize("wait", [False, True])
def test_abort_and_a_set_code_end_the_call_with_that_status(wait: bool) -> None:
    async def aborts(request: bytes, context: Any) -> bytes:
        if wait:
            await asyncio.sleep(0)
        await context.abort(grpc.StatusCode.NOT_FOUND, "no model 'x'")
        raise AssertionError("abort returned")

    async def sets(request: bytes, context: Any) -> bytes:
        if wait:
            await asyncio.sleep(0)
        context.set_code(grpc.StatusCode.UNAVAILABLE)
        context.set_details("not ready")
        return b"ignored"

    for behavior, code, details in (
        (aborts, grpc.StatusCode.NOT_FOUND, "no model 'x'"),
        (sets, grpc.StatusCode.UNAVAILABLE, "not ready"),
    ):
        route = Route(grpc.unary_unary_rpc_method_handler(behavior))
        with pytest.raises(GrpcAbort) as caught:
            run(route.call(StreamStandIn(), b""))  # run() only reached when it waits
        assert (caught.value.code, caught.value.details) == (code.value[0], details)


def test_a_request_the_deserializer_refuses_ends_the_call_internal() -> None:
    def refuse(data: bytes) -> Any:
        raise ValueError("not a message")

    async def behavior(request: Any, context: Any) -> bytes:
        raise AssertionError("called")

    route = Route(grpc.unary_unary_rpc_method_handler(behavior, request_deserializer=refuse))
    with pytest.raises(GrpcAbort) as caught:
        route.call(StreamStandIn(), b"\xff")
    assert caught.value.code == grpc.StatusCode.INTERNAL.value[0]
    assert caught.value.details == "Exception deserializing request!"


def test_server_streaming_handlers_write_each_response_then_resolve_to_none() -> None:
    async def generator(request: bytes, context: Any) -> AsyncIterator[bytes]:
        for part in request.split(b","):
            yield part

    async def writer(request: bytes, context: Any) -> None:
        await context.send_initial_metadata([("first", "1")])
        for part in request.split(b","):
            await context.write(part)

    for behavior in (generator, writer):
        route = Route(grpc.unary_stream_rpc_method_handler(behavior))
        stream = StreamStandIn()
        assert route.request_streaming is False
        assert run(route.call(stream, b"a,b,c")) is None
        assert stream.written == [b"a", b"b", b"c"]
    assert stream.initial_metadata == [("first", "1")]


def test_request_streaming_handlers_read_the_stream() -> None:
    async def total(requests: AsyncIterator[bytes], context: Any) -> bytes:
        return b"+".join([r async for r in requests])

    async def echo(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        async for request in requests:
            yield request * 2

    async def reader(requests: AsyncIterator[bytes], context: Any) -> None:
        while (request := await context.read()) is not grpc.aio.EOF:
            await context.write(request)

    route = Route(grpc.stream_unary_rpc_method_handler(total, request_deserializer=_upper))
    assert route.request_streaming is True
    assert run(route.call(StreamStandIn((b"a", b"b")), None)) == b"A+B"
    for behavior, written in ((echo, [b"aa", b"bb"]), (reader, [b"a", b"b"])):
        route = Route(grpc.stream_stream_rpc_method_handler(behavior))
        stream = StreamStandIn((b"a", b"b"))
        assert run(route.call(stream, None)) is None
        assert stream.written == written


def test_a_write_into_a_stream_the_client_left_is_the_client_leaving() -> None:
    """context.write raises what grpcio's raises there, which the front ends' client_gone
    takes for the client leaving (no traceback, no status)."""
    from oipcodec.server.frontends._grpc import client_gone

    async def behavior(request: bytes, context: Any) -> None:
        with client_gone("test"):
            await context.write(b"one")
            context.stream.gone = True
            await context.write(b"two")
            raise AssertionError("written")

    stream = StreamStandIn()
    assert run(Route(grpc.unary_stream_rpc_method_handler(behavior)).call(stream, b"")) is None
    assert stream.written == [b"one"]


def test_the_context_tells_the_deadline_and_the_cancellation() -> None:
    async def main() -> None:
        from oipcodec.server.h2.call_context import CallContext

        now = asyncio.get_running_loop().time()
        context = CallContext(StreamStandIn(deadline=now + 5))
        assert 4 < (context.time_remaining() or 0) <= 5
        assert CallContext(StreamStandIn()).time_remaining() is None
        context.stream.cancelled = True
        assert context.cancelled() and not context.done()

    asyncio.run(main())


def _server() -> NativeGrpcServer:
    return NativeGrpcServer(
        max_receive_message_length=1 << 20,
        bind=lambda host, port: pytest.fail("bound"),
        backlog=1,
    )


def test_routes_are_found_once_per_path_and_misses_are_not_kept() -> None:
    calls: list[str] = []

    class Handler(grpc.GenericRpcHandler):
        def service(self, details: Any) -> Any:
            calls.append(details.method)
            if details.method == "/s.S/M":
                return grpc.unary_unary_rpc_method_handler(lambda request, context: request)
            return None

    server = _server()
    server.add_generic_rpc_handlers((Handler(),))
    found = server.route(b"/s.S/M")
    assert found is not None and server.routes == {b"/s.S/M": found}
    for _ in range(3):
        assert server.route(b"/s.S/Nope") is None
    assert server.routes == {b"/s.S/M": found}
    assert calls == ["/s.S/M", "/s.S/Nope", "/s.S/Nope", "/s.S/Nope"]


def test_every_rpc_the_grpcio_server_registers_is_routed() -> None:
    """The OIP service (with shared memory and TraceSetting), the v1 GRPCService: the runtime's
    own registration on the native server finds a route for each of their methods."""
    pytest.importorskip("opentelemetry")
    from oipcodec.proto import open_inference_grpc_pb2 as oip
    from oipcodec.proto import trtis_v1_pb2 as v1
    from oipcodec.server.demo import demo_models
    from oipcodec.server.frontends.tracing import Tracing
    from oipcodec.server.regions import SharedMemoryRegions
    from oipcodec.server.registry import ModelRegistry
    from oipcodec.server.runtime.apps import create_grpc_server

    registry = ModelRegistry(demo_models())
    registry.shared_memory = SharedMemoryRegions()
    server, _ = create_grpc_server(registry, tracing=Tracing(registry), grpc_impl="native")
    assert isinstance(server, NativeGrpcServer)
    paths = [
        f"/{service.full_name}/{method.name}"
        for module in (oip, v1)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    ]
    assert len(paths) > 25
    missing = [path for path in paths if server.route(path.encode()) is None]
    assert missing == []
    streaming = {path for path in paths if server.routes[path.encode()].request_streaming}
    assert streaming == {
        "/inference.GRPCInferenceService/ModelStreamInfer",
        "/nvidia.inferenceserver.GRPCService/StreamInfer",
    }


def test_each_write_gives_the_loop_a_turn() -> None:
    """A handler writing in a loop into a stream below its bound (whose write does not wait)
    still lets the loop run between messages: the flush, and a client's RST_STREAM read."""
    order: list[str] = []

    async def behavior(request: bytes, context: Any) -> None:
        for _ in range(2):
            await context.write(b"x")
            order.append("written")

    async def other() -> None:
        order.append("other")

    async def main() -> None:
        asyncio.get_running_loop().create_task(other())
        route = Route(grpc.unary_stream_rpc_method_handler(behavior))
        await route.call(StreamStandIn(), b"")

    asyncio.run(main())
    assert order == ["other", "written", "written"]
