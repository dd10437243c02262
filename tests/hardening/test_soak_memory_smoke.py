"""benchmarks/load/soak_memory.py, shortened: the script runs, every kind of its traffic
(the v1 classes, GraphPipe, shared-memory churn and repository reloads among them) is sent and
answered as it should be, no 5xx, and the POSIX objects it made are gone afterwards. The
2-minute run and its RSS series are in docs/measurements.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the server extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
NEW_KINDS = ("v1-classes", "v1-wide-classes", "graphpipe", "graphpipe-twice", "shm-churn", "reload")


def _objects() -> set[str]:
    shm = Path("/dev/shm")
    return (
        {p.name for p in shm.iterdir() if p.name.startswith("oipcodec-")} if shm.exists() else set()
    )


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
def test_soak_memory_smoke(tmp_path: Path) -> None:
    before = _objects()
    figures_path = tmp_path / "soak.json"
    command = [
        sys.executable, str(ROOT / "benchmarks/load/soak_memory.py"), "--seconds", "8",
        "--warmup", "3", "--interval", "2", "--clients", "2", "--rss-bound", "400",
        "--json", str(figures_path),
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=180, env=dict(os.environ), cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = json.loads(figures_path.read_text())
    assert figures["responses_5xx"] == 0 and figures["problems"] == []
    answered = {key.rsplit(" ", 1)[0] for key in figures["tally"] if key.endswith(" 2xx")}
    assert set(NEW_KINDS) <= answered, figures["tally"]
    assert _objects() <= before  # every region the soak made is unlinked
