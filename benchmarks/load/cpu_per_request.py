"""The server's CPU per small request, for two source trees side by side, alternating.

    python benchmarks/load/cpu_per_request.py --tree before=/tmp/main/src --tree after=src \
        [--requests 4000] [--rounds 6] [--protocol native]

Each round starts ``oipcodec serve`` once per tree (``PYTHONPATH`` = the tree; in the order
before, after, then after, before, ...) and sends the identity model ``--requests`` small
requests (one 1x16 FP32 input) one after another on one connection, for each case: REST JSON,
REST binary (input and output binary), gRPC raw (oipcodec's GrpcClient). It reports the
server process's CPU time (user + system, from /proc; Linux) per request, per round and the
median. A tree needs its kernels compiled in place (copy the ``.so`` files of a build).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

# Run as a script, this file has benchmarks/load on sys.path: the repository goes first,
# for the test suite's free-port helper.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support.ports import free_ports

TICK = os.sysconf("SC_CLK_TCK")
X = np.arange(16, dtype=np.float32).reshape(1, 16)
JSON_BODY = json.dumps(
    {
        "inputs": [
            {"name": "INPUT0", "datatype": "FP32", "shape": [1, 16], "data": X.ravel().tolist()}
        ]
    }
).encode()
_HEAD = json.dumps(
    {
        "inputs": [
            {
                "name": "INPUT0",
                "datatype": "FP32",
                "shape": [1, 16],
                "parameters": {"binary_data_size": 64},
            }
        ],
        "outputs": [{"name": "INPUT0", "parameters": {"binary_data": True}}],
    }
).encode()
BINARY_BODY = _HEAD + X.tobytes()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rest(port: int, body: bytes, headers: dict[str, str], count: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(count):
        connection.request("POST", "/v2/models/identity/infer", body, headers)
        answer = connection.getresponse()
        answer.read()
        if answer.status != 200:
            raise SystemExit(f"the server answered {answer.status}")
    connection.close()


def grpc(port: int, count: int) -> None:
    from oipcodec import Tensor
    from oipcodec.client import GrpcClient

    client = GrpcClient(f"127.0.0.1:{port}")
    tensor = Tensor.from_array("INPUT0", X)
    for _ in range(count):
        client.infer("identity", [tensor])
    client.close()


def measure(requests: int, extra: list[str], env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """(requests per second, microseconds of server CPU per request) per case, for one
    ``oipcodec serve`` started with the arguments ``extra`` and the environment ``env``."""
    http_port, grpc_port = free_ports(2)
    command = [sys.executable, "-m", "oipcodec", "serve", "--log-level", "error"]
    command += ["--http-port", str(http_port), "--grpc-port", str(grpc_port), *extra]
    server = subprocess.Popen(command, env=env, cwd="/")
    cases: dict[str, Callable[[int], None]] = {
        "rest_json": lambda n: rest(http_port, JSON_BODY, {"content-type": "application/json"}, n),
        "rest_binary": lambda n: rest(
            http_port, BINARY_BODY, {"Inference-Header-Content-Length": str(len(_HEAD))}, n
        ),
        "grpc": lambda n: grpc(grpc_port, n),
    }
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", http_port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.1)
        figures = {}
        for name, send in cases.items():
            send(max(requests // 8, 50))  # warm
            before, start = cpu_seconds(server.pid), time.perf_counter()
            send(requests)
            wall = time.perf_counter() - start
            cpu = (cpu_seconds(server.pid) - before) / requests * 1e6
            figures[name] = (requests / wall, cpu)
        return figures
    finally:
        server.terminate()
        server.wait(10)


def one_server(tree: str, requests: int, protocol: str | None = None) -> dict[str, float]:
    """Microseconds of server CPU per request, per case, for one server of ``tree``."""
    extra = [] if protocol is None else ["--http-protocol", protocol]
    figures = measure(requests, extra, dict(os.environ, PYTHONPATH=tree))
    return {case: cpu for case, (_, cpu) in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=SRC, twice")
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--protocol", help="oipcodec serve's --http-protocol (default: its own)")
    args = parser.parse_args()
    trees = dict(item.split("=", 1) for item in args.tree)
    names = list(trees)
    results: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for round_ in range(args.rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            figures = one_server(str(Path(trees[name]).resolve()), args.requests, args.protocol)
            for case, value in figures.items():
                results[name].setdefault(case, []).append(value)
            print(name, {case: round(value, 1) for case, value in figures.items()}, flush=True)
    for name in names:
        for case, values in results[name].items():
            runs = ", ".join(f"{v:.0f}" for v in values)
            print(f"{name} {case}: median {statistics.median(values):.0f} us ({runs})")


if __name__ == "__main__":
    main()
