"""One implementation's measurements, run in a subprocess of ``oipcodec bench``.

    python -m oipcodec.bench.worker '<spec as JSON>'

The parent sets ``OIPCODEC_PURE`` in this process's environment, so the kernels chosen here
(and in the embedded server this process starts, which inherits the environment) are the
implementation being measured. Progress and results go to stdout as JSON lines; the process
exits when its stdin closes (the parent is gone) or on SIGTERM, stopping its server.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import json
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from oipcodec import kernels
from oipcodec.bench.connection import Connection
from oipcodec.bench.cpu import CpuReader, child_pids, proc_reader, url_reader
from oipcodec.bench.encoding import PATHS, Encoding, EncodingPath
from oipcodec.bench.load import Measurement, Schedule, measure_level, summarize, time_call
from oipcodec.bench.paths import (
    NOT_SUPPORTED,
    OurClients,
    codec_only,
    codec_ops,
    make_caller,
    release,
    same_values,
    server_refusal,
    supported,
    v1_model_name,
)
from oipcodec.bench.paths.peers import SERVER_PEERS
from oipcodec.bench.payloads import Payload
from oipcodec.bench.sending import measure_sent, requests_for, sent_by
from oipcodec.bench.serverstats import breakdown, reader
from oipcodec.bench.workload import (
    Declared,
    Workload,
    WorkloadError,
    echo_workload,
    echoed,
    model_workload,
    read_input_data,
    read_metadata,
)
from oipcodec.raw import array_to_raw
from oipcodec.server.metadata import SYSTEM_SHARED_MEMORY
from oipcodec.types import InferRequest

__all__ = ["main"]

_out_lock = threading.Lock()


def emit(event: dict[str, Any]) -> None:
    with _out_lock:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()


#: A line from the parent for each turn (a row of the grid) this worker may measure.
_TURNS: queue.Queue[bytes] = queue.Queue()


def _exit_when_orphaned() -> None:
    """The parent holds our stdin open and writes a line per turn; EOF means it is gone, so
    stop at once (the server subprocess notices our exit on its own pipe and stops too)."""
    try:
        for line in sys.stdin.buffer:
            _TURNS.put(line)
    except (OSError, ValueError):
        pass
    os._exit(3)


def _cells(spec: dict[str, Any], items: list[str]) -> Iterator[str]:
    """``items`` one turn each: with ``turns`` in the spec, each waits for the parent's
    line before it is measured and says ``turn_done`` after, so the parent can have the
    implementations take turns row by row (A B C A B C) and a change of the machine's load
    falls on each alike."""
    for item in items:
        if spec.get("turns"):
            _TURNS.get()
        yield item
        if spec.get("turns"):
            emit({"event": "turn_done"})


def _front_ends(spec: dict[str, Any]) -> dict[str, str] | None:
    """The embedded server's ``http_protocol`` and ``grpc_impl`` (None: no embedded server):
    those asked for, but oipcodec's protocol and grpcio in place of the native front ends
    where this process's kernels are pure (the server inherits its kernels). Decided here
    rather than left to the server, which would fall back the same way but say so only in a
    log line: results.json says which front ends each implementation's rows measured."""
    if spec.get("url") or spec.get("grpc_target") or spec["implementation"] in SERVER_PEERS:
        return None  # a peer server's codec is timed in-process: ours would not be measured
    from oipcodec.server.h2.grpc_server import native_grpc_available
    from oipcodec.server.http11.native import native_protocol_available

    http, grpc = spec["http_protocol"], spec["grpc_impl"]
    if http == "native" and not native_protocol_available():
        http = "oipcodec"
    if grpc == "native" and not native_grpc_available():
        grpc = "grpcio"
    return {"http_protocol": http, "grpc_impl": grpc}


@contextlib.contextmanager
def _server(spec: dict[str, Any]) -> Iterator[tuple[str | None, str | None, CpuReader | None]]:
    """The server's URL, gRPC target and the reader of its CPU seconds (None: not readable)."""
    front_ends = _front_ends(spec)
    if front_ends is None:
        url = spec.get("url")
        cpu = None
        if url:
            connection = Connection.from_dict(spec.get("connection"))
            options = connection.http_options(url)
            cpu = url_reader(url, options["headers"], options["ssl_context"])
        yield url, spec.get("grpc_target"), cpu
        return
    from oipcodec.bench.paths import v1_models
    from oipcodec.server.demo import demo_models
    from oipcodec.testing import background

    # 127.0.0.1 only; free ports; stopped when the block exits (error and SIGTERM included).
    # The shared-memory extension is on, for the shm path (regions of this process only).
    # --model-module: its models are served instead of the demo models (its folder is on this
    # process's path: the parent runs it with `python -m` from the working directory, and the
    # server's processes inherit the path). The v1 paths' typed identity models join them.
    module = spec.get("model_module")
    models = [*([] if module else demo_models()), *v1_models()]
    with background(models, host="127.0.0.1", timeout=120.0, shared_memory="system",
                    model_module=module, http_protocol=front_ends["http_protocol"],
                    grpc_impl=front_ends["grpc_impl"]) as server:  # fmt: skip
        # Its processes are this process's only children yet (no load process started).
        yield server.http_url, server.grpc_address, proc_reader(child_pids(os.getpid()))


