"""Run the ``oipcodec serve`` command (the console script as installed, else ``python -m
oipcodec``) as a process of its own for a test module, on free 127.0.0.1 ports, and always stop
it."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.support.ports import free_ports
from tests.support.processes import http_status, running


def serve_command() -> list[str]:
    """``oipcodec`` as installed next to this interpreter, else the module."""
    script = shutil.which("oipcodec", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "oipcodec"]


def run_serve(log_dir: Path, *args: str) -> Iterator[dict[str, str]]:
    """``oipcodec serve ARGS`` (the demo models unless ARGS say otherwise) with free REST and
    gRPC ports and no metrics port, until ``v2/health/ready`` answers 200 (at most 60 s);
    yields ``{"http": host:port, "grpc": host:port}``, then stops it."""
    http_port, grpc_port = free_ports(2)
    command = [*serve_command(), "serve", "--http-port", str(http_port),
               "--grpc-port", str(grpc_port), "--no-metrics", *args]  # fmt: skip
    http = f"127.0.0.1:{http_port}"

    def ready() -> bool:
        return http_status(f"http://{http}/v2/health/ready") == 200

    with running(command, ready, log_dir / "serve.log"):
        yield {"http": http, "grpc": f"127.0.0.1:{grpc_port}"}


@contextlib.contextmanager
def serve_process(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """``python -m oipcodec serve ARGS`` as it is, for tests that read what it prints (stdout and
    stderr together, as text) or how it exits; killed on the way out if still running."""
    process = subprocess.Popen(
        [sys.executable, "-m", "oipcodec", "serve", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)
