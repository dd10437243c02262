"""benchmarks/load/batching.py, the dynamic batching comparison: perf_analyzer's report is read
as it writes it, the table and ratios put the right figures side by side, the model file
``oipcodec serve`` runs computes the product the other servers' files compute, and a short run
against the real Triton server measures both servers (the full run's figures are in
docs/measurements.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from benchmarks.load import batching
from tests.support.peers import require_peer
from tests.support.triton import triton_env

# perf_analyzer 2.41's -f report of one concurrency (a run against `oipcodec serve`).
REPORT = (
    "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
    "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,"
    "p90 latency,p95 latency,p99 latency\n"
    "2,895.826,56,1780,0,104,207,79,0,854,5571,9263,17498\n"
)


def test_report_figures_are_read_by_column_name() -> None:
    figures = batching.parse_report(REPORT)
    assert figures == {"throughput": 895.826, "p50_us": 854, "p90_us": 5571, "p99_us": 17498}


def test_a_report_without_exactly_one_row_is_refused() -> None:
    with pytest.raises(ValueError, match="one row"):
        batching.parse_report(REPORT.splitlines()[0] + "\n")


def _row(server: str, protocol: str, c: int, throughput: float) -> batching.Row:
    return batching.Row(server, protocol, c, throughput, 1.0, 2.0, 3.0)


def test_ratios_compare_batching_with_each_server_at_one_concurrency() -> None:
    rows = [
        _row("oipcodec", "grpc", 32, 100),
        _row("oipcodec-batching", "grpc", 32, 600),
        _row("triton", "grpc", 32, 300),
        _row("mlserver", "grpc", 32, 200),
        _row("oipcodec-batching", "grpc", 1, 50),
        _row("oipcodec-batching", "http", 32, 400),
        _row("triton", "http", 32, 800),
    ]
    assert batching.ratios(rows, 32) == {
        "grpc": {"oipcodec": 6.0, "triton": 2.0, "mlserver": 3.0},
        "http": {"triton": 0.5},
    }
    text = batching.table(rows, ["oipcodec", "oipcodec-batching", "triton", "mlserver"])
    grpc_32 = next(line for line in text.splitlines() if line.startswith("grpc") and " 32 " in line)
    assert grpc_32.split() == ["grpc", "32", "100", "3.0", "600", "3.0", "300", "3.0", "200", "3.0"]
    http_32 = next(line for line in text.splitlines() if line.startswith("http"))
    assert http_32.split() == ["http", "32", "-", "400", "3.0", "800", "3.0", "-"]


def test_configurations_say_the_same_batching_to_both_servers() -> None:
    ours = batching.config_pbtxt(64, 1000, triton=False)
    triton = batching.config_pbtxt(64, 1000, triton=True)
    assert "dynamic_batching { max_queue_delay_microseconds: 1000 }" in ours
    assert ours.splitlines()[1:] == [line for line in triton.splitlines()[1:] if
                                     "backend" not in line and "instance_group" not in line]  # fmt: skip
    assert "dynamic_batching" not in batching.config_pbtxt(64, None, triton=False)


def test_weights_are_the_same_integers_on_every_numpy() -> None:
    w = batching.weights()
    assert w.shape == (batching.WIDTH, batching.WIDTH) and w.dtype == np.float32
    assert w[0, 0] == np.float32(-48 / 97) and w[1, 2] == np.float32((31 + 34) % 97 - 48) / 97


def test_oipcodec_model_answers_the_product(tmp_path: Path) -> None:
    """Both oipcodec servers of the benchmark start from the repository the script writes and
    answer numpy's product (the check every server passes before it is measured)."""
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    args = batching.parse_args(["--quick"])
    for name in ("oipcodec", "oipcodec-batching"):
        with batching.serve(name, tmp_path, args) as server:
            batching.check_answer(server)


def test_check_answer_refuses_a_server_that_computes_something_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    args = batching.parse_args(["--quick"])
    wrong = batching.OIPCODEC_MODEL.replace('inputs["INPUT0"] @ self.weights', 'inputs["INPUT0"]')
    assert wrong != batching.OIPCODEC_MODEL
    monkeypatch.setattr(batching, "OIPCODEC_MODEL", wrong)
    with (
        batching.serve("oipcodec", tmp_path, args) as server,
        pytest.raises(RuntimeError, match="different product"),
    ):
        batching.check_answer(server)


def test_quick_run_against_the_real_triton_server(tmp_path: Path) -> None:
    """perf_analyzer drives both servers over gRPC and HTTP; each reports the batching its
    configuration asked for."""
    require_peer("tritonclient.http")
    triton_env()  # skips (or fails, when required) without the Triton environment
    home = os.environ["OIPCODEC_TRITON_HOME"]
    out = tmp_path / "figures.json"
    command = ["--quick", "--servers", "oipcodec-batching,triton", "--concurrency", "2"]
    assert (
        batching.main([*command, "--delay-us", "500", "--triton-home", home, "--json", str(out)])
        == 0
    )
    figures = json.loads(out.read_text())
    servers = ("oipcodec-batching", "triton")
    measured = {(r["server"], r["protocol"]) for r in figures["rows"] if r["throughput"] > 0}
    assert measured == {(s, p) for s in servers for p in ("grpc", "http")}
    for server in servers:
        assert json.loads(figures["batching"][server])["max_queue_delay_microseconds"] == 500
    assert set(figures["model_ms_per_call"]) == {"1", "8", "32", "64"}


def test_a_cost_per_call_is_written_into_every_server_model() -> None:
    args = batching.parse_args(["--per-call-ms", "2.5"])
    for template in (batching.OIPCODEC_MODEL, batching.TRITON_MODEL, batching.MLSERVER_MODEL):
        source = batching.model_source(template, args)
        assert "PER_CALL_SECONDS = 0.0025\n" in source and "per_call()\n" in source
        compile(source, "model.py", "exec")
    plain = batching.model_source(batching.OIPCODEC_MODEL, batching.parse_args([]))
    assert "PER_CALL_SECONDS = 0.0\n" in plain
