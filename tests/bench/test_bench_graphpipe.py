"""`oipcodec bench` on the ``graphpipe`` path: oipcodec's GraphPipe client and codec end to end
against the embedded server, and GraphPipe's own client where it is installed."""

from __future__ import annotations

import json
from pathlib import Path

from oipcodec import cli
from oipcodec.bench import PATHS, PAYLOADS
from oipcodec.bench.paths import codec_ops, peer_available, supported
from oipcodec.bench.payloads import make_tensor
from oipcodec.bench.workload import echo_workload


def test_which_implementations_take_the_graphpipe_path() -> None:
    path = PATHS["graphpipe"]
    assert supported("native", path, "FP32") is None and supported("pure", path, "BYTES") is None
    assert supported("graphpipe", path, "INT64") is None
    assert supported("native", path, "BF16") == "GraphPipe has no BF16 type"
    assert supported("native", path, "BOOL") == "GraphPipe has no BOOL type"
    for peer in ("tritonclient", "kserve", "mlserver"):
        assert supported(peer, path, "FP32") == f"{peer} has no such path"
    assert supported("graphpipe", PATHS["rest-binary"], "FP32") == "graphpipe has no such path"


def test_codec_ops_round_trip() -> None:
    for name in ("small", "strings"):
        tensor = make_tensor(PAYLOADS[name])
        ops = codec_ops("native", PATHS["graphpipe"], echo_workload(PAYLOADS[name], "identity"))
        assert ops.server_decode is not None and ops.client_decode is not None
        (got,) = ops.server_decode().inputs
        assert got.data.tolist() == tensor.data.tolist()
        assert ops.client_decode().outputs[0].tolist() == tensor.data.tolist()
        assert ops.request_bytes > 0 and ops.response_bytes > 0


def test_quick_run_on_the_graphpipe_path(tmp_path: Path) -> None:
    implementations = ["native"] + (["graphpipe"] if peer_available("graphpipe") else [])
    status = cli.main(
        ["bench", "--quick", "--payload", "small", "--payload", "strings", "--path", "graphpipe",
         "--path", "rest-binary", "--concurrency", "1", "--no-chart", "--output-dir",
         str(tmp_path), *[a for i in implementations for a in ("--implementation", i)]]
    )  # fmt: skip
    assert status == 0
    records = json.loads((tmp_path / "results.json").read_text())["results"]
    ours = [r for r in records if r["path"] == "graphpipe" and r["implementation"] == "native"]
    assert len(ours) == 2
    for record in ours:
        assert record["error"] is None, record
        assert record["load"] and record["codec_us"]["server_decode"] > 0
