"""`oipcodec bench` next to NVIDIA's perf_analyzer: the same server, path and concurrency, in
one run.

    OIPCODEC_TRITON_HOME=DIR python benchmarks/load/perf_analyzer_check.py [--seconds 3]

Starts ``oipcodec serve`` (127.0.0.1, free ports) with the identities of
benchmarks/load/perf_analyzer_models.py, then for each case runs perf_analyzer (count windows,
its stability rule) and ``oipcodec bench --implementation tritonclient`` (tritonclient sends
what perf_analyzer sends: the binary extension over REST, raw contents over gRPC), one after
the other, and prints requests/s and p50 of both with their ratio:

- REST binary, the ``image`` model (1x3x224x224 FP32, 602 kB each way), concurrency 8;
- gRPC raw, the ``small`` model (1x16 FP32), concurrency 8.

The targets: requests/s within 10% of perf_analyzer's, p50 within 15%. perf_analyzer
comes from the environment ``tools/triton_env.sh DIR`` builds (``OIPCODEC_TRITON_HOME``) or
``--perf-analyzer PATH``; it keeps every response in memory, so the image runs count few
requests. The figures are this machine's: see docs/measurements.md.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CASES = (
    # label, model, bench path, perf_analyzer protocol, perf_analyzer requests per window
    ("REST binary, image 1x3x224x224 FP32", "image", "rest-binary", "http", 100),
    ("gRPC raw, small 1x16 FP32", "small", "grpc-raw", "grpc", 2000),
)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _perf_analyzer(given: str | None) -> str:
    if given:
        return given
    home = os.environ.get("OIPCODEC_TRITON_HOME")
    env_file = Path(home) / "triton.env" if home else None
    if env_file is None or not env_file.is_file():
        sys.exit("perf_analyzer: set OIPCODEC_TRITON_HOME (tools/triton_env.sh DIR) or give "
                 "--perf-analyzer PATH")  # fmt: skip
    for line in env_file.read_text().splitlines():
        if line.startswith("OIPCODEC_PERF_ANALYZER="):
            return line.split("=", 1)[1]
    sys.exit(f"{env_file} names no OIPCODEC_PERF_ANALYZER")


@contextlib.contextmanager
def _server(log: Path) -> Iterator[tuple[str, str]]:
    """``oipcodec serve`` with the check's models; its HTTP and gRPC addresses."""
    http, grpc = _free_port(), _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                                    str(ROOT),
                                                                    os.environ.get("PYTHONPATH")]))}  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "oipcodec", "serve", "--host", "127.0.0.1", "--http-port",
             str(http), "--grpc-port", str(grpc), "--model-module",
             "benchmarks.load.perf_analyzer_models", "--log-level", "warning"],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    url = f"http://127.0.0.1:{http}/v2/models/image/ready"
                    with urllib.request.urlopen(url, timeout=2) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"oipcodec serve did not start: {log.read_text()[-2000:]}")
                time.sleep(0.2)
            yield f"127.0.0.1:{http}", f"127.0.0.1:{grpc}"
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run_perf_analyzer(binary: str, model: str, address: str, protocol: str, count: int,
                      concurrency: int, work: Path) -> dict[str, float]:  # fmt: skip
    """perf_analyzer at one concurrency, count windows; its requests/s and p50 (ms)."""
    report = work / f"pa-{model}-{protocol}.csv"
    command = [
        binary, "-m", model, "-u", address, "-i", protocol,
        "--concurrency-range", str(concurrency), "--measurement-mode", "count_windows",
        "--measurement-request-count", str(count), "--stability-percentage", "50",
        "--max-trials", "10", "-f", str(report),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"perf_analyzer failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    (row,) = list(csv.DictReader(report.open()))
    return {
        "rps": float(row["Inferences/Second"]),
        "p50_ms": float(row["p50 latency"]) / 1e3,
        "stable": "Failed to obtain stable measurement" not in done.stdout,
    }


def run_bench(model: str, path: str, http: str, grpc: str, concurrency: int, seconds: float,
              work: Path, implementation: str = "tritonclient",
              processes: int = 0) -> dict[str, Any]:  # fmt: skip
    """``oipcodec bench`` with ``implementation`` on one path and concurrency, its threads in
    ``processes`` load processes (0: the bench's default); requests/s, p50, and whether the
    generator itself was saturated."""
    from oipcodec import cli

    out = work / f"bench-{model}-{path}"
    with contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(
            ["bench", "--url", f"http://{http}", "--grpc-target", grpc, "--model", model,
             "--implementation", implementation, "--path", path, "--concurrency",
             str(concurrency), "--duration", str(seconds), "--no-chart",
             "--output-dir", str(out),
             *(["--load-processes", str(processes)] if processes else [])]
        )  # fmt: skip
    if status != 0:
        raise SystemExit(f"oipcodec bench failed ({status})")
    (record,) = json.loads((out / "results.json").read_text())["results"]
    if record.get("error"):
        raise SystemExit(f"oipcodec bench: {record['error']}")
    (load,) = record["load"]
    return {"rps": float(load["rps"]), "p50_ms": float(load["p50_ms"]),
            "saturated": bool(load.get("generator_saturated"))}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--perf-analyzer", help="the perf_analyzer to run")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0, help="oipcodec bench's window")
    parser.add_argument(
        "--implementation",
        default="tritonclient",
        help="the bench's client (tritonclient sends what perf_analyzer sends)",
    )
    parser.add_argument("--load-processes", type=int, default=0,
                        help="the bench's load processes (default: its own choice)")  # fmt: skip
    args = parser.parse_args()
    binary = _perf_analyzer(args.perf_analyzer)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, _server(Path(tmp) / "serve.log") as (http, grpc):
        work = Path(tmp)
        for label, model, path, protocol, count in CASES:
            address = http if protocol == "http" else grpc
            theirs = run_perf_analyzer(binary, model, address, protocol, count,
                                       args.concurrency, work)  # fmt: skip
            ours = run_bench(model, path, http, grpc, args.concurrency, args.seconds, work,
                             args.implementation, args.load_processes)  # fmt: skip
            rows.append({"case": label, "perf_analyzer": theirs, "oipcodec_bench": ours})
    processes = args.load_processes or "default"
    print(f"concurrency {args.concurrency}; oipcodec bench: {args.implementation}, "
          f"{args.seconds:g} s windows, load processes: {processes}")  # fmt: skip
    print(f"{'case':<38} {'perf_analyzer':>22} {'oipcodec bench':>22} {'ratio':>14}")
    print(f"{'':<38} {'req/s':>10} {'p50 ms':>11} {'req/s':>10} {'p50 ms':>11} {'req/s':>6} "
          f"{'p50':>7}")  # fmt: skip
    for row in rows:
        pa, ob = row["perf_analyzer"], row["oipcodec_bench"]
        mark = "" if pa["stable"] else "  (perf_analyzer: unstable)"
        mark += "  (bench: generator saturated)" if ob["saturated"] else ""
        print(f"{row['case']:<38} {pa['rps']:>10,.0f} {pa['p50_ms']:>11.2f} {ob['rps']:>10,.0f} "
              f"{ob['p50_ms']:>11.2f} {ob['rps'] / pa['rps']:>6.2f} "
              f"{ob['p50_ms'] / pa['p50_ms']:>7.2f}{mark}")  # fmt: skip
    print("targets: req/s ratio within 0.90-1.10, p50 ratio within 0.85-1.15")


if __name__ == "__main__":
    main()
