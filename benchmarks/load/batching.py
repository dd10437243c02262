"""Dynamic batching side by side: oipcodec (without and with it), Triton and MLServer, one load.

    python benchmarks/load/batching.py --mlserver-python ENV/bin/python   # the full run (manual)
    python benchmarks/load/batching.py --quick                # a smoke run (CI's Triton stage)
    python benchmarks/load/batching.py --servers oipcodec,oipcodec-batching --protocols grpc
    python benchmarks/load/batching.py --servers oipcodec-batching,triton --protocols grpc \
        --grpc-impl native --concurrency 32 --rounds 2          # the native gRPC server

The model costs mostly per call: FP32 ``INPUT0`` [n, 1024] @ a fixed [1024, 1024] matrix in
numpy, the same arithmetic in each server's own model form, each server's numpy on one BLAS
thread (``--blas-threads``). Each server is started in turn on free 127.0.0.1 ports and driven
by NVIDIA's perf_analyzer (the same client for all: one row per request, ``-b 1``, over gRPC and
HTTP with binary tensors, synchronous, count windows, 16 different rows of finite values) at
each concurrency; the table gives requests/s and p99 latency side by side, then the ratios of
oipcodec with batching to the others at the concurrency the targets name (32). Servers:

- ``oipcodec``: ``oipcodec serve`` of a model repository, ``max_batch_size`` 64, no batching;
- ``oipcodec-batching``: the same with ``dynamic_batching`` in its config.pbtxt (the server's
  ``GET /v2/models/matmul/config`` must show it: a server that ignores it is said so);
- ``triton``: the real Triton server, Python backend, one CPU instance, ``dynamic_batching``
  (``OIPCODEC_TRITON_HOME`` or ``--triton-home``, from ``tools/triton_env.sh DIR``);
- ``mlserver``: MLServer's adaptive batching (``max_batch_size``, ``max_batch_time``), its own
  defaults otherwise (one inference worker process), run by ``--mlserver-python`` (an
  environment with ``.[integration-mlserver]``); gRPC only, as perf_analyzer's HTTP requests
  carry binary tensors MLServer does not read. perf_analyzer first reads Triton's model
  configuration, which MLServer does not serve: a launcher adds that one answer.

``--delay-us`` is the batching delay of all three (``max_queue_delay_microseconds``,
``max_batch_time``), ``--max-batch`` their ``max_batch_size``. ``--per-call-ms MS`` adds a
fixed cost per call, one call at a time, to every server's model: the product of one row
costs less than the server's own work per request (the script prints the model's cost), so
the product alone shows what batching costs, and the fixed cost what it saves a model whose
cost is per call.
oipcodec's batcher runs ``predict`` in a worker thread. Each concurrency is measured on every
server in turn, ``--rounds`` times (the median), beside each server's CPU ms per request. Every server first answers one
JSON request checked against numpy's product, so a server that computes something else, or
fails, stops the run instead of showing as fast. ``--json FILE`` writes the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

MODEL = "matmul"
WIDTH = 1024
SERVERS = ("oipcodec", "oipcodec-batching", "triton", "mlserver")
PROTOCOLS = ("grpc", "http")
CONCURRENCY = (1, 2, 4, 8, 16, 32, 64)
QUICK_CONCURRENCY = (1, 8)
#: What perf_analyzer cannot measure, and why: over HTTP it sends tensors with the binary data
#: extension only, which MLServer's REST server refuses (a 500: the body is not JSON).
UNSUPPORTED = {
    ("mlserver", "http"): "perf_analyzer's HTTP tensors are binary, MLServer 1.7 reads JSON",
}
#: The stability percentage of a run again after an unstable one: any three windows.
UNSTABLE_STABILITY = 1000
#: The concurrency the targets are stated at.
TARGET_CONCURRENCY = 32

# The weights, written out in each server's model file: integers in [-48, 48] / 97, the same
# on every numpy (a seeded generator's stream may change between numpy versions).
WEIGHTS_SOURCE = (
    "def weights():\n"
    "    i = np.arange(1024, dtype=np.int64)\n"
    "    grid = (i[:, None] * 31 + i[None, :] * 17) % 97 - 48\n"
    "    return (grid / 97).astype(np.float32)\n"
)
# --per-call-ms: a fixed cost per call of the model, one call at a time (a device the model
# owns, a remote call), written into every server's model file the same way.
PER_CALL_SOURCE = (
    "import threading\n"
    "import time\n\n"
    "PER_CALL_SECONDS = 0.0\n"
    "_DEVICE = threading.Lock()\n\n\n"
    "def per_call():\n"
    "    if PER_CALL_SECONDS:\n"
    "        with _DEVICE:\n"
    "            time.sleep(PER_CALL_SECONDS)\n"
)

OIPCODEC_MODEL = f"""import numpy as np

