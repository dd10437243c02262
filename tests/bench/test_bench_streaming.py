"""`oipcodec bench --streaming`: tiny closed-loop stream runs against the embedded server
(square_int32, repeat_int32) checking each stream's count of responses and that the time to
first response is within the stream's latency, the table and the CSV; a server without the
routes is in tests/bench/test_bench_kserve_server.py."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from oipcodec import cli
from oipcodec.bench.stream_load import STREAM_CSV_COLUMNS, stream_request

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")


def _run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = cli.main(
            ["bench", "--streaming", "--concurrency", "1,2", "--measurement-interval", "30",
             "--no-chart", "--output-dir", str(tmp_path), "--csv", str(tmp_path / "s.csv"),
             *args]
        )  # fmt: skip
    results = json.loads((tmp_path / "results.json").read_text()) if status == 0 else {}
    return status, results, table.getvalue()


@pytest.mark.parametrize("model", ["square_int32", "repeat_int32"])
def test_streams_count_their_responses(model: str, tmp_path: Path) -> None:
    profile = tmp_path / "profile.json"
    status, results, table = _run(tmp_path, "--model", model, "--stream-responses", "5",
                                  "--profile-export", str(profile))  # fmt: skip
    assert status == 0, table
    rows = {r["path"]: r for r in results["results"]}
    assert set(rows) == {"rest-sse", "grpc-stream"}
    for record in rows.values():
        assert record["error"] is None and "unsupported" not in record, record
        assert [e["concurrency"] for e in record["load"]] == [1, 2]
        for entry in record["load"]:
            assert entry["streams"] > 0 and entry["errors"] == 0
            assert entry["min_responses"] == entry["max_responses"] == 5
            assert entry["responses"] == 5 * entry["streams"]
            assert 0 < entry["ttft_p50_ms"] <= entry["stream_p50_ms"]
            assert entry["ttft_max_ms"] <= entry["stream_max_ms"]
            assert entry["itl_p50_ms"] <= entry["itl_p99_ms"]
            assert entry["responses_per_s"] > entry["streams_per_s"] > 0
            # /proc counts the server's CPU in clock ticks (10 ms): a short level may read 0.
            assert entry["client_cpu_us"] > 0 and entry["server_cpu_us"] >= 0
    assert "REST generate_stream (SSE)" in table and "gRPC ModelStreamInfer" in table
    assert "error" not in table and "responses per stream" not in table
    experiments = json.loads(profile.read_text())["experiments"]
    assert len(experiments) == 2 * 2
    for experiment in experiments:
        for request in experiment["requests"]:
            times = request["response_timestamps"]
            assert len(times) == 5 and request["timestamp"] < times[0] and times == sorted(times)
    with open(tmp_path / "s.csv", newline="") as lines:
        got = list(csv.reader(lines))
    assert got[0] == list(STREAM_CSV_COLUMNS) and len(got) == 1 + 2 * 2
    assert {row[1] for row in got[1:]} == {"rest-sse", "grpc-stream"}
    # bench compare refuses what it cannot compare, rather than finding no regression.
    results_file = str(tmp_path / "results.json")
    assert cli.main(["bench", "compare", results_file, results_file]) == 2


def test_a_model_of_another_form_is_an_error_per_row(tmp_path: Path) -> None:
    """The identity model's request cannot ask for n responses: each row says why."""
    status, _, _ = _run(tmp_path, "--model", "identity", "--path", "grpc-stream")
    assert status == 2


def test_stream_request_forms() -> None:
    square = {"name": "s", "inputs": [{"name": "IN", "datatype": "INT32", "shape": [1]}]}
    assert stream_request(square, 7)["IN"].tolist() == [7]
    repeat = {"name": "r", "inputs": [
        {"name": "IN", "datatype": "INT32", "shape": [-1]},
        {"name": "DELAY", "datatype": "UINT32", "shape": [-1]},
        {"name": "WAIT", "datatype": "UINT32", "shape": [1]},
    ]}  # fmt: skip
    arrays = stream_request(repeat, 3)
    assert arrays["IN"].tolist() == [0, 1, 2] and arrays["DELAY"].tolist() == [0, 0, 0]
    assert arrays["WAIT"].tolist() == [0]
    with pytest.raises(ValueError, match="'x' input 'T' is FP32"):
        stream_request({"name": "x", "inputs": [{"name": "T", "datatype": "FP32",
                                                 "shape": [1]}]}, 2)  # fmt: skip


def test_cli_refuses_rounds_slo_and_unary_paths(capsys: pytest.CaptureFixture[str]) -> None:
    for option in (["--rounds", "2"], ["--slo", "p99<0.01s"], ["--request-rate", "10"]):
        assert cli.main(["bench", "--streaming", *option]) == 2
        assert option[0] in capsys.readouterr().err
    assert cli.main(["bench", "--streaming", "--path", "grpc-raw"]) == 2
    assert "rest-sse, grpc-stream" in capsys.readouterr().err


def test_a_level_whose_clients_fail_reports_the_error() -> None:
    """A client that cannot be made, or a stream that fails, ends the level with the first
    error (never a wait for threads that are gone)."""
    from oipcodec.bench.stream_load import _level

    def broken() -> Any:
        raise OSError("no client")

    summary = _level(broken, 3, 0.01, None)
    assert summary["streams"] == 0 and summary["errors"] == 3
    assert summary["first_error"] == "OSError: no client"


def test_a_server_given_by_url_alone_gets_the_sse_path(tmp_path: Path) -> None:
    from oipcodec.testing import background

    with background(log_level="critical") as server:
        status, results, table = _run(tmp_path, "--url", server.http_url,
                                      "--stream-responses", "3")  # fmt: skip
    assert status == 0, table
    (record,) = results["results"]
    assert record["path"] == "rest-sse" and record["error"] is None
    assert all(e["min_responses"] == e["max_responses"] == 3 for e in record["load"])