def _workloads(spec: dict[str, Any], ours: OurClients | None, url: str | None,
               target: str | None) -> list[Workload]:  # fmt: skip
    """The rows' workloads: the model's generated request when it declares its inputs (its
    metadata given by an earlier worker, else read from the server), else one echo workload
    per payload. Raises WorkloadError when the request cannot be built."""
    model: str = spec["model"]
    metadata = spec.get("metadata")
    if metadata is None and ours is not None:
        try:
            metadata = read_metadata(model, url, target, spec["timeout"], ours)
        except Exception:  # no such model, no metadata: the first request says why
            metadata = None
    workload = None
    if metadata is not None:
        workload = model_workload(
            metadata,
            {name: tuple(dims) for name, dims in spec.get("shapes", {}).items()},
            spec.get("batch_size", 1),
            read_input_data(spec["input_data"]) if spec.get("input_data") else None,
        )
    if workload is None:
        return [
            echo_workload(Payload(item["name"], item["datatype"], tuple(item["shape"]), ""), model)
            for item in spec["payloads"]
        ]
    emit({"event": "workload", "metadata": metadata,
          "payload": {"name": workload.payload.name, **workload.payload.as_dict(),
                      "inputs": [Declared(t.name, t.datatype, t.shape).as_dict()
                                 for t in workload.inputs],
                      "outputs": [d.as_dict() for d in workload.outputs]}})  # fmt: skip
    if ours is not None:
        _probe(workload, ours)
    return [workload]


def _extensions(ours: OurClients | None) -> list[str] | None:
    """The extensions the server's metadata lists (``GET /v2``, else gRPC ServerMetadata), or
    None when it cannot be asked (the rows' first requests then say what the server takes)."""
    client = None if ours is None else (ours.http or ours.grpc)
    if client is None:
        return None
    try:
        return [str(name) for name in client.server_metadata().get("extensions", [])]
    except Exception:
        return None


def _without_shared_memory(offered: list[str] | None) -> str | None:
    """Why the server takes no shared-memory request (its metadata does not list the system
    shared-memory extension), or None (it does, or it cannot be asked: the rows then say)."""
    if offered is None or SYSTEM_SHARED_MEMORY in offered:
        return None
    return (
        f"{NOT_SUPPORTED}: no system shared-memory extension (its metadata (GET /v2) does not "
        f"list {SYSTEM_SHARED_MEMORY}; oipcodec serve --shared-memory system offers it)"
    )


def _probe(workload: Workload, ours: OurClients) -> None:
    """Send each of the workload's requests once with oipcodec's client: the answers size the
    shared-memory output regions, and the first is the response the codec timings use. A
    failure leaves the answer empty (each row's own first request then reports the error)."""
    answers = []
    for inputs in workload.requests:
        request = InferRequest(inputs, model_name=workload.model)
        try:
            if ours.http is not None:  # JSON: every OIP server takes it
                response = ours.http.infer_request(request, False)
            else:
                assert ours.grpc is not None
                response = ours.grpc.infer_request(request)
        except Exception:
            return
        answers.append(response.outputs)
    workload.answer = list(answers[0])
    for outputs in answers:
        for output in outputs:
            size = len(array_to_raw(output.data, output.datatype))
            workload.region_sizes[output.name] = max(
                size, workload.region_sizes.get(output.name, 0)
            )


