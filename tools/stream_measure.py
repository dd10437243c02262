"""Responses/s and server CPU per response of a model yielding 256 small responses, over
REST generate_stream (server-sent events) and gRPC ModelStreamInfer, at 1 and 8 concurrent
streams; and the time to a stream's first response next to a unary call's latency.

    python tools/stream_measure.py [--seconds 3]

One server subprocess (oipcodec's HTTP/1.1 and grpcio, one worker); the clients run in this
process's threads (oipcodec's HttpClient.generate_stream and GrpcClient.infer_stream), so on
a small machine they share its cores with the server: the figures are the pair's, not the
server's alone. docs/measurements.md#streaming holds a run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from oipcodec.client import GrpcClient, HttpClient
from oipcodec.testing import background
from tests.support.streaming_models import Burst, Single

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
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
