"""Requests/s through Ray Serve (oipcodec.compat.ray) next to ``oipcodec serve``, in one run.

    python benchmarks/load/ray_serve.py [--duration 1.0] [--concurrency 8] [--output-dir DIR]

Needs the ``integration-ray`` extra (Ray Serve). Measures, with ``oipcodec bench --url
--grpc-target`` (native client, identity model) on this machine:

1. Ray Serve, 1 replica, then 2 replicas (a local cluster with every CPU of the machine;
   Serve's HTTP proxy and its gRPC proxy with the OIP service, one CPU per replica asked);
2. ``oipcodec serve`` with 1 worker, then 2 workers (the same demo models);

for the small payload (1x16 FP32) over REST JSON and the image payload (224x224x3 FP32) over
REST binary and gRPC raw contents (plus the small payload over gRPC raw: the per-request cost
of the proxy hop). Prints a Markdown table of requests/s and MB/s per server and writes each
run's ``results.json`` under ``--output-dir``. The client runs on the same machine and takes
its share of the CPUs in every row alike.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, this file has benchmarks/load on sys.path: the repository goes first,
# for the test suite's free-port helper.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support.ports import free_ports

#: (payload, path) pairs measured, in the order of the table.
CASES = [
    ("small", "rest-json"),
    ("small", "grpc-raw"),
    ("image", "rest-binary"),
    ("image", "grpc-raw"),
]


def bench(url: str, grpc_target: str, output: Path, duration: float, concurrency: int) -> Any:
    """One ``oipcodec bench`` run against a server; its results.json."""
    command = [
        sys.executable, "-m", "oipcodec", "bench",
        "--url", url, "--grpc-target", grpc_target,
        "--payload", "small", "--payload", "image",
        "--path", "rest-json", "--path", "rest-binary", "--path", "grpc-raw",
        "--implementation", "native", "--no-peers",
        "--concurrency", str(concurrency), "--duration", str(duration),
        "--output-dir", str(output), "--no-chart",
    ]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=600)
    return json.loads((output / "results.json").read_text())


def figures(results: Any) -> dict[tuple[str, str], tuple[float, float]]:
    """(payload, path) -> (requests/s, MB/s) at the run's concurrency."""
    table = {}
    for row in results["results"]:
        if row.get("error") is None and row["load"]:
            load = row["load"][-1]
            table[row["payload"], row["path"]] = (load["rps"], load["mb_per_s"])
    return table


def measure_ray(replicas: list[int], args: argparse.Namespace) -> dict[str, Any]:
    import ray
    from ray import serve

    from oipcodec.compat import ray as compat

    http_port, grpc_port = free_ports(2)
    runs = {}
    ray.init(include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        serve.start(
            http_options={"host": "127.0.0.1", "port": http_port},
            grpc_options=compat.grpc_options(port=grpc_port),
        )
        for count in replicas:
            serve.run(
                compat.build_app(num_replicas=count, ray_actor_options={"num_cpus": 1}),
                name="oip",
                route_prefix="/",
            )
            time.sleep(2)  # every replica ready and known to both proxies
            runs[f"Ray Serve, {count} replica{'s' if count > 1 else ''}"] = bench(
                f"http://127.0.0.1:{http_port}",
                f"127.0.0.1:{grpc_port}",
                args.output_dir / f"ray-{count}",
                args.duration,
                args.concurrency,
            )
    finally:
        serve.shutdown()
        ray.shutdown()
    return runs


def measure_serve(workers: list[int], args: argparse.Namespace) -> dict[str, Any]:
    from oipcodec.testing import background

    runs = {}
    for count in workers:
        with background(workers=count) as server:
            runs[f"oipcodec serve, {count} worker{'s' if count > 1 else ''}"] = bench(
                f"http://{server.http_address}",
                server.grpc_address,
                args.output_dir / f"serve-{count}",
                args.duration,
                args.concurrency,
            )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=1.0, help="seconds per load window")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--output-dir", type=Path, default=None)
    args = parser.parse_args()
    if args.output_dir is None:
        args.output_dir = Path(tempfile.mkdtemp(prefix="oipcodec-ray-bench-"))
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runs = {**measure_serve([1, 2], args), **measure_ray([1, 2], args)}
    print(f"{started}, {os.cpu_count()} CPUs, concurrency {args.concurrency}, native client")
    header = " | ".join(f"{payload} {path}" for payload, path in CASES)
    print(f"| server | {header} |")
    print("|" + " --- |" * (len(CASES) + 1))
    for name, results in runs.items():
        table = figures(results)
        cells = []
        for case in CASES:
            rps, mbps = table.get(case, (float("nan"), float("nan")))
            cells.append(f"{rps:,.0f} req/s ({mbps:,.1f} MB/s)")
        print(f"| {name} | {' | '.join(cells)} |")
    print(f"results.json of each run under {args.output_dir}")


if __name__ == "__main__":
    main()
