"""The parent of ``oipcodec serve --workers N`` under signals: its SIGINT/SIGTERM handler runs
on the main thread at whatever step the wait is in, so it must take no lock there. A
``threading.Event`` set from the handler deadlocked once in CI: the test's SIGTERM landed while
``Event.wait`` held the event's lock, and the parent never stopped its workers."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork and POSIX signals")

# ServerProcesses with no process started: its wait() can only end by a signal. A forked child
# sends SIGTERM as fast as it can for SECONDS; the parent waits again after each one.
SIGNALLED = """
import os, signal, sys, time
from oipcodec.server.config import ServerConfig
from oipcodec.server.runtime.entry import _noting_signals
from oipcodec.server.runtime.processes import ServerProcesses

SECONDS = {seconds}
pool = ServerProcesses(None, ServerConfig(workers=2))
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # what the handlers go back to: late ones ignored
parent = os.getpid()
sender = os.fork()
if sender == 0:
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        os.kill(parent, signal.SIGTERM)
    os._exit(0)
waits = heard = 0
with _noting_signals() as signals:
    while os.waitpid(sender, os.WNOHANG) == (0, 0):
        assert pool.wait(signals) == 0
        heard += len(signals)
        signals.clear()
        waits += 1
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
