"""``oipcodec.testing.background()`` in a plain script, run as ``python FILE`` and ``python -c``.

A spawned process re-runs the caller's main module; ``background()`` starts its server
processes without it when the models come from elsewhere, keeps the re-run (which needs an
``if __name__ == "__main__":`` guard) for models defined in the script, and refuses in one line
models defined where no process can import them (``python -c``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[3]

_SCALE = """
import numpy as np
from oipcodec.client import HttpClient
from oipcodec.server import Model, TensorSpec
from oipcodec.testing import background


class Scale(Model):
    name = "scale"
    inputs = [TensorSpec("X", "FP32", [-1, 4])]
    outputs = [TensorSpec("Y", "FP32", [-1, 4])]

    def predict(self, inputs, parameters):
        return {"Y": inputs["X"] * 2}


def call(server):
    with HttpClient(server.http_url) as client:
        answer = client.infer("scale", {"X": np.ones((1, 4), np.float32)})
        print(answer.output("Y").data.tolist())
"""

#: The demo models (importable from oipcodec), no guard: the script must not run twice.
UNGUARDED_DEMO = """
from oipcodec.client import HttpClient
from oipcodec.testing import background

print("once")
with background() as server, HttpClient(server.http_url) as client:
    print(client.ready())
"""

GUARDED_SCRIPT_MODELS = (
    _SCALE
    + """
if __name__ == "__main__":
    with background([Scale()]) as server:
        call(server)
"""
)

UNGUARDED_SCRIPT_MODELS = (
    _SCALE
    + """
with background([Scale()]) as server:
    call(server)
"""
)


def _run(code: str, mode: str, folder: Path) -> subprocess.CompletedProcess[str]:
    script = folder / "script.py"
    script.write_text(code)
    argv = [str(script)] if mode == "file" else ["-c", code]
    return subprocess.run(
        [sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("mode", ["file", "-c"])
def test_importable_models_need_no_guard(mode: str, tmp_path: Path) -> None:
    result = _run(UNGUARDED_DEMO, mode, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["once", "True"]  # the script ran once


def test_models_of_a_guarded_script_cross_to_the_process(tmp_path: Path) -> None:
    result = _run(GUARDED_SCRIPT_MODELS, "file", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "[[2.0, 2.0, 2.0, 2.0]]"


def test_models_of_an_unguarded_script_are_refused_in_one_line(tmp_path: Path) -> None:
    result = _run(UNGUARDED_SCRIPT_MODELS, "file", tmp_path)
    assert result.returncode != 0
    assert "bootstrapping phase" not in result.stderr  # not multiprocessing's 72 lines
    said = [line for line in result.stderr.splitlines() if line.startswith("oipcodec: ")]
    assert len(said) == 1, result.stderr
    assert "if __name__ ==" in said[0] and "process=False" in said[0]
    assert "script.py" in said[0]
    assert "after re-running __main__ for its models" in result.stderr.splitlines()[-1]


def test_models_defined_in_python_c_are_refused_in_one_line(tmp_path: Path) -> None:
    result = _run(UNGUARDED_SCRIPT_MODELS, "-c", tmp_path)
    assert result.returncode != 0
    last = result.stderr.splitlines()[-1]
    assert last.startswith("RuntimeError: model class 'Scale' is defined in __main__"), last
    assert "process=False" in last
    assert "Traceback" not in result.stderr.split("RuntimeError")[0].split("\n", 1)[1]


def test_models_of_a_package_main_are_refused_in_one_line(tmp_path: Path) -> None:
    """``python -m pkg``: spawn does not re-run a ``pkg.__main__``, so its models cannot cross."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(GUARDED_SCRIPT_MODELS)
    result = subprocess.run(
        [sys.executable, "-m", "pkg"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    last = result.stderr.splitlines()[-1]
    assert last.startswith("RuntimeError: model class 'Scale' is defined in __main__"), last
