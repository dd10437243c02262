"""The ``oipcodec bench`` driver: one worker subprocess per implementation, a progress bar,
then the table, results.json and the chart."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from oipcodec import __version__
from oipcodec.bench.encoding import PATHS
from oipcodec.bench.load import level_label, level_of, read_intervals, run_levels
from oipcodec.bench.paths import (
    DESCRIPTIONS,
    IMPLEMENTATIONS,
    PEER_CODEC_ECHO_ONLY,
    codec_only,
    peer_available,
    supported,
)
from oipcodec.bench.paths.peers import SERVER_PEERS
from oipcodec.bench.payloads import PAYLOADS, QUICK_PAYLOADS, Payload
from oipcodec.bench.workload import read_input_data
from oipcodec.errors import BenchError

__all__ = ["BenchError", "BenchOptions", "run"]


@dataclass
class BenchOptions:
    """What to measure; ``oipcodec bench --help`` documents each."""

    payloads: list[Payload] = field(default_factory=list)
    paths: list[str] = field(default_factory=lambda: list(PATHS))
    implementations: list[str] = field(default_factory=lambda: list(IMPLEMENTATIONS))
    #: Closed-loop levels (used when no request rate or intervals file is given).
    concurrency: list[int] = field(default_factory=lambda: [1, 8])
    #: Open loop: requests/s levels (``--request-rate``), sent ``request_distribution``.
    request_rates: list[float] = field(default_factory=list)
    request_distribution: str = "constant"
    #: Open loop from perf_analyzer's ``--request-intervals`` file (microseconds a line).
    request_intervals: str | None = None
    #: Open loop: the threads that send (a request due while all are busy waits, and its
    #: latency counts the wait).
    max_threads: int = 16
    #: Processes that send (each its own GIL); None: one per 16 threads, at most half the
    #: CPUs.
    load_processes: int | None = None
    #: Stop the sweep after the first level whose p99 (or --percentile) latency passes this.
    latency_threshold: float | None = None
    #: Seconds per measurement window (``--measurement-interval`` in ms).
    duration: float = 1.0
    measurement_mode: str = "time_windows"
    measurement_request_count: int = 50
    stability_percentage: float = 10.0
    max_trials: int = 10
    #: The latency that decides stability (None: the average, perf_analyzer's default) and
    #: that ``latency_threshold`` compares (None: p99, the tail a threshold is about).
    percentile: float | None = None
    #: Completions before the first window; None: twice the level's threads.
    warmup_requests: int | None = None
    codec_budget: float = 0.15
    url: str | None = None
    grpc_target: str | None = None
    model: str = "identity"
    #: ``--shape NAME:dims`` of a model's inputs: the sizes of their ``-1`` dimensions.
    shapes: dict[str, list[int]] = field(default_factory=dict)
    #: The batch dimension of a batching model's requests (perf_analyzer's ``-b``).
    batch_size: int = 1
    #: ``--input-data FILE``: the requests' values, in perf_analyzer's JSON form.
    input_data: str | None = None
    #: A module whose ``MODELS`` the embedded server serves too (``--model-module``).
    model_module: str | None = None
    timeout: float = 60.0
    #: Headers and TLS for a server given by --url / --grpc-target (bench.connection's
    #: Connection, as a dict).
    connection: dict[str, Any] = field(default_factory=dict)
    output_dir: str = "oipcodec-bench"
    chart: bool = True
    quick: bool = False
    #: ``--csv FILE``: perf_analyzer's -f layout (its verbose columns) plus oipcodec's.
    csv: str | None = None
    #: ``--profile-export FILE``: every measured request, perf_analyzer's profile schema.
    profile_export: str | None = None
    #: The codec columns (wire kB, client and server codec us) in the table.
    wide: bool = False

    def mode(self) -> str:
        """``concurrency``, ``request_rate`` or ``intervals``."""
        if self.request_intervals is not None:
            return "intervals"
        return "request_rate" if self.request_rates else "concurrency"

    def levels(self) -> list[float]:
        """The levels swept: concurrencies, request rates, or the intervals file's one."""
        mode = self.mode()
        if mode == "intervals":
            return [0]
        if mode == "request_rate":
            return list(self.request_rates)
        return [int(c) for c in self.concurrency]

    @classmethod
    def quick_defaults(cls) -> BenchOptions:
        return cls(
            payloads=[PAYLOADS[name] for name in QUICK_PAYLOADS],
            duration=0.2,
            max_trials=5,
            codec_budget=0.03,
            quick=True,
        )


