"""Responses/s and server CPU per response of a model yielding 256 small responses, over
REST generate_stream (server-sent events) and gRPC ModelStreamInfer, at 1 and 8 concurrent
streams; and the time to a stream's first response next to a unary call's latency.

    python tools/stream_measure.py [--seconds 3]
    python tools/stream_measure.py --triton-home DIR [--seconds 2] [--rounds 2]

One server subprocess (oipcodec's HTTP/1.1 and grpcio, one worker); the clients run in this
process's threads (oipcodec's HttpClient.generate_stream and GrpcClient.infer_stream), so on
a small machine they share its cores with the server: the figures are the pair's, not the
server's alone.

With ``--triton-home`` (an environment of tools/triton_env.sh), ModelStreamInfer against the
real Triton server instead: ``oipcodec serve``'s demo ``square_int32`` and Triton's own
Python-backend ``square_int32`` (IN = 256: 256 responses of one INT32), both driven by
perf_analyzer ``--streaming`` (C++, the same client for both) at 1 and 8 concurrent streams,
the two servers alternating, ``--rounds`` times each. Responses/s are the server's own count
(its inference statistics: successful requests x 256) over the run's wall time, server CPU
the server's process and its children (Triton's Python stub) over the same run.
docs/measurements.md#streaming holds runs of both.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.load.batching import cpu_seconds
from oipcodec.client import GrpcClient, HttpClient
from oipcodec.testing import background
from tests.support.serve_process import run_serve
from tests.support.streaming_models import Burst, Single
from tests.support.triton import square_int32_repository, triton_env, tritonserver

RESPONSES = 256


def _server_cpu() -> float:
    """CPU seconds (user + system) of this process's children: the server."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def _sse(address: str) -> Any:
    client = HttpClient(address)

    def one() -> int:
        return sum(1 for _ in client.generate_stream("burst", {"N": RESPONSES}))

    return one


def _grpc(address: str) -> Any:
    client = GrpcClient(address)
    n = {"N": np.array([RESPONSES], dtype=np.int32)}

    def one() -> int:
        return sum(1 for _ in client.infer_stream("burst", n))

    return one


def _run(make: Any, address: str, concurrency: int, seconds: float) -> tuple[float, float]:
    """Responses/s, and server CPU microseconds per response."""
    counts = [0] * concurrency
    stop = time.perf_counter() + seconds

    def worker(index: int) -> None:
        one = make(address)
        while time.perf_counter() < stop:
            counts[index] += one()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    cpu, start = _server_cpu(), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - start, _server_cpu() - cpu
    total = sum(counts)
    return total / elapsed, cpu / total * 1e6


def _first(address: str, grpc_address: str, rounds: int) -> dict[str, float]:
    """Median milliseconds: the first of 256 responses, and a unary call, per transport."""
    http, grpc = HttpClient(address), GrpcClient(grpc_address)
    n = {"N": np.array([RESPONSES], dtype=np.int32)}
    times: dict[str, list[float]] = {k: [] for k in ("sse", "rest", "grpc-stream", "grpc")}
    for _ in range(rounds):
        start = time.perf_counter()
        stream = http.generate_stream("burst", {"N": RESPONSES})
        next(stream)
        times["sse"].append(time.perf_counter() - start)
        stream.close()
        start = time.perf_counter()
        http.infer("single", {"N": n["N"]})
        times["rest"].append(time.perf_counter() - start)
        start = time.perf_counter()
        responses = grpc.infer_stream("burst", n)
        next(responses)
        times["grpc-stream"].append(time.perf_counter() - start)
        responses.close()
        start = time.perf_counter()
        grpc.infer("single", n)
        times["grpc"].append(time.perf_counter() - start)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def _listener(address: str) -> int:
    """The process listening on ``address`` (host:port): the server whose CPU is counted."""
    port = int(address.rsplit(":", 1)[1])
    for connection in psutil.net_connections("tcp"):
        listening = connection.status == psutil.CONN_LISTEN and connection.laddr.port == port
        if listening and connection.pid is not None:
            return int(connection.pid)
    raise RuntimeError(f"no process listens on {address}")


def _succeeded(http: str) -> int:
    """square_int32's successful requests so far, from the server's statistics."""
    url = f"http://{http}/v2/models/square_int32/stats"
    with urllib.request.urlopen(url, timeout=10) as answer:
        document = json.loads(answer.read())
    return int(document["model_stats"][0]["inference_stats"]["success"]["count"])


def _perf_analyzer(
    binary: str, server: dict[str, str], data: Path, concurrency: int, seconds: float
) -> tuple[float, float]:
    """One perf_analyzer --streaming run: responses/s, and server CPU µs per response."""
    pid = _listener(server["grpc"])
    before, cpu, start = _succeeded(server["http"]), cpu_seconds(pid), time.perf_counter()
    command = [binary, "-m", "square_int32", "-u", server["grpc"], "-i", "grpc", "--streaming",
               "--input-data", str(data), "--concurrency-range", str(concurrency),
               "--measurement-mode", "time_windows",
               "--measurement-interval", str(int(seconds * 1000)),
               "--stability-percentage", "1000", "--max-trials", "3"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"perf_analyzer failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    elapsed, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu
    responses = RESPONSES * (_succeeded(server["http"]) - before)
    return responses / elapsed, cpu / responses * 1e6


def compare_with_triton(seconds: float, rounds: int) -> None:
    """ModelStreamInfer, oipcodec against the real Triton server, alternating (the module's
    docstring)."""
    binary = triton_env()["OIPCODEC_PERF_ANALYZER"]
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        root = Path(folder)
        data = root / "in.json"
        data.write_text(json.dumps({"data": [{"IN": {"content": [RESPONSES], "shape": [1]}}]}))
        repository = square_int32_repository(root / "repository")
        triton = stack.enter_context(tritonserver(repository, root / "triton.log"))
        servers = {
            "oipcodec": stack.enter_context(
                contextlib.contextmanager(run_serve)(root, statistics=True)
            ),
            "triton": {"http": triton.http, "grpc": triton.grpc},
        }
        for concurrency in (1, 8):
            for round_ in range(rounds):
                order = list(servers) if round_ % 2 == 0 else list(reversed(servers))
                for name in order:
                    rate, cpu = _perf_analyzer(binary, servers[name], data, concurrency, seconds)
                    print(f"ModelStreamInfer c={concurrency} round {round_ + 1} {name:8}: "
                          f"{rate:9.0f} responses/s, server CPU {cpu:6.1f} us/response",
                          flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--triton-home", help="compare with the real Triton server (DIR)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.triton_home:
        os.environ["OIPCODEC_TRITON_HOME"] = args.triton_home
        compare_with_triton(args.seconds, args.rounds)
        return
    with background([Burst(), Single()], log_level="critical") as server:
        for make in (_sse, _grpc):  # warm up
            _run(make, server.http_address if make is _sse else server.grpc_address, 1, 0.5)
        for concurrency in (1, 8):
            for make, name in ((_sse, "generate_stream"), (_grpc, "ModelStreamInfer")):
                address = server.http_address if make is _sse else server.grpc_address
                rate, cpu = _run(make, address, concurrency, args.seconds)
                print(f"{name:17} c={concurrency}: {rate:9.0f} responses/s, "
                      f"server CPU {cpu:5.1f} us/response")  # fmt: skip
        first = _first(server.http_address, server.grpc_address, 50)
        print("first response (median ms): " + ", ".join(f"{k} {v:.2f}" for k, v in first.items()))


if __name__ == "__main__":
    main()