def _measure(spec: dict[str, Any], url: str | None, target: str | None,
             server_cpu: CpuReader | None = None) -> None:  # fmt: skip
    implementation: str = spec["implementation"]
    timeout: float = spec["timeout"]
    levels: list[float] = spec["levels"]
    ours = None
    if url or target:
        connection = Connection.from_dict(spec.get("connection"))
        clients = max(levels) if spec["mode"] == "concurrency" else spec["max_threads"]
        ours = OurClients(url, target, int(clients), timeout, connection)
    try:
        workloads = _workloads(spec, ours, url, target)
        offered = _extensions(ours)
        no_shm = _without_shared_memory(offered)
        emit({"event": "ready"})
        for round_number, workload in _rounds(spec, workloads):
            payload = workload.payload
            payload_bytes = sum(len(array_to_raw(t.data, t.datatype)) for t in workload.inputs)
            answer_bytes = sum(len(array_to_raw(t.data, t.datatype)) for t in workload.answer)
            for path_name in _cells(spec, spec["paths"]):
                path = PATHS[path_name]
                record: dict[str, Any] = {
                    "round": round_number,
                    "payload": payload.name,
                    "path": path.name,
                    "implementation": implementation,
                    "payload_bytes": payload_bytes,
                    "load": [],
                    "error": None,
                }
                reason = supported(implementation, path, workload.datatypes(), workload.echo)
                if reason is None and path.encoding is Encoding.SHARED_MEMORY:
                    reason = no_shm
                if reason is not None:  # a record all the same: the table says why not
                    emit({"event": "result", "record": {**record, "unsupported": reason}})
                    continue
                label = f"{implementation} {payload.name} {path.name}"
                no_load = codec_only(implementation, path, url, target)
                if no_load is None and (
                    (path.protocol == "rest" and not url)
                    or (path.protocol == "grpc" and not target)
                ):
                    record["error"] = f"no {'URL' if path.protocol == 'rest' else 'gRPC target'}"
                    emit({"event": "step", "label": label, "steps": len(levels) + 1})
                    emit({"event": "result", "record": record})
                    continue
                if round_number == 0:
                    # Timed in the first round only: the merged row keeps that round's codec
                    # figures, and later rounds spend their time on the load.
                    _time_codec(record, implementation, path, workload, spec["codec_budget"],
                                payload_bytes)  # fmt: skip
                emit({"event": "step", "label": f"{label} codec"})
                if no_load is not None:
                    record["codec_only"] = no_load
                    emit({"event": "result", "record": record})
                    continue
                if record["error"] is None:
                    record["error"] = _check(implementation, path, workload, ours, url, target,
                                             timeout, offered)  # fmt: skip
                if (record["error"] or "").startswith(NOT_SUPPORTED):
                    # One row saying why, not an error: the server lacks what the path needs.
                    emit({"event": "step", "label": label, "steps": len(levels)})
                    reason = record["error"]
                    emit({"event": "result",
                          "record": {**record, "error": None, "unsupported": reason}})  # fmt: skip
                    continue
                checked = record["error"] is None
                read_stats = _stats_reader(ours, path, workload) if checked else None
                # --sender: the REST and gRPC rows of our implementations loaded by the sender.
                by = sent_by(spec.get("sender"), implementation, path, url,
                             spec.get("connection"), target)  # fmt: skip
                sent = (
                    (by, *requests_for(path, workload, url, target), path.protocol) if by else None
                )
                threshold = spec.get("latency_threshold")
                for level in levels:
                    if record["error"] is None and not record.get("threshold_reached"):

                        def factory(path: Any = path, workload: Any = workload) -> Any:
                            return make_caller(
                                implementation, path, workload, ours, url, target, timeout
                            )

                        build = functools.partial(
                            _load_process_callers, implementation, path.name, workload, url,
                            target, timeout, int(level) if spec["mode"] == "concurrency"
                            else spec["max_threads"], spec.get("connection"),
                        )  # fmt: skip
                        before = read_stats() if read_stats is not None else None
                        summary = _measure_level(spec, factory, level, payload_bytes,
                                                 answer_bytes, build, sent,
                                                 server_cpu)  # fmt: skip
                        if read_stats is not None and before is not None:
                            summary["server"] = breakdown(before, read_stats())
                            summary["server_breakdown"] = _breakdown_us(summary["server"])
                        record["load"].append(summary)
                        if summary.get("first_error") and not summary["requests"]:
                            record["error"] = summary["first_error"]
                        latency = summary.get(_threshold_key(spec))
                        if threshold is not None and latency is not None and latency > threshold:
                            # perf_analyzer's --latency-threshold: the sweep stops here.
                            record["threshold_reached"] = level
                    emit({"event": "step", "label": f"{label} {_level_name(spec, level)}"})
                emit({"event": "result", "record": record})
    finally:
        if ours is not None:
            ours.close()
        release()


