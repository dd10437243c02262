"""`oipcodec bench --url / --grpc-target` pointed at a stock KServe ModelServer (an identity
model written with KServe's public API, tests/support/kserve_models_stock.py): every path
KServe takes is measured end to end, each one it lacks (shared memory, the v1 API, GraphPipe,
compressed bodies) is a single "not supported" row with the reason, never an error."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from oipcodec import cli
from tests.support.kserve_process import run_kserve
from tests.support.peers import require_kserve

require_kserve()

HELPER = Path(__file__).resolve().parents[1] / "support" / "kserve_models_stock.py"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    yield from run_kserve(HELPER, "identity", tmp_path_factory.mktemp("kserve"))


def test_bench_against_kserve(server: dict[str, str], tmp_path: Path) -> None:
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = cli.main(
            ["bench", "--url", f"http://{server['http']}", "--grpc-target", server["grpc"],
             "--payload", "small,strings", "--implementation", "native,tritonclient,kserve",
             "--concurrency", "2", "--duration", "0.2", "--no-chart",
             "--output-dir", str(tmp_path)]
        )  # fmt: skip
    print(table.getvalue())
    assert status == 0
    assert "error:" not in table.getvalue()
    results = json.loads((tmp_path / "results.json").read_text())
    rows = {(r["payload"], r["path"], r["implementation"]): r for r in results["results"]}
    for payload in ("small", "strings"):
        for path in ("shm", "v1-http-raw", "v1-grpc", "graphpipe"):
            reason = rows[(payload, path, "native")]["unsupported"]
            assert reason.startswith("not supported by this server"), reason
        for path in ("rest-json", "rest-binary", "grpc-raw", "grpc-typed"):
            for implementation in ("native", "kserve"):
                record = rows[(payload, path, implementation)]
                assert record["error"] is None and record["load"][0]["rps"] > 0, record


def test_bench_streaming_against_kserve(server: dict[str, str], tmp_path: Path) -> None:
    """KServe has neither generate_stream nor ModelStreamInfer: a row each saying so, exit 0."""
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = cli.main(
            ["bench", "--streaming", "--model", "identity", "--url", f"http://{server['http']}",
             "--grpc-target", server["grpc"], "--concurrency", "1", "--duration", "0.05",
             "--no-chart", "--output-dir", str(tmp_path)]
        )  # fmt: skip
    print(table.getvalue())
    assert status == 0
    results = json.loads((tmp_path / "results.json").read_text())
    rows = {r["path"]: r for r in results["results"]}
    assert "generate_stream route" in rows["rest-sse"]["unsupported"]
    assert "ModelStreamInfer" in rows["grpc-stream"]["unsupported"]
    assert all(r["error"] is None and not r["load"] for r in rows.values())
    assert "not supported by this server" in table.getvalue()
