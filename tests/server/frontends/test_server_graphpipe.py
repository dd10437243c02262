"""The GraphPipe endpoints of the server: ``/graphpipe/<model>`` on the REST port and the
``--graphpipe-port``, driven by oipcodec's GraphPipe client and by raw HTTP (the real GraphPipe
client's tests are in tests/compat/test_compat_graphpipe.py)."""

from __future__ import annotations

import contextlib
import http.client as httplib
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
import pytest

from oipcodec import graphpipe
from oipcodec.client.graphpipe_client import GraphPipeClient
from oipcodec.errors import ServerError
from oipcodec.server.demo import SquareInt32
from oipcodec.testing import RunningServer, background
from tests.support import graphpipe_fb as ref
from tests.support.graphpipe_models import MODELS, graphpipe_server
from tests.support.ports import free_ports
from tests.support.serve_process import serve_process

pytest.importorskip("uvicorn", reason="the server extra is not installed")

TIMEOUT = 30.0


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with graphpipe_server() as running:
        yield running


@pytest.fixture(scope="module")
def pair(server: RunningServer) -> Iterator[GraphPipeClient]:
    with GraphPipeClient(f"{server.http_url}/graphpipe/gp_pair", timeout=TIMEOUT) as client:
        yield client


def post(
    server: RunningServer, path: str, body: bytes, port: int | None = None
) -> tuple[int, bytes, str]:
    conn = httplib.HTTPConnection(server.host, port or server.http_port, timeout=TIMEOUT)
    try:
        conn.request("POST", path, body)  # no Content-Type, as GraphPipe's clients
        answer = conn.getresponse()
        return answer.status, answer.read(), answer.getheader("content-type") or ""
    finally:
        conn.close()


def test_the_client_is_exported() -> None:
    import oipcodec.client

    assert oipcodec.client.GraphPipeClient is GraphPipeClient


def test_metadata(server: RunningServer, pair: GraphPipeClient) -> None:
    meta = pair.metadata()
    assert (meta.name, meta.server) == ("gp_pair", "oipcodec")
    assert [(i.name, i.datatype, i.shape) for i in meta.inputs] == [
        ("A", "FP32", (-1, 2)),
        ("B", "BYTES", (-1,)),
    ]
    assert [o.name for o in meta.outputs] == ["DOUBLE", "COUNT", "CONFIG"]
    conn = httplib.HTTPConnection(server.host, server.http_port, timeout=TIMEOUT)
    conn.request("GET", "/graphpipe/gp_pair")
    answer = conn.getresponse()
    document = orjson.loads(answer.read())
    conn.close()
    assert answer.status == 200 and document == meta.document()
    assert document["inputs"][1]["type"] == "String"


def test_infer_with_names_selection_and_config(pair: GraphPipeClient) -> None:
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    b = np.array([b"", "é".encode(), b"a\0b"], dtype=object)
    double, count, config = pair.infer([a, b], config="hello")  # the model's inputs, in order
    np.testing.assert_array_equal(double, a * 2)
    assert count.tolist() == [3] and config.tolist() == [b"hello"]
    (only,) = pair.infer([b, a], input_names=["B", "A"], output_names=["COUNT"])
    assert only.tolist() == [3]
    selected = pair.infer([a, b], output_names=["CONFIG", "DOUBLE"])
    assert selected[0].tolist() == [b""] and selected[1].shape == (3, 2)


