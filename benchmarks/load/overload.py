"""Overload: a model that serves N requests/s, offered 4 times that, with ``max_queue_size`` set.

    python benchmarks/load/overload.py                          # N = 100, 4x for 5 s
    python benchmarks/load/overload.py --rate 50 --max-queue-size 2 --seconds 10

The server runs in a subprocess (``python -m oipcodec serve`` of a model repository in a
temporary folder, one process). Its model takes ``1 / --rate`` seconds per request (a sleep in
``predict``'s worker thread, so its capacity is the rate whatever the CPU; ``max_batch_size``
1, so every request is one call) and its ``dynamic_batching`` has a ``default_queue_policy``
with ``--max-queue-size``. A client of tritonclient's gRPC asyncio API offers requests at a
fixed pace (open loop: a request leaves at its time whatever the answers): first half the
model's rate for ``--seconds`` (the unloaded p99), then ``--factor`` times its rate for
``--seconds``, twice (the server's RSS after each shows whether memory stays flat). It prints
the accepted requests' p50/p99 latency beside the unloaded ones, the refused requests'
latency as the client saw it (the round trip, so an upper bound of the server's time), how
many were refused, the server's own mean time per refusal (from its statistics: the
``fail`` duration, from the request's arrival to its refusal), and the server's RSS (VmRSS of /proc/<pid>/status) before and after.
Every refusal must be Triton's "Exceeds maximum queue size", every answer the request's
value, else it stops. ``--json FILE`` writes the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

# Run as a script, this file has benchmarks/load on sys.path: the repository goes first, for
# the test suite's free-port helper, and its src before it.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
from benchmarks.load.soak_memory import rss_mb
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]

MODEL_PY = """
import time

from oipcodec.server import Model


class Paced(Model):
    run_in_thread = True

    def predict(self, inputs, parameters):
        time.sleep(float(self.config_parameters["seconds"]))
        return {"Y": inputs["X"]}
"""

CONFIG = """
max_batch_size: 1
input [ {{ name: "X", data_type: TYPE_FP32, dims: [ 4 ] }} ]
output [ {{ name: "Y", data_type: TYPE_FP32, dims: [ 4 ] }} ]
parameters {{ key: "seconds" value {{ string_value: "{seconds}" }} }}
dynamic_batching {{ default_queue_policy {{ max_queue_size: {size} }} }}
"""


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000 if values else float("nan")


async def offer(address: str, rate: float, seconds: float) -> dict[str, Any]:
    """``rate`` requests/s for ``seconds``, open loop: the accepted and refused latencies."""
    import tritonclient.grpc.aio as grpcclient
    from tritonclient.utils import InferenceServerException

    client = grpcclient.InferenceServerClient(address)
    accepted: list[float] = []
    refused: list[float] = []

    async def one(index: int) -> None:
        data = np.full((1, 4), index, np.float32)
        tensor = grpcclient.InferInput("X", [1, 4], "FP32")
        tensor.set_data_from_numpy(data)
        started = time.perf_counter()
        try:
            answer = await client.infer("paced", [tensor])
        except InferenceServerException as exc:
            refused.append(time.perf_counter() - started)
            if not exc.message().startswith("Exceeds maximum queue size"):
                raise
            return
        accepted.append(time.perf_counter() - started)
        if not np.array_equal(answer.as_numpy("Y"), data):
            raise RuntimeError(f"request {index}: a wrong answer")

    try:
        loop = asyncio.get_running_loop()
        start = loop.time()
        tasks = []
        for index in range(int(rate * seconds)):
            delay = start + index / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.ensure_future(one(index)))
        await asyncio.gather(*tasks)
    finally:
        await client.close()
    return {
        "offered_per_s": rate,
        "accepted": len(accepted),
        "refused": len(refused),
        "accepted_p50_ms": percentile(accepted, 50),
        "accepted_p99_ms": percentile(accepted, 99),
        "refused_p50_ms": percentile(refused, 50),
        "refused_p99_ms": percentile(refused, 99),
    }


def failures(client: Any) -> tuple[int, int]:
    """The model's refused requests so far, and their nanoseconds in the server."""
    stats = client.get_inference_statistics("paced", as_json=True)["model_stats"][0]
    fail = stats["inference_stats"]["fail"]
    return int(fail.get("count", 0)), int(fail.get("ns", 0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=100.0, help="the model's requests/s")
    parser.add_argument("--factor", type=float, default=4.0, help="offered load / capacity")
    parser.add_argument("--max-queue-size", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=5.0, help="each phase (max 60)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    seconds = min(args.seconds, 60.0)

    grpc_port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + str(ROOT))
    with tempfile.TemporaryDirectory(prefix="oipcodec-overload-") as folder:
        model = Path(folder, "paced")
        (model / "1").mkdir(parents=True)
        (model / "1" / "model.py").write_text(MODEL_PY)
        config = CONFIG.format(seconds=1 / args.rate, size=args.max_queue_size)
        (model / "config.pbtxt").write_text(config)
        server = subprocess.Popen(
            [sys.executable, "-m", "oipcodec", "serve", "--host", "127.0.0.1",
             "--http-port", "-1", "--grpc-port", str(grpc_port), "--log-level", "error",
             "--model-repository", folder],
            env=env,
        )  # fmt: skip
        try:
            figures = run(f"127.0.0.1:{grpc_port}", server, args, seconds)
        finally:
            server.terminate()
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


def run(
    address: str, server: subprocess.Popen[bytes], args: argparse.Namespace, seconds: float
) -> dict[str, Any]:
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(address)
    deadline = time.monotonic() + 60
    while True:
        try:
            if client.is_model_ready("paced"):
                break
        except Exception:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit("the server did not start")
        time.sleep(0.2)

    def phase(rate: float) -> dict[str, Any]:
        before = failures(client)
        figures = asyncio.run(offer(address, rate, seconds))
        count, ns = (a - b for a, b in zip(failures(client), before, strict=True))
        figures["server_ms_per_refusal"] = ns / count / 1e6 if count else float("nan")
        return figures

    unloaded = phase(args.rate / 2)
    rss_before = rss_mb(server.pid)
    loaded = phase(args.rate * args.factor)
    rss_after = rss_mb(server.pid)
    again = phase(args.rate * args.factor)
    rss_again = rss_mb(server.pid)
    client.close()
    return {
        "model_rate_per_s": args.rate,
        "max_queue_size": args.max_queue_size,
        "seconds_per_phase": seconds,
        "unloaded": unloaded,
        "overloaded": loaded,
        "overloaded_again": again,
        "p99_ratio": loaded["accepted_p99_ms"] / unloaded["accepted_p99_ms"],
        "rss_mb": {"before": rss_before, "after": rss_after, "after_again": rss_again},
    }


if __name__ == "__main__":
    sys.exit(main())
