"""KServe with and without ``oipcodec.compat.kserve.patch_dataplane``: the same model, the same
load, alternating rounds, in one run.

    python benchmarks/load/kserve_adapter.py [--rounds 3] [--seconds 10] [--connections 8]

Three real ``kserve.ModelServer`` processes serve an identity model: "without",
tests/support/kserve_models_stock.py (KServe as it ships, the model written with KServe's API:
``as_numpy`` and ``set_data_from_numpy``); "with", tests/support/kserve_models_patched.py (the
same model, the recipe's one ``patch_dataplane`` call added); "recipe",
tests/support/kserve_models_recipe.py (that call and a model going through the adapter, as
docs/compat.md's recipe writes it). Each round loads one after the other, case by case, for ``--seconds`` each (bounded in time and
count): REST JSON (small: 1x16 FP32; image: 1x3x224x224 FP32, written as tritonclient writes
JSON), REST binary image, and gRPC raw contents (small and image). The REST load is the
Python client of benchmarks/load/load_server.py (wrk when installed), the gRPC load a bare
grpcio channel from threads (serialized bytes in and out: the client costs next to nothing).
Prints one row per case: requests/s, p50 / p99 latency and the server's CPU per request of
each (medians over the rounds), and the ratios to "without"; on a shared machine CPU per
request moves less with the neighbours than requests/s. :func:`run_kserve` returns those rows for a script that gathers every
peer's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

# Run as a script, this file has benchmarks/load on sys.path: the repository goes first, for
# the test suite's KServe process helpers and load_server's load.
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.load import load_server  # noqa: E402
from tests.support.kserve_process import run_kserve as _run_server  # noqa: E402

SUPPORT = ROOT / "tests" / "support"
MODEL = "identity"
#: without: KServe as it ships; with: the same model, the recipe's one ``patch_dataplane`` call
#: added; recipe: that call and a model written with the adapter (arrays in and out).
SERVERS = {
    "without": "kserve_models_stock.py",
    "with": "kserve_models_patched.py",
    "recipe": "kserve_models_recipe.py",
}

#: (payload, path): the rows, in order.
CASES = [
    ("image_json", "rest"),
    ("small_json", "rest"),
    ("image_binary", "rest"),
    ("image", "grpc"),
    ("small", "grpc"),
]
SHAPES = {"small": (1, 16), "image": (1, 3, 224, 224)}
MAX_REQUESTS = 100_000  # per case and round: the time bound comes first


def _grpc_body(payload: str) -> bytes:
    from oipcodec import InferRequest, Tensor, pb

    x = np.random.default_rng(0).random(SHAPES[payload], dtype=np.float32)
    request = InferRequest([Tensor.from_array("INPUT0", x)], model_name=MODEL)
    return pb.encode_request(request, raw=True)


def _grpc_load(address: str, body: bytes, connections: int, seconds: float) -> dict[str, float]:
    """``connections`` threads, each on its own channel, sending ``body`` to ModelInfer until
    ``seconds`` pass (or MAX_REQUESTS in all)."""
    import grpc

    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds
    options = [("grpc.max_receive_message_length", 64 << 20)]

    def worker() -> None:
        nonlocal errors
        with grpc.insecure_channel(address, options=options) as channel:
            call = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                try:
                    call(body, timeout=60)
                except grpc.RpcError:
                    with lock:
                        errors += 1
                    continue
                with lock:
                    latencies.append(time.perf_counter() - start)
                    if len(latencies) >= MAX_REQUESTS:
                        return

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return _figures(latencies, time.perf_counter() - start, errors)


def _figures(latencies: list[float], seconds: float, errors: int) -> dict[str, float]:
    ordered = np.sort(np.array(latencies)) if latencies else np.zeros(1)
    return {
        "requests": len(latencies),
        "rps": len(latencies) / seconds,
        "p50_ms": float(np.percentile(ordered, 50)) * 1000,
        "p99_ms": float(np.percentile(ordered, 99)) * 1000,
        "errors": errors,
    }


def _rest_load(url: str, case: str, connections: int, seconds: float) -> dict[str, float] | None:
    body, headers = load_server.request_body(load_server.CASES[case], "INPUT0")
    path = f"/v2/models/{MODEL}/infer"
    problem = load_server.check_once(url, path, body, headers)
    if problem is not None:
        raise RuntimeError(f"{url} does not serve {case}: {problem}")
    args = argparse.Namespace(
        connections=connections, threads=2, duration=max(1, round(seconds)), requests=MAX_REQUESTS
    )
    if shutil.which("wrk"):
        return load_server.run_wrk(url, path, body, headers, args)
    return asyncio.run(load_server._python_load(url, path, body, headers, args))


@contextlib.contextmanager
def _servers() -> Iterator[dict[str, dict[str, str]]]:
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        yield {
            label: stack.enter_context(
                contextlib.contextmanager(_run_server)(SUPPORT / script, MODEL, Path(tmp))
            )
            for label, script in SERVERS.items()
        }


def run_kserve(rounds: int, seconds: float, connections: int = 8) -> list[dict[str, Any]]:
    """Each case against KServe without and with the adapter, alternating, ``rounds`` times for
    ``seconds`` each. Rows ``{"peer": "kserve", "path": "rest" | "grpc", "payload": ...,
    "without": {"rps", "p50_ms", "p99_ms", "cpu_ms", "errors"}, "with": {...}, "recipe": {...},
    "ratio": with / without req/s, "recipe_ratio": recipe / without req/s, "cpu_ratio" and
    "recipe_cpu_ratio": without / with server CPU per request}`` (medians over the rounds;
    ``cpu_ms``, the server process's user + system CPU per request, on Linux only)."""
    figures: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    with _servers() as servers:
        for _ in range(rounds):
            for payload, path in CASES:
                for label in SERVERS:
                    server = servers[label]
                    pids = [int(server["pid"])]
                    before = load_server.cpu_seconds(pids)
                    if path == "rest":
                        result = _rest_load(
                            f"http://{server['http']}", payload, connections, seconds
                        )
                    else:
                        body = _grpc_body(payload)
                        result = _grpc_load(server["grpc"], body, connections, seconds)
                    assert result is not None
                    after = load_server.cpu_seconds(pids)
                    if before is not None and after is not None and result["requests"]:
                        result["cpu_ms"] = (after - before) * 1000 / result["requests"]
                    figures.setdefault((payload, path, label), []).append(result)
    rows = []
    for payload, path in CASES:
        row: dict[str, Any] = {"peer": "kserve", "path": path, "payload": payload}
        for label in SERVERS:
            runs = figures[(payload, path, label)]
            row[label] = {
                key: statistics.median(run[key] for run in runs)
                for key in ("rps", "p50_ms", "p99_ms", "cpu_ms")
                if all(key in run for run in runs)
            }
            row[label]["errors"] = sum(run["errors"] for run in runs)
        row["ratio"] = row["with"]["rps"] / row["without"]["rps"]
        row["recipe_ratio"] = row["recipe"]["rps"] / row["without"]["rps"]
        if all("cpu_ms" in row[label] for label in SERVERS):
            row["cpu_ratio"] = row["without"]["cpu_ms"] / row["with"]["cpu_ms"]
            row["recipe_cpu_ratio"] = row["without"]["cpu_ms"] / row["recipe"]["cpu_ms"]
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args(argv)
    rows = run_kserve(args.rounds, args.seconds, args.connections)
    print(f"KServe identity model, {args.rounds} rounds of {args.seconds:g} s, "
          f"{args.connections} connections; medians. req/s (p50 / p99 ms) [server CPU ms "
          "per request]; ratios: req/s, and CPU per request in brackets")  # fmt: skip
    print("| path | payload | without | with patch_dataplane | ratio | recipe | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|")

    def cell(figures: dict[str, float]) -> str:
        cpu = f" [{figures['cpu_ms']:.2f}]" if "cpu_ms" in figures else ""
        return f"{figures['rps']:.1f} ({figures['p50_ms']:.0f} / {figures['p99_ms']:.0f}){cpu}"

    def ratio(row: dict[str, Any], rps: str, cpu: str) -> str:
        return f"{row[rps]:.2f}x" + (f" [{row[cpu]:.2f}x]" if cpu in row else "")

    for row in rows:
        print(
            f"| {row['path']} | {row['payload']} | {cell(row['without'])} | {cell(row['with'])} "
            f"| {ratio(row, 'ratio', 'cpu_ratio')} | {cell(row['recipe'])} "
            f"| {ratio(row, 'recipe_ratio', 'recipe_cpu_ratio')} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
