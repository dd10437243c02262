"""A bounded HTTP load on an OIP server's identity model: requests/s and latency percentiles.

    python benchmarks/load/load_server.py                      # starts our server, measures it
    python benchmarks/load/load_server.py --workers 2          # our server with 2 processes
    python benchmarks/load/load_server.py --http-protocol httptools   # on uvicorn's own protocol
    python benchmarks/load/load_server.py --url http://127.0.0.1:8080   # any OIP server (MLServer...)
    python benchmarks/load/load_server.py --metrics both --rounds 3 --cases small_json
        # the cost of the inference statistics and metrics: our server with them and without
        # (ServerConfig.metrics=False), side by side, alternating

Cases (all POST v2/models/<model>/infer, the answer asked in the request's own form):
  small_json    1x16 FP32 as JSON               image_json    1x3x224x224 FP32 as JSON
  image_json_short  the image as JSON with the shortest float32 text (oipcodec's client's)
  small_binary  the same with the binary tensor data extension (input and output binary)
  image_binary

The load is ``wrk`` (``apt-get install wrk``) with ``--connections`` keep-alive connections
for ``--duration`` seconds per case, so it stops by itself; without wrk, a Python client
sends ``--requests`` requests per case over the same number of connections (slower: the
client then limits the figures). JSON bodies are written as tritonclient writes them
(``json.dumps`` of float32 values widened to float64, 17 significant digits). Every case is
first sent once and its answer checked, so a server that answers 4xx/5xx shows as an error,
not as a fast server. For our own server the table also gives the server processes' CPU time
per request (user + system, from /proc; Linux), which a client that limits the load or a
busy machine disturbs less than requests/s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HEADER_LENGTH = "Inference-Header-Content-Length"

WRK_SCRIPT = r"""
local f = assert(io.open(os.getenv("LOAD_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = os.getenv("LOAD_CONTENT_TYPE")
local hl = os.getenv("LOAD_HEADER_LENGTH")
if hl ~= nil and hl ~= "" then
  wrk.headers["Inference-Header-Content-Length"] = hl
end

function done(summary, latency, requests)
  io.write(string.format(
    "RESULT {\"requests\": %d, \"duration_us\": %d, \"p50_us\": %d, \"p99_us\": %d, " ..
    "\"mean_us\": %f, \"status_errors\": %d, \"socket_errors\": %d}\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.mean, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


@dataclass
class Case:
    name: str
    shape: tuple[int, ...]
    binary: bool
    #: JSON with the shortest text that reads back to each float32 (as oipcodec's clients
    #: write it) instead of tritonclient's 17 significant digits.
    shortest: bool = False


CASES = {
    "small_json": Case("small_json", (1, 16), False),
    "image_json": Case("image_json", (1, 3, 224, 224), False),
    "image_json_short": Case("image_json_short", (1, 3, 224, 224), False, shortest=True),
    "small_binary": Case("small_binary", (1, 16), True),
    "image_binary": Case("image_binary", (1, 3, 224, 224), True),
}


def request_body(case: Case, input_name: str) -> tuple[bytes, dict[str, str]]:
    data = np.random.default_rng(0).random(case.shape, dtype=np.float32)
    tensor: dict[str, object] = {"name": input_name, "shape": list(case.shape), "datatype": "FP32"}
    if case.shortest:
        from oipcodec import rest
        from oipcodec.types import InferRequest, Tensor

        request = InferRequest([Tensor(input_name, "FP32", case.shape, data)])
        return rest.encode_request(request, binary=False)[0], {"Content-Type": "application/json"}
    if not case.binary:
        tensor["data"] = data.ravel().tolist()
        body = json.dumps({"inputs": [tensor]}).encode()
        return body, {"Content-Type": "application/json"}
    raw = data.astype("<f4").tobytes()
    tensor["parameters"] = {"binary_data_size": len(raw)}
    header = json.dumps({"inputs": [tensor], "parameters": {"binary_data_output": True}}).encode()
    return header + raw, {
        "Content-Type": "application/octet-stream",
        HEADER_LENGTH: str(len(header)),
    }


def check_once(url: str, path: str, body: bytes, headers: dict[str, str]) -> str | None:
    """Send the request once; None when the answer is a 200 holding the output, else why not."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=60)
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        answer = response.read()
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()
    if response.status != 200:
        return f"HTTP {response.status}: {answer[:300]!r}"
    return None


def run_wrk(
    url: str, path: str, body: bytes, headers: dict[str, str], args: argparse.Namespace
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        body_file = Path(tmp, "body")
        body_file.write_bytes(body)
        script = Path(tmp, "load.lua")
        script.write_text(WRK_SCRIPT)
        env = dict(
            os.environ,
            LOAD_BODY=str(body_file),
            LOAD_CONTENT_TYPE=headers["Content-Type"],
            LOAD_HEADER_LENGTH=headers.get(HEADER_LENGTH, ""),
        )
        command = [
            "wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s",
            "--timeout", "30s", "-s", str(script), url.rstrip("/") + path,
        ]  # fmt: skip
        out = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.duration + 60
        )
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            raw = json.loads(line[len("RESULT ") :])
            seconds = raw["duration_us"] / 1e6
            return {
                "requests": raw["requests"],
                "seconds": seconds,
                "rps": raw["requests"] / seconds,
                "p50_ms": raw["p50_us"] / 1000,
                "p99_ms": raw["p99_us"] / 1000,
                "errors": raw["status_errors"] + raw["socket_errors"],
            }
    raise RuntimeError(f"wrk gave no result:\n{out.stdout}\n{out.stderr}")


async def _python_load(
    url: str, path: str, body: bytes, headers: dict[str, str], args: argparse.Namespace
) -> dict[str, float]:
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    head = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    message = ("\r\n".join(head) + "\r\n\r\n").encode() + body
    latencies: list[float] = []
    errors = 0
    remaining = args.requests
    deadline = time.perf_counter() + args.duration

    async def connection() -> None:
        nonlocal remaining, errors
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while remaining > 0 and time.perf_counter() < deadline:
                remaining -= 1
                start = time.perf_counter()
                writer.write(message)
                status_line = await reader.readline()
                length = 0
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                latencies.append(time.perf_counter() - start)
                if b" 200 " not in status_line:
                    errors += 1
        finally:
            writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(args.connections)))
    seconds = time.perf_counter() - start
    ordered = np.sort(np.array(latencies))
    return {
        "requests": len(latencies),
        "seconds": seconds,
        "rps": len(latencies) / seconds,
        "p50_ms": float(np.percentile(ordered, 50)) * 1000,
        "p99_ms": float(np.percentile(ordered, 99)) * 1000,
        "errors": errors,
    }


@dataclass
class Target:
    """A server under load: its URL, and its process ids when it is ours (for CPU time)."""

    label: str
    url: str
    pids: list[int]


@contextlib.contextmanager
def target(args: argparse.Namespace, metrics: bool = True) -> Iterator[Target]:
    if args.url:
        yield Target("server", args.url, [])
        return
    from oipcodec.server.runtime import ServerProcesses
    from oipcodec.testing import BACKGROUND_DEFAULTS

    config = BACKGROUND_DEFAULTS.replace(
        workers=args.workers,
        grpc_port=None,
        log_level="warning",
        http_protocol=args.http_protocol,
        metrics=metrics,
    )
    pool = ServerProcesses(None, config)
    pool.start()
    try:
        label = "metrics on" if metrics else "metrics off"
        yield Target(
            label, f"http://{config.host}:{pool.http_port}", [p.pid for p in pool.processes]
        )
    finally:
        pool.stop()


def cpu_seconds(pids: list[int]) -> float | None:
    """User + system CPU seconds of the processes ``pids`` so far (Linux /proc), else None."""
    if not pids:
        return None
    total = 0
    try:
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    except (OSError, ValueError, IndexError):
        return None
    return total / os.sysconf("SC_CLK_TCK")


def run_case(
    server: Target, case: Case, path: str, args: argparse.Namespace, tool: str
) -> dict[str, float] | None:
    """One case against ``server``: its figures, or None (printed why) when not served."""
    body, headers = request_body(case, args.input_name)
    problem = check_once(server.url, path, body, headers)
    if problem is not None:
        print(f"{case.name:<14}{len(body):>10}  not served: {problem}")
        return None
    before = cpu_seconds(server.pids)
    if tool == "wrk":
        result = run_wrk(server.url, path, body, headers, args)
    else:
        result = asyncio.run(_python_load(server.url, path, body, headers, args))
    after = cpu_seconds(server.pids)
    result["body_bytes"] = len(body)
    if before is not None and after is not None:
        result["server_cpu_us"] = (after - before) * 1e6 / result["requests"]
    cpu = result.get("server_cpu_us")
    print(
        f"{case.name:<14}{len(body):>10}{result['rps']:>10.0f}{result['p50_ms']:>10.2f}"
        f"{result['p99_ms']:>10.2f}{result['errors']:>8.0f}"
        f"{'-' if cpu is None else f'{cpu:.1f}':>12}  {server.label}"
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="an OIP server's base URL (default: start ours)")
    parser.add_argument("--model", default="identity")
    parser.add_argument("--input-name", default="INPUT0")
    parser.add_argument("--workers", type=int, default=1, help="our server's processes")
    parser.add_argument(
        "--http-protocol",
        default="oipcodec",
        choices=["oipcodec", "httptools", "h11"],
        help="our server's HTTP/1.1 implementation under uvicorn",
    )
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per case (max)")
    parser.add_argument("--requests", type=int, default=20000, help="Python client: per case")
    parser.add_argument("--tool", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument(
        "--metrics",
        choices=["on", "off", "both"],
        default="on",
        help="our server's inference statistics and metrics; both: two servers, alternating",
    )
    parser.add_argument("--rounds", type=int, default=1, help="runs of each case per server")
    args = parser.parse_args(argv)
    tool = args.tool
    if tool == "auto":
        tool = "wrk" if shutil.which("wrk") else "python"
    if tool == "wrk":
        args.duration = max(1, round(args.duration))
    path = f"/v2/models/{args.model}/infer"
    settings = {"on": [True], "off": [False], "both": [True, False]}[args.metrics]
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(target(args, metrics)) for metrics in settings]
        urls = ", ".join(f"{s.url} ({s.label})" for s in servers)
        print(f"server {urls}, model {args.model}, {tool}, {args.connections} connections")
        print(
            f"{'case':<14}{'body':>10}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}"
            f"{'cpu us/req':>12}"
        )
        for name in args.cases.split(","):
            runs = results.setdefault(name, {})
            for round_ in range(args.rounds):
                # alternate which server goes first, so neither always gets the warmer machine
                order = servers if round_ % 2 == 0 else servers[::-1]
                for server in order:
                    result = run_case(server, CASES[name], path, args, tool)
                    if result is not None:
                        runs.setdefault(server.label, []).append(result)
        if len(servers) == 2:
            summarize(results, servers[0].label, servers[1].label)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


def summarize(results: dict[str, dict[str, list[dict[str, float]]]], on: str, off: str) -> None:
    """Per case: the medians of each server's runs, and what ``on`` costs over ``off``."""
    print(f"\nmedians: {on} vs {off}")
    for name, runs in results.items():
        if on not in runs or off not in runs:
            continue
        for figure, unit in (("rps", "req/s"), ("server_cpu_us", "cpu us/req")):
            a = [r[figure] for r in runs[on] if figure in r]
            b = [r[figure] for r in runs[off] if figure in r]
            if a and b:
                with_, without = float(np.median(a)), float(np.median(b))
                change = (with_ - without) / without * 100
                print(f"{name:<14}{unit:>12}{with_:>12.1f}{without:>12.1f}{change:>+9.1f}%")


if __name__ == "__main__":
    sys.exit(main())