def test_zero_size_and_every_type(server: RunningServer) -> None:
    with GraphPipeClient(f"{server.http_url}/graphpipe/gp_echo", timeout=TIMEOUT) as echo:
        arrays = [np.arange(4, dtype=d).reshape(2, 2) for d in graphpipe_dtypes()]
        arrays += [np.zeros((0, 3), np.float32), np.array([[b"x", b""]], dtype=object)]
        names = [f"t{i}" for i in range(len(arrays))]
        for got, want in zip(echo.infer(arrays, names), arrays, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tolist() == want.tolist()


def graphpipe_dtypes() -> list[str]:
    return ["u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8", "f2", "f4", "f8"]


def test_bool_input_and_output_travel_as_uint8(server: RunningServer) -> None:
    with GraphPipeClient(f"{server.http_url}/graphpipe/gp_flags", timeout=TIMEOUT) as flags:
        assert flags.metadata().inputs[0].datatype == "UINT8"  # BOOL has no GraphPipe type
        (out,) = flags.infer([np.array([1, 0, 1], np.uint8)])
        assert out.dtype == np.uint8 and out.tolist() == [0, 1, 0]
        with pytest.raises(ServerError, match="element 1: a BOOL input takes Uint8 elements"):
            flags.infer([np.array([1, 7], np.uint8)])


@pytest.mark.parametrize(
    ("inputs", "names", "outputs", "status", "message"),
    [
        ([np.ones((2, 3), np.float32)], ["A"], None, 400, "input 'A' of model 'gp_pair' has shape"),
        ([np.ones((1, 2), np.float32)], ["Z"], None, 400, "unexpected inference input 'Z'"),
        ([np.ones((1, 2), np.int32), np.array([b"x"], object)], None, None, 400, "INT32"),
        ([np.ones((1, 2), np.float32)] * 3, None, None, 400, "3 input tensors without input_names"),
        ([np.ones((1, 2), np.float32), np.array([b"x"], object)], None, ["NOPE"], 400, "NOPE"),
        ([np.ones((1, 2), np.float32), np.array([b"x"], object)], None, None, 400, "refuse"),
    ],
)
def test_request_errors_come_back_in_the_infer_response(
    pair: GraphPipeClient,
    inputs: list[np.ndarray],
    names: list[str] | None,
    outputs: list[str] | None,
    status: int,
    message: str,
) -> None:
    config = "refuse" if message == "refuse" else None
    with pytest.raises(ServerError, match=message) as caught:
        pair.infer(inputs, names, outputs, config)
    assert caught.value.status == status


def test_model_failure_and_decode_errors_are_errors_with_status_200(server: RunningServer) -> None:
    wire = b"".join(graphpipe.encode_request([np.ones(1, np.float32)], ["x"]))
    status, body, kind = post(server, "/graphpipe/gp_broken", wire)
    assert status == 200 and kind == "application/octet-stream"
    assert graphpipe.decode_response(body).errors[0][0] == 500
    assert "the model broke" in graphpipe.decode_response(body).errors[0][1]
    # A valid flatbuffer whose tensor data disagrees with its shape: an Error, named.
    fields = ((10, (3,), b"\0" * 8, None),)
    wire = ref.build("Request", (1, (None, [b"A"], list(fields), None)))
    status, body, _ = post(server, "/graphpipe/gp_pair", wire)
    ((code, message),) = graphpipe.decode_response(body).errors
    assert (status, code) == (200, 400)
    assert message.startswith("input 'A': expected 12 bytes of data for 3 Float32 elements")


def test_an_input_name_twice_is_refused_in_rests_words(server: RunningServer) -> None:
    """GraphPipe took the last of two inputs of one name; REST and v1 refuse it: so does
    GraphPipe now, with the same words."""
    wire = b"".join(
        graphpipe.encode_request([np.ones(2, np.float32), np.zeros(2, np.float32)], ["x", "x"])
    )
    status, body, _ = post(server, "/graphpipe/gp_echo", wire)
    ((code, message),) = graphpipe.decode_response(body).errors
    assert (status, code) == (200, 400)
    assert message == "input 'x' appears more than once"
    twice = {"name": "A", "datatype": "FP32", "shape": [1, 2], "data": [1, 2]}
    rest = orjson.dumps({"inputs": [twice, twice]})
    conn = httplib.HTTPConnection(server.host, server.http_port, timeout=TIMEOUT)
    try:
        conn.request("POST", "/v2/models/gp_pair/infer", rest)
        answer = conn.getresponse()
        assert answer.status == 400
        assert orjson.loads(answer.read())["error"] == "input 'A' appears more than once"
    finally:
        conn.close()


def test_a_body_that_is_not_a_request_is_a_400_with_text(server: RunningServer) -> None:
    status, body, kind = post(server, "/graphpipe/gp_pair", b"\x00" * 3)
    assert (status, kind) == (400, "text/plain")
    assert body.startswith(b"not a GraphPipe Request flatbuffer: a flatbuffer needs at least 8")
    status, body, _ = post(server, "/graphpipe/nope", b"")
    assert status == 404 and b"nope" in body


def test_the_graphpipe_port_serves_one_model_at_root(server: RunningServer) -> None:
    assert server.graphpipe_port
    url = f"http://{server.host}:{server.graphpipe_port}/"
    with GraphPipeClient(url, timeout=TIMEOUT) as client:
        assert client.metadata().name == "gp_pair"
        (count,) = client.infer(
            [np.ones((1, 2), np.float32), np.array([b"x"], object)], output_names=["COUNT"]
        )
        assert count.tolist() == [1]
    status, _, _ = post(server, "/v2/models/gp_pair/infer", b"{}", server.graphpipe_port)
    assert status == 404


def test_serve_command_with_a_graphpipe_port(tmp_path: Path) -> None:
    http_port, graphpipe_port = free_ports(2)
    root = Path(__file__).resolve().parents[3]
    args = [
        "--http-port", str(http_port), "--grpc-port", "-1",
        "--graphpipe-port", str(graphpipe_port),
        "--graphpipe-model", "gp_echo", "--model-module", "tests.support.graphpipe_models",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}:{root}"}
    answers: list[list[float]] = []

    def ready() -> bool:
        url = f"http://127.0.0.1:{graphpipe_port}"
        with contextlib.suppress(Exception), GraphPipeClient(url, timeout=5) as client:
            (out,) = client.infer([np.array([1.5])], ["x"])
            answers.append(out.tolist())
        return bool(answers)

    with serve_process(*args, cwd=tmp_path, env=env, ready=ready, startup_seconds=TIMEOUT):
        assert answers == [[1.5]]


def test_two_processes_share_the_graphpipe_port() -> None:
    with background(
        MODELS, workers=2, grpc_port=None, graphpipe_port=0, graphpipe_model="gp_echo",
        log_level="critical",
    ) as running:  # fmt: skip
        assert running.graphpipe_port
        url = f"http://{running.host}:{running.graphpipe_port}"
        with GraphPipeClient(url, timeout=TIMEOUT, pool_size=1) as client:
            for _ in range(4):
                (out,) = client.infer([np.array([2.5])], ["x"])
                assert out.tolist() == [2.5]


def test_a_decoupled_model_is_refused_by_name() -> None:
    """A model that answers many times has no GraphPipe answer: its error in the response
    (501, in Triton's words), instead of failing inside; its metadata is still served."""
    with background(
        [SquareInt32()], process=False, grpc_port=None, log_level="critical"
    ) as running:
        wire = b"".join(graphpipe.encode_request([np.array([3], np.int32)], ["IN"]))
        status, body, _ = post(running, "/graphpipe/square_int32", wire)
        assert status == 200
        assert graphpipe.decode_response(body).errors == [
            (501, "GraphPipe doesn't support models with decoupled transaction policy")
        ]
        metadata = graphpipe.encode_metadata_request()
        status, body, _ = post(running, "/graphpipe/square_int32", metadata)
        assert status == 200 and graphpipe.decode_metadata_response(body).name == "square_int32"
