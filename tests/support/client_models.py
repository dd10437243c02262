"""Models and sample tensors for the client tests (a helper module, not a test module;
importable by the server subprocesses, which unpickle the models)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from oipcodec import Tensor, datatypes, errors
from oipcodec.server import Model
from oipcodec.server.demo import demo_models


class Sleep(Model):
    """Sleeps for parameter 'seconds' (default 2), then echoes its inputs."""

    name = "sleep"
    inputs = None
    outputs = None

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(float(parameters.get("seconds", 2.0)))
        return inputs


class Refuse(Model):
    """Raises the :class:`oipcodec.errors.RequestError` named by parameter 'error'."""

    name = "refuse"
    inputs = None
    outputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        raise getattr(errors, str(parameters["error"]))("refused as asked")


def client_models() -> list[Model]:
    return [*demo_models(), Sleep(), Refuse()]


DATATYPES = [
    "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
    "FP16", "FP32", "FP64", "BF16", "BYTES",
]  # fmt: skip


def sample(datatype: str, name: str | None = None) -> Tensor:
    """A [2, 3] tensor of ``datatype`` holding its edge values (range ends, NaN, +-inf, -0.0,
    a subnormal, empty and non-ASCII strings)."""
    name = name or f"IN_{datatype}"
    if datatype == "BYTES":
        values = [b"", b"a", "wörld".encode(), b"x" * 300, b"\x00\x01", b"end"]
        data = np.array(values, dtype=object).reshape(2, 3)
        return Tensor(name, "BYTES", (2, 3), data)
    if datatype == "BOOL":
        return Tensor(name, "BOOL", (2, 3), np.array([[True, False, True], [False, False, True]]))
    if datatype in ("FP16", "FP32", "FP64", "BF16"):
        values = np.array([[0.5, -0.0, np.inf], [-np.inf, np.nan, 1e-40]], dtype=np.float64)
        if datatype == "BF16":
            if datatypes.BF16_DTYPE is not None:
                return Tensor(name, "BF16", (2, 3), values.astype(datatypes.BF16_DTYPE))
            return Tensor(name, "BF16", (2, 3), values.astype(np.float32))
        dtype = datatypes.to_numpy(datatype)
        if datatype == "FP16":
            values[1, 2] = 1e-7  # an FP16 subnormal
        return Tensor(name, datatype, (2, 3), values.astype(dtype))
    dtype = datatypes.to_numpy(datatype)
    info = np.iinfo(dtype)
    data = np.array([[info.min, info.max, 0], [1, info.max - 1, info.min + 1]], dtype=dtype)
    return Tensor(name, datatype, (2, 3), data)


def same(sent: Tensor, got: Tensor) -> bool:
    """Same name, datatype, shape and values (bit for bit for floats; NaN is the canonical
    NaN every codec writes for these samples)."""
    if (got.name, got.datatype, tuple(got.shape)) != (sent.name, sent.datatype, sent.shape):
        return False
    if sent.datatype == "BYTES":
        return [bytes(x) for x in got.data.ravel()] == [bytes(x) for x in sent.data.ravel()]
    a = np.asarray(sent.data).reshape(sent.shape)
    b = np.asarray(got.data).reshape(sent.shape)
    if sent.datatype == "BF16":
        a, b = a.astype(np.float32), b.astype(np.float32)
    else:
        b = b.astype(a.dtype.newbyteorder("="), copy=False)
    return bool(np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                               np.ascontiguousarray(b).view(np.uint8)))  # fmt: skip
