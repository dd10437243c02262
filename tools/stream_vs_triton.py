"""ModelStreamInfer against the real Triton server: ``oipcodec serve``'s demo ``square_int32``
and Triton's own Python-backend ``square_int32`` (IN = 256: 256 responses of one INT32), both
driven by perf_analyzer ``--streaming`` (C++, the same client for both) at 1 and 8 concurrent
streams, the two servers alternating, ``--rounds`` times each.

    python tools/stream_vs_triton.py --triton-home DIR [--seconds 2] [--rounds 2]

DIR is an environment made by tools/triton_env.sh. Responses/s are the server's own count (its
inference statistics: successful requests x 256) over the run's wall time, server CPU the
server's process and its children (Triton's Python stub) over the same run. oipcodec's own
streaming figures (generate_stream and ModelStreamInfer, time to first response) come from
``oipcodec bench --streaming`` (docs/benchmarks.md). docs/measurements.md#streaming holds runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.load.batching import cpu_seconds
from tests.support.serve_process import run_serve
from tests.support.triton import square_int32_repository, triton_env, tritonserver

RESPONSES = 256


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
    parser.add_argument("--triton-home", required=True, help="tools/triton_env.sh's DIR")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    os.environ["OIPCODEC_TRITON_HOME"] = args.triton_home
    compare_with_triton(args.seconds, args.rounds)


if __name__ == "__main__":
    main()
