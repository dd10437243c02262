"""oipcodec.client.trtis_client against a real ``oipcodec serve``: RAW and CLASS outputs over HTTP and
gRPC, batching and not, TYPE_STRING, status and model control, and failures as ServerError
with the v1 code."""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any, ClassVar

import numpy as np
import pytest

from oipcodec.errors import (
    DecodeError,
    OIPError,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
)
from oipcodec.proto import trtis_v1_pb2 as pb
from oipcodec.server.demo import AddSub, Simple, SimpleString
from oipcodec.testing import RunningServer, background
from tests.support.classify_models import LABELS, Scores

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("grpc")
from oipcodec.client.trtis_client import V1GrpcClient, V1HttpClient
from oipcodec.proto import trtis_v1_pb2_grpc as pb_grpc

A = np.arange(32, dtype=np.int32).reshape(2, 16)
B = np.ones((2, 16), dtype=np.int32)


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    models = [Simple(), SimpleString(), AddSub(), Scores("scores", 8, {"LABELED": LABELS})]
    with background(models, log_level="critical") as running:
        yield running


@pytest.fixture(params=["http", "grpc"])
def client(request: pytest.FixtureRequest, server: RunningServer) -> Iterator[Any]:
    if request.param == "http":
        made: Any = V1HttpClient(server.http_url, timeout=30)
    else:
        made = V1GrpcClient(server.grpc_address, timeout=30)
    with made:
        yield made


def test_health_and_status(client: Any) -> None:
    assert client.live() and client.ready()
    status = client.status("simple")
    assert list(status.model_status) == ["simple"]
    assert status.model_status["simple"].config.max_batch_size == 8


def test_simple_batched_raw_and_classes(client: Any) -> None:
    result = client.infer(
        "simple", {"INPUT0": A, "INPUT1": B}, {"OUTPUT0": None, "OUTPUT1": 2}, batch_size=2
    )
    np.testing.assert_array_equal(result.outputs["OUTPUT0"], A + B)
    assert result.outputs["OUTPUT0"].shape == (2, 16)
    # OUTPUT1 = A - B; each batch row is ranked apart (class indices 0..15 in each)
    ranked = [[(i, v) for i, v, _ in row] for row in result.classes["OUTPUT1"]]
    assert ranked == [[(15, 14.0), (14, 13.0)], [(15, 30.0), (14, 29.0)]]
    every = client.infer("simple", {"INPUT0": A[:1], "INPUT1": B[:1]}, batch_size=1)
    assert sorted(every.outputs) == ["OUTPUT0", "OUTPUT1"]
    np.testing.assert_array_equal(every.outputs["OUTPUT1"], A[:1] - B[:1])


def test_strings_labels_and_not_batching(client: Any) -> None:
    values = np.array([[str(i).encode() for i in range(16)]], dtype=object)
    result = client.infer("simple_string", {"INPUT0": values, "INPUT1": values}, batch_size=1)
    assert result.outputs["OUTPUT0"].tolist() == [[str(2 * i).encode() for i in range(16)]]
    x = np.array([[0.2, 0.7, 0.1]], dtype=np.float32)
    labeled = client.infer("scores", {"X": x}, {"LABELED": 1}, batch_size=1)
    assert labeled.classes["LABELED"] == [[(1, pytest.approx(0.7), LABELS[1])]]
    a = np.arange(5, dtype=np.float32)
    sums = client.infer("add_sub", {"INPUT0": a, "INPUT1": a}, ["OUTPUT0"])  # no batching
    np.testing.assert_array_equal(sums.outputs["OUTPUT0"], 2 * a)


def test_failures(client: Any) -> None:
    with pytest.raises(ServerError, match="'nope'") as info:
        client.infer("nope", {"INPUT0": A})
    assert info.value.code == "NOT_FOUND"
    with pytest.raises(ServerError, match="batch_size 9") as info:
        many = np.zeros((9, 16), np.int32)
        client.infer("simple", {"INPUT0": many, "INPUT1": many}, batch_size=9)
    assert info.value.code == "INVALID_ARG"
    with pytest.raises(ValueError, match="first dimension is the batch, 3"):
        client.infer("simple", {"INPUT0": A, "INPUT1": B}, batch_size=3)


def test_model_control_http(server: RunningServer) -> None:
    with V1HttpClient(server.http_url, timeout=30) as client:
        client.unload_model("add_sub")
        with pytest.raises(ServerError) as info:
            client.infer("add_sub", {"INPUT0": np.zeros(2, np.float32)})
        assert info.value.code == "UNAVAILABLE"
        client.load_model("add_sub")
        with pytest.raises(ServerError, match="'nope'"):
            client.load_model("nope")


# ----------------------------------------------------------------------------- hostile servers
# Servers that answer what oipcodec serve never does (issue 35, item 11): each failure is one
# of oipcodec.errors' client errors, never a raw ValueError, ParseError or grpc RpcError.


