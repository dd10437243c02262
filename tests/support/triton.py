"""NVIDIA's own tools as peers: the real Triton server (with its Python backend) and
perf_analyzer, from the environment ``tools/triton_env.sh DIR`` builds.

``OIPCODEC_TRITON_HOME=DIR`` points at it; without it the tests that need these tools skip,
unless ``OIPCODEC_REQUIRE_PEERS`` names ``tritonserver`` (then they fail).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.ports import free_ports
from tests.support.processes import http_status, running

#: A Python-backend identity: OUTPUT0 is INPUT0, whatever its datatype.
IDENTITY_MODEL = """
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                [pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())]
            )
            for r in requests
        ]
"""


def identity_repository(root: Path, datatype: str, name: str = "identity") -> Path:
    """A model repository at ``root`` with one Python-backend identity model ``name`` whose
    INPUT0 and OUTPUT0 are 1-D tensors of ``datatype`` (Triton's spelling: TYPE_FP32...)."""
    folder = root / name
    (folder / "1").mkdir(parents=True)
    (folder / "config.pbtxt").write_text(
        f'name: "{name}"\nbackend: "python"\nmax_batch_size: 0\n'
        f'input [ {{ name: "INPUT0" data_type: {datatype} dims: [ -1 ] }} ]\n'
        f'output [ {{ name: "OUTPUT0" data_type: {datatype} dims: [ -1 ] }} ]\n'
    )
    (folder / "1" / "model.py").write_text(IDENTITY_MODEL)
    return root


#: Triton's decoupled example ``square_int32`` (the Python backend's examples/decoupled): IN = n
#: (INT32 [1]) answers n responses of OUT = n from a thread of its own through the request's
#: response sender, then the final flag alone; ``execute`` returns None at once.
SQUARE_INT32_MODEL = """
import json
import threading

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        if not pb_utils.using_decoupled_model_transaction_policy(config):
            raise pb_utils.TritonModelException("square_int32 must be decoupled")
        self.inflight = 0
        self.lock = threading.Lock()

    def execute(self, requests):
        for request in requests:
            n = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()
            sender = request.get_response_sender()
            thread = threading.Thread(target=self.respond, args=(sender, n), daemon=True)
            with self.lock:
                self.inflight += 1
            thread.start()
        return None

    def respond(self, sender, n):
        for _ in range(n[0]):
            out = pb_utils.Tensor("OUT", np.array([n[0]], np.int32))
            sender.send(pb_utils.InferenceResponse(output_tensors=[out]))
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        with self.lock:
            self.inflight -= 1

    def finalize(self):
        while self.inflight:
            threading.Event().wait(0.1)
"""


def square_int32_repository(root: Path) -> Path:
    """A model repository at ``root`` with Triton's decoupled Python-backend ``square_int32``
    (its example's configuration: IN and OUT INT32 ``[1]``, no batching, decoupled)."""
    folder = root / "square_int32"
    (folder / "1").mkdir(parents=True)
    (folder / "config.pbtxt").write_text(
        'name: "square_int32"\nbackend: "python"\nmax_batch_size: 0\n'
        "model_transaction_policy { decoupled: true }\n"
        'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]\n'
        'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\n'
        "instance_group [ { kind: KIND_CPU } ]\n"
    )
    (folder / "1" / "model.py").write_text(SQUARE_INT32_MODEL)
    return root


def triton_env() -> dict[str, str]:
    """The variables ``tools/triton_env.sh`` wrote (paths of the server, backends, stub
    Python, libraries and perf_analyzer); skips (or fails when required) without them."""
    home = os.environ.get("OIPCODEC_TRITON_HOME")
    required = "tritonserver" in os.environ.get("OIPCODEC_REQUIRE_PEERS", "").split(",")
    env_file = Path(home) / "triton.env" if home else None
    if env_file is None or not env_file.is_file():
        message = "the real Triton server: set OIPCODEC_TRITON_HOME (tools/triton_env.sh DIR)"
        if required:
            pytest.fail(message)
        pytest.skip(message)
    pairs = (line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs}


@dataclass(frozen=True)
class Triton:
    """A running Triton server: its HTTP and gRPC addresses (``host:port``, as tritonclient
    and perf_analyzer take them)."""

    http: str
    grpc: str
    metrics: str


@contextlib.contextmanager
def tritonserver(
    repository: Path, log_path: Path, *, startup_seconds: float = 120, args: tuple[str, ...] = ()
) -> Iterator[Triton]:
    """The real Triton server serving ``repository`` on free ports of 127.0.0.1, ready (every
    model loaded) on entry, stopped on exit. The Python backend's stub runs the environment's
    ``python`` (first on PATH) and needs libpython's directory on LD_LIBRARY_PATH."""
    env = triton_env()
    http, grpc, metrics = free_ports(3)
    process_env = dict(os.environ)
    process_env["PATH"] = env["OIPCODEC_TRITON_PATH"] + os.pathsep + process_env.get("PATH", "")
    process_env["LD_LIBRARY_PATH"] = env["OIPCODEC_TRITON_LD_LIBRARY_PATH"]
    process_env.pop("PYTHONPATH", None)
    command = [
        env["OIPCODEC_TRITONSERVER"],
        f"--model-repository={repository}",
        f"--backend-directory={env['OIPCODEC_TRITON_BACKENDS']}",
        "--http-address=127.0.0.1",
        "--grpc-address=127.0.0.1",
        f"--http-port={http}",
        f"--grpc-port={grpc}",
        f"--metrics-port={metrics}",
        "--allow-metrics=false",
        "--exit-on-error=true",
        *args,
    ]
    ready = f"http://127.0.0.1:{http}/v2/health/ready"
    with running(
        command,
        lambda: http_status(ready) == 200,
        log_path,
        startup_seconds=startup_seconds,
        env=process_env,
    ):
        yield Triton(f"127.0.0.1:{http}", f"127.0.0.1:{grpc}", f"127.0.0.1:{metrics}")


def perf_analyzer(args: list[str], timeout: float = 300) -> str:
    """Runs NVIDIA's perf_analyzer with ``args`` (bounded by ``timeout`` seconds) and returns
    its standard output; a non-zero exit fails the test with its output."""
    env = triton_env()
    done = subprocess.run(
        [env["OIPCODEC_PERF_ANALYZER"], *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(
            f"perf_analyzer {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done.stdout
