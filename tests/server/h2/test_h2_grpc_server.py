"""The native gRPC server end to end on 127.0.0.1: ``grpc_impl="native"`` serving the OIP
service and the v1 API to the real clients (tritonclient's grpc and grpc.aio, grpcio's own
channel), its stop, and its fallback to grpcio without the native build. The same clients
against either server: every gRPC test of tests/server/frontends run with
OIPCODEC_TEST_GRPC_IMPL=native (tests/conftest.py, .ci/run)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.server import Model
from oipcodec.server.h2.grpc_server import NativeGrpcServer, native_grpc_available
from oipcodec.testing import RunningServer, background

pytestmark = pytest.mark.skipif(
    not native_grpc_available(), reason="the native gRPC server is not built"
)
grpcclient = pytest.importorskip("tritonclient.grpc")


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(grpc_impl="native", http_port=None, log_level="critical") as running:
        yield running


def _simple_inputs() -> list[Any]:
    inputs = []
    for name in ("INPUT0", "INPUT1"):
        tensor = grpcclient.InferInput(name, [1, 16], "INT32")
        tensor.set_data_from_numpy(np.arange(16, dtype=np.int32).reshape(1, 16))
        inputs.append(tensor)
    return inputs


def test_tritonclient_grpc_is_served_natively(grpc: Any) -> None:
    assert grpc.is_server_live() and grpc.is_server_ready()
    assert grpc.is_model_ready("simple")
    assert grpc.get_server_metadata().name == "oipcodec"
    assert [i.name for i in grpc.get_model_metadata("simple").inputs] == ["INPUT0", "INPUT1"]
    result = grpc.infer("simple", _simple_inputs())
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), 2 * np.arange(16).reshape(1, 16))
    assert grpc.get_model_repository_index().models
    assert grpc.get_inference_statistics("simple").model_stats[0].inference_stats.success.count


def test_errors_are_the_grpc_statuses_grpcio_gives(grpc: Any) -> None:
    from tritonclient.utils import InferenceServerException

    with pytest.raises(InferenceServerException) as caught:
        grpc.get_model_metadata("nope")
    assert caught.value.status() == "StatusCode.NOT_FOUND"
    with pytest.raises(InferenceServerException) as caught:
        grpc.infer("simple", _simple_inputs()[:1])
    assert caught.value.status() == "StatusCode.INVALID_ARGUMENT"


def test_grpcio_channel_meets_unimplemented_for_an_unknown_method(server: RunningServer) -> None:
    import grpc

    with grpc.insecure_channel(server.grpc_address) as channel:
        method = channel.unary_unary("/inference.GRPCInferenceService/Nope")
        with pytest.raises(grpc.RpcError) as caught:
            method(b"", timeout=10)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_the_stream_rpc_answers_each_request_in_order(grpc: Any) -> None:
    import queue

    answers: queue.Queue[Any] = queue.Queue()
    grpc.start_stream(callback=lambda result, error: answers.put((result, error)))
    try:
        for request_id in ("a", "b", "c"):
            grpc.async_stream_infer("simple", _simple_inputs(), request_id=request_id)
        got = [answers.get(timeout=30) for _ in range(3)]
    finally:
        grpc.stop_stream()
    assert [error for _, error in got] == [None, None, None]
    assert [result.get_response().id for result, _ in got] == ["a", "b", "c"]


def test_tritonclient_grpc_aio_is_served_natively(server: RunningServer) -> None:
    aio = pytest.importorskip("tritonclient.grpc.aio")

    async def main() -> Any:
        async with aio.InferenceServerClient(server.grpc_address) as client:
            inputs = []
            for name in ("INPUT0", "INPUT1"):
                tensor = aio.InferInput(name, [1, 16], "INT32")
                tensor.set_data_from_numpy(np.ones((1, 16), dtype=np.int32))
                inputs.append(tensor)
            results = await asyncio.gather(*[client.infer("simple", inputs) for _ in range(20)])
            return [r.as_numpy("OUTPUT0") for r in results]

    for output in asyncio.run(main()):
        np.testing.assert_array_equal(output, np.full((1, 16), 2))


def test_without_the_native_build_native_falls_back_to_grpcio(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import grpc

    from oipcodec.server.demo import demo_models
    from oipcodec.server.h2 import grpc_server
    from oipcodec.server.registry import ModelRegistry
    from oipcodec.server.runtime.apps import create_grpc_server

    async def main() -> None:  # grpcio's server is made on a running loop
        registry = ModelRegistry(demo_models())
        native, _ = create_grpc_server(registry, grpc_impl="native")
        assert isinstance(native, NativeGrpcServer)
        monkeypatch.setattr(grpc_server, "native_grpc_available", lambda: False)
        with caplog.at_level(logging.WARNING, "oipcodec.server"):
            fallback, _ = create_grpc_server(registry, grpc_impl="native")
        assert isinstance(fallback, grpc.aio.Server)

    asyncio.run(main())
    assert caplog.messages == ["grpc_impl 'native' needs the native kernels: using 'grpcio'"]


class Sleepy(Model):
    """Answers after 0.5 s (an ``async`` predict)."""

    name = "sleepy"
    inputs = None
    outputs = None

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.5)
        return {"SLEPT": np.array([1], dtype=np.int32)}


def test_stop_lets_a_call_in_flight_finish_within_the_grace() -> None:
    """A call waiting in a slow model when the server stops is answered; a new call after
    the stop is refused."""
    import grpc

    from oipcodec.proto import open_inference_grpc_pb2 as pb2
    from oipcodec.server import Server

    async def main() -> None:
        server = Server([Sleepy()], http_port=None, grpc_port=0, grpc_impl="native")
        await server.start()
        assert isinstance(server._grpc, NativeGrpcServer)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            infer = channel.unary_unary(
                "/inference.GRPCInferenceService/ModelInfer",
                request_serializer=pb2.ModelInferRequest.SerializeToString,
                response_deserializer=pb2.ModelInferResponse.FromString,
            )
            call = asyncio.ensure_future(
                infer(pb2.ModelInferRequest(model_name="sleepy"), timeout=30)
            )
            await asyncio.sleep(0.2)
            await server.stop(grace=10)
            assert (await call).outputs[0].name == "SLEPT"
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await infer(pb2.ModelInferRequest(model_name="sleepy"), timeout=5)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE

    asyncio.run(main())


def test_clients_leaving_streams_draw_no_goaway(server: RunningServer) -> None:
    # Issue 47: grpcio's channels to one address share a connection; each channel that closed
    # on a stream it was answered on reset it, and nghttp2's rapid-reset limit (every reset
    # counted) answered the 1001st with GOAWAY INTERNAL_ERROR, failing the other channels.
    import threading
    import time

    import grpc

    from oipcodec import pb
    from oipcodec.types import InferRequest, Tensor

    # Large answers: the server still has answers to write when a client goes.
    x = Tensor.from_array("INPUT0", np.ones((1, 65536), np.float32))
    body = pb.encode_request(InferRequest([x], model_name="identity"), raw=True)
    errors: list[str] = []

    def requests() -> Iterator[bytes]:
        for _ in range(20):
            yield body
            time.sleep(0.01)

    def leave(count: int) -> None:
        for _ in range(count):
            channel = grpc.insecure_channel(server.grpc_address)
            try:
                call = channel.stream_stream("/inference.GRPCInferenceService/ModelStreamInfer")
                next(call(requests(), timeout=10))
            except grpc.RpcError as exc:
                errors.append(str(exc.details()))
            finally:
                channel.close()

    # 3,200 resets in a few seconds: past the 1000 + 33/s budget of resets of unanswered
    # streams, so a reset counted wrongly shows (2 in 3 runs before the fix).
    threads = [threading.Thread(target=leave, args=(400,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
