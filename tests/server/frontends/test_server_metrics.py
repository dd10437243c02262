"""Prometheus metrics: ``GET /metrics`` on the REST port and on ``metrics_port``, parsed with
prometheus_client's own parser, its counters checked against the requests sent (JSON, binary,
compressed, gRPC raw and typed); and a server of two processes whose figures cover both."""

from __future__ import annotations

import http.client as httplib
import signal
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec.client import GrpcClient
from oipcodec.client.graphpipe_client import GraphPipeClient
from oipcodec.client.trtis_client import V1GrpcClient, V1HttpClient
from oipcodec.server import ServerConfig
from oipcodec.server.stats import PATHS
from oipcodec.testing import RunningServer, background
from tests.support.ports import free_ports
from tests.support.processes import http_status
from tests.support.serve_process import serve_process
from tests.support.server_models import Pid

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
parser = pytest.importorskip("prometheus_client.parser")
from tritonclient.utils import InferenceServerException  # noqa: E402

TIMEOUT = 30.0

TRITON_FAMILIES = (
    "nv_inference_request_success",
    "nv_inference_request_failure",
    "nv_inference_count",
    "nv_inference_exec_count",
    "nv_inference_request_duration_us",
    "nv_inference_queue_duration_us",
    "nv_inference_compute_input_duration_us",
    "nv_inference_compute_infer_duration_us",
    "nv_inference_compute_output_duration_us",
)

#: A sample: (its name as the parser gives it, its labels as sorted pairs) -> value.
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(metrics_port=0, log_level="critical") as running:
        yield running


def _get(host: str, port: int | None, path: str) -> tuple[int, str, bytes]:
    conn = httplib.HTTPConnection(host, port, timeout=TIMEOUT)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.getheader("content-type") or "", response.read()
    finally:
        conn.close()


def scrape(host: str, port: int | None) -> tuple[Samples, dict[str, Any]]:
    """The samples of ``GET /metrics`` (parsed by prometheus_client), and its families."""
    status, kind, body = _get(host, port, "/metrics")
    assert status == 200 and kind.startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in parser.text_string_to_metric_families(body.decode())}
    samples: Samples = {}
    for family in families.values():
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return samples, families


def _model(metric: str, model: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    # prometheus_client names a counter's samples <family>_total.
    return f"{metric}_total", (("model", model), ("version", "1"))


def _path(metric: str, path: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return metric, (("path", path),)


def _simple_http(binary: bool) -> dict[str, Any]:
    inputs = []
    for name in ("INPUT0", "INPUT1"):
        item = httpclient.InferInput(name, [1, 16], "INT32")
        item.set_data_from_numpy(np.arange(16, dtype=np.int32).reshape(1, 16), binary_data=binary)
        inputs.append(item)
    outputs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary)]
    return {"inputs": inputs, "outputs": outputs}


