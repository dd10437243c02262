"""The native sender (oipcodec.bench.sender) and wrk on one server: requests/s side by side.

    python benchmarks/load/sender_vs_wrk.py [--rounds 3] [--seconds 3] [--connections 8]
    python benchmarks/load/sender_vs_wrk.py --grpc [--rounds 3] [--seconds 3] [--connections 8]

One ``oipcodec serve`` (REST only, the demo identity model) on a free 127.0.0.1 port; then, in
alternating rounds (wrk, native, python; the order turned each round), the same closed loop of
small REST JSON requests (one [1, 16] FP32 input) over ``--connections`` keep-alive connections
for ``--seconds``: wrk with one thread (Debian's ``wrk``; its POST body from a Lua script), the
native sender, and its Python twin. Reported per round and as the median: requests/s (and the
median of each round's ratio to wrk's), each sender's own CPU per request (wrk's from its
rusage; ours from the sending thread), and the server's (from /proc). Figures:
docs/measurements.md.

``--grpc``: the same for small ModelInfer calls (FP32 [1, 16], raw contents) against the
server's gRPC port (grpcio), ``--connections`` calls in flight on one HTTP/2 connection (as a
shared gRPC channel sends them): perf_analyzer ``-i grpc`` at that concurrency (from
``--perf-analyzer`` or OIPCODEC_TRITON_HOME, see tools/triton_env.sh; its requests/s from its
last three windows, its CPU per request from its rusage over all its requests, warm-up
included, so an upper bound), h2load (nghttp2's, ``-c 1 -m N``) when on PATH, the native
sender's HTTP/2 half and its twin (grpcio's channel). The ratios are to perf_analyzer.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import numpy as np

from oipcodec import pb
from oipcodec.bench import sender
from oipcodec.types import InferRequest, Tensor
from tests.support.ports import free_ports

TICK = os.sysconf("SC_CLK_TCK")
BODY = json.dumps(
    {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16], "data": [0.5] * 16}]}
).encode()
PATH = "/v2/models/identity/infer"


def server_cpu(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_wrk(port: int, seconds: float, connections: int, script: str) -> tuple[float, float, int]:
    """wrk's requests/s, its CPU seconds and its request count."""
    before = children_cpu()
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "-s", script,
         f"http://127.0.0.1:{port}{PATH}"],
        capture_output=True, text=True, check=True, timeout=seconds + 30,
    ).stdout  # fmt: skip
    cpu = children_cpu() - before
    rps = float(re.search(r"Requests/sec:\s*([\d.]+)", out).group(1))  # type: ignore[union-attr]
    count = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk saw errors:\n{out}")
    return rps, cpu, count


def run_ours(
    port: int, seconds: float, connections: int, implementation: str
) -> tuple[float, float, int]:
    request = sender.encode_request("POST", PATH, BODY, host=f"127.0.0.1:{port}")
    result = sender.run("127.0.0.1", port, request, connections, duration=seconds,
                        implementation=implementation)  # fmt: skip
    if result.error_count or set(result.status_counts) != {200}:
        raise RuntimeError(
            f"{implementation}: {result.errors} {result.status_counts} {result.first_error}"
        )
    return result.requests_per_second, result.cpu, result.completed


GRPC_MESSAGE = pb.encode_request(
    InferRequest(
        [Tensor("INPUT0", "FP32", (1, 16), np.full((1, 16), 0.5, np.float32))],
        model_name="identity",
    )
)


