"""One implementation's measurements, run in a subprocess of ``oipcodec bench``.

    python -m oipcodec.bench.worker '<spec as JSON>'

The parent sets ``OIPCODEC_PURE`` in this process's environment, so the kernels chosen here
(and in the embedded server this process starts, which inherits the environment) are the
implementation being measured. Progress and results go to stdout as JSON lines; the process
exits when its stdin closes (the parent is gone) or on SIGTERM, stopping its server.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from oipcodec import kernels
from oipcodec.bench.load import run_load, time_call
from oipcodec.bench.paths import (
    PATHS,
    OurClients,
    codec_only,
    codec_ops,
    make_caller,
    release,
    same_values,
    supported,
)
from oipcodec.bench.payloads import Payload, make_tensor
from oipcodec.bench.peers import SERVER_PEERS
from oipcodec.raw import array_to_raw

__all__ = ["main"]

_out_lock = threading.Lock()


def emit(event: dict[str, Any]) -> None:
    with _out_lock:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()


def _exit_when_orphaned() -> None:
    """The parent holds our stdin open; EOF means it is gone, so stop at once (the server
    subprocess notices our exit on its own pipe and stops too)."""
    try:
        while sys.stdin.buffer.read(1024):
            pass
    except (OSError, ValueError):
        pass
    os._exit(3)


@contextlib.contextmanager
def _server(spec: dict[str, Any]) -> Iterator[tuple[str | None, str | None]]:
    if spec.get("url") or spec.get("grpc_target") or spec["implementation"] in SERVER_PEERS:
        # A peer server's codec is timed in-process: ours would not be measured.
        yield spec.get("url"), spec.get("grpc_target")
        return
    from oipcodec.bench.paths import v1_models
    from oipcodec.server.demo import demo_models
    from oipcodec.testing import background

    # 127.0.0.1 only; free ports; stopped when the block exits (error and SIGTERM included).
    # The shared-memory extension is on, for the shm path (regions of this process only).
    # The v1 paths' typed identity models join the demo models.
    models = [*demo_models(), *v1_models()]
    with background(models, host="127.0.0.1", timeout=120.0, shared_memory="system") as server:
        yield server.http_url, server.grpc_address


def _measure(spec: dict[str, Any], url: str | None, target: str | None) -> None:
    implementation: str = spec["implementation"]
    model: str = spec["model"]
    timeout: float = spec["timeout"]
    levels: list[int] = spec["concurrency"]
    ours = None
    if implementation != "tritonclient" and (url or target):
        ours = OurClients(url, target, max(levels), timeout)
    try:
        for item in spec["payloads"]:
            payload = Payload(item["name"], item["datatype"], tuple(item["shape"]), "")
            tensor = make_tensor(payload)
            payload_bytes = len(array_to_raw(tensor.data, tensor.datatype))
            for path_name in spec["paths"]:
                path = PATHS[path_name]
                record: dict[str, Any] = {
                    "payload": payload.name,
                    "path": path.name,
                    "implementation": implementation,
                    "payload_bytes": payload_bytes,
                    "load": [],
                    "error": None,
                }
                reason = supported(implementation, path, payload.datatype)
                if reason is not None:  # a record all the same: the table says why not
                    emit({"event": "result", "record": {**record, "unsupported": reason}})
                    continue
                label = f"{implementation} {payload.name} {path.name}"
                no_load = codec_only(implementation, path, url, target)
                if no_load is None and (
                    (path.protocol == "rest" and not url)
                    or (path.protocol == "grpc" and not target)
                ):
                    record["error"] = f"no {'URL' if path.protocol == 'rest' else 'gRPC target'}"
                    emit({"event": "step", "label": label, "steps": len(levels) + 1})
                    emit({"event": "result", "record": record})
                    continue
                try:
                    ops = codec_ops(implementation, path, model, tensor)
                    budget = spec["codec_budget"]
                    codec = {
                        name: time_call(call, budget) * 1e6
                        for name, call in (
                            ("client_encode", ops.client_encode),
                            ("client_decode", ops.client_decode),
                            ("server_decode", ops.server_decode),
                            ("server_encode", ops.server_encode),
                        )
                        if call is not None
                    }
                    if "client_encode" in codec:
                        codec["client"] = codec["client_encode"] + codec["client_decode"]
                    if "server_decode" in codec:
                        codec["server"] = codec["server_decode"] + codec["server_encode"]
                    if path.shared_memory:  # what shm is measured against: one memcpy
                        codec["memcpy"] = _memcpy_us(payload_bytes, budget)
                    record["codec_us"] = codec
                    record["request_bytes"] = ops.request_bytes
                    record["response_bytes"] = ops.response_bytes
                except Exception as exc:
                    record["error"] = f"codec: {type(exc).__name__}: {exc}"[:500]
                emit({"event": "step", "label": f"{label} codec"})
                if no_load is not None:
                    record["codec_only"] = no_load
                    emit({"event": "result", "record": record})
                    continue
                if record["error"] is None:
                    record["error"] = _check(implementation, path, model, tensor, ours, url,
                                             target, timeout)  # fmt: skip
                for level in levels:
                    if record["error"] is None:

                        def factory(path: Any = path, tensor: Any = tensor) -> Any:
                            return make_caller(
                                implementation, path, model, tensor, ours, url, target, timeout
                            )

                        result = run_load(
                            factory, level, spec["duration"], spec["max_requests"], timeout
                        )
                        summary = result.summary(payload_bytes)
                        record["load"].append(summary)
                        if result.first_error and not result.requests:
                            record["error"] = result.first_error
                    emit({"event": "step", "label": f"{label} c={level}"})
                emit({"event": "result", "record": record})
    finally:
        if ours is not None:
            ours.close()
        release()


def _memcpy_us(size: int, budget: float) -> float:
    """Microseconds of one copy of ``size`` bytes between two arrays (numpy copyto)."""
    source = np.ones(size, np.uint8)
    target = np.empty_like(source)
    return time_call(lambda: np.copyto(target, source), budget) * 1e6


def _check(implementation: str, path: Any, model: str, tensor: Any, ours: Any,
           url: str | None, target: str | None, timeout: float) -> str | None:  # fmt: skip
    """Send the payload once: None when the answer holds the same values, else why not (an
    error or a wrong answer is reported, not measured as a fast path)."""
    try:
        caller = make_caller(implementation, path, model, tensor, ours, url, target, timeout)
        answer = caller()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"[:500]
    if not same_values(tensor, answer):
        return "the answer does not hold the values sent"
    return None


def _peer_version(implementation: str) -> str | None:
    """The installed version of a peer (results.json keeps it), None for oipcodec's own."""
    if implementation in ("native", "pure"):
        return None
    try:
        return importlib.metadata.version(implementation)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(args[0])

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    threading.Thread(target=_exit_when_orphaned, daemon=True).start()
    emit({"event": "start", "implementation": spec["implementation"],
          "kernels": kernels.IMPLEMENTATION, "pid": os.getpid(),
          "peer_version": _peer_version(spec["implementation"])})  # fmt: skip
    started = time.perf_counter()
    try:
        with _server(spec) as (url, target):
            emit({"event": "server", "url": url, "grpc_target": target,
                  "seconds": time.perf_counter() - started})  # fmt: skip
            _measure(spec, url, target)
    except KeyboardInterrupt:
        emit({"event": "interrupted"})
        return 130
    emit({"event": "done", "seconds": time.perf_counter() - started})
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: the thread watching stdin would hold its lock through interpreter
    # shutdown. Everything to clean up (the server) is already stopped here.
    os._exit(status)
