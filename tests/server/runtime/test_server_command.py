"""``oipcodec serve`` as a user runs it: the installed console script, started from a folder
holding their model package (no PYTHONPATH pointing there), called with tritonclient; and its
startup errors, each one line on stderr with exit status 2 and no traceback."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.support.console import SCRIPT as FOUND
from tests.support.console import script_env
from tests.support.ports import free_ports
from tests.support.serve_process import answers_ready, serve_process

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")

if FOUND is None:  # pragma: no cover - a source checkout without the package installed
    pytest.skip("the oipcodec console script is not installed", allow_module_level=True)
SCRIPT: str = FOUND or ""

MODELS_PY = """\
import numpy as np
from oipcodec.server import Model, TensorSpec

from .helpers import ONE


class AddOne(Model):
    name = "add_one"
    inputs = [TensorSpec("X", "FP32", [-1, 4])]
    outputs = [TensorSpec("Y", "FP32", [-1, 4])]

    def predict(self, inputs, parameters):
        return {"Y": inputs["X"] + ONE}


MODELS = [AddOne()]
"""


def make_package(folder: Path, models: str = MODELS_PY) -> None:
    """``folder/my``: a package whose ``models`` module holds ``models``."""
    package = folder / "my"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("ONE = 1\n")
    (package / "models.py").write_text(models)


@contextlib.contextmanager
def serving(folder: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], int, int]]:
    """``oipcodec serve ARGS`` started in ``folder`` on free ports; stopped with SIGTERM."""
    http_port, grpc_port = free_ports(2)
    ports = ["--http-port", str(http_port), "--grpc-port", str(grpc_port)]
    with serve_process(
        *ports, *args, cwd=folder, env=script_env(), program=[SCRIPT],
        ready=answers_ready(f"127.0.0.1:{http_port}"),
    ) as process:  # fmt: skip
        yield process, http_port, grpc_port


def call_add_one(http_port: int, grpc_port: int) -> None:
    """add_one answers X + 1 to tritonclient over REST (binary) and gRPC."""
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    with httpclient.InferenceServerClient(f"127.0.0.1:{http_port}") as http:
        tensor = httpclient.InferInput("X", [2, 4], "FP32")
        tensor.set_data_from_numpy(x)
        assert http.infer("add_one", [tensor]).as_numpy("Y").tolist() == (x + 1).tolist()
    with grpcclient.InferenceServerClient(f"127.0.0.1:{grpc_port}") as grpc:
        tensor = grpcclient.InferInput("X", [2, 4], "FP32")
        tensor.set_data_from_numpy(x)
        assert grpc.infer("add_one", [tensor]).as_numpy("Y").tolist() == (x + 1).tolist()


def stop(process: subprocess.Popen[str]) -> str:
    """SIGTERM, then what it printed; a server not gone within 60 s fails with all of it."""
    process.send_signal(signal.SIGTERM)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()  # its workers stop when their parent is gone
        output = process.communicate(timeout=60)[0] or ""
        pytest.fail(f"oipcodec serve did not stop within 60 s of SIGTERM; it printed:\n{output}")
    assert process.returncode == 0, output
    return output


def test_a_module_in_the_working_directory_is_served(tmp_path: Path) -> None:
    """The README's command, from the folder that holds `my/`, with two processes."""
    make_package(tmp_path)
    with serving(tmp_path, "--model-module", "my.models", "--workers", "2") as running:
        process, http_port, grpc_port = running
        call_add_one(http_port, grpc_port)
        output = stop(process)
    assert "Traceback" not in output


def test_two_workers_say_once_each_that_they_started(tmp_path: Path) -> None:
    """--workers 2 with a metrics port (two uvicorns per process): one ready line per process,
    not uvicorn's "Started server process" per port."""
    (metrics_port,) = free_ports(1)
    with serving(tmp_path, "--workers", "2", "--metrics-port", str(metrics_port)) as running:
        output = stop(running[0])
    ready = [line for line in output.splitlines() if "oipcodec server ready" in line]
    assert len(ready) == 2 and len({line.split("[")[1] for line in ready}) == 2, output
    assert "Started server process" not in output
    assert "Finished server process" not in output
    assert output.count("oipcodec server stopped") == 2, output


