"""The demo models Triton's example clients use, driven by the real tritonclient as those
examples drive them: ``simple_identity`` (BYTES identity) and ``simple_int8`` (``simple`` on
INT8, wrapping around), over HTTP (binary and JSON) and gRPC (tritonclient's raw contents and
typed contents sent by hand)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.server.demo import SimpleIdentity, SimpleInt8
from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
grpc_module = pytest.importorskip("grpc")
from tritonclient.grpc import service_pb2, service_pb2_grpc  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

TIMEOUT = 30.0


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background([SimpleIdentity(), SimpleInt8()], log_level="warning") as running:
        yield running


# What Triton's string example sends: text with an embedded NUL, and 4-byte binary blobs.
STRINGS = [
    np.array([b"he\x00llo"] * 16, dtype=np.object_).reshape(1, 16),
    np.array([b"\x00\x01\x02\x03"] * 16, dtype=np.bytes_).reshape(1, 16),
    np.array([[b"a", b"bc"], [b"", "\u00e9".encode()]], dtype=np.object_),
]


@pytest.mark.parametrize("data", STRINGS, ids=["nul", "blobs", "batch"])
@pytest.mark.parametrize("protocol", ["http-binary", "grpc"])
def test_simple_identity(http: Any, grpc: Any, data: np.ndarray, protocol: str) -> None:
    module, client = (grpcclient, grpc) if protocol == "grpc" else (httpclient, http)
    item = module.InferInput("INPUT0", list(data.shape), "BYTES")
    item.set_data_from_numpy(data)
    result = client.infer(
        "simple_identity", [item], outputs=[module.InferRequestedOutput("OUTPUT0")]
    )
    got = result.as_numpy("OUTPUT0")
    assert got.shape == data.shape
    assert got.ravel().tolist() == [bytes(e) for e in data.ravel()]


def test_simple_identity_json(http: Any) -> None:
    data = np.array([["one", "two \u00e9"]], dtype=np.object_)
    item = httpclient.InferInput("INPUT0", [1, 2], "BYTES")
    item.set_data_from_numpy(data, binary_data=False)
    result = http.infer(
        "simple_identity",
        [item],
        outputs=[httpclient.InferRequestedOutput("OUTPUT0", binary_data=False)],
    )
    assert result.as_numpy("OUTPUT0").tolist() == [["one", "two \u00e9"]]


def test_metadata(http: Any) -> None:
    meta = http.get_model_metadata("simple_identity")
    assert meta["inputs"] == [{"name": "INPUT0", "datatype": "BYTES", "shape": [-1, -1]}]
    assert meta["outputs"] == [{"name": "OUTPUT0", "datatype": "BYTES", "shape": [-1, -1]}]
    meta = http.get_model_metadata("simple_int8")
    assert [t["datatype"] for t in meta["inputs"] + meta["outputs"]] == ["INT8"] * 4
    assert SimpleIdentity.max_batch_size == SimpleInt8.max_batch_size == 8


def _int8_inputs(module: Any) -> tuple[list[Any], np.ndarray, np.ndarray]:
    a = np.array([np.arange(16), np.arange(-8, 8) * 16], dtype=np.int8)
    a[0, 0], a[1, 0] = 127, -128
    b = np.ones((2, 16), dtype=np.int8)
    inputs = [module.InferInput(f"INPUT{i}", [2, 16], "INT8") for i in (0, 1)]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    return inputs, a, b


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_simple_int8_wraps_around(http: Any, grpc: Any, protocol: str) -> None:
    module, client = (grpcclient, grpc) if protocol == "grpc" else (httpclient, http)
    inputs, a, b = _int8_inputs(module)
    result = client.infer("simple_int8", inputs)
    total, difference = result.as_numpy("OUTPUT0"), result.as_numpy("OUTPUT1")
    assert total.dtype == difference.dtype == np.int8
    assert (int(total[0, 0]), int(difference[1, 0])) == (-128, 127)  # 127 + 1, -128 - 1
    expected_total = ((a.astype(np.int64) + b + 128) % 256 - 128).astype(np.int8)
    np.testing.assert_array_equal(total, expected_total)
    np.testing.assert_array_equal(difference, ((a.astype(np.int64) - b + 128) % 256 - 128))


@pytest.mark.grpc
def test_simple_int8_typed_contents_and_wrong_version(server: RunningServer) -> None:
    """What Triton's grpc_explicit_int8_content_client does, step by step."""
    with grpc_module.insecure_channel(server.grpc_address) as channel:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        request = service_pb2.ModelInferRequest(model_name="simple_int8", model_version="")
        for name, values in (("INPUT0", list(range(16))), ("INPUT1", [1] * 16)):
            item = request.inputs.add(name=name, datatype="INT8", shape=[1, 16])
            item.contents.int_contents[:] = values
        request.outputs.add(name="OUTPUT0")
        request.outputs.add(name="OUTPUT1")
        response = stub.ModelInfer(request, timeout=TIMEOUT)
        total = np.frombuffer(response.raw_output_contents[0], dtype=np.int8)
        difference = np.frombuffer(response.raw_output_contents[1], dtype=np.int8)
        assert total.tolist() == [i + 1 for i in range(16)]
        assert difference.tolist() == [i - 1 for i in range(16)]
        request.model_version = "wrong_specification"
        with pytest.raises(grpc_module.RpcError) as caught:
            stub.ModelInfer(request, timeout=TIMEOUT)
    assert (
        "failed to get model version from specified version string 'wrong_specification'"
        in caught.value.details()
    )


def test_simple_int8_refuses_other_datatypes(http: Any) -> None:
    item = httpclient.InferInput("INPUT0", [1, 16], "INT32")
    item.set_data_from_numpy(np.zeros((1, 16), np.int32))
    other = httpclient.InferInput("INPUT1", [1, 16], "INT8")
    other.set_data_from_numpy(np.zeros((1, 16), np.int8))
    with pytest.raises(InferenceServerException, match="expects INT8"):
        http.infer("simple_int8", [item, other])


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_simple_int8_classification(http: Any, grpc: Any, protocol: str) -> None:
    """class_count on a batching INT8 output: [batch, k], integers printed as %d."""
    module, client = (grpcclient, grpc) if protocol == "grpc" else (httpclient, http)
    inputs, _, _ = _int8_inputs(module)
    outputs = [module.InferRequestedOutput("OUTPUT0", class_count=3)]
    result = client.infer("simple_int8", inputs, outputs=outputs)
    assert result.as_numpy("OUTPUT0").tolist() == [
        [b"16:15", b"15:14", b"14:13"],
        [b"113:15", b"97:14", b"81:13"],
    ]