def test_metrics_count_the_requests_sent(server: RunningServer) -> None:
    before, families = scrape(server.host, server.http_port)
    for name in TRITON_FAMILIES:
        assert families[name].type == "counter", name
    assert families["nv_inference_request_success"].documentation == (
        "Number of successful inference requests, all batch sizes"
    )
    sent = {"json": 3, "binary": 2, "compressed": 2, "grpc_raw": 4, "grpc_typed": 1}
    sent |= {"v1_http": 2, "v1_grpc": 1, "graphpipe": 2}
    http = httpclient.InferenceServerClient(server.http_address, network_timeout=TIMEOUT)
    try:
        for _ in range(sent["json"]):
            http.infer("simple", **_simple_http(binary=False))
        for _ in range(sent["binary"]):
            http.infer("simple", **_simple_http(binary=True))
        for _ in range(sent["compressed"]):
            http.infer("simple", **_simple_http(binary=False), request_compression_algorithm="gzip")
        bad = httpclient.InferInput("INPUT0", [1, 16], "INT32")
        bad.set_data_from_numpy(np.zeros((1, 16), dtype=np.int32), binary_data=False)
        with pytest.raises(InferenceServerException, match="INPUT1"):
            http.infer("simple", [bad])  # a failure, on the json path
    finally:
        http.close()
    grpc = grpcclient.InferenceServerClient(server.grpc_address)
    try:
        for _ in range(sent["grpc_raw"]):
            inputs = []
            for name in ("INPUT0", "INPUT1"):
                item = grpcclient.InferInput(name, [1, 16], "INT32")
                item.set_data_from_numpy(np.ones((1, 16), dtype=np.int32))
                inputs.append(item)
            grpc.infer("simple", inputs, client_timeout=TIMEOUT)
    finally:
        grpc.close()
    with GrpcClient(server.grpc_address) as typed:
        ones = np.ones((1, 16), dtype=np.int32)
        for _ in range(sent["grpc_typed"]):
            typed.infer("simple", {"INPUT0": ones, "INPUT1": ones}, raw=False)
    # The TensorRT Inference Server v1 API counts on paths of its own (a batch of one row).
    ones = np.ones(16, dtype=np.int32)
    with V1HttpClient(server.http_url) as v1_http, V1GrpcClient(server.grpc_address) as v1_grpc:
        for _ in range(sent["v1_http"]):
            v1_http.infer("simple", {"INPUT0": ones, "INPUT1": ones})
        for _ in range(sent["v1_grpc"]):
            v1_grpc.infer("simple", {"INPUT0": ones, "INPUT1": ones})
    # And GraphPipe on its own.
    with GraphPipeClient(f"{server.http_url}/graphpipe/simple") as graphpipe:
        for _ in range(sent["graphpipe"]):
            graphpipe.infer([ones[None], ones[None]], ["INPUT0", "INPUT1"])

    for port in (server.http_port, server.metrics_port):
        after, _ = scrape(server.host, port)

        def grew(key: tuple[str, tuple[tuple[str, str], ...]], after: Samples = after) -> float:
            return after[key] - before.get(key, 0.0)

        total = sum(sent.values())
        assert grew(_model("nv_inference_request_success", "simple")) == total
        failure = "nv_inference_request_failure_total"
        reasons = {"REJECTED": 0, "CANCELED": 0, "BACKEND": 0, "OTHER": 1}  # a bad input
        for reason, count in reasons.items():
            labels = (("model", "simple"), ("reason", reason), ("version", "1"))
            assert grew((failure, labels)) == count, reason
        assert grew(_model("nv_inference_count", "simple")) == total
        assert grew(_model("nv_inference_exec_count", "simple")) == total
        for metric in (
            "nv_inference_request_duration_us",
            "nv_inference_compute_input_duration_us",
            "nv_inference_compute_output_duration_us",
        ):
            assert grew(_model(metric, "simple")) > 0, metric
        assert grew(_model("nv_inference_queue_duration_us", "simple")) == 0
        for path in PATHS:
            requests = sent[path] + (1 if path == "json" else 0)  # the failure
            assert grew(_path("oipcodec_requests_total", path)) == requests, path
            assert grew(_path("oipcodec_request_bytes_total", path)) > 0, path
            assert grew(_path("oipcodec_response_bytes_total", path)) > 0, path
            decode = ("oipcodec_codec_seconds_total", (("path", path), ("stage", "decode")))
            assert grew(decode) > 0, path
        # Compressed bodies are smaller than the same requests as plain JSON.
        per_json = grew(_path("oipcodec_request_bytes_total", "json")) / 4
        per_gzip = grew(_path("oipcodec_request_bytes_total", "compressed")) / 2
        assert per_gzip < per_json


def test_metrics_port_serves_only_metrics(server: RunningServer) -> None:
    status, _, body = _get(server.host, server.metrics_port, "/v2/models/simple")
    assert status == 404 and b"GET /metrics" in body
    assert server.metrics_port not in (server.http_port, server.grpc_port)


def test_metrics_escape_label_values() -> None:
    from oipcodec.server.demo import Identity
    from oipcodec.server.frontends.metrics_frontend import render
    from oipcodec.server.stats import Statistics

    statistics = Statistics()
    odd = Identity(name='we"ird\\name', version="1")
    statistics.of(odd).succeeded(statistics.paths["json"], [], 1, 10, 10, 20, 30, 5, 6)
    families = {
        f.name: f
        for f in parser.text_string_to_metric_families(render(statistics.snapshot()).decode())
    }
    (sample,) = families["nv_inference_request_success"].samples
    assert sample.labels == {"model": 'we"ird\\name', "version": "1"} and sample.value == 1


