"""The ``oipcodec`` console script as a user runs it: where it is, the environment it runs in
(no PYTHONPATH pointing at the user's folder), and waiting for the server it starts."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import oipcodec

#: The console script of this interpreter's environment (what `pip install` made), or None.
SCRIPT = shutil.which("oipcodec", path=str(Path(sys.executable).parent))


def script_env() -> dict[str, str]:
    """The environment of the console script: this one, with this interpreter's folder first
    on PATH (``oipcodec`` and ``python`` are this environment's) and PYTHONPATH naming only
    where the oipcodec under test lives (its source tree in a checkout), never the folder of
    the user's models."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(oipcodec.__file__).resolve().parents[1])
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def wait_ready(process: subprocess.Popen[str], http_port: int, timeout: float = 60) -> None:
    """Return once the server ``process`` started answers ready on ``http_port``; raise
    AssertionError (with its output) when it exits first or does not within ``timeout``."""
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(f"127.0.0.1:{http_port}")
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(process.communicate()[0])
            with contextlib.suppress(Exception):
                if client.is_server_ready():
                    return
            time.sleep(0.1)
    finally:
        client.close()
    raise AssertionError("oipcodec serve did not become ready")
