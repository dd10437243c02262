"""The ``oipcodec bench`` driver: one worker subprocess per implementation, a progress bar,
then the table, results.json and the chart."""

from __future__ import annotations

import contextlib
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
from typing import Any, TextIO, TypeVar

from oipcodec import __version__
from oipcodec.bench.compare import goodput, parse_slo, render_goodput
from oipcodec.bench.connection import Connection
from oipcodec.bench.encoding import PATHS, Encoding
from oipcodec.bench.export import profile_document, write_csv
from oipcodec.bench.load import read_intervals
from oipcodec.bench.paths import (
    DESCRIPTIONS,
    IMPLEMENTATIONS,
    INSTALL_HINTS,
    PEER_CODEC_ECHO_ONLY,
    codec_only,
    peer_available,
    supported,
)
from oipcodec.bench.paths.peers import SERVER_PEERS
from oipcodec.bench.payloads import PAYLOADS, QUICK_PAYLOADS, Payload
from oipcodec.bench.sending import default_sender
from oipcodec.bench.stream_load import STREAM_PATHS
from oipcodec.bench.table import DEFAULT_FRONT_ENDS, plural, render_table
from oipcodec.bench.verdicts import best_and_tied, merge_rounds, native_verdicts
from oipcodec.bench.workload import read_input_data
from oipcodec.errors import BenchError

__all__ = ["BenchError", "BenchOptions", "check_model", "failed_paths", "round_order", "run"]

T = TypeVar("T")


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
    #: The embedded server's front ends (``--server-http-protocol``, ``--server-grpc-impl``):
    #: a server config's ``http_protocol`` and ``grpc_impl``. Not used with ``url`` /
    #: ``grpc_target``.
    server_http_protocol: str = DEFAULT_FRONT_ENDS[0]
    server_grpc_impl: str = DEFAULT_FRONT_ENDS[1]
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
    #: What loads the REST rows of native and pure (bench.sending): ``native``, ``python``
    #: (oipcodec.bench.sender) or ``client`` (their Python clients); None: native when built,
    #: the clients when ``load_processes`` is given.
    sender: str | None = None
    #: Every row measured this many times, the implementations taking turns round by
    #: round; figures are the rounds' medians (oipcodec.bench.verdicts).
    rounds: int = 1
    #: ``--slo "p99<0.01s"``: goodput per row (oipcodec.bench.compare), in results["slo"].
    slo: str | None = None
    #: ``--streaming``: the streaming workload (oipcodec.bench.stream_load) on its paths
    #: (STREAM_PATHS) instead of the unary one; each stream asks for ``stream_responses``.
    streaming: bool = False
    stream_responses: int = 64

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
            # One level, the one the verdicts are read at: half the time of two (--concurrency
            # 1,8 adds c=1 back). Three short rounds rather than one long one: the noise
            # between rounds, which the verdicts need, is what a busy machine varies, and
            # the two short windows of a round keep the whole at about a minute on two cores.
            concurrency=[8],
            duration=0.1,
            max_trials=2,
            rounds=3,
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
    if options.streaming:
        return len(options.paths) * len(options.levels())
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
        "http_protocol": options.server_http_protocol,
        "grpc_impl": options.server_grpc_impl,
        "timeout": options.timeout,
        "connection": options.connection,
        "streaming": options.streaming,
        "stream_responses": options.stream_responses,
        # --load-processes spreads the clients over processes: asking for it asks for them.
        "sender": options.sender or ("client" if options.load_processes else default_sender()),
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


