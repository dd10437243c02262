"""oipcodec.client.GrpcClient and AsyncGrpcClient against the embedded server (one server for
the module): every datatype over raw and typed contents and ModelStreamInfer; metadata and
repository calls; errors, timeouts and connection failures."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from oipcodec import DecodeError, InferResponse
from oipcodec.client import (
    AsyncGrpcClient,
    GrpcClient,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
    build_request,
)
from oipcodec.client.grpc_client import parse_stream_response
from oipcodec.limits import DEFAULT_LIMITS
from oipcodec.testing import RunningServer, background
from tests.support.client_models import DATATYPES, client_models, same, sample
from tests.support.ports import free_port
from tests.support.tls_server import tls_server

pytest.importorskip("grpc", reason="the client extra is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed")


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(client_models(), log_level="critical") as running:
        yield running


@pytest.fixture(scope="module")
def client(server: RunningServer) -> Iterator[GrpcClient]:
    with GrpcClient(server.grpc_address, timeout=30) as c:
        yield c


# ------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "typed"])
@pytest.mark.parametrize("datatype", DATATYPES)
def test_round_trip_every_datatype(client: GrpcClient, raw: bool, datatype: str) -> None:
    tensor = sample(datatype)
    response = client.infer("identity", [tensor], raw=raw, id="r1", parameters={"k": 1})
    assert (response.model_name, response.id) == ("identity", "r1")
    assert same(tensor, response.outputs[0])


@pytest.mark.parametrize("datatype", DATATYPES)
def test_stream_every_datatype(client: GrpcClient, datatype: str) -> None:
    tensors = [sample(datatype, "A"), sample(datatype, "B")]
    requests = [build_request("identity", [t], id=str(i)) for i, t in enumerate(tensors)]
    answers = list(client.stream_infer(requests, raw=False))
    assert len(answers) == 2
    for i, (sent, answer) in enumerate(zip(tensors, answers, strict=True)):
        assert isinstance(answer, InferResponse) and answer.id == str(i)
        assert same(sent, answer.outputs[0])


def test_client_default_contents_form(server: RunningServer) -> None:
    tensor = sample("INT16")
    with GrpcClient(server.grpc_address, raw=False) as typed:
        assert same(tensor, typed.infer("identity", [tensor]).outputs[0])
    with GrpcClient(f"grpc://{server.grpc_address}") as c:
        assert c.live()


def test_gzip_compression(client: GrpcClient) -> None:
    data = np.zeros((64, 64), np.float32)
    response = client.infer("identity", {"X": data}, compression="gzip")
    assert np.array_equal(response.output("X").data, data)
    with pytest.raises(ValueError, match="compression"):
        client.infer("identity", {"X": data}, compression="brotli")


def test_raw_outputs_are_read_only_views(client: GrpcClient) -> None:
    data = np.arange(32, dtype=np.float32).reshape(2, 16)
    out = client.infer("identity", {"X": data}).output("X").data
    assert not out.flags.owndata and not out.flags.writeable
    assert np.array_equal(out, data)


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "typed"])
def test_async_round_trip_all_datatypes(server: RunningServer, raw: bool) -> None:
    tensors = [sample(d) for d in DATATYPES]

    async def main() -> None:
        async with AsyncGrpcClient(server.grpc_address, timeout=30) as c:
            response = await c.infer("identity", tensors, raw=raw)
            for sent in tensors:
                assert same(sent, response.output(sent.name))

            async def requests() -> AsyncIterator:  # type: ignore[type-arg]
                for i, t in enumerate(tensors):
                    yield build_request("identity", [t], id=str(i))
                yield build_request("no_such_model", [tensors[0]])
                yield build_request("identity", [tensors[1]])

            answers = [a async for a in c.stream_infer(requests(), raw=raw)]
            assert len(answers) == len(tensors) + 2
            for sent, answer in zip(tensors, answers, strict=False):
                assert isinstance(answer, InferResponse) and same(sent, answer.outputs[0])
            assert isinstance(answers[-2], ServerError) and "no_such_model" in answers[-2].message
            assert isinstance(answers[-1], InferResponse)

    asyncio.run(main())


# ------------------------------------------------------------------------------ health, metadata


def test_health_and_metadata(client: GrpcClient) -> None:
    assert client.live() and client.ready()
    assert client.model_ready("identity") and client.model_ready("simple", "1")
    assert not client.model_ready("no_such_model")
    meta = client.server_metadata()
    assert meta["name"] == "oipcodec" and "binary_tensor_data" in meta["extensions"]
    model = client.model_metadata("simple")
    assert model["inputs"][0] == {"name": "INPUT0", "datatype": "INT32", "shape": [-1, 16]}
    assert model["versions"] == ["1"]
    names = {row["name"] for row in client.repository_index()}
    assert {"identity", "simple", "sleep"} <= names


def test_repository_unload_and_load(client: GrpcClient) -> None:
    client.unload_model("add_sub")
    try:
        assert not client.model_ready("add_sub")
        assert "add_sub" not in {row["name"] for row in client.repository_index(ready=True)}
        with pytest.raises(ServerError) as info:
            client.infer(
                "add_sub", {"INPUT0": np.ones(2, np.float32), "INPUT1": np.ones(2, np.float32)}
            )
        assert info.value.code == "UNAVAILABLE" and info.value.status == 503
    finally:
        client.load_model("add_sub")
    assert client.model_ready("add_sub")


# ------------------------------------------------------------------------------ errors


def test_unknown_model_is_a_server_error(client: GrpcClient) -> None:
    with pytest.raises(ServerError) as info:
        client.infer("no_such_model", {"X": np.ones(3, np.float32)})
    assert info.value.code == "NOT_FOUND" and info.value.status == 404
    assert "no_such_model" in info.value.message
    assert info.value.url == client.target
    # A gRPC error reads as one: its status name, not the HTTP status it maps to.
    assert str(info.value).startswith(f"gRPC NOT_FOUND from {client.target}: ")
    assert "HTTP" not in str(info.value)
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.protocol, str(copy)) == ("grpc", str(info.value))
    with pytest.raises(ServerError, match="no_such_model"):
        client.model_metadata("no_such_model")


def test_bad_input_is_a_server_error(client: GrpcClient) -> None:
    wrong = {"INPUT0": np.ones((1, 16), np.float32), "INPUT1": np.ones((1, 16), np.float32)}
    with pytest.raises(ServerError) as info:
        client.infer("simple", wrong)
    assert info.value.code == "INVALID_ARGUMENT" and info.value.status == 400
    assert "INPUT0" in info.value.message


def test_stream_goes_on_after_an_error(client: GrpcClient) -> None:
    x = np.ones((1, 4), np.float32)
    requests = [
        build_request("identity", {"X": x}),
        build_request("no_such_model", {"X": x}),
        build_request("simple", {"INPUT0": x, "INPUT1": x}),
        build_request("identity", {"Y": x}),
    ]
    answers = list(client.stream_infer(requests))
    assert [type(a).__name__ for a in answers] == [
        "InferResponse", "ServerError", "ServerError", "InferResponse",
    ]  # fmt: skip
    error = answers[1]
    assert isinstance(error, ServerError) and error.status is None
    assert "no_such_model" in error.message
    assert isinstance(answers[3], InferResponse) and answers[3].outputs[0].name == "Y"


def test_stream_response_parser() -> None:
    assert isinstance(parse_stream_response(b"\x0a\x03bad", "t", DEFAULT_LIMITS), ServerError)
    with pytest.raises(DecodeError):
        parse_stream_response(b"\x12\x05ab", "t", DEFAULT_LIMITS)
    with pytest.raises(DecodeError):
        parse_stream_response(b"\x12", "t", DEFAULT_LIMITS)


def test_timeout(client: GrpcClient) -> None:
    with pytest.raises(RequestTimeoutError, match="deadline"):
        client.infer("sleep", {"X": np.ones(1, np.float32)}, timeout=0.3)
    with pytest.raises(RequestTimeoutError):
        list(client.stream_infer([build_request("sleep", {"X": np.ones(1)})], timeout=0.3))
    fast = client.infer("sleep", {"X": np.ones(2)}, parameters={"seconds": 0.0})
    assert np.array_equal(fast.output("X").data, np.ones(2))


def test_connection_refused_names_the_target() -> None:
    target = f"127.0.0.1:{free_port()}"
    with GrpcClient(target, timeout=10) as c, pytest.raises(ServerConnectionError) as info:
        c.infer("identity", {"X": np.ones(1)})
    assert info.value.url == target and target in str(info.value)


def test_async_errors_and_timeouts(server: RunningServer) -> None:
    async def main() -> None:
        async with AsyncGrpcClient(server.grpc_address, timeout=30) as c:
            assert await c.live() and await c.ready() and await c.model_ready("identity")
            assert not await c.model_ready("no_such_model")
            assert (await c.model_metadata("simple"))["name"] == "simple"
            assert (await c.server_metadata())["name"] == "oipcodec"
            assert {"identity"} <= {r["name"] for r in await c.repository_index()}
            await c.unload_model("add_sub")
            assert not await c.model_ready("add_sub")
            await c.load_model("add_sub")
            with pytest.raises(ServerError) as info:
                await c.infer("no_such_model", {"X": np.ones(3, np.float32)})
            assert info.value.code == "NOT_FOUND"
            with pytest.raises(RequestTimeoutError):
                await c.infer("sleep", {"X": np.ones(1, np.float32)}, timeout=0.3)
        async with AsyncGrpcClient(f"127.0.0.1:{free_port()}") as c:
            with pytest.raises(ServerConnectionError):
                await c.live()

    asyncio.run(main())


def test_both_clients_over_tls_with_credentials(tmp_path: Path) -> None:
    import grpc

    header = ("x-token", "t0ken")
    with tls_server(tmp_path, header) as tls:
        credentials = grpc.ssl_channel_credentials(tls.certificate.read_bytes())
        with GrpcClient(tls.grpc_target, credentials=credentials, headers=dict([header])) as c:
            assert c.live() and c.server_metadata()["name"] == "oipcodec"

        async def main() -> bool:
            async with AsyncGrpcClient(
                tls.grpc_target, credentials=credentials, headers=dict([header])
            ) as c:
                return await c.live()

        assert asyncio.run(main())
        # Without credentials the channel is in the clear, and the TLS port refuses it.
        with GrpcClient(tls.grpc_target, timeout=5) as c, pytest.raises(ServerConnectionError):
            c.live()


@pytest.mark.parametrize(
    "error",
    [
        "InvalidArgumentError",
        "NotFoundError",
        "UnavailableError",
        "UnsupportedError",
        "InternalError",
        "PayloadTooLargeError",
    ],
)
def test_one_status_table_from_model_to_both_clients(
    server: RunningServer, client: GrpcClient, error: str
) -> None:
    """An error a model raises reaches the HTTP and the gRPC client as the same HTTP status
    and gRPC code: the server's front ends and the clients read one table."""
    from oipcodec import errors
    from oipcodec.client import HttpClient

    kind = getattr(errors, error)
    inputs = {"X": np.ones(2, np.float32)}
    with pytest.raises(ServerError) as over_grpc:
        client.infer("refuse", inputs, parameters={"error": error})
    with HttpClient(server.http_url, timeout=30) as http, pytest.raises(ServerError) as over_http:
        http.infer("refuse", inputs, parameters={"error": error})
    expected = (kind.http_status, kind.grpc_code)
    assert (over_grpc.value.status, over_grpc.value.code) == expected
    assert (over_http.value.status, over_http.value.code) == expected
    assert "refused as asked" in over_grpc.value.message
    assert "refused as asked" in over_http.value.message


