"""OpenTelemetry traces and Triton's trace extension (``trace=True``), against real parts.

The server (a subprocess) exports with the real OpenTelemetry SDK and OTLP http/protobuf
exporter to a receiver started here on 127.0.0.1, which decodes what arrives with the
protocol's own ``ExportTraceServiceRequest``; the requests are made by the real tritonclient,
carrying a W3C ``traceparent`` whose ids the spans must name as their parent.
"""

from __future__ import annotations

import gzip
import http.server
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("opentelemetry.sdk", reason="the tracing extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from tritonclient.utils import InferenceServerException  # noqa: E402

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


class Receiver:
    """An OTLP/HTTP receiver: ``POST /v1/traces``, each span kept as a dict."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        spans = self.spans

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    service = {a.key: a.value for a in resource.resource.attributes}
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            attributes = {}
                            for a in span.attributes:
                                kind = a.value.WhichOneof("value")
                                attributes[a.key] = getattr(a.value, kind)
                            spans.append(
                                {
                                    "name": span.name,
                                    "trace_id": span.trace_id.hex(),
                                    "span_id": span.span_id.hex(),
                                    "parent": span.parent_span_id.hex(),
                                    "start": span.start_time_unix_nano,
                                    "end": span.end_time_unix_nano,
                                    "attributes": attributes,
                                    "error": span.status.code == 2,
                                    "events": [(e.name, e.time_unix_nano) for e in span.events],
                                    "service": service["service.name"].string_value,
                                }
                            )
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def requests(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """The ``infer`` spans once ``count`` have arrived (fails after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [s for s in self.spans if s["name"] == "infer"]
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise AssertionError(f"{count} infer spans expected, got {len(found)}: {self.spans}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


@pytest.fixture(scope="module")
def server(receiver: Receiver) -> Iterator[RunningServer]:
    saved = dict(os.environ)
    os.environ.update(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_SERVICE_NAME": "oipcodec-under-test",
            "OTEL_BSP_SCHEDULE_DELAY": "20",
        }
    )
    try:
        with background(trace=True, log_level="warning") as running:
            yield running
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def spans(receiver: Receiver) -> Iterator[Receiver]:
    """The receiver, emptied before and after the test (the spans of one test only)."""
    time.sleep(0.1)  # the previous test's last batch
    receiver.spans.clear()
    yield receiver
    receiver.spans.clear()


def _inputs(module: Any, binary: bool = True) -> list[Any]:
    a = np.arange(32, dtype=np.int32).reshape(2, 16)
    inputs = [
        module.InferInput("INPUT0", [2, 16], "INT32"),
        module.InferInput("INPUT1", [2, 16], "INT32"),
    ]
    for item in inputs:
        if module is httpclient:
            item.set_data_from_numpy(a, binary_data=binary)
        else:
            item.set_data_from_numpy(a)
    return inputs


def _infer(server: RunningServer, kind: str, headers: dict[str, str] | None = None) -> None:
    if kind == "grpc":
        with grpcclient.InferenceServerClient(server.grpc_address) as client:
            client.infer("simple", _inputs(grpcclient), headers=headers)
    else:
        with httpclient.InferenceServerClient(server.http_address) as client:
            client.infer("simple", _inputs(httpclient, kind == "binary"), headers=headers)


# ------------------------------------------------------------------------------ spans


@pytest.mark.parametrize(
    ("kind", "path"), [("json", "json"), ("binary", "binary"), ("grpc", "grpc_raw")]
)
def test_a_request_is_a_child_of_its_traceparent(
    server: RunningServer, spans: Receiver, kind: str, path: str
) -> None:
    _infer(server, kind, {"traceparent": TRACEPARENT, "tracestate": "vendor=1"})
    (root,) = spans.requests(1)
    assert root["trace_id"] == TRACE_ID
    assert root["parent"] == PARENT_ID
    assert root["service"] == "oipcodec-under-test"
    assert root["attributes"] == {
        "oip.model.name": "simple",
        "oip.model.version": "1",
        "oip.path": path,
        "oip.batch_size": 2,
        "oip.status": "OK",
    }
    # The steps, each where it started, in order inside the request's span.
    names = [name for name, _ in root["events"]]
    times = [at for _, at in root["events"]]
    assert names == ["decode", "queue", "compute", "encode"]
    assert root["start"] == times[0] and times == sorted(times) and times[-1] <= root["end"]
    assert len(spans.spans) == 1


@pytest.mark.grpc
def test_a_stream_carries_its_metadata_to_each_request(
    server: RunningServer, spans: Receiver
) -> None:
    answers: queue.Queue[Any] = queue.Queue()
    with grpcclient.InferenceServerClient(server.grpc_address) as client:
        client.start_stream(
            lambda result, error: answers.put(error or result),
            headers={"traceparent": TRACEPARENT},
        )
        for _ in range(2):
            client.async_stream_infer("simple", _inputs(grpcclient))
        for _ in range(2):
            assert not isinstance(answers.get(timeout=30), Exception)
        client.stop_stream()
    roots = spans.requests(2)
    assert [(s["parent"], s["trace_id"]) for s in roots] == [(PARENT_ID, TRACE_ID)] * 2
    assert {s["attributes"]["oip.path"] for s in roots} == {"grpc_raw"}


def test_without_traceparent_a_request_starts_a_trace(
    server: RunningServer, spans: Receiver
) -> None:
    _infer(server, "json")
    (root,) = spans.requests(1)
    assert root["parent"] == ""
    assert root["trace_id"] != TRACE_ID


def test_a_refused_request_is_an_error_span(server: RunningServer, spans: Receiver) -> None:
    inputs = [httpclient.InferInput("INPUT0", [2, 16], "INT32")]
    inputs[0].set_data_from_numpy(np.zeros((2, 16), np.int32))
    with (
        httpclient.InferenceServerClient(server.http_address) as client,
        pytest.raises(InferenceServerException),
    ):
        client.infer("simple", inputs, headers={"traceparent": TRACEPARENT})
    (root,) = spans.requests(1)
    assert root["error"] and root["attributes"]["oip.status"] == "INVALID_ARGUMENT"
    assert root["parent"] == PARENT_ID


@pytest.mark.grpc
def test_probes_and_metadata_are_not_traced(server: RunningServer, spans: Receiver) -> None:
    with httpclient.InferenceServerClient(server.http_address) as client:
        assert client.is_server_live() and client.is_server_ready()
        assert client.is_model_ready("simple")
        assert "trace" in client.get_server_metadata()["extensions"]
    with grpcclient.InferenceServerClient(server.grpc_address) as client:
        assert client.is_server_live() and client.is_model_ready("simple")
        assert "trace" in client.get_server_metadata().extensions
    _infer(server, "json")  # a marker: once its span is in, the probes' would be too
    spans.requests(1)
    assert [s["name"] for s in spans.spans if s["parent"] == ""] == ["infer"]


# ------------------------------------------------------------------------------ trace settings

DEFAULTS = {
    "trace_file": "",
    "trace_level": ["TIMESTAMPS"],
    "trace_rate": "1",
    "trace_count": "-1",
    "log_frequency": "0",
    "trace_mode": "opentelemetry",
}


def _grpc_settings(answer: Any) -> dict[str, Any]:
    settings = answer["settings"]
    return {k: v["value"] if k == "trace_level" else v["value"][0] for k, v in settings.items()}


def test_trace_settings_over_http_choose_the_requests_traced(
    server: RunningServer, spans: Receiver
) -> None:
    with httpclient.InferenceServerClient(server.http_address) as client:
        assert client.get_trace_settings() == DEFAULTS
        try:
            assert client.update_trace_settings(settings={"trace_rate": "2"})["trace_rate"] == "2"
            for _ in range(4):
                _infer(server, "json")
            assert len(spans.requests(2)) == 2
            time.sleep(0.2)
            assert len(spans.requests(2)) == 2  # one in two

            spans.spans.clear()
            # A model's own settings, the others the server's.
            model = client.update_trace_settings("simple", {"trace_level": ["OFF"]})
            assert model == {**DEFAULTS, "trace_rate": "2", "trace_level": ["OFF"]}
            assert client.get_trace_settings()["trace_level"] == ["TIMESTAMPS"]
            for _ in range(2):
                _infer(server, "json")
            client.update_trace_settings("simple", {"trace_level": None})  # cleared
            assert client.get_trace_settings("simple") == {**DEFAULTS, "trace_rate": "2"}

            # trace_count: that many more traces, then none.
            client.update_trace_settings(settings={"trace_rate": "1", "trace_count": "1"})
            for _ in range(3):
                _infer(server, "json")
            assert len(spans.requests(1)) == 1
            time.sleep(0.2)
            assert len(spans.requests(1)) == 1
            assert client.get_trace_settings()["trace_count"] == "0"
        finally:
            client.update_trace_settings(settings={"trace_rate": None, "trace_count": None})
        assert client.get_trace_settings() == DEFAULTS


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"trace_rate": "0"}, "trace_rate must be an integer >= 1, got '0'"),
        ({"trace_rate": 5}, "trace_rate must be a string, got 5"),
        ({"trace_level": ["LOUD"]}, "trace_level must be a list of OFF, TIMESTAMPS, TENSORS"),
        ({"trace_colour": "1"}, "unknown trace setting 'trace_colour'"),
    ],
)
def test_a_bad_trace_setting_is_refused(
    server: RunningServer, settings: dict[str, Any], message: str
) -> None:
    with httpclient.InferenceServerClient(server.http_address) as client:
        with pytest.raises(InferenceServerException, match=message) as caught:
            client.update_trace_settings(settings=settings)
        assert caught.value.status() == "400"
        with pytest.raises(InferenceServerException, match="no_such_model"):
            client.get_trace_settings("no_such_model")
        assert client.get_trace_settings() == DEFAULTS


