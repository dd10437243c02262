"""Run the ``oipcodec serve`` command (the console script as installed, else ``python -m
oipcodec``) as a process of its own for a test module, on free 127.0.0.1 ports, and always stop
it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_ports

STARTUP_SECONDS = 60


def serve_command() -> list[str]:
    """``oipcodec`` as installed next to this interpreter, else the module."""
    script = shutil.which("oipcodec", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "oipcodec"]


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return None


def run_serve(log_dir: Path, *args: str) -> Iterator[dict[str, str]]:
    """``oipcodec serve ARGS`` (the demo models unless ARGS say otherwise) with free REST and
    gRPC ports and no metrics port, until ``v2/health/ready`` answers 200 (at most 60 s, else
    the test fails with the end of its log); yields ``{"http": host:port, "grpc": host:port}``,
    then terminates it (killed after 20 s)."""
    http_port, grpc_port = free_ports(2)
    log_path = log_dir / "serve.log"
    log = log_path.open("wb")
    command = [*serve_command(), "serve", "--http-port", str(http_port),
               "--grpc-port", str(grpc_port), "--no-metrics", *args]  # fmt: skip
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    http = f"127.0.0.1:{http_port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while _status(f"http://{http}/v2/health/ready") != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail(f"oipcodec serve did not start:\n{log_path.read_text()[-4000:]}")
            time.sleep(0.1)
        yield {"http": http, "grpc": f"127.0.0.1:{grpc_port}"}
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()