# ------------------------------------------------------------------------------ answer size limit


@pytest.fixture(scope="module")
def large_answers() -> Iterator[str]:
    """A grpc server on 127.0.0.1 (a generic handler, no model behind it) whose ModelInfer
    and ModelStreamInfer answer any request with a ModelInferResponse of about 400 kB, and
    whose ServerLive answers at all (a small answer: under any limit)."""
    from concurrent import futures

    import grpc

    from oipcodec import Tensor, pb
    from oipcodec.client.grpc_client import SERVICE
    from oipcodec.proto import open_inference_grpc_pb2 as pb2
    from oipcodec.types import InferResponse

    big = pb.encode_response(
        InferResponse("big", [Tensor.from_array("Y", np.zeros(100_000, np.float32))])
    )

    def stream(requests: Iterator[bytes], context: object) -> Iterator[bytes]:
        for _ in requests:
            yield pb.encode_stream_response(big)

    handlers = {
        "ModelInfer": grpc.unary_unary_rpc_method_handler(lambda request, context: big),
        "ModelStreamInfer": grpc.stream_stream_rpc_method_handler(stream),
        "ServerLive": grpc.unary_unary_rpc_method_handler(
            lambda request, context: pb2.ServerLiveResponse(live=True).SerializeToString()
        ),
    }
    server = grpc.server(futures.ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, handlers)])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None).wait(5)


