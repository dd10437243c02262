"""What the adapters buy: each peer with and without its oipcodec adapter, one sitting.

    python benchmarks/load/adapters.py [--rounds 3] [--seconds 10] [--requests 20]
        [--peers tritonclient,mlserver,kserve,triton-python] [--mlserver-python PATH]
        [--write docs/adapters.md]

For each peer, the same model under the same load, stock and with the adapter, in alternating
rounds (the order swapped every round); the figure of a round is the median of its requests
(CPU) or its rate over the round (requests/s), the ratio the median of the rounds' ratios.
Each peer runs in a process of its own (KServe's, MLServer's and tritonclient's protobuf
modules all register ``inference.*`` in protobuf's default pool). Prints a Markdown page, and
writes it to ``--write``: the figures, the machine, the date and the command. A peer that
cannot run here (not installed) is named with the reason, not measured.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: What each peer's figures must reach (the adapter's gain over stock, issue 36).
TARGETS = {
    ("Triton Python backend", "BYTES identity HTTP"): 3.0,
    ("Triton Python backend", "BYTES identity gRPC"): 3.0,
    ("KServe", "image JSON"): 10.0,
    ("MLServer", "image JSON"): 4.0,
    ("tritonclient", "image JSON FP32"): 5.0,
}

#: What the page says under the table, per peer: what is measured, and what the figures mean.
NOTES = {
    "tritonclient": "tritonclient: the app's thread's CPU per request (`time.thread_time()`), "
    "an image-sized `[1, 224, 224, 3]` tensor sent with `set_data_from_numpy(binary_data=False)` "
    "and read from a JSON answer with `as_numpy`, and 1,000 strings of 64 bytes sent and read "
    "binary (BYTES framing), stock and after "
    "`oipcodec.compat.tritonclient.install()`; the server (oipcodec's, in its own process) is "
    "not counted.",
    "kserve": "KServe: three ModelServers (KServe 0.21, one worker each) on the same identity "
    "model: stock, and two with `patch_dataplane`; the adapter's row serves the recipe of [Inside other "
    "servers](compat.md#kserve) as written, the stock-API row a model that builds its answer "
    "with KServe's own `InferOutput.set_data_from_numpy` (a Python list per element, which no "
    "route can reach). 8 connections in a closed loop. Over gRPC KServe's raw contents already "
    "go from bytes to an array: the adapter has nothing to replace there (no gain, none "
    "expected).",
    "triton-python": "Triton Python backend: the real Triton server (nvidia-pytriton, its "
    "Python backend) serving two BYTES identity models side by side, the model.py of [Inside "
    "other servers](compat.md) with and without its `install()` line; perf_analyzer sends 1,000 "
    "strings of 64 bytes a request at concurrency 2.",
    "mlserver": "MLServer: two `mlserver start` (MLServer's defaults, one inference worker) on "
    "the same identity model, stock and with the recipe of [Inside other servers]"
    "(compat.md#mlserver); 8 keep-alive connections in a closed loop, JSON bodies. The rate depends on what else the machine runs; the "
    "server's CPU per request (its process and workers) much less. A 16-value request is "
    "mostly MLServer's own per-request work (FastAPI, pydantic, the hand-off to the worker): "
    "the adapter has little to save there.",
}

#: A row, as every runner returns them: ``peer``, ``case``, ``round``, ``unit``, ``better``
#: (``"higher"`` for a rate, ``"lower"`` for a cost), ``stock`` and ``adapter`` (the figures
#: of that round).
Row = dict[str, Any]


def tritonclient_rows(rounds: int, requests: int) -> list[Row]:
    """benchmarks/load/tritonclient_install.py: client CPU per request (image JSON, BYTES)."""
    from benchmarks.load.tritonclient_install import run_tritonclient

    rows = run_tritonclient(rounds, requests)
    out = []
    for case in dict.fromkeys(r["case"] for r in rows):
        for round_ in range(1, rounds + 1):
            pair = {r["mode"]: r["total"] for r in rows
                    if r["case"] == case and r["round"] == round_}  # fmt: skip
            out.append({"peer": "tritonclient", "case": case, "round": round_,
                        "unit": "client CPU ms/request", "better": "lower",
                        "stock": pair["stock"], "adapter": pair["install()"]})  # fmt: skip
    return out


def mlserver_rows(rounds: int, seconds: float, python: str | None) -> list[Row]:
    """benchmarks/load/mlserver_adapter.py: requests/s, image and small JSON."""
    from benchmarks.load.mlserver_adapter import run_mlserver

    return run_mlserver(rounds, seconds, python)


def kserve_rows(rounds: int, seconds: float) -> list[Row]:
    """benchmarks/load/kserve_adapter.py: requests/s, KServe's ModelServer with and without
    ``patch_dataplane``; the adapter's figure is the recipe of docs/compat.md (its model), the
    one call alone under a model written to KServe's own API a case of its own."""
    from benchmarks.load.kserve_adapter import run_kserve

    out: list[Row] = []
    for r in run_kserve(rounds, seconds):
        name = r["payload"].replace("_json", " JSON").replace("_", " ")
        name = name if r["path"] == "rest" else f"{name} gRPC"
        for label, case in (("recipe", name), ("with", f"{name}, stock-API model")):
            out.append({"peer": "KServe", "case": case, "round": 0, "unit": "requests/s",
                        "better": "higher", "stock": r["without"]["rps"],
                        "adapter": r[label]["rps"]})  # fmt: skip
    return out


