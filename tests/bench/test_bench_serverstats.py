"""The server-side breakdown of `oipcodec bench` (oipcodec.bench.serverstats): perf_analyzer's
arithmetic on two readings of the statistics extension, read over REST and gRPC from our
server, and the breakdown in a bench run's results.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oipcodec import cli
from oipcodec.bench.serverstats import (
    COLUMNS,
    Snapshot,
    breakdown,
    from_statistics,
    offers_statistics,
    reader,
    snapshot,
)

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")


def _reading(success: tuple[int, int], **stages: tuple[int, int]) -> Snapshot:
    counts = {"success": success[0], **{name: value[0] for name, value in stages.items()}}
    ns = {"success": success[1], **{name: value[1] for name, value in stages.items()}}
    return Snapshot("m", counts, ns, inference_count=counts["success"] * 2,
                    execution_count=counts["success"])  # fmt: skip


def test_breakdown_is_perf_analyzers_arithmetic() -> None:
    """Each stage: its nanoseconds' delta over its count's delta, in microseconds; overhead:
    what the request latency holds beyond queue and compute."""
    before = _reading((10, 1_000_000), queue=(10, 100_000), compute_input=(10, 50_000),
                      compute_infer=(10, 500_000), compute_output=(10, 50_000))  # fmt: skip
    after = _reading((110, 31_000_000), queue=(110, 10_100_000), compute_input=(110, 1_050_000),
                     compute_infer=(110, 15_500_000), compute_output=(110, 2_050_000))  # fmt: skip
    got = breakdown(before, after)
    assert got == {
        "Request count": 100,
        "Inference count": 200,
        "Execution count": 100,
        "Avg request latency": 300.0,
        "Server Queue": 100.0,
        "Server Compute Input": 10.0,
        "Server Compute Infer": 150.0,
        "Server Compute Output": 20.0,
        "Server Overhead": 20.0,
    }
    assert breakdown(after, after) == {"Request count": 0}
    with pytest.raises(ValueError, match="two models"):
        breakdown(before, Snapshot("other"))


def test_from_statistics_sums_versions_and_reads_missing_figures_as_zero() -> None:
    document = {
        "model_stats": [
            {"name": "m", "version": "1", "inference_count": 3, "execution_count": 3,
             "inference_stats": {"success": {"count": 3, "ns": 30}, "queue": {"count": 3}}},
            {"name": "m", "version": "2", "inference_count": "4",
             "inference_stats": {"success": {"count": "4", "ns": "40"}}},
            {"name": "other", "inference_count": 100},
        ]
    }  # fmt: skip
    got = from_statistics(document, "m")
    assert got.counts["success"] == 7 and got.ns["success"] == 70
    assert got.counts["queue"] == 3 and got.ns["queue"] == 0
    assert (got.inference_count, got.execution_count) == (7, 3)
    assert offers_statistics({"extensions": ["binary_tensor_data", "statistics"]})
    assert not offers_statistics({"extensions": []}) and not offers_statistics({})


def test_our_server_over_rest_and_grpc() -> None:
    """Readings of our server around a known number of requests: the window holds exactly
    them, every stage is accounted, REST and gRPC read the same figures."""
    from oipcodec.client import GrpcClient, HttpClient
    from oipcodec.testing import background

    with background(grpc_port=0, log_level="warning") as server:
        url, target = server.http_url, server.grpc_address
        with HttpClient(url) as http, GrpcClient(target) as grpc:
            before = snapshot(url, "identity")
            assert snapshot(target, "identity") == before
            for _ in range(7):
                http.infer("identity", {"INPUT0": np.arange(16, dtype=np.float32)})
                grpc.infer("identity", {"INPUT0": np.arange(16, dtype=np.float32)})
            after = snapshot(grpc, "identity")
            assert snapshot(http, "identity") == after
            got = breakdown(before, after)
            assert got["Request count"] == 14 and got["Inference count"] == 14
            assert got["Avg request latency"] > 0
            assert all(got[column] >= 0 for column in COLUMNS.values())
            assert got["Server Compute Infer"] > 0
            assert reader(http, "identity") is not None
            assert reader(http, "no_such_model") is None


def test_bench_records_the_breakdown(tmp_path: Path) -> None:
    """Each load window of a bench run against our server carries the breakdown, its request
    count that of the window (the v1 path: of the typed identity model it sends to)."""
    status = cli.main(
        ["bench", "--quick", "--implementation", "native", "--payload", "small", "--path",
         "rest-binary,grpc-raw,v1-http-raw", "--concurrency", "2", "--duration", "0.1",
         "--no-chart", "--output-dir", str(tmp_path)]
    )  # fmt: skip
    assert status == 0
    results = json.loads((tmp_path / "results.json").read_text())
    for record in results["results"]:
        (window,) = record["load"]
        server = window["server"]
        assert server["Request count"] >= window["requests"] > 0, record["path"]
        assert server["Server Compute Infer"] > 0
