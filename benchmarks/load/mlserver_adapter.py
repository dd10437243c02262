"""MLServer with and without ``oipcodec.compat.mlserver``: requests/s on the same identity model.

    python benchmarks/load/mlserver_adapter.py [--rounds 3] [--seconds 10] [--python PATH]

Two real ``mlserver start`` servers on free 127.0.0.1 ports, MLServer's defaults otherwise
(one parallel inference worker): one whose runtime never imports oipcodec (MLServer as it
ships: the request's data handed back), one whose runtime is docs/compat.md's recipe
(``install()`` at import, the ``oip`` codec). The same closed-loop load on each, alternating
rounds: ``CONNECTIONS`` keep-alive connections from threads of this process, each sending the
same body as soon as the answer is in, for ``--seconds`` (and at most ``MAX_REQUESTS``).
The server's CPU per request (its process and inference workers, from /proc) is given too: on
a machine shared with other work it moves far less than the rate. Cases: an image
``[1, 224, 224, 3]`` FP32 and a small ``[1, 16]`` FP32, as JSON. MLServer runs in the
interpreter ``--python`` names (it cannot share an environment with KServe, see
pyproject.toml), by default ``$OIPCODEC_MLSERVER_PYTHON`` or this one if it has MLServer.
``run_mlserver`` gives the rows to benchmarks/load/adapters.py.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from oipcodec import InferRequest, Tensor, rest

CONNECTIONS = 8
MAX_REQUESTS = 200_000
STARTUP_SECONDS = 180.0

STOCK_RUNTIME = """
from mlserver import MLModel
from mlserver.types import InferenceResponse, ResponseOutput


class Identity(MLModel):
    async def predict(self, payload):
        return InferenceResponse(model_name=self.name, outputs=[
            ResponseOutput(name=i.name, shape=i.shape, datatype=i.datatype, data=i.data)
            for i in payload.inputs])
"""

ADAPTER_RUNTIME = """
from mlserver import MLModel
from oipcodec.compat import mlserver as oip_mlserver

oip_mlserver.install()


class Identity(MLModel):
    async def predict(self, payload):
        arrays = self.decode_request(payload)
        response = oip_mlserver.OIPRequestCodec.encode_response(self.name, arrays, self.version)
        for output in response.outputs:
            output.shape = list(arrays[output.name].shape)
        return response
"""


def mlserver_python(given: str | None = None) -> str | None:
    """The interpreter that runs MLServer: ``given``, ``$OIPCODEC_MLSERVER_PYTHON``, or this
    one when it can import mlserver; None when there is none."""
    python = given or os.environ.get("OIPCODEC_MLSERVER_PYTHON")
    if python:
        return python
    return sys.executable if importlib.util.find_spec("mlserver") is not None else None


def bodies() -> dict[str, bytes]:
    """The JSON request bodies, as oipcodec's client writes them, by case."""
    rng = np.random.default_rng(0)
    cases = {
        "image JSON": rng.standard_normal((1, 224, 224, 3)).astype(np.float32),
        "small JSON": np.arange(16, dtype=np.float32).reshape(1, 16),
    }
    out = {}
    for case, array in cases.items():
        body, _ = rest.encode_request(
            InferRequest([Tensor.from_array("INPUT0", array)]), binary=False
        )
        out[case] = body
    return out


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _status(port: int, path: str) -> int | None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except OSError:
        return None
    finally:
        connection.close()