def run_perf_analyzer(
    binary: str, port: int, seconds: float, streams: int
) -> tuple[float, float, int]:
    """perf_analyzer -i grpc's requests/s (its last three windows of ``seconds / 2``), its CPU
    seconds and the requests that CPU paid for (every window's, as it printed them)."""
    with tempfile.TemporaryDirectory() as work:
        report = Path(work, "pa.csv")
        before, started = children_cpu(), time.monotonic()
        done = subprocess.run(
            [binary, "-m", "identity", "-u", f"127.0.0.1:{port}", "-i", "grpc",
             "--concurrency-range", str(streams), "-p", str(int(seconds * 500)),
             "--max-trials", "4", "--stability-percentage", "500", "-f", str(report)],
            capture_output=True, text=True, timeout=seconds * 10 + 60, check=False,
        )  # fmt: skip
        cpu, wall = children_cpu() - before, time.monotonic() - started
        if done.returncode != 0:
            raise RuntimeError(f"perf_analyzer failed:\n{done.stdout[-1500:]}{done.stderr[-500:]}")
        (row,) = list(csv.DictReader(report.open()))
    rps = float(row["Inferences/Second"])
    return rps, cpu, max(1, int(rps * wall))


def run_h2load(port: int, seconds: float, streams: int, body: str) -> tuple[float, float, int]:
    """h2load's requests/s, CPU seconds and request count (one connection, ``streams``)."""
    before = children_cpu()
    out = subprocess.run(
        ["h2load", "-c", "1", "-m", str(streams), "-D", f"{seconds:g}", "-d", body,
         "-H", "content-type: application/grpc", "-H", "te: trailers",
         f"http://127.0.0.1:{port}{sender.GRPC_INFER}"],
        capture_output=True, text=True, check=True, timeout=seconds + 30,
    ).stdout  # fmt: skip
    cpu = children_cpu() - before
    rps = float(re.search(r"finished in [\d.]+s, ([\d.]+) req/s", out).group(1))  # type: ignore[union-attr]
    ok = int(re.search(r"(\d+) succeeded", out).group(1))  # type: ignore[union-attr]
    if re.search(r" [1-9]\d* failed| [1-9]\d* errored", out):
        raise RuntimeError(f"h2load saw errors:\n{out}")
    return rps, cpu, ok


def run_grpc(
    port: int, seconds: float, streams: int, implementation: str
) -> tuple[float, float, int]:
    result = sender.run_grpc("127.0.0.1", port, GRPC_MESSAGE, 1, streams, duration=seconds,
                             implementation=implementation)  # fmt: skip
    if result.error_count:
        raise RuntimeError(f"{implementation}: {result.errors} {result.first_error}")
    return result.requests_per_second, result.cpu, result.completed