def _time_codec(record: dict[str, Any], implementation: str, path: EncodingPath,
                workload: Workload, budget: float, payload_bytes: int) -> None:  # fmt: skip
    """The row's codec-only figures (``codec_us``, the bodies' sizes) into ``record``, or
    its ``error`` when the codec fails."""
    try:
        ops = codec_ops(implementation, path, workload)
        codec = {
            name: time_call(call, budget) * 1e6
            for name, call in (
                ("client_encode", ops.client_encode),
                ("client_decode", ops.client_decode),
                ("server_decode", ops.server_decode),
                ("server_encode", ops.server_encode),
            )
            if call is not None
        }
        if "client_encode" in codec:
            codec["client"] = codec["client_encode"] + codec["client_decode"]
        if "server_decode" in codec:
            codec["server"] = codec["server_decode"] + codec["server_encode"]
        # What the shared-memory path is measured against: one memcpy.
        if path.encoding is Encoding.SHARED_MEMORY:
            codec["memcpy"] = _memcpy_us(payload_bytes, budget)
        record["codec_us"] = codec
        record["request_bytes"] = ops.request_bytes
        record["response_bytes"] = ops.response_bytes
    except Exception as exc:
        record["error"] = f"codec: {type(exc).__name__}: {exc}"[:500]


def _rounds(spec: dict[str, Any], workloads: list[Workload]) -> list[tuple[int, Workload]]:
    """(round, workload) in the order measured: every workload once a round."""
    return [(n, workload) for n in range(spec.get("rounds", 1)) for workload in workloads]


def _stats_reader(ours: OurClients | None, path: EncodingPath, workload: Workload) -> Any:
    """What reads the server's statistics of the model a path sends to (the v1 paths: the
    typed identity model), or None when the server offers none."""
    client = None if ours is None else (ours.http or ours.grpc)
    if client is None:
        return None
    v1_echo = path.encoding is Encoding.V1 and workload.echo
    model = v1_model_name(workload.inputs[0]) if v1_echo else workload.model
    return reader(client, model)


def _breakdown_us(server: dict[str, Any]) -> dict[str, float]:
    """The server's stages per request in µs under the CSV's keys (perf_analyzer's columns)."""
    return {
        "queue_us": server.get("Server Queue", 0.0),
        "compute_input_us": server.get("Server Compute Input", 0.0),
        "compute_infer_us": server.get("Server Compute Infer", 0.0),
        "compute_output_us": server.get("Server Compute Output", 0.0),
    }


def _level_name(spec: dict[str, Any], level: float) -> str:
    if spec["mode"] == "concurrency":
        return f"c={level:g}"
    return "intervals" if spec["mode"] == "intervals" else f"{level:g} req/s"


def _threshold_key(spec: dict[str, Any]) -> str:
    """The latency --latency-threshold compares: --percentile's, else p99."""
    percentile = spec["measurement"].get("percentile")
    return f"p{99 if percentile is None else percentile:g}_ms"


