"""Triton's Python backend with and without ``oipcodec.compat.triton_python_backend.install()``.

    OIPCODEC_TRITON_HOME=DIR python benchmarks/load/triton_python_backend.py [--rounds 3]
        [--seconds 2] [--concurrency 2]

One real tritonserver (``tools/triton_env.sh DIR`` builds it) serves two BYTES identity models,
the model.py of docs/compat.md ("Triton's Python backend") as written and the same file without
its ``install()`` line, side by side. NVIDIA's perf_analyzer loads each in alternating rounds
(stock, then with the kernels, over HTTP and gRPC), 1,000 random strings of 64 bytes a request,
at a fixed concurrency, each run bounded in time. Prints a Markdown table of the medians over
the rounds; :func:`run_triton_python_backend` returns the rows for other scripts.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# Run as a script, this file has benchmarks/load on sys.path: the repository goes first, for
# the test suite's Triton helpers and the page the model comes from.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support.doc_recipes import recipe
from tests.support.triton import triton_env, tritonserver

MODEL = "texts"
INSTALL_LINE = "triton_python_backend.install()\n"
#: The payload: one request of 1,000 strings of 64 bytes (perf_analyzer's random strings).
STRINGS, LENGTH = 1000, 64
PAYLOAD = f"bytes {STRINGS}x{LENGTH}"
# max_batch_size 0: the request is the tensor, [1000], with no batch dimension to pick.
CONFIG = """backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
"""


def _repository(root: Path) -> Path:
    files, _ = recipe("compat.md", "Triton's Python backend")
    model = files["model.py"]
    if INSTALL_LINE not in model:
        raise RuntimeError(f"docs/compat.md's model.py lost its line {INSTALL_LINE.strip()!r}")
    for name, text in ((MODEL, model), (MODEL + "_stock", model.replace(INSTALL_LINE, ""))):
        (root / name / "1").mkdir(parents=True)
        (root / name / "config.pbtxt").write_text(CONFIG)
        (root / name / "1" / "model.py").write_text(text)
    return root


def _perf(
    model: str, url: str, protocol: str, seconds: float, concurrency: int, out: Path
) -> dict[str, float]:
    """One bounded perf_analyzer run: three time windows of ``seconds``, whatever their spread
    (stability 1000%), so that a loaded machine cannot make it run on."""
    command = [
        triton_env()["OIPCODEC_PERF_ANALYZER"],
        "-m", model, "-u", url, "-i", protocol,
        "--shape", f"INPUT0:{STRINGS}", "--string-length", str(LENGTH),
        "--concurrency-range", str(concurrency),
        "--measurement-mode", "time_windows", "--measurement-interval", str(int(seconds * 1000)),
        "--stability-percentage", "1000", "--max-trials", "3",
        "-f", str(out),
    ]  # fmt: skip
    # perf_analyzer exited 2 once in a dozen runs on a loaded machine, with short windows (an
    # unstable measurement: a stalled window puts max / min of the windows past even 1000%);
    # such a run is repeated, twice at most.
    for _ in range(3):
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=60 + 10 * seconds, check=False
        )
        if done.returncode != 2:
            break
    if done.returncode != 0:
        raise RuntimeError(
            f"perf_analyzer on {model} ({protocol}) failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    with out.open() as file:
        row = next(csv.DictReader(file))
    return {
        "infer_per_s": float(row["Inferences/Second"]),
        "p50_us": float(row["p50 latency"]),
        "p99_us": float(row["p99 latency"]),
    }


def run_triton_python_backend(
    rounds: int = 3, seconds: float = 2.0, concurrency: int = 2
) -> list[dict[str, Any]]:
    """Medians over ``rounds`` alternating rounds, one row per path (HTTP, gRPC): ``peer``,
    ``path``, ``payload``, then ``without_infer_s`` / ``with_infer_s`` (infer/s of the stock
    model and of the one with ``install()``), ``ratio``, and the p50 / p99 latencies of each
    in microseconds (``without_p50_us`` ...). Needs OIPCODEC_TRITON_HOME."""
    samples: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="oipcodec-tpb-") as folder:
        root = Path(folder)
        with tritonserver(_repository(root / "repo"), root / "triton.log") as triton:
            for index in range(rounds):
                for variant, model in (("without", MODEL + "_stock"), ("with", MODEL)):
                    for path, protocol, url in (
                        ("http", "http", triton.http),
                        ("grpc", "grpc", triton.grpc),
                    ):
                        out = root / f"{index}-{variant}-{path}.csv"
                        figures = _perf(model, url, protocol, seconds, concurrency, out)
                        samples.setdefault((path, variant), []).append(figures)
    rows = []
    for path in ("http", "grpc"):
        row: dict[str, Any] = {"peer": "triton-python-backend", "path": path, "payload": PAYLOAD}
        for variant in ("without", "with"):
            for key in ("infer_per_s", "p50_us", "p99_us"):
                values = [sample[key] for sample in samples[(path, variant)]]
                name = "infer_s" if key == "infer_per_s" else key
                row[f"{variant}_{name}"] = statistics.median(values)
        row["ratio"] = row["with_infer_s"] / row["without_infer_s"]
        row["concurrency"] = concurrency
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    rows = run_triton_python_backend(args.rounds, args.seconds, args.concurrency)
    print(
        f"Triton Python backend, BYTES identity, {PAYLOAD}, c={args.concurrency}, medians of {args.rounds} rounds"
    )
    print(
        "| path | stock infer/s | install() infer/s | ratio | stock p50/p99 ms | install() p50/p99 ms |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['path']} | {r['without_infer_s']:.0f} | {r['with_infer_s']:.0f} | {r['ratio']:.2f}x "
            f"| {r['without_p50_us'] / 1000:.2f} / {r['without_p99_us'] / 1000:.2f} "
            f"| {r['with_p50_us'] / 1000:.2f} / {r['with_p99_us'] / 1000:.2f} |"
        )


if __name__ == "__main__":
    main()
