"""The ``oipcodec`` console script as a user runs it: where it is, and the environment it runs
in (no PYTHONPATH pointing at the user's folder); tests/support/serve_process.py starts it."""

from __future__ import annotations

import os
import shutil
import sys
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
