"""The native sender (oipcodec.bench.sender) and wrk on one server: requests/s side by side.

    python benchmarks/load/sender_vs_wrk.py [--rounds 3] [--seconds 3] [--connections 8]

One ``oipcodec serve`` (REST only, the demo identity model) on a free 127.0.0.1 port; then, in
alternating rounds (wrk, native, python; the order turned each round), the same closed loop of
small REST JSON requests (one [1, 16] FP32 input) over ``--connections`` keep-alive connections
for ``--seconds``: wrk with one thread (Debian's ``wrk``; its POST body from a Lua script), the
native sender, and its Python twin. Reported per round and as the median: requests/s (and the
median of each round's ratio to wrk's), each sender's own CPU per request (wrk's from its
rusage; ours from the sending thread), and the server's (from /proc). Figures:
docs/measurements.md.
"""

from __future__ import annotations

import argparse
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
from oipcodec.bench import sender
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()
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
    base = statistics.median(r[0] for r in rows["wrk"])
    for name, values in rows.items():
        rps = statistics.median(r[0] for r in values)
        # The ratio within each round (runs seconds apart) moves less than the rates do.
        paired = statistics.median(r[0] / w[0] for r, w in zip(values, rows["wrk"], strict=True))
        print(
            f"{name:7s} {rps:9,.0f} req/s ({rps / base:.2f}x wrk; per round {paired:.2f}x)  "
            f"sender {statistics.median(r[1] for r in values):6.1f} us/req  server "
            f"{statistics.median(r[2] for r in values):6.1f} us/req"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