# ------------------------------------------------------------------------------ progress


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal; elsewhere a line
    per implementation and at the end, so logs stay short)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.perf_counter()
        self.label = ""

    def step(self, count: int = 1, label: str = "") -> None:
        self.done = min(self.total, self.done + count)
        self.label = label or self.label
        if self.tty:
            self._draw()

    def note(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
        self.stream.write(text + "\n")
        self.stream.flush()
        if self.tty:
            self._draw()

    def _draw(self) -> None:
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = time.perf_counter() - self.started
        line = (
            f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
            f"{elapsed:5.0f}s  {self.label}"
        )
        self.stream.write("\r\033[K" + line[:119])
        self.stream.flush()

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
        elapsed = time.perf_counter() - self.started
        self.stream.write(f"measured {self.done}/{self.total} steps in {elapsed:.1f} s\n")
        self.stream.flush()


# ------------------------------------------------------------------------------ workers


def _steps(options: BenchOptions, implementation: str) -> int:
    count = 0
    for payload in options.payloads:
        for name in options.paths:
            path = PATHS[name]
            if supported(implementation, path, payload.datatype) is not None:
                continue
            count += 1
            if codec_only(implementation, path, options.url, options.grpc_target) is None:
                count += len(options.levels())
    return count


def _spec(options: BenchOptions, implementation: str) -> dict[str, Any]:
    return {
        "implementation": implementation,
        "payloads": [{"name": p.name, **p.as_dict()} for p in options.payloads],
        "paths": options.paths,
        "mode": options.mode(),
        "levels": options.levels(),
        "request_distribution": options.request_distribution,
        "request_intervals": (
            read_intervals(options.request_intervals) if options.request_intervals else None
        ),
        "max_threads": options.max_threads,
        "load_processes": options.load_processes,
        "latency_threshold": options.latency_threshold,
        "measurement": {
            "mode": options.measurement_mode,
            "interval": options.duration,
            "request_count": options.measurement_request_count,
            "max_trials": options.max_trials,
            "stability": options.stability_percentage / 100,
            "percentile": options.percentile,
            "warmup_requests": _warmup(options),
        },
        "profile": options.profile_export is not None,
        "codec_budget": options.codec_budget,
        "url": options.url,
        "grpc_target": options.grpc_target,
        "model": options.model,
        "shapes": options.shapes,
        "batch_size": options.batch_size,
        "input_data": options.input_data,
        "model_module": options.model_module,
        "timeout": options.timeout,
        "connection": options.connection,
    }


def _warmup(options: BenchOptions) -> int:
    """Warm-up completions per level: as given, else one per sending thread (each opens its
    connection and fills its caches before a window counts)."""
    if options.warmup_requests is not None:
        return options.warmup_requests
    if options.mode() == "concurrency":
        return max(options.concurrency)
    return 1


def _environment(implementation: str) -> dict[str, str]:
    env = dict(os.environ)
    env["OIPCODEC_PURE"] = "1" if implementation == "pure" else "0"
    return env


def _run_worker(
    options: BenchOptions,
    implementation: str,
    progress: Progress,
    records: list[dict[str, Any]],
    model: dict[str, Any],
) -> dict[str, Any]:
    """Run one implementation's worker to the end; its records are appended to ``records``
    as they come. ``model`` holds what a worker read about a model that declares its inputs
    (``metadata``, ``payload``): a worker reports it, the next ones are given it. Returns
    what the worker said about itself; raises BenchError when the worker could not build
    the model's request."""
    steps = _steps(options, implementation)
    # A hard bound on the whole worker, far above what its windows add up to.
    # A window is at most 25 intervals (time windows waiting for a slow row's answers).
    window = options.duration * 25
    limit = (
        120.0
        + steps * (window * max(1, options.max_trials) + options.timeout)
        + len(options.payloads) * options.timeout
    )
    info: dict[str, Any] = {"implementation": implementation}
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "oipcodec.bench.worker",
                json.dumps({**_spec(options, implementation), "metadata": model.get("metadata")}),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=_environment(implementation),
            text=True,
        )
        timer = threading.Timer(limit, process.kill)
        timer.daemon = True
        timer.start()
        counted = 0
        try:
            assert process.stdout is not None
            for line in process.stdout:
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue
                kind = event.get("event")
                if kind == "step":
                    count = int(event.get("steps", 1))
                    counted += count
                    progress.step(count, event.get("label", ""))
                elif kind == "result":
                    records.append(event["record"])
                elif kind == "start":
                    info["kernels"] = event.get("kernels")
                    if event.get("peer_version"):
                        info["version"] = event["peer_version"]
                elif kind == "server":
                    info["url"], info["grpc_target"] = event.get("url"), event.get("grpc_target")
                    info["startup_seconds"] = round(event.get("seconds", 0.0), 2)
                elif kind == "workload":
                    model["metadata"], model["payload"] = event["metadata"], event["payload"]
                elif kind == "fatal":
                    info["fatal"] = event["message"]
                elif kind == "done":
                    info["seconds"] = round(event.get("seconds", 0.0), 2)
            process.wait(timeout=30)
        except BaseException:
            _stop(process)
            raise
        finally:
            timer.cancel()
            if process.stdin is not None:
                process.stdin.close()
        progress.step(max(0, steps - counted))
        if "fatal" in info:
            raise BenchError(info["fatal"])
        if process.returncode != 0:
            errors.seek(0)
            tail = errors.read()[-2000:]
            info["error"] = f"worker exited with status {process.returncode}"
            progress.note(
                f"{implementation}: worker exited with status {process.returncode}\n{tail}"
            )
    return info


