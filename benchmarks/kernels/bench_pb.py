"""Protobuf ModelInfer messages: oipcodec.pb (native, pure) vs plain google.protobuf message
building/parsing + numpy, vs tritonclient.grpc input building, vs KServe's
InferRequest.to_grpc / from_grpc (+ as_numpy).

Encode cases end with serialized bytes, decode cases start from them and end with numpy arrays,
so every peer does the same job. KServe and tritonclient both register ``inference.*`` messages
in protobuf's default descriptor pool and cannot be imported into one process as they are;
KServe's generated module is loaded here into a private pool instead (same code, same wire).
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from oipcodec import InferRequest, Tensor, pb
from oipcodec.proto import open_inference_grpc_pb2 as pb2

M = 1_000_000


def _load_kserve() -> ModuleType | None:
    name = "kserve.protocol.grpc.grpc_predict_v2_pb2"
    spec = importlib.util.find_spec("kserve")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = f"{spec.submodule_search_locations[0]}/protocol/grpc/grpc_predict_v2_pb2.py"
    with open(path, encoding="utf-8") as file:
        source = file.read()
    source = source.replace(
        "_descriptor_pool.Default().AddSerializedFile(",
        "_descriptor_pool.DescriptorPool().AddSerializedFile(",
    )
    module = ModuleType(name)
    module.__file__ = path
    exec(compile(source, path, "exec"), module.__dict__)
    sys.modules[name] = module
    import kserve

    return kserve


try:
    kserve = _load_kserve()
except Exception:  # pragma: no cover - depends on the environment
    kserve = None


def request_of(array: np.ndarray, datatype: str = "FP32") -> InferRequest:
    return InferRequest([Tensor("INPUT0", datatype, array.shape, array)], model_name="model")


@pytest.fixture(scope="module")
def fp32_1m() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(M).astype(np.float32)


@pytest.fixture(scope="module")
def fp32_1k() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(1000).astype(np.float32)


@pytest.fixture(scope="module")
def small() -> np.ndarray:
    return np.arange(16, dtype=np.float32)


@pytest.fixture(scope="module")
def strings() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.array([rng.bytes(int(n)) for n in rng.integers(1, 32, 10_000)], dtype=object)


def protobuf_build(array: np.ndarray, datatype: str, raw: bool) -> bytes:
    message = pb2.ModelInferRequest(model_name="model")
    t = message.inputs.add(name="INPUT0", datatype=datatype, shape=array.shape)
    if raw:
        if datatype == "BYTES":
            message.raw_input_contents.append(
                b"".join(len(e).to_bytes(4, "little") + e for e in array.ravel())
            )
        else:
            message.raw_input_contents.append(array.tobytes())
    elif datatype == "BYTES":
        t.contents.bytes_contents.extend(array.ravel().tolist())
    else:
        t.contents.fp32_contents.extend(array.ravel())
    return message.SerializeToString()


def protobuf_parse(data: bytes) -> np.ndarray:
    message = pb2.ModelInferRequest.FromString(data)
    t = message.inputs[0]
    if message.raw_input_contents:
        if t.datatype == "BYTES":
            from oipcodec._pure.framing import deserialize_bytes

            return deserialize_bytes(message.raw_input_contents[0]).reshape(tuple(t.shape))
        return np.frombuffer(message.raw_input_contents[0], np.float32).reshape(tuple(t.shape))
    if t.datatype == "BYTES":
        return np.array(list(t.contents.bytes_contents), dtype=object).reshape(tuple(t.shape))
    return np.array(t.contents.fp32_contents, dtype=np.float32).reshape(tuple(t.shape))


def tritonclient_build(array: np.ndarray, datatype: str) -> bytes:
    grpcclient = pytest.importorskip("tritonclient.grpc")
    from tritonclient.grpc import _utils

    infer_input = grpcclient.InferInput("INPUT0", list(array.shape), datatype)
    infer_input.set_data_from_numpy(array)
    message = _utils._get_inference_request(
        model_name="model", inputs=[infer_input], model_version="", request_id="", outputs=None,
        sequence_id=0, sequence_start=False, sequence_end=False, priority=0, timeout=None,
        parameters=None,
    )  # fmt: skip
    return message.SerializeToString()


def kserve_build(array: np.ndarray, datatype: str, raw: bool) -> bytes:
    if kserve is None:
        pytest.skip("kserve is not installed")
    infer_input = kserve.InferInput("INPUT0", list(array.shape), datatype)
    infer_input.set_data_from_numpy(array, binary_data=raw)
    return kserve.InferRequest("model", [infer_input]).to_grpc().SerializeToString()


def kserve_parse(data: bytes) -> Any:
    if kserve is None:
        pytest.skip("kserve is not installed")
    from kserve.protocol.grpc.grpc_predict_v2_pb2 import ModelInferRequest

    request = kserve.InferRequest.from_grpc(ModelInferRequest.FromString(data))
    return request.inputs[0].as_numpy()


def ours_encode(kernels: Any, array: np.ndarray, datatype: str, raw: bool) -> bytes:
    return pb.encode_request(request_of(array, datatype), raw=raw, kernels=kernels)


def ours_decode(kernels: Any, data: bytes) -> np.ndarray:
    return pb.decode_request(data, kernels=kernels).inputs[0].data


# --------------------------------------------------------------------------------------------
# Cases: (group, array fixture, datatype, raw)

CASES = {
    "FP32 1M typed": ("fp32_1m", "FP32", False),
    "FP32 1M raw": ("fp32_1m", "FP32", True),
    "FP32 1k raw": ("fp32_1k", "FP32", True),
    "FP32 16 typed": ("small", "FP32", False),
    "FP32 16 raw": ("small", "FP32", True),
    "BYTES 10k raw": ("strings", "BYTES", True),
    "BYTES 10k typed": ("strings", "BYTES", False),
}
PEERS_ENCODE = ["native", "pure", "protobuf", "tritonclient", "kserve"]
PEERS_DECODE = ["native", "pure", "protobuf", "kserve"]


@pytest.mark.parametrize("who", PEERS_ENCODE)
@pytest.mark.parametrize("case", list(CASES))
def test_encode(benchmark, request, native, pure, case: str, who: str) -> None:
    fixture, datatype, raw = CASES[case]
    array = request.getfixturevalue(fixture)
    benchmark.group = f"pb encode {case}"
    if who == "native":
        benchmark(ours_encode, native, array, datatype, raw)
    elif who == "pure":
        benchmark(ours_encode, pure, array, datatype, raw)
    elif who == "protobuf":
        benchmark(protobuf_build, array, datatype, raw)
    elif who == "tritonclient":
        if not raw:
            pytest.skip("tritonclient.grpc only sends raw contents")
        benchmark(tritonclient_build, array, datatype)
    else:
        if datatype == "BYTES" and not raw:
            pytest.skip("KServe refuses non-UTF-8 BYTES elements in typed contents")
        benchmark(kserve_build, array, datatype, raw)


@pytest.mark.parametrize("who", PEERS_DECODE)
@pytest.mark.parametrize("case", list(CASES))
def test_decode(benchmark, request, native, pure, case: str, who: str) -> None:
    fixture, datatype, raw = CASES[case]
    array = request.getfixturevalue(fixture)
    data = ours_encode(native, array, datatype, raw)
    benchmark.group = f"pb decode {case}"
    if who == "native":
        out = benchmark(ours_decode, native, data)
    elif who == "pure":
        out = benchmark(ours_decode, pure, data)
    elif who == "protobuf":
        out = benchmark(protobuf_parse, data)
    else:
        out = benchmark(kserve_parse, data)
    assert np.asarray(out).shape == array.shape
