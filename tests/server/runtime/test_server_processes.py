"""The parent of ``oipcodec serve --workers N``: SIGTERM stops every process; a worker that
dies stops the others (exit status 1); a killed parent's workers stop by themselves.

Its SIGINT/SIGTERM handler runs on the main thread at whatever step the wait is in, so it must
take no lock there. A ``threading.Event`` set from the handler deadlocked once in CI: the
test's SIGTERM landed while ``Event.wait`` held the event's lock, and the parent never stopped
its workers."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import orjson
import pytest

from tests.support.ports import free_port
from tests.support.serve_process import serve_checkout

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork and POSIX signals")

# ServerProcesses whose one "worker" is a forked sender of SIGTERMs, as fast as it can for
# SECONDS: each signal ends a wait (0), which starts again; the sender's exit ends the last one
# (1), as a worker's does.
SIGNALLED = """
import multiprocessing, os, signal, time
from oipcodec.server.config import ServerConfig
from oipcodec.server.runtime.entry import _noting_signals
from oipcodec.server.runtime.processes import ServerProcesses

SECONDS = {seconds}


def send(parent):
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        os.kill(parent, signal.SIGTERM)


pool = ServerProcesses(None, ServerConfig(workers=2))
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # what the handlers go back to: late ones ignored
sender = multiprocessing.get_context("fork").Process(target=send, args=(os.getpid(),))
waits = heard = 0
with _noting_signals() as signals:
    sender.start()
    pool.processes = [sender]
    while pool.wait(signals) == 0:
        heard += len(signals)
        signals.clear()
        waits += 1
sender.join()
print(waits, heard)
"""


def test_a_stream_of_sigterms_never_deadlocks_the_parent_s_wait() -> None:
    seconds = 3
    try:
        done = subprocess.run(
            [sys.executable, "-c", SIGNALLED.format(seconds=seconds)],
            capture_output=True,
            text=True,
            timeout=60 + seconds,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the parent's wait hung under SIGTERMs (a handler blocked): {exc.stderr!r}")
    assert done.returncode == 0, done.stderr
    waits, heard = map(int, done.stdout.split())
    # Each wait ended by a signal the handler noted (a wait looks again every 0.1 s): the stream
    # reached the handler throughout.
    assert heard >= waits >= 10, done.stdout


# ------------------------------------------------------------------------------ the command


def _workers(port: int) -> set[int]:
    """The process ids of both workers, from the ``pid`` model's answers (new connections are
    spread over the processes by the kernel, once both listen)."""
    body = orjson.dumps({"inputs": [{"name": "A", "shape": [1], "datatype": "INT8", "data": [1]}]})
    pids: set[int] = set()
    deadline = time.monotonic() + 30
    while len(pids) < 2 and time.monotonic() < deadline:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("POST", "/v2/models/pid/infer", body)
            pids.add(int(orjson.loads(conn.getresponse().read())["outputs"][0]["data"][0]))
        finally:
            conn.close()
    assert len(pids) == 2
    return pids


@pytest.fixture
def two_workers() -> Iterator[tuple[subprocess.Popen[str], set[int]]]:
    """``oipcodec serve --workers 2`` with the test models, and its workers' process ids."""
    port = free_port()
    args = ["--http-port", str(port), "--grpc-port", "-1", "--workers", "2"]
    args += ["--model-module", "tests.support.server_models"]
    with serve_checkout(*args, ready_port=port) as process:
        yield process, _workers(port)


def test_sigterm_stops_every_process(two_workers: tuple[subprocess.Popen[str], set[int]]) -> None:
    process, _ = two_workers
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert output.count("oipcodec server stopped") == 2
    # A model whose load fails is logged with its traceback, once per process.
    assert output.count("loading model 'broken_load' version 1 failed") == 2


def test_a_worker_that_dies_stops_the_others(
    two_workers: tuple[subprocess.Popen[str], set[int]],
) -> None:
    process, pids = two_workers
    os.kill(min(pids), signal.SIGKILL)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 1, output
    assert "a server process exited; stopping the others" in output
    assert f"oipcodec server stopped (pid {max(pids)})" in output, output


def test_the_workers_of_a_killed_parent_stop(
    two_workers: tuple[subprocess.Popen[str], set[int]],
) -> None:
    """Each worker hears its parent's end on the pipe they share and stops as on SIGTERM; the
    output ends (every writer closed it) only once both did."""
    process, pids = two_workers
    process.kill()
    output, _ = process.communicate(timeout=60)
    for pid in pids:
        assert f"oipcodec server stopped (pid {pid})" in output, output
