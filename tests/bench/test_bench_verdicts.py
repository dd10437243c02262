"""Cost per request, rounds and verdicts (oipcodec.bench.cpu, oipcodec.bench.verdicts): what
the harness may claim from figures with noise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from oipcodec import cli
from oipcodec.bench.cpu import child_pids, proc_reader, read_metrics_cpu
from oipcodec.bench.runner import round_order
from oipcodec.bench.verdicts import (
    NO_DIFFERENCE,
    ahead,
    best_and_tied,
    interval,
    merge_rounds,
    native_verdicts,
)


def test_metrics_cpu_is_read_from_the_exposition_format() -> None:
    text = (
        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
        "# TYPE process_cpu_seconds_total counter\n"
        "process_cpu_seconds_total 12.5\n"
        'process_cpu_seconds_total{worker="1"} 0.5\n'
        "process_cpu_seconds_total_created 1.7e9\n"
    )
    assert read_metrics_cpu(text) == 13.0
    assert read_metrics_cpu("nv_inference_count 3\n") is None  # no process collector: n/a


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="Linux /proc")
def test_proc_reader_counts_a_childs_cpu() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nt = time.process_time()\n"
         "while time.process_time() - t < 0.3: pass\nsys.stdin.read()"],
        stdin=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert child.pid in child_pids(os.getpid())
        read = proc_reader([child.pid])
        assert read is not None
        deadline = 50
        while (read() or 0.0) < 0.25 and deadline:
            subprocess.run([sys.executable, "-c", "import time; time.sleep(0.1)"], check=True)
            deadline -= 1
        assert (read() or 0.0) >= 0.25
    finally:
        child.communicate(b"")
    assert proc_reader([child.pid]) is None  # gone: not readable


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="Linux /proc")
def test_proc_reader_sees_less_than_a_clock_tick() -> None:
    """A server's CPU in a 100 ms window on a busy machine is a few 10 ms clock ticks: the
    reader counts each thread's nanoseconds instead, so 3 ms of CPU reads as 3 ms, not 0 or
    10."""
    import time

    read = proc_reader([os.getpid()])
    assert read is not None
    before = read()
    start = time.thread_time()
    while time.thread_time() - start < 0.003:
        pass
    used = (read() or 0.0) - (before or 0.0)
    assert 0.003 <= used < 0.009


def test_interval_is_the_median_with_a_bootstrap_range() -> None:
    one = interval([5.0])
    assert one == {"median": 5.0, "low": 5.0, "high": 5.0, "n": 1}
    three = interval([1.0, 2.0, 10.0])
    assert three is not None and three["median"] == 2.0
    assert (three["low"], three["high"]) == (1.0, 10.0)  # few samples: their range
    assert interval([]) is None


def test_rounds_interleave_the_implementations_row_by_row(tmp_path: Path) -> None:
    """--rounds 2: native and pure take turns a row at a time (the rows' order in
    results.json is the order first measured), each row measured twice, its figure the
    median with an interval from the rounds and the CPU per request on both sides."""
    status = cli.main(
        ["bench", "--payload", "small", "--path", "rest-json,grpc-raw", "--implementation",
         "native,pure", "--concurrency", "1", "--duration", "0.05", "--max-trials", "1",
         "--rounds", "2", "--no-chart", "--output-dir", str(tmp_path)]
    )  # fmt: skip
    assert status == 0
    results = json.loads((tmp_path / "results.json").read_text())
    order = [(r["path"], r["implementation"]) for r in results["results"]]
    assert order == [("rest-json", "native"), ("rest-json", "pure"), ("grpc-raw", "native"),
                     ("grpc-raw", "pure")]  # fmt: skip
    for record in results["results"]:
        assert record["rounds"] == 2 and record["error"] is None
        (entry,) = record["load"]
        assert len(entry["rounds"]) == 2 and entry["ci"]["source"] == "rounds"
        assert entry["client_cpu_us"] > 0
        if os.path.exists("/proc/self/stat"):  # read (in clock ticks: 0 in a short window)
            assert entry["server_cpu_us"] is not None
    assert set(results["verdicts"]["small"]) == {"rest-json", "grpc-raw"}
    # The order measured: native first in round 0, pure first in round 1 (A B, B A).
    for native, pure in zip(results["results"][::2], results["results"][1::2], strict=True):
        turns = [[r["turn"] for r in row["load"][0]["rounds"]] for row in (native, pure)]
        assert turns[0][0] < turns[1][0] and turns[1][1] < turns[0][1]


def _record(impl: str, rps: float, cpu: float, round_: int = 0, path: str = "rest-json",
            stable: bool | None = True) -> dict[str, Any]:  # fmt: skip
    return {
        "payload": "small", "path": path, "implementation": impl, "error": None,
        "round": round_,
        "load": [{"level": 8, "concurrency": 8, "requests": 100, "rps": rps, "stable": stable,
                  "p50_ms": 1.0, "p99_ms": 2.0, "client_cpu_us": cpu, "server_cpu_us": cpu,
                  "windows": []}],
    }  # fmt: skip


def _rounds(impl: str, figures: list[tuple[float, float]], **extra: Any) -> list[dict[str, Any]]:
    return [_record(impl, rps, cpu, n, **extra) for n, (rps, cpu) in enumerate(figures)]


def test_a_difference_beyond_the_noise_is_a_verdict() -> None:
    records = merge_rounds(
        _rounds("native", [(1000, 100), (1100, 95), (1050, 98)])
        + _rounds("pure", [(500, 300), (520, 310), (480, 290)])
    )
    assert len(records) == 2 and records[0]["rounds"] == 3
    (native,) = records[0]["load"]
    assert native["rps"] == 1050 and len(native["rounds"]) == 3
    assert native["ci"]["source"] == "rounds" and native["ci"]["cpu_us"]["median"] == 196
    assert native_verdicts(records) == {"small": {"rest-json": "faster"}}
    best, tied = best_and_tied(records)
    assert best == {"small": "rest-json/native"} and tied == {}


def test_overlapping_intervals_name_no_winner() -> None:
    records = merge_rounds(
        _rounds("native", [(1000, 100), (800, 100), (1200, 100)])
        + _rounds("pure", [(1100, 100), (900, 100), (950, 100)])
    )
    assert native_verdicts(records) == {"small": {"rest-json": NO_DIFFERENCE}}
    best, tied = best_and_tied(records)
    assert best == {} and tied == {"small": ["rest-json/native", "rest-json/pure"]}


def test_pure_is_never_named_faster_where_cpu_per_request_says_otherwise() -> None:
    records = merge_rounds(
        _rounds("native", [(900, 100), (910, 101), (905, 99)])
        + _rounds("pure", [(1000, 300), (1010, 310), (1005, 290)])
    )
    (verdict,) = native_verdicts(records)["small"].values()
    assert verdict.startswith(NO_DIFFERENCE) and "disagree" in verdict


@pytest.mark.parametrize(
    ("native", "pure", "note"),
    [
        # Requests/s apart, CPU per request within the rounds' noise.
        ([(1000, 100), (1100, 120), (1050, 90)], [(500, 110), (520, 95), (480, 105)],
         " (requests/s higher; CPU per request not 1.5x apart)"),
        # CPU per request apart, requests/s mostly the other way.
        ([(1000, 100), (800, 101), (1200, 99)], [(1100, 300), (900, 310), (950, 290)],
         " (requests/s and CPU per request disagree)"),
        # Both apart the same way in every round, but CPU per request by less than the
        # margin: what moves from run to run on a shared machine (native named slower on a
        # row where both do the same work, in an acceptance run).
        ([(5300, 186), (5400, 193), (2700, 169)], [(6000, 157), (6300, 160), (6700, 146)],
         " (requests/s lower; CPU per request not 1.5x apart)"),
        # CPU per request under the margin in two rounds, not in the third.
        ([(2000, 60), (2000, 60), (2000, 80)], [(1000, 100), (1000, 100), (1000, 100)],
         " (requests/s higher; CPU per request not 1.5x apart)"),
        # Nothing apart.
        ([(1000, 100), (800, 100), (1200, 100)], [(1100, 100), (900, 100), (950, 100)], ""),
    ],
)  # fmt: skip
def test_a_row_within_noise_names_no_winner(
    native: list[tuple[float, float]], pure: list[tuple[float, float]], note: str
) -> None:
    """A verdict needs CPU per request apart by CPU_MARGIN in every round and requests/s
    agreeing: short of that the row is within noise (saying why), on neither side."""
    records = merge_rounds(_rounds("native", native) + _rounds("pure", pure))
    (verdict,) = native_verdicts(records)["small"].values()
    assert verdict == NO_DIFFERENCE + note
    assert ahead(verdict) == "neither"


def test_one_stalled_round_does_not_undo_a_clear_difference() -> None:
    """The machine's other work stalls native in one round (its requests/s below pure's
    there): CPU per request is a third of pure's in every round and requests/s are higher
    in the others, so native is faster all the same (in an acceptance run, requiring
    requests/s apart in every round flipped such rows to "within noise" in 1 run of 5)."""
    records = merge_rounds(
        _rounds("native", [(5870, 100), (1250, 120), (990, 110)])
        + _rounds("pure", [(1000, 300), (1000, 300), (1000, 300)])
    )
    assert native_verdicts(records) == {"small": {"rest-json": "faster"}}


def test_a_round_the_machine_stalled_is_left_out() -> None:
    """Native at 156 req/s in one round, 2,395 and 7,994 in the others: few answers carry
    the idle CPU, so that round's CPU per request is inflated to near pure's. Left out (a
    third of its median or less), the other two rounds decide (an acceptance run's row)."""
    records = merge_rounds(
        _rounds("native", [(156, 254), (2395, 72), (7994, 62)])
        + _rounds("pure", [(819, 290), (420, 247), (351, 318)])
    )
    assert native_verdicts(records) == {"small": {"rest-json": "faster"}}


def test_rounds_are_compared_in_pairs_so_the_machines_load_cancels_out() -> None:
    """The machine's load halves both sides' requests/s in one round: each side's own
    rounds overlap the other's, but native is twice pure within every round (and costs a
    third), so it is faster."""
    records = merge_rounds(
        _rounds("native", [(2000, 100), (1000, 110), (2200, 95)])
        + _rounds("pure", [(1000, 300), (480, 320), (1050, 290)])
    )
    native, pure = (r["load"][0]["ci"]["rps"] for r in records)
    assert native["low"] < pure["high"]  # unpaired, the intervals overlap
    assert native_verdicts(records) == {"small": {"rest-json": "faster"}}


def test_the_rounds_are_the_noise_of_a_merged_row() -> None:
    """With rounds, a level's stability is its rounds' spread of requests/s (within the
    stability percentage), whatever each round's windows said; each round keeps its place."""
    steady = merge_rounds(
        _rounds("native", [(1000, 100), (1050, 100), (1020, 100)], stable=False), 0.10
    )[0]["load"][0]
    assert steady["stable"] is True
    assert [r["stable"] for r in steady["rounds"]] == [False, False, False]
    assert [r["round"] for r in steady["rounds"]] == [0, 1, 2]
    swinging = merge_rounds(_rounds("native", [(1000, 100), (1300, 100), (1020, 100)]), 0.10)
    assert swinging[0]["load"][0]["stable"] is False


def test_rounds_alternate_the_order_of_the_implementations() -> None:
    """A B in even rounds, B A in odd ones: neither side is always measured first."""
    assert [round_order(["native", "pure", "tritonclient"], n) for n in range(3)] == [
        ["native", "pure", "tritonclient"],
        ["tritonclient", "pure", "native"],
        ["native", "pure", "tritonclient"],
    ]


def test_a_slower_stable_row_never_beats_a_faster_unstable_one() -> None:
    records = merge_rounds(
        _rounds("native", [(2000, 100), (2400, 100), (2050, 100)])
        + _rounds("pure", [(1000, 100), (1010, 100), (1005, 100)])
    )
    assert best_and_tied(records)[0] == {"small": "rest-json/native"}
    assert records[0]["load"][0]["stable"] is False  # the rounds' spread: marked for the reader


def test_one_round_takes_its_intervals_from_the_windows() -> None:
    record = _record("native", 1000, 100)
    record["load"][0]["windows"] = [
        {"rps": r, "client_cpu_us": 50.0, "server_cpu_us": None} for r in (900, 1000, 1100)
    ]
    (merged,) = merge_rounds([record])
    ci = merged["load"][0]["ci"]
    assert ci["source"] == "windows" and ci["rps"]["low"] == 900 and ci["rps"]["high"] == 1100
    assert ci["server_cpu_us"] is None and ci["cpu_us"] is None  # n/a: no total


def test_metrics_reader_reads_a_servers_process_cpu() -> None:
    """--url's server side: process_cpu_seconds_total of its /metrics, read over HTTP; a
    server without it gives no reader (the table says n/a)."""
    import http.server
    import threading

    from oipcodec.bench.cpu import metrics_reader

    answers = {"/metrics": b"process_cpu_seconds_total 4.25\n"}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = answers.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        read = metrics_reader(url)
        assert read is not None and read() == 4.25
        answers["/metrics"] = b"nv_inference_count 1\n"
        assert read() is None  # a reading without it: that window's figure is n/a
        assert metrics_reader(url) is None
    finally:
        server.shutdown()
        server.server_close()


def test_argparse_errors_are_two_lines(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["bench", "--concurrency", "0:4"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("oipcodec bench: error: argument --concurrency")
    assert err[1] == "(oipcodec bench --help lists the options)"


def test_the_side_ahead_of_a_verdict() -> None:
    assert ahead("faster") == "native" and ahead("slower") == "pure"
    assert ahead(NO_DIFFERENCE) == ahead(f"{NO_DIFFERENCE} (requests/s and CPU per request "
                                         "disagree)") == "neither"  # fmt: skip
    assert ahead(f"{NO_DIFFERENCE} (requests/s higher; CPU per request not 1.5x apart)") == (
        "neither"
    )


def test_more_rounds_pin_the_median_past_a_stray_round() -> None:
    """Up to 5 rounds, stable means the rounds' whole range within 10%; with 7 or more, the
    interval of their median, which a single stray round on either side no longer widens."""
    steady = [(1000, 100), (1020, 100), (990, 100), (1010, 100), (1005, 100)]
    few = merge_rounds(_rounds("native", [*steady[:2], (700, 100)]))
    assert few[0]["load"][0]["stable"] is False
    many = merge_rounds(_rounds("native", [*steady, (700, 100), (1400, 100)]))
    (entry,) = many[0]["load"]
    assert entry["ci"]["rps"]["n"] == 7 and entry["stable"] is True
    spread = merge_rounds(_rounds("native", [(1000, 100), (800, 100), (1200, 100)] * 3))
    assert spread[0]["load"][0]["stable"] is False
