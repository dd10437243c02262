"""`oipcodec bench` as a measuring instrument: windows and stability as perf_analyzer defines
them, open loop without coordinated omission, the load levels' spellings, the generator's CPU
use, and the exports (perf_analyzer's CSV columns and profile-export JSON)."""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from oipcodec import cli
from oipcodec.bench import PAYLOADS
from oipcodec.bench.export import csv_rows, profile_document
from oipcodec.bench.load import (
    LevelResult,
    Measurement,
    Schedule,
    measure_level,
    read_intervals,
    stable,
    summarize,
)
from oipcodec.bench.table import TABLE_WIDTH, render_table
from oipcodec.bench.verdicts import best_and_tied
from tests.support.bench_models import Slow, sleeper_callers

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")

#: perf_analyzer's -f header with --verbose-csv and server statistics (report_writer.cc).
PERF_ANALYZER_HEADER = (
    "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
    "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
    "p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response,"
    "response wait"
)


def _sleeper(seconds: float) -> Any:
    def make() -> Any:
        return lambda: time.sleep(seconds)

    return make


# ------------------------------------------------------------------------------ windows


def test_time_windows_until_stable() -> None:
    """A steady caller: warm-up, then three windows that agree, and no more."""
    # A generous spread: the rule itself is test_stability_rule's; this machine is shared.
    measurement = Measurement(interval=0.2, max_trials=10, stability=10.0, warmup_requests=4)
    result = measure_level(_sleeper(0.005), measurement, concurrency=2)
    assert result.stable is True and len(result.windows) == 3 and result.errors == 0
    summary = summarize(result, 64, 64)
    assert summary["stable"] is True and summary["requests"] == len(result.spans) > 0
    for key in ("avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"):
        assert summary[key] >= 4.0, key
    assert summary["p50_ms"] <= summary["p90_ms"] <= summary["p95_ms"] <= summary["p99_ms"]
    assert summary["p99_ms"] <= summary["max_ms"]
    assert len(summary["windows"]) == 3 and summary["server_breakdown"] is None
    assert 0 <= summary["generator_cpu"] < 0.9 and not summary["generator_saturated"]
    assert len(result.edges) == 4 and result.edges == sorted(result.edges)


def test_a_time_window_waits_for_a_slow_rows_answers() -> None:
    """Requests of 120 ms in 30 ms windows: each window runs on until both threads could have
    had an answer, so none is empty."""
    measurement = Measurement(interval=0.03, max_trials=3, stability=10.0)
    result = measure_level(_sleeper(0.12), measurement, concurrency=2)
    assert len(result.windows) == 3
    assert all(w["requests"] >= 2 and w["seconds"] >= 0.1 for w in result.windows), result.windows


def test_count_windows() -> None:
    measurement = Measurement(
        mode="count_windows", request_count=20, interval=2.0, max_trials=3, stability=10.0
    )
    result = measure_level(_sleeper(0.002), measurement, concurrency=1)
    assert len(result.windows) == 3  # ended by their count, long before ten intervals
    assert all(w["requests"] >= 20 and w["seconds"] < 20 for w in result.windows), result.windows


def test_a_level_that_never_settles_is_unstable() -> None:
    """A server that keeps slowing down (each request 1 ms longer every 0.1 s): max_trials
    windows, then reported unstable."""
    started = time.perf_counter()

    def make() -> Any:
        def call() -> None:
            time.sleep(0.001 * (1 + (time.perf_counter() - started) / 0.1))

        return call

    measurement = Measurement(interval=0.15, max_trials=5, stability=0.1)
    result = measure_level(make, measurement, concurrency=1)
    assert result.stable is False and len(result.windows) == 5
    assert summarize(result, 1, 1)["stable"] is False


def test_stability_rule() -> None:
    """perf_analyzer's rule on the last three windows: max/min within the percentage, in
    requests/s and in the stabilising latency (the average, or the percentile chosen)."""
    rule = Measurement(stability=0.1)
    window = {"rps": 100.0, "avg_ms": 10.0, "p99_ms": 20.0}
    assert not stable([window, window], rule)
    assert stable([{"rps": 1.0, "avg_ms": 1.0}, window, window, window], rule)
    assert stable([window, window, {**window, "rps": 110.0}], rule)
    assert not stable([window, window, {**window, "rps": 111.0}], rule)
    assert not stable([window, window, {**window, "avg_ms": 11.5}], rule)
    assert stable([window, window, {**window, "p99_ms": 40.0}], rule)  # avg decides
    assert not stable([window, window, {**window, "p99_ms": 40.0}], Measurement(percentile=99))