def perf_analyzer_binary(given: str | None) -> str | None:
    """``given``, else the one tools/triton_env.sh built (OIPCODEC_TRITON_HOME), else None."""
    home = os.environ.get("OIPCODEC_TRITON_HOME")
    env_file = Path(home, "triton.env") if home else None
    if given or env_file is None or not env_file.is_file():
        return given
    for line in env_file.read_text().splitlines():
        if line.startswith("OIPCODEC_PERF_ANALYZER="):
            return line.split("=", 1)[1]
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--grpc", action="store_true", help="small ModelInfer over gRPC")
    parser.add_argument("--perf-analyzer", help="--grpc: the perf_analyzer binary")
    args = parser.parse_args()
    if args.grpc:
        return main_grpc(args)
    if not shutil.which("wrk"):
        print("wrk is not on PATH (Debian: apt-get install wrk)", file=sys.stderr)
        return 2
    senders = ["wrk", "native", "python"] if sender.native_available() else ["wrk", "python"]
    (port,) = free_ports(1)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
        lua.write(f"wrk.body = {json.dumps(BODY.decode())}\n")
    server = subprocess.Popen(
        [sys.executable, "-m", "oipcodec", "serve", "--http-port", str(port), "--grpc-port",
         "-1", "--no-metrics", "--log-level", "warning"],
    )  # fmt: skip
    rows: dict[str, list[tuple[float, float, float]]] = {s: [] for s in senders}
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health/ready", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        run_ours(port, 1.0, args.connections, senders[1])  # warm-up
        for index in range(args.rounds):
            order = senders if index % 2 == 0 else senders[::-1]
            for name in order:
                served = server_cpu(server.pid)
                if name == "wrk":
                    rps, cpu, count = run_wrk(port, args.seconds, args.connections, lua.name)
                else:
                    rps, cpu, count = run_ours(port, args.seconds, args.connections, name)
                served = server_cpu(server.pid) - served
                rows[name].append((rps, cpu / count * 1e6, served / count * 1e6))
                print(
                    f"round {index + 1} {name:7s} {rps:9,.0f} req/s  sender {cpu / count * 1e6:6.1f}"
                    f" us/req  server {served / count * 1e6:6.1f} us/req",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait(10)
        os.unlink(lua.name)
    print(
        f"\nmedians of {args.rounds} rounds, c={args.connections}, {args.seconds:g} s each, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    report(rows, "wrk")
    return 0


def report(rows: dict[str, list[tuple[float, float, float]]], base_name: str) -> None:
    """The medians of each sender's rounds, and its ratio to ``base_name``'s."""
    base = statistics.median(r[0] for r in rows[base_name])
    for name, values in rows.items():
        rps = statistics.median(r[0] for r in values)
        # The ratio within each round (runs seconds apart) moves less than the rates do.
        paired = statistics.median(
            r[0] / w[0] for r, w in zip(values, rows[base_name], strict=True)
        )
        print(
            f"{name:13s} {rps:9,.0f} req/s ({rps / base:.2f}x {base_name}; per round "
            f"{paired:.2f}x)  sender {statistics.median(r[1] for r in values):6.1f} us/req  "
            f"server {statistics.median(r[2] for r in values):6.1f} us/req"
        )


def main_grpc(args: argparse.Namespace) -> int:
    binary = perf_analyzer_binary(args.perf_analyzer)
    if binary is None:
        print("perf_analyzer: give --perf-analyzer or set OIPCODEC_TRITON_HOME "
              "(tools/triton_env.sh DIR)", file=sys.stderr)  # fmt: skip
        return 2
    senders = ["perf_analyzer", *(["h2load"] if shutil.which("h2load") else [])]
    senders += ["native", "grpcio"] if sender.native_available() else ["grpcio"]
    http, port = free_ports(2)
    with tempfile.NamedTemporaryFile("wb", suffix=".bin", delete=False) as body:
        body.write(b"\x00" + len(GRPC_MESSAGE).to_bytes(4, "big") + GRPC_MESSAGE)
    # perf_analyzer reads the server's statistics, which the metrics setting turns on.
    server = subprocess.Popen(
        [sys.executable, "-m", "oipcodec", "serve", "--http-port", str(http), "--grpc-port",
         str(port), "--log-level", "warning"],
    )  # fmt: skip
    rows: dict[str, list[tuple[float, float, float]]] = {s: [] for s in senders}
    streams = args.connections
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{http}/v2/health/ready", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        run_grpc(port, 1.0, streams, senders[-2] if len(senders) > 2 else "grpcio")  # warm-up
        for index in range(args.rounds):
            order = senders if index % 2 == 0 else senders[::-1]
            for name in order:
                served = server_cpu(server.pid)
                if name == "perf_analyzer":
                    rps, cpu, count = run_perf_analyzer(binary, port, args.seconds, streams)
                elif name == "h2load":
                    rps, cpu, count = run_h2load(port, args.seconds, streams, body.name)
                else:
                    rps, cpu, count = run_grpc(port, args.seconds, streams, name)
                served = server_cpu(server.pid) - served
                rows[name].append((rps, cpu / count * 1e6, served / count * 1e6))
                print(
                    f"round {index + 1} {name:13s} {rps:9,.0f} calls/s  sender "
                    f"{cpu / count * 1e6:6.1f} us/call  server {served / count * 1e6:6.1f} us/call",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait(10)
        os.unlink(body.name)
    print(
        f"\nmedians of {args.rounds} rounds, gRPC, {streams} streams on one connection, "
        f"{args.seconds:g} s each, load average {os.getloadavg()[0]:.1f}"
    )
    report(rows, "perf_analyzer")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
