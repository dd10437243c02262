"""v1 classification answers of any size (issue 35, item 4): ``cls { count: 4294967295 }`` on
an output of a million elements costs no more than its class count, is ranked and written off
the event loop (other clients are answered meanwhile), and a large answer's classes go in the
body (TRTIS 1.x's way), so that the ``NV-InferResponse`` header stays within what http.client
and oipcodec's V1HttpClient read (a header line of at most 64 KiB)."""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from google.protobuf import text_format

from oipcodec import trtis_v1 as v1
from oipcodec.proto import trtis_v1_pb2 as pb
from oipcodec.testing import RunningServer, background
from tests.support.classify_models import LABELS, Scores

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("grpc")
from oipcodec.client.trtis_client import V1GrpcClient, V1HttpClient

TIMEOUT = 120.0
ALL = 2**32 - 1


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background([Scores("scores", 8, {"LABELED": LABELS})], log_level="critical") as running:
        yield running


def post(server: RunningServer, path: str, header: str, body: bytes) -> http.client.HTTPResponse:
    host, port = server.http_address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    connection.request("POST", path, body=body, headers={v1.REQUEST_HEADER: header})
    answer = connection.getresponse()  # http.client refuses a header line over 64 KiB
    answer.read()
    connection.close()
    return answer


def _header(width: int, output: str = "PROB") -> str:
    return f'batch_size: 1 input {{ name: "X" dims: {width} }} output {{ name: "{output}" cls {{ count: {ALL} }} }}'


def test_a_large_class_answer_goes_in_the_body(server: RunningServer) -> None:
    """5,000 classes (about 190 kB of header text): http.client reads the answer, whose
    NV-InferResponse names the output and whose body ends with the whole header."""
    x = np.random.default_rng(0).random((1, 5000), dtype=np.float32)
    host, port = server.http_address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    connection.request(
        "POST", "/api/infer/scores", body=x.tobytes(), headers={v1.REQUEST_HEADER: _header(5000)}
    )
    answer = connection.getresponse()
    body = answer.read()
    connection.close()
    assert answer.status == 200
    line = answer.getheader(v1.RESPONSE_HEADER)
    assert line is not None and len(line) <= v1.MAX_HEADER_TEXT
    short = text_format.Parse(line, pb.InferResponseHeader())
    assert v1.classes_in_body(short) and short.output[0].name == "PROB"
    whole = text_format.Parse(body.decode(), pb.InferResponseHeader())
    (row,) = whole.output[0].batch_classes
    assert [c.idx for c in row.cls] == np.argsort(-x[0], kind="stable").tolist()
    assert body.decode() == text_format.MessageToString(whole, as_one_line=True)


@pytest.mark.parametrize("kind", ["http", "grpc"])
def test_v1_clients_read_a_large_class_answer(server: RunningServer, kind: str) -> None:
    x = np.random.default_rng(1).random((2, 3000), dtype=np.float32)
    client = (
        V1HttpClient(server.http_url, timeout=TIMEOUT)
        if kind == "http"
        else V1GrpcClient(server.grpc_address, timeout=TIMEOUT)
    )
    with client:
        result = client.infer(
            "scores", {"X": x}, {"LABELED": ALL, "PROB": None, "COUNTS": 2}, batch_size=2
        )
    rows = result.classes["LABELED"]
    assert [len(row) for row in rows] == [3000, 3000]
    for r in range(2):
        order = np.argsort(-x[r], kind="stable")
        assert [c[0] for c in rows[r]] == order.tolist()
        assert rows[r][0][1] == pytest.approx(float(x[r, order[0]]))
        labelled = [c for c in rows[r] if c[0] < len(LABELS)]
        assert all(label == LABELS[i] for i, _, label in labelled)
    np.testing.assert_array_equal(result.outputs["PROB"], x)
    assert len(result.classes["COUNTS"][0]) == 2


def test_a_million_classes_do_not_stop_the_server(server: RunningServer) -> None:
    """cls { count: 4294967295 } on a million-element output: every class answered (binary
    form, read whole), and health probes on other connections answered meanwhile within a
    second each (the event loop was frozen for 17 s)."""
    width = 1_000_000
    x = np.random.default_rng(2).random((1, width), dtype=np.float32)
    host, port = server.http_address.rsplit(":", 1)
    result: dict[str, object] = {}

    def big() -> None:
        connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
        connection.request(
            "POST",
            "/api/infer/scores?format=binary",
            body=x.tobytes(),
            headers={v1.REQUEST_HEADER: _header(width)},
        )
        answer = connection.getresponse()
        result["status"] = answer.status
        result["line"] = answer.getheader(v1.RESPONSE_HEADER)
        result["body"] = answer.read()
        connection.close()

    thread = threading.Thread(target=big)
    thread.start()
    slowest = 0.0
    probes = 0
    deadline = time.monotonic() + TIMEOUT
    while thread.is_alive() and time.monotonic() < deadline:
        started = time.monotonic()
        connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
        connection.request("GET", "/api/health/live")
        assert connection.getresponse().status == 200
        connection.close()
        slowest = max(slowest, time.monotonic() - started)
        probes += 1
        time.sleep(0.05)
    thread.join(TIMEOUT)
    assert result["status"] == 200
    assert len(str(result["line"])) <= v1.MAX_HEADER_TEXT
    whole = pb.InferResponseHeader.FromString(result["body"])  # type: ignore[arg-type]
    (row,) = whole.output[0].batch_classes
    assert len(row.cls) == width and row.cls[0].idx == int(np.argmax(x[0]))
    assert probes > 3 and slowest < 1.0, (probes, slowest)
