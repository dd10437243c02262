"""Bounded measurement loops: closed-loop load at a concurrency level, and codec timing.

Every loop stops by itself: a load window ends when its duration has passed or its request
count is reached (requests in flight then finish, each bounded by the client's timeout); a
codec timing ends after its time budget or repetition count.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["LoadResult", "run_load", "time_call"]


@dataclass
class LoadResult:
    concurrency: int
    requests: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str | None = None

    def summary(self, payload_bytes: int, answer_bytes: int | None = None) -> dict[str, Any]:
        """Requests/s, tensor MB/s (the request's tensor bytes and the answer's, by default
        the same again: the identity model's echo) and latency percentiles (ms)."""
        rps = self.requests / self.seconds if self.seconds > 0 else 0.0
        answer_bytes = payload_bytes if answer_bytes is None else answer_bytes
        out: dict[str, Any] = {
            "concurrency": self.concurrency,
            "requests": self.requests,
            "seconds": round(self.seconds, 4),
            "rps": rps,
            "mb_per_s": rps * (payload_bytes + answer_bytes) / 1e6,
            "errors": self.errors,
        }
        if self.latencies:
            p50, p90, p99 = np.percentile(np.array(self.latencies) * 1e3, [50, 90, 99])
            out.update(p50_ms=float(p50), p90_ms=float(p90), p99_ms=float(p99))
        if self.first_error:
            out["first_error"] = self.first_error
        return out


def run_load(
    make_caller: Callable[[], Callable[[], Any]],
    concurrency: int,
    duration: float,
    max_requests: int,
    join_timeout: float,
) -> LoadResult:
    """``concurrency`` threads, each with its own caller (made in the thread), send requests
    back to back from a common start until ``duration`` seconds have passed or
    ``max_requests`` were sent in all. A thread stops at its first error."""
    result = LoadResult(concurrency)
    lock = threading.Lock()
    ready = threading.Barrier(concurrency + 1, timeout=join_timeout)
    state = {"sent": 0, "deadline": 0.0}
    per_thread: list[list[float]] = [[] for _ in range(concurrency)]

    def fail(exc: BaseException) -> None:
        with lock:
            result.errors += 1
            if result.first_error is None:
                result.first_error = f"{type(exc).__name__}: {exc}"[:500]

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
        times = per_thread[index]
        clock = time.perf_counter
        while True:
            with lock:
                if state["sent"] >= max_requests or clock() >= state["deadline"]:
                    return
                state["sent"] += 1
            start = clock()
            try:
                call()
            except Exception as exc:
                fail(exc)
                return
            times.append(clock() - start)

    threads = [
        threading.Thread(target=worker, args=(i,), daemon=True, name=f"oipcodec-bench-{i}")
        for i in range(concurrency)
    ]
    for thread in threads:
        thread.start()
    # The deadline is set before the main thread joins the barrier (it arrives last, once
    # every caller is made), so no thread can read it unset.
    start = time.perf_counter()
    state["deadline"] = start + duration + 60.0
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        result.first_error = result.first_error or "the load threads did not start in time"
        return result
    start = time.perf_counter()
    state["deadline"] = start + duration
    limit = start + duration + join_timeout
    for thread in threads:
        thread.join(max(0.0, limit - time.perf_counter()))
    result.seconds = time.perf_counter() - start
    if any(t.is_alive() for t in threads):
        fail(TimeoutError(f"requests still running {join_timeout:.0f} s after the window"))
    for times in per_thread:
        result.latencies.extend(times)
    result.requests = len(result.latencies)
    return result


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
