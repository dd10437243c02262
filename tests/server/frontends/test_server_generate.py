"""Triton's generate extension over the REST front end: ``/generate`` (one JSON answer) and
``/generate_stream`` (server-sent events), JSON fields mapped to inputs and parameters as
Triton maps them, errors before the first event as JSON errors and after it as error events,
and ``/infer`` refusing a decoupled model in Triton's words."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from oipcodec.server.demo import AddSub
from oipcodec.testing import RunningServer, background
from tests.support.streaming_models import streaming_models

pytest.importorskip("uvicorn", reason="the server extra is not installed")


@pytest.fixture(scope="module", params=["oipcodec", "httptools"])
def server(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    models = [*streaming_models(), AddSub(name="generate")]
    with background(
        models, http_protocol=request.param, grpc_port=None, log_level="critical"
    ) as running:
        yield running


def _post(server: RunningServer, path: str, body: Any) -> tuple[int, str, bytes]:
    host, port = server.http_address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        connection.request("POST", path, data, {"content-type": "application/json"})
        answer = connection.getresponse()
        return answer.status, answer.getheader("content-type") or "", answer.read()
    finally:
        connection.close()


def _events(body: bytes) -> list[Any]:
    assert body.endswith(b"\n\n")
    chunks = body[:-2].split(b"\n\n")
    assert all(chunk.startswith(b"data: ") for chunk in chunks)
    return [orjson.loads(chunk[6:]) for chunk in chunks]


def test_generate_stream_answers_an_event_per_response(server: RunningServer) -> None:
    status, kind, body = _post(
        server, "/v2/models/tokens/generate_stream", {"id": "7", "N": 3, "parameters": {"k": 1}}
    )
    assert (status, kind) == (200, "text/event-stream; charset=utf-8")
    assert _events(body) == [
        {"id": "7", "model_name": "tokens", "model_version": "1", "TOKEN": f"t{i}"}
        for i in range(3)
    ]


def test_generate_answers_once(server: RunningServer) -> None:
    status, kind, body = _post(server, "/v2/models/square_int32/versions/1/generate", {"IN": 1})
    assert (status, kind) == (200, "application/json")
    assert orjson.loads(body) == {"model_name": "square_int32", "model_version": "1", "OUT": 1}


def test_generate_refuses_a_model_answering_more_than_once(server: RunningServer) -> None:
    status, _, body = _post(server, "/v2/models/square_int32/generate", {"IN": 2})
    assert status == 500
    assert "generate expects model to produce exactly 1 response" in orjson.loads(body)["error"]


def test_inputs_are_shaped_and_parameters_mapped(server: RunningServer) -> None:
    """repeat_int32: IN and DELAY flat arrays into [-1], WAIT into [1]; nested parameters
    may hold inputs too."""
    status, _, body = _post(
        server,
        "/v2/models/repeat_int32/generate_stream",
        {"IN": [4, 5], "DELAY": [0, 0], "parameters": {"WAIT": 0}},
    )
    assert status == 200
    assert [(e["IDX"], e["OUT"]) for e in _events(body)] == [(0, 4), (1, 5)]


def test_errors_before_the_first_event_are_json(server: RunningServer) -> None:
    status, kind, body = _post(server, "/v2/models/tokens/generate_stream", {"N": 3, "x": [1]})
    assert (status, kind) == (400, "application/json")
    assert "parameter 'x'" in orjson.loads(body)["error"]
    status, _, body = _post(server, "/v2/models/nope/generate_stream", {})
    assert status == 404
    status, _, body = _post(server, "/v2/models/tokens/generate_stream", {})
    assert status == 400 and "'N'" in orjson.loads(body)["error"]
    status, _, body = _post(server, "/v2/models/tokens/generate_stream", {"N": 2, "fail_at": 0})
    assert status == 400 and "token 0 refused" in orjson.loads(body)["error"]
    status, _, body = _post(server, "/v2/models/square_int32/generate", b"[1]")
    assert status == 400


def test_an_error_after_the_first_event_is_an_error_event(server: RunningServer) -> None:
    status, _, body = _post(server, "/v2/models/tokens/generate_stream", {"N": 4, "fail_at": 2})
    assert status == 200
    events = _events(body)
    assert [e.get("TOKEN") for e in events[:2]] == ["t0", "t1"]
    assert events[2] == {"error": "token 2 refused"}
    assert len(events) == 3


def test_infer_refuses_a_decoupled_model(server: RunningServer) -> None:
    request = {"inputs": [{"name": "IN", "datatype": "INT32", "shape": [1], "data": [2]}]}
    status, _, body = _post(server, "/v2/models/square_int32/infer", request)
    assert status == 501
    assert orjson.loads(body) == {
        "error": "HTTP end point doesn't support models with decoupled transaction policy"
    }


def test_a_model_that_answers_once_generates(server: RunningServer) -> None:
    status, _, body = _post(
        server, "/v2/models/add_sub/generate", {"INPUT0": [1.0, 2.0], "INPUT1": [0.5, 0.5]}
    )
    assert status == 200
    assert orjson.loads(body)["OUTPUT0"] == [1.5, 2.5]


def test_a_model_called_generate_keeps_its_routes(server: RunningServer) -> None:
    host, port = server.http_address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("GET", "/v2/models/generate")
        answer = connection.getresponse()
        assert (answer.status, orjson.loads(answer.read())["name"]) == (200, "generate")
    finally:
        connection.close()
    status, _, body = _post(server, "/v2/models/generate/generate", {"INPUT0": 1.0, "INPUT1": 2.0})
    assert (status, orjson.loads(body)["OUTPUT0"]) == (200, 3.0)