def test_errors_stop_a_thread_and_are_counted() -> None:
    def failing() -> Any:
        def call() -> None:
            raise RuntimeError("boom")

        return call

    result = measure_level(failing, Measurement(interval=0.05, max_trials=3), concurrency=3)
    assert result.errors == 3 and "boom" in (result.first_error or "")
    assert not result.spans


def test_generator_saturation_is_flagged() -> None:
    """A window whose generator used 95% of a core is flagged; one at 30% is not."""
    window = {"requests": 10, "seconds": 1.0, "rps": 10.0}
    for cpu, flagged in ((0.95, True), (0.3, False)):
        result = LevelResult(windows=[window] * 3, stable=True, spans=[(0.0, 0.01)] * 30,
                             cpu_seconds=3 * cpu)  # fmt: skip
        summary = summarize(result, 1, 1)
        assert summary["generator_cpu"] == pytest.approx(cpu) and summary[
            "generator_saturated"] is flagged  # fmt: skip


def test_load_processes_share_the_threads() -> None:
    """Two spawned load processes, closed loop at 4 and open loop at 200/s: the windows
    gather both processes' completions, and each process's CPU is counted."""
    build = functools.partial(sleeper_callers, 0.01)
    measurement = Measurement(interval=0.3, max_trials=3, stability=10.0, warmup_requests=4)
    result = measure_level(_sleeper(0.01), measurement, concurrency=4, processes=2,
                           build=build)  # fmt: skip
    summary = summarize(result, 1, 1)
    assert result.processes == 2 and summary["load_processes"] == 2 and result.errors == 0
    assert summary["stable"] is True and 0 < summary["rps"] < 420, summary
    assert summary["p50_ms"] >= 9.0
    opened = measure_level(_sleeper(0.01), Measurement(interval=0.5, max_trials=1),
                           schedule=Schedule(rate=200.0), max_threads=8, processes=2,
                           build=build)  # fmt: skip
    summary = summarize(opened, 1, 1)
    assert opened.processes == 2 and 0 < summary["rps"] < 250, summary


# ------------------------------------------------------------------------------ open loop


def test_open_loop_measures_from_the_scheduled_time() -> None:
    """One sending thread and a 20 ms call, due every 5 ms: each request waits for the one
    before, and its latency counts the wait (closed loop would say 20 ms)."""
    measurement = Measurement(interval=0.5, max_trials=1)
    result = measure_level(_sleeper(0.02), measurement, schedule=Schedule(rate=200.0),
                           max_threads=1)  # fmt: skip
    summary = summarize(result, 1, 1)
    assert summary["stable"] is None  # fewer than three windows: not checked
    assert summary["max_ms"] > 200 and summary["p50_ms"] > 100
    assert summary["rps"] < 60  # what the one thread could send


def test_schedules() -> None:
    constant = Schedule(rate=4.0).offsets()
    assert [next(constant) for _ in range(3)] == [0.0, 0.25, 0.5]
    poisson = Schedule(rate=100.0, distribution="poisson").offsets()
    gaps = [next(poisson) for _ in range(2001)]
    assert 15 < gaps[-1] < 25  # about 2000 / 100 s
    cycled = Schedule(intervals=[0.1, 0.3]).offsets()
    assert [round(next(cycled), 6) for _ in range(5)] == [0.0, 0.1, 0.4, 0.5, 0.8]


def test_request_intervals_file(tmp_path: Path) -> None:
    good = tmp_path / "intervals.txt"
    good.write_text("1000\n\n2500\n")
    assert read_intervals(str(good)) == [0.001, 0.0025]
    bad = tmp_path / "bad.txt"
    bad.write_text("100\nfast\n")
    with pytest.raises(ValueError, match="line 2: 'fast' is not an interval in microseconds"):
        read_intervals(str(bad))
    zero = tmp_path / "zero.txt"
    zero.write_text("0\n")
    with pytest.raises(ValueError, match="no interval above 0"):
        read_intervals(str(zero))


@pytest.fixture(scope="module")
def slow_server() -> Iterator[Any]:
    """A server of one process whose model takes 50 ms a request, one at a time."""
    from oipcodec.testing import background

    with background([Slow()], log_level="critical", workers=1) as running:
        yield running


