"""`oipcodec bench --url / --grpc-target` pointed at a real, stock MLServer (an identity model
that never imports oipcodec, tests/support/mlserver_models_stock.py): every path MLServer takes
is measured end to end, MLServer's own codec rows among them; each path it lacks (the binary
tensor data extension, shared memory, the v1 API, GraphPipe) is a single "not supported" row
with the reason, never an error. Runs in MLServer's own environment (.ci/run's MLServer stage)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from oipcodec import cli
from tests.support.peers import require_peer

require_peer("mlserver")

from tests.compat.test_compat_mlserver import _mlserver  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    models = {
        "identity": {"implementation": "mlserver_models_stock.Identity"},
        "codec_identity": {"implementation": "mlserver_models_stock.CodecIdentity"},
    }
    yield from _mlserver(tmp_path_factory.mktemp("mlserver_bench"), models)


def test_bench_against_mlserver(server: dict[str, str], tmp_path: Path) -> None:
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = cli.main(
            ["bench", "--url", f"http://{server['http']}", "--grpc-target", server["grpc"],
             "--payload", "small,strings", "--implementation", "native,mlserver",
             "--concurrency", "2", "--duration", "0.2", "--no-chart",
             "--output-dir", str(tmp_path)]
        )  # fmt: skip
    print(table.getvalue())
    assert status == 0
    assert "error:" not in table.getvalue()
    results = json.loads((tmp_path / "results.json").read_text())
    rows = {(r["payload"], r["path"], r["implementation"]): r for r in results["results"]}
    for payload in ("small", "strings"):
        for path in ("rest-binary", "shm", "v1-http-raw", "v1-grpc", "graphpipe"):
            reason = rows[(payload, path, "native")]["unsupported"]
            assert reason.startswith("not supported by this server"), reason
        for path in ("rest-json", "grpc-raw", "grpc-typed"):
            for implementation in ("native", "mlserver"):
                record = rows[(payload, path, implementation)]
                assert record["error"] is None and record["load"][0]["rps"] > 0, record


def test_an_identity_that_names_its_output_as_mlserver_does(
    server: dict[str, str], tmp_path: Path
) -> None:
    """NumpyRequestCodec answers the input back as ``output-0``: measured, not an error."""
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = cli.main(
            ["bench", "--url", f"http://{server['http']}", "--grpc-target", server["grpc"],
             "--model", "codec_identity", "--payload", "small", "--path", "rest-json,grpc-raw",
             "--implementation", "native", "--concurrency", "2", "--duration",
             "0.2", "--no-chart", "--output-dir", str(tmp_path)]
        )  # fmt: skip
    assert status == 0
    assert "error:" not in table.getvalue(), table.getvalue()
    results = json.loads((tmp_path / "results.json").read_text())
    for record in results["results"]:
        assert record["error"] is None and record["load"][0]["rps"] > 0, record
        assert not record["load"][0].get("errors"), record