@contextlib.contextmanager
def mlserver(python: str, runtime: str, root: Path) -> Iterator[tuple[int, int]]:
    """``mlserver start`` of model ``identity`` with ``runtime``; yields its REST port and
    process id once the model is ready; always stopped."""
    root.mkdir(parents=True)
    http_port, grpc_port = _free_ports(2)
    (root / "runtime.py").write_text(runtime)
    (root / "settings.json").write_text(json.dumps({
        "host": "127.0.0.1", "http_port": http_port, "grpc_port": grpc_port,
        "metrics_endpoint": None, "load_models_at_startup": True}))  # fmt: skip
    (root / "identity").mkdir()
    settings = {"name": "identity", "implementation": "runtime.Identity"}
    if "oip_mlserver" in runtime:
        settings["parameters"] = {"content_type": "oip"}  # type: ignore[assignment]
    (root / "identity" / "model-settings.json").write_text(json.dumps(settings))
    env = dict(os.environ, PYTHONPATH=str(root))
    command = [python, "-c", "from mlserver.cli.main import main; main()", "start", str(root)]
    with (root / "mlserver.log").open("w") as log:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while _status(http_port, "/v2/models/identity/ready") != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mlserver did not start: {(root / 'mlserver.log').read_text()}")
            time.sleep(0.5)
        yield http_port, process.pid
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` and its descendants (the
    server and its inference workers), from /proc."""
    stats: dict[int, tuple[int, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += stats.get(current, (0, 0.0))[1]
        todo.extend(child for child, (parent, _) in stats.items() if parent == current)
    return total


def load(port: int, body: bytes, seconds: float, connections: int = CONNECTIONS,
         pid: int | None = None) -> tuple[float, float]:  # fmt: skip
    """Closed-loop load: requests/s answered 200 (any other status stops the run), and the
    server's CPU milliseconds per request (process ``pid`` and its descendants; NaN without
    ``pid``), which other work on the machine does not move as it moves the rate."""
    path = "/v2/models/identity/infer"
    headers = {"Content-Type": "application/json"}
    stop = time.monotonic() + seconds
    counts = [0] * connections
    errors: list[str] = []

    def worker(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            while time.monotonic() < stop and sum(counts) < MAX_REQUESTS and not errors:
                connection.request("POST", path, body, headers)
                answer = connection.getresponse()
                data = answer.read()
                if answer.status != 200:
                    errors.append(f"HTTP {answer.status}: {data[:300]!r}")
                    return
                counts[index] += 1
        finally:
            connection.close()

    cpu = tree_cpu(pid) if pid is not None else float("nan")
    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - start
    if errors:
        raise RuntimeError(errors[0])
    done = sum(counts)
    if pid is not None:
        cpu = tree_cpu(pid) - cpu
    return done / elapsed, 1e3 * cpu / max(done, 1)


def run_mlserver(rounds: int = 3, seconds: float = 10.0, python: str | None = None
                 ) -> list[dict[str, Any]]:  # fmt: skip
    """One row per (case, round): requests/s of stock MLServer and of MLServer with the
    adapter, measured one after the other (the order alternating by round)."""
    interpreter = mlserver_python(python)
    if interpreter is None:
        raise RuntimeError(
            "no interpreter with mlserver: give --python or OIPCODEC_MLSERVER_PYTHON"
        )
    rows = []
    with tempfile.TemporaryDirectory(prefix="oipcodec-mlserver-") as tmp, \
            mlserver(interpreter, STOCK_RUNTIME, Path(tmp) / "stock") as stock, \
            mlserver(interpreter, ADAPTER_RUNTIME, Path(tmp) / "adapter") as adapter:  # fmt: skip
        for case, body in bodies().items():
            for port, _ in (stock, adapter):  # warm-up, and a check that both answer
                load(port, body, 1.0, 1)
            for round_ in range(rounds):
                order = [("stock", stock), ("adapter", adapter)]
                if round_ % 2:
                    order.reverse()
                rate: dict[str, Any] = {"peer": "MLServer", "case": case, "round": round_ + 1,
                                        "unit": "req/s", "better": "higher"}  # fmt: skip
                cost = dict(rate, case=f"{case}, server CPU", unit="server CPU ms/request",
                            better="lower")  # fmt: skip
                for mode, (port, pid) in order:
                    rate[mode], cost[mode] = load(port, body, seconds, pid=pid)
                rows += [rate, cost]
    return rows


def _ratio(row: dict[str, Any]) -> float:
    """How many times better the adapter is in ``row``; NaN when a figure is zero (a round
    too short to count: nothing answered, or less CPU than a clock tick)."""
    better, worse = (row["adapter"], row["stock"]) if row["better"] == "higher" else (
        row["stock"], row["adapter"])  # fmt: skip
    return float(better / worse) if worse else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--python", default=None, help="the interpreter that has mlserver")
    args = parser.parse_args()
    rows = run_mlserver(args.rounds, args.seconds, args.python)
    for row in rows:
        print(f"{row['case']} round {row['round']}: stock {row['stock']:.2f}, "
              f"adapter {row['adapter']:.2f} {row['unit']}")  # fmt: skip
    for case in dict.fromkeys(r["case"] for r in rows):
        mine = [r for r in rows if r["case"] == case]
        ratio = statistics.median(_ratio(r) for r in mine)
        print(f"{case}: the adapter {ratio:.2f}x better (median of rounds)")


if __name__ == "__main__":
    main()
