"""Overload with the real tritonclient (HTTP and gRPC): Triton's queue policy of a model that
batches (``max_queue_size``, timeouts with REJECT and DELAY, the request's ``timeout`` and
``priority`` parameters, per-level policies), the bound on an unbatched model's requests, the
429 option, the refusals in the statistics and metrics, and the policy read from both
configuration formats (docs/serving.md#overload).

The server runs in a thread of this process, so each model's ``predict`` waits on a gate the
test opens, and the test watches the model's queue fill before it sends the request that
meets a limit."""

from __future__ import annotations

import http.client as httplib
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec.server import DynamicBatching, Model, TensorSpec
from oipcodec.server.inference import Pipeline
from oipcodec.server.queue_policy import QueuePolicy
from oipcodec.server.registry import ModelRegistry
from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402

WAIT = 10.0  # seconds: the most any step waits (a gate, a queue filling)


class Gated(Model):
    """FP32 [-1, 1] in, the same out; ``predict`` (a worker thread) records each row's value
    in ``seen`` once its gate is open."""

    inputs = (TensorSpec("X", "FP32", [-1, 1]),)
    outputs = (TensorSpec("Y", "FP32", [-1, 1]),)
    max_batch_size = 1
    run_in_thread = True

    def __init__(self, name: str, batching: DynamicBatching | None, **settings: Any) -> None:
        super().__init__(name)
        if batching is None:
            self.max_batch_size = 0
            self.inputs = (TensorSpec("X", "FP32", [1]),)
            self.outputs = (TensorSpec("Y", "FP32", [1]),)
        self.configure(dynamic_batching=batching)
        for key, value in settings.items():
            setattr(self, key, value)
        self.gate = threading.Event()
        self.running = threading.Event()
        self.seen: list[float] = []

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        self.running.set()
        assert self.gate.wait(WAIT)
        self.seen += [float(v) for v in inputs["X"].reshape(-1)]
        return {"Y": inputs["X"]}


def _policy(**settings: Any) -> DynamicBatching:
    return DynamicBatching(default_queue_policy=QueuePolicy(**settings))


MODELS = [
    Gated("full", _policy(max_queue_size=2)),
    Gated("timed", _policy(default_timeout_microseconds=300_000, allow_timeout_override=True)),
    Gated("fixed", _policy(default_timeout_microseconds=5_000_000)),  # no override allowed
    Gated("delayed", _policy(timeout_action="DELAY", allow_timeout_override=True)),
    Gated(
        "ranked",
        DynamicBatching(
            priority_levels=2,
            default_priority_level=2,
            priority_queue_policy={1: QueuePolicy(max_queue_size=1)},
        ),
    ),
    Gated("plain", None, max_queued_requests=1),
]


@pytest.fixture(scope="module")
def registry() -> ModelRegistry:
    return ModelRegistry(MODELS)


@pytest.fixture(scope="module")
def server(registry: ModelRegistry) -> Iterator[RunningServer]:
    with background(registry, process=False, log_level="critical") as running:
        yield running


@pytest.fixture(scope="module")
def http(server: RunningServer) -> Iterator[Any]:
    client = httpclient.InferenceServerClient(server.http_address, concurrency=8)
    yield client
    client.close()


@pytest.fixture(scope="module")
def grpc(server: RunningServer) -> Iterator[Any]:
    client = grpcclient.InferenceServerClient(server.grpc_address)
    yield client
    client.close()


@pytest.fixture()
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(8) as executor:
        yield executor


def _model(name: str) -> Gated:
    return next(m for m in MODELS if m.name == name)


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    for model in MODELS:
        model.gate.clear()
        model.running.clear()
        model.seen.clear()
    yield
    for model in MODELS:
        model.gate.set()  # nothing stays blocked after a failed test


def _inputs(module: Any, value: float, batched: bool = True) -> list[Any]:
    shape = [1, 1] if batched else [1]
    tensor = module.InferInput("X", shape, "FP32")
    tensor.set_data_from_numpy(np.full(shape, value, np.float32))
    return [tensor]


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


def _queued(registry: ModelRegistry, name: str) -> int:
    """Requests waiting in the model's queue (not the batch that runs)."""
    batcher = Pipeline.of(registry)._batchers.get(id(_model(name)))
    return 0 if batcher is None else len(batcher)