def _bench(server: Any, tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    table = io.StringIO()
    with contextlib.redirect_stdout(table), contextlib.redirect_stderr(io.StringIO()):
        status = cli.main(
            ["bench", "--url", server.http_url, "--model", "slow", "--implementation", "native",
             "--path", "rest-binary", "--no-chart", "--output-dir", str(tmp_path), *args]
        )  # fmt: skip
    assert status == 0
    return json.loads((tmp_path / "results.json").read_text()), table.getvalue()


def test_no_coordinated_omission(slow_server: Any, tmp_path: Path) -> None:
    """Against 20 requests/s of capacity: closed loop at c=1 sees the model's 50 ms; open loop
    at 40 requests/s for 5 s sees the queue grow (p99 above 1 s), because each request's
    latency counts from when it was due, not from when a thread got round to sending it."""
    closed, _ = _bench(slow_server, tmp_path / "closed", "--concurrency", "1",
                       "--measurement-interval", "1000", "--max-trials", "1")  # fmt: skip
    (record,) = closed["results"]
    (entry,) = record["load"]
    assert record["error"] is None and entry["concurrency"] == 1
    assert 45 < entry["p50_ms"] < 200 and entry["p99_ms"] < 1000, entry
    opened, table = _bench(slow_server, tmp_path / "open", "--request-rate", "40",
                           "--measurement-interval", "5000", "--max-trials", "1")  # fmt: skip
    (record,) = opened["results"]
    (entry,) = record["load"]
    assert record["error"] is None and entry["request_rate"] == 40
    assert entry["p99_ms"] > 1000, entry
    assert entry["rps"] < 25  # the server's capacity, not the rate asked
    assert opened["levels"] == {"mode": "request_rate", "values": [40.0]}
    assert "r=40 req/s" in table


def test_load_processes_against_a_server(slow_server: Any, tmp_path: Path) -> None:
    """--load-processes 2 at c=2: each process makes its own clients and both count."""
    results, _ = _bench(slow_server, tmp_path, "--concurrency", "2", "--load-processes", "2",
                        "--measurement-interval", "500", "--max-trials", "1")  # fmt: skip
    (record,) = results["results"]
    (entry,) = record["load"]
    assert record["error"] is None and entry["load_processes"] == 2, entry
    assert entry["requests"] > 0 and entry["errors"] == 0


def test_latency_threshold_stops_the_sweep(slow_server: Any, tmp_path: Path) -> None:
    results, table = _bench(slow_server, tmp_path, "--concurrency", "1:4",
                            "--latency-threshold", "10", "--measurement-interval", "300",
                            "--max-trials", "1")  # fmt: skip
    (record,) = results["results"]
    assert [e["concurrency"] for e in record["load"]] == [1]  # 1:4 is 1,2,4; stopped at 1
    assert record["threshold_reached"] == 1
    assert "stopped after c=1: its latency passed --latency-threshold" in table


# ------------------------------------------------------------------------------ levels


def test_level_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli.build_parser()

    def parse(*args: str) -> Any:
        return parser.parse_args(["bench", *args])

    assert parse("--concurrency", "1:64").concurrency == [1, 2, 4, 8, 16, 32, 64]
    assert parse("--concurrency", "1:64:2").concurrency == [1, 2, 4, 8, 16, 32, 64]
    assert parse("--concurrency", "2:20:3").concurrency == [2, 6, 18]
    assert parse("--concurrency", "1,8").concurrency == [1, 8]
    assert parse("--concurrency-range", "1:7:2").concurrency_range == [1, 3, 5, 7]
    assert parse("--concurrency-range", "4").concurrency_range == [4]
    assert parse("--request-rate-range", "10:30:10").request_rate_range == [10.0, 20.0, 30.0]
    assert parse("--request-rate", "5,7.5").request_rate == [5.0, 7.5]
    for bad in (["--concurrency", "0:4"], ["--concurrency", "1:4:1"],
                ["--concurrency-range", "4:1"], ["--request-rate", "0"],
                ["--percentile", "42"]):  # fmt: skip
        with pytest.raises(SystemExit):
            parse(*bad)
    assert cli.main(["bench", "--concurrency", "1", "--request-rate", "5"]) == 2
    assert "give one load" in capsys.readouterr().err
    assert cli.main(["bench", "--max-trials", "0"]) == 2
    assert "--max-trials must be at least 1" in capsys.readouterr().err


# ------------------------------------------------------------------------------ reporting


def _entry(level: int, rps: float, stable_: bool | None, **extra: Any) -> dict[str, Any]:
    return {
        "concurrency": level, "level": level, "requests": 100, "seconds": 1.0, "rps": rps,
        "mb_per_s": 1.0, "errors": 0, "avg_ms": 2.0, "p50_ms": 1.5, "p90_ms": 3.0,
        "p95_ms": 3.5, "p99_ms": 4.0, "max_ms": 9.0, "stable": stable_, "generator_cpu": 0.4,
        "generator_saturated": False, "windows": [], "server_breakdown": None, **extra,
    }  # fmt: skip


def _results(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "results": records, "best": best_and_tied(records)[0],
        "options": {"concurrency": [1, 8], "stability_percentage": 10, "percentile": None},
        "levels": {"mode": "concurrency", "values": [1, 8]},
        "payloads": {"small": PAYLOADS["small"].as_dict()},
    }  # fmt: skip


def _record(path: str, implementation: str, rps: float, stable_: bool | None) -> dict[str, Any]:
    return {
        "payload": "small", "path": path, "implementation": implementation, "error": None,
        "load": [_entry(1, rps / 4, True), _entry(8, rps, stable_)],
        "codec_us": {"client_encode": 10.0, "client_decode": 20.0, "client": 30.0,
                     "server": 40.0},
        "request_bytes": 100, "response_bytes": 100,
    }  # fmt: skip


def test_an_unstable_faster_row_is_marked_but_not_beaten_by_stability_alone() -> None:
    """pure's figure is higher but never stable: marked ~ in the table, 'no' in the CSV;
    "best" is the faster row all the same (a slower stable row never wins by stability)."""
    records = [_record("rest-binary", "native", 6000, True),
               _record("rest-binary", "pure", 9000, False)]  # fmt: skip
    results = _results(records)
    assert results["best"] == {"small": "rest-binary/pure"}
    lines = render_table(results).splitlines()
    rows = [line for line in lines if line[2:].startswith("REST binary")]
    (native,) = [line for line in rows if " native " in line]
    (pure,) = [line for line in rows if " pure " in line]
    assert "6,000 " in native and "~" not in native and not native.startswith("*")
    assert "9,000~" in pure and pure.startswith("*")
    assert native.split()[-1] == "0.67" and pure.split()[-1] == "1.00"  # x pure
    assert any("~ never stable" in line for line in lines)
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    csv_lines = csv_rows(results)
    stable_column = csv_lines[0].index("Stable")
    assert [row[stable_column] for row in csv_lines[1:]] == ["yes", "yes", "yes", "no"]


def test_table_fits_its_width_and_wide_adds_the_codec() -> None:
    records = [_record(path, impl, 1000, True) for path in ("rest-json", "grpc-raw")
               for impl in ("native", "pure", "tritonclient")]  # fmt: skip
    records.append({**records[0], "implementation": "kserve", "load": [], "error": "x" * 300})
    results = _results(records)
    narrow = render_table(results).splitlines()
    assert max(map(len, narrow)) <= TABLE_WIDTH
    assert not any("client us" in line for line in narrow)
    wide = render_table(results, wide=True).splitlines()
    assert any("wire kB" in line and "server us" in line for line in wide)


def test_csv_header_is_perf_analyzers(tmp_path: Path) -> None:
    results = _results([_record("rest-binary", "native", 6000, True)])
    rows = csv_rows(results)
    assert ",".join(rows[0][:16]) == PERF_ANALYZER_HEADER
    assert rows[0][16:19] == ["Payload", "Path", "Implementation"]
    first = dict(zip(rows[0], rows[1], strict=True))
    # us, as perf_analyzer writes them: the client codec as send/receive, the rest waited.
    assert first["Concurrency"] == "1" and first["Client Send"] == "10"
    assert first["Client Recv"] == "20" and first["Avg latency"] == "2000"
    assert first["request/response"] == "30" and first["response wait"] == "1970"
    assert first["Network+Server Send/Recv"] == "1970" and first["Server Queue"] == "0"
    breakdown = {"queue_us": 100.0, "compute_input_us": 10.0, "compute_infer_us": 500.0,
                 "compute_output_us": 10.0}  # fmt: skip
    results["results"][0]["load"][0]["server_breakdown"] = breakdown
    first = dict(zip(rows[0], csv_rows(results)[1], strict=True))
    assert first["Server Queue"] == "100" and first["Server Compute Infer"] == "500"
    assert first["Network+Server Send/Recv"] == "1350"
    results["levels"] = {"mode": "request_rate", "values": [1, 8]}
    assert csv_rows(results)[0][0] == "Request Rate"


def test_csv_and_profile_export_of_a_run(tmp_path: Path) -> None:
    """A real run writes both files: the CSV with perf_analyzer's header and a row per level,
    the profile with every measured request inside its windows."""
    out = tmp_path / "run"
    table = io.StringIO()
    with contextlib.redirect_stdout(table), contextlib.redirect_stderr(io.StringIO()):
        status = cli.main(
            ["bench", "--quick", "--payload", "small", "--path", "rest-binary",
             "--implementation", "native", "--concurrency", "1,2", "--measurement-interval",
             "100", "--max-trials", "3", "--no-chart", "--output-dir", str(out),
             "--csv", str(tmp_path / "a.csv"), "--profile-export", str(tmp_path / "p.json")]
        )  # fmt: skip
    assert status == 0
    with open(tmp_path / "a.csv", newline="") as rows:
        lines = list(csv.reader(rows))
    assert ",".join(lines[0][:16]) == PERF_ANALYZER_HEADER
    assert [row[0] for row in lines[1:]] == ["1", "2"]
    profile = json.loads((tmp_path / "p.json").read_text())
    assert profile["version"].startswith("oipcodec ")
    assert [e["experiment"] for e in profile["experiments"]] == [
        {"mode": "concurrency", "value": 1}, {"mode": "concurrency", "value": 2}]  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    assert len(results["machine"]["load_average"]) == 2  # how busy the machine was
    for experiment, entry in zip(profile["experiments"], results["results"][0]["load"],
                                 strict=True):  # fmt: skip
        requests = experiment["requests"]
        assert len(requests) == entry["requests"] > 0 and "profile" not in entry
        edges = experiment["window_boundaries"]
        assert len(edges) >= 2 and edges == sorted(edges)
        for request in requests:
            (answered,) = request["response_timestamps"]
            assert edges[0] <= answered < edges[-1] and request["timestamp"] < answered
        assert abs(requests[0]["timestamp"] / 1e9 - time.time()) < 600  # the epoch, in ns
    assert profile_document(results) == {"experiments": [], "version": profile["version"]}


def test_sweep_levels_and_shared_memory_notes_fit_the_width() -> None:
    """A sweep of more than two levels lists every level's requests/s after the table (the
    columns show the lowest and the highest); the shared-memory note is a line per path."""
    records = []
    for path in ("shm", "rest-binary", "grpc-raw"):
        record = _record(path, "native", 123456, True)
        record["load"] = [_entry(c, 1000.0 * c, True) for c in (1, 2, 4, 8)]
        record["codec_us"]["memcpy"] = 0.5
        record["payload_bytes"] = 64
        records.append(record)
    results = _results(records)
    results["levels"]["values"] = [1, 2, 4, 8]
    lines = render_table(results).splitlines()
    assert max(map(len, lines)) <= TABLE_WIDTH
    assert "  small shared memory native: c=1 1,000, c=2 2,000, c=4 4,000, c=8 8,000" in lines
    note = lines.index("shared memory, small native, req/s at c=1/c=2/c=4/c=8:")
    assert lines[note + 1].startswith(
        "  shared memory 1,000 / 2,000 / 4,000 / 8,000 (server 40 us)"
    )
    assert lines[note + 2].startswith("  REST binary ") and lines[note + 3].startswith(
        "  gRPC raw "
    )


def test_pareto_chart_of_a_sweep(tmp_path: Path) -> None:
    """requests/s against p99 across a sweep's levels, a panel per path: written for three
    levels or more, not for two."""
    pytest.importorskip("matplotlib")
    from oipcodec.bench.chart import write_pareto

    records = []
    for path in ("rest-json", "grpc-raw"):
        for implementation in ("native", "pure"):
            record = _record(path, implementation, 1000, True)
            record["load"] = [_entry(c, 1000.0 * c, True, p99_ms=float(c)) for c in (1, 2, 4)]
            records.append(record)
    results = _results(records)
    results["levels"]["values"] = [1, 2, 4]
    assert write_pareto(results, tmp_path / "pareto.png")
    assert (tmp_path / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    results["levels"]["values"] = [1, 4]
    assert not write_pareto(results, tmp_path / "two.png") and not (tmp_path / "two.png").exists()
