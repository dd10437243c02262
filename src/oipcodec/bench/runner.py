"""The ``oipcodec bench`` driver: one worker subprocess per implementation, a progress bar,
then the table, results.json and the chart."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from oipcodec import __version__
from oipcodec.bench.paths import (
    DESCRIPTIONS,
    IMPLEMENTATIONS,
    PATHS,
    PEER_CODEC_ECHO_ONLY,
    codec_only,
    peer_available,
    supported,
)
from oipcodec.bench.payloads import PAYLOADS, QUICK_PAYLOADS, Payload
from oipcodec.bench.peers import SERVER_PEERS
from oipcodec.bench.workload import read_input_data
from oipcodec.errors import BenchError

__all__ = ["BenchError", "BenchOptions", "run"]


@dataclass
class BenchOptions:
    """What to measure; ``oipcodec bench --help`` documents each."""

    payloads: list[Payload] = field(default_factory=list)
    paths: list[str] = field(default_factory=lambda: list(PATHS))
    implementations: list[str] = field(default_factory=lambda: list(IMPLEMENTATIONS))
    concurrency: list[int] = field(default_factory=lambda: [1, 8])
    duration: float = 1.0
    max_requests: int = 20000
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

    @classmethod
    def quick_defaults(cls) -> BenchOptions:
        return cls(
            payloads=[PAYLOADS[name] for name in QUICK_PAYLOADS],
            duration=0.25,
            codec_budget=0.03,
            max_requests=5000,
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
                count += len(options.concurrency)
    return count


def _spec(options: BenchOptions, implementation: str) -> dict[str, Any]:
    return {
        "implementation": implementation,
        "payloads": [{"name": p.name, **p.as_dict()} for p in options.payloads],
        "paths": options.paths,
        "concurrency": options.concurrency,
        "duration": options.duration,
        "max_requests": options.max_requests,
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
    limit = 120.0 + steps * (options.duration + 5.0) + len(options.payloads) * options.timeout
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
    """The load summary at the highest concurrency measured."""
    loads = [entry for entry in record.get("load", []) if entry.get("requests")]
    return max(loads, key=lambda e: e["concurrency"]) if loads else None


def best_paths(records: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Per payload, ``path/implementation`` of the highest requests/s at the highest
    concurrency level."""
    best: dict[str, tuple[float, str]] = {}
    for record in records:
        load = _best_load(record)
        if record.get("error") or load is None:
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


