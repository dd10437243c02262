"""The demo models, named and shaped like Triton's examples so tritonclient's examples run
unchanged against ``oipcodec serve``: ``simple``, ``simple_string``, ``identity``, ``add_sub``,
``simple_identity`` and ``simple_int8`` (docs/serving.md lists what each computes), and the
Python backend's decoupled examples ``square_int32`` and ``repeat_int32`` (docs/streaming.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from oipcodec.errors import InvalidArgumentError
from oipcodec.server.model import Arrays, Model, TensorSpec
from oipcodec.types import Parameters

__all__ = [
    "AddSub",
    "Identity",
    "RepeatInt32",
    "Simple",
    "SimpleIdentity",
    "SimpleInt8",
    "SimpleString",
    "SquareInt32",
    "demo_models",
]


class Simple(Model):
    name = "simple"
    platform = "oipcodec_python"
    max_batch_size = 8
    inputs = (TensorSpec("INPUT0", "INT32", [-1, 16]), TensorSpec("INPUT1", "INT32", [-1, 16]))
    outputs = (TensorSpec("OUTPUT0", "INT32", [-1, 16]), TensorSpec("OUTPUT1", "INT32", [-1, 16]))

    def predict(self, inputs: Arrays, parameters: Parameters) -> dict[str, Any]:
        a, b = _same_shape(self.name, inputs)
        return {"OUTPUT0": a + b, "OUTPUT1": a - b}


class SimpleString(Model):
    name = "simple_string"
    platform = "oipcodec_python"
    max_batch_size = 8
    inputs = (TensorSpec("INPUT0", "BYTES", [-1, 16]), TensorSpec("INPUT1", "BYTES", [-1, 16]))
    outputs = (TensorSpec("OUTPUT0", "BYTES", [-1, 16]), TensorSpec("OUTPUT1", "BYTES", [-1, 16]))

    def predict(self, inputs: Arrays, parameters: Parameters) -> dict[str, Any]:
        a, b = _same_shape(self.name, inputs)
        a, b = _integers(a, "INPUT0"), _integers(b, "INPUT1")
        return {"OUTPUT0": _decimal(a + b), "OUTPUT1": _decimal(a - b)}


def _same_shape(model: str, inputs: Arrays) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    a, b = inputs["INPUT0"], inputs["INPUT1"]
    if a.shape != b.shape:
        raise InvalidArgumentError(
            f"model '{model}' needs INPUT0 and INPUT1 of one shape, got {list(a.shape)} "
            f"and {list(b.shape)}"
        )
    return a, b


def _integers(elements: np.ndarray[Any, Any], name: str) -> np.ndarray[Any, Any]:
    try:
        return np.array([int(e) for e in elements.ravel()], dtype=np.int64).reshape(elements.shape)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgumentError(
            f"input '{name}' of model 'simple_string' must hold decimal integers"
        ) from None


def _decimal(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.array([str(v).encode() for v in values.ravel().tolist()], dtype=object).reshape(
        values.shape
    )


class Identity(Model):
    name = "identity"
    platform = "oipcodec_python"
    inputs = None
    outputs = None

    def predict(self, inputs: Arrays, parameters: Parameters) -> Arrays:
        return inputs


class AddSub(Model):
    name = "add_sub"
    platform = "oipcodec_python"
    inputs = (TensorSpec("INPUT0", "FP32", [-1]), TensorSpec("INPUT1", "FP32", [-1]))
    outputs = (TensorSpec("OUTPUT0", "FP32", [-1]), TensorSpec("OUTPUT1", "FP32", [-1]))

    def predict(self, inputs: Arrays, parameters: Parameters) -> dict[str, Any]:
        a, b = _same_shape(self.name, inputs)
        return {"OUTPUT0": a + b, "OUTPUT1": a - b}


class SimpleIdentity(Model):
    name = "simple_identity"
    platform = "oipcodec_python"
    max_batch_size = 8
    inputs = (TensorSpec("INPUT0", "BYTES", [-1, -1]),)
    outputs = (TensorSpec("OUTPUT0", "BYTES", [-1, -1]),)

    def predict(self, inputs: Arrays, parameters: Parameters) -> dict[str, Any]:
        return {"OUTPUT0": inputs["INPUT0"]}


class SimpleInt8(Model):
    name = "simple_int8"
    platform = "oipcodec_python"
    max_batch_size = 8
    inputs = (TensorSpec("INPUT0", "INT8", [-1, 16]), TensorSpec("INPUT1", "INT8", [-1, 16]))
    outputs = (TensorSpec("OUTPUT0", "INT8", [-1, 16]), TensorSpec("OUTPUT1", "INT8", [-1, 16]))

    def predict(self, inputs: Arrays, parameters: Parameters) -> dict[str, Any]:
        a, b = _same_shape(self.name, inputs)
        # numpy's int8 arithmetic on arrays wraps around, as the C++ model's does.
        return {"OUTPUT0": a + b, "OUTPUT1": a - b}


class SquareInt32(Model):
    """Triton's decoupled example: IN = n answers n responses, each OUT = n (none for n <= 0)."""

    name = "square_int32"
    platform = "oipcodec_python"
    inputs = (TensorSpec("IN", "INT32", [1]),)
    outputs = (TensorSpec("OUT", "INT32", [1]),)

    async def predict(self, inputs: Arrays, parameters: Parameters) -> AsyncIterator[Arrays]:
        n = inputs["IN"]
        for _ in range(int(n[0])):
            yield {"OUT": n}


class RepeatInt32(Model):
    """Triton's decoupled example: a response per element of IN (OUT = IN[i], IDX = i), each
    after DELAY[i] milliseconds; WAIT is read and not waited for here (Triton's model holds
    its execute for it while another thread sends the responses)."""

    name = "repeat_int32"
    platform = "oipcodec_python"
    inputs = (
        TensorSpec("IN", "INT32", [-1]),
        TensorSpec("DELAY", "UINT32", [-1]),
        TensorSpec("WAIT", "UINT32", [1]),
    )
    outputs = (TensorSpec("OUT", "INT32", [1]), TensorSpec("IDX", "UINT32", [1]))

    async def predict(self, inputs: Arrays, parameters: Parameters) -> AsyncIterator[Arrays]:
        values, delays = inputs["IN"], inputs["DELAY"]
        if values.shape != delays.shape:
            raise InvalidArgumentError(
                f"expected IN and DELAY shape to match, got {list(values.shape)} and "
                f"{list(delays.shape)}."
            )
        for index in range(values.size):
            if delays[index]:
                await asyncio.sleep(int(delays[index]) / 1000)
            yield {
                "OUT": values[index : index + 1],
                "IDX": np.array([index], dtype=np.uint32),
            }


def demo_models() -> list[Model]:
    """A fresh instance of every demo model."""
    return [
        Simple(),
        SimpleString(),
        Identity(),
        AddSub(),
        SimpleIdentity(),
        SimpleInt8(),
        SquareInt32(),
        RepeatInt32(),
    ]
