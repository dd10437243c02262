"""Models for the GraphPipe tests (a helper module, not a test module): served by the tests'
servers in this process or in ``oipcodec serve --model-module`` (imports nothing from tests)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from oipcodec.server import InvalidArgumentError, Model, TensorSpec
from oipcodec.testing import RunningServer, background


class Echo(Model):
    """Answers every input under its own name: any type, any shape."""

    name = "gp_echo"
    inputs = None
    outputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return dict(inputs)


class Pair(Model):
    """Two declared inputs and three outputs, so that names and selections matter."""

    name = "gp_pair"
    inputs = (TensorSpec("A", "FP32", [-1, 2]), TensorSpec("B", "BYTES", [-1]))
    outputs = (
        TensorSpec("DOUBLE", "FP32", [-1, 2]),
        TensorSpec("COUNT", "INT64", [1]),
        TensorSpec("CONFIG", "BYTES", [1]),
    )

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        if parameters.get("config") == "refuse":
            raise InvalidArgumentError("the config says refuse")
        return {
            "DOUBLE": inputs["A"] * np.float32(2),
            "COUNT": np.array([inputs["B"].size], dtype=np.int64),
            "CONFIG": np.array([str(parameters.get("config", "")).encode()], dtype=object),
        }


class Flags(Model):
    """BOOL in and out, a type GraphPipe does not have (it travels as Uint8)."""

    name = "gp_flags"
    inputs = (TensorSpec("M", "BOOL", [-1]),)
    outputs = (TensorSpec("NOT", "BOOL", [-1]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"NOT": ~inputs["M"]}


class Broken(Model):
    name = "gp_broken"
    inputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the model broke")


MODELS = [Echo(), Pair(), Flags(), Broken()]


@contextlib.contextmanager
def graphpipe_server() -> Iterator[RunningServer]:
    """These models in a server thread: REST (``/graphpipe/<model>``), no gRPC, and
    ``gp_pair`` alone on a GraphPipe port of its own."""
    with background(
        MODELS,
        process=False,
        grpc_port=None,
        graphpipe_port=0,
        graphpipe_model="gp_pair",
        log_level="critical",
    ) as running:
        yield running