def _pid_of_answer(server: RunningServer, model: str = "pid") -> int:
    """One inference on a fresh connection (the kernel spreads new connections over the
    processes); the first element of the answer (the pid model: the pid of the process that
    answered)."""
    body = orjson.dumps({"inputs": [{"name": "A", "shape": [1], "datatype": "INT8", "data": [1]}]})
    conn = httplib.HTTPConnection(server.host, server.http_port, timeout=TIMEOUT)
    try:
        conn.request("POST", f"/v2/models/{model}/infer", body)
        response = conn.getresponse()
        assert response.status == 200
        return int(orjson.loads(response.read())["outputs"][0]["data"][0])
    finally:
        conn.close()


def test_two_workers_metrics_cover_both_processes() -> None:
    """Requests served by two processes: every scrape, and the statistics, whichever process
    answers them, count all of them."""
    with background([Pid()], workers=2, grpc_port=None, metrics_port=0) as running:
        counts: dict[int, int] = {}
        deadline = time.monotonic() + 60
        sent = 0
        while (sent < 40 or len(counts) < 2) and sent < 400 and time.monotonic() < deadline:
            pid = _pid_of_answer(running)
            counts[pid] = counts.get(pid, 0) + 1
            sent += 1
        assert len(counts) == 2, f"one process served all {sent} requests"
        for port in [running.http_port, running.metrics_port] * 4:  # either process answers
            samples, _ = scrape(running.host, port)
            assert samples[_model("nv_inference_request_success", "pid")] == sent
            assert samples[_model("nv_inference_exec_count", "pid")] == sent
            assert samples[_path("oipcodec_requests_total", "json")] == sent
        for _ in range(4):
            status, _, body = _get(running.host, running.http_port, "/v2/models/pid/stats")
            assert status == 200
            (entry,) = orjson.loads(body)["model_stats"]
            assert entry["inference_stats"]["success"]["count"] == sent
            assert entry["inference_count"] == sent


def test_serve_command_metrics_port() -> None:
    """``oipcodec serve --metrics-port P``: the metrics on P (and /metrics on the REST port),
    counting what the REST port served."""
    http_port, metrics_port = free_ports(2)
    args = ["--grpc-port", "-1", "--http-port", str(http_port), "--metrics-port", str(metrics_port)]

    def ready() -> bool:
        return http_status(f"http://127.0.0.1:{metrics_port}/metrics") == 200

    with serve_process(*args, ready=ready) as process:
        server = RunningServer("127.0.0.1", http_port, None, metrics_port)
        for _ in range(3):
            _pid_of_answer(server, "identity")
        for port in (metrics_port, http_port):
            samples, _ = scrape("127.0.0.1", port)
            assert samples[_model("nv_inference_request_success", "identity")] == 3
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert f"metrics 127.0.0.1:{metrics_port} and HTTP's /metrics," in output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], "metrics at HTTP's /metrics,"),
        (["--no-metrics"], "metrics off,"),
    ],
)
def test_the_start_up_line_says_where_metrics_answer(args: list[str], said: str) -> None:
    """Without --metrics-port, /metrics answers on the REST port: the line says so, not "off"."""
    (http_port,) = free_ports(1)
    every = ["--grpc-port", "-1", "--http-port", str(http_port), *args]

    def ready() -> bool:
        return http_status(f"http://127.0.0.1:{http_port}/v2/health/ready") == 200

    with serve_process(*every, ready=ready) as process:
        metrics = http_status(f"http://127.0.0.1:{http_port}/metrics")
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert (metrics == 200) == (said != "metrics off,"), metrics
    assert said in output, output


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        ({"metrics_port": 70000}, ValueError, "metrics_port must be 0 .* got 70000"),
        ({"metrics_port": "8002"}, TypeError, "metrics_port must be an int"),
        ({"metrics": 1}, TypeError, "metrics must be a bool, got int 1"),
        ({"metrics": False, "metrics_port": 0}, ValueError, "metrics_port needs metrics=True"),
    ],
)
def test_metrics_settings_are_checked(
    settings: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ServerConfig(**settings)