def _stop(process: subprocess.Popen[str]) -> None:
    """Stop a worker: SIGTERM (it stops its server on the way out), then SIGKILL."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# ------------------------------------------------------------------------------ results


def _best_load(record: dict[str, Any]) -> dict[str, Any] | None:
    """The load summary at the highest level measured."""
    loads = [entry for entry in record.get("load", []) if entry.get("requests")]
    return max(loads, key=level_of) if loads else None


def best_paths(records: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Per payload, ``path/implementation`` of the highest requests/s at the highest level,
    among the rows whose figure is not marked unstable: an unstable window crowns nothing,
    so a payload whose rows all are has no best."""
    best: dict[str, tuple[float, str]] = {}
    for record in records:
        load = _best_load(record)
        if record.get("error") or load is None or load.get("stable") is False:
            continue
        key = f"{record['path']}/{record['implementation']}"
        if record["payload"] not in best or load["rps"] > best[record["payload"]][0]:
            best[record["payload"]] = (load["rps"], key)
    return {payload: key for payload, (_, key) in best.items()}


def _fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def _one_line(message: str, limit: int = 300) -> str:
    """An error message on one line of the table (cut at ``limit`` characters)."""
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _flags(entry: dict[str, Any]) -> str:
    """``~`` never stable, ``!`` the load generator saturated (``~!`` both), else blank."""
    return ("~" if entry.get("stable") is False else "") + (
        "!" if entry.get("generator_saturated") else ""
    )


def _rate_cell(entry: dict[str, Any] | None, width: int) -> str:
    if not entry:
        return f" {'-':>{width}}  "
    if not entry.get("rps"):  # no answer in the reported windows: still say if unstable
        return f" {'-':>{width}}{_flags(entry):<2}"
    return f" {_fmt(entry['rps']):>{width}}{_flags(entry):<2}"


#: The table's width: the default fits this many columns (the codec columns on --wide).
TABLE_WIDTH = 100