def _infer(address: str, name: str, value: float, batched: bool, options: Any) -> Any:
    # A client of its own: tritonclient.http's (gevent) serves the thread that made it only.
    client = httpclient.InferenceServerClient(address)
    try:
        return client.infer(name, _inputs(httpclient, value, batched), **options)
    finally:
        client.close()


def _send(
    pool: ThreadPoolExecutor,
    http: Any,
    name: str,
    value: float,
    batched: bool = True,
    **options: Any,
) -> Future:
    """``http.infer`` in a thread of ``pool``, with a client for the same server."""
    return pool.submit(_infer, http._parsed_url.netloc, name, value, batched, options)


def _fill(
    pool: ThreadPoolExecutor, http: Any, registry: ModelRegistry, name: str, values: list[dict]
) -> list[Future]:
    """One request that runs (its predict held at the gate), then one queued per entry of
    ``values`` (the request's value and options), in that order."""
    model = _model(name)
    sent = [_send(pool, http, name, 0.0)]
    assert model.running.wait(WAIT)
    for index, entry in enumerate(values):
        options = dict(entry)
        sent.append(_send(pool, http, name, options.pop("value"), **options))
        _until(lambda index=index: _queued(registry, name) == index + 1)
    return sent


def _refused(call: Callable[[], Any]) -> tuple[InferenceServerException, float]:
    started = time.perf_counter()
    with pytest.raises(InferenceServerException) as caught:
        call()
    return caught.value, time.perf_counter() - started


# ----------------------------------------------------------------------------- max_queue_size


def test_a_full_queue_refuses_at_once_with_tritons_answer(
    registry: ModelRegistry, http: Any, grpc: Any, pool: ThreadPoolExecutor
) -> None:
    before = http.get_inference_statistics("full")["model_stats"][0]["inference_stats"]
    sent = _fill(pool, http, registry, "full", [{"value": 1.0}, {"value": 2.0}])
    error, seconds = _refused(lambda: http.infer("full", _inputs(httpclient, 3.0)))
    assert error.status() == "503"
    assert error.message().startswith("Exceeds maximum queue size")
    assert "model 'full'" in error.message()
    assert seconds < 1.0  # at once, not after the queue moved
    error, _ = _refused(lambda: grpc.infer("full", _inputs(grpcclient, 3.0)))
    assert error.status() == "StatusCode.UNAVAILABLE"
    assert error.message().startswith("Exceeds maximum queue size")
    _model("full").gate.set()
    assert [float(f.result(WAIT).as_numpy("Y")[0, 0]) for f in sent] == [0.0, 1.0, 2.0]
    assert _model("full").seen == [0.0, 1.0, 2.0]  # the refused ones never ran
    # Counted as failures, in the statistics and the metrics.
    after = http.get_inference_statistics("full")["model_stats"][0]["inference_stats"]
    assert int(after["fail"]["count"]) - int(before["fail"]["count"]) == 2
    assert int(after["success"]["count"]) - int(before["success"]["count"]) == 3