class _Scripted(http.server.BaseHTTPRequestHandler):
    """A v1 HTTP server whose inference answers carry the headers in ``ANSWERS[path]``."""

    answers: ClassVar[dict[str, dict[str, str]]] = {}

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, headers: dict[str, str], body: bytes = b"") -> None:
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if "garbage" in self.path:
            self._send({"NV-Status": "code: SUCCESS"}, b"\xff\xff\xff")
            return
        status = pb.ServerStatus()
        status.model_status["m"].config.name = "m"
        self._send({"NV-Status": "code: SUCCESS"}, status.SerializeToString())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._send(self.answers[self.path.rsplit("/", 1)[-1]])


@pytest.fixture(scope="module")
def scripted() -> Iterator[str]:
    _Scripted.answers = {
        "badstatus": {"NV-Status": "code: NOPE msg: 'x'"},
        "unknowncode": {"NV-Status": "code: 77 msg: 'strange'"},
        "noheader": {"NV-Status": "code: SUCCESS"},
        "badheader": {"NV-Status": "code: SUCCESS", "NV-InferResponse": "output { raw { dims: "},
    }
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("path", "error", "words"),
    [
        ("badstatus", DecodeError, ["NV-Status", "does not parse"]),
        ("noheader", DecodeError, ["no NV-InferResponse", "not a v1 answer"]),
        ("badheader", DecodeError, ["InferResponseHeader does not parse"]),
    ],
)
def test_http_malformed_answers(scripted: str, path: str, error: type, words: list[str]) -> None:
    with V1HttpClient(f"{scripted}", timeout=10) as client:
        client._configs._known[(path, -1)] = pb.ModelConfig(name=path)
        with pytest.raises(error) as info:
            client.infer(path, {"X": np.zeros(2, np.float32)})
    assert isinstance(info.value, OIPError)
    for word in words:
        assert word in str(info.value)


def test_http_status_document_that_does_not_parse(scripted: str) -> None:
    with (
        V1HttpClient(scripted, timeout=10) as client,
        pytest.raises(DecodeError, match="not a ServerStatus"),
    ):
        client.status("garbage")


def test_http_unknown_status_code(scripted: str) -> None:
    with V1HttpClient(scripted, timeout=10) as client:
        client._configs._known[("unknowncode", -1)] = pb.ModelConfig(name="unknowncode")
        with pytest.raises(ServerError, match=r"strange.*code 77") as info:
            client.infer("unknowncode", {"X": np.zeros(2, np.float32)})
    assert info.value.code == "UNKNOWN"


class _SlowServicer(pb_grpc.GRPCServiceServicer):
    """A v1 gRPC service that answers Status, and Infer after ``delay`` seconds with
    ``answer`` (the other methods: UNIMPLEMENTED)."""

    def __init__(self, delay: float, answer: Any) -> None:
        self.delay, self.answer = delay, answer

    def Status(self, request: Any, context: Any) -> Any:
        status = pb.StatusResponse(request_status=pb.RequestStatus(code=pb.SUCCESS))
        status.server_status.model_status["m"].config.name = "m"
        return status

    def Infer(self, request: Any, context: Any) -> Any:
        time.sleep(self.delay)
        return self.answer


@contextlib.contextmanager
def _grpc_server(servicer: Any) -> Iterator[str]:
    import grpc

    server = grpc.server(futures.ThreadPoolExecutor(2))
    pb_grpc.add_GRPCServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None)


def test_grpc_timeout_unknown_code_and_no_header() -> None:
    ok = pb.RequestStatus(code=pb.SUCCESS)
    x = {"X": np.zeros(2, np.float32)}
    slow = _SlowServicer(2.0, pb.InferResponse(request_status=ok))
    with (
        _grpc_server(slow) as target,
        V1GrpcClient(target, timeout=0.5) as client,
        pytest.raises(RequestTimeoutError, match="deadline"),
    ):
        client.infer("m", x)
    strange = pb.InferResponse(request_status=pb.RequestStatus(code=77, msg="strange"))
    with _grpc_server(_SlowServicer(0, strange)) as target, V1GrpcClient(target) as client:
        with pytest.raises(ServerError, match="strange") as info:
            client.infer("m", x)
        assert info.value.code == "UNKNOWN"
    empty = _SlowServicer(0, pb.InferResponse(request_status=ok))
    with (
        _grpc_server(empty) as target,
        V1GrpcClient(target, timeout=10) as client,
        pytest.raises(DecodeError, match="no meta_data"),
    ):
        client.infer("m", x)


def test_no_server() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with (
        V1GrpcClient(f"127.0.0.1:{port}", timeout=5) as grpc_client,
        pytest.raises(ServerConnectionError),
    ):
        grpc_client.status()
    with (
        V1HttpClient(f"http://127.0.0.1:{port}", timeout=5) as http_client,
        pytest.raises(ServerConnectionError),
    ):
        http_client.status()
