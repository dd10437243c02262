"""REST bodies: oipcodec.rest vs the peers' own paths, on the same bodies, one table per case.

Peers (each used only when installed; KServe and MLServer cannot share one environment: their
FastAPI pins conflict, and both register ``inference.*`` messages in protobuf's default pool):

- KServe: ``InferRequest.from_bytes`` + ``as_numpy()``; ``InferResponse.to_rest()``.
- MLServer: pydantic ``InferenceRequest.model_validate_json`` + ``NumpyCodec.decode_input``;
  ``NumpyCodec.encode_output`` + ``InferenceResponse.model_dump_json``.
- tritonclient.http: ``InferInput.set_data_from_numpy`` + ``generate_request_body``.

Our side runs through the facade (native normally; ``OIPCODEC_PURE=1`` for the twins).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oipcodec import InferRequest, InferResponse, Tensor, kernels, rest

PAYLOADS: dict[str, tuple[str, tuple[int, ...]]] = {
    "fp32_1m": ("FP32", (1, 1_000_000)),
    "image": ("FP32", (1, 3, 224, 224)),
    "small16": ("FP32", (1, 16)),
    "bytes10k": ("BYTES", (10_000,)),
}


def make_array(datatype: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(0)
    if datatype == "BYTES":
        return np.array(
            [f"item-{i}-{rng.integers(1e9)}".encode() for i in range(shape[0])], dtype=object
        )
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module", params=list(PAYLOADS))
def payload(request: pytest.FixtureRequest) -> dict[str, Any]:
    datatype, shape = PAYLOADS[request.param]
    array = make_array(datatype, shape)
    tensor = Tensor("INPUT0", datatype, shape, array)
    out: dict[str, Any] = {"name": request.param, "array": array, "tensor": tensor}
    for binary in (False, True):
        body, header = rest.encode_request(InferRequest([tensor]), binary=binary)
        out[binary] = (body, header)
    return out


def run(benchmark: Any, fn: Callable[[], Any], heavy: bool) -> None:
    # Slow paths (pure twin, peers on 1M elements) get a few rounds, not pytest-benchmark's
    # calibrated thousands, so the suite stays within minutes on two cores.
    if heavy:
        benchmark.pedantic(fn, rounds=3, iterations=1, warmup_rounds=1)
    else:
        benchmark(fn)


def heavy_payload(payload: dict[str, Any]) -> bool:
    return payload["name"] in ("fp32_1m", "image", "bytes10k")


# ----------------------------------------------------------------------------- decode request


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_decode_request_oipcodec(benchmark, payload, binary) -> None:
    body, header = payload[binary]
    benchmark.group = f"decode_request {payload['name']} {'binary' if binary else 'json'}"
    benchmark.extra_info["implementation"] = kernels.IMPLEMENTATION
    heavy = kernels.IMPLEMENTATION == "pure" and heavy_payload(payload)
    run(benchmark, lambda: rest.decode_request(body, header).inputs[0].data, heavy)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_decode_request_kserve(benchmark, payload, binary) -> None:
    infer_type = pytest.importorskip("kserve.protocol.infer_type")
    body, header = payload[binary]
    benchmark.group = f"decode_request {payload['name']} {'binary' if binary else 'json'}"

    def decode() -> Any:
        request = infer_type.InferRequest.from_bytes(body, header, "m")
        return [i.as_numpy() for i in request.inputs]

    run(benchmark, decode, heavy_payload(payload))


@pytest.mark.parametrize("binary", [False], ids=["json"])
def test_decode_request_mlserver(benchmark, payload, binary) -> None:
    # MLServer has no binary extension (it answers such bodies with a 500).
    pytest.importorskip("mlserver")
    from mlserver.codecs import NumpyCodec, StringCodec
    from mlserver.types import InferenceRequest

    body, _ = payload[binary]
    benchmark.group = f"decode_request {payload['name']} json"
    codec = StringCodec if payload["array"].dtype == object else NumpyCodec

    def decode() -> Any:
        request = InferenceRequest.model_validate_json(body)
        return [codec.decode_input(i) for i in request.inputs]

    run(benchmark, decode, heavy_payload(payload))


# ----------------------------------------------------------------------------- encode


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_encode_request_oipcodec(benchmark, payload, binary) -> None:
    benchmark.group = f"encode_request {payload['name']} {'binary' if binary else 'json'}"
    request = InferRequest([payload["tensor"]])
    heavy = kernels.IMPLEMENTATION == "pure" and heavy_payload(payload)
    run(benchmark, lambda: rest.encode_request(request, binary=binary), heavy)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_encode_request_tritonclient(benchmark, payload, binary) -> None:
    httpclient = pytest.importorskip("tritonclient.http")
    array = payload["array"]
    benchmark.group = f"encode_request {payload['name']} {'binary' if binary else 'json'}"
    datatype = payload["tensor"].datatype

    def encode() -> Any:
        tensor = httpclient.InferInput("INPUT0", list(array.shape), datatype)
        tensor.set_data_from_numpy(array, binary_data=binary)
        return httpclient.InferenceServerClient.generate_request_body([tensor])

    run(benchmark, encode, heavy_payload(payload))


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_encode_response_oipcodec(benchmark, payload, binary) -> None:
    benchmark.group = f"encode_response {payload['name']} {'binary' if binary else 'json'}"
    response = InferResponse("m", [payload["tensor"]])
    heavy = kernels.IMPLEMENTATION == "pure" and heavy_payload(payload)
    run(benchmark, lambda: rest.encode_response(response, binary=binary), heavy)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_encode_response_kserve(benchmark, payload, binary) -> None:
    infer_type = pytest.importorskip("kserve.protocol.infer_type")
    array = payload["array"]
    benchmark.group = f"encode_response {payload['name']} {'binary' if binary else 'json'}"
    datatype = payload["tensor"].datatype

    def encode() -> Any:
        output = infer_type.InferOutput("INPUT0", list(array.shape), datatype)
        output.set_data_from_numpy(array, binary_data=binary)
        return infer_type.InferResponse("r", "m", [output]).to_rest()

    run(benchmark, encode, heavy_payload(payload))


@pytest.mark.parametrize("binary", [False], ids=["json"])
def test_encode_response_mlserver(benchmark, payload, binary) -> None:
    pytest.importorskip("mlserver")
    from mlserver.codecs import NumpyCodec, StringCodec
    from mlserver.types import InferenceResponse

    array = payload["array"]
    benchmark.group = f"encode_response {payload['name']} json"
    codec = StringCodec if array.dtype == object else NumpyCodec
    # MLServer's StringCodec encodes Python str (it calls .encode on each element).
    values = [v.decode() for v in array.flat] if array.dtype == object else array

    def encode() -> Any:
        output = codec.encode_output("INPUT0", values)
        return InferenceResponse(model_name="m", outputs=[output]).model_dump_json()

    run(benchmark, encode, heavy_payload(payload))


# ----------------------------------------------------------------------------- round trip


def test_small_request_round_trip_oipcodec(benchmark) -> None:
    """Per-call overhead: a 1x16 FP32 request and its response, encoded and decoded."""
    benchmark.group = "round trip small16 json"
    tensor = Tensor.from_array("INPUT0", np.arange(16, dtype=np.float32).reshape(1, 16))

    def round_trip() -> Any:
        body, header = rest.encode_request(InferRequest([tensor], id="1"), binary=False)
        request = rest.decode_request(body, header)
        body, header = rest.encode_response(InferResponse("m", request.inputs, id=request.id))
        return rest.decode_response(body, header)

    benchmark(round_trip)