def render_table(results: dict[str, Any], wide: bool | None = None) -> str:
    """The readable table: per payload, the paths in order, each path's implementations on
    adjacent rows with their requests/s against ``pure`` on the same path (``x pure``).
    At most two levels are columns (the lowest and the highest; every level is in
    results.json and the CSV); ``wide`` adds the codec columns."""
    wide = results["options"].get("wide", False) if wide is None else wide
    records = results["results"]
    mode, levels = run_levels(results)
    shown = sorted({min(levels), max(levels)}) if levels else []
    top = max(levels) if levels else 0
    best = results["best"]
    lines = []
    head = f"  {'path':<17} {'impl':<12}"
    head += "".join(f" {level_label(mode, c) + ' req/s':>11}  " for c in shown)
    head += f" {'p50 ms':>8} {'p99 ms':>8} {'MB/s':>7} {'x pure':>6}"
    if wide:
        head += f" {'wire kB':>8} {'client us':>10} {'server us':>10}"
    width = len(head) if wide else TABLE_WIDTH
    order = {name: i for i, name in enumerate(PATHS)}
    for name, payload in results["payloads"].items():
        rows = [r for r in records if r["payload"] == name]
        if not rows:
            continue
        rows.sort(key=lambda r: order.get(r["path"], len(order)))  # stable: impl order kept
        if "inputs" in payload:  # a model's generated request
            tensors = ", ".join(
                f"{t['name']} {'x'.join(map(str, t['shape']))} {t['datatype']}"
                for t in payload["inputs"]
            )
            title = f"model {name} ({tensors})"
        else:
            title = f"{name} ({'x'.join(map(str, payload['shape']))} {payload['datatype']})"
        lines.append("")
        lines.append(f"{title}; latency and MB/s at {level_label(mode, top)}")
        lines.append(head)
        pure = {r["path"]: _best_load(r) for r in rows if r["implementation"] == "pure"}
        for record in rows:
            mark = "*" if best.get(name) == f"{record['path']}/{record['implementation']}" else " "
            label = PATHS[record["path"]].label if record["path"] in PATHS else record["path"]
            start = f"{mark} {label:<17} {record['implementation']:<12}"
            if record.get("unsupported"):
                reason = record["unsupported"]
                if not reason.startswith("not supported"):  # the server's rows say it already
                    reason = f"not supported: {reason}"
                lines += _wrap(f"{start} {reason}", width)
                continue
            if record.get("error"):
                lines += _wrap(f"{start} error: {_one_line(record['error'])}", width)
                continue
            if record.get("codec_only"):
                measured = f" {record['codec_only']}"
                if wide:  # the load columns' width (14 a level, 33 the rest) less its space
                    measured = f" {record['codec_only']:<{14 * len(shown) + 32}}"
            else:
                by_level = {level_of(e): e for e in record.get("load", [])}
                load = by_level.get(top, {})
                reference = pure.get(record["path"])
                ratio = None
                if reference and reference.get("rps") and load.get("rps"):
                    ratio = load["rps"] / reference["rps"]
                measured = (
                    "".join(_rate_cell(by_level.get(c), 11) for c in shown)
                    + f" {_fmt(load.get('p50_ms'), 2):>8} {_fmt(load.get('p99_ms'), 2):>8}"
                    + f" {_fmt(load.get('mb_per_s'), 1):>7} {_fmt(ratio, 2):>6}"
                )
            line = start + measured
            if wide:
                codec = record.get("codec_us", {})
                wire = (record.get("request_bytes", 0) + record.get("response_bytes", 0)) / 1e3
                line += (
                    f" {_fmt(wire, 1):>8} {_fmt(codec.get('client')):>10}"
                    f" {_fmt(codec.get('server')):>10}"
                )
            lines.append(_cut(line.rstrip(), width))
            failed = [e for e in record.get("load", []) if e.get("errors")]
            if failed:  # some requests failed after the first answered: the first error
                count = sum(e["errors"] for e in failed)
                lines += _wrap(
                    f"    {_count(count, 'failed request')}, the first: "
                    f"{_one_line(failed[0].get('first_error', ''))}",
                    width,
                )
            if record.get("threshold_reached") is not None:
                lines.append(
                    f"    stopped after {level_label(mode, record['threshold_reached'])}: "
                    "its latency passed --latency-threshold"
                )
    lines.append("")
    lines.append(
        "(*) most requests/s for the payload at the highest level, of the stable rows. "
        "x pure = req/s"
    )
    lines.append(
        "against pure on the same path. ~ never stable: the last 3 windows differ by more than the"
    )
    options = results["options"]
    percentile = options.get("percentile")
    lines.append(
        f"stability percentage ({options.get('stability_percentage', 10):g}%) in req/s or "
        f"{'avg' if percentile is None else f'p{percentile:g}'} latency; ! the load "
        "generator used a whole core."
    )
    lines.append(
        "MB/s counts the tensor bytes both ways"
        + ("; r=N: open loop at N req/s" if mode != "concurrency" else "")
        + ". Every level and window: results.json."
    )
    if wide:
        lines.append(
            "wire kB = request + response body; client/server us = codec time per request "
            "(encode + decode), in-process."
        )
    lines += _shared_memory_note(results)
    servers = sorted({r["implementation"] for r in records} & set(SERVER_PEERS))
    if servers:
        lines.append(
            f"{' / '.join(servers)} rows: that server's own codec (decode the request, encode "
            "the answer),"
        )
        lines.append(
            "in-process; requests/s only against such a server given by --url / --grpc-target."
        )
    return "\n".join(lines)


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


