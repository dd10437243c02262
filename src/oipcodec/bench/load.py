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

    def offsets(self) -> Iterator[float]:
        """Seconds after the start at which each request is due."""
        clock = 0.0
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


def measure_level(
    make_caller: Callable[[], Callable[[], Any]],
    measurement: Measurement,
    *,
    concurrency: int = 1,
    schedule: Schedule | None = None,
    max_threads: int = 16,
) -> LevelResult:
    """Measure one level. Closed loop (``schedule`` None): ``concurrency`` threads, each with
    its own caller (made in the thread), send back to back. Open loop: ``max_threads``
    threads take the next due time from ``schedule``, wait for it and send; a request's
    latency counts from its due time, so time spent waiting for a free thread or for the
    server counts too. A thread stops at its first error."""
    open_loop = schedule is not None
    threads_wanted = max_threads if open_loop else concurrency
    result = LevelResult()
    lock = threading.Lock()
    stop = threading.Event()
    ready = threading.Barrier(threads_wanted + 1, timeout=measurement.timeout)
    per_thread: list[list[tuple[float, float]]] = [[] for _ in range(threads_wanted)]
    offsets = schedule.offsets() if schedule is not None else None
    origin = {"start": 0.0}

    def fail(exc: BaseException) -> None:
        with lock:
            result.errors += 1
            if result.first_error is None:
                result.first_error = f"{type(exc).__name__}: {exc}"[:500]

    def next_due() -> float | None:
        with lock:
            assert offsets is not None
            offset = next(offsets, None)
        return None if offset is None else origin["start"] + offset

    def worker(index: int) -> None:
        try:
            call = make_caller()
        except Exception as exc:
            fail(exc)
            call = None
        try:
            ready.wait()
        except threading.BrokenBarrierError:
            return
        if call is None:
            return
        spans = per_thread[index]
        clock = time.perf_counter
        while not stop.is_set():
            if open_loop:
                due = next_due()
                if due is None:
                    return
                wait = due - clock()
                if wait > 0 and stop.wait(wait):
                    return
                start = due
            else:
                start = clock()
            try:
                call()
            except Exception as exc:
                fail(exc)
                return
            spans.append((start, clock()))

    threads = [
        threading.Thread(target=worker, args=(i,), daemon=True, name=f"oipcodec-bench-{i}")
        for i in range(threads_wanted)
    ]
    for thread in threads:
        thread.start()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        result.first_error = result.first_error or "the load threads did not start in time"
        stop.set()
        return result
    origin["start"] = time.perf_counter()
    result.epoch_offset = time.time() - time.perf_counter()
    try:
        _windows(result, per_thread, threads, measurement)
    finally:
        stop.set()
        limit = time.perf_counter() + measurement.timeout
        for thread in threads:
            thread.join(max(0.0, limit - time.perf_counter()))
        if any(t.is_alive() for t in threads):
            fail(TimeoutError(f"requests still running {measurement.timeout:.0f} s after the "
                              "last window"))  # fmt: skip
    return result


def _completed(per_thread: list[list[tuple[float, float]]]) -> int:
    return sum(len(spans) for spans in per_thread)


def _windows(result: LevelResult, per_thread: list[list[tuple[float, float]]],
             threads: list[threading.Thread], measurement: Measurement) -> None:  # fmt: skip
    """Cut the completions into the warm-up and the windows, checking stability after each
    window, until stable, ``max_trials`` windows, or every thread has stopped."""
    clock = time.perf_counter
    poll = 0.002

    def alive() -> bool:
        return any(t.is_alive() for t in threads)

    # Warm-up: its completions are measured in no window (bounded by the request timeout).
    deadline = clock() + measurement.timeout
    while _completed(per_thread) < measurement.warmup_requests and alive():
        if clock() >= deadline:
            break
        time.sleep(poll)
    edge = clock()
    result.edges.append(edge)
    cpu = time.process_time()
    # Each thread appends in the order its requests end: a window takes, per thread, the
    # spans from where the previous window stopped up to its edge.
    taken = [0] * len(per_thread)
    for index, spans in enumerate(per_thread):
        taken[index] = len(spans)
    window_spans: list[list[tuple[float, float]]] = []
    cpu_used: list[float] = []
    while len(result.windows) < max(1, measurement.max_trials) and alive():
        start = edge
        if measurement.mode == "count_windows":
            # A count window ends at its request count, or after ten intervals at most.
            base = _completed(per_thread)
            limit = start + measurement.interval * 10
            while clock() < limit and alive():
                if _completed(per_thread) - base >= measurement.request_count:
                    break
                time.sleep(poll)
        else:
            end_at = start + measurement.interval
            while clock() < end_at and alive():
                time.sleep(min(poll * 10, max(0.0, end_at - clock())))
        edge = clock()
        result.edges.append(edge)
        now_cpu = time.process_time()
        spans = []
        for index, thread_spans in enumerate(per_thread):
            position = taken[index]
            while position < len(thread_spans) and thread_spans[position][1] < edge:
                spans.append(thread_spans[position])
                position += 1
            taken[index] = position
        window_spans.append(spans)
        cpu_used.append(now_cpu - cpu)
        cpu = now_cpu
        result.windows.append(window_summary(spans, edge - start, cpu_used[-1]))
        if measurement.max_trials >= STABILITY_WINDOWS and stable(result.windows, measurement):
            result.stable = True
            break
    if measurement.max_trials < STABILITY_WINDOWS:
        result.stable = None  # too few windows to judge: not checked
    elif result.stable is None:
        result.stable = False
    result.spans = [s for spans in window_spans[-STABILITY_WINDOWS:] for s in spans]
    result.cpu_seconds = sum(cpu_used[-STABILITY_WINDOWS:])


def summarize(result: LevelResult, payload_bytes: int, answer_bytes: int) -> dict[str, Any]:
    """The level's figures: the last three windows merged (as perf_analyzer reports them),
    tensor MB/s both ways, stability, the generator's CPU use and whether it was saturated,
    and every window."""
    last = result.windows[-STABILITY_WINDOWS:]
    out = merge(last, result.spans, result.cpu_seconds) if last else window_summary([], 0, 0)
    out["mb_per_s"] = out["rps"] * (payload_bytes + answer_bytes) / 1e6
    out["errors"] = result.errors
    out["stable"] = result.stable
    out["generator_saturated"] = bool(last) and out["generator_cpu"] >= SATURATED_CPU
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
    """``c=8`` (concurrency 8), ``r=100`` (open loop at 100 requests/s) or ``intervals``:
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
