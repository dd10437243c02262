"""Bounded measurement loops: closed- and open-loop load measured in windows, and codec timing.

A level (a concurrency, or a request rate) runs its load generator threads without pause;
the main thread cuts the completions into warm-up and measurement windows (by time or by
count) and stops once the last three windows are stable or ``max_trials`` windows were
measured. Open loop measures each request from its scheduled send time, so a server that
falls behind shows its queueing delay. Every loop stops by itself: windows are bounded in
time, requests in flight finish within the client's timeout, codec timing within its budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "LevelResult",
    "level_label",
    "level_of",
    "run_levels",
    "Measurement",
    "Schedule",
    "measure_level",
    "read_intervals",
    "stable",
    "time_call",
    "window_summary",
]

#: The windows whose spread decides stability (perf_analyzer's stability window).
STABILITY_WINDOWS = 3
#: A time window waits this many intervals at most for its first answers.
LONGEST_WINDOW = 25
#: A generator that uses this share of one core is saturated: its threads share one GIL.
SATURATED_CPU = 0.9


@dataclass
class Measurement:
    """How a level is measured (perf_analyzer's options of the same names)."""

    #: ``time_windows`` or ``count_windows``.
    mode: str = "time_windows"
    #: Window length, seconds (time windows; the upper bound of a count window too).
    interval: float = 1.0
    #: Completions per window (count windows).
    request_count: int = 50
    #: Windows at most per level; stability is checked once three were measured.
    max_trials: int = 10
    #: The last three windows may differ by this fraction (max/min - 1), in requests/s and
    #: in the stabilising latency.
    stability: float = 0.10
    #: The stabilising latency: this percentile, or None for the average (perf_analyzer's).
    percentile: float | None = None
    #: Completions before the first window (each connection made, caches warm).
    warmup_requests: int = 0
    #: Seconds a request may take; the stop waits this long for requests in flight.
    timeout: float = 60.0


@dataclass
class Schedule:
    """Open-loop send times: a rate and its distribution, or intervals read from a file."""

    rate: float | None = None
    distribution: str = "constant"
    intervals: Sequence[float] | None = None
    seed: int = 0
    #: Seconds added to every due time (a load process's share of a constant rate).
    phase: float = 0.0

    def offsets(self) -> Iterator[float]:
        """Seconds after the start at which each request is due."""
        clock = self.phase
        if self.intervals is not None:
            if not self.intervals:
                return
            while True:
                for gap in self.intervals:
                    yield clock
                    clock += gap
        assert self.rate is not None and self.rate > 0
        rng = np.random.default_rng(self.seed)
        while True:
            yield clock
            if self.distribution == "poisson":
                clock += float(rng.exponential(1.0 / self.rate))
            else:
                clock += 1.0 / self.rate


def read_intervals(path: str) -> list[float]:
    """perf_analyzer's ``--request-intervals`` file: one interval in microseconds a line
    (blank lines skipped). Returns seconds; raises ValueError naming the bad line."""
    intervals = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            text = line.strip()
            if not text:
                continue
            try:
                value = float(text)
            except ValueError:
                raise ValueError(
                    f"{path} line {number}: {text!r} is not an interval in microseconds"
                ) from None
            if value < 0:
                raise ValueError(f"{path} line {number}: an interval cannot be negative")
            intervals.append(value / 1e6)
    if not intervals or sum(intervals) <= 0:
        raise ValueError(f"{path} holds no interval above 0 microseconds")
    return intervals


@dataclass
class LevelResult:
    """What one level measured: its windows (each a summary), whether they were stable,
    and every completion (start, end, seconds since the level began) for the profile."""

    windows: list[dict[str, Any]] = field(default_factory=list)
    stable: bool | None = None
    errors: int = 0
    first_error: str | None = None
    #: (start, end) of each measured request, seconds on the perf_counter clock.
    spans: list[tuple[float, float]] = field(default_factory=list)
    #: time.time() - time.perf_counter() at the start, to put spans on the wall clock.
    epoch_offset: float = 0.0
    #: The generator's CPU seconds over the reported (last three) windows.
    cpu_seconds: float = 0.0
    #: The windows' edges (perf_counter seconds): the first window's start, then each end.
    edges: list[float] = field(default_factory=list)
    #: The busiest load process's CPU seconds over the reported windows, and how many.
    cpu_top_seconds: float = 0.0
    processes: int = 1
    #: The server's CPU seconds over the reported windows (None: not readable).
    server_cpu_seconds: float | None = None


def window_summary(
    spans: Sequence[tuple[float, float]], seconds: float, cpu_seconds: float
) -> dict[str, Any]:
    """Requests/s and latency (ms: avg, p50, p90, p95, p99, max) of the completions in a
    window of ``seconds``, and the generator's CPU use (CPU seconds per wall second)."""
    out: dict[str, Any] = {
        "requests": len(spans),
        "seconds": round(seconds, 4),
        "rps": len(spans) / seconds if seconds > 0 else 0.0,
        "generator_cpu": round(cpu_seconds / seconds, 3) if seconds > 0 else 0.0,
        "client_cpu_us": cpu_seconds / len(spans) * 1e6 if spans else None,
    }
    if spans:
        latencies = np.array([end - start for start, end in spans]) * 1e3
        p50, p90, p95, p99 = np.percentile(latencies, [50, 90, 95, 99])
        out.update(
            avg_ms=float(latencies.mean()),
            p50_ms=float(p50),
            p90_ms=float(p90),
            p95_ms=float(p95),
            p99_ms=float(p99),
            max_ms=float(latencies.max()),
        )
    return out


def _latency_key(percentile: float | None) -> str:
    return "avg_ms" if percentile is None else f"p{percentile:g}_ms"


def stable(windows: Sequence[dict[str, Any]], measurement: Measurement) -> bool:
    """perf_analyzer's rule: the last three windows' requests/s, and their stabilising
    latency, each within ``stability`` of each other (max / min <= 1 + stability)."""
    if len(windows) < STABILITY_WINDOWS:
        return False
    last = windows[-STABILITY_WINDOWS:]
    key = _latency_key(measurement.percentile)
    for values in ([w["rps"] for w in last], [w.get(key) for w in last]):
        if any(v is None or v <= 0 for v in values):
            return False
        if max(values) / min(values) > 1 + measurement.stability:
            return False
    return True


def merge(windows: Sequence[dict[str, Any]], spans: Sequence[tuple[float, float]],
          cpu_seconds: float) -> dict[str, Any]:  # fmt: skip
    """One summary of several windows (the last three, as perf_analyzer reports)."""
    seconds = sum(w["seconds"] for w in windows)
    return window_summary(spans, seconds, cpu_seconds)


class Generator:
    """The load threads of one process. Closed loop (``schedule`` None): each thread sends
    back to back. Open loop: each takes the next due time from ``schedule``, waits for it
    and sends; a request's latency counts from its due time, so time spent waiting for a
    free thread or for the server counts too. A thread stops at its first error. Each
    thread's caller is made in the thread, before :meth:`go`."""

    def __init__(self, make_caller: Callable[[], Callable[[], Any]], threads: int,
                 schedule: Schedule | None, timeout: float) -> None:  # fmt: skip
        self.make_caller = make_caller
        self.schedule = schedule
        self.timeout = timeout
        self.errors = 0
        self.first_error: str | None = None
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.started = threading.Event()
        self.origin = 0.0
        self.ready = threading.Barrier(threads + 1, timeout=timeout)
        self.per_thread: list[list[tuple[float, float]]] = [[] for _ in range(threads)]
        self.taken = [0] * threads
        self.offsets = schedule.offsets() if schedule is not None else None
        self.threads = [
            threading.Thread(target=self._run, args=(i,), daemon=True, name=f"oipcodec-load-{i}")
            for i in range(threads)
        ]

    def prepare(self) -> str | None:
        """Start the threads and wait until each has its caller; an error message if they
        did not get there within the timeout."""
        for thread in self.threads:
            thread.start()
        try:
            self.ready.wait()
        except threading.BrokenBarrierError:
            self.stopping.set()
            return self.first_error or "the load threads did not start in time"
        return None

    def go(self, origin: float) -> None:
        """Send from ``origin`` (perf_counter seconds: the open loop's time zero)."""
        self.origin = origin
        self.started.set()

    def _fail(self, exc: BaseException) -> None:
        with self.lock:
            self.errors += 1
            if self.first_error is None:
                self.first_error = f"{type(exc).__name__}: {exc}"[:500]

    def _next_due(self) -> float | None:
        with self.lock:
            assert self.offsets is not None
            offset = next(self.offsets, None)
        return None if offset is None else self.origin + offset

    def _run(self, index: int) -> None:
        try:
            call = self.make_caller()
        except Exception as exc:
            self._fail(exc)
            call = None
        try:
            self.ready.wait()
        except threading.BrokenBarrierError:
            return
        if call is None or not self._wait_start():
            return
        spans = self.per_thread[index]
        clock = time.perf_counter
        open_loop = self.schedule is not None
        while not self.stopping.is_set():
            if open_loop:
                due = self._next_due()
                if due is None:
                    return
                wait = due - clock()
                if wait > 0 and self.stopping.wait(wait):
                    return
                start = due
            else:
                start = clock()
            try:
                call()
            except Exception as exc:
                self._fail(exc)
                return
            spans.append((start, clock()))

    def _wait_start(self) -> bool:
        while not self.started.wait(0.05):
            if self.stopping.is_set():
                return False
        return not self.stopping.is_set()

    def alive(self) -> bool:
        return any(t.is_alive() for t in self.threads)

    def completed(self) -> int:
        return sum(len(spans) for spans in self.per_thread)

    def cut(self, edge: float) -> tuple[list[tuple[float, float]], float]:
        """The spans that ended since the last cut and before ``edge`` (each thread appends
        in the order its requests end), and this process's CPU seconds so far."""
        out = []
        for index, spans in enumerate(self.per_thread):
            position = self.taken[index]
            while position < len(spans) and spans[position][1] < edge:
                out.append(spans[position])
                position += 1
            self.taken[index] = position
        return out, time.process_time()

    def stop(self) -> tuple[int, str | None]:
        """Stop sending; requests in flight finish (bounded by the timeout). The errors."""
        self.stopping.set()
        limit = time.perf_counter() + self.timeout
        for thread in self.threads:
            thread.join(max(0.0, limit - time.perf_counter()))
        if self.alive():
            self._fail(TimeoutError(f"requests still running {self.timeout:.0f} s after the "
                                    "last window"))  # fmt: skip
        return self.errors, self.first_error


class _Remote:
    """A :class:`Generator` in a process of its own, driven over a pipe (its perf_counter is
    the same monotonic clock as this process's)."""

    def __init__(self, process: Any, conn: Any) -> None:
        self.process = process
        self.conn = conn

    def ask(self, *message: Any) -> Any:
        self.conn.send(message)
        if not self.conn.poll(120.0):
            raise TimeoutError("a load process did not answer within 120 s")
        return self.conn.recv()

    def alive(self) -> bool:
        return bool(self.process.is_alive())


def _load_process(conn: Any, build: Callable[[], Any], threads: int,
                  schedule: Schedule | None, timeout: float) -> None:  # fmt: skip
    """A load process's main: ``build()`` gives its caller factory and a cleanup; then it
    answers the parent's go / count / cut / stop."""
    make_caller, cleanup = build()
    generator = Generator(make_caller, threads, schedule, timeout)
    try:
        conn.send(generator.prepare())
        while True:
            kind, *args = conn.recv()
            if kind == "go":
                generator.go(args[0])
            elif kind == "count":
                conn.send((generator.completed(), generator.alive()))
            elif kind == "cut":
                conn.send(generator.cut(args[0]))
            elif kind == "stop":
                conn.send(generator.stop())
                return
    finally:
        cleanup()


def _shares(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def measure_level(
    make_caller: Callable[[], Callable[[], Any]],
    measurement: Measurement,
    *,
    concurrency: int = 1,
    schedule: Schedule | None = None,
    max_threads: int = 16,
    processes: int = 1,
    build: Callable[[], Any] | None = None,
    server_cpu: Callable[[], float | None] | None = None,
) -> LevelResult:
    """Measure one level: closed loop at ``concurrency`` (``schedule`` None), or open loop on
    ``max_threads`` threads (see :class:`Generator`). With ``processes`` above 1 and a
    picklable ``build`` (giving a caller factory and a cleanup in the new process), the
    threads are spread over that many spawned processes, each with its own GIL; the rate of
    an open loop is split among them. ``server_cpu`` reads the server's CPU seconds at each
    window's edges (:mod:`oipcodec.bench.cpu`)."""
    threads = max_threads if schedule is not None else concurrency
    processes = max(1, min(processes, threads))
    if schedule is not None and schedule.intervals is not None:
        processes = 1  # one sequence of intervals: one process follows it
    result = LevelResult()
    if processes == 1 or build is None:
        local = Generator(make_caller, threads, schedule, measurement.timeout)
        error = local.prepare()
        if error is not None:
            result.first_error = error
            local.stop()
            return result
        origin = time.perf_counter()
        result.epoch_offset = time.time() - time.perf_counter()
        local.go(origin)
        try:
            _windows(result, [local], measurement, threads, server_cpu)
        finally:
            result.errors, result.first_error = local.stop()
        return result
    return _measure_processes(result, build, threads, schedule, processes, measurement, server_cpu)


def _measure_processes(result: LevelResult, build: Callable[[], Any], threads: int,
                       schedule: Schedule | None, processes: int,
                       measurement: Measurement,
                       server_cpu: Callable[[], float | None] | None = None,
                       ) -> LevelResult:  # fmt: skip
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # never fork a process with threads
    remotes: list[_Remote] = []
    try:
        for index, count in enumerate(_shares(threads, processes)):
            part = schedule
            if schedule is not None and schedule.rate is not None:
                part = Schedule(rate=schedule.rate / processes,
                                distribution=schedule.distribution, seed=schedule.seed + index,
                                phase=index / schedule.rate)  # fmt: skip
            ours, theirs = context.Pipe()
            process = context.Process(
                target=_load_process, args=(theirs, build, count, part, measurement.timeout),
                daemon=True, name=f"oipcodec-load-{index}",
            )  # fmt: skip
            process.start()
            remotes.append(_Remote(process, ours))
        for remote in remotes:
            if not remote.conn.poll(measurement.timeout + 60):
                raise TimeoutError("a load process did not start in time")
            error = remote.conn.recv()
            if error is not None:
                result.first_error = error
                return result
        origin = time.perf_counter() + 0.01
        result.epoch_offset = time.time() - time.perf_counter()
        for remote in remotes:
            remote.conn.send(("go", origin))
        _windows(result, remotes, measurement, threads, server_cpu)
    except (OSError, EOFError, TimeoutError) as exc:
        result.first_error = result.first_error or f"load processes: {exc}"
    finally:
        for remote in remotes:
            try:
                errors, first = remote.ask("stop")
                result.errors += errors
                result.first_error = result.first_error or first
            except (OSError, EOFError, TimeoutError):
                pass
            remote.process.join(5)
            if remote.process.is_alive():
                remote.process.kill()
                remote.process.join()
    return result


def _windows(result: LevelResult, sources: Sequence[Generator | _Remote],
             measurement: Measurement, minimum: int = 1,
             server_cpu: Callable[[], float | None] | None = None) -> None:  # fmt: skip
    """Cut the completions into the warm-up and the windows, checking stability after each
    window, until stable, ``max_trials`` windows, or every thread has stopped. ``sources``
    are this process's generator or the load processes'; ``server_cpu`` is read at each
    edge."""
    clock = time.perf_counter
    poll = 0.002 if all(isinstance(s, Generator) for s in sources) else 0.01

    def counts() -> tuple[int, bool]:
        done, alive = 0, False
        for source in sources:
            if isinstance(source, Generator):
                done, alive = done + source.completed(), alive or source.alive()
            else:
                count, running = source.ask("count")
                done, alive = done + count, alive or running
        return done, alive

    def cut(edge: float) -> tuple[list[tuple[float, float]], list[float]]:
        spans: list[tuple[float, float]] = []
        cpu: list[float] = []
        for source in sources:
            part, seconds = source.cut(edge) if isinstance(source, Generator) else source.ask(
                "cut", edge)  # fmt: skip
            spans += part
            cpu.append(seconds)
        return spans, cpu

    # Warm-up: its completions are measured in no window (bounded by the request timeout).
    deadline = clock() + measurement.timeout
    done, alive = counts()
    while done < measurement.warmup_requests and alive and clock() < deadline:
        time.sleep(poll)
        done, alive = counts()
    edge = clock()
    result.edges.append(edge)
    _, cpu = cut(edge)
    server = server_cpu() if server_cpu is not None else None
    server_used: list[float | None] = []
    window_spans: list[list[tuple[float, float]]] = []
    cpu_used: list[float] = []
    cpu_top: list[float] = []
    while len(result.windows) < max(1, measurement.max_trials) and alive:
        start = edge
        if measurement.mode == "count_windows":
            # A count window ends at its request count, or after ten intervals at most.
            base, alive = counts()
            limit = start + measurement.interval * 10
            while clock() < limit and alive:
                done, alive = counts()
                if done - base >= measurement.request_count:
                    break
                time.sleep(poll)
        else:
            # A time window runs its interval, and on until each sending thread could have
            # had an answer (``minimum`` of them), at most LONGEST_WINDOW intervals: a window
            # shorter than one request would measure nothing.
            end_at = start + measurement.interval
            longest = start + measurement.interval * LONGEST_WINDOW
            base, alive = counts()
            while alive:
                moment = clock()
                if moment >= longest:
                    break
                if moment >= end_at:
                    done, alive = counts()
                    if done - base >= minimum:
                        break
                time.sleep(min(poll * 10, max(poll, end_at - moment)))
                alive = alive and any(source.alive() for source in sources)
        edge = clock()
        result.edges.append(edge)
        spans, now = cut(edge)
        used = [b - a for a, b in zip(cpu, now, strict=True)]
        cpu = now
        window_spans.append(spans)
        cpu_used.append(sum(used))
        cpu_top.append(max(used))
        window = window_summary(spans, edge - start, cpu_used[-1])
        if server_cpu is not None:
            now_server = server_cpu()
            used_server = None if now_server is None or server is None else now_server - server
            server = now_server
            window["server_cpu_us"] = (
                used_server / len(spans) * 1e6 if used_server is not None and spans else None
            )
            server_used.append(used_server)
        # The busiest process's share of a core: one at a whole core is the bottleneck.
        window["generator_cpu_max"] = round(cpu_top[-1] / (edge - start), 3)
        result.windows.append(window)
        if measurement.max_trials >= STABILITY_WINDOWS and stable(result.windows, measurement):
            result.stable = True
            break
    if measurement.max_trials < STABILITY_WINDOWS:
        result.stable = None  # too few windows to judge: not checked
    elif result.stable is None:
        result.stable = False
    result.spans = [s for spans in window_spans[-STABILITY_WINDOWS:] for s in spans]
    result.cpu_seconds = sum(cpu_used[-STABILITY_WINDOWS:])
    result.cpu_top_seconds = max(cpu_top[-STABILITY_WINDOWS:], default=0.0)
    reported = server_used[-STABILITY_WINDOWS:]
    if reported and all(v is not None for v in reported):
        result.server_cpu_seconds = sum(v for v in reported if v is not None)
    result.processes = len(sources)


def summarize(result: LevelResult, payload_bytes: int, answer_bytes: int) -> dict[str, Any]:
    """The level's figures: the last three windows merged (as perf_analyzer reports them),
    tensor MB/s both ways, stability, the generator's CPU use and whether it was saturated,
    and every window."""
    last = result.windows[-STABILITY_WINDOWS:]
    out = merge(last, result.spans, result.cpu_seconds) if last else window_summary([], 0, 0)
    out["mb_per_s"] = out["rps"] * (payload_bytes + answer_bytes) / 1e6
    out["errors"] = result.errors
    out["stable"] = result.stable
    seconds = sum(w["seconds"] for w in last)
    busiest = result.cpu_top_seconds / seconds if seconds > 0 else 0.0
    out["load_processes"] = result.processes
    out["server_cpu_us"] = (
        result.server_cpu_seconds / out["requests"] * 1e6
        if result.server_cpu_seconds is not None and out["requests"]
        else None
    )
    out["generator_saturated"] = bool(last) and max(busiest, out["generator_cpu"]
                                                   / result.processes) >= SATURATED_CPU  # fmt: skip
    out["windows"] = result.windows
    # The server's own breakdown (queue, compute input/infer/output, us per request) when a
    # statistics reader fills it; None leaves the CSV's server columns at 0.
    out["server_breakdown"] = None
    if result.first_error:
        out["first_error"] = result.first_error
    return out


def run_levels(results: dict[str, Any]) -> tuple[str, list[float]]:
    """The run's load mode (``concurrency``, ``request_rate``, ``intervals``) and levels."""
    sweep = results.get("levels")
    if sweep is None:  # a results.json from before open loop: closed loop only
        return "concurrency", list(results["options"]["concurrency"])
    return sweep["mode"], list(sweep["values"])


def level_of(entry: dict[str, Any]) -> float:
    """A load entry's level (its concurrency or request rate)."""
    return float(entry.get("level", entry.get("concurrency", entry.get("request_rate", 0))))


def level_label(mode: str, level: float) -> str:
    """``c=N`` (concurrency N), ``r=R`` (open loop at R requests/s) or ``intervals``:
    a level as the table heads it."""
    if mode == "concurrency":
        return f"c={level:g}"
    return "intervals" if mode == "intervals" else f"r={level:g}"


def time_call(call: Callable[[], Any], budget: float, max_repeats: int = 5000) -> float:
    """Median seconds per call: one untimed warm-up call (skipped when the first call alone
    takes the whole budget), then repeated calls until ``budget`` seconds or ``max_repeats``."""
    clock = time.perf_counter
    start = clock()
    call()
    first = clock() - start
    if first >= budget:
        return first
    times: list[float] = []
    end = clock() + budget
    while len(times) < max_repeats:
        t0 = clock()
        call()
        t1 = clock()
        times.append(t1 - t0)
        if t1 >= end:
            break
    return float(np.median(times))
