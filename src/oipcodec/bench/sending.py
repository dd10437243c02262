"""``oipcodec bench --sender``: a row's load sent by :mod:`oipcodec.bench.sender` instead of the
row's Python client, so that the server is what is measured.

Which rows: the Open Inference Protocol's REST paths (JSON, nested, binary, compressed) of
oipcodec's own implementations (``native``, ``pure``) over plain ``http://``, and their gRPC
paths (raw, typed) over plain HTTP/2 (:func:`oipcodec.bench.sender.run_grpc`: one connection
with a stream per concurrent request, as gRPC clients share a channel's connection); the
request bytes are what oipcodec's client writes for each of the workload's requests, encoded
once. The codec-only columns and the tritonclient rows still compare the clients. v1,
GraphPipe, shared memory, TLS and ``--header`` runs keep the clients. ``--sender python`` on a
gRPC row is the HTTP/2 half's twin, grpcio's channel. A level is
measured in the same windows as the clients' (one sender run a window, on new connections), so
stability, the summary and the CSV columns are the same; the generator's CPU is the sender's.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from oipcodec import pb, rest
from oipcodec.bench import sender
from oipcodec.bench.connection import Connection
from oipcodec.bench.encoding import Encoding, EncodingPath
from oipcodec.bench.load import STABILITY_WINDOWS, LevelResult, Measurement, stable, window_summary
from oipcodec.bench.workload import Workload
from oipcodec.types import InferRequest

__all__ = ["SENDERS", "default_sender", "measure_sent", "requests_for", "sent_by"]

#: ``--sender`` choices: the generator's two twins, or the rows' own clients.
SENDERS = ("native", "python", "client")
_OIP_REST = (Encoding.JSON, Encoding.JSON_NESTED, Encoding.BINARY)
_OIP_GRPC = (Encoding.GRPC_RAW, Encoding.GRPC_TYPED)
_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^:/\[\]]+):[0-9]{1,5}$")


def default_sender() -> str:
    """``native`` where it is compiled, else the clients (the Python twin is no faster)."""
    return "native" if sender.native_available() else "client"


def sent_by(choice: str | None, implementation: str, path: EncodingPath, url: str | None,
            connection: dict[str, Any] | None,
            target: str | None = None) -> str | None:  # fmt: skip
    """The sender implementation for a row (``native``/``python``), or None: its clients.
    ``target`` is the gRPC target (``host:port``), for the gRPC paths."""
    if choice not in ("native", "python") or implementation not in ("native", "pure"):
        return None
    if path.protocol == "grpc":
        # host:port only: a target with a scheme (dns:///, unix:) is grpcio's to resolve.
        if path.encoding not in _OIP_GRPC or not target or not _PORT.search(target):
            return None
    elif path.protocol != "rest" or path.encoding not in _OIP_REST or not url:
        return None
    if (
        url
        and path.protocol == "rest"
        and urllib.parse.urlsplit(url if "://" in url else "http://" + url).scheme != "http"
    ):
        return None
    if Connection.from_dict(connection) != Connection():
        return None  # headers or TLS settings: only the clients carry them
    return choice


def requests_for(path: EncodingPath, workload: Workload, url: str | None,
                 target: str | None = None) -> tuple[str, int, list[bytes]]:  # fmt: skip
    """The host, the port, and each of the workload's requests as oipcodec's client sends it
    on ``path``: HTTP/1.1 requests to ``url``, or for a gRPC path the serialized
    ModelInferRequest messages to ``target``."""
    if path.protocol == "grpc":
        where = urllib.parse.urlsplit("//" + (target or ""))
        raw = path.encoding is Encoding.GRPC_RAW
        messages = [
            pb.encode_request(InferRequest(inputs, model_name=workload.model), raw)
            for inputs in workload.requests
        ]
        return where.hostname or "127.0.0.1", where.port or 8001, messages
    parts = urllib.parse.urlsplit((url or "") if "://" in (url or "") else "http://" + (url or ""))
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    model = parts.path.rstrip("/") + "/v2/models/" + urllib.parse.quote(workload.model, safe="")
    encoded = []
    for inputs in workload.requests:
        request = InferRequest(inputs, model_name=workload.model)
        body, header_length = rest.encode_request(
            request, binary=path.binary, nested=path.encoding is Encoding.JSON_NESTED
        )
        headers = []
        if header_length is not None:
            headers.append((rest.HEADER_LENGTH, str(header_length)))
        if path.compression is not None:
            body = rest.compress(body, path.compression)
            headers += [
                ("Content-Encoding", path.compression),
                ("Accept-Encoding", path.compression),
            ]
        kind = "application/json" if header_length is None else "application/octet-stream"
        encoded.append(
            sender.encode_request(
                "POST",
                model + "/infer",
                body,
                host=parts.netloc,
                content_type=kind,
                headers=headers,
            )
        )
    return host, port, encoded


def measure_sent(
    implementation: str,
    host: str,
    port: int,
    requests: list[bytes],
    measurement: Measurement,
    *,
    connections: int,
    rate: float | None = None,
    server_cpu: Callable[[], float | None] | None = None,
    grpc: bool = False,
) -> LevelResult:
    """One level in windows, as :func:`oipcodec.bench.load.measure_level` measures it: a
    warm-up, then one sender run a window until the last three are stable or ``max_trials``
    windows were measured. A status other than 200 (gRPC: 0) counts as an error;
    ``server_cpu`` reads the server's CPU seconds at each window's edges. ``grpc``: the
    requests are ModelInferRequest messages, sent as ``connections`` streams of one HTTP/2
    connection (the twin of ``python`` is grpcio's)."""
    result = LevelResult(epoch_offset=time.time() - time.perf_counter())
    count_windows = measurement.mode == "count_windows"

    def send(count: int | None, duration: float) -> sender.SenderResult:
        if grpc:
            return sender.run_grpc(host, port, requests, 1, connections, duration=duration,
                                   count=count, rate=rate, timeout=measurement.timeout,
                                   implementation="grpcio" if implementation == "python"
                                   else implementation)  # fmt: skip
        return sender.run(host, port, requests, connections, duration=duration, count=count,
                          rate=rate, timeout=measurement.timeout,
                          implementation=implementation)  # fmt: skip

    if measurement.warmup_requests:
        send(measurement.warmup_requests, measurement.timeout)
    cpu: list[float] = []
    server: list[float | None] = []
    for _ in range(measurement.max_trials):
        started = time.perf_counter()
        before = server_cpu() if server_cpu is not None else None
        sent = send(measurement.request_count if count_windows else None, measurement.interval)
        ok = sent.status == sent.ok_status
        ends = sent.done[ok] + started  # on the perf_counter clock, as the clients' spans
        spans = [(float(e - lat), float(e)) for e, lat in zip(ends, sent.latency[ok], strict=True)]
        bad = sent.completed - int(ok.sum()) + sent.error_count
        result.errors += bad
        if bad and result.first_error is None:
            statuses = {s: n for s, n in sent.status_counts.items() if s != sent.ok_status}
            result.first_error = sent.first_error or f"the server answered with {statuses}"
        # The window is the run, to its last answer: the answers in flight at the end count.
        seconds = sent.elapsed or measurement.interval
        window = window_summary(spans, seconds, sent.cpu)
        if server_cpu is not None:
            after = server_cpu()
            used = None if after is None or before is None else after - before
            window["server_cpu_us"] = (
                used / len(spans) * 1e6 if used is not None and spans else None
            )
            server.append(used)
        result.windows.append(window)
        result.edges += [] if result.edges else [started]
        result.edges.append(time.perf_counter())
        result.spans += spans
        cpu.append(sent.cpu)
        if not spans or stable(result.windows, measurement):
            break
    result.stable = stable(result.windows, measurement)
    # As the clients' measurement: the spans and the CPU of the reported (last three) windows.
    kept = sum(w["requests"] for w in result.windows[-STABILITY_WINDOWS:])
    result.spans = result.spans[len(result.spans) - kept :]
    result.cpu_seconds = sum(cpu[-STABILITY_WINDOWS:])
    result.cpu_top_seconds = result.cpu_seconds
    reported = server[-STABILITY_WINDOWS:]
    if reported and all(v is not None for v in reported):
        result.server_cpu_seconds = sum(v for v in reported if v is not None)
    return result
