"""`oipcodec bench` pointed at the real Triton server (an identity model in its Python
backend): every path that server takes is measured, with the server's own breakdown of each
window; the paths it lacks (the v1 API, GraphPipe) are one "not supported" row each, with
the reason; shared memory works (no output asks for a region and binary data at once)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec import cli
from oipcodec.bench.serverstats import breakdown, snapshot
from tests.support.peers import require_peer
from tests.support.triton import Triton, identity_repository, tritonserver


@pytest.fixture(scope="module")
def triton(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Triton]:
    require_peer("tritonclient.http")
    root = tmp_path_factory.mktemp("triton")
    repository = identity_repository(root / "repo", "TYPE_FP32")
    with tritonserver(repository, root / "triton.log") as server:
        yield server


def _bench(tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = cli.main(["bench", *args, "--concurrency", "2", "--duration", "0.2",
                           "--no-chart", "--output-dir", str(tmp_path)])  # fmt: skip
    assert status == 0, table.getvalue()
    return json.loads((tmp_path / "results.json").read_text()), table.getvalue()


def test_statistics_of_the_real_triton_server(triton: Triton) -> None:
    """serverstats reads Triton's statistics over REST and gRPC alike, and a window of known
    requests comes out with its count and every stage of perf_analyzer's breakdown."""
    from oipcodec.client import HttpClient

    url = f"http://{triton.http}"
    before = snapshot(url, "identity")
    assert snapshot(triton.grpc, "identity") == before
    with HttpClient(url) as client:
        for _ in range(5):
            client.infer("identity", {"INPUT0": np.arange(8, dtype=np.float32)})
    got = breakdown(before, snapshot(triton.grpc, "identity"))
    assert got["Request count"] == 5 and got["Execution count"] == 5
    assert got["Server Compute Infer"] > 0 and got["Avg request latency"] > 0


def test_bench_against_the_real_triton_server(triton: Triton, tmp_path: Path) -> None:
    results, table = _bench(
        tmp_path, "--url", f"http://{triton.http}", "--grpc-target", triton.grpc,
        "--model", "identity", "--shape", "INPUT0:64", "--implementation",
        "native,tritonclient",
    )  # fmt: skip
    print(table)
    rows = {(r["path"], r["implementation"]): r for r in results["results"]}
    assert "error:" not in table
    for path in ("v1-http-raw", "v1-grpc", "graphpipe"):
        reason = rows[(path, "native")]["unsupported"]
        assert reason.startswith("not supported by this server"), reason
    measured = [r for r in results["results"] if not r.get("unsupported")]
    assert {r["path"] for r in measured} >= {
        "rest-json", "rest-json-nested", "rest-binary", "rest-binary-gzip", "grpc-raw",
        "grpc-typed", "shm",
    }  # fmt: skip
    for record in measured:
        assert record["error"] is None, record
        (window,) = record["load"]
        assert window["rps"] > 0 and not window.get("errors"), record
        assert window["server"]["Request count"] >= window["requests"]


def test_bench_streaming_against_the_real_triton_server(tmp_path: Path) -> None:
    """The real Triton server's decoupled square_int32 (Python backend, response sender):
    both routes measured, each stream its n responses."""
    from tests.support.triton import square_int32_repository

    require_peer("tritonclient.http")
    repository = square_int32_repository(tmp_path / "repo")
    with tritonserver(repository, tmp_path / "triton.log") as server:
        results, table = _bench(
            tmp_path, "--streaming", "--stream-responses", "4", "--url",
            f"http://{server.http}", "--grpc-target", server.grpc,
        )  # fmt: skip
    print(table)
    rows = {r["path"]: r for r in results["results"]}
    assert set(rows) == {"rest-sse", "grpc-stream"}
    for record in rows.values():
        assert record["error"] is None and "unsupported" not in record, record
        (entry,) = record["load"]
        assert entry["streams"] > 0 and entry["min_responses"] == entry["max_responses"] == 4
        assert entry["ttft_p50_ms"] <= entry["stream_p50_ms"]
