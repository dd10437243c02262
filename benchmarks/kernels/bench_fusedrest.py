"""The fused REST kernels (prototype, issue 45) against the general codec on the small request.

Decode: ``rest.decode_request`` plus the arrays by name (what ``check_inputs`` hands to
``predict``) against ``decode_inputs``; encode: ``rest.encode_response_parts`` joined (what the
REST front end sends) against ``encode_outputs``. FP32 [1, 16], JSON, as the server profile's
small request (docs/measurements.md, "The running server profiled").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oipcodec import InferRequest, InferResponse, Tensor, rest
from oipcodec._shared.fusedrest import fused_plan

ARRAY = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
REQUEST = InferRequest([Tensor("x", "FP32", (1, 16), ARRAY)])
BODY = bytearray(rest.encode_request(REQUEST, binary=False)[0])
PLAN = fused_plan("identity", "1", [("x", "FP32", (1, -1))], [("y", "FP32")])
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