#: A message's continuation lines are indented by this much.
WRAP_INDENT = " " * 6


def _wrap(line: str, width: int) -> list[str]:
    """A message row on as many lines as it takes (an error is never cut short)."""
    return textwrap.wrap(line, width, subsequent_indent=WRAP_INDENT, break_on_hyphens=False) or [
        line
    ]


#: The paths the shared-memory path is set beside in the table's closing note.
_BESIDE_SHM = ("rest-binary", "grpc-raw")


def _shared_memory_note(results: dict[str, Any]) -> list[str]:
    """Per payload and implementation with a measured ``shm`` row: its requests/s at each
    level and server codec microseconds, beside REST binary and gRPC raw, and one memcpy of
    the payload's bytes (what shared memory cannot go below)."""
    records = results["results"]
    mode, levels = run_levels(results)
    lines = []
    for record in records:
        if record["path"] != "shm" or record.get("error") or not record.get("load"):
            continue
        rows = [record] + [
            r
            for r in records
            if r["payload"] == record["payload"]
            and r["implementation"] == record["implementation"]
            and r["path"] in _BESIDE_SHM
            and not r.get("error")
            and r.get("load")
        ]
        parts = []
        for row in rows:
            by_level = {level_of(e): e.get("rps") for e in row["load"]}
            rps = " / ".join(_fmt(by_level.get(c)) for c in levels)
            server = row.get("codec_us", {}).get("server")
            codec = "" if server is None else f" (server {_fmt(server)} us)"
            parts.append(f"{PATHS[row['path']].label} {rps}{codec}")
        memcpy = record.get("codec_us", {}).get("memcpy")
        lines.append(
            f"shared memory, {record['payload']} {record['implementation']}, req/s at "
            f"{'/'.join(level_label(mode, c) for c in levels)}: " + "; ".join(parts)
        )
        lines.append(
            f"  one memcpy of its {record['payload_bytes']:,} bytes: {_fmt(memcpy, 1)} us "
            "(the copy into the region that each shm request makes)"
        )
    return lines


# ------------------------------------------------------------------------------ exports

#: perf_analyzer's ``-f`` columns with ``--verbose-csv`` and server statistics, in its order
#: (the first is ``Request Rate`` in open loop); oipcodec's columns follow.
CSV_COLUMNS = (
    "Concurrency",
    "Inferences/Second",
    "Client Send",
    "Network+Server Send/Recv",
    "Server Queue",
    "Server Compute Input",
    "Server Compute Infer",
    "Server Compute Output",
    "Client Recv",
    "p50 latency",
    "p90 latency",
    "p95 latency",
    "p99 latency",
    "Avg latency",
    "request/response",
    "response wait",
)
OIPCODEC_CSV_COLUMNS = (
    "Payload",
    "Path",
    "Implementation",
    "Stable",
    "Generator CPU",
    "Generator Saturated",
    "Max latency",
    "Client Codec us",
    "Server Codec us",
)


