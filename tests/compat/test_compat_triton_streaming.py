"""Decoupled models against the real Triton server, side by side: Triton's Python-backend
``square_int32`` (its decoupled example, a thread sending through the response sender) in the
real tritonserver, and ``oipcodec serve``'s demo ``square_int32``, asked the same requests.

Over gRPC ModelStreamInfer (the real tritonclient's ``start_stream`` /
``async_stream_infer``): the same responses per request id, the same ``triton_final_response``
flags, the same empty final response, the same errors (oipcodec's messages say more: each
test checks the part Triton says). Over REST: the same ``generate_stream`` events and
``generate`` answers, and the same refusals of ``/infer``. Where the two differ on purpose, the
test says so (docs/streaming.md#the-real-triton-server). perf_analyzer ``--streaming``
measures both, its command unchanged.

Skipped without the Triton environment (``OIPCODEC_TRITON_HOME``, tools/triton_env.sh).
"""

from __future__ import annotations

import contextlib
import json
import queue
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.peers import require_peer
from tests.support.serve_process import run_serve
from tests.support.triton import perf_analyzer, square_int32_repository, triton_env, tritonserver

grpcclient = require_peer("tritonclient.grpc")

TIMEOUT = 30.0
#: The request sent last on each scenario's stream: a stream is read until its empty final
#: response has come (every request before it was read by then).
END = "end"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, str]]]:
    """``{"triton": {"http", "grpc"}, "oipcodec": {...}}``, both serving square_int32."""
    triton_env()  # skips without the environment before anything starts
    root = tmp_path_factory.mktemp("triton-streaming")
    repository = square_int32_repository(root / "repository")
    with (
        tritonserver(repository, root / "triton.log") as triton,
        contextlib.contextmanager(run_serve)(root, statistics=True) as ours,
    ):
        yield {"triton": {"http": triton.http, "grpc": triton.grpc}, "oipcodec": ours}


def _int32(name: str, values: list[int], datatype: str = "INT32") -> Any:
    array = np.array(values, dtype=np.float32 if datatype == "FP32" else np.int32)
    tensor = grpcclient.InferInput(name, list(array.shape), datatype)
    tensor.set_data_from_numpy(array)
    return tensor


def _square(n: int, **request: Any) -> dict[str, Any]:
    return {"model_name": "square_int32", "inputs": [_int32("IN", [n])], **request}


def _stream(
    address: str, requests: list[dict[str, Any]], count: int
) -> tuple[dict[str, list[Any]], list[str]]:
    """``requests`` on one stream, then the END request: each request id's responses in
    order, as (model name, version, outputs, final flag), and the stream's errors, read
    until the final responses asked for and ``count`` responses in all have come."""
    client = grpcclient.InferenceServerClient(address)
    answers: queue.Queue[tuple[Any, Any]] = queue.Queue()
    client.start_stream(callback=lambda result, error: answers.put((result, error)))
    try:
        for request in [*requests, _square(1, request_id=END, enable_empty_final_response=True)]:
            client.async_stream_infer(**request)
        by_id: dict[str, list[Any]] = {}
        errors: list[str] = []
        ending = {END} | {r["request_id"] for r in requests if r.get("enable_empty_final_response")}
        seen = 0
        while ending or seen < count:
            result, error = answers.get(timeout=TIMEOUT)
            if error is not None:
                errors.append(str(error))
                continue
            response = result.get_response()
            seen += response.id != END
            outputs = {o.name: result.as_numpy(o.name).tolist() for o in response.outputs}
            final = response.parameters["triton_final_response"].bool_param
            if final:
                ending.discard(response.id)
            by_id.setdefault(response.id, []).append(
                (response.model_name, response.model_version, outputs, final)
            )
    finally:
        client.stop_stream()
        client.close()
    assert answers.empty()
    assert by_id.pop(END) == [
        ("square_int32", "1", {"OUT": [1]}, False),
        ("square_int32", "", {}, True),
    ]
    return by_id, errors


def _both(servers: dict[str, dict[str, str]], requests: list[dict[str, Any]], count: int) -> Any:
    """The same requests' answers from each server: (Triton's, oipcodec's)."""
    return tuple(_stream(servers[name]["grpc"], requests, count) for name in ("triton", "oipcodec"))


def _yielded(n: int) -> tuple[str, str, dict[str, list[int]], bool]:
    return ("square_int32", "1", {"OUT": [n]}, False)


