"""Models for the ``oipcodec bench --model`` tests (a helper module, not a test module; it
imports nothing from ``tests``): the harness must build their requests from their metadata."""

from __future__ import annotations

import os
import sys
import threading
import time
from types import FrameType
from typing import Any

import numpy as np

from oipcodec.server import Model, TensorSpec


class Score(Model):
    """Two inputs of different datatypes and a variable dimension: token ids (INT32, any
    number of rows of 4) weighted by FP32 weights; a BYTES label per row."""

    name = "score"
    inputs = (TensorSpec("IDS", "INT32", [-1, 4]), TensorSpec("WEIGHTS", "FP32", [4]))
    outputs = (TensorSpec("SCORE", "FP32", [-1]), TensorSpec("LABEL", "BYTES", [-1]))

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        ids, weights = inputs["IDS"], inputs["WEIGHTS"]
        score = (ids.astype(np.float32) * weights).sum(axis=1).astype(np.float32)
        labels = np.array([b"high" if s > 0 else b"low" for s in score], dtype=object)
        return {"SCORE": score, "LABEL": labels}


class Batched(Model):
    """A batching model (max_batch_size 4): its metadata shows the batch dimension as -1."""

    name = "batched"
    max_batch_size = 4
    inputs = (TensorSpec("X", "FP16", [-1, 3]), TensorSpec("TEXT", "BYTES", [-1, 1]))
    outputs = (TensorSpec("Y", "FP16", [-1, 3]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"Y": inputs["X"] * np.float16(2)}


class Broken(Model):
    """Fails every request with a message the benchmark table must show."""

    name = "broken"
    inputs = (TensorSpec("X", "FP32", [2]),)
    outputs = (TensorSpec("Y", "FP32", [2]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the weights file is missing (bench test)")


class Renamed(Model):
    """An identity that declares nothing and names its one output itself, as MLServer's
    codecs do (``output-0``): the bench takes it as the input echoed."""

    name = "renamed"
    inputs = None
    outputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        (value,) = inputs.values()
        return {"output-0": value}


#: One request at a time in a server process (made at import, so in the server's own).
_ONE_AT_A_TIME = threading.Lock()


class Slow(Model):
    """50 ms per request, one at a time: a server whose capacity is 20 requests/s."""

    name = "slow"
    inputs = (TensorSpec("X", "FP32", [2]),)
    outputs = (TensorSpec("Y", "FP32", [2]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        with _ONE_AT_A_TIME:
            time.sleep(0.05)
        return {"Y": inputs["X"]}


class FrontEnds(Model):
    """An identity that appends to the file named by ``OIPCODEC_TEST_FRONT_ENDS`` a line per
    kind of call: the server's kernels (its ``OIPCODEC_PURE``) and the server's front-end
    modules on the stack of ``predict`` (the native HTTP/1.1 front end's ``fastpath``, the
    native gRPC server's ``h2.grpc_server``, oipcodec's protocol's ``cycle``): which front
    ends the embedded server of ``oipcodec bench`` runs."""

    name = "front_ends"
    inputs = (TensorSpec("X", "FP32", [4]),)
    outputs = (TensorSpec("Y", "FP32", [4]),)
    _PREFIXES = ("oipcodec.server.http11.", "oipcodec.server.h2.", "oipcodec.server.frontends.")

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        modules: list[str] = []
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            if module.startswith(self._PREFIXES) and module not in modules:
                modules.append(module)
            frame = frame.f_back
        line = f"{os.environ.get('OIPCODEC_PURE', '0')} {' '.join(modules)}\n"
        if line not in self.seen and os.environ.get("OIPCODEC_TEST_FRONT_ENDS"):
            self.seen.add(line)
            with open(os.environ["OIPCODEC_TEST_FRONT_ENDS"], "a") as out:
                out.write(line)
        return {"Y": inputs["X"]}


def bench_models() -> list[Model]:
    """The models of the ``oipcodec bench --model`` tests."""
    return [Score(), Batched(), Broken(), Renamed(), FrontEnds()]


#: What ``oipcodec serve --model-module`` serves from this module.
MODELS = bench_models


def sleeper_callers(seconds: float) -> tuple[Any, Any]:
    """A load process's callers that sleep ``seconds`` a request (the load tests' build)."""

    def factory() -> Any:
        return lambda: time.sleep(seconds)

    return factory, lambda: None
