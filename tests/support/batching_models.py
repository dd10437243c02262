"""Models that batch dynamically, for tests/server/inference/test_batching.py (a helper module, not a
test module: the server subprocesses unpickle them). Every answer carries ``BATCH``, the rows
of the batch it ran in, so a test sees the batching from the client's side."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from oipcodec.server import DynamicBatching, Model, TensorSpec

#: Seconds each predict takes: long enough that concurrent requests queue behind it.
PREDICT_SECONDS = 0.05


class Rows(Model):
    """Any inputs; answers ``OUT_<name>`` (the input's rows as they came) for each, and
    ``BATCH``. A request with parameter ``fail`` makes its batch's predict raise."""

    name = "rows"
    inputs = None
    outputs = None
    max_batch_size = 64
    dynamic_batching = DynamicBatching(max_queue_delay_microseconds=20_000)

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(PREDICT_SECONDS)
        if parameters.get("fail"):
            raise RuntimeError("asked to fail")
        rows = next(iter(inputs.values())).shape[0]
        answer = {f"OUT_{name}": array for name, array in inputs.items()}
        answer["BATCH"] = np.full(rows, rows, np.int32)
        return answer


class Checked(Model):
    """Declared FP32 [-1, 4] input; runs in a worker thread (as a numpy model would)."""

    name = "checked"
    inputs = (TensorSpec("X", "FP32", [-1, 4]),)
    outputs = (TensorSpec("Y", "FP32", [-1, 4]), TensorSpec("BATCH", "INT32", [-1]))
    max_batch_size = 16
    run_in_thread = True
    dynamic_batching = DynamicBatching(20_000, preferred_batch_size=[16])

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        import time

        time.sleep(PREDICT_SECONDS)
        x = inputs["X"]
        return {"Y": x * 2, "BATCH": np.full(len(x), len(x), np.int32)}


class ShortOutput(Model):
    """Returns one row fewer than its batch: an error naming the model."""

    name = "short"
    inputs = (TensorSpec("X", "FP32", [-1, 2]),)
    outputs = None
    max_batch_size = 8
    dynamic_batching = DynamicBatching()

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"Y": inputs["X"][1:]}


MODELS = [Rows(), Checked(), ShortOutput()]
