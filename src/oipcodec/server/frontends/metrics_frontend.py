"""Prometheus metrics: the inference statistics (server/stats.py) as Prometheus's text
exposition format, rendered when scraped (no per-request work beyond the counters), and the
small ASGI app that serves them on a port of their own (``--metrics-port``).

Triton's metric names, HELP texts and labels (``model``, ``version``, and a failure's
``reason``: REJECTED for overload, BACKEND when ``predict`` raised, OTHER the rest, CANCELED
never, as a request whose client went away is not counted) for the quantities Triton reports,
and oipcodec's own per encoding path (label ``path``: json, binary, compressed, grpc_raw,
grpc_typed, v1_http, v1_grpc, graphpipe).
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from oipcodec.errors import NotFoundError
from oipcodec.server.frontends._asgi import Answer, Receive, Scope, Send, allow
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.stats import PATH_FIELDS, PATHS, Snapshot, Statistics, model_figures

__all__ = ["CONTENT_TYPE", "TRITON_METRICS", "MetricsApp", "MetricsRoutes", "render"]

#: The content type of the text exposition format.
CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"

_P = {name: index for index, name in enumerate(PATH_FIELDS)}

#: Triton's per-model counters: name, HELP text, the figure of a model version
#: (:func:`~oipcodec.server.stats.model_figures`), and the divisor (nanoseconds to
#: microseconds).
TRITON_METRICS: tuple[tuple[str, str, str, int], ...] = (
    (
        "nv_inference_request_success",
        "Number of successful inference requests, all batch sizes",
        "success_count",
        1,
    ),
    (
        "nv_inference_request_failure",
        "Number of failed inference requests, all batch sizes",
        "fail_count",
        1,
    ),
    (
        "nv_inference_count",
        "Number of inferences performed (does not include cached requests)",
        "inference_count",
        1,
    ),
    (
        "nv_inference_exec_count",
        "Number of model executions performed (does not include cached requests)",
        "execution_count",
        1,
    ),
    (
        "nv_inference_request_duration_us",
        "Cumulative inference request duration in microseconds (includes cached requests)",
        "success_ns",
        1000,
    ),
    (
        "nv_inference_queue_duration_us",
        "Cumulative inference queuing duration in microseconds (includes cached requests)",
        "queue_ns",
        1000,
    ),
    (
        "nv_inference_compute_input_duration_us",
        "Cumulative compute input duration in microseconds (does not include cached requests)",
        "compute_input_ns",
        1000,
    ),
    (
        "nv_inference_compute_infer_duration_us",
        "Cumulative compute inference duration in microseconds (does not include cached requests)",
        "compute_infer_ns",
        1000,
    ),
    (
        "nv_inference_compute_output_duration_us",
        "Cumulative inference compute output duration in microseconds "
        "(does not include cached requests)",
        "compute_output_ns",
        1000,
    ),
)

#: oipcodec's per-path counters: name, HELP text, the slot of a path block, the divisor.
PATH_METRICS: tuple[tuple[str, str, int, float], ...] = (
    (
        "oipcodec_requests_total",
        "Inference requests received, by encoding path",
        _P["requests"],
        1,
    ),
    (
        "oipcodec_request_bytes_total",
        "Bytes of inference request bodies (gRPC: messages), as received, by encoding path",
        _P["request_bytes"],
        1,
    ),
    (
        "oipcodec_response_bytes_total",
        "Bytes of inference answers, as sent, by encoding path",
        _P["response_bytes"],
        1,
    ),
)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _family(lines: list[str], name: str, help_text: str) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} counter")


def _failures(figures: dict[str, int]) -> list[tuple[str, int]]:
    """A model version's failures by Triton's reasons."""
    rejected, backend = figures["rejected"], figures["failed_executions"]
    other = figures["fail_count"] - rejected - backend
    return [("REJECTED", rejected), ("CANCELED", 0), ("BACKEND", backend), ("OTHER", other)]


def render(snapshot: Snapshot) -> bytes:
    """The metrics of ``snapshot`` in Prometheus's text exposition format (version 0.0.4)."""
    models = sorted(
        (key, model_figures(values)) for key, values in snapshot.items() if key[0] == "model"
    )
    lines: list[str] = []
    for name, help_text, figure, divisor in TRITON_METRICS:
        _family(lines, name, help_text)
        for key, figures in models:
            model, version = _label(key[1]), _label(key[2])
            if figure == "fail_count":
                for reason, value in _failures(figures):
                    lines.append(
                        f'{name}{{model="{model}",reason="{reason}",version="{version}"}} {value}'
                    )
                continue
            value = figures[figure] // divisor
            lines.append(f'{name}{{model="{model}",version="{version}"}} {value}')
    paths = [(path, snapshot.get(("path", path)) or [0] * len(PATH_FIELDS)) for path in PATHS]
    for name, help_text, slot, _ in PATH_METRICS:
        _family(lines, name, help_text)
        for path, values in paths:
            lines.append(f'{name}{{path="{path}"}} {values[slot]}')
    name = "oipcodec_codec_seconds_total"
    _family(lines, name, "Seconds spent decoding requests and encoding answers, by encoding path")
    for path, values in paths:
        for stage, slot in (("decode", _P["decode_ns"]), ("encode", _P["encode_ns"])):
            seconds = values[slot] / 1e9
            lines.append(f'{name}{{path="{path}",stage="{stage}"}} {seconds!r}')
    lines.append("")
    return "\n".join(lines).encode()


class MetricsRoutes:
    """``GET /metrics`` on the REST port, mounted beside the REST app: the Prometheus metrics of
    every process of the server (404 when metrics are off)."""

    def __init__(self, registry: ModelRegistry) -> None:
        self.registry = registry

    async def __call__(
        self, method: str, path: str, parts: Sequence[str], scope: Scope, receive: Receive
    ) -> Answer:
        if list(parts) != ["metrics"]:
            raise NotFoundError(f"no endpoint {path}")
        allow(method, "GET")
        statistics = self.registry.statistics
        if statistics is None:
            raise NotFoundError("no endpoint /metrics: metrics are off in this server")
        return 200, render(statistics.snapshot()), [(b"content-type", CONTENT_TYPE)]


class MetricsApp:
    """The ASGI app of the metrics port: ``GET /metrics``, and 404 for anything else (as
    Triton's metrics port)."""

    def __init__(self, statistics: Statistics) -> None:
        self.statistics = statistics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # uvicorn runs this app without lifespan events
        if scope["path"] == "/metrics" and scope["method"] == "GET":
            status, body, kind = 200, render(self.statistics.snapshot()), CONTENT_TYPE
        else:
            status, kind = 404, b"application/json"
            body = orjson.dumps({"error": f"no endpoint {scope['path']}: see GET /metrics"})
        headers = [(b"content-type", kind), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