def test_refusals_show_in_the_metrics(
    server: RunningServer, registry: ModelRegistry, http: Any, pool: ThreadPoolExecutor
) -> None:
    def failures() -> dict[str, float]:
        connection = httplib.HTTPConnection(server.host, server.http_port, timeout=WAIT)
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
        connection.close()
        return {
            line.split('reason="')[1].split('"')[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("nv_inference_request_failure{") and 'model="full"' in line
        }

    before = failures()
    sent = _fill(pool, http, registry, "full", [{"value": 1.0}, {"value": 2.0}])
    _refused(lambda: http.infer("full", _inputs(httpclient, 3.0)))
    _model("full").gate.set()
    for future in sent:
        future.result(WAIT)
    after = failures()
    assert {reason: after[reason] - before.get(reason, 0) for reason in after} == {
        "REJECTED": 1,  # Triton's reason for a refusal of its queue
        "CANCELED": 0,
        "BACKEND": 0,
        "OTHER": 0,
    }


# ----------------------------------------------------------------------------- timeouts


def test_a_request_whose_time_in_the_queue_ran_out_is_answered_without_running(
    registry: ModelRegistry, http: Any, grpc: Any, pool: ThreadPoolExecutor
) -> None:
    model = _model("timed")
    running = _send(pool, http, "timed", 0.0)
    assert model.running.wait(WAIT)
    error, seconds = _refused(lambda: http.infer("timed", _inputs(httpclient, 1.0)))
    assert error.status() == "503"
    assert error.message().startswith("Request timeout expired")
    assert 0.25 < seconds < 2.0  # the default 300 ms, while predict is still held
    # The request's own timeout (microseconds) replaces the default: allow_timeout_override.
    error, seconds = _refused(lambda: grpc.infer("timed", _inputs(grpcclient, 2.0), timeout=20_000))
    assert error.status() == "StatusCode.UNAVAILABLE"
    assert error.message().startswith("Request timeout expired")
    assert seconds < 0.25
    assert not running.done()  # the model was busy the whole time
    model.gate.set()
    running.result(WAIT)
    assert model.seen == [0.0]  # neither timed-out request ran


def test_a_request_timeout_is_ignored_without_allow_timeout_override(
    registry: ModelRegistry, http: Any, pool: ThreadPoolExecutor
) -> None:
    sent = _fill(pool, http, registry, "fixed", [{"value": 1.0, "timeout": 1}])
    time.sleep(0.05)  # far past the request's 1 microsecond
    assert _queued(registry, "fixed") == 1
    _model("fixed").gate.set()
    assert [float(f.result(WAIT).as_numpy("Y")[0, 0]) for f in sent] == [0.0, 1.0]


def test_delay_moves_a_timed_out_request_behind_the_others(
    registry: ModelRegistry, http: Any, pool: ThreadPoolExecutor
) -> None:
    model = _model("delayed")
    running = _send(pool, http, "delayed", 0.0)
    assert model.running.wait(WAIT)
    late = _send(pool, http, "delayed", 1.0, timeout=1_000)  # its time runs out at once
    _until(lambda: _queued(registry, "delayed") == 1)
    time.sleep(0.01)
    others = [_send(pool, http, "delayed", 2.0)]
    _until(lambda: _queued(registry, "delayed") == 2)
    others.append(_send(pool, http, "delayed", 3.0))
    _until(lambda: _queued(registry, "delayed") == 3)
    model.gate.set()
    for future in [running, late, *others]:
        future.result(WAIT)  # delayed, not refused
    assert model.seen == [0.0, 2.0, 3.0, 1.0]


# ----------------------------------------------------------------------------- priorities


def test_priority_levels_leave_the_queue_first_level_first(
    registry: ModelRegistry, http: Any, grpc: Any, pool: ThreadPoolExecutor
) -> None:
    # Level 2 (the default, also for a priority that names no level), then level 1.
    sent = _fill(
        pool,
        http,
        registry,
        "ranked",
        [
            {"value": 1.0},
            {"value": 2.0, "priority": 2},
            {"value": 3.0, "priority": 7},
            {"value": 4.0, "priority": 1},
        ],
    )
    # Level 1 holds one request (its policy's max_queue_size); level 2 has no limit.
    error, _ = _refused(lambda: grpc.infer("ranked", _inputs(grpcclient, 5.0), priority=1))
    assert error.status() == "StatusCode.UNAVAILABLE"
    assert "Exceeds maximum queue size" in error.message()
    assert "priority level 1" in error.message()
    sent.append(_send(pool, http, "ranked", 6.0))
    _until(lambda: _queued(registry, "ranked") == 5)
    _model("ranked").gate.set()
    for future in sent:
        future.result(WAIT)
    assert _model("ranked").seen == [0.0, 4.0, 1.0, 2.0, 3.0, 6.0]


def test_the_server_lists_tritons_schedule_policy_extension(http: Any, grpc: Any) -> None:
    assert "schedule_policy" in http.get_server_metadata()["extensions"]
    assert "schedule_policy" in grpc.get_server_metadata(as_json=True)["extensions"]


def test_a_priority_that_is_no_int_is_refused_naming_it(server: RunningServer) -> None:
    # tritonclient refuses to send one (a reserved parameter): a raw request.
    body = {
        "inputs": [{"name": "X", "shape": [1, 1], "datatype": "FP32", "data": [1]}],
        "parameters": {"priority": "high"},
    }
    status, _, error = _post(server, "/v2/models/ranked/infer", body)
    assert status == 400
    assert "parameter 'priority'" in error and "'high'" in error


def _post(server: RunningServer, path: str, body: Any) -> tuple[int, dict[str, str], str]:
    """A JSON request: the answer's status, headers and error message."""
    connection = httplib.HTTPConnection(server.host, server.http_port, timeout=WAIT)
    try:
        connection.request("POST", path, json.dumps(body))
        answer = connection.getresponse()
        document = json.loads(answer.read())
        return answer.status, dict(answer.getheaders()), document.get("error", "")
    finally:
        connection.close()


# ----------------------------------------------------------------------------- unbatched


def test_an_unbatched_model_refuses_past_max_queued_requests(
    http: Any, grpc: Any, pool: ThreadPoolExecutor
) -> None:
    model = _model("plain")
    running = _send(pool, http, "plain", 0.0, batched=False)
    assert model.running.wait(WAIT)
    error, seconds = _refused(lambda: http.infer("plain", _inputs(httpclient, 1.0, False)))
    assert error.status() == "503"
    assert error.message().startswith("Exceeds maximum queue size")
    assert "max_queued_requests 1" in error.message()
    assert seconds < 1.0  # at once
    error, _ = _refused(lambda: grpc.infer("plain", _inputs(grpcclient, 1.0, False)))
    assert error.status() == "StatusCode.UNAVAILABLE"
    model.gate.set()
    running.result(WAIT)
    assert http.infer("plain", _inputs(httpclient, 2.0, False)).as_numpy("Y").tolist() == [2.0]


# ----------------------------------------------------------------------------- 429


@pytest.mark.grpc
def test_overload_retry_after_answers_429_with_retry_after(pool: ThreadPoolExecutor) -> None:
    model = Gated("busy", None, max_queued_requests=1)
    with background([model], process=False, log_level="critical", overload_retry_after=3) as up:
        http = httpclient.InferenceServerClient(up.http_address)
        grpc = grpcclient.InferenceServerClient(up.grpc_address)
        try:
            running = _send(pool, http, "busy", 0.0, batched=False)
            assert model.running.wait(WAIT)
            error, _ = _refused(lambda: http.infer("busy", _inputs(httpclient, 1.0, False)))
            assert error.status() == "429"
            assert error.message().startswith("Exceeds maximum queue size")
            body = {"inputs": [{"name": "X", "shape": [1], "datatype": "FP32", "data": [1]}]}
            status, headers, message = _post(up, "/v2/models/busy/infer", body)
            assert status == 429
            assert {k.lower(): v for k, v in headers.items()}["retry-after"] == "3"
            assert message.startswith("Exceeds maximum queue size")
            error, _ = _refused(lambda: grpc.infer("busy", _inputs(grpcclient, 1.0, False)))
            assert error.status() == "StatusCode.UNAVAILABLE"  # gRPC has no 429
            model.gate.set()
            running.result(WAIT)
        finally:
            model.gate.set()
            http.close()
            grpc.close()


# ----------------------------------------------------------------------------- configuration

MODEL_PY = """
import numpy as np
from oipcodec.server import Model

class Echo(Model):
    def predict(self, inputs, parameters):
        return {"Y": inputs["X"]}
"""

PBTXT = """
max_batch_size: 4
input [ { name: "X", data_type: TYPE_FP32, dims: [ 1 ] } ]
output [ { name: "Y", data_type: TYPE_FP32, dims: [ 1 ] } ]
dynamic_batching {
  priority_levels: 3 default_priority_level: 2
  default_queue_policy { max_queue_size: 8 timeout_action: DELAY
                         default_timeout_microseconds: 5000 allow_timeout_override: true }
  priority_queue_policy { key: 1 value { max_queue_size: 2 } }
}
"""

JSON_CONFIG = {
    "max_batch_size": 4,
    "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [1]}],
    "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [1]}],
    "dynamic_batching": {
        "priority_levels": "3",
        "default_priority_level": "2",
        "default_queue_policy": {
            "max_queue_size": 8,
            "timeout_action": "DELAY",
            "default_timeout_microseconds": "5000",
            "allow_timeout_override": True,
        },
        "priority_queue_policy": {"1": {"max_queue_size": 2}},
    },
}


def _repository(root: Path, name: str, filename: str, text: str) -> None:
    (root / name / "1").mkdir(parents=True)
    (root / name / "1" / "model.py").write_text(MODEL_PY)
    (root / name / filename).write_text(text)


@pytest.mark.grpc
def test_the_queue_policy_is_read_from_both_configuration_formats(tmp_path: Path) -> None:
    _repository(tmp_path, "text", "config.pbtxt", PBTXT)
    _repository(tmp_path, "json", "config.json", json.dumps(JSON_CONFIG))
    bad = dict(JSON_CONFIG, dynamic_batching={"default_queue_policy": {"timeout_action": "DROP"}})
    _repository(tmp_path, "bad_action", "config.json", json.dumps(bad))
    _repository(tmp_path, "bad_level", "config.pbtxt", PBTXT.replace("default_priority_level: 2",
                                                                        "default_priority_level: 4"))  # fmt: skip
    want = {
        "priority_levels": 3,
        "default_priority_level": 2,
        "default_queue_policy": {
            "timeout_action": "DELAY",
            "default_timeout_microseconds": 5000,
            "allow_timeout_override": True,
            "max_queue_size": 8,
        },
        "priority_queue_policy": {
            "1": {
                "timeout_action": "REJECT",
                "default_timeout_microseconds": 0,
                "allow_timeout_override": False,
                "max_queue_size": 2,
            }
        },
    }
    with background(model_repository=str(tmp_path), log_level="critical") as running:
        http = httpclient.InferenceServerClient(running.http_address)
        grpc = grpcclient.InferenceServerClient(running.grpc_address)
        try:
            for name in ("text", "json"):
                shown = http.get_model_config(name)["dynamic_batching"]
                assert {key: shown[key] for key in want} == want, name
                message = grpc.get_model_config(name).config.dynamic_batching
                assert message.default_queue_policy.max_queue_size == 8
                assert message.priority_queue_policy[1].max_queue_size == 2
                assert (
                    http.infer(name, _inputs(httpclient, 1.0), priority=1).as_numpy("Y")[0, 0] == 1
                )
            index = {m["name"]: m for m in http.get_model_repository_index()}
            assert "timeout_action field" in index["bad_action"]["reason"]  # protobuf's words
            assert (
                "default_priority_level is one of the levels 1 to 3"
                in (index["bad_level"]["reason"])
            )
        finally:
            http.close()
            grpc.close()


def test_a_policy_out_of_triton_rules_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"timeout_action is one of \['REJECT', 'DELAY'\]"):
        QueuePolicy(timeout_action="DROP")
    with pytest.raises(ValueError, match="max_queue_size is an int >= 0, got -1"):
        QueuePolicy(max_queue_size=-1)
    with pytest.raises(ValueError, match="default_priority_level is one of the levels 1 to 2"):
        DynamicBatching(priority_levels=2)
    with pytest.raises(ValueError, match="priority_queue_policy names level 3"):
        DynamicBatching(priority_levels=2, default_priority_level=1,
                        priority_queue_policy={3: QueuePolicy()})  # fmt: skip
    with pytest.raises(ValueError, match="need priority_levels > 0"):
        DynamicBatching(default_priority_level=1)
    with pytest.raises(ValueError, match="'plain': max_queued_requests is an int >= 0"):
        Gated("plain", None, max_queued_requests=-1)._check_config()


def test_the_command_line_sets_the_overload_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    import oipcodec.cli
    from oipcodec.server import ServerConfig

    given: list[ServerConfig] = []
    monkeypatch.setattr(oipcodec.cli, "_serve_checked", lambda config: given.append(config) or 0)
    argv = ["serve", "--max-queued-requests", "8", "--overload-retry-after", "2"]
    assert oipcodec.cli.main(argv) == 0
    assert (given[0].max_queued_requests, given[0].overload_retry_after) == (8, 2)
    assert oipcodec.cli.main(["serve"]) == 0
    assert (given[1].max_queued_requests, given[1].overload_retry_after) == (0, None)
    with pytest.raises(ValueError, match="max_queued_requests and overload_retry_after"):
        ServerConfig(overload_retry_after=-1)