EMPTY_FINAL = ("square_int32", "", {}, True)


@pytest.mark.parametrize(
    ("requests", "expected"),
    [
        ([_square(3, request_id="a")], {"a": [_yielded(3)] * 3}),
        (
            [_square(2, request_id="a", enable_empty_final_response=True)],
            {"a": [_yielded(2)] * 2 + [EMPTY_FINAL]},
        ),
        ([_square(0, request_id="a")], {}),
        ([_square(0, request_id="a", enable_empty_final_response=True)], {"a": [EMPTY_FINAL]}),
        ([_square(-2, request_id="a", enable_empty_final_response=True)], {"a": [EMPTY_FINAL]}),
        (
            [_square(k, request_id=f"q{k}", enable_empty_final_response=True) for k in (1, 2, 3)],
            {f"q{k}": [_yielded(k)] * k + [EMPTY_FINAL] for k in (1, 2, 3)},
        ),
    ],
    ids=["three", "empty-final", "none", "none-final", "negative", "multiplexed"],
)
def test_model_stream_infer_answers_as_triton(
    servers: dict[str, dict[str, str]], requests: list[dict[str, Any]], expected: Any
) -> None:
    triton, ours = _both(servers, requests, sum(map(len, expected.values())))
    assert triton == ((expected, [])), "the real Triton server answered otherwise"
    assert ours == triton


@pytest.mark.parametrize(
    ("request_", "triton_says", "oipcodec_also_says"),
    [
        (
            {"model_name": "nope", "inputs": [_int32("IN", [1])]},
            "Request for unknown model: 'nope' is not found",
            "this server serves",
        ),
        (
            _square(1, model_version="2"),
            "Request for unknown model: 'square_int32' version 2 is not found",
            "",
        ),
        (
            {"model_name": "square_int32", "inputs": [_int32("X", [1])]},
            "unexpected inference input 'X' for model 'square_int32'",
            "its inputs are ['IN']",
        ),
        (
            _square(1, outputs=[grpcclient.InferRequestedOutput("NOPE")]),
            "unexpected inference output 'NOPE' for model 'square_int32'",
            "its outputs are ['OUT']",
        ),
    ],
    ids=["unknown-model", "unknown-version", "unknown-input", "unknown-output"],
)
def test_errors_in_the_stream_as_triton(
    servers: dict[str, dict[str, str]], request_: Any, triton_says: str, oipcodec_also_says: str
) -> None:
    (triton_answers, triton_errors), (answers, errors) = _both(servers, [request_], 0)
    assert triton_answers == answers == {}
    assert triton_errors == [triton_says]
    assert len(errors) == 1 and errors[0].startswith(triton_says)
    assert oipcodec_also_says in errors[0]


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ([_int32("IN", [1], "FP32")], ["'IN'", "FP32", "INT32"]),
        ([_int32("IN", [1, 2])], ["'IN'", "[2]", "[1]"]),
    ],
    ids=["datatype", "shape"],
)
def test_bad_inputs_are_errors_in_the_stream_on_both(
    servers: dict[str, dict[str, str]], inputs: list[Any], words: list[str]
) -> None:
    """Triton and oipcodec word these two otherwise; both name the input, what it has and
    what the model expects."""
    answers = _both(servers, [{"model_name": "square_int32", "inputs": inputs}], 0)
    for by_id, errors in answers:
        assert by_id == {} and len(errors) == 1
        assert all(word in errors[0] for word in words), errors[0]


def test_model_infer_refuses_the_decoupled_model_as_triton(
    servers: dict[str, dict[str, str]],
) -> None:
    refusals = []
    for name in ("triton", "oipcodec"):
        client = grpcclient.InferenceServerClient(servers[name]["grpc"])
        with pytest.raises(Exception) as raised:
            client.infer("square_int32", [_int32("IN", [1])])
        client.close()
        refusals.append((raised.value.status(), raised.value.message()))
    assert refusals[0] == refusals[1]
    assert refusals[0] == (
        "StatusCode.UNIMPLEMENTED",
        "ModelInfer RPC doesn't support models with decoupled transaction policy",
    )


