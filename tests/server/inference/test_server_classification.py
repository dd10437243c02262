"""The classification extension against the real tritonclient, over HTTP (binary and JSON
outputs) and gRPC (tritonclient's raw inputs, and typed contents sent by hand), on a batching
model and on one that does not batch, with and without labels (a list, and a labels file)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.testing import RunningServer, background
from tests.support.classify_models import LABELS, classify_models

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
grpc_module = pytest.importorskip("grpc")
from tritonclient.grpc import service_pb2, service_pb2_grpc  # noqa: E402
from tritonclient.utils import InferenceServerException, deserialize_bytes_tensor  # noqa: E402

TIMEOUT = 30.0
X = np.array([[0.1, 0.7, 0.2, 0.7, -1.0], [3.3, 0.0, 1.0, 2.0, 5.0]], np.float32)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    labels = tmp_path_factory.mktemp("labels") / "labels.txt"
    # A Windows line end and no final newline: both read as Triton reads a labels file.
    labels.write_bytes(b"\n".join(label.encode() for label in LABELS[:4]) + b"\r\nfour")
    with background(classify_models(str(labels)), log_level="warning") as running:
        yield running


def _infer(client: Any, module: Any, model: str, output: str, k: int, **kwargs: Any) -> Any:
    item = module.InferInput("X", list(X.shape), "FP32")
    item.set_data_from_numpy(X)
    asked = module.InferRequestedOutput(output, class_count=k, **kwargs)
    result = client.infer(model, [item], outputs=[asked])
    return result.as_numpy(output), result.get_output(output)


def _texts(array: np.ndarray) -> list[Any]:
    """The elements as str, whether tritonclient gave bytes (binary) or str (JSON)."""
    return np.vectorize(lambda e: e.decode() if isinstance(e, bytes) else e, otypes=[object])(
        array
    ).tolist()


# What the two models answer, by (model, output, k): batched rows apart, or flattened.
EXPECTED = {
    ("scores", "PROB", 1): [["0.700000:1"], ["5.000000:4"]],
    ("scores", "PROB", 3): [
        ["0.700000:1", "0.700000:3", "0.200000:2"],
        ["5.000000:4", "3.300000:0", "2.000000:3"],
    ],
    ("scores", "LABELED", 1): [["0.700000:1:one"], ["5.000000:4:four"]],
    ("scores", "LABELED", 3): [
        ["0.700000:1:one", "0.700000:3:three", "0.200000:2:two"],
        ["5.000000:4:four", "3.300000:0:zero", "2.000000:3:three"],
    ],
    ("scores", "COUNTS", 3): [["7:1", "7:3", "2:2"], ["50:4", "33:0", "20:3"]],
    ("scores_flat", "PROB", 1): ["5.000000:9"],
    ("scores_flat", "PROB", 3): ["5.000000:9", "3.300000:5", "2.000000:8"],
    # Index 9 has no label in a 5-line file; 5 and 8 neither: the flattened index is past it.
    ("scores_flat", "LABELED", 3): ["5.000000:9", "3.300000:5", "2.000000:8"],
    ("scores_flat", "LABELED", 12): [
        "5.000000:9",
        "3.300000:5",
        "2.000000:8",
        "1.000000:7",
        "0.700000:1:one",
        "0.700000:3:three",
        "0.200000:2:two",
        "0.100000:0:zero",
        "0.000000:6",
        "-1.000000:4:four",
    ],
}
CASES = sorted(EXPECTED)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "json"])
@pytest.mark.parametrize(("model", "output", "k"), CASES)
def test_http(http: Any, model: str, output: str, k: int, binary: bool) -> None:
    data, meta = _infer(http, httpclient, model, output, k, binary_data=binary)
    assert meta["datatype"] == "BYTES"
    assert _texts(data) == EXPECTED[model, output, k]
    assert meta["shape"] == list(np.shape(EXPECTED[model, output, k]))


@pytest.mark.parametrize(("model", "output", "k"), CASES)
def test_grpc(grpc: Any, model: str, output: str, k: int) -> None:
    data, meta = _infer(grpc, grpcclient, model, output, k)
    assert meta.datatype == "BYTES"
    assert _texts(data) == EXPECTED[model, output, k]
    assert list(meta.shape) == list(np.shape(EXPECTED[model, output, k]))


def test_grpc_typed_contents_and_kserve_spelling(server: RunningServer) -> None:
    with grpc_module.insecure_channel(server.grpc_address) as channel:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        request = service_pb2.ModelInferRequest(model_name="scores")
        item = request.inputs.add(name="X", datatype="FP32", shape=list(X.shape))
        item.contents.fp32_contents.extend(X.ravel().tolist())
        asked = request.outputs.add(name="LABELED")
        asked.parameters["classification_count"].int64_param = 1
        response = stub.ModelInfer(request, timeout=TIMEOUT)
    (output,) = response.outputs
    assert (output.datatype, list(output.shape)) == ("BYTES", [2, 1])
    strings = deserialize_bytes_tensor(response.raw_output_contents[0]).tolist()
    assert strings == [b"0.700000:1:one", b"5.000000:4:four"]


def test_outputs_without_classification_stay_as_they_are(http: Any) -> None:
    item = httpclient.InferInput("X", list(X.shape), "FP32")
    item.set_data_from_numpy(X)
    outputs = [
        httpclient.InferRequestedOutput("PROB", class_count=2),
        httpclient.InferRequestedOutput("COUNTS"),
    ]
    result = http.infer("scores", [item], outputs=outputs)
    np.testing.assert_array_equal(result.as_numpy("COUNTS"), (X * 10).astype(np.int32))
    assert result.as_numpy("PROB").shape == (2, 2)


def test_bytes_output_refused_over_both_protocols(http: Any, grpc: Any) -> None:
    with pytest.raises(InferenceServerException, match="output 'TEXT' is BYTES") as caught:
        _infer(http, httpclient, "scores", "TEXT", 1)
    assert caught.value.status() == "400"
    with pytest.raises(InferenceServerException, match="output 'TEXT' is BYTES") as caught:
        _infer(grpc, grpcclient, "scores", "TEXT", 1)
    assert caught.value.status() == "StatusCode.INVALID_ARGUMENT"


def _post(server: RunningServer, model: str, parameters: dict[str, Any]) -> tuple[int, Any]:
    body = {
        "inputs": [{"name": "X", "datatype": "FP32", "shape": [2, 5], "data": X.ravel().tolist()}],
        "outputs": [{"name": "PROB", "parameters": parameters}],
    }
    request = urllib.request.Request(
        f"http://{server.http_address}/v2/models/{model}/infer",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"classification": 0}, "'classification' must be a positive integer"),
        ({"classification": -2}, "'classification' must be a positive integer"),
        ({"classification": "3"}, "'classification' must be a positive integer"),
        ({"classification": 1.5}, "'classification' must be a positive integer"),
        ({"classification": True}, "'classification' must be a positive integer"),
        ({"classification_count": 0}, "'classification_count' must be a positive integer"),
        ({"classification": 1, "classification_count": 2}, "disagree"),
        ({"classification": 1, "shared_memory_region": "r"}, "shared memory"),
    ],
)
def test_bad_requests_are_400_naming_the_output(
    server: RunningServer, parameters: dict[str, Any], message: str
) -> None:
    status, body = _post(server, "scores", parameters)
    assert status == 400, body
    assert "output 'PROB'" in body["error"] and message in body["error"]


def test_kserve_spelling_and_huge_k_over_json(server: RunningServer) -> None:
    status, body = _post(server, "scores", {"classification_count": 2**62})
    assert status == 200, body
    (output,) = body["outputs"]
    assert (output["datatype"], output["shape"]) == ("BYTES", [2, 5])
    assert output["data"][:2] == ["0.700000:1", "0.700000:3"]
    status, body = _post(server, "scores", {"classification": 2, "classification_count": 2})
    assert status == 200 and body["outputs"][0]["shape"] == [2, 2]


def test_server_metadata_lists_the_extension(http: Any, grpc: Any) -> None:
    assert "classification" in http.get_server_metadata()["extensions"]
    assert "classification" in grpc.get_server_metadata().extensions