class _Worker:
    """One implementation's worker subprocess (``oipcodec.bench.worker``), measuring a row
    each time it is given a turn; its records are appended to ``records`` as they come.
    ``model`` holds what a worker read about a model that declares its inputs (``metadata``,
    ``payload``): a worker reports it, the next ones are given it."""

    def __init__(self, options: BenchOptions, implementation: str, limit: float,
                 model: dict[str, Any]) -> None:  # fmt: skip
        self.implementation = implementation
        self.info: dict[str, Any] = {"implementation": implementation}
        self.done = False
        self.counted = 0
        # Closed in finish(): the file outlives this call, as the process does.
        self.errors = tempfile.TemporaryFile("w+")  # noqa: SIM115
        spec = {**_spec(options, implementation), "metadata": model.get("metadata"),
                "turns": True, "rounds": options.rounds}  # fmt: skip
        self.process = subprocess.Popen(
            [sys.executable, "-m", "oipcodec.bench.worker", json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            env=_environment(implementation),
            text=True,
        )
        # A hard bound on the whole worker, far above what its windows add up to.
        self.timer = threading.Timer(limit, self.process.kill)
        self.timer.daemon = True
        self.timer.start()

    def read(self, until: str, progress: Progress, records: list[dict[str, Any]],
             model: dict[str, Any]) -> None:  # fmt: skip
        """Handle the worker's events up to ``until`` (or its end: then ``done``)."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            kind = event.get("event")
            if kind == "step":
                count = int(event.get("steps", 1))
                self.counted += count
                progress.step(count, event.get("label", ""))
            elif kind == "result":
                records.append({**event["record"], "turn": len(records)})
            elif kind == "start":
                self.info["kernels"] = event.get("kernels")
                if event.get("peer_version"):
                    self.info["version"] = event["peer_version"]
            elif kind == "server":
                self.info["url"] = event.get("url")
                self.info["grpc_target"] = event.get("grpc_target")
                if event.get("front_ends"):
                    self.info["server_front_ends"] = event["front_ends"]
                self.info["startup_seconds"] = round(event.get("seconds", 0.0), 2)
            elif kind == "workload":
                model["metadata"], model["payload"] = event["metadata"], event["payload"]
            elif kind == "fatal":
                self.info["fatal"] = event["message"]
            elif kind == "done":
                self.info["seconds"] = round(event.get("seconds", 0.0), 2)
            if kind == until:
                return
        self.done = True

    def turn(self, progress: Progress, records: list[dict[str, Any]],
             model: dict[str, Any]) -> None:  # fmt: skip
        """Let the worker measure its next row."""
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):  # it has exited: its end is read below
            self.process.stdin.write("go\n")
            self.process.stdin.flush()
        self.read("turn_done", progress, records, model)

    def finish(self, progress: Progress, steps: int, quiet: bool = False) -> dict[str, Any]:
        """Wait for the worker's exit (stopping it if it is still running); what it said
        about itself, with ``error`` when it exited with a failure (noted on the progress
        line unless ``quiet``: the run is stopping for a reason said once already)."""
        self.timer.cancel()
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _stop(self.process)
        progress.step(max(0, steps - self.counted))
        if self.process.returncode not in (0, None) and "fatal" not in self.info:
            self.errors.seek(0)
            tail = self.errors.read()[-2000:]
            self.info["error"] = f"worker exited with status {self.process.returncode}"
            if not quiet:
                progress.note(
                    f"{self.implementation}: worker exited with status "
                    f"{self.process.returncode}\n{tail}"
                )
        self.errors.close()
        return self.info


def _limit(options: BenchOptions, implementation: str) -> float:
    """Seconds a worker may take at most: far above what its windows add up to (a window
    is at most 25 intervals, waiting for a slow row's answers)."""
    window = options.duration * 25
    steps = _steps(options, implementation)
    return (
        120.0
        + steps * (window * max(1, options.max_trials) + options.timeout)
        + len(options.payloads) * options.timeout
    ) * options.rounds


def round_order(items: Sequence[T], round_number: int) -> list[T]:
    """The order in which the implementations take a row's turns in a round: as given in
    even rounds, reversed in odd ones (A B, B A, A B ...), so that neither is always first
    after the machine's other work or the previous row, and a drift of the load over a round
    falls on both sides alike."""
    return list(items) if round_number % 2 == 0 else list(reversed(items))


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
    if options.streaming:
        return (f"closed loop at concurrency {options.concurrency}; "
                f"{options.duration * 3e3:g} ms a level")  # fmt: skip
    windows = (
        f"{options.measurement_request_count}-request windows"
        if options.measurement_mode == "count_windows"
        else f"{options.duration * 1e3:g} ms windows"
    )
    if options.rounds > 1:
        windows = f"{options.rounds} rounds of {windows}, at most {options.max_trials} a " \
            f"row; stable: the rounds within {options.stability_percentage:g}%"  # fmt: skip
    else:
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


def check_model(options: BenchOptions, timeout: float = 10.0) -> None:
    """Against a server given by ``--url`` / ``--grpc-target``, before any worker starts: the
    model's metadata is readable and the model ready, over each transport an OIP path of the
    run takes. BenchError in one line otherwise (no such model, no server, an answer that is
    not the protocol's), rather than a sweep of rows that each fail the same way, or that read
    a 404 as a path the server lacks."""
    from oipcodec.client import GrpcClient, HttpClient

    connection = Connection.from_dict(options.connection)
    protocols = (
        {STREAM_PATHS[name].protocol for name in options.paths}
        if options.streaming
        else {
            PATHS[name].protocol
            for name in options.paths
            if PATHS[name].encoding not in (Encoding.V1, Encoding.GRAPHPIPE)  # no OIP metadata
        }
    )
    model, wait = options.model, min(timeout, options.timeout)
    for protocol, where in (("rest", options.url), ("grpc", options.grpc_target)):
        if not where or protocol not in protocols:
            continue
        try:
            client: Any = (
                HttpClient(where, pool_size=1, timeout=wait, **connection.http_options(where))
                if protocol == "rest"
                else GrpcClient(where, timeout=wait, **connection.grpc_options())
            )
            try:
                client.model_metadata(model, timeout=wait)
                ready = client.model_ready(model, timeout=wait)
            finally:
                client.close()
        except Exception as exc:
            message = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            raise BenchError(f"{where}: model {model!r}: {message}") from exc
        if not ready:
            raise BenchError(f"{where}: model {model!r} is not ready")


def failed_paths(results: dict[str, Any]) -> str | None:
    """Why the run failed, or None: each path of which every row that ran is an error (a row
    the implementation or the server does not take is not one), and how the first failed;
    or, when no row ran at all, the workers that failed."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for record in results["results"]:
        if not record.get("unsupported"):
            rows.setdefault(record["path"], []).append(record)
    failed = [path for path, records in rows.items() if all(r.get("error") for r in records)]
    if not failed:
        broken = [w for w in results["workers"] if w.get("error")]
        if rows or not broken:
            return None
        return "no row was measured: " + "; ".join(
            f"{w['implementation']}: {w['error']}" for w in broken
        )
    first = " ".join(str(rows[failed[0]][0]["error"]).split())[:200]
    return f"every row of {', '.join(failed)} failed; the first: {first}"


def run(options: BenchOptions, stream: TextIO | None = None) -> dict[str, Any]:
    """Measure, print the table to ``stream`` (default: stdout), write results.json (and the
    chart) to ``options.output_dir``; returns the results document. Raises BenchError when
    the server given does not serve the model (:func:`check_model`), or when
    ``options.model`` declares inputs its request cannot be built for (a ``-1`` dimension
    without ``--shape``, ``--input-data`` that does not fit)."""
    stream = stream if stream is not None else sys.stdout
    if options.input_data is not None:
        read_input_data(options.input_data)  # its form, checked before any worker starts
    check_model(options)
    implementations = [i for i in options.implementations if peer_available(i)]
    skipped = {i: "not installed" for i in options.implementations if i not in implementations}
    if options.streaming:  # the streams are sent by oipcodec's clients only
        for name in [i for i in implementations if i not in ("native", "pure")]:
            implementations.remove(name)
            skipped[name] = "no streaming workload (oipcodec's clients stream)"
    total = sum(_steps(options, i) for i in implementations) * options.rounds
    progress = Progress(total)
    embedded = (f"the embedded server (127.0.0.1; HTTP/1.1 {options.server_http_protocol}, "
                f"gRPC {options.server_grpc_impl})")  # fmt: skip
    where = options.url or options.grpc_target or embedded
    payloads = plural(len(options.payloads), "payload")
    if options.streaming:
        payloads = f"streams of {options.model} ({options.stream_responses} responses each)"
    elif options.model != "identity":
        # What it is sent is known once the first worker has read its metadata (noted then).
        payloads = f"model {options.model}"
    progress.note(
        f"oipcodec bench: {payloads} x {plural(len(options.paths), 'path')} x "
        f"{', '.join(implementations)}, {_sweep(options)}, against {where}"
    )
    for name, why in skipped.items():
        if why != "not installed":
            progress.note(f"{name} skipped: {why}")
            continue
        hint = INSTALL_HINTS.get(name)
        progress.note(f"{name} is not installed, skipped" + (f": {hint}" if hint else ""))
    records: list[dict[str, Any]] = []
    workers: list[dict[str, Any]] = []
    model: dict[str, Any] = {}
    interrupted = False
    started = time.perf_counter()
    load_before = _load_average()
    running: list[_Worker] = []
    limit = sum(_limit(options, i) for i in implementations)
    try:
        # Started one at a time (each ready before the next starts, so no start-up competes
        # with a measurement), then given turns row by row: A B C A B C.
        for implementation in implementations:
            if implementation in SERVER_PEERS and "payload" in model:
                skipped[implementation] = PEER_CODEC_ECHO_ONLY
                progress.note(f"{implementation} skipped: {PEER_CODEC_ECHO_ONLY}")
                continue
            progress.note(f"starting {implementation} ...")
            worker = _Worker(options, implementation, limit, model)
            running.append(worker)
            worker.read("ready", progress, records, model)
            if "fatal" in worker.info:
                raise BenchError(worker.info["fatal"])
            if options.streaming:
                pass
            elif len(running) == 1 and "payload" in model:
                progress.note(
                    f"model {options.model} declares its inputs: each request is generated "
                    f"from its metadata ({model['payload']['description'].split(': ', 1)[1]})"
                )
            elif len(running) == 1 and options.model != "identity":
                progress.note(
                    f"model {options.model} declares no inputs: it is sent "
                    f"{plural(len(options.payloads), 'payload')} and must echo them"
                )
        rounds = f" in {options.rounds} rounds" if options.rounds > 1 else ""
        progress.note(f"measuring{rounds}, the implementations taking turns row by row ...")
        # Every worker has a turn per row of a round: the workloads (one for a model that
        # declares its inputs) times the paths.
        per_round = (1 if "payload" in model else len(options.payloads)) * len(options.paths)
        turn = 0
        while any(not w.done for w in running):
            for worker in round_order(running, turn // max(1, per_round)):
                if not worker.done:
                    worker.turn(progress, records, model)
                    if "fatal" in worker.info:
                        raise BenchError(worker.info["fatal"])
            turn += 1
    except KeyboardInterrupt:
        interrupted = True
        progress.note("interrupted: writing what was measured so far")
    finally:
        aborting = interrupted or any("fatal" in w.info for w in running)
        for worker in running:
            if aborting:
                _stop(worker.process)
            steps = _steps(options, worker.implementation) * options.rounds
            workers.append(worker.finish(progress, steps, quiet=aborting))
    progress.finish()
    if not options.streaming:  # a streaming row is measured once (no rounds)
        records = merge_rounds(records, options.stability_percentage / 100)
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
            # A header may carry a credential: its name is kept, its value never written.
            "connection": Connection.from_dict(options.connection).redacted(),
        },
        "payloads": payload_rows,
        "paths": {
            name: (STREAM_PATHS if options.streaming else PATHS)[name].label
            for name in options.paths
        },
        "implementations": {name: DESCRIPTIONS[name] for name in ran},
        "skipped": skipped,
        "workers": workers,
        "results": records,
    }
    if options.url or options.grpc_target:  # no embedded server ran: no front ends of ours
        results["options"]["server_http_protocol"] = results["options"]["server_grpc_impl"] = None
    if model.get("metadata") is not None:
        results["model_metadata"] = model["metadata"]
    results["levels"] = {"mode": options.mode(), "values": options.levels()}
    if options.streaming:
        results["best"], results["tied"], results["verdicts"] = {}, {}, {}
    else:
        results["best"], results["tied"] = best_and_tied(records)
        results["verdicts"] = native_verdicts(records)
    if options.slo and not options.streaming:
        results["slo"] = goodput(results, parse_slo(options.slo))
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
    if "slo" in results:
        stream.write("\n".join(render_goodput(results["slo"])) + "\n")
    if options.chart and not options.streaming and _chart(results, out / "throughput.png", stream):
        written.append(str(out / "throughput.png"))
        from oipcodec.bench.chart import write_pareto

        if write_pareto(results, out / "pareto.png"):  # a sweep of three levels or more
            written.append(str(out / "pareto.png"))
    stream.write(f"\nwrote {', '.join(written)} ({results['seconds']:.1f} s)\n")
    stream.flush()
    if interrupted:
        raise KeyboardInterrupt
    return results
