"""Model configuration and inference statistics (Triton's extensions), driven by the real
tritonclient over HTTP and gRPC against a server in a subprocess; and the model API's
``max_batch_size`` / ``config_parameters``."""

from __future__ import annotations

import http.client as httplib
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec.server import Model, TensorSpec
from oipcodec.testing import RunningServer, background
from tests.support.server_models import all_models

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402

TIMEOUT = 30.0


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(all_models(), log_level="critical") as running:
        yield running


@pytest.fixture(scope="module")
def http(server: RunningServer) -> Iterator[Any]:
    client = httpclient.InferenceServerClient(
        server.http_address, connection_timeout=TIMEOUT, network_timeout=TIMEOUT
    )
    yield client
    client.close()


@pytest.fixture(scope="module")
def grpc(server: RunningServer) -> Iterator[Any]:
    client = grpcclient.InferenceServerClient(server.grpc_address)
    yield client
    client.close()


def _get(server: RunningServer, path: str) -> tuple[int, Any]:
    conn = httplib.HTTPConnection(server.host, server.http_port, timeout=TIMEOUT)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, orjson.loads(response.read())
    finally:
        conn.close()


# ------------------------------------------------------------------------- model configuration

SIMPLE_CONFIG = {
    "name": "simple",
    "platform": "oipcodec_python",
    "backend": "oipcodec",
    "max_batch_size": 8,
    "input": [
        {
            "name": name,
            "data_type": "TYPE_INT32",
            "format": "FORMAT_NONE",
            "dims": [16],
            "is_shape_tensor": False,
            "allow_ragged_batch": False,
            "optional": False,
        }
        for name in ("INPUT0", "INPUT1")
    ],
    "output": [
        {
            "name": name,
            "data_type": "TYPE_INT32",
            "dims": [16],
            "label_filename": "",
            "is_shape_tensor": False,
        }
        for name in ("OUTPUT0", "OUTPUT1")
    ],
    "parameters": {},
    "model_transaction_policy": {"decoupled": False},
}


def test_config_of_simple_http(http: Any) -> None:
    """Triton's example config: max_batch_size 8, dims [16] (no batch dimension), numbers."""
    assert http.get_model_config("simple") == SIMPLE_CONFIG
    assert http.get_model_config("simple", "1") == SIMPLE_CONFIG


def test_config_of_simple_grpc(grpc: Any) -> None:
    answer = grpc.get_model_config("simple", "1")
    config = answer.config
    assert (config.name, config.platform, config.backend) == (
        "simple",
        "oipcodec_python",
        "oipcodec",
    )
    assert config.max_batch_size == 8
    assert [(i.name, i.data_type, list(i.dims)) for i in config.input] == [
        ("INPUT0", 8, [16]),  # 8: TYPE_INT32 in tritonclient's DataType
        ("INPUT1", 8, [16]),
    ]
    assert [o.name for o in config.output] == ["OUTPUT0", "OUTPUT1"]
    as_json = grpc.get_model_config("simple", as_json=True)["config"]
    assert as_json["input"][0] == {"name": "INPUT0", "data_type": "TYPE_INT32", "dims": ["16"]}


def test_config_of_simple_string_says_type_string(http: Any, grpc: Any) -> None:
    config = http.get_model_config("simple_string")
    assert config["max_batch_size"] == 8
    assert {t["data_type"] for t in config["input"] + config["output"]} == {"TYPE_STRING"}
    assert [t["dims"] for t in config["input"]] == [[16], [16]]
    answer = grpc.get_model_config("simple_string", as_json=True)["config"]
    assert answer["input"][1]["data_type"] == "TYPE_STRING"


def test_config_of_identity_has_no_tensors(http: Any, grpc: Any) -> None:
    config = http.get_model_config("identity")
    assert config["max_batch_size"] == 0 and config["input"] == [] and config["output"] == []
    assert grpc.get_model_config("identity").config.name == "identity"


