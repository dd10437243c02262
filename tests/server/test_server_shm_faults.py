"""Shared memory that used to kill a process: sparse objects on a full /dev/shm, an object
truncated while it is read, a hostile server truncating a client's region (issue 35, item 1),
registrations exhausting the server's descriptors (item 3).

Each scenario runs tests/support/shm_faults.py in a private mount namespace (``unshare -rm``)
with a 1 MiB tmpfs on /dev/shm, so filling it never touches the host's /dev/shm; the server is
a real one on 127.0.0.1 started inside. Skipped where unshare is not permitted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the server extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
_MOUNT = "mount -t tmpfs -o size=1m tmpfs /dev/shm"


def _namespace_ok() -> str | None:
    """Why the private namespace cannot be made here, or None."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return "needs Linux and unshare(1)"
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", _MOUNT], capture_output=True, text=True, timeout=30
    )
    if probe.returncode != 0:
        return f"unshare -rm with a tmpfs is not permitted here: {probe.stderr.strip()}"
    return None


_WHY = _namespace_ok()
needs_namespace = pytest.mark.skipif(_WHY is not None, reason=_WHY or "")


def _run(scenario: str) -> dict[str, Any]:
    """The scenario's JSON report; a process killed by a signal fails the test, naming it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH", "")])
    script = f'{_MOUNT} && exec "$0" -m tests.support.shm_faults "$1"'
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, sys.executable, scenario],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, (
        f"{scenario}: exit status {done.returncode} (negative: killed by that signal)\n"
        f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )
    result: dict[str, Any] = json.loads(lines[-1])
    return result


@needs_namespace
def test_sparse_output_region_on_a_full_dev_shm() -> None:
    """An output region in an object of pages /dev/shm cannot back: a 400 naming the
    region, and the server lives (it died of SIGBUS)."""
    result = _run("sparse-output")
    assert result["register"] == 200
    assert result["alive"], result
    assert result["status"] == 400, result
    message = result["answer"]["error"]
    assert "shared memory region 'sparse'" in message and "No space left" in message


@needs_namespace
def test_sparse_input_region_answered_as_json() -> None:
    """An input in an object never written, answered as JSON: its bytes read as zeros, no
    page is made, and the server lives."""
    result = _run("sparse-input")
    assert result["register"] == 200
    assert result["alive"], result
    assert result["status"] == 200 and result["sum"] == 0, result


@needs_namespace
def test_object_truncated_while_the_server_reads_it() -> None:
    """Another thread shrinks and regrows the input object for 2 s: each request is answered
    200 or 400, and the server lives."""
    result = _run("truncate-race")
    statuses = result["statuses"]
    assert result["alive"], result
    assert set(statuses) <= {"200", "400"}, statuses
    assert sum(statuses.values()) >= 5, statuses


@needs_namespace
def test_client_reads_an_output_the_server_truncated() -> None:
    """A hostile server truncates the client's output region before answering: the client
    raises DecodeError naming the region instead of dying of SIGBUS."""
    result = _run("client-truncated")
    assert result["alive"]
    assert result["error"].startswith("DecodeError"), result
    assert "'out'" in result["error"] and "shrunk" in result["error"], result


@needs_namespace
def test_registrations_cannot_exhaust_descriptors() -> None:
    """600 registrations under a 1024-descriptor limit: 256 (the default cap) succeed, the
    rest are refused with a 400 naming the cap, and the server still takes new connections
    and answers an inference (two descriptors a region, uncapped, exhausted it at ~500)."""
    result = _run("many-regions")
    assert result["alive"], result
    assert result["statuses"] == {"200": 256, "400": 344}, result
    assert "(--max-shm-regions)" in result["first_refusal"]
    assert result["infer"] == 200
