"""The streaming workload of ``oipcodec bench --streaming``: closed-loop streams of a model
that answers one request with many responses, over REST ``generate_stream`` (server-sent
events) and gRPC ``ModelStreamInfer``, with the figures streaming users compare, named as
AIPerf names them: time to first response (TTFT), inter-response latency (ITL), responses/s
per stream and per server, and the stream's (request's) latency; CPU per response on each
side. The worker runs :func:`measure_streams`; the table and the CSV come from
:func:`render_stream_table` and :func:`stream_csv_rows`.
"""

from __future__ import annotations

import itertools
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from oipcodec.bench.connection import Connection
from oipcodec.bench.cpu import CpuReader
from oipcodec.bench.paths.refusal import NOT_SUPPORTED

__all__ = [
    "STREAM_PATHS",
    "STREAM_CSV_COLUMNS",
    "StreamPath",
    "measure_streams",
    "render_stream_table",
    "stream_csv_rows",
    "stream_request",
]


@dataclass(frozen=True)
class StreamPath:
    name: str
    label: str
    protocol: str
    #: What a server that refuses the path lacks (the "not supported" reason says it).
    route: str


STREAM_PATHS: dict[str, StreamPath] = {
    p.name: p
    for p in (
        StreamPath("rest-sse", "REST generate_stream (SSE)", "rest",
                   "no generate_stream route (Triton's generate extension)"),
        StreamPath("grpc-stream", "gRPC ModelStreamInfer", "grpc",
                   "no ModelStreamInfer"),
    )
}  # fmt: skip


# ------------------------------------------------------------------------------ the request


def stream_request(metadata: Mapping[str, Any], responses: int) -> dict[str, np.ndarray]:
    """The request that asks the model for ``responses`` responses, for a model of the form
    of Triton's decoupled examples: the first input declared ``[1]`` is sent ``responses``
    (``square_int32``'s IN: n answers n), declared ``[-1]`` it is sent ``0..responses-1``
    (``repeat_int32``'s IN: one response per element); each other input is zeros, of the
    first input's length where it is declared ``[-1]`` (repeat_int32's DELAY), else of one
    element (its WAIT). ValueError for a model of another form."""
    inputs = list(metadata.get("inputs") or [])
    name = metadata.get("name", "?")
    if not inputs:
        raise ValueError(f"model {name!r} declares no inputs: streaming needs its request form")
    arrays: dict[str, np.ndarray] = {}
    length = responses
    for index, spec in enumerate(inputs):
        shape = [int(d) for d in spec.get("shape", [])]
        dtype = _NUMPY.get(str(spec.get("datatype")))
        if dtype is None or shape not in ([1], [-1]):
            raise ValueError(
                f"model {name!r} input {spec.get('name')!r} is {spec.get('datatype')} "
                f"{shape}: --streaming sends models of square_int32's or repeat_int32's form "
                "(integer inputs of shape [1] or [-1])"
            )
        if index == 0:
            values = [responses] if shape == [1] else list(range(responses))
            length = len(values)
            arrays[spec["name"]] = np.array(values, dtype=dtype)
        else:
            arrays[spec["name"]] = np.zeros(length if shape == [-1] else 1, dtype=dtype)
    return arrays


_NUMPY = {
    "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
    "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.uint64,
}  # fmt: skip