def test_trace_settings_over_grpc(server: RunningServer, spans: Receiver) -> None:
    with grpcclient.InferenceServerClient(server.grpc_address) as client:
        assert _grpc_settings(client.get_trace_settings(as_json=True)) == DEFAULTS
        updated = client.update_trace_settings("simple", {"trace_level": ["OFF"]}, as_json=True)
        assert _grpc_settings(updated)["trace_level"] == ["OFF"]
        assert _grpc_settings(client.get_trace_settings("simple", as_json=True))["trace_level"] == [
            "OFF"
        ]
        _infer(server, "grpc")
        client.update_trace_settings("simple", {"trace_level": None})
        _infer(server, "grpc", {"traceparent": TRACEPARENT})
        (root,) = spans.requests(1)  # the one before was not traced
        assert root["parent"] == PARENT_ID
        with pytest.raises(InferenceServerException, match="trace_rate must be an integer"):
            client.update_trace_settings(settings={"trace_rate": "-3"})
        assert _grpc_settings(client.get_trace_settings(as_json=True)) == DEFAULTS


# ------------------------------------------------------------------------------ off


def test_off_no_opentelemetry_is_imported() -> None:
    """Tracing off: a server answering requests imports nothing of OpenTelemetry, lists no
    trace extension and has no trace endpoint."""
    script = (
        f"TRACEPARENT = {TRACEPARENT!r}\n"
        """
import sys, urllib.request, urllib.error, json
from oipcodec.testing import background
with background(process=False) as server:
    body = json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))}]})
    request = urllib.request.Request(
        server.http_url + "/v2/models/simple/infer", body.encode(),
        headers={"traceparent": TRACEPARENT})
    urllib.request.urlopen(request).read()
    metadata = json.load(urllib.request.urlopen(server.http_url + "/v2"))
    try:
        urllib.request.urlopen(server.http_url + "/v2/trace/setting")
        status = 200
    except urllib.error.HTTPError as exc:
        status = exc.code
print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
print("trace" in metadata["extensions"], status)
"""
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split("\n")[:2] == ["[]", "False 404"], done.stderr


def test_trace_is_a_bool_setting() -> None:
    from oipcodec.server.config import ServerConfig

    assert ServerConfig(trace=True).trace
    with pytest.raises(TypeError, match="trace must be a bool, got str 'yes'"):
        ServerConfig(trace="yes")  # type: ignore[arg-type]
