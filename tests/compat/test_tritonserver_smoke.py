"""The real Triton server runs here: a BYTES identity model in its Python backend answers the
real tritonclient, and perf_analyzer measures it (the environment the Triton tests share)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.peers import require_peer
from tests.support.triton import identity_repository, perf_analyzer, tritonserver


def test_python_backend_answers_tritonclient_and_perf_analyzer(tmp_path: Path) -> None:
    http = require_peer("tritonclient.http")
    repository = identity_repository(tmp_path / "repo", "TYPE_STRING")
    with tritonserver(repository, tmp_path / "triton.log") as triton:
        client = http.InferenceServerClient(triton.http)
        sent = np.array([b"", b"a\x00b", b"\xff\xfe", b"x" * 64], dtype=object)
        tensor = http.InferInput("INPUT0", [4], "BYTES")
        tensor.set_data_from_numpy(sent)
        got = client.infer("identity", [tensor]).as_numpy("OUTPUT0")
        assert got.tolist() == sent.tolist()
        # A smoke test of the tool, not a measurement: any stability will do.
        report = perf_analyzer(
            [
                "-m",
                "identity",
                "-u",
                triton.http,
                "--shape",
                "INPUT0:16",
                "--measurement-mode",
                "count_windows",
                "--measurement-request-count",
                "50",
                "--stability-percentage",
                "1000",
                "--concurrency-range",
                "1",
            ]
        )
        assert "Concurrency: 1, throughput:" in report, report