def triton_python_rows(rounds: int, seconds: float) -> list[Row]:
    """benchmarks/load/triton_python_backend.py: infer/s under perf_analyzer, the Triton
    server's Python backend with and without ``oipcodec.compat.triton_python_backend``."""
    from benchmarks.load.triton_python_backend import run_triton_python_backend

    out: list[Row] = []
    for r in run_triton_python_backend(rounds, seconds):
        case = f"BYTES identity {'HTTP' if r['path'] == 'http' else 'gRPC'}"
        out.append({"peer": "Triton Python backend", "case": case, "round": 0,
                    "unit": "infer/s", "better": "higher", "stock": r["without_infer_s"],
                    "adapter": r["with_infer_s"]})  # fmt: skip
    return out


PEERS: dict[str, Callable[[argparse.Namespace], list[Row]]] = {
    "tritonclient": lambda a: tritonclient_rows(a.rounds, a.requests),
    "mlserver": lambda a: mlserver_rows(a.rounds, a.seconds, a.mlserver_python),
    "kserve": lambda a: kserve_rows(a.rounds, a.seconds),
    "triton-python": lambda a: triton_python_rows(a.rounds, a.seconds),
}


def figure(value: float) -> str:
    """Three significant digits, and thousands written out with separators (1,010, not
    1.01e+03)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def gain(row: Row) -> float:
    """How many times better the adapter's figure is than stock's."""
    better, worse = (row["adapter"], row["stock"]) if row["better"] == "higher" else (
        row["stock"], row["adapter"])  # fmt: skip
    return float(better / worse) if worse else float("nan")  # a round too short to count


def run_peer(name: str, argv: list[str]) -> tuple[list[Row], str | None]:
    """One peer in a process of its own: its rows, or none and why."""
    code = (
        "import json, sys; from benchmarks.load import adapters; "
        "a = adapters.parser().parse_args(sys.argv[1:]); "
        f"print('ROWS ' + json.dumps(adapters.PEERS[{name!r}](a)))"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=3600)  # fmt: skip
    for line in done.stdout.splitlines():
        if line.startswith("ROWS "):
            return json.loads(line[5:]), None
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return [], last


def machine() -> str:
    """The machine, in one line."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores, "
            f"CPython {platform.python_version()}, load average {load:.1f} at the start")  # fmt: skip


def page(results: dict[str, tuple[list[Row], str | None]], command: str, when: str,
         where: str) -> str:  # fmt: skip
    """docs/adapters.md."""
    lines = [
        "# What the adapters buy",
        "",
        "Each peer with and without its oipcodec adapter: the same model, the same load, "
        "alternating rounds, one sitting. Written by `benchmarks/load/adapters.py`; the "
        "adapters themselves: [Inside other servers](compat.md).",
        "",
        f"- Date: {when}",
        f"- Machine: {where}",
        f"- Command: `{command}`",
        "",
        "| peer | case | unit | stock | with the adapter | gain | target |",
        "|---|---|---|---|---|---|---|",
    ]
    notes = []
    for name, (rows, why) in results.items():
        if why is not None:
            notes.append(f"- {name}: not measured in this sitting ({why}).")
            continue
        for peer, case in dict.fromkeys((r["peer"], r["case"]) for r in rows):
            mine = [r for r in rows if (r["peer"], r["case"]) == (peer, case)]
            stock = statistics.median(r["stock"] for r in mine)
            adapter = statistics.median(r["adapter"] for r in mine)
            ratio = statistics.median(gain(r) for r in mine)
            target = TARGETS.get((peer, case))
            verdict = (
                "" if target is None else f"{target:g}x ({'met' if ratio >= target else 'not met'})"
            )
            lines.append(f"| {peer} | {case} | {mine[0]['unit']} | {figure(stock)} | "
                         f"{figure(adapter)} | {ratio:.1f}x | {verdict} |")  # fmt: skip
    lines += [
        "",
        "Figures are medians over the rounds; the gain is the median of the rounds' ratios. "
        "The machine is shared: compare the two columns of a row, measured side by side, not "
        "figures of different sittings.",
    ]
    said = [NOTES[name] for name, (rows, why) in results.items() if why is None and name in NOTES]
    if said:
        lines += ["", *(f"- {note}" for note in said)]
    if notes:
        lines += ["", *notes]
    rounds = [f"| {r['peer']} | {r['case']} | {r['round']} | {figure(r['stock'])} | "
              f"{figure(r['adapter'])} | {gain(r):.2f}x |"
              for rows, _ in results.values() for r in rows]  # fmt: skip
    if rounds:
        lines += ["", "## Every round", "", "| peer | case | round | stock | with the adapter | gain |",
                  "|---|---|---|---|---|---|", *rounds]  # fmt: skip
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0, help="per round, load peers")
    parser.add_argument("--requests", type=int, default=20, help="per round, tritonclient")
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--mlserver-python", default=None,
                        help="an interpreter with mlserver (default $OIPCODEC_MLSERVER_PYTHON)")  # fmt: skip
    parser.add_argument("--write", default=None, help="write the page there (docs/adapters.md)")
    return parser


def main() -> None:
    args = parser().parse_args()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    where = machine()
    argv = sys.argv[1:]
    results = {}
    for name in args.peers.split(","):
        if name not in PEERS:
            raise SystemExit(f"unknown peer {name!r}: one of {', '.join(PEERS)}")
        print(f"== {name}", file=sys.stderr, flush=True)
        results[name] = run_peer(name, argv)
    command = "python benchmarks/load/adapters.py " + " ".join(shlex.quote(a) for a in argv)
    text = page(results, command.strip(), when, where)
    print(text)
    if args.write:
        Path(args.write).write_text(text)


if __name__ == "__main__":
    main()