def test_an_answer_over_the_limit_is_refused_by_the_transport(large_answers: str) -> None:
    # grpcio's receive limit is the client's max_body_bytes: the answer is refused as it
    # arrives, not received whole and refused after.
    from oipcodec.errors import LimitError
    from oipcodec.limits import Limits

    small = Limits(max_body_bytes=10_000)
    message = r"over the client's limit of 10000 bytes \(Limits.max_body_bytes; grpcio"
    x = {"X": np.ones(2, np.float32)}
    with GrpcClient(large_answers, timeout=10, limits=small) as c:
        assert c.live()  # small answers pass
        with pytest.raises(LimitError, match=message):
            c.infer("big", x)
        with pytest.raises(LimitError, match=message):
            list(c.stream_infer([build_request("big", x)]))
    with GrpcClient(large_answers, timeout=10) as c:  # the default limit (64 MB) takes it
        assert c.infer("big", x).output("Y").data.shape == (100_000,)

    async def main() -> None:
        async with AsyncGrpcClient(large_answers, timeout=10, limits=small) as c:
            assert await c.live()
            with pytest.raises(LimitError, match=message):
                await c.infer("big", x)

    asyncio.run(main())
    # the caller's own channel option wins over the limit
    options = [("grpc.max_receive_message_length", -1)]
    with (
        GrpcClient(large_answers, timeout=10, limits=small, options=options) as c,
        pytest.raises(LimitError, match="exceeds the limit of 10000"),  # the codec's, after
    ):
        c.infer("big", x)
