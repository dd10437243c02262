"""The fused REST kernels against the general codec on the small request, and the whole
request: ``Slot.infer`` with the general step's code against the fused inference.

Decode: ``rest.decode_request`` plus the arrays by name (what ``check_inputs`` hands to
``predict``) against ``decode_inputs``; encode: ``rest.encode_response_parts`` joined (what the
REST front end sends) against ``encode_outputs``. FP32 [1, 16], JSON, as the server profile's
small request (docs/measurements.md, "The running server profiled").
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec import InferRequest, InferResponse, Tensor, rest
from oipcodec._shared.fusedrest import fused_plan
from oipcodec.server.model import Model, TensorSpec

ARRAY = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
REQUEST = InferRequest([Tensor("x", "FP32", (1, 16), ARRAY)])
BODY = bytearray(rest.encode_request(REQUEST, binary=False)[0])
PLAN = fused_plan("identity", "1", [("x", "FP32", (1, -1))], [("y", "FP32", (1, -1), False)])
RESPONSE = InferResponse("identity", [Tensor("y", "FP32", (1, 16), ARRAY)], model_version="1")


def _arrays(request: InferRequest) -> dict[str, Any]:
    return {t.name: t.data.reshape(t.shape) for t in request.inputs}


@pytest.mark.parametrize("path", ["rest", "fused"])
def test_decode_small(benchmark: Any, native: Any, path: str) -> None:
    benchmark.group = "decode small16 json"
    if path == "rest":
        benchmark(lambda: _arrays(rest.decode_request(BODY, None, model_name="identity")))
    else:
        benchmark(native.decode_inputs, BODY, PLAN)


@pytest.mark.parametrize("path", ["rest", "fused"])
def test_encode_small(benchmark: Any, native: Any, path: str) -> None:
    benchmark.group = "encode small16 json"
    if path == "rest":
        benchmark(lambda: b"".join(rest.encode_response_parts(RESPONSE)[0]))
    else:
        benchmark(native.encode_outputs, PLAN, None, {"y": ARRAY})


# ----------------------------------------------------------------------------- one request


class _Identity(Model):
    """The small request's model, with the declarations the fused plan needs."""

    name = "ident"
    inputs = (TensorSpec("x", "FP32", [1, -1]),)
    outputs = (TensorSpec("y", "FP32", [1, -1]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"y": inputs["x"]}


@pytest.fixture(scope="module")
def app() -> Iterator[Any]:
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    from oipcodec.server.frontends.rest_frontend import RestApp
    from oipcodec.server.registry import ModelRegistry

    registry = ModelRegistry([_Identity()])
    rest_app = RestApp(registry, manage_models=False)
    asyncio.run(registry.load_all())
    yield rest_app
    asyncio.run(registry.unload_all())
    rest_app.close()


@pytest.mark.parametrize("path", ["general", "fused"])
def test_request_small(benchmark: Any, native: Any, app: Any, path: str) -> None:
    """The whole request on the native front end's Python side, ``Slot.infer``: the general
    step's code (its fused inference turned off) against the fused inference."""
    from oipcodec.server.http11.fastpath import Slot

    benchmark.group = "request small16 json"
    slot = Slot(app, "ident", None)
    fused = slot.infer(BODY, -1)
    assert slot._fused is not None
    if path == "general":
        slot._fused = None  # kept off: the model is the one the slot saw
    general = slot.infer(BODY, -1)
    assert isinstance(general, tuple) and general == fused  # the same answer's bytes
    benchmark(slot.infer, BODY, -1)