def test_config_of_a_batched_model_with_parameters(http: Any, grpc: Any) -> None:
    config = http.get_model_config("batched")
    assert config["max_batch_size"] == 4
    assert [(t["name"], t["data_type"], t["dims"]) for t in config["input"]] == [
        ("X", "TYPE_FP32", [3])
    ]
    assert [(t["name"], t["data_type"], t["dims"]) for t in config["output"]] == [
        ("Y", "TYPE_FP32", [3]),
        ("LABEL", "TYPE_STRING", []),
    ]
    expected = {"origin": {"string_value": "tests"}, "unit": {"string_value": "none"}}
    assert config["parameters"] == expected
    assert grpc.get_model_config("batched", as_json=True)["config"]["parameters"] == expected


def test_config_of_a_model_without_batching_keeps_whole_shapes(http: Any) -> None:
    config = http.get_model_config("add_sub")
    assert config["max_batch_size"] == 0 and config["input"][0]["dims"] == [-1]


def test_config_versions(http: Any, grpc: Any) -> None:
    assert http.get_model_config("counter", "2")["name"] == "counter"
    with pytest.raises(InferenceServerException, match="'counter' version 7 is not found"):
        http.get_model_config("counter", "7")
    with pytest.raises(InferenceServerException, match="'counter' version 7 is not found"):
        grpc.get_model_config("counter", "7")


def test_config_of_an_unknown_model(server: RunningServer, http: Any, grpc: Any) -> None:
    status, body = _get(server, "/v2/models/nope/config")
    assert status == 404 and "'nope'" in body["error"]
    with pytest.raises(InferenceServerException, match="'nope' is not found") as caught:
        http.get_model_config("nope")
    assert caught.value.status() == "404"
    with pytest.raises(InferenceServerException, match="'nope' is not found") as caught:
        grpc.get_model_config("nope")
    assert caught.value.status() == "StatusCode.NOT_FOUND"


def test_server_metadata_lists_the_extensions(http: Any, grpc: Any) -> None:
    for extensions in (
        http.get_server_metadata()["extensions"],
        grpc.get_server_metadata(as_json=True)["extensions"],
    ):
        assert {"model_configuration", "statistics"} <= set(extensions)


# ------------------------------------------------------------------------------- the model API


def test_max_batch_size_needs_a_leading_batch_dimension() -> None:
    with pytest.raises(ValueError, match=r"its input 'X' must start with a -1 .* \[3\]"):
        Model("m", inputs=[TensorSpec("X", "FP32", [3])], max_batch_size=2)
    with pytest.raises(ValueError, match=r"its output 'Y' must start with a -1 .* \[4, -1\]"):
        Model("m", outputs=[TensorSpec("Y", "FP32", [4, -1])], max_batch_size=2)
    with pytest.raises(ValueError, match="max_batch_size is an int >= 0"):
        Model("m", max_batch_size=-1)
    with pytest.raises(ValueError, match="config_parameters map strings to strings"):
        Model("m", config_parameters={"n": 3})  # type: ignore[dict-item]
    model = Model("m", inputs=[TensorSpec("X", "FP32", [-1, 2])], max_batch_size=2)
    assert model.config()["input"][0]["dims"] == [2]
    unbatched = Model("m", inputs=[TensorSpec("X", "FP32", [3])])
    assert unbatched.config()["input"][0]["dims"] == [3]


def test_a_batch_over_max_batch_size_is_refused(http: Any) -> None:
    x = httpclient.InferInput("X", [5, 3], "FP32")
    x.set_data_from_numpy(np.zeros((5, 3), dtype=np.float32))
    with pytest.raises(InferenceServerException, match="batch-size must be <= 4 for 'batched'"):
        http.infer("batched", [x])


# ------------------------------------------------------------------------------------ statistics


def _counter_inputs(module: Any) -> list[Any]:
    item = module.InferInput("A", [1], "INT8")
    item.set_data_from_numpy(np.array([1], dtype=np.int8))
    return [item]


def _model_stats(document: dict[str, Any], name: str, version: str) -> dict[str, Any]:
    (entry,) = [s for s in document["model_stats"] if (s["name"], s["version"]) == (name, version)]
    return entry


