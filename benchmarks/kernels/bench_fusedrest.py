"""The fused REST kernels (prototype, issue 45) against the general codec on the small request,
and the whole request: ``Slot.infer`` against a Python sketch of the fused path.

Decode: ``rest.decode_request`` plus the arrays by name (what ``check_inputs`` hands to
``predict``) against ``decode_inputs``; encode: ``rest.encode_response_parts`` joined (what the
REST front end sends) against ``encode_outputs``. FP32 [1, 16], JSON, as the server profile's
small request (docs/measurements.md, "The running server profiled").
"""

from __future__ import annotations

import asyncio
import time
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


@pytest.mark.parametrize("path", ["slot", "fused"])
def test_request_small(benchmark: Any, native: Any, app: Any, path: str) -> None:
    """The whole request on the native front end's Python side: ``Slot.infer`` against a
    Python sketch of the fused path (decode_inputs, predict, encode_outputs, the statistics'
    nine sums kept in a list); in C that sketch's own Python goes too."""
    from oipcodec.server.http11.fastpath import fast_path_of

    benchmark.group = "request small16 json"
    fast = fast_path_of(app)
    assert fast is not None
    slot = fast.routes[b"POST /v2/models/ident/infer"]
    model = app.pipeline.model("ident", None)
    plan = fused_plan(
        "ident", model.version, [("x", "FP32", (1, -1))], [("y", "FP32", (1, -1), False)]
    )
    sums = [0] * 9
    clock = time.perf_counter_ns

    def fused() -> tuple[int, bytes, bytes]:
        received = clock()
        arrays, request_id, _, _ = native.decode_inputs(BODY, plan)
        checked = clock()
        produced = model.predict(arrays, {})
        finished = clock()
        answer = native.encode_outputs(plan, request_id, produced)
        encoded = clock()
        sums[0] += 1
        sums[1] += encoded - received
        sums[2] += checked - received
        sums[3] += finished - checked
        sums[4] += encoded - finished
        sums[5] = received
        sums[6] += 1
        sums[7] += len(BODY)
        sums[8] += len(answer)
        return 200, b"content-length: %d\r\n" % len(answer), answer

    assert slot.infer(BODY, -1)[2] == fused()[2]  # the same answer's bytes
    if path == "slot":
        benchmark(slot.infer, BODY, -1)
    else:
        benchmark(fused)
