"""The TensorRT Inference Server v1 API of ``oipcodec serve``: the HTTP routes under ``/api/``
(on every ``--http-protocol``) and the gRPC ``nvidia.inferenceserver.GRPCService`` on the OIP's
port, driven over real sockets with oipcodec's own v1 messages (the reference package's
generated modules and client drive it in tests/compat/test_compat_tensorrtserver.py): Triton's
``simple`` and ``simple_string`` flows, classes, status documents, model control, and every
malformed request answered with the right ``RequestStatus`` code and a message naming the
input."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from google.protobuf import json_format, text_format

from oipcodec import trtis_v1 as v1
from oipcodec.kernels import serialize_bytes
from oipcodec.proto import trtis_v1_pb2 as pb
from oipcodec.server.demo import Simple, SimpleString, SquareInt32
from oipcodec.testing import RunningServer, background
from tests.support.classify_models import LABELS, Scores

pytest.importorskip("uvicorn", reason="the server extra is not installed")
grpc = pytest.importorskip("grpc")
from oipcodec.proto import trtis_v1_pb2_grpc as pb_grpc  # noqa: E402

TIMEOUT = 30.0
A = np.arange(16, dtype=np.int32).reshape(1, 16)
B = np.ones((1, 16), dtype=np.int32)
SIMPLE = (
    'batch_size: 1 input { name: "INPUT0" dims: 16 } input { name: "INPUT1" dims: 16 } '
    'output { name: "OUTPUT0" } output { name: "OUTPUT1" }'
)


def models() -> list[Any]:
    return [Simple(), SimpleString(), Scores("scores", 8, {"LABELED": LABELS})]


@pytest.fixture(scope="module", params=["oipcodec", "native", "httptools", "h11"])
def server(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    with background(models(), http_protocol=request.param, log_level="critical") as running:
        yield running


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    @property
    def request_status(self) -> Any:
        return text_format.Parse(self.headers["nv-status"], pb.RequestStatus())

    @property
    def response_header(self) -> Any:
        return text_format.Parse(self.headers["nv-inferresponse"], pb.InferResponseHeader())


def call(
    server: RunningServer,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    host, port = server.http_address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return Answer(answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read())
    finally:
        connection.close()


def infer(server: RunningServer, path: str, header: str, body: bytes) -> Answer:
    return call(server, "POST", path, body, {v1.REQUEST_HEADER: header})


def assert_failed(answer: Answer, code: int, *words: str) -> None:
    assert answer.status == 400, answer.headers
    status = answer.request_status
    assert status.code == code, status
    for word in words:
        assert word in status.msg, status.msg


# ----------------------------------------------------------------------------- HTTP


def test_health(server: RunningServer) -> None:
    for mode in ("live", "ready"):
        answer = call(server, "GET", f"/api/health/{mode}")
        assert answer.status == 200
        status = answer.request_status
        assert status.code == pb.SUCCESS and status.server_id == "oipcodec"
        assert status.request_id > 0
    assert call(server, "POST", "/api/health/live").status == 405


def test_status_text_binary_json(server: RunningServer) -> None:
    text = call(server, "GET", "/api/status")
    assert text.status == 200 and text.request_status.code == pb.SUCCESS
    document = text_format.Parse(text.body.decode(), pb.ServerStatus())
    assert document.ready_state == pb.SERVER_READY
    assert set(document.model_status) == {"simple", "simple_string", "scores"}
    simple = document.model_status["simple"]
    assert simple.version_status[1].ready_state == pb.MODEL_READY
    config = simple.config
    assert (config.name, config.max_batch_size) == ("simple", 8)
    assert [(i.name, i.data_type, list(i.dims)) for i in config.input] == [
        ("INPUT0", pb.TYPE_INT32, [16]),
        ("INPUT1", pb.TYPE_INT32, [16]),
    ]
    strings = document.model_status["simple_string"].config
    assert [o.data_type for o in strings.output] == [pb.TYPE_STRING] * 2
    binary = call(server, "GET", "/api/status/simple?format=binary")
    assert binary.headers["content-type"] == "application/octet-stream"
    assert set(pb.ServerStatus.FromString(binary.body).model_status) == {"simple"}
    as_json = call(server, "GET", "/api/status/simple", headers={"Accept": "application/json"})
    parsed = json_format.Parse(as_json.body, pb.ServerStatus())
    assert parsed.model_status["simple"].config == config


def test_status_unknown_model(server: RunningServer) -> None:
    assert_failed(call(server, "GET", "/api/status/nope"), pb.NOT_FOUND, "'nope'")


@pytest.mark.parametrize("form", ["", "?format=binary"])
def test_simple(server: RunningServer, form: str) -> None:
    answer = infer(server, f"/api/infer/simple{form}", SIMPLE, A.tobytes() + B.tobytes())
    assert answer.status == 200 and answer.request_status.code == pb.SUCCESS
    header = answer.response_header
    assert (header.model_name, header.model_version, header.batch_size) == ("simple", 1, 1)
    assert [(o.name, list(o.raw.dims), o.raw.batch_byte_size) for o in header.output] == [
        ("OUTPUT0", [16], 64),
        ("OUTPUT1", [16], 64),
    ]
    np.testing.assert_array_equal(np.frombuffer(answer.body[:64], np.int32), (A + B)[0])
    np.testing.assert_array_equal(np.frombuffer(answer.body[64:128], np.int32), (A - B)[0])
    appended = answer.body[128:]
    if form:
        assert pb.InferResponseHeader.FromString(appended) == header
    else:
        assert text_format.Parse(appended.decode(), pb.InferResponseHeader()) == header


def test_simple_batched_version_and_dims_from_the_model(server: RunningServer) -> None:
    a = np.arange(48, dtype=np.int32).reshape(3, 16)
    header = 'batch_size: 3 input { name: "INPUT0" } input { name: "INPUT1" } id: 42'
    answer = infer(server, "/api/infer/simple/1", header, a.tobytes() + a.tobytes())
    assert answer.status == 200, answer.headers
    response = answer.response_header
    assert (response.batch_size, response.id) == (3, 42)
    assert [o.name for o in response.output] == ["OUTPUT0", "OUTPUT1"]  # all, when none asked
    np.testing.assert_array_equal(np.frombuffer(answer.body[:192], np.int32), 2 * a.ravel())


def test_simple_string(server: RunningServer) -> None:
    values = [str(i).encode() for i in range(16)]
    framed = serialize_bytes(values)
    header = (
        f'batch_size: 1 input {{ name: "INPUT0" dims: 16 batch_byte_size: {len(framed)} }} '
        f'input {{ name: "INPUT1" dims: 16 batch_byte_size: {len(framed)} }} '
        'output { name: "OUTPUT0" }'
    )
    answer = infer(server, "/api/infer/simple_string", header, framed + framed)
    assert answer.status == 200, answer.headers
    (output,) = answer.response_header.output
    raw = answer.body[: output.raw.batch_byte_size]
    sums = v1.decode_inputs(
        v1.parse_request_header(f'batch_size: 1 input {{ name: "S" batch_byte_size: {len(raw)} }}'),
        raw,
        [v1.InputSpec("S", "BYTES", (-1, 16))],
        8,
    )[0]
    assert sums.data.ravel().tolist() == [str(2 * i).encode() for i in range(16)]


def test_classes(server: RunningServer) -> None:
    x = np.array([[0.1, 0.9, 0.3], [0.8, 0.2, 0.5]], dtype=np.float32)
    header = (
        'batch_size: 2 input { name: "X" dims: 3 } output { name: "LABELED" cls { count: 2 } } '
        'output { name: "PROB" }'
    )
    answer = infer(server, "/api/infer/scores", header, x.tobytes())
    assert answer.status == 200, answer.headers
    labeled, prob = answer.response_header.output
    rows = [[(c.idx, round(c.value, 6), c.label) for c in r.cls] for r in labeled.batch_classes]
    assert rows == [
        [(1, 0.9, LABELS[1]), (2, 0.3, LABELS[2])],
        [(0, 0.8, LABELS[0]), (2, 0.5, LABELS[2])],
    ]
    assert prob.raw.batch_byte_size == 24  # only RAW outputs take body bytes
    assert answer.body[:24] == x.tobytes()
    refused = 'batch_size: 1 input { name: "X" dims: 3 } output { name: "TEXT" cls { count: 1 } }'
    answer = infer(server, "/api/infer/scores", refused, x[:1].tobytes())
    assert_failed(answer, pb.INVALID_ARG, "'TEXT'", "numeric")


@pytest.mark.parametrize(
    ("path", "header", "body", "code", "words"),
    [
        (
            "simple",
            "batch_size: 1 input { ",
            b"",
            pb.INVALID_ARG,
            [v1.REQUEST_HEADER, "1:21", "Expected"],
        ),
        ("simple", "batch_size: 1 nope: 3", b"", pb.INVALID_ARG, ['no field named "nope"']),
        ("simple", SIMPLE, A.tobytes(), pb.INVALID_ARG, ["'INPUT1'", "expected 64 bytes"]),
        ("simple", SIMPLE, 3 * A.tobytes(), pb.INVALID_ARG, ["64 bytes after the last input"]),
        (
            "simple",
            'batch_size: 1 input { name: "INPUT0" dims: 8 } input { name: "INPUT1" dims: 8 }',
            A.tobytes(),
            pb.INVALID_ARG,
            ["INPUT0", "[1, 8]", "[-1, 16]"],
        ),
        (
            "simple",
            'batch_size: 9 input { name: "INPUT0" } input { name: "INPUT1" }',
            18 * A.tobytes(),
            pb.INVALID_ARG,
            ["batch_size 9", "1 to 8"],
        ),
        (
            "simple",
            f'batch_size: 1 input {{ name: "INPUT0" dims: {2**40} }}',
            b"",
            pb.INVALID_ARG,
            ["input 'INPUT0'", "more than the limit"],
        ),
        ("simple", "batch_size: 1099511627776", b"", pb.INVALID_ARG, ["out of range"]),
        (
            "simple",
            'batch_size: 1 input { name: "INPUT0" dims: 16 } input { name: "INPUT0" dims: 16 }',
            2 * A.tobytes(),
            pb.INVALID_ARG,
            ["input 'INPUT0' appears more than once"],  # REST's and GraphPipe's words
        ),
        ("nope", SIMPLE, b"", pb.NOT_FOUND, ["'nope'"]),
        ("simple/7", SIMPLE, b"", pb.NOT_FOUND, ["'simple' version 7"]),
        (
            "simple",
            'batch_size: 1 input { name: "INPUT0" shared_memory { name: "r" byte_size: 64 } }',
            b"",
            pb.UNSUPPORTED,
            ["'INPUT0'", "shared memory"],
        ),
        (
            "simple",
            SIMPLE.replace('output { name: "OUTPUT1" }', 'output { name: "OUT9" }'),
            A.tobytes() + B.tobytes(),
            pb.INVALID_ARG,
            ["'OUT9'"],
        ),
        (
            "simple_string",
            'batch_size: 1 input { name: "INPUT0" dims: 16 }',
            b"",
            pb.INVALID_ARG,
            ["'INPUT0' is TYPE_STRING", "batch_byte_size"],
        ),
    ],
)
def test_malformed(
    server: RunningServer, path: str, header: str, body: bytes, code: int, words: list[str]
) -> None:
    answer = infer(server, f"/api/infer/{path}", header, body)
    assert_failed(answer, code, *words)
    assert answer.body == b""


def test_missing_header_and_unknown_endpoints(server: RunningServer) -> None:
    assert_failed(
        call(server, "POST", "/api/infer/simple", A.tobytes()), pb.INVALID_ARG, v1.REQUEST_HEADER
    )
    assert_failed(call(server, "GET", "/api/nothing"), pb.NOT_FOUND, "/api/nothing")
    assert_failed(call(server, "GET", "/api/sharedmemory/status"), pb.UNSUPPORTED, "shared memory")
    assert call(server, "GET", "/api/infer/simple").status == 405


def test_model_control(server: RunningServer) -> None:
    assert call(server, "POST", "/api/modelcontrol/unload/scores").request_status.code == 1
    document = text_format.Parse(call(server, "GET", "/api/status").body, pb.ServerStatus())
    assert document.model_status["scores"].version_status[1].ready_state != pb.MODEL_READY
    x = np.zeros((1, 3), np.float32).tobytes()
    answer = infer(server, "/api/infer/scores", 'batch_size: 1 input { name: "X" dims: 3 }', x)
    assert_failed(answer, pb.UNAVAILABLE, "'scores'")
    assert call(server, "POST", "/api/modelcontrol/load/scores").request_status.code == 1
    answer = infer(server, "/api/infer/scores", 'batch_size: 1 input { name: "X" dims: 3 }', x)
    assert answer.status == 200
    assert_failed(call(server, "POST", "/api/modelcontrol/load/nope"), pb.NOT_FOUND, "nope")


# ----------------------------------------------------------------------------- gRPC


@pytest.fixture(scope="module")
def stub(server: RunningServer) -> Iterator[Any]:
    channel = grpc.insecure_channel(server.grpc_address)
    try:
        yield pb_grpc.GRPCServiceStub(channel)
    finally:
        channel.close()


def test_grpc_health_status_repository(stub: Any) -> None:
    for mode in ("live", "ready"):
        answer = stub.Health(pb.HealthRequest(mode=mode), timeout=TIMEOUT)
        assert answer.health and answer.request_status.code == pb.SUCCESS
    bad = stub.Health(pb.HealthRequest(mode="dead"), timeout=TIMEOUT)
    assert bad.request_status.code == pb.INVALID_ARG and "dead" in bad.request_status.msg
    status = stub.Status(pb.StatusRequest(model_name="simple_string"), timeout=TIMEOUT)
    assert list(status.server_status.model_status) == ["simple_string"]
    missing = stub.Status(pb.StatusRequest(model_name="nope"), timeout=TIMEOUT)
    assert missing.request_status.code == pb.NOT_FOUND
    index = stub.Repository(pb.RepositoryRequest(index=True), timeout=TIMEOUT)
    assert [m.name for m in index.index.models] == ["scores", "simple", "simple_string"]
    shm = stub.SharedMemoryControl(
        pb.SharedMemoryControlRequest(status=pb.SharedMemoryControlRequest.Status()),
        timeout=TIMEOUT,
    )
    assert shm.request_status.code == pb.UNSUPPORTED


def test_grpc_infer_and_stream(stub: Any) -> None:
    request = pb.InferRequest(
        model_name="simple",
        model_version=-1,
        meta_data=v1.parse_request_header(SIMPLE),
        raw_input=[A.tobytes(), B.tobytes()],
    )
    answer = stub.Infer(request, timeout=TIMEOUT)
    assert answer.request_status.code == pb.SUCCESS, answer.request_status
    assert [o.name for o in answer.meta_data.output] == ["OUTPUT0", "OUTPUT1"]
    np.testing.assert_array_equal(np.frombuffer(answer.raw_output[0], np.int32), (A + B)[0])
    np.testing.assert_array_equal(np.frombuffer(answer.raw_output[1], np.int32), (A - B)[0])
    short = pb.InferRequest()
    short.CopyFrom(request)
    del short.raw_input[1]
    streamed = list(stub.StreamInfer(iter([request, short, request]), timeout=TIMEOUT))
    assert [s.request_status.code for s in streamed] == [pb.SUCCESS, pb.INVALID_ARG, pb.SUCCESS]
    assert "raw_input" in streamed[1].request_status.msg
    wrong = pb.InferRequest()
    wrong.CopyFrom(request)
    wrong.raw_input[0] = A.tobytes()[:-4]
    failed = stub.Infer(wrong, timeout=TIMEOUT)
    assert failed.request_status.code == pb.INVALID_ARG
    assert (
        "'INPUT0'" in failed.request_status.msg and "raw_input has 60" in failed.request_status.msg
    )
    unknown = pb.InferRequest(model_name="simple", model_version=5, meta_data=request.meta_data)
    assert stub.Infer(unknown, timeout=TIMEOUT).request_status.code == pb.NOT_FOUND


def test_grpc_model_control(stub: Any) -> None:
    unload = pb.ModelControlRequest(model_name="simple_string", type=pb.ModelControlRequest.UNLOAD)
    assert stub.ModelControl(unload, timeout=TIMEOUT).request_status.code == pb.SUCCESS
    load = pb.ModelControlRequest(model_name="simple_string", type=pb.ModelControlRequest.LOAD)
    assert stub.ModelControl(load, timeout=TIMEOUT).request_status.code == pb.SUCCESS
    missing = pb.ModelControlRequest(model_name="nope", type=pb.ModelControlRequest.LOAD)
    assert stub.ModelControl(missing, timeout=TIMEOUT).request_status.code == pb.NOT_FOUND


def test_serve_help_lists_the_v1_endpoints(capsys: pytest.CaptureFixture[str]) -> None:
    from oipcodec import cli

    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for endpoint in (
        "/api/health/live",
        "/api/health/ready",
        "/api/status[/<model>]",
        "/api/infer/<model>[/<version>]",
        "/api/modelcontrol/load/<model>",
        "/api/modelcontrol/unload/<model>",
        "nvidia.inferenceserver.GRPCService",
    ):
        assert endpoint in text


@pytest.mark.parametrize("form", ["", "?format=binary"])
def test_large_answer_in_parts(server: RunningServer, form: str) -> None:
    """An answer over 64 kB goes out as its parts (the tensor not joined): the bytes are the
    same."""
    x = np.random.default_rng(0).random((2, 20000), dtype=np.float32)
    header = 'batch_size: 2 input { name: "X" dims: 20000 } output { name: "PROB" }'
    answer = infer(server, f"/api/infer/scores{form}", header, x.tobytes())
    assert answer.status == 200, answer.headers
    assert answer.body[: x.nbytes] == x.tobytes()
    (output,) = answer.response_header.output
    assert output.raw.batch_byte_size == x.nbytes
    tail = answer.body[x.nbytes :]
    if form:
        assert pb.InferResponseHeader.FromString(tail) == answer.response_header
    else:
        assert tail.decode() == answer.headers["nv-inferresponse"]


def test_a_decoupled_model_is_refused_by_name() -> None:
    """A model that answers many times has no v1 answer: refused as Triton's unary
    endpoints refuse it (UNSUPPORTED), over HTTP and gRPC, instead of failing inside."""
    with background([SquareInt32()], process=False, log_level="critical") as running:
        header = 'batch_size: 1 input { name: "IN" dims: 1 } output { name: "OUT" }'
        body = np.array([3], dtype=np.int32).tobytes()
        answer = infer(running, "/api/infer/square_int32", header, body)
        assert answer.status == 400, answer.headers
        status = answer.request_status
        assert (status.code, status.msg) == (
            pb.UNSUPPORTED,
            "the TRTIS v1 API doesn't support models with decoupled transaction policy",
        )
        with grpc.insecure_channel(running.grpc_address) as channel:
            request = pb.InferRequest(
                model_name="square_int32",
                meta_data=v1.parse_request_header(header),
                raw_input=[body],
            )
            reply = pb_grpc.GRPCServiceStub(channel).Infer(request, timeout=TIMEOUT)
        assert (reply.request_status.code, reply.request_status.msg) == (status.code, status.msg)