def _grpc_stats(grpc: Any, name: str, version: str = "") -> dict[str, Any]:
    """The gRPC answer as Triton's HTTP JSON (uint64 come as strings from MessageToJson)."""
    answer = grpc.get_inference_statistics(name, version)
    return {
        "model_stats": [
            {
                "name": s.name,
                "version": s.version,
                "last_inference": s.last_inference,
                "inference_count": s.inference_count,
                "execution_count": s.execution_count,
                "inference_stats": {
                    field: {"count": getattr(s.inference_stats, field).count,
                            "ns": getattr(s.inference_stats, field).ns}
                    for field in ("success", "fail", "queue", "compute_input", "compute_infer",
                                  "compute_output", "cache_hit", "cache_miss")
                },
                "batch_stats": [
                    {"batch_size": b.batch_size, "compute_infer": {"count": b.compute_infer.count}}
                    for b in s.batch_stats
                ],
            }
            for s in answer.model_stats
        ]
    }  # fmt: skip


def test_statistics_count_requests_per_version(http: Any, grpc: Any) -> None:
    """N inferences to counter version 2 (HTTP and gRPC): its counts grow by N, version 1's
    do not; durations grow; last_inference is now."""
    before = http.get_inference_statistics("counter")
    v1_before = _model_stats(before, "counter", "1")
    v2_before = _model_stats(before, "counter", "2")
    started_ms = time.time() * 1000
    for _ in range(3):
        http.infer("counter", _counter_inputs(httpclient), model_version="2")
    for _ in range(2):
        grpc.infer("counter", _counter_inputs(grpcclient), model_version="2")
    after = http.get_inference_statistics("counter")
    assert {(s["name"], s["version"]) for s in after["model_stats"]} == {
        ("counter", "1"),
        ("counter", "2"),
    }
    assert _model_stats(after, "counter", "1") == v1_before
    v2 = _model_stats(after, "counter", "2")
    stats, old = v2["inference_stats"], v2_before["inference_stats"]
    assert v2["inference_count"] == v2_before["inference_count"] + 5
    assert v2["execution_count"] == v2_before["execution_count"] + 5
    for field in ("success", "queue", "compute_input", "compute_infer", "compute_output"):
        assert stats[field]["count"] == old[field]["count"] + 5, field
    for field in ("success", "compute_input", "compute_infer", "compute_output"):
        assert stats[field]["ns"] > old[field]["ns"], field
    assert stats["fail"] == old["fail"]
    assert stats["success"]["ns"] >= stats["compute_input"]["ns"] + stats["compute_infer"]["ns"]
    assert started_ms - 1000 <= v2["last_inference"] <= time.time() * 1000 + 1000
    assert stats["cache_hit"] == {"count": 0, "ns": 0}
    # The same figures over gRPC, and for the one version.
    assert _grpc_stats(grpc, "counter", "2")["model_stats"][0]["inference_stats"] == stats
    only = http.get_inference_statistics("counter", "2")["model_stats"]
    assert [(s["name"], s["version"], s["inference_count"]) for s in only] == [
        ("counter", "2", v2["inference_count"])
    ]


def test_statistics_count_failures(http: Any, grpc: Any) -> None:
    """A bad input to a known model, or a failing predict, counts as a failure (as Triton)."""
    before = _model_stats(http.get_inference_statistics("simple"), "simple", "1")
    broken = _model_stats(http.get_inference_statistics("failing"), "failing", "1")
    one = httpclient.InferInput("INPUT0", [1, 16], "INT32")
    one.set_data_from_numpy(np.zeros((1, 16), dtype=np.int32))
    with pytest.raises(InferenceServerException, match="INPUT1"):
        http.infer("simple", [one])
    gone = grpcclient.InferInput("INPUT0", [1, 16], "INT32")
    gone.set_data_from_numpy(np.zeros((1, 16), dtype=np.int32))
    with pytest.raises(InferenceServerException, match="INPUT1"):
        grpc.infer("simple", [gone])
    with pytest.raises(InferenceServerException, match="the model broke"):
        http.infer("failing", _counter_inputs(httpclient))
    after = _model_stats(http.get_inference_statistics("simple"), "simple", "1")
    fail, old = after["inference_stats"]["fail"], before["inference_stats"]["fail"]
    assert fail["count"] == old["count"] + 2 and fail["ns"] > old["ns"]
    assert after["inference_stats"]["success"] == before["inference_stats"]["success"]
    assert after["execution_count"] == before["execution_count"]  # refused before predict
    failing = _model_stats(http.get_inference_statistics("failing"), "failing", "1")
    assert (
        failing["inference_stats"]["fail"]["count"]
        == broken["inference_stats"]["fail"]["count"] + 1
    )
    assert failing["execution_count"] == broken["execution_count"] + 1  # predict ran


