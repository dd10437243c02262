"""oipcodec's clients on streams: the gRPC clients' ``infer_stream`` and ``stream_infer``, the
HTTP clients' ``generate`` and ``generate_stream`` (sync and async iterators), and
tritonclient's asyncio ``stream_infer`` unchanged, against decoupled models."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.client import AsyncGrpcClient, AsyncHttpClient, GrpcClient, HttpClient
from oipcodec.errors import ServerError
from oipcodec.testing import RunningServer, background
from oipcodec.types import InferRequest, Tensor
from tests.support.streaming_models import streaming_models

pytest.importorskip("uvicorn", reason="the server extra is not installed")


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(streaming_models(), log_level="critical") as running:
        yield running


def _n(n: int) -> dict[str, Any]:
    return {"N": np.array([n], dtype=np.int32)}


def _tokens(responses: Any) -> list[bytes]:
    return [r.output("TOKEN").data[0] for r in responses]


def test_grpc_infer_stream(server: RunningServer) -> None:
    with GrpcClient(server.grpc_address) as client:
        assert _tokens(client.infer_stream("tokens", _n(3))) == [b"t0", b"t1", b"t2"]
        assert list(client.infer_stream("tokens", _n(0))) == []
        once = list(client.infer_stream("add_sub", {"INPUT0": np.ones(2, np.float32),
                                                    "INPUT1": np.ones(2, np.float32)}))  # fmt: skip
        assert len(once) == 1 and once[0].parameters["triton_final_response"] is True
        with pytest.raises(ServerError, match="token 1 refused"):
            list(client.infer_stream("tokens", _n(3), parameters={"fail_at": 1}))
        # leaving the loop early closes the stream
        stream = client.infer_stream("tokens", _n(1000))
        assert next(stream).output("TOKEN").data[0] == b"t0"
        stream.close()


def test_grpc_stream_infer_with_the_empty_final_response(server: RunningServer) -> None:
    request = InferRequest(
        [Tensor("IN", "INT32", [1], np.array([2], dtype=np.int32))],
        model_name="square_int32",
        id="a",
        parameters={"triton_enable_empty_final_response": True},
    )
    with GrpcClient(server.grpc_address) as client:
        answers = list(client.stream_infer([request]))
    assert [a.parameters["triton_final_response"] for a in answers] == [False, False, True]
    assert [len(a.outputs) for a in answers] == [1, 1, 0]


def test_async_grpc_infer_stream(server: RunningServer) -> None:
    async def main() -> list[bytes]:
        async with AsyncGrpcClient(server.grpc_address) as client:
            return _tokens([r async for r in client.infer_stream("tokens", _n(4))])

    assert asyncio.run(main()) == [b"t0", b"t1", b"t2", b"t3"]


def test_http_generate_and_generate_stream(server: RunningServer) -> None:
    with HttpClient(server.http_address) as client:
        events = list(client.generate_stream("tokens", {"N": 3, "id": "x"}))
        assert [(e["id"], e["TOKEN"]) for e in events] == [("x", "t0"), ("x", "t1"), ("x", "t2")]
        assert client.generate("square_int32", {"IN": 1})["OUT"] == 1
        with pytest.raises(ServerError, match="token 1 refused") as caught:
            list(client.generate_stream("tokens", {"N": 3, "fail_at": 1}))
        assert caught.value.status == 200
        with pytest.raises(ServerError) as caught:
            list(client.generate_stream("nope", {}))
        assert caught.value.status == 404


def test_async_http_generate_stream(server: RunningServer) -> None:
    async def main() -> tuple[list[str], int]:
        async with AsyncHttpClient(server.http_address) as client:
            got = [e["TOKEN"] async for e in client.generate_stream("tokens", {"N": 3})]
            return got, (await client.generate("square_int32", {"IN": 1}))["OUT"]

    assert asyncio.run(main()) == (["t0", "t1", "t2"], 1)


@pytest.mark.grpc
def test_tritonclient_asyncio_stream_infer(server: RunningServer) -> None:
    aio = pytest.importorskip("tritonclient.grpc.aio")

    async def main() -> list[tuple[str, list[int]]]:
        client = aio.InferenceServerClient(server.grpc_address)
        try:

            async def requests() -> Any:
                for k in (2, 3):
                    tensor = aio.InferInput("IN", [1], "INT32")
                    tensor.set_data_from_numpy(np.array([k], dtype=np.int32))
                    yield {"model_name": "square_int32", "inputs": [tensor], "request_id": str(k)}

            got = []
            async for result, error in client.stream_infer(requests()):
                assert error is None
                got.append((result.get_response().id, result.as_numpy("OUT").tolist()))
            return got
        finally:
            await client.close()

    got = asyncio.run(main())
    assert sorted(got) == [("2", [2])] * 2 + [("3", [3])] * 3