def test_a_module_is_also_taken_by_its_file_path(tmp_path: Path) -> None:
    make_package(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = os.path.join("..", "my", "models.py")
    with serving(elsewhere, "--model-module", path) as (process, http_port, grpc_port):
        call_add_one(http_port, grpc_port)
        stop(process)


def refused(folder: Path, *args: str) -> str:
    """The one line ``oipcodec serve ARGS`` run in ``folder`` answers on stderr, with exit
    status 2 (and nothing on stdout, no traceback)."""
    result = subprocess.run(
        [SCRIPT, "serve", *args],
        cwd=folder,
        env=script_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result
    assert result.stdout == "" and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


BROKEN_MODULES = {
    "no MODELS": (
        "X = 1\n",
        "oipcodec serve: module 'my.models' has no MODELS: define MODELS = [MyModel(), ...] "
        "(or a function MODELS() returning them)",
    ),
    "empty MODELS": ("MODELS = []\n", "oipcodec serve: my.models.MODELS holds no models"),
    "classes": (
        MODELS_PY.replace("MODELS = [AddOne()]", "MODELS = [AddOne]"),
        "oipcodec serve: my.models.MODELS holds the class AddOne, not an instance: write AddOne()",
    ),
    "not models": (
        "MODELS = ['add_one']\n",
        "oipcodec serve: my.models.MODELS holds 'add_one', not an oipcodec.server.Model",
    ),
    "unknown datatype": (
        MODELS_PY.replace('"FP32", [-1, 4])]\n    outputs', '"FLOAT32", [-1, 4])]\n    outputs'),
        "oipcodec serve: cannot import model module 'my.models': DatatypeError: tensor 'X': "
        "unknown datatype 'FLOAT32'; expected one of BOOL, UINT8, UINT16, UINT32, UINT64, "
        "INT8, INT16, INT32, INT64, FP16, FP32, FP64, BF16, BYTES ({models}, line 9)",
    ),
    "raises": (
        "import numpy\n\nMODELS = [1 / 0]\n",
        "oipcodec serve: cannot import model module 'my.models': ZeroDivisionError: division "
        "by zero ({models}, line 3)",
    ),
    "syntax": (
        "MODELS = [\n",
        "oipcodec serve: cannot import model module 'my.models': SyntaxError: '[' was never "
        "closed ({models}, line 1)",
    ),
    "missing import": (
        "import not_installed_anywhere\n",
        "oipcodec serve: cannot import model module 'my.models': ModuleNotFoundError: No "
        "module named 'not_installed_anywhere' ({models}, line 1)",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN_MODULES))
def test_a_broken_model_module_is_one_line(tmp_path: Path, case: str) -> None:
    source, message = BROKEN_MODULES[case]
    make_package(tmp_path, source)
    http_port, grpc_port = free_ports(2)
    ports = ["--http-port", str(http_port), "--grpc-port", str(grpc_port)]
    line = refused(tmp_path, *ports, "--model-module", "my.models")
    assert line == message.format(models=tmp_path / "my" / "models.py")


def test_a_module_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    http_port, grpc_port = free_ports(2)
    ports = ["--http-port", str(http_port), "--grpc-port", str(grpc_port)]
    line = refused(tmp_path, *ports, "--model-module", "my.models")
    assert line == (
        "oipcodec serve: cannot import model module 'my.models': no module named 'my' on the "
        "import path (run from the folder that holds it, or give the file path, e.g. "
        "my/models.py)"
    )
    line = refused(tmp_path, *ports, "--model-module", "my/models.py")
    assert line == "oipcodec serve: cannot import model module 'my/models.py': no such file"


@pytest.mark.parametrize("which", ["--http-port", "--grpc-port", "--metrics-port"])
def test_a_busy_port_is_named_before_any_model_loads(tmp_path: Path, which: str) -> None:
    marker = tmp_path / "imported"
    make_package(tmp_path, f"open({str(marker)!r}, 'w').close()\n" + MODELS_PY)
    ports = dict(zip(["--http-port", "--grpc-port", "--metrics-port"], free_ports(3), strict=True))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        ports[which] = busy
        args = [str(item) for pair in ports.items() for item in pair]
        line = refused(tmp_path, *args, "--model-module", "my.models")
    kind = {"--http-port": "HTTP", "--grpc-port": "gRPC", "--metrics-port": "metrics"}[which]
    assert line == (
        f"oipcodec serve: cannot listen for {kind} on 127.0.0.1:{busy}: Address already in "
        f"use (set by {which})"
    )
    assert not marker.exists()  # the model module was not even imported