def test_statistics_count_rows_of_a_batched_model(http: Any) -> None:
    """inference_count counts rows (Triton: the batch size), execution_count predict calls;
    batch_stats has one entry per batch size."""
    before = _model_stats(http.get_inference_statistics("batched"), "batched", "1")
    for rows in (1, 3, 3):
        x = httpclient.InferInput("X", [rows, 3], "FP32")
        x.set_data_from_numpy(np.ones((rows, 3), dtype=np.float32))
        http.infer("batched", [x])
    after = _model_stats(http.get_inference_statistics("batched"), "batched", "1")
    assert after["inference_count"] == before["inference_count"] + 7
    assert after["execution_count"] == before["execution_count"] + 3
    sizes = {b["batch_size"]: b["compute_infer"]["count"] for b in after["batch_stats"]}
    old = {b["batch_size"]: b["compute_infer"]["count"] for b in before["batch_stats"]}
    assert sizes[1] == old.get(1, 0) + 1 and sizes[3] == old.get(3, 0) + 2


def test_statistics_of_every_model(server: RunningServer, http: Any, grpc: Any) -> None:
    everything = http.get_inference_statistics()
    names = {(s["name"], s["version"]) for s in everything["model_stats"]}
    assert {("simple", "1"), ("counter", "1"), ("counter", "2"), ("identity", "1")} <= names
    status, document = _get(server, "/v2/models/stats")
    assert status == 200 and {(s["name"], s["version"]) for s in document["model_stats"]} == names
    answer = grpc.get_inference_statistics()
    assert {(s.name, s.version) for s in answer.model_stats} == names


def test_statistics_of_an_unknown_model_or_version(http: Any, grpc: Any) -> None:
    with pytest.raises(InferenceServerException, match="'nope' is not found"):
        http.get_inference_statistics("nope")
    with pytest.raises(InferenceServerException, match="'counter' version 9 is not found"):
        http.get_inference_statistics("counter", "9")
    with pytest.raises(InferenceServerException, match="'nope' is not found") as caught:
        grpc.get_inference_statistics("nope")
    assert caught.value.status() == "StatusCode.NOT_FOUND"


def test_statistics_off() -> None:
    """metrics=False counts nothing: the statistics answer UNAVAILABLE, /metrics is 404."""
    with background(process=False, metrics=False, log_level="critical") as running:
        client = httpclient.InferenceServerClient(running.http_address)
        try:
            with pytest.raises(InferenceServerException, match="statistics are off") as caught:
                client.get_inference_statistics("simple")
            assert caught.value.status() == "503"
            status, body = _get(running, "/metrics")
            assert status == 404 and "metrics are off" in body["error"]
            assert client.get_model_config("simple")["max_batch_size"] == 8
        finally:
            client.close()


def test_queue_is_the_wait_for_a_worker_thread(http: Any) -> None:
    """A run_in_thread model's queue time is its wait for a worker thread (> 0); a model on
    the event loop starts at once (queue 0, counted)."""
    for _ in range(2):
        http.infer("threaded", _counter_inputs(httpclient))
        http.infer("counter", _counter_inputs(httpclient), model_version="1")
    threaded = _model_stats(http.get_inference_statistics("threaded"), "threaded", "1")
    queue = threaded["inference_stats"]["queue"]
    assert queue["count"] == threaded["inference_stats"]["success"]["count"] >= 2
    assert queue["ns"] > 0
    counter = _model_stats(http.get_inference_statistics("counter", "1"), "counter", "1")
    assert counter["inference_stats"]["queue"]["count"] >= 2
    assert counter["inference_stats"]["queue"]["ns"] == 0
