"""The fused inference under the overload limits (a model's ``max_queued_requests``, the
server's ``--max-queued-requests`` with ``--overload-retry-after``), against the Python path
over sockets: a native and a Python server with the same models and limits, the same
requests, the same answers byte for byte and the same statistics. A ``predict`` that answers
in the call is always admitted (nothing else of its model is in flight meanwhile); an awaited
one goes through the general step's admission, so the requests over the limit are refused
with its answer (429 and ``Retry-After`` here)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from oipcodec.server import Model, TensorSpec
from oipcodec.server.http11.native import native_protocol_available
from oipcodec.server.inference.fused import Fused
from oipcodec.testing import RunningServer, background
from tests.server.http11.test_server_fastpath import TIMEOUT, _counts, _python_path, _read_answer

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytestmark = pytest.mark.skipif(
    not native_protocol_available(), reason="the native front end is not built"
)

X = (TensorSpec("X", "FP32", [1, -1]),)
Y = (TensorSpec("Y", "FP32", [1, -1]),)
BODY = orjson.dumps(
    {"inputs": [{"name": "X", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]}
)
#: Opened by the test once the requests over the limit are answered: the gated models' one
#: admitted request waits for it (the servers run in this process).
GATE = threading.Event()
#: How many gated requests reached ``predict`` (admitted), in both servers.
ENTERED = [0]


class Double(Model):
    """Y = 2 X, answered in the call."""

    name = "double"
    inputs = X
    outputs = Y

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"Y": inputs["X"] * 2}


class Gated(Double):
    """Y = 2 X by an ``async def predict`` that waits for GATE; ``limited``: a
    ``max_queued_requests`` of its own (1), else the server's applies."""

    def __init__(self, name: str, limited: bool) -> None:
        super().__init__(name)
        if limited:
            self.max_queued_requests = 1

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        ENTERED[0] += 1
        while not GATE.is_set():
            await asyncio.sleep(0.005)
        return {"Y": inputs["X"] * 2}


def models() -> list[Model]:
    return [Double(), Gated("gated", False), Gated("gated_own", True)]


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[RunningServer, RunningServer]]:
    def serving(protocol: str) -> Any:
        return background(
            models(),
            http_protocol=protocol,
            grpc_port=None,
            process=False,
            log_level="critical",
            max_queued_requests=1,
            overload_retry_after=3,
        )

    with serving("native") as native, serving("oipcodec") as python:
        yield native, python


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The models of the requests the fused inference took (answered or awaited), in order."""
    names: list[str] = []
    call = Fused.__call__

    def counted(fused: Fused, *args: Any) -> Any:
        answer = call(fused, *args)
        if answer is not None:
            names.append(fused.model.name)
        return answer

    monkeypatch.setattr(Fused, "__call__", counted)
    return names


def _request(model: str) -> bytes:
    head = f"POST /v2/models/{model}/infer HTTP/1.1\r\nhost: test\r\ncontent-length: {len(BODY)}"
    return head.encode() + b"\r\n\r\n" + BODY


def _three_at_once(server: RunningServer, model: str) -> list[bytes]:
    """Three requests to ``model`` on three connections at once: the two refused answers
    (read while the admitted one waits at the gate), then the admitted one."""
    GATE.clear()
    socks = [socket.create_connection(("127.0.0.1", server.http_port), TIMEOUT) for _ in range(3)]
    try:
        entered = ENTERED[0]
        socks[0].sendall(_request(model))
        deadline = time.monotonic() + TIMEOUT
        while ENTERED[0] == entered:  # until it is in flight: the next two meet the limit
            assert time.monotonic() < deadline, "the first request never reached predict"
            time.sleep(0.005)
        for sock in socks[1:]:
            sock.sendall(_request(model))
        refused = [_read_answer(sock)[0] for sock in socks[1:]]
        GATE.set()
        return [*refused, _read_answer(socks[0])[0]]
    finally:
        GATE.set()
        for sock in socks:
            sock.close()


def _statistics(server: RunningServer) -> list[Any]:
    answer = _python_path(server, "GET", "/v2/models/stats", b"", -1)
    return _counts(orjson.loads(answer.split(b"\r\n\r\n", 1)[1]))


@pytest.mark.parametrize("model", ["gated", "gated_own"])
def test_awaited_requests_over_the_limit_are_refused_alike(
    servers: tuple[RunningServer, RunningServer], taken: list[str], model: str
) -> None:
    native, python = servers
    got = _three_at_once(native, model)
    assert taken == [model] * 3  # every native request by the fused inference
    want = _three_at_once(python, model)
    assert got == want
    assert [answer[:12] for answer in got] == [b"HTTP/1.1 429"] * 2 + [b"HTTP/1.1 200"]
    assert b"\r\nretry-after: 3\r\n" in got[0]
    assert b"its limit (max_queued_requests 1)" in got[0]
    assert _statistics(native) == _statistics(python)


def test_a_predict_that_answers_in_the_call_is_admitted(
    servers: tuple[RunningServer, RunningServer], taken: list[str]
) -> None:
    """Under the server's limit of 1, requests pipelined on one connection and others at once
    on more connections: all answered, by the fused inference on the native server."""
    native, python = servers
    answers = []
    for server in servers:
        socks = [
            socket.create_connection(("127.0.0.1", server.http_port), TIMEOUT) for _ in range(4)
        ]
        try:
            for sock in socks:
                sock.sendall(_request("double") * 5)
            got = []
            for sock in socks:
                received = b""
                for _ in range(5):
                    answer, received = _read_answer(sock, received)
                    got.append(answer)
            answers.append(got)
        finally:
            for sock in socks:
                sock.close()
    assert taken == ["double"] * 20
    assert answers[0] == answers[1]
    assert all(answer.startswith(b"HTTP/1.1 200 ") for answer in answers[0])
    assert _statistics(native) == _statistics(python)
