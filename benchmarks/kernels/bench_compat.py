"""The adapters of oipcodec.compat against the peers' own codecs, on the same payloads.

- tritonclient: ``oipcodec.compat.tritonclient.serialize_byte_tensor`` /
  ``deserialize_bytes_tensor`` vs ``tritonclient.utils``' (100k short strings).
- KServe (1M FP32), each case from the wire bytes to the numpy array a model gets:
  REST JSON (KServe: FastAPI's ``json.loads``, pydantic ``InferenceRequest``,
  ``InferRequest.from_inference_request``, ``as_numpy``), the binary extension (KServe:
  ``InferRequest.from_bytes``, ``as_numpy``), gRPC raw and typed contents (KServe:
  ``ModelInferRequest.FromString``, ``InferRequest.from_grpc``, ``as_numpy``), and gRPC encode
  (a KServe ``InferRequest`` holding the array to a ``ModelInferRequest`` message).

Ours run on the facade's kernels (native unless ``OIPCODEC_PURE=1``). KServe is loaded as
benchmarks/kernels/bench_pb.py loads it (its protobuf module in a private pool), so that it and
tritonclient can share this process.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from oipcodec import InferRequest, Tensor, pb, rest
from oipcodec.compat import kserve as compat_kserve
from oipcodec.compat import tritonclient as compat_triton

M = 1_000_000


# ----------------------------------------------------------------------------- tritonclient


@pytest.fixture(scope="module")
def strings() -> np.ndarray:
    rng = np.random.default_rng(0)
    values = [b"x" * int(n) for n in rng.integers(1, 16, 100_000)]
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


@pytest.fixture(scope="module")
def tc_utils() -> Any:
    return pytest.importorskip("tritonclient.utils")


def test_serialize_byte_tensor_compat(benchmark: Any, strings: np.ndarray) -> None:
    benchmark.group = "tritonclient serialize_byte_tensor 100k"
    benchmark(compat_triton.serialize_byte_tensor, strings)


def test_serialize_byte_tensor_tritonclient(
    benchmark: Any, strings: np.ndarray, tc_utils: Any
) -> None:
    benchmark.group = "tritonclient serialize_byte_tensor 100k"
    benchmark(tc_utils.serialize_byte_tensor, strings)


def test_deserialize_bytes_tensor_compat(benchmark: Any, strings: np.ndarray) -> None:
    benchmark.group = "tritonclient deserialize_bytes_tensor 100k"
    framed = compat_triton.serialize_byte_tensor(strings).item()
    benchmark(compat_triton.deserialize_bytes_tensor, framed)


def test_deserialize_bytes_tensor_tritonclient(
    benchmark: Any, strings: np.ndarray, tc_utils: Any
) -> None:
    benchmark.group = "tritonclient deserialize_bytes_tensor 100k"
    framed = compat_triton.serialize_byte_tensor(strings).item()
    benchmark(tc_utils.deserialize_bytes_tensor, framed)


# ----------------------------------------------------------------------------- KServe


@pytest.fixture(scope="module")
def kserve() -> Any:
    pytest.importorskip("kserve")
    from benchmarks.kernels import bench_pb  # loads KServe, its protobuf module in a private pool

    if bench_pb.kserve is None:
        pytest.skip("KServe could not be loaded")
    return bench_pb.kserve


@pytest.fixture(scope="module")
def fp32() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(M).astype(np.float32)


@pytest.fixture(scope="module")
def request_1m(fp32: np.ndarray) -> InferRequest:
    return InferRequest([Tensor("INPUT0", "FP32", (M,), fp32)], id="1", model_name="m")


def _check(array: np.ndarray, expected: np.ndarray) -> None:
    assert array.dtype == expected.dtype and np.array_equal(array, expected)


# REST JSON


def test_kserve_rest_json_ours(benchmark: Any, kserve: Any, request_1m: InferRequest) -> None:
    benchmark.group = "KServe REST JSON decode FP32 1M"
    body, _ = rest.encode_request(request_1m, binary=False)
    result = benchmark(lambda: compat_kserve.request_from_rest(body, model_name="m").inputs[0].data)
    _check(result, request_1m.inputs[0].data)


def test_kserve_rest_json_kserve(benchmark: Any, kserve: Any, request_1m: InferRequest) -> None:
    from kserve.protocol.infer_type import InferRequest as KRequest
    from kserve.protocol.rest.v2_datamodels import InferenceRequest

    benchmark.group = "KServe REST JSON decode FP32 1M"
    body, _ = rest.encode_request(request_1m, binary=False)

    def kserve_path() -> np.ndarray:
        parsed = InferenceRequest.model_validate(json.loads(body))  # what FastAPI does
        return KRequest.from_inference_request(parsed, "m").inputs[0].as_numpy()

    _check(benchmark(kserve_path), request_1m.inputs[0].data)


# REST binary extension


def test_kserve_rest_binary_ours(benchmark: Any, kserve: Any, request_1m: InferRequest) -> None:
    benchmark.group = "KServe REST binary decode FP32 1M"
    body, length = rest.encode_request(request_1m, binary=True)
    result = benchmark(
        lambda: compat_kserve.request_from_rest(body, length, model_name="m").inputs[0].data
    )
    _check(result, request_1m.inputs[0].data)


def test_kserve_rest_binary_kserve(benchmark: Any, kserve: Any, request_1m: InferRequest) -> None:
    from kserve.protocol.infer_type import InferRequest as KRequest

    benchmark.group = "KServe REST binary decode FP32 1M"
    body, length = rest.encode_request(request_1m, binary=True)
    result = benchmark(lambda: KRequest.from_bytes(body, length, "m").inputs[0].as_numpy())
    _check(result, request_1m.inputs[0].data)


# gRPC


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "typed"])
def test_kserve_grpc_decode_ours(
    benchmark: Any, kserve: Any, request_1m: InferRequest, raw: bool
) -> None:
    benchmark.group = f"KServe gRPC decode FP32 1M {'raw' if raw else 'typed'}"
    data = pb.encode_request(request_1m, raw=raw)
    result = benchmark(lambda: compat_kserve.request_from_grpc(data).inputs[0].data)
    _check(result, request_1m.inputs[0].data)


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "typed"])
def test_kserve_grpc_decode_kserve(
    benchmark: Any, kserve: Any, request_1m: InferRequest, raw: bool
) -> None:
    from kserve.protocol.grpc.grpc_predict_v2_pb2 import ModelInferRequest
    from kserve.protocol.infer_type import InferRequest as KRequest

    benchmark.group = f"KServe gRPC decode FP32 1M {'raw' if raw else 'typed'}"
    data = pb.encode_request(request_1m, raw=raw)

    def kserve_path() -> np.ndarray:
        message = ModelInferRequest.FromString(data)
        return KRequest.from_grpc(message).inputs[0].as_numpy()

    _check(benchmark(kserve_path), request_1m.inputs[0].data)


def _kserve_request(array: np.ndarray) -> Any:
    from kserve.protocol.infer_type import InferInput
    from kserve.protocol.infer_type import InferRequest as KRequest

    return KRequest("m", [InferInput("INPUT0", [M], "FP32", data=array)], "1")


def test_kserve_grpc_encode_ours(benchmark: Any, kserve: Any, fp32: np.ndarray) -> None:
    benchmark.group = "KServe gRPC encode FP32 1M raw (to a ModelInferRequest)"
    message = benchmark(lambda: compat_kserve.request_to_grpc(_kserve_request(fp32)))
    assert message.raw_input_contents[0] == fp32.tobytes()


def test_kserve_grpc_encode_kserve(benchmark: Any, kserve: Any, fp32: np.ndarray) -> None:
    benchmark.group = "KServe gRPC encode FP32 1M raw (to a ModelInferRequest)"
    # to_grpc turns the array into raw bytes (set_data_from_numpy), so a fresh request per round
    message = benchmark(lambda: _kserve_request(fp32).to_grpc())
    assert message.raw_input_contents[0] == fp32.tobytes()