def load_processes(spec: dict[str, Any], level: float) -> int:
    """The level's load processes: ``--load-processes``, else one per 16 sending threads, at
    most half the CPUs (the rest for the server; on two CPUs, one process)."""
    if spec.get("load_processes"):
        return int(spec["load_processes"])
    threads = int(level) if spec["mode"] == "concurrency" else spec["max_threads"]
    return max(1, min((os.cpu_count() or 2) // 2, -(-threads // 16)))


def _load_process_callers(implementation: str, path_name: str, workload: Workload,
                          url: str | None, target: str | None, timeout: float,
                          pool: int, connection: dict[str, Any] | None = None,
                          ) -> tuple[Any, Any]:  # fmt: skip
    """In a load process of its own: oipcodec's clients (a connection pool of ``pool``, the
    run's headers and TLS) and the caller factory of the row; and what to close when the
    process is done."""
    ours = (
        OurClients(url, target, pool, timeout, Connection.from_dict(connection))
        if url or target
        else None
    )

    def factory() -> Any:
        return make_caller(implementation, PATHS[path_name], workload, ours, url, target,
                           timeout)  # fmt: skip

    def cleanup() -> None:
        if ours is not None:
            ours.close()
        release()

    return factory, cleanup


def _measure_level(spec: dict[str, Any], factory: Any, level: float, payload_bytes: int,
                   answer_bytes: int, build: Any = None,
                   sent: tuple[str, str, int, list[bytes], str] | None = None,
                   server_cpu: CpuReader | None = None) -> dict[str, Any]:  # fmt: skip
    """One level's windows, summarised; with ``profile`` set, every measured request's send
    and answer times (ns since the epoch) and the windows' edges go in its ``profile``.
    ``sent`` (sender, host, port, requests, protocol): the load comes from
    oipcodec.bench.sender."""
    measurement = Measurement(**spec["measurement"], timeout=spec["timeout"])
    schedule = None
    if spec["mode"] == "request_rate":
        schedule = Schedule(rate=level, distribution=spec["request_distribution"])
    elif spec["mode"] == "intervals":
        schedule = Schedule(intervals=spec["request_intervals"])
    # The sender's schedule is constant only: Poisson and interval files keep the clients.
    constant = spec["mode"] == "concurrency" or spec["request_distribution"] == "constant"
    by_sender = sent is not None and spec["mode"] != "intervals" and constant
    if sent is not None and by_sender:
        closed = spec["mode"] == "concurrency"
        by, host, port, requests, protocol = sent
        result = measure_sent(by, host, port, requests, measurement,
                              connections=int(level) if closed else spec["max_threads"],
                              rate=None if closed else level, server_cpu=server_cpu,
                              grpc=protocol == "grpc")  # fmt: skip
    else:
        result = measure_level(factory, measurement, concurrency=int(level), schedule=schedule,
                               max_threads=spec["max_threads"],
                               processes=load_processes(spec, level), build=build,
                               server_cpu=server_cpu)  # fmt: skip
    summary = summarize(result, payload_bytes, answer_bytes)
    key = "concurrency" if spec["mode"] == "concurrency" else "request_rate"
    summary = {
        key: level,
        "level": level,
        **summary,
        "sender": sent[0] if sent and by_sender else "client",
    }
    if spec.get("profile"):
        offset_ns = round(result.epoch_offset * 1e9)

        def ns(seconds: float) -> int:
            return round(seconds * 1e9) + offset_ns

        summary["profile"] = {
            "requests": sorted([ns(start), ns(end)] for start, end in result.spans),
            "window_boundaries": [ns(edge) for edge in result.edges[-4:]],
        }
    return summary


def _memcpy_us(size: int, budget: float) -> float:
    """Microseconds of one copy of ``size`` bytes between two arrays (numpy copyto)."""
    source = np.ones(size, np.uint8)
    target = np.empty_like(source)
    return time_call(lambda: np.copyto(target, source), budget) * 1e6


def _check(implementation: str, path: EncodingPath, workload: Workload, ours: Any, url: str | None,
           target: str | None, timeout: float,
           offered: list[str] | None = None) -> str | None:  # fmt: skip
    """Send the first request once: None when the answer holds the declared outputs (and,
    for the identity model, the values sent), else why not (an error or a wrong answer is
    reported, not measured as a fast path; a refusal of a path the server lacks is the
    "not supported by this server" reason, ``offered`` its listed extensions)."""
    try:
        caller = make_caller(implementation, path, workload, ours, url, target, timeout)
        answer = caller()
    except Exception as exc:
        refused = server_refusal(path, exc, offered)
        if refused is not None:
            return refused
        return f"{type(exc).__name__}: {exc}"[:500]
    if workload.echo:
        (sent,) = workload.inputs
        back = echoed(workload, {o.name: o for o in answer}).get(sent.name)
        if back is None or not same_values(sent, back.data):
            return "the answer does not hold the values sent"
    return None


def _peer_version(implementation: str) -> str | None:
    """The installed version of a peer (results.json keeps it), None for oipcodec's own."""
    if implementation in ("native", "pure"):
        return None
    try:
        return importlib.metadata.version(implementation)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(args[0])

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    threading.Thread(target=_exit_when_orphaned, daemon=True).start()
    emit({"event": "start", "implementation": spec["implementation"],
          "kernels": kernels.IMPLEMENTATION, "pid": os.getpid(),
          "peer_version": _peer_version(spec["implementation"])})  # fmt: skip
    started = time.perf_counter()
    try:
        with contextlib.ExitStack() as stack:
            try:
                url, target, server_cpu = stack.enter_context(_server(spec))
            except Exception as exc:  # e.g. a --model-module that cannot be imported
                emit({"event": "fatal", "message": f"the embedded server did not start: {exc}"})
                return 2
            emit({"event": "server", "url": url, "grpc_target": target,
                  "front_ends": _front_ends(spec),
                  "seconds": time.perf_counter() - started})  # fmt: skip
            if spec.get("streaming"):
                from oipcodec.bench.stream_load import measure_streams

                measure_streams(spec, url, target, server_cpu, emit, _cells)
            else:
                _measure(spec, url, target, server_cpu)
    except WorkloadError as exc:  # the run cannot go on: one clear line, status 2
        emit({"event": "fatal", "message": str(exc)})
        return 2
    except KeyboardInterrupt:
        emit({"event": "interrupted"})
        return 130
    emit({"event": "done", "seconds": time.perf_counter() - started})
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: the thread watching stdin would hold its lock through interpreter
    # shutdown. Everything to clean up (the server) is already stopped here.
    os._exit(status)