def csv_rows(results: dict[str, Any]) -> list[list[str]]:
    """The CSV: a header, then a row per measured record and level. Times are microseconds
    as perf_analyzer writes them. Client Send / Client Recv are the client codec's encode /
    decode time (in-process); the server columns come from the record's
    ``server_breakdown`` (0 when the server's statistics were not read)."""
    mode, _ = run_levels(results)
    header = list(CSV_COLUMNS) + list(OIPCODEC_CSV_COLUMNS)
    if mode != "concurrency":
        header[0] = "Request Rate"
    rows = [header]
    batch = int(results["options"].get("batch_size", 1) or 1)
    for record in results["results"]:
        codec = record.get("codec_us") or {}
        send = codec.get("client_encode", 0.0)
        receive = codec.get("client_decode", 0.0)
        for entry in record.get("load", []):
            if not entry.get("requests"):
                continue
            server = entry.get("server_breakdown") or {}
            queue = server.get("queue_us", 0.0)
            c_in = server.get("compute_input_us", 0.0)
            c_infer = server.get("compute_infer_us", 0.0)
            c_out = server.get("compute_output_us", 0.0)
            avg = entry["avg_ms"] * 1e3
            wait = max(0.0, avg - send - receive)
            network = max(0.0, wait - queue - c_in - c_infer - c_out)
            stable_text = {True: "yes", False: "no", None: "not checked"}[entry.get("stable")]
            values = [
                str(_number(level_of(entry))),
                f"{entry['rps'] * batch:.2f}",
                *(str(int(v)) for v in (send, network, queue, c_in, c_infer, c_out, receive)),
                *(str(int(entry[f"p{p}_ms"] * 1e3)) for p in (50, 90, 95, 99)),
                str(int(avg)),
                str(int(send + receive)),
                str(int(wait)),
                record["payload"],
                record["path"],
                record["implementation"],
                stable_text,
                f"{entry.get('generator_cpu', 0.0):.2f}",
                "yes" if entry.get("generator_saturated") else "no",
                str(int(entry["max_ms"] * 1e3)),
                f"{codec.get('client', 0.0):.1f}",
                f"{codec.get('server', 0.0):.1f}",
            ]
            rows.append(values)
    return rows


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def write_csv(results: dict[str, Any], path: Path) -> None:
    """Write :func:`csv_rows` to ``path``."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(csv_rows(results))


def profile_document(results: dict[str, Any]) -> dict[str, Any]:
    """perf_analyzer's profile export: an experiment per record and level, each request's
    send timestamp and its response's (ns since the epoch; in open loop the send timestamp is
    the request's scheduled time, from which its latency counts), and the windows' edges.
    Each experiment names its payload, path and implementation under ``oipcodec``."""
    mode, _ = run_levels(results)
    experiments = []
    sequence = 0
    for record in results["results"]:
        for entry in record.get("load", []):
            profile = entry.get("profile")
            if not profile:
                continue
            requests = []
            for start, end in profile["requests"]:
                sequence += 1
                requests.append(
                    {"timestamp": start, "sequence_id": sequence, "response_timestamps": [end]}
                )
            experiments.append(
                {
                    "experiment": {
                        "mode": "concurrency" if mode == "concurrency" else "request_rate",
                        "value": _number(level_of(entry)),
                    },
                    "requests": requests,
                    "window_boundaries": profile.get("window_boundaries", []),
                    "oipcodec": {
                        "payload": record["payload"],
                        "path": record["path"],
                        "implementation": record["implementation"],
                        "stable": entry.get("stable"),
                    },
                }
            )
    return {"experiments": experiments, "version": f"oipcodec {__version__}"}


def _chart(results: dict[str, Any], path: Path, stream: TextIO | None = None) -> bool:
    """Draw and write the chart; False (nothing written) when no row has requests/s, or when
    matplotlib is not installed (then a one-line note goes to ``stream``)."""
    from oipcodec.bench import chart

    note = chart.missing()
    if note is not None:
        if stream is not None:
            stream.write(note + "\n")
        return False
    return chart.write_chart(results, path)


def _sweep(options: BenchOptions) -> str:
    """The load in words: ``closed loop at concurrency [...]`` or ``open loop at R req/s``."""
    mode = options.mode()
    windows = (
        f"{options.measurement_request_count}-request windows"
        if options.measurement_mode == "count_windows"
        else f"{options.duration * 1e3:g} ms windows"
    )
    windows += f", stable within {options.stability_percentage:g}% over 3 (at most " \
        f"{options.max_trials})"  # fmt: skip
    if mode == "concurrency":
        return f"closed loop at concurrency {options.concurrency}; {windows}"
    if mode == "intervals":
        return f"open loop at the intervals of {options.request_intervals}; {windows}"
    rates = ", ".join(f"{r:g}" for r in options.request_rates)
    return f"open loop at {rates} req/s ({options.request_distribution}); {windows}"


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # not on every platform
        return None


def _count(number: int, noun: str) -> str:
    """``1 payload``, ``2 payloads``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def run(options: BenchOptions, stream: TextIO | None = None) -> dict[str, Any]:
    """Measure, print the table to ``stream`` (default: stdout), write results.json (and the
    chart) to ``options.output_dir``; returns the results document. Raises BenchError when
    ``options.model`` declares inputs its request cannot be built for (a ``-1`` dimension
    without ``--shape``, ``--input-data`` that does not fit)."""
    stream = stream if stream is not None else sys.stdout
    if options.input_data is not None:
        read_input_data(options.input_data)  # its form, checked before any worker starts
    implementations = [i for i in options.implementations if peer_available(i)]
    skipped = {i: "not installed" for i in options.implementations if i not in implementations}
    total = sum(_steps(options, i) for i in implementations)
    progress = Progress(total)
    where = options.url or options.grpc_target or "the embedded server (127.0.0.1)"
    payloads = _count(len(options.payloads), "payload")
    if options.model != "identity":
        # What it is sent is known once the first worker has read its metadata (noted then).
        payloads = f"model {options.model}"
    progress.note(
        f"oipcodec bench: {payloads} x {_count(len(options.paths), 'path')} x "
        f"{', '.join(implementations)}, {_sweep(options)}, against {where}"
    )
    if skipped:
        progress.note(f"not installed, skipped: {', '.join(skipped)}")
    records: list[dict[str, Any]] = []
    workers: list[dict[str, Any]] = []
    model: dict[str, Any] = {}
    interrupted = False
    started = time.perf_counter()
    load_before = _load_average()
    try:
        for implementation in implementations:
            if implementation in SERVER_PEERS and "payload" in model:
                skipped[implementation] = PEER_CODEC_ECHO_ONLY
                progress.note(f"{implementation} skipped: {PEER_CODEC_ECHO_ONLY}")
                continue
            progress.note(f"measuring {implementation} ...")
            workers.append(_run_worker(options, implementation, progress, records, model))
            if len(workers) == 1 and "payload" in model:
                progress.note(
                    f"model {options.model} declares its inputs: each request is generated "
                    f"from its metadata ({model['payload']['description'].split(': ', 1)[1]})"
                )
            elif len(workers) == 1 and options.model != "identity":
                progress.note(
                    f"model {options.model} declares no inputs: it is sent "
                    f"{_count(len(options.payloads), 'payload')} and must echo them"
                )
    except KeyboardInterrupt:
        interrupted = True
        progress.note("interrupted: writing what was measured so far")
    progress.finish()
    ran = [w["implementation"] for w in workers]
    payload_rows = {p.name: p.as_dict() for p in options.payloads}
    if "payload" in model:
        row = dict(model["payload"])
        payload_rows = {row.pop("name"): row}
    results: dict[str, Any] = {
        "oipcodec_version": __version__,
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "seconds": round(time.perf_counter() - started, 2),
        "interrupted": interrupted,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            # The 1-minute load average before and after the run: how busy the machine was
            # with other work (a figure from a loaded machine reads accordingly).
            "load_average": [load_before, _load_average()],
        },
        "options": {
            **{k: v for k, v in asdict(options).items() if k not in ("payloads", "output_dir")},
            "implementations": ran,
        },
        "payloads": payload_rows,
        "paths": {name: PATHS[name].label for name in options.paths},
        "implementations": {name: DESCRIPTIONS[name] for name in ran},
        "skipped": skipped,
        "workers": workers,
        "results": records,
    }
    if model.get("metadata") is not None:
        results["model_metadata"] = model["metadata"]
    results["levels"] = {"mode": options.mode(), "values": options.levels()}
    results["best"] = best_paths(records)
    out = Path(options.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [str(out / "results.json")]
    if options.profile_export is not None:
        Path(options.profile_export).write_text(json.dumps(profile_document(results)))
        written.append(options.profile_export)
    for record in records:  # the per-request times are the profile's, not results.json's
        for entry in record.get("load", []):
            entry.pop("profile", None)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    if options.csv is not None:
        write_csv(results, Path(options.csv))
        written.append(options.csv)
    stream.write(render_table(results) + "\n")
    if options.chart and _chart(results, out / "throughput.png", stream):
        written.append(str(out / "throughput.png"))
    stream.write(f"\nwrote {', '.join(written)} ({results['seconds']:.1f} s)\n")
    stream.flush()
    if interrupted:
        raise KeyboardInterrupt
    return results
