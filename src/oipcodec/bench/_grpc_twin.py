"""The twin of the native HTTP/2 sender (oipcodec.bench.sender.run_grpc): the same closed and
open loops over grpcio's channels, one channel (its own connection) a ``connections``, raw
bytes in and out. An HTTP/2 sender in pure Python would repeat nghttp2 in Python; grpcio is
what every Python gRPC client already uses, so the twin measures what they would. Its CPU is
the whole process's (grpcio's threads send and read), not one thread's."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

__all__ = ["run_grpcio"]


def run_grpcio(
    host: str,
    port: int,
    messages: list[bytes],
    connections: int,
    streams: int,
    duration: float,
    count: int,
    rate: float,
    method: str,
    timeout: float,
    max_answer: int,
    capacity: int,
) -> dict[str, Any]:
    """Run the load; returns the raw outcome as oipcodec.bench._sender.run_load does."""
    import grpc

    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    options = [
        ("grpc.use_local_subchannel_pool", 1),  # one connection a channel, not one shared
        ("grpc.max_receive_message_length", min(max_answer, 2**31 - 1)),
    ]
    channels = [grpc.insecure_channel(target, options=options) for _ in range(connections)]
    stubs = [c.unary_unary(method) for c in channels]
    lock = threading.Condition()
    state: dict[str, Any] = {"sent": 0, "completed": 0, "active": 0, "first_error": ""}
    state["progress"] = time.monotonic_ns()
    errors: dict[str, int] = {}
    status_counts: dict[int, int] = {}
    done: list[int] = []
    latency: list[int] = []
    busy = [False] * (connections * streams)
    origin = time.monotonic_ns()
    end_ns = origin + int(duration * 1e9) if duration > 0 else None
    interval_ns = 1e9 / rate if rate > 0 else 0.0
    last = [origin]

    def issuing(now: int) -> bool:
        return (end_ns is None or now < end_ns) and (not count or state["sent"] < count)

    def fail(slot: int, kind: str, message: str) -> None:
        errors[kind] = errors.get(kind, 0) + 1
        if not state["first_error"]:
            state["first_error"] = f"connection {slot // streams}: {message}"

    def finished(slot: int, start: int, future: Any) -> None:
        now = time.monotonic_ns()
        error = future.exception()
        with lock:
            state["progress"] = now
            if error is None:
                status_counts[0] = status_counts.get(0, 0) + 1
                state["completed"] += 1
                last[0] = now
                if len(done) < capacity:
                    done.append(now - origin)
                    latency.append(now - start)
            else:
                code, details = error.code(), error.details() or ""
                if code is grpc.StatusCode.DEADLINE_EXCEEDED:
                    fail(slot, "timeout", f"no complete answer within {timeout:.3f} s")
                elif code is grpc.StatusCode.UNAVAILABLE:
                    # grpcio says "failed to connect" for a close too: only a refusal is one.
                    kind = "connect" if "refused" in details.lower() else "closed"
                    fail(slot, kind, f"the connection failed or closed ({details})")
                elif code is grpc.StatusCode.RESOURCE_EXHAUSTED and "larger" in details:
                    fail(slot, "too_large", f"answer past the bound of {max_answer} bytes")
                else:
                    value = int(code.value[0])
                    status_counts[value] = status_counts.get(value, 0) + 1
                    fail(slot, "status", f"grpc-status {value}: {details}")
            busy[slot] = False
            state["active"] -= 1
            if rate <= 0 and issuing(now):
                issue(slot, now)
            lock.notify_all()

    def issue(slot: int, start: int) -> None:
        # Called with the lock held.
        message = messages[state["sent"] % len(messages)]
        state["sent"] += 1
        state["active"] += 1
        busy[slot] = True
        future = stubs[slot // streams].future(message, timeout=timeout)
        future.add_done_callback(lambda f, s=slot, t=start: finished(s, t, f))

    cpu0 = time.process_time()
    with lock:
        if rate <= 0:
            for slot in range(len(busy)):
                if issuing(time.monotonic_ns()):
                    issue(slot, time.monotonic_ns())
        else:
            while issuing(time.monotonic_ns()):
                due = origin + int(state["sent"] * interval_ns)
                if end_ns is not None and due >= end_ns:
                    break
                wait = (due - time.monotonic_ns()) / 1e9
                if wait > 0:
                    lock.wait(wait)
                    continue
                free = [s for s, b in enumerate(busy) if not b]
                if not free:
                    lock.wait(0.1)
                    continue
                issue(free[0], due)
        state["progress"] = time.monotonic_ns()
        # Every call carries its own deadline, so the calls in flight end by themselves; the
        # wait is bounded all the same: a timeout (and a second) with no call ending.
        while state["active"] and time.monotonic_ns() - state["progress"] < (timeout + 1) * 1e9:
            lock.wait(0.1)
    stop = time.monotonic_ns()
    unsent = 0
    if rate > 0 and end_ns is not None:
        due_total = int(np.ceil((end_ns - origin) / interval_ns))
        unsent = max(0, (min(due_total, count) if count else due_total) - state["sent"])
    cpu = time.process_time() - cpu0
    for c in channels:
        c.close()
    return {
        "setup_failed": False,
        "first_error": state["first_error"],
        "sent": state["sent"],
        "completed": state["completed"],
        "unsent": unsent,
        "done_ns": np.array(done, dtype=np.int64),
        "latency_ns": np.array(latency, dtype=np.int64),
        "status": np.zeros(len(done), dtype=np.uint16),
        "status_counts": status_counts,
        "errors": errors,
        "elapsed": ((last[0] if last[0] > origin else stop) - origin) / 1e9,
        "cpu": cpu,
    }
