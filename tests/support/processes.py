"""A server a test runs as a process of its own: started, waited for (bounded), always stopped."""

from __future__ import annotations

import contextlib
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def http_status(url: str) -> int | None:
    """The status of ``GET url`` (2 s at most), or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return None


@contextlib.contextmanager
def running(
    command: list[str],
    ready: Callable[[], bool],
    log_path: Path,
    *,
    startup_seconds: float = 60,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` running, its output in ``log_path``, once ``ready()`` is true (polled every
    0.1 s; if the process exits or ``startup_seconds`` pass first, the test fails with the end
    of the log). Terminated on exit, killed if it has not stopped 20 s later."""
    log = log_path.open("wb")
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + startup_seconds
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail(
                    f"{Path(command[0]).name} {' '.join(command[1:3])} did not start "
                    f"(exit code {process.poll()}):\n"
                    + log_path.read_text(errors="replace")[-4000:]
                )
            time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()
