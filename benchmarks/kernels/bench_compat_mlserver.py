"""MLServer's request decode before and after oipcodec.compat.mlserver, one group per case.

"mlserver" is MLServer 1.7's own path, "oipcodec" what the adapter does instead, on the same
payload (the kernels of the facade: native normally, ``OIPCODEC_PURE=1`` for the twins):

- ``rest_fp32_1m``: a JSON body of one 1M-element FP32 input to arrays. MLServer: orjson.loads
  (its Request.json) + pydantic ``InferenceRequest.model_validate`` (what FastAPI does with the
  route's body) + ``NumpyCodec.decode_input``. oipcodec: ``rest.decode_request`` +
  ``to_mlserver_request`` + ``OIPCodec.decode_input`` (what the installed REST route does).
- ``decode_input_fp32_1m``: the codec alone, on the RequestInput MLServer's REST path made
  (data a list of 1M Python floats): ``NumpyCodec.decode_input`` vs ``OIPCodec.decode_input``.
- ``rest_bytes_100k`` / ``decode_input_bytes_100k``: the same for 100k short BYTES strings.
- ``grpc_raw_fp32_1m`` / ``grpc_raw_bytes_100k``: ``raw_input_contents`` to an array.
  MLServer: ``mlserver.raw.inject_raw`` (struct.unpack into a list) + ``NumpyCodec``;
  oipcodec: the installed converter (``raw_to_array``) + ``OIPCodec``.
- ``grpc_raw_out_fp32_1m``: an output to ``raw_output_contents``. MLServer: NumpyCodec's list
  packed by ``mlserver.raw.extract_raw`` (struct.pack); oipcodec: the array-backed output
  packed by the installed converter.
- ``rest_out_fp32_1m``: an output to a JSON response body. MLServer: ``NumpyCodec.encode_output``
  + ``InferenceResponse.model_dump`` + its ``encode_to_json_bytes`` (orjson); oipcodec: the
  array-backed output + ``from_mlserver_response`` + ``rest.encode_response``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import InferRequest, Tensor, rest
from oipcodec.compat import mlserver as compat
from oipcodec.raw import array_to_raw

pytest.importorskip("mlserver")
ml_codecs = pytest.importorskip("mlserver.codecs")
ml_types = pytest.importorskip("mlserver.types")
ml_raw = pytest.importorskip("mlserver.raw")
ml_json = pytest.importorskip("mlserver.codecs.json")
ml_converters = pytest.importorskip("mlserver.grpc.converters")

NumpyCodec = ml_codecs.NumpyCodec
OIPCodec, _ = compat.codecs()
compat.install_grpc()
ours_inject_raw = ml_converters.inject_raw
ours_extract_raw = ml_converters.extract_raw

FP32 = np.random.default_rng(0).standard_normal((1, 1_000_000)).astype(np.float32)
BYTES = np.array([f"item-{i}-{i * 7919 % 100_003}".encode() for i in range(100_000)], dtype=object)


def run(benchmark: Any, fn: Callable[[], Any]) -> None:
    # The slow side takes 0.1-1 s a call: a few rounds each, the same for both sides.
    benchmark.pedantic(fn, rounds=5, iterations=1, warmup_rounds=1)


def _body(array: np.ndarray, datatype: str) -> bytes:
    request = InferRequest([Tensor("INPUT0", datatype, array.shape, array)])
    return rest.encode_request(request, binary=False)[0]


BODIES = {
    "rest_fp32_1m": (_body(FP32, "FP32"), FP32),
    "rest_bytes_100k": (_body(BYTES, "BYTES"), BYTES),
}


def _mlserver_rest(body: bytes) -> np.ndarray:
    request = ml_types.InferenceRequest.model_validate(orjson.loads(body))
    return NumpyCodec.decode_input(request.inputs[0])


def _oipcodec_rest(body: bytes) -> np.ndarray:
    request = compat.to_mlserver_request(rest.decode_request(body), bytes_as_str=True)
    return OIPCodec.decode_input(request.inputs[0])


@pytest.mark.parametrize("side", ["mlserver", "oipcodec"])
@pytest.mark.parametrize("case", list(BODIES))
def test_rest_body(benchmark: Any, case: str, side: str) -> None:
    benchmark.group = case
    body, array = BODIES[case]
    fn = _mlserver_rest if side == "mlserver" else _oipcodec_rest
    result = fn(body)
    if array.dtype == object and side == "mlserver":  # NumpyCodec: a U array of the strings
        assert result.tolist() == [x.decode() for x in array]
    elif array.dtype == object:
        assert result.tolist() == array.tolist()
    else:
        assert np.array_equal(result, array)
    run(benchmark, lambda: fn(body))


INPUTS = {
    "decode_input_fp32_1m": BODIES["rest_fp32_1m"][0],
    "decode_input_bytes_100k": BODIES["rest_bytes_100k"][0],
}


@pytest.mark.parametrize("side", ["mlserver", "oipcodec"])
@pytest.mark.parametrize("case", list(INPUTS))
def test_decode_input(benchmark: Any, case: str, side: str) -> None:
    benchmark.group = case
    request_input = ml_types.InferenceRequest.model_validate(orjson.loads(INPUTS[case])).inputs[0]
    codec = NumpyCodec if side == "mlserver" else OIPCodec
    run(benchmark, lambda: codec.decode_input(request_input))


RAW = {
    "grpc_raw_fp32_1m": ("FP32", FP32, FP32.tobytes()),
    "grpc_raw_bytes_100k": ("BYTES", BYTES, bytes(array_to_raw(BYTES, "BYTES"))),
}


@pytest.mark.parametrize("side", ["mlserver", "oipcodec"])
@pytest.mark.parametrize("case", list(RAW))
def test_grpc_raw_input(benchmark: Any, case: str, side: str) -> None:
    benchmark.group = case
    datatype, array, raw = RAW[case]
    inject, codec = (
        (ml_raw.inject_raw, NumpyCodec) if side == "mlserver" else (ours_inject_raw, OIPCodec)
    )

    def decode() -> Any:
        elem = ml_types.RequestInput.model_construct(
            name="INPUT0", shape=list(array.shape), datatype=datatype,
            data=ml_types.TensorData(root=[]),
        )  # fmt: skip
        inject([elem], [raw])
        if datatype == "BYTES" and side == "mlserver":
            return elem.data.root  # NumpyCodec cannot read unequal lengths: the list is the end
        return codec.decode_input(elem)

    result = decode()
    if datatype == "BYTES":
        assert list(result) == list(array)
    else:
        assert np.array_equal(result, array)
    run(benchmark, decode)


@pytest.mark.parametrize("side", ["mlserver", "oipcodec"])
def test_grpc_raw_output(benchmark: Any, side: str) -> None:
    benchmark.group = "grpc_raw_out_fp32_1m"

    def encode() -> list[bytes]:
        if side == "mlserver":
            output = NumpyCodec.encode_output("OUTPUT0", FP32)
            return ml_raw.extract_raw([output])[1]
        output = OIPCodec.encode_output("OUTPUT0", FP32, as_list=False)
        return ours_extract_raw([output])[1]

    assert encode()[0] == FP32.tobytes()
    run(benchmark, encode)


@pytest.mark.parametrize("side", ["mlserver", "oipcodec"])
def test_rest_output(benchmark: Any, side: str) -> None:
    benchmark.group = "rest_out_fp32_1m"

    def encode() -> bytes:
        if side == "mlserver":
            output = NumpyCodec.encode_output("OUTPUT0", FP32)
            response = ml_types.InferenceResponse(model_name="m", outputs=[output])
            return ml_json.encode_to_json_bytes(response.model_dump())
        output = OIPCodec.encode_output("OUTPUT0", FP32, as_list=False)
        response = ml_types.InferenceResponse.model_construct(model_name="m", outputs=[output])
        return rest.encode_response(compat.from_mlserver_response(response))[0]

    decoded = rest.decode_response(encode())
    assert np.array_equal(decoded.outputs[0].data, FP32)
    run(benchmark, encode)