def render_table(results: dict[str, Any]) -> str:
    """The readable table: per payload, one row per path x implementation."""
    records = results["results"]
    levels = results["options"]["concurrency"]
    top = max(levels)
    best = results["best"]
    lines = []
    header = (
        f"  {'path':<17} {'impl':<12}"
        + "".join(f" {'c=' + str(c) + ' req/s':>12}" for c in levels)
        + f" {'MB/s':>8} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}"
        + f" {'wire kB':>8} {'client us':>10} {'server us':>10}"
    )
    for name, payload in results["payloads"].items():
        rows = [r for r in records if r["payload"] == name]
        if not rows:
            continue
        if "inputs" in payload:  # a model's generated request
            tensors = ", ".join(
                f"{t['name']} {'x'.join(map(str, t['shape']))} {t['datatype']}"
                for t in payload["inputs"]
            )
            title = f"model {name} ({tensors})"
        else:
            title = f"{name} ({'x'.join(map(str, payload['shape']))} {payload['datatype']})"
        lines.append("")
        lines.append(f"{title}; latency and MB/s at c={top}")
        lines.append(header)
        for record in rows:
            mark = "*" if best.get(name) == f"{record['path']}/{record['implementation']}" else " "
            label = PATHS[record["path"]].label if record["path"] in PATHS else record["path"]
            start = f"{mark} {label:<17} {record['implementation']:<12}"
            if record.get("unsupported"):
                reason = record["unsupported"]
                if not reason.startswith("not supported"):  # the server's rows say it already
                    reason = f"not supported: {reason}"
                lines.append(f"{start} {reason}")
                continue
            if record.get("error"):
                lines.append(f"{start} error: {_one_line(record['error'])}")
                continue
            if record.get("codec_only"):
                # The load columns' width, 13 a concurrency level and 9 each for the rest.
                measured = f" {record['codec_only']:<{13 * len(levels) + 35}}"
            else:
                by_level = {e["concurrency"]: e for e in record.get("load", [])}
                load = by_level.get(top, {})
                measured = (
                    "".join(f" {_fmt(by_level.get(c, {}).get('rps')):>12}" for c in levels)
                    + f" {_fmt(load.get('mb_per_s'), 1):>8} {_fmt(load.get('p50_ms'), 2):>8}"
                    + f" {_fmt(load.get('p90_ms'), 2):>8} {_fmt(load.get('p99_ms'), 2):>8}"
                )
            codec = record.get("codec_us", {})
            wire = (record.get("request_bytes", 0) + record.get("response_bytes", 0)) / 1e3
            lines.append(
                start
                + measured
                + f" {_fmt(wire, 1):>8} {_fmt(codec.get('client')):>10}"
                + f" {_fmt(codec.get('server')):>10}"
            )
            failed = [e for e in record.get("load", []) if e.get("errors")]
            if failed:  # some requests failed after the first answered: the first error
                count = sum(e["errors"] for e in failed)
                lines.append(
                    f"    {_count(count, 'failed request')}, the first: "
                    f"{_one_line(failed[0].get('first_error', ''))}"
                )
    lines.append("")
    lines.append(
        "(*) most requests/s for the payload at the highest concurrency. MB/s counts the "
        "tensor bytes both ways;"
    )
    lines.append(
        "wire kB = request + response body; client/server us = codec time per request "
        "(encode + decode), in-process."
    )
    lines += _shared_memory_note(results)
    servers = sorted({r["implementation"] for r in records} & set(SERVER_PEERS))
    if servers:
        lines.append(
            f"{' / '.join(servers)} rows: that server's own codec (decode the request, encode "
            "the identity answer), in-process;"
        )
        lines.append(
            "requests/s only against such a server given by --url / --grpc-target (oipcodec's "
            "native client sending)."
        )
    return "\n".join(lines)


#: The paths the shared-memory path is set beside in the table's closing note.
_BESIDE_SHM = ("rest-binary", "grpc-raw")


def _shared_memory_note(results: dict[str, Any]) -> list[str]:
    """Per payload and implementation with a measured ``shm`` row: its requests/s at each
    concurrency level and server codec microseconds, beside REST binary and gRPC raw, and
    one memcpy of the payload's bytes (what shared memory cannot go below)."""
    records = results["results"]
    levels = results["options"]["concurrency"]
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
            by_level = {e["concurrency"]: e.get("rps") for e in row["load"]}
            rps = " / ".join(_fmt(by_level.get(c)) for c in levels)
            server = row.get("codec_us", {}).get("server")
            codec = "" if server is None else f" (server {_fmt(server)} us)"
            parts.append(f"{PATHS[row['path']].label} {rps}{codec}")
        memcpy = record.get("codec_us", {}).get("memcpy")
        lines.append(
            f"shared memory, {record['payload']} {record['implementation']}, req/s at "
            f"c={'/'.join(map(str, levels))}: " + "; ".join(parts)
        )
        lines.append(
            f"  one memcpy of its {record['payload_bytes']:,} bytes: {_fmt(memcpy, 1)} us "
            "(the copy into the region that each shm request makes)"
        )
    return lines


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
        f"{', '.join(implementations)}, concurrency {options.concurrency}, against {where}"
    )
    if skipped:
        progress.note(f"not installed, skipped: {', '.join(skipped)}")
    records: list[dict[str, Any]] = []
    workers: list[dict[str, Any]] = []
    model: dict[str, Any] = {}
    interrupted = False
    started = time.perf_counter()
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
    results["best"] = best_paths(records)
    out = Path(options.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    stream.write(render_table(results) + "\n")
    written = [str(out / "results.json")]
    if options.chart and _chart(results, out / "throughput.png", stream):
        written.append(str(out / "throughput.png"))
    stream.write(f"\nwrote {', '.join(written)} ({results['seconds']:.1f} s)\n")
    stream.flush()
    if interrupted:
        raise KeyboardInterrupt
    return results
