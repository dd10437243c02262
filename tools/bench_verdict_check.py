"""Do consecutive ``oipcodec bench --quick`` runs give the same native-against-pure verdicts
while another process keeps a core busy? (issue 46's acceptance check)

    python tools/bench_verdict_check.py [--runs 5] [--no-busy] [-- BENCH OPTIONS...]

Runs the harness ``--runs`` times in a row (each from a fresh process, ``--output-dir`` a
temporary directory), with a busy loop on one core for the whole time unless ``--no-busy``;
then prints each row's verdict per run, whether the runs agree on the side ahead (native,
pure or neither: a "no difference within noise" verdict is neither, whatever its note), and
every time native was named slower (a verdict the CPU per request must agree with, so pure is
never named faster where it says native costs less). Exit status 1 when the verdicts differ
between runs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from oipcodec.bench.verdicts import ahead


def _busy(stop: float) -> None:
    while time.time() < stop:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-busy", action="store_true", help="no busy loop beside the runs")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep each run's results.json in DIR (run1.json, ...)")  # fmt: skip
    parser.add_argument("bench", nargs="*", help="options for oipcodec bench after --")
    args = parser.parse_args(argv)
    busy = None
    if not args.no_busy:
        busy = multiprocessing.Process(target=_busy, args=(time.time() + 3600,), daemon=True)
        busy.start()
    runs: list[dict[str, dict[str, str]]] = []
    slower = []
    try:
        for number in range(args.runs):
            with tempfile.TemporaryDirectory() as out:
                started = time.perf_counter()
                command = [sys.executable, "-m", "oipcodec", "bench", "--quick", "--no-chart",
                           "--output-dir", out, *args.bench]  # fmt: skip
                subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
                text = (Path(out) / "results.json").read_text()
            seconds = time.perf_counter() - started
            if args.keep:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                (Path(args.keep) / f"run{number + 1}.json").write_text(text)
            results = json.loads(text)
            print(f"run {number + 1}: {seconds:.0f} s, load average "
                  f"{results['machine']['load_average']}", flush=True)  # fmt: skip
            runs.append(results.get("verdicts", {}))
            for record in results["results"]:
                if record["implementation"] != "native":
                    continue
                verdict = runs[-1].get(record["payload"], {}).get(record["path"], "")
                if verdict == "slower":
                    slower.append((number + 1, record["payload"], record["path"]))
    finally:
        if busy is not None:
            busy.kill()
    rows = sorted({(p, path) for run in runs for p, paths in run.items() for path in paths})
    differ = 0
    for payload, path in rows:
        verdicts = [run.get(payload, {}).get(path, "-") for run in runs]
        same = len({ahead(v) for v in verdicts}) == 1  # the side ahead; the wording may vary
        differ += not same
        print(f"{'  ' if same else '! '}{payload} {path}: {' | '.join(verdicts)}")
    print(f"{differ} of {len(rows)} rows differ between runs; native named slower "
          f"{len(slower)} times: {slower}")  # fmt: skip
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
