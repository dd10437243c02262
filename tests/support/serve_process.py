"""Run the ``oipcodec serve`` command (the console script as installed, else ``python -m
oipcodec``) as a process of its own for a test module, on free 127.0.0.1 ports, and always stop
it."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from tests.support.ports import free_ports
from tests.support.processes import http_status, running


def serve_command() -> list[str]:
    """``oipcodec`` as installed next to this interpreter, else the module."""
    script = shutil.which("oipcodec", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "oipcodec"]


def run_serve(log_dir: Path, *args: str, statistics: bool = False) -> Iterator[dict[str, str]]:
    """``oipcodec serve ARGS`` (the demo models unless ARGS say otherwise) with free REST and
    gRPC ports and no metrics port (nor inference statistics, unless ``statistics``: the
    clients that ask for them, as perf_analyzer does), until ``v2/health/ready`` answers 200
    (at most 60 s); yields ``{"http": host:port, "grpc": host:port}``, then stops it. The
    gRPC server is ``OIPCODEC_TEST_GRPC_IMPL``'s when set and ARGS choose none
    (tests/conftest.py)."""
    http_port, grpc_port = free_ports(2)
    command = [*serve_command(), "serve", "--http-port", str(http_port),
               "--grpc-port", str(grpc_port), *args]  # fmt: skip
    impl = os.environ.get("OIPCODEC_TEST_GRPC_IMPL")
    if impl and "--grpc-impl" not in args:
        command += ["--grpc-impl", impl]
    if not statistics:
        command.append("--no-metrics")
    http = f"127.0.0.1:{http_port}"

    def ready() -> bool:
        return http_status(f"http://{http}/v2/health/ready") == 200

    with running(command, ready, log_dir / "serve.log"):
        yield {"http": http, "grpc": f"127.0.0.1:{grpc_port}"}


@contextlib.contextmanager
def serve_process(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    program: Sequence[str] | None = None,
    ready: Callable[[], bool] | None = None,
    log: Path | None = None,
    startup_seconds: float = 60,
) -> Iterator[subprocess.Popen[str]]:
    """``oipcodec serve ARGS`` as it is, for tests that read what it prints (stdout and stderr
    together, as text, or into ``log``) or how it exits.

    ``program`` runs instead of ``python -m oipcodec`` (the console script, another
    interpreter). With ``ready``, the process is yielded once ``ready()`` is true (polled every
    0.1 s; the test fails with the output when it exits first or ``startup_seconds`` pass).
    On the way out a process still running is sent SIGTERM, then killed 30 s later."""
    command = [*(program or [sys.executable, "-m", "oipcodec"]), "serve", *args]
    sink = log.open("w") if log is not None else None
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=sink or subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        if ready is not None:
            deadline = time.monotonic() + startup_seconds
            while not ready():
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    output = process.communicate()[0] or ""
                    if log is not None and sink is not None:
                        sink.flush()
                        output = log.read_text(errors="replace")
                    pytest.fail(
                        f"oipcodec serve did not start (exit code {process.returncode}):\n"
                        + output[-4000:]
                    )
                time.sleep(0.1)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.communicate(timeout=30)
            except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
                process.kill()
                process.communicate(timeout=30)
        if sink is not None:
            sink.close()


def answers_ready(http: str) -> Callable[[], bool]:
    """``ready`` for :func:`serve_process`: ``GET http://HTTP/v2/health/ready`` answers 200."""
    return lambda: http_status(f"http://{http}/v2/health/ready") == 200


#: Where the package ``tests`` is: a server process imports test models from there.
ROOT = Path(__file__).resolve().parents[2]


def serve_checkout(
    *args: str, ready_port: int | None = None
) -> contextlib.AbstractContextManager[subprocess.Popen[str]]:
    """:func:`serve_process` with this checkout's tests importable (``--model-module
    tests.support.server_models``); with ``ready_port``, once the REST port answers ready."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    ready = None if ready_port is None else answers_ready(f"127.0.0.1:{ready_port}")
    return serve_process(*args, env=env, ready=ready)
