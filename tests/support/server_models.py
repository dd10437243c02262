"""Models for the server tests (a helper module, not a test module): importable by the
server subprocesses, which unpickle them, and by ``oipcodec serve --model-module``."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from oipcodec.server import InvalidArgumentError, Model, TensorSpec
from oipcodec.server.demo import demo_models


class Scale(Model):
    """One input, so it takes Triton's raw binary request; multiplies by parameter 'factor'."""

    name = "scale"
    inputs = (TensorSpec("X", "FP32", [-1, 4]),)
    outputs = (TensorSpec("Y", "FP32", [-1, 4]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        factor = parameters.get("factor", 2.0)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)):
            raise InvalidArgumentError("parameter 'factor' must be a number")
        assert "binary_data_output" not in parameters  # transport parameters are removed
        return {"Y": inputs["X"] * np.float32(factor)}


class Failing(Model):
    name = "failing"
    inputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the model broke")


class BadOutput(Model):
    """Declares INT32 and returns float64 halves, which INT32 cannot hold: a model bug,
    answered 500."""

    name = "bad_output"
    inputs = None
    outputs = (TensorSpec("OUT", "INT32", [-1]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"OUT": np.full(3, 0.5)}


class AsyncEcho(Model):
    name = "async_echo"
    inputs = None
    outputs = None

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {f"{k}_OUT": v for k, v in inputs.items()}


class Threaded(Model):
    """Runs in a worker thread and says which one."""

    name = "threaded"
    inputs = None
    outputs = None
    run_in_thread = True

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        main = threading.current_thread() is threading.main_thread()
        return {"MAIN_THREAD": np.array([main])}


class BrokenLoad(Model):
    name = "broken_load"
    inputs = None

    def load(self) -> None:
        raise OSError("weights not found")


class Counter(Model):
    """Two versions: the answer says which one ran."""

    name = "counter"
    inputs = None
    outputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"VERSION": np.array([int(self.version)], dtype=np.int64)}


class Pid(Model):
    """Answers the serving process id (to see --workers spread the load)."""

    name = "pid"
    inputs = None
    outputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"PID": np.array([os.getpid()], dtype=np.int64)}


class Batched(Model):
    """A batching model (max_batch_size 4) with configuration parameters: Y = 2 * X."""

    name = "batched"
    inputs = (TensorSpec("X", "FP32", [-1, 3]),)
    outputs = (TensorSpec("Y", "FP32", [-1, 3]), TensorSpec("LABEL", "BYTES", [-1]))
    max_batch_size = 4
    config_parameters: Mapping[str, str] = {"origin": "tests", "unit": "none"}

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        x = inputs["X"]
        return {"Y": x * 2, "LABEL": np.array([b"row"] * x.shape[0], dtype=object)}


def all_models() -> list[Model]:
    return [
        *demo_models(),
        Scale(),
        Failing(),
        BadOutput(),
        AsyncEcho(),
        Threaded(),
        Pid(),
        BrokenLoad(),
        Counter(version="1"),
        Counter(version="2"),
        Counter(name="counter_text", version="10"),
        Counter(name="counter_text", version="9"),
        Batched(),
    ]


MODELS = all_models
