"""CPU seconds spent by each side of a measurement, read at the edges of its windows: the
cost of a request end to end, which holds on a busy machine where requests/s and latency
measure the neighbours too.

The client side is the load generator's own processes (``time.process_time`` in each,
:mod:`oipcodec.bench.load`). The server side is, for the embedded server, its processes'
threads' time on a CPU from ``/proc/PID/task/TID/schedstat`` (nanoseconds; Linux), else
``utime + stime`` from ``/proc/PID/stat`` (clock ticks); for a server given by ``--url``, the
``process_cpu_seconds_total`` of its Prometheus ``/metrics`` where it exports one (the
Prometheus client libraries' process collector does, in MLServer and KServe), else, for a
server on this machine, the processes that hold its listening socket (``/proc/net/tcp``);
None, shown ``n/a``, where none of these can be read.
"""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "CpuReader",
    "child_pids",
    "listening_pids",
    "metrics_reader",
    "proc_reader",
    "read_metrics_cpu",
    "url_reader",
]

#: A call giving the server's CPU seconds so far, or None when it could not be read.
CpuReader = Callable[[], "float | None"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc; empty elsewhere)."""
    children = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # fields[0] is the state, [1] the parent
            children.append(int(entry))
    return children


def _proc_seconds(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    # utime and stime: fields 14 and 15 of stat(5), 11 and 12 after the name.
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _threads_ns(pid: int) -> dict[int, int] | None:
    """Nanoseconds on a CPU so far of each live thread of ``pid`` (``/proc/PID/task/TID/
    schedstat``), or None when they cannot be read."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    out = {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as stat:
                out[int(tid)] = int(stat.read().split()[0])
        except (OSError, ValueError, IndexError):  # the thread has just exited
            continue
    return out or None


def proc_reader(pids: Iterable[int]) -> CpuReader | None:
    """The summed CPU seconds of ``pids`` (every thread of each), or None when /proc cannot
    read them. Read from each thread's nanoseconds where the kernel gives them, else from
    ``/proc/PID/stat``, whose clock ticks are too coarse for ``--quick``'s short windows
    (docs/measurements.md)."""
    pids = list(pids)
    if not pids or any(_proc_seconds(pid) is None for pid in pids):
        return None
    if any(_threads_ns(pid) is None for pid in pids):

        def ticks() -> float | None:
            values = [_proc_seconds(pid) for pid in pids]
            return None if any(v is None for v in values) else sum(v for v in values if v)

        return ticks
    # A running sum of each thread's time since the previous reading: a thread started in
    # between counts whole, one that ended loses only its time since then.
    seen: dict[tuple[int, int], int] = {}
    total = 0

    def read() -> float | None:
        nonlocal seen, total
        now = {}
        for pid in pids:
            threads = _threads_ns(pid)
            if threads is None:
                return None
            now.update({(pid, tid): ns for tid, ns in threads.items()})
        total += sum(ns - seen.get(key, 0) for key, ns in now.items())
        seen = now
        return total / 1e9

    return read


def read_metrics_cpu(text: str) -> float | None:
    """``process_cpu_seconds_total`` in a Prometheus text exposition (summed over its label
    sets: one a process when a server reports several), or None when absent."""
    total, found = 0.0, False
    for line in text.splitlines():
        if line.startswith("process_cpu_seconds_total"):
            name, _, rest = line.partition(" ")
            if name.split("{", 1)[0] != "process_cpu_seconds_total" or not rest.strip():
                continue
            try:
                total += float(rest.split()[0])
            except ValueError:
                continue
            found = True
    return total if found else None


def metrics_reader(url: str, headers: dict[str, str] | None = None, context: Any = None,
                   timeout: float = 5.0) -> CpuReader | None:  # fmt: skip
    """A reader of ``process_cpu_seconds_total`` at ``url``/metrics, or None when the first
    reading finds none (no /metrics, or no process collector)."""
    target = url.rstrip("/") + "/metrics"

    def read() -> float | None:
        request = urllib.request.Request(target, headers=dict(headers or {}))
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=context) as answer:
                return read_metrics_cpu(answer.read().decode("utf-8", "replace"))
        except Exception:  # a failed reading leaves the figure n/a, never the run
            return None

    return read if read() is not None else None


def listening_pids(port: int) -> list[int]:
    """The processes of this machine holding a socket that listens on TCP ``port`` (every
    worker of a server that shares it), from /proc; empty where that cannot be read."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as lines:
                next(lines, None)
                for line in lines:
                    fields = line.split()
                    # local_address is ADDRESS:PORT in hex; state 0A is LISTEN.
                    listening = len(fields) > 9 and fields[3] == "0A"
                    if listening and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(f"socket:[{fields[9]}]")
        except OSError:
            continue
    if not inodes:
        return []
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            links = {
                os.readlink(f"/proc/{entry}/fd/{fd}") for fd in os.listdir(f"/proc/{entry}/fd")
            }
        except OSError:  # gone, or not ours to read
            continue
        if links & inodes:
            pids.append(int(entry))
    return pids


def url_reader(url: str, headers: dict[str, str] | None = None,
               context: Any = None) -> CpuReader | None:  # fmt: skip
    """The CPU reader of the server at ``url``: its /metrics' ``process_cpu_seconds_total``,
    else, when it listens on this machine (127.0.0.1, localhost, ::1), its processes from
    /proc; None when neither."""
    reader = metrics_reader(url, headers, context)
    if reader is not None:
        return reader
    parts = urllib.parse.urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1") or parts.port is None:
        return None
    return proc_reader(listening_pids(parts.port))