def _post(address: str, route: str, body: bytes) -> tuple[int, str]:
    request = urllib.request.Request(
        f"http://{address}/v2/models/square_int32/{route}", data=body, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _events(text: str) -> list[Any]:
    """A ``text/event-stream`` body's ``data:`` events, parsed (key order aside: Triton
    writes the outputs first)."""
    assert text == "" or text.endswith("\n\n"), text
    return [json.loads(event.removeprefix("data: ")) for event in text.split("\n\n") if event]


@pytest.mark.parametrize(
    ("route", "body", "expected"),
    [
        ("generate_stream", {"IN": 3}, [{"model_name": "square_int32", "model_version": "1", "OUT": 3}] * 3),
        ("generate_stream", {"IN": 0}, []),
        (
            "generate_stream",
            {"IN": 2, "id": "a", "temperature": 3},
            [{"id": "a", "model_name": "square_int32", "model_version": "1", "OUT": 2}] * 2,
        ),
        ("generate", {"IN": 1}, [{"model_name": "square_int32", "model_version": "1", "OUT": 1}]),
    ],
    ids=["stream-three", "stream-none", "stream-id-and-parameter", "generate-one"],
)  # fmt: skip
def test_generate_routes_answer_as_triton(
    servers: dict[str, dict[str, str]], route: str, body: Any, expected: list[Any]
) -> None:
    answers = []
    for name in ("triton", "oipcodec"):
        status, text = _post(servers[name]["http"], route, json.dumps(body).encode())
        answers.append(
            (status, _events(text) if route == "generate_stream" else [json.loads(text)])
        )
    assert answers[0] == (200, expected), "the real Triton server answered otherwise"
    assert answers[1] == answers[0]


@pytest.mark.parametrize(
    ("route", "body", "status"),
    [
        ("generate_stream", b'{"IN": [1, 2]}', 400),
        ("infer", b'{"inputs": [{"name": "IN", "datatype": "INT32", "shape": [1], "data": [1]}]}', 501),
    ],
    ids=["shape", "infer"],
)  # fmt: skip
def test_rest_refusals_as_triton(
    servers: dict[str, dict[str, str]], route: str, body: bytes, status: int
) -> None:
    answers = [_post(servers[name]["http"], route, body) for name in ("triton", "oipcodec")]
    assert answers[0][0] == status
    assert [(code, json.loads(text)) for code, text in answers[1:]] == [
        (answers[0][0], json.loads(answers[0][1]))
    ]


@pytest.mark.parametrize("n", [0, 3])
def test_generate_refuses_other_than_one_response_in_tritons_words(
    servers: dict[str, dict[str, str]], n: int
) -> None:
    """The same error; Triton answers it with status 200 (the status line is written before
    the model has answered), oipcodec with 500 (it waits for the model's one response)."""
    triton, ours = (_post(servers[name]["http"], "generate", b'{"IN": %d}' % n)
                    for name in ("triton", "oipcodec"))  # fmt: skip
    refusal = (
        "generate expects model to produce exactly 1 response, use generate stream for model "
        "that generates various number of responses"
    )
    assert json.loads(triton[1]) == json.loads(ours[1]) == {"error": refusal}
    assert (triton[0], ours[0]) == (200, 500)


def _figure(report: str, label: str) -> float:
    """A figure of perf_analyzer's report: the number after ``label`` (``Throughput:``...)."""
    line = next(line for line in report.splitlines() if line.strip().startswith(label))
    return float(line.split(label, 1)[1].split()[0])


def test_perf_analyzer_streaming_measures_both(
    servers: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    """The same perf_analyzer command on each server: IN = 4 (its random data would ask for
    billions of responses, on either server), 4 responses per request counted, the first
    one's latency measured, the server's side read from its statistics."""
    data = tmp_path / "in.json"
    data.write_text(json.dumps({"data": [{"IN": {"content": [4], "shape": [1]}}]}))
    for name in ("triton", "oipcodec"):
        report = perf_analyzer(
            ["-m", "square_int32", "-u", servers[name]["grpc"], "-i", "grpc", "--streaming",
             "--input-data", str(data), "--measurement-mode", "count_windows",
             "--measurement-request-count", "50", "--stability-percentage", "1000",
             "--concurrency-range", "2"],
        )  # fmt: skip
        assert "Detected decoupled model" in report, report
        requests = _figure(report, "Throughput:")
        assert requests > 0 and _figure(report, "Response Throughput:") == pytest.approx(
            4 * requests, rel=0.1
        ), report
        assert _figure(report, "Successful request count:") > 0, report