from oipcodec.server import Model, TensorSpec


{WEIGHTS_SOURCE}
{PER_CALL_SOURCE}

class MatMul(Model):
    inputs = [TensorSpec("INPUT0", "FP32", [-1, {WIDTH}])]
    outputs = [TensorSpec("OUTPUT0", "FP32", [-1, {WIDTH}])]
    max_batch_size = 64

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weights = weights()

    def predict(self, inputs, parameters):
        per_call()
        return {{"OUTPUT0": inputs["INPUT0"] @ self.weights}}
"""

TRITON_MODEL = f'''import numpy as np
import triton_python_backend_utils as pb_utils


{WEIGHTS_SOURCE}
{PER_CALL_SOURCE}

class TritonPythonModel:
    """A batch arrives as a list of requests: their rows are stacked, multiplied once, and
    each request answered with its own rows (the Python backend's way to batch)."""

    def initialize(self, args):
        self.weights = weights()

    def execute(self, requests):
        xs = [pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy() for r in requests]
        per_call()
        y = (xs[0] if len(xs) == 1 else np.concatenate(xs)) @ self.weights
        answers, start = [], 0
        for x in xs:
            rows = y[start : start + len(x)]
            start += len(x)
            answers.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", rows)]))
        return answers
'''

MLSERVER_MODEL = f"""import numpy as np
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import InferenceRequest, InferenceResponse


{WEIGHTS_SOURCE}
{PER_CALL_SOURCE}

class MatMul(MLModel):
    async def load(self):
        self.weights = weights()
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        x = NumpyCodec.decode_input(payload.inputs[0])
        per_call()
        y = x @ self.weights
        return InferenceResponse(
            model_name=self.name, outputs=[NumpyCodec.encode_output("OUTPUT0", y)]
        )
"""


# MLServer serves no model configuration (Triton's ``/v2/models/NAME/config`` and the
# ModelConfig RPC), which perf_analyzer reads once before it starts: this launcher adds that one
# answer to MLServer's REST app and gRPC server, and leaves every other route as it ships.
MLSERVER_LAUNCHER = r"""import sys

import grpc
from starlette.responses import JSONResponse
from starlette.routing import Route

import mlserver.grpc.server as grpc_server
import mlserver.rest.server as rest_server
from mlserver.cli.main import main


def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def launch(name, width, max_batch):
    config_json = {
        "name": name,
        "max_batch_size": max_batch,
        "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [width]}],
        "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [width]}],
    }
    # ModelConfigResponse{config: ModelConfig{name (1), max_batch_size (4)}}, written out.
    config_pb = field(1, field(1, name.encode()) + varint(4 << 3) + varint(max_batch))
    create_app, create_server = rest_server.create_app, grpc_server.GRPCServer._create_server

    def app_with_config(*args, **kwargs):
        app = create_app(*args, **kwargs)

        async def config(request):
            return JSONResponse(config_json)

        app.router.routes.insert(0, Route(f"/v2/models/{name}/config", config))
        return app

    def server_with_config(self):
        server = create_server(self)

        async def config(request, context):
            return config_pb

        methods = {"ModelConfig": grpc.unary_unary_rpc_method_handler(config)}
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("inference.GRPCInferenceService", methods),)
        )
        return server

    rest_server.create_app = app_with_config
    grpc_server.GRPCServer._create_server = server_with_config
    main()


# MLServer's inference workers are spawned: they import this file again, as __mp_main__.
if __name__ == "__main__":
    model, width, max_batch = sys.argv.pop(1), int(sys.argv.pop(1)), int(sys.argv.pop(1))
    sys.argv[0] = "mlserver"
    launch(model, width, max_batch)
"""


def weights() -> np.ndarray:
    """The matrix the model files build (WEIGHTS_SOURCE), for checking their answers."""
    namespace: dict[str, Any] = {"np": np}
    exec(WEIGHTS_SOURCE, namespace)  # the same text the servers run
    matrix: np.ndarray = namespace["weights"]()
    return matrix


def model_source(template: str, args: argparse.Namespace) -> str:
    """A server's model file with ``--per-call-ms`` written in."""
    return template.replace(
        "PER_CALL_SECONDS = 0.0", f"PER_CALL_SECONDS = {args.per_call_ms / 1000!r}", 1
    )


def config_pbtxt(max_batch: int, delay_us: int | None, triton: bool) -> str:
    """The model's config.pbtxt: Triton's own form for both servers (oipcodec's repository
    reads it too); ``delay_us`` None: no ``dynamic_batching``."""
    lines = [f'name: "{MODEL}"']
    if triton:
        lines.append('backend: "python"')
    lines += [
        f"max_batch_size: {max_batch}",
        f'input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ {WIDTH} ] }} ]',
        f'output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ {WIDTH} ] }} ]',
    ]
    if triton:
        lines.append("instance_group [ { count: 1 kind: KIND_CPU } ]")
    if delay_us is not None:
        lines.append(f"dynamic_batching {{ max_queue_delay_microseconds: {delay_us} }}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- processes


def server_env(args: argparse.Namespace, **extra: str) -> dict[str, str]:
    """The environment of a server: this one, with ``--blas-threads`` BLAS threads. One by
    default, for every server alike: on a small shared machine OpenBLAS's spinning threads
    made a 1-row product take 20-50 ms instead of 0.1 (docs/measurements.md)."""
    env = dict(os.environ, **extra)
    if args.blas_threads:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(args.blas_threads)
    return env


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1."""
    import socket

    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def http_get(url: str, timeout: float = 2) -> tuple[int | None, bytes]:
    """``GET url``: its status and body, or (None, b"") when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return int(answer.status), answer.read()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read()
    except OSError:
        return None, b""


@dataclass(frozen=True)
class Running:
    """A server being measured: its addresses (``host:port``) and what its configuration says."""

    name: str
    http: str
    grpc: str
    pid: int
    #: The batching the server reports for the model (its config's ``dynamic_batching``, or
    #: MLServer's settings); None when it reports none.
    batching: str | None


@contextlib.contextmanager
def started(
    name: str,
    command: list[str],
    ports: tuple[int, int],
    log_path: Path,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    startup_seconds: float = 180,
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` running until its model answers ready on the HTTP port (bounded by
    ``startup_seconds``; else RuntimeError with the end of its log); stopped on exit."""
    ready = f"http://127.0.0.1:{ports[0]}/v2/models/{MODEL}/ready"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        try:
            deadline = time.monotonic() + startup_seconds
            while http_get(ready)[0] != 200:
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"{name} did not start (exit {process.poll()}):\n{tail}")
                time.sleep(0.2)
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def triton_env(home: str | None) -> dict[str, str]:
    """The variables ``tools/triton_env.sh DIR`` wrote in DIR/triton.env."""
    if not home:
        raise SystemExit(
            "the Triton server and perf_analyzer: set OIPCODEC_TRITON_HOME or --triton-home "
            "(an environment made by tools/triton_env.sh DIR)"
        )
    env_file = Path(home) / "triton.env"
    if not env_file.is_file():
        raise SystemExit(f"{env_file} does not exist: run tools/triton_env.sh {home}")
    pairs = (line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs}


def model_batching(http: str) -> str | None:
    """The ``dynamic_batching`` the server's model configuration shows, as text, or None."""
    status, body = http_get(f"http://{http}/v2/models/{MODEL}/config", timeout=10)
    if status != 200:
        return None
    batching = json.loads(body).get("dynamic_batching")
    return json.dumps(batching, sort_keys=True) if batching is not None else None


@contextlib.contextmanager
def serve(name: str, root: Path, args: argparse.Namespace) -> Iterator[Running]:
    """Server ``name`` serving the model from a folder of its own under ``root``."""
    http, grpc, metrics = free_ports(3)
    folder = root / name
    model = folder / "repository" / MODEL
    (model / "1").mkdir(parents=True)
    log = folder / "server.log"
    if name.startswith("oipcodec"):
        delay = args.delay_us if name == "oipcodec-batching" else None
        (model / "config.pbtxt").write_text(config_pbtxt(args.max_batch, delay, triton=False))
        (model / "1" / "model.py").write_text(model_source(OIPCODEC_MODEL, args))
        command = [
            sys.executable, "-m", "oipcodec", "serve", "--model-repository",
            str(folder / "repository"), "--http-port", str(http), "--grpc-port", str(grpc),
            "--grpc-impl", args.grpc_impl,
        ]  # fmt: skip
        with started(name, command, (http, grpc), log, env=server_env(args)) as process:
            yield Running(name, f"127.0.0.1:{http}", f"127.0.0.1:{grpc}", process.pid,
                          model_batching(f"127.0.0.1:{http}"))  # fmt: skip
    elif name == "triton":
        env = triton_env(args.triton_home)
        (model / "config.pbtxt").write_text(config_pbtxt(args.max_batch, args.delay_us, True))
        (model / "1" / "model.py").write_text(model_source(TRITON_MODEL, args))
        process_env = server_env(args)
        process_env["PATH"] = env["OIPCODEC_TRITON_PATH"] + os.pathsep + process_env["PATH"]
        process_env["LD_LIBRARY_PATH"] = env["OIPCODEC_TRITON_LD_LIBRARY_PATH"]
        process_env.pop("PYTHONPATH", None)
        command = [
            env["OIPCODEC_TRITONSERVER"], f"--model-repository={folder / 'repository'}",
            f"--backend-directory={env['OIPCODEC_TRITON_BACKENDS']}",
            "--http-address=127.0.0.1", "--grpc-address=127.0.0.1", f"--http-port={http}",
            f"--grpc-port={grpc}", f"--metrics-port={metrics}", "--allow-metrics=false",
            "--exit-on-error=true",
        ]  # fmt: skip
        with started(name, command, (http, grpc), log, env=process_env) as process:
            yield Running(name, f"127.0.0.1:{http}", f"127.0.0.1:{grpc}", process.pid,
                          model_batching(f"127.0.0.1:{http}"))  # fmt: skip
    elif name == "mlserver":
        python = args.mlserver_python
        if not python:
            raise SystemExit(
                "mlserver: give --mlserver-python, the python of an environment with "
                "pip install '.[integration-mlserver]'"
            )
        model.mkdir(exist_ok=True)
        shutil.rmtree(model / "1")
        (model / "matmul_model.py").write_text(model_source(MLSERVER_MODEL, args))
        settings = {
            "name": MODEL,
            "implementation": "matmul_model.MatMul",
            "max_batch_size": args.max_batch,
            "max_batch_time": args.delay_us / 1e6,
            "inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [-1, WIDTH]}],
            "outputs": [{"name": "OUTPUT0", "datatype": "FP32", "shape": [-1, WIDTH]}],
        }
        (model / "model-settings.json").write_text(json.dumps(settings))
        server_settings = {
            "host": "127.0.0.1",
            "http_port": http,
            "grpc_port": grpc,
            "metrics_endpoint": None,
            "load_models_at_startup": True,
        }
        (folder / "repository" / "settings.json").write_text(json.dumps(server_settings))
        process_env = server_env(args, PYTHONPATH=str(model))
        (folder / "launch_mlserver.py").write_text(MLSERVER_LAUNCHER)
        command = [python, str(folder / "launch_mlserver.py"), MODEL, str(WIDTH),
                   str(args.max_batch), "start", "."]  # fmt: skip
        with started(
            name, command, (http, grpc), log, env=process_env, cwd=folder / "repository"
        ) as process:
            batching = f"max_batch_size {args.max_batch}, max_batch_time {args.delay_us} us"
            yield Running(name, f"127.0.0.1:{http}", f"127.0.0.1:{grpc}", process.pid, batching)
    else:
        raise SystemExit(f"unknown server {name!r}: one of {', '.join(SERVERS)}")


def check_answer(server: Running) -> None:
    """One JSON request of 3 rows; the answer must be numpy's product (float32 sums)."""
    x = ((np.arange(3 * WIDTH, dtype=np.float32).reshape(3, WIDTH) % 13) - 6) / 7
    body = {
        "inputs": [
            {"name": "INPUT0", "datatype": "FP32", "shape": [3, WIDTH], "data": x.ravel().tolist()}
        ]
    }
    request = urllib.request.Request(
        f"http://{server.http}/v2/models/{MODEL}/infer",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            got = json.loads(answer.read())
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"{server.name}: HTTP {error.code}: {error.read()[:500]!r}") from None
    output = next(o for o in got["outputs"] if o["name"] == "OUTPUT0")
    y = np.asarray(output["data"], dtype=np.float32).reshape(output["shape"])
    expected = x @ weights()
    if y.shape != expected.shape or not np.allclose(y, expected, rtol=1e-4, atol=1e-3):
        raise RuntimeError(f"{server.name} answered a different product: {y.ravel()[:4]}")


# ----------------------------------------------------------------------------- perf_analyzer


@dataclass
class Row:
    """One perf_analyzer measurement."""

    server: str
    protocol: str
    concurrency: int
    throughput: float  #: requests (one row each) per second
    p50_ms: float
    p90_ms: float
    p99_ms: float
    #: False when the windows did not agree within ``--stability`` percent.
    stable: bool = True
    #: The server's CPU milliseconds per request (its process and their children).
    cpu_ms: float | None = None
    #: Which round of ``--rounds`` (-1: the median of them).
    round: int = 0


def parse_report(text: str) -> dict[str, float]:
    """perf_analyzer's ``-f`` CSV (one concurrency): throughput and latencies (microseconds)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    if len(rows) != 1:
        raise ValueError(f"expected one row in perf_analyzer's report, got {len(rows)}:\n{text}")
    row = rows[0]
    return {
        "throughput": float(row["Inferences/Second"]),
        "p50_us": float(row["p50 latency"]),
        "p90_us": float(row["p90 latency"]),
        "p99_us": float(row["p99 latency"]),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its descendants (Linux /proc; 0.0
    elsewhere): Triton's Python stub and MLServer's inference worker count with their server."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        child = int(stat.parent.name)
        parents[child] = int(fields[1])
        times[child] = (int(fields[11]) + int(fields[12])) / tick
    total, family = 0.0, {pid}
    grew = True  # children may be listed before their parents: grow the family to a fixpoint
    while grew:
        grew = False
        for child, parent in parents.items():
            if parent in family and child not in family:
                family.add(child)
                grew = True
    for member in family:
        total += times.get(member, 0.0)
    return total


def input_data(path: Path, rows: int = 16) -> Path:
    """perf_analyzer's ``--input-data`` file: ``rows`` different finite rows in [-1, 1), one
    per request in turn. Not ``random``: that is random bytes, NaN among them, which
    MLServer's inference worker answers as an error (its NaN becomes null on the way back)."""
    values = np.random.default_rng(38).uniform(-1, 1, (rows, WIDTH)).astype(np.float32)
    path.write_text(json.dumps({"data": [{"INPUT0": row.tolist()} for row in values]}))
    return path


def measure(
    perf_analyzer: str,
    server: Running,
    protocol: str,
    concurrency: int,
    args: argparse.Namespace,
    round_: int = 0,
) -> Row:
    """One perf_analyzer run at ``concurrency`` (sync threads, count windows), bounded. When
    no three windows agree within ``--stability`` percent in ``--max-trials`` windows (a
    loaded machine), it is run again taking any three, and the row says so."""
    count = max(args.requests, 4 * concurrency)
    stability = args.stability
    with tempfile.TemporaryDirectory() as tmp:
        data = input_data(Path(tmp, "input.json"))
        report = Path(tmp, "report.csv")
        cpu_before, wall_before = cpu_seconds(server.pid), time.perf_counter()
        while True:
            command = [
                perf_analyzer, "-m", MODEL, "-i", protocol,
                "-u", server.grpc if protocol == "grpc" else server.http,
                "-b", "1", "--shape", f"INPUT0:{WIDTH}", "--input-data", str(data),
                "--concurrency-range", f"{concurrency}:{concurrency}:1",
                "--measurement-mode", "count_windows", "--measurement-request-count", str(count),
                "--stability-percentage", str(stability), "--max-trials", str(args.max_trials),
                "-f", str(report),
            ]  # fmt: skip
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=args.run_timeout, check=False
            )
            output = done.stdout + done.stderr
            if done.returncode == 0 and report.exists():
                break
            if "stable" in output and stability < UNSTABLE_STABILITY:
                stability = UNSTABLE_STABILITY
                continue
            raise RuntimeError(
                f"perf_analyzer on {server.name} ({protocol}, c={concurrency}) failed "
                f"(exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
            )
        figures = parse_report(report.read_text())
        cpu, wall = cpu_seconds(server.pid) - cpu_before, time.perf_counter() - wall_before
    # The server's CPU over the whole run (warm-up and retries too) per request it answered at
    # the measured rate meanwhile: what a loaded machine disturbs far less than requests/s.
    answered = figures["throughput"] * wall
    return Row(
        server.name,
        protocol,
        concurrency,
        figures["throughput"],
        figures["p50_us"] / 1000,
        figures["p90_us"] / 1000,
        figures["p99_us"] / 1000,
        stable=stability == args.stability,
        cpu_ms=1000 * cpu / answered if answered > 0 and cpu > 0 else None,
        round=round_,
    )


# ----------------------------------------------------------------------------- report


def table(rows: list[Row], servers: list[str]) -> str:
    """Requests/s and p99 ms per server, a line per protocol and concurrency."""
    width = 19
    head = f"{'protocol':8} {'c':>3} " + "".join(f"{s:>{width}}" for s in servers)
    sub = f"{'':8} {'':>3} " + "".join(f"{'req/s   p99 ms':>{width}}" for _ in servers)
    lines = [head, sub]
    by_key = {(r.server, r.protocol, r.concurrency): r for r in rows}
    for protocol in dict.fromkeys(r.protocol for r in rows):
        for c in sorted({r.concurrency for r in rows if r.protocol == protocol}):
            cells = []
            for s in servers:
                r = by_key.get((s, protocol, c))
                mark = " " if r is None or r.stable else "~"
                cells.append(f"{mark}{r.throughput:>9.0f} {r.p99_ms:>7.1f}" if r else f"{'-':>18}")
            lines.append(f"{protocol:8} {c:>3} " + "".join(f"{cell:>{width}}" for cell in cells))
    return "\n".join(lines)


def ratios(rows: list[Row], concurrency: int) -> dict[str, dict[str, float]]:
    """oipcodec with batching over each other server at ``concurrency``, per protocol."""
    out: dict[str, dict[str, float]] = {}
    by_key = {(r.server, r.protocol, r.concurrency): r for r in rows}
    for protocol in dict.fromkeys(r.protocol for r in rows):
        ours = by_key.get(("oipcodec-batching", protocol, concurrency))
        if ours is None:
            continue
        for other in ("oipcodec", "triton", "mlserver"):
            theirs = by_key.get((other, protocol, concurrency))
            if theirs is not None and theirs.throughput > 0:
                out.setdefault(protocol, {})[other] = ours.throughput / theirs.throughput
    return out


def cpu_table(rows: list[Row], servers: list[str]) -> str:
    """The servers' CPU milliseconds per request, a line per protocol and concurrency."""
    lines = [f"{'CPU ms/request':12} " + "".join(f"{s:>19}" for s in servers)]
    by_key = {(r.server, r.protocol, r.concurrency): r for r in rows}
    for protocol in dict.fromkeys(r.protocol for r in rows):
        for c in sorted({r.concurrency for r in rows if r.protocol == protocol}):
            cells = []
            for s in servers:
                r = by_key.get((s, protocol, c))
                cells.append(f"{r.cpu_ms:>19.2f}" if r and r.cpu_ms else f"{'-':>19}")
            lines.append(f"{protocol:8} {c:>3} " + "".join(cells))
    return "\n".join(lines)


def cpu_ratios(rows: list[Row], concurrency: int) -> dict[str, dict[str, float]]:
    """Each other server's CPU per request over oipcodec with batching's, per protocol."""
    out: dict[str, dict[str, float]] = {}
    by_key = {(r.server, r.protocol, r.concurrency): r for r in rows}
    for protocol in dict.fromkeys(r.protocol for r in rows):
        ours = by_key.get(("oipcodec-batching", protocol, concurrency))
        if ours is None or not ours.cpu_ms:
            continue
        for other in ("oipcodec", "triton", "mlserver"):
            theirs = by_key.get((other, protocol, concurrency))
            if theirs is not None and theirs.cpu_ms:
                out.setdefault(protocol, {})[other] = theirs.cpu_ms / ours.cpu_ms
    return out


MODEL_COST = f"""import json, time
import numpy as np
{WEIGHTS_SOURCE}
{PER_CALL_SOURCE}
w, out = weights(), {{}}
for n in (1, 8, 32, 64):
    x = np.ones((n, {WIDTH}), np.float32)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(20):
            x @ w
        best = min(best, (time.perf_counter() - start) / 20)
    out[n] = best * 1000
print(json.dumps(out))
"""


def model_cost(args: argparse.Namespace) -> dict[str, float]:
    """Milliseconds of one product of n rows (n = 1, 8, 32, 64; the best of 5 x 20) in a
    process of its own with the servers' BLAS threads: what batching can save in the model
    itself (a loaded machine makes the longer products look dearer)."""
    done = subprocess.run(
        [sys.executable, "-c", MODEL_COST],
        env=server_env(args),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {str(k): round(v, 3) for k, v in json.loads(done.stdout).items()}


def versions(args: argparse.Namespace) -> dict[str, str]:
    """Versions of what was measured (best effort)."""
    import oipcodec

    found = {"oipcodec": oipcodec.__version__, "numpy": np.__version__}
    if args.mlserver_python and "mlserver" in args.servers:
        done = subprocess.run(
            [args.mlserver_python, "-c", "import mlserver, numpy; "
             "print(mlserver.__version__, numpy.__version__)"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        if done.returncode == 0:
            mlserver, numpy = done.stdout.split()
            found["mlserver"], found["mlserver_numpy"] = mlserver, numpy
    return found


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="concurrency 1 and 8, few requests")
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS), help="grpc,http")
    parser.add_argument("--concurrency", help="comma-separated (default 1,2,4,8,16,32,64)")
    parser.add_argument("--requests", type=int, help="requests per count window (at least)")
    parser.add_argument("--max-batch", type=int, default=64, help="max_batch_size (default 64)")
    parser.add_argument(
        "--delay-us",
        type=int,
        default=0,
        help="max_queue_delay_microseconds (Triton, oipcodec) and max_batch_time (MLServer); "
        "default 0, Triton's: a batch takes the requests queued while the previous one ran",
    )
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="OPENBLAS/OMP/MKL_NUM_THREADS of every server (default 1; 0: leave them unset)",
    )
    parser.add_argument(
        "--per-call-ms",
        type=float,
        default=0.0,
        help="add a fixed cost per call to the model, one call at a time (default 0: the "
        "product alone)",
    )
    parser.add_argument(
        "--grpc-impl",
        choices=("grpcio", "native"),
        default="grpcio",
        help="oipcodec serve's --grpc-impl for the oipcodec servers (default grpcio)",
    )
    parser.add_argument("--stability", type=int, help="perf_analyzer's --stability-percentage")
    parser.add_argument("--max-trials", type=int, default=5, help="perf_analyzer's --max-trials")
    parser.add_argument(
        "--rounds", type=int, help="measurements of each server per concurrency (median)"
    )
    parser.add_argument("--run-timeout", type=float, default=300, help="seconds per run")
    parser.add_argument("--triton-home", default=os.environ.get("OIPCODEC_TRITON_HOME"))
    parser.add_argument("--mlserver-python", help="python of an environment with MLServer")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--keep", type=Path, help="keep repositories and server logs here")
    args = parser.parse_args(argv)
    args.servers = [s for s in args.servers.split(",") if s]
    args.protocols = [p for p in args.protocols.split(",") if p]
    for s in args.servers:
        if s not in SERVERS:
            parser.error(f"unknown server {s!r}: one of {', '.join(SERVERS)}")
    for p in args.protocols:
        if p not in PROTOCOLS:
            parser.error(f"unknown protocol {p!r}: grpc or http")
    if args.concurrency:
        args.concurrency = [int(c) for c in args.concurrency.split(",")]
    else:
        args.concurrency = list(QUICK_CONCURRENCY if args.quick else CONCURRENCY)
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.requests is None:
        args.requests = 40 if args.quick else 200
    if args.stability is None:
        # Quick: any three windows will do (a smoke run); full: within 25% of each other.
        args.stability = 1000 if args.quick else 25
    return args


def write_json(path: Path, args: argparse.Namespace, meta: dict[str, Any], rows: list[Row]) -> None:
    """The figures so far (written after every row: a long run that stops keeps them)."""
    at = TARGET_CONCURRENCY if TARGET_CONCURRENCY in args.concurrency else max(args.concurrency)
    summary = medians(rows)
    document = {
        **meta,
        "load_average_now": round(os.getloadavg()[0], 1),
        "rows": [asdict(r) for r in summary],
        "rounds_measured": [asdict(r) for r in rows],
        "ratios_at": at,
        "ratios": ratios(summary, at),
        "cpu_ratios": cpu_ratios(summary, at),
    }
    path.write_text(json.dumps(document, indent=1))


def medians(rows: list[Row]) -> list[Row]:
    """One row per server, protocol and concurrency: the median of its rounds (throughput,
    latencies and CPU each taken apart; stable when every round was)."""
    groups: dict[tuple[str, str, int], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.server, r.protocol, r.concurrency), []).append(r)
    out = []
    for (server, protocol, c), group in groups.items():
        cpu = [r.cpu_ms for r in group if r.cpu_ms is not None]
        out.append(
            Row(
                server,
                protocol,
                c,
                float(np.median([r.throughput for r in group])),
                float(np.median([r.p50_ms for r in group])),
                float(np.median([r.p90_ms for r in group])),
                float(np.median([r.p99_ms for r in group])),
                stable=all(r.stable for r in group),
                cpu_ms=float(np.median(cpu)) if cpu else None,
                round=-1,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # A terminated run stops its servers too (the context managers' exits run).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    perf_analyzer = triton_env(args.triton_home)["OIPCODEC_PERF_ANALYZER"]
    rows: list[Row] = []
    batching: dict[str, str | None] = {}
    meta: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "load_average_at_start": round(os.getloadavg()[0], 1),
        "versions": versions(args),
        "max_batch_size": args.max_batch,
        "delay_us": args.delay_us,
        "blas_threads": args.blas_threads,
        "per_call_ms": args.per_call_ms,
        "stability_percentage": args.stability,
        "rounds": args.rounds,
        "batching": batching,
    }
    cost = meta["model_ms_per_call"] = model_cost(args)
    print("the model alone, ms per call of n rows: "
          + ", ".join(f"n={n}: {ms:.2f}" for n, ms in cost.items()), flush=True)  # fmt: skip
    root = args.keep or Path(tempfile.mkdtemp(prefix="oipcodec-batching-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        # Every server runs for the whole measurement, and each concurrency is measured on
        # each of them in turn, round after round (the first server moved along each round):
        # the drift of a shared machine's load falls on all of them alike.
        with contextlib.ExitStack() as stack:
            servers = []
            for name in args.servers:
                server = stack.enter_context(serve(name, root, args))
                check_answer(server)
                batching[name] = server.batching
                status, body = http_get(f"http://{server.http}/v2", timeout=10)
                if status == 200:  # the server's own metadata: its name and version
                    about = json.loads(body)
                    meta["versions"][name] = f"{about.get('name')} {about.get('version')}"
                servers.append(server)
                print(f"{name}: ready, batching: {server.batching or 'none'}", flush=True)
            for protocol in args.protocols:
                for name in args.servers:
                    if (name, protocol) in UNSUPPORTED:
                        print(f"{name} {protocol}: not measured, {UNSUPPORTED[name, protocol]}")
                for c in args.concurrency:
                    for round_ in range(args.rounds):
                        shift = round_ % len(servers)
                        for server in servers[shift:] + servers[:shift]:
                            if (server.name, protocol) in UNSUPPORTED:
                                continue
                            row = measure(perf_analyzer, server, protocol, c, args, round_)
                            rows.append(row)
                            cpu = f", {row.cpu_ms:.2f} CPU ms/request" if row.cpu_ms else ""
                            print(f"  {protocol} c={c} {server.name}: {row.throughput:.0f}/s, "
                                  f"p99 {row.p99_ms:.1f} ms{cpu}"
                                  + ("" if row.stable else " (unstable)"), flush=True)  # fmt: skip
                            if args.json:
                                write_json(args.json, args, meta, rows)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if "oipcodec-batching" in batching and batching["oipcodec-batching"] is None:
        print("note: this oipcodec shows no dynamic_batching for the model (it ignores the "
              "config's): oipcodec-batching ran without batching")  # fmt: skip
    summary = medians(rows)
    print()
    print(table(summary, args.servers))
    print()
    print(cpu_table(summary, args.servers))
    if not all(r.stable for r in summary):
        print(f"~: no three windows within {args.stability}% (a loaded machine): any three taken")
    at = TARGET_CONCURRENCY if TARGET_CONCURRENCY in args.concurrency else max(args.concurrency)
    for protocol, against in ratios(summary, at).items():
        text = ", ".join(f"{v:.2f}x {k}" for k, v in against.items())
        print(f"oipcodec-batching at c={at} ({protocol}), requests/s: {text}")
    if args.json:
        write_json(args.json, args, meta, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