def _as_json(arrays: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The generate extension's JSON request: a one-element input as its value, else a list."""
    return {k: (v.tolist()[0] if v.size == 1 else v.tolist()) for k, v in arrays.items()}


# ------------------------------------------------------------------------------ measuring

#: One stream, run to its end: the perf_counter time of each response.
StreamCall = Callable[[], list[float]]


def _caller(path: StreamPath, model: str, arrays: Mapping[str, np.ndarray], url: str | None,
            target: str | None, timeout: float,
            connection: Connection) -> tuple[StreamCall, Callable[[], None]]:  # fmt: skip
    """A stream call on a client of its own (one per load thread), and its close."""
    from oipcodec.client import GrpcClient, HttpClient

    clock = time.perf_counter
    if path.protocol == "rest":
        assert url is not None
        http = HttpClient(url, pool_size=1, timeout=timeout, **connection.http_options(url))
        body = _as_json(arrays)

        def rest() -> list[float]:
            return [clock() for _ in http.generate_stream(model, body)]

        return rest, http.close
    assert target is not None
    grpc = GrpcClient(target, timeout=timeout, **connection.grpc_options())

    def stream() -> list[float]:
        return [clock() for _ in grpc.infer_stream(model, dict(arrays))]

    return stream, grpc.close


@dataclass
class _Streams:
    """What a level's load threads measured."""

    #: (start, response times) of each stream begun in the window.
    streams: list[tuple[float, list[float]]] = field(default_factory=list)
    errors: int = 0
    first_error: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def _level(make: Callable[[], tuple[StreamCall, Callable[[], None]]], concurrency: int,
           seconds: float, server_cpu: CpuReader | None,
           profile: bool = False) -> dict[str, Any]:  # fmt: skip
    """``concurrency`` threads, each a stream after the other: one warm-up stream each,
    then streams begun within ``seconds``, each run to its end. ``profile``: each stream's
    send and response times (ns since the epoch) go in the summary's ``profile``, as
    perf_analyzer's profile export holds a request's several responses."""
    got = _Streams()
    ready = threading.Barrier(concurrency + 1)
    go = threading.Event()
    window: list[float] = []

    def load() -> None:
        close: Callable[[], None] | None = None
        try:
            try:  # a client that cannot be made fails as its warm-up stream would
                call, close = make()
                call()  # warm-up: the connection made, the model's first answer
            except Exception as exc:
                _failed(got, exc)
                return
            finally:
                ready.wait()  # every thread reaches it, or the level would wait forever
            go.wait()
            while time.perf_counter() < window[0]:
                start = time.perf_counter()
                try:
                    times = call()
                except Exception as exc:
                    _failed(got, exc)
                    return
                with got.lock:
                    got.streams.append((start, times))
        finally:
            if close is not None:
                close()

    threads = [threading.Thread(target=load, daemon=True) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    ready.wait()
    cpu, server = time.process_time(), server_cpu() if server_cpu else None
    begun = time.perf_counter()
    window.append(begun + seconds)
    go.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - begun
    cpu = time.process_time() - cpu
    after = server_cpu() if server_cpu else None
    server_seconds = None if server is None or after is None else after - server
    summary = _summary(got, elapsed, cpu, server_seconds) | {"concurrency": concurrency}
    if profile:
        offset = time.time() - time.perf_counter()
        summary["profile"] = {
            "requests": sorted([round((t + offset) * 1e9) for t in (start, *times)]
                               for start, times in got.streams),
            "window_boundaries": [round((t + offset) * 1e9) for t in (begun, begun + seconds)],
        }  # fmt: skip
    return summary


def _failed(got: _Streams, exc: BaseException) -> None:
    with got.lock:
        got.errors += 1
        if got.first_error is None:
            got.first_error = f"{type(exc).__name__}: {exc}"[:500]


def _percentiles(values: Iterable[float], prefix: str) -> dict[str, float]:
    data = np.asarray(list(values), dtype=float) * 1e3
    if not data.size:
        return {}
    p50, p90, p99 = np.percentile(data, [50, 90, 99])
    return {f"{prefix}_avg_ms": float(data.mean()), f"{prefix}_p50_ms": float(p50),
            f"{prefix}_p90_ms": float(p90), f"{prefix}_p99_ms": float(p99),
            f"{prefix}_max_ms": float(data.max())}  # fmt: skip


def _summary(got: _Streams, elapsed: float, cpu: float,
             server_seconds: float | None) -> dict[str, Any]:  # fmt: skip
    """A level's figures. Per server: streams and responses over the time from the window's
    start to the last stream's end. Per stream: 1 / its mean ITL (AIPerf's output token
    throughput per user), for streams of two responses or more."""
    streams = got.streams
    counts = [len(times) for _, times in streams]
    responses = sum(counts)
    ttft = [times[0] - start for start, times in streams if times]
    itl = [b - a for _, times in streams for a, b in itertools.pairwise(times)]
    per_stream = [
        (len(times) - 1) / (times[-1] - times[0])
        for _, times in streams
        if len(times) > 1 and times[-1] > times[0]
    ]
    out: dict[str, Any] = {
        "streams": len(streams),
        "responses": responses,
        "seconds": round(elapsed, 4),
        "responses_per_stream": responses / len(streams) if streams else None,
        "min_responses": min(counts) if counts else None,
        "max_responses": max(counts) if counts else None,
        "streams_per_s": len(streams) / elapsed if elapsed > 0 else 0.0,
        "responses_per_s": responses / elapsed if elapsed > 0 else 0.0,
        "responses_per_s_per_stream": float(np.mean(per_stream)) if per_stream else None,
        "client_cpu_us": _per(cpu, responses),
        "server_cpu_us": _per(server_seconds, responses),
        "errors": got.errors,
        "first_error": got.first_error,
    }
    out.update(_percentiles(ttft, "ttft"))
    out.update(_percentiles(itl, "itl"))
    out.update(_percentiles([times[-1] - start for start, times in streams if times],
                            "stream"))  # fmt: skip
    return out


def _per(seconds: float | None, responses: int) -> float | None:
    """CPU microseconds per response (None: not read, or no response)."""
    return None if seconds is None or not responses else seconds / responses * 1e6


def _refusal(path: StreamPath, error: BaseException) -> str | None:
    """The "not supported by this server" reason when the first stream was refused as a
    server without the route refuses it (HTTP 404/405/501, gRPC UNIMPLEMENTED), else None."""
    from oipcodec.errors import ServerError

    if not isinstance(error, ServerError):
        return None
    status, code = getattr(error, "status", None), getattr(error, "code", "")
    refused = status in (404, 405, 501) if path.protocol == "rest" else code == "UNIMPLEMENTED"
    if not refused:
        return None
    why = " ".join(str(error).split())[:120]
    return f"{NOT_SUPPORTED}: {path.route} (it refused the first stream: {why})"


#: The worker's turn-taking over a row list (worker._cells).
Cells = Callable[[dict[str, Any], list[str]], Iterable[str]]


def _first_stream(path: StreamPath, make: Callable[[], tuple[StreamCall, Callable[[], None]]],
                  record: dict[str, Any]) -> str | None:  # fmt: skip
    """Send one stream: None when it ran, else the error (a refusal of the route goes in
    ``record["unsupported"]`` instead)."""
    call, close = make()
    try:
        call()
    except Exception as exc:
        refused = _refusal(path, exc)
        if refused is None:
            return f"{type(exc).__name__}: {exc}"[:500]
        record["unsupported"] = refused
    finally:
        close()
    return None


def measure_streams(spec: dict[str, Any], url: str | None, target: str | None,
                    server_cpu: CpuReader | None, emit: Callable[[dict[str, Any]], None],
                    cells: Cells) -> None:  # fmt: skip
    """The worker's streaming rows: per path, the first stream checked (a refusal is the
    row's "not supported" reason), then each concurrency level; a record per path."""
    from oipcodec.client import GrpcClient, HttpClient

    model, timeout = spec["model"], spec["timeout"]
    responses = int(spec["stream_responses"])
    seconds = spec["measurement"]["interval"] * 3  # the three windows a unary row reports
    connection = Connection.from_dict(spec.get("connection"))
    metadata: Any = None
    try:
        client: Any = (
            HttpClient(url, pool_size=1, timeout=timeout, **connection.http_options(url))
            if url
            else GrpcClient(target or "", timeout=timeout, **connection.grpc_options())
        )
        try:
            metadata = dict(client.model_metadata(model, timeout=timeout))
        finally:
            client.close()
        arrays = stream_request(metadata, responses)
        problem = None
    except Exception as exc:
        arrays, problem = {}, f"{type(exc).__name__}: {exc}"[:500]
    emit({"event": "ready"})
    for name in cells(spec, spec["paths"]):
        path = STREAM_PATHS[name]
        record: dict[str, Any] = {
            "payload": model, "path": name, "implementation": spec["implementation"],
            "stream_responses": responses, "load": [], "error": None,
        }  # fmt: skip
        label = f"{spec['implementation']} {name}"

        def make(path: StreamPath = path) -> tuple[StreamCall, Callable[[], None]]:
            return _caller(path, model, arrays, url, target, timeout, connection)

        if not (url if path.protocol == "rest" else target):
            record["error"] = f"no {'URL' if path.protocol == 'rest' else 'gRPC target'}"
        else:
            # The first stream, sent even when the request could not be built (then empty):
            # a server without the route refuses it so, and the row says that instead.
            error = _first_stream(path, make, record)
            record["error"] = None if "unsupported" in record else error or problem
        for level in spec["levels"]:
            if record["error"] is None and "unsupported" not in record:
                summary = _level(make, int(level), seconds, server_cpu, spec.get("profile", False))
                summary["level"] = level
                record["load"].append(summary)
                if summary["first_error"] and not summary["streams"]:
                    record["error"] = summary["first_error"]
            emit({"event": "step", "label": f"{label} c={level:g}"})
        emit({"event": "result", "record": record})


# ------------------------------------------------------------------------------ reporting


def _fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def render_stream_table(results: dict[str, Any], width: int = 104) -> str:
    """The streaming table: per path, implementation and concurrency, a line of figures."""
    options = results["options"]
    lines = [
        "",
        f"model {options['model']}, {options['stream_responses']} responses asked per stream",
        f"  {'path':<27} {'impl':<7} {'c':>3} {'streams/s':>9} {'resp/s':>8}"
        f" {'resp/s/str':>10} {'TTFT p50':>8} {'ITL p50':>8} {'ITL p99':>8}"
        f" {'str p50':>8} {'cli us':>6} {'srv us':>6}",
    ]
    for record in results["results"]:
        path = STREAM_PATHS.get(record["path"])
        start = f"  {path.label if path else record['path']:<27} {record['implementation']:<7}"
        if record.get("unsupported"):
            lines += textwrap.wrap(f"{start} {record['unsupported']}", width,
                                   subsequent_indent=" " * 6)  # fmt: skip
            continue
        if record.get("error"):
            lines += textwrap.wrap(f"{start} error: {' '.join(record['error'].split())}",
                                   width, subsequent_indent=" " * 6)  # fmt: skip
            continue
        for entry in record["load"]:
            lines.append(
                f"{start} {entry['concurrency']:>3} {_fmt(entry['streams_per_s'], 1):>9}"
                f" {_fmt(entry['responses_per_s']):>8}"
                f" {_fmt(entry.get('responses_per_s_per_stream')):>10}"
                f" {_fmt(entry.get('ttft_p50_ms'), 2):>8} {_fmt(entry.get('itl_p50_ms'), 3):>8}"
                f" {_fmt(entry.get('itl_p99_ms'), 3):>8} {_fmt(entry.get('stream_p50_ms'), 2):>8}"
                f" {_cpu(entry, 'client_cpu_us'):>6} {_cpu(entry, 'server_cpu_us'):>6}"
            )
            if entry.get("responses_per_stream") != record["stream_responses"]:
                lines.append(
                    f"      responses per stream {entry.get('min_responses')}.."
                    f"{entry.get('max_responses')}, asked {record['stream_responses']}"
                )
            if entry.get("errors"):
                lines.append(f"      {entry['errors']} failed streams, the first: "
                             f"{' '.join(str(entry['first_error']).split())[:200]}")  # fmt: skip
    lines.append("")
    note = (
        "Closed loop: c streams at a time, each begun as the last ended, for 3 windows. "
        "resp/s = responses per second from the server (all streams), resp/s/str = per "
        "stream (1 / its mean ITL); TTFT = time to first response, ITL = inter-response "
        "latency, str = a stream's latency (request to last response), ms; cli us / srv us "
        "= CPU microseconds per response of the client and the server (n/a: not read). "
        "Every percentile (p50, p90, p99, max): results.json."
    )
    lines += textwrap.wrap(note, width, break_on_hyphens=False)
    return "\n".join(lines)


def _cpu(entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    return "n/a" if value is None else _fmt(value, 1)


#: The streaming CSV's columns (AIPerf's metric names, in its units: ms).
STREAM_CSV_COLUMNS = (
    "Model", "Path", "Implementation", "Concurrency", "Streams", "Responses",
    "Responses/Stream", "Request Throughput (streams/s)", "Response Throughput (responses/s)",
    "Response Throughput Per Stream (responses/s)", "Time To First Response avg (ms)",
    "Time To First Response p50 (ms)", "Time To First Response p99 (ms)",
    "Inter Response Latency avg (ms)", "Inter Response Latency p50 (ms)",
    "Inter Response Latency p99 (ms)", "Request Latency avg (ms)", "Request Latency p50 (ms)",
    "Request Latency p99 (ms)", "Client CPU us/response", "Server CPU us/response", "Errors",
)  # fmt: skip


def stream_csv_rows(results: dict[str, Any]) -> list[list[str]]:
    """The streaming CSV: a header, then a row per measured path, implementation and level."""
    rows = [list(STREAM_CSV_COLUMNS)]
    keys = ("ttft_avg_ms", "ttft_p50_ms", "ttft_p99_ms", "itl_avg_ms", "itl_p50_ms",
            "itl_p99_ms", "stream_avg_ms", "stream_p50_ms", "stream_p99_ms")  # fmt: skip
    for record in results["results"]:
        for entry in record.get("load", []):
            if not entry.get("streams"):
                continue
            rows.append([
                record["payload"], record["path"], record["implementation"],
                str(entry["concurrency"]), str(entry["streams"]), str(entry["responses"]),
                _text(entry.get("responses_per_stream"), 2), _text(entry["streams_per_s"], 2),
                _text(entry["responses_per_s"], 1),
                _text(entry.get("responses_per_s_per_stream"), 1),
                *(_text(entry.get(key), 4) for key in keys),
                _text(entry.get("client_cpu_us"), 2), _text(entry.get("server_cpu_us"), 2),
                str(entry.get("errors", 0)),
            ])  # fmt: skip
    return rows


def _text(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"
