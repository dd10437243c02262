"""Decoupled models over gRPC ModelStreamInfer, seen from the real tritonclient unchanged:
0..n responses per request, ``triton_final_response``, ``enable_empty_final_response``,
errors in the stream's ``error_message``, requests multiplexed on one stream by id, and the
unary ModelInfer refused as Triton refuses it."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.testing import RunningServer, background
from tests.support.streaming_models import streaming_models

grpcclient = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402

TIMEOUT = 30.0


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(streaming_models(), log_level="critical") as running:
        yield running


@pytest.fixture
def client(server: RunningServer) -> Iterator[Any]:
    client = grpcclient.InferenceServerClient(server.grpc_address)
    yield client
    client.stop_stream()
    client.close()


def _int32(name: str, values: list[int], datatype: str = "INT32") -> Any:
    array = np.array(values, dtype=np.int32 if datatype == "INT32" else np.uint32)
    tensor = grpcclient.InferInput(name, list(array.shape), datatype)
    tensor.set_data_from_numpy(array)
    return tensor


def _collect(client: Any, requests: list[dict[str, Any]], expect: int) -> list[Any]:
    """Send ``requests`` on one stream; the ``expect`` callbacks' (result, error) pairs."""
    answers: queue.Queue[tuple[Any, Any]] = queue.Queue()
    client.start_stream(callback=lambda result, error: answers.put((result, error)))
    for request in requests:
        client.async_stream_infer(**request)
    got = [answers.get(timeout=TIMEOUT) for _ in range(expect)]
    client.stop_stream()
    assert answers.empty()
    return got


def _final(result: Any) -> bool:
    return result.get_response().parameters["triton_final_response"].bool_param


def test_square_int32_answers_n_responses(client: Any) -> None:
    got = _collect(client, [{"model_name": "square_int32", "inputs": [_int32("IN", [4])]}], 4)
    assert [error for _, error in got] == [None] * 4
    assert [result.as_numpy("OUT").tolist() for result, _ in got] == [[4]] * 4
    assert [_final(result) for result, _ in got] == [False] * 4


def test_the_empty_final_response_when_asked(client: Any) -> None:
    request = {
        "model_name": "square_int32",
        "inputs": [_int32("IN", [2])],
        "request_id": "r1",
        "enable_empty_final_response": True,
    }
    got = _collect(client, [request], 3)
    assert [_final(result) for result, _ in got] == [False, False, True]
    last = got[-1][0].get_response()
    assert (last.id, last.model_name, last.model_version, list(last.outputs)) == (
        "r1",
        "square_int32",
        "",  # as Triton: the model's name, not its version
        [],
    )


def test_zero_responses_and_only_the_final_one(client: Any) -> None:
    request = {"model_name": "square_int32", "inputs": [_int32("IN", [0])]}
    got = _collect(client, [{**request, "enable_empty_final_response": True}], 1)
    assert _final(got[0][0]) and list(got[0][0].get_response().outputs) == []


def test_requests_multiplexed_by_id(client: Any) -> None:
    requests = [
        {
            "model_name": "repeat_int32",
            "inputs": [
                _int32("IN", [10 * k + i for i in range(3)]),
                _int32("DELAY", [5 * (3 - k)] * 3, "UINT32"),
                _int32("WAIT", [0], "UINT32"),
            ],
            "request_id": f"req{k}",
        }
        for k in range(3)
    ]
    got = _collect(client, requests, 9)
    by_id: dict[str, list[tuple[int, int]]] = {}
    for result, error in got:
        assert error is None
        rid = result.get_response().id
        by_id.setdefault(rid, []).append(
            (int(result.as_numpy("IDX")[0]), int(result.as_numpy("OUT")[0]))
        )
    assert by_id == {f"req{k}": [(i, 10 * k + i) for i in range(3)] for k in range(3)}
    # side by side: the request with the shortest delays (sent last) is not answered last
    assert got[0][0].get_response().id != "req0"


def test_an_error_mid_stream_is_the_streams_error_message(client: Any) -> None:
    request = {
        "model_name": "tokens",
        "inputs": [_int32("N", [5])],
        "parameters": {"fail_at": 2},
    }
    got = _collect(client, [request], 3)
    assert [r.as_numpy("TOKEN").tolist() for r, _ in got[:2]] == [[b"t0"], [b"t1"]]
    result, error = got[2]
    assert result is None and "token 2 refused" in str(error)


def test_a_sync_generator_in_a_thread(client: Any) -> None:
    got = _collect(client, [{"model_name": "sync_tokens", "inputs": [_int32("N", [3])]}], 3)
    assert [r.as_numpy("TOKEN").tolist() for r, _ in got] == [[b"t0"], [b"t1"], [b"t2"]]


def test_a_model_that_answers_once_is_marked_final(client: Any) -> None:
    """Not decoupled: one response per request, in order, marked final (as Triton); a
    decoupled model's yielded response is not."""
    a = grpcclient.InferInput("INPUT0", [2], "FP32")
    a.set_data_from_numpy(np.array([1, 2], dtype=np.float32))
    b = grpcclient.InferInput("INPUT1", [2], "FP32")
    b.set_data_from_numpy(np.array([3, 5], dtype=np.float32))
    requests = [{"model_name": "add_sub", "inputs": [a, b], "request_id": str(k)} for k in range(5)]
    got = _collect(client, requests, 5)
    assert [r.get_response().id for r, _ in got] == ["0", "1", "2", "3", "4"]
    assert all(_final(r) for r, _ in got)
    assert got[0][0].as_numpy("OUTPUT0").tolist() == [4, 7]
    once = _collect(client, [{"model_name": "square_int32", "inputs": [_int32("IN", [1])]}], 1)
    assert not _final(once[0][0])


def test_unary_model_infer_refuses_a_decoupled_model(client: Any) -> None:
    with pytest.raises(InferenceServerException) as caught:
        client.infer("square_int32", [_int32("IN", [2])])
    assert caught.value.status() == "StatusCode.UNIMPLEMENTED"
    assert "ModelInfer RPC doesn't support models with decoupled transaction policy" in str(
        caught.value
    )


def test_the_config_says_decoupled(client: Any) -> None:
    config = client.get_model_config("square_int32").config
    assert config.model_transaction_policy.decoupled is True


def test_a_stream_counts_once_in_the_statistics(client: Any) -> None:
    """As Triton counts a decoupled request: one success per request, whatever its count of
    responses."""

    def successes() -> int:
        stats = client.get_inference_statistics("square_int32", as_json=True)
        return int(stats["model_stats"][0]["inference_stats"]["success"].get("count", 0))

    before = successes()
    _collect(client, [{"model_name": "square_int32", "inputs": [_int32("IN", [3])]}], 3)
    deadline = time.monotonic() + 5
    while successes() != before + 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert successes() == before + 1
