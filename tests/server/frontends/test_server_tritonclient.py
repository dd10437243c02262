"""The embedded server against the real tritonclient, over HTTP and gRPC.

One server (the demo models) runs in a subprocess for the whole module, on free ports of
127.0.0.1; this process only holds tritonclient's own protobuf classes.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")

httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
ml_dtypes = pytest.importorskip("ml_dtypes")
from tritonclient.utils import InferenceServerException  # noqa: E402

TIMEOUT = 30.0


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(log_level="warning") as running:
        yield running


def _simple_inputs(
    module: Any, binary: bool | None = None
) -> tuple[list[Any], np.ndarray, np.ndarray]:
    a = np.arange(32, dtype=np.int32).reshape(2, 16)
    b = np.full((2, 16), 3, dtype=np.int32)
    inputs = [
        module.InferInput("INPUT0", [2, 16], "INT32"),
        module.InferInput("INPUT1", [2, 16], "INT32"),
    ]
    for item, data in zip(inputs, (a, b), strict=True):
        if binary is None:
            item.set_data_from_numpy(data)
        else:
            item.set_data_from_numpy(data, binary_data=binary)
    return inputs, a, b


# ------------------------------------------------------------------------------ health, metadata


def test_health_http(http: Any) -> None:
    assert http.is_server_live()
    assert http.is_server_ready()
    assert http.is_model_ready("simple")
    assert http.is_model_ready("simple", "1")
    assert not http.is_model_ready("no_such_model")


def test_health_grpc(grpc: Any) -> None:
    assert grpc.is_server_live()
    assert grpc.is_server_ready()
    assert grpc.is_model_ready("identity")
    with pytest.raises(InferenceServerException, match="NOT_FOUND"):
        grpc.is_model_ready("no_such_model")


def test_server_metadata(http: Any, grpc: Any) -> None:
    meta = http.get_server_metadata()
    assert meta["name"] == "oipcodec"
    assert "binary_tensor_data" in meta["extensions"]
    assert grpc.get_server_metadata(as_json=True)["extensions"] == meta["extensions"]


def test_model_metadata(http: Any, grpc: Any) -> None:
    expected = {
        "name": "simple",
        "versions": ["1"],
        "platform": "oipcodec_python",
        "inputs": [
            {"name": "INPUT0", "datatype": "INT32", "shape": [-1, 16]},
            {"name": "INPUT1", "datatype": "INT32", "shape": [-1, 16]},
        ],
        "outputs": [
            {"name": "OUTPUT0", "datatype": "INT32", "shape": [-1, 16]},
            {"name": "OUTPUT1", "datatype": "INT32", "shape": [-1, 16]},
        ],
    }
    assert http.get_model_metadata("simple") == expected
    assert http.get_model_metadata("simple", "1") == expected
    got = grpc.get_model_metadata("simple", as_json=True)
    assert got["name"] == "simple" and got["versions"] == ["1"]
    assert [(t["name"], t["datatype"], [int(d) for d in t["shape"]]) for t in got["inputs"]] == [
        ("INPUT0", "INT32", [-1, 16]),
        ("INPUT1", "INT32", [-1, 16]),
    ]
    with pytest.raises(InferenceServerException, match="unknown model"):
        http.get_model_metadata("no_such_model")


# ------------------------------------------------------------------------------ simple


@pytest.mark.parametrize("binary", [True, False])
def test_simple_http(http: Any, binary: bool) -> None:
    inputs, a, b = _simple_inputs(httpclient, binary)
    outputs = [
        httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary),
        httpclient.InferRequestedOutput("OUTPUT1", binary_data=binary),
    ]
    result = http.infer("simple", inputs, outputs=outputs, request_id="req-1")
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    response = result.get_response()
    assert response["id"] == "req-1"
    assert response["model_name"] == "simple"
    assert all(("data" in o) != binary for o in response["outputs"])


def test_simple_http_all_outputs_binary(http: Any) -> None:
    """No outputs listed: tritonclient sets binary_data_output, every output comes binary."""
    inputs, a, b = _simple_inputs(httpclient, False)
    result = http.infer("simple", inputs)
    assert all("data" not in o for o in result.get_response()["outputs"])
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def test_simple_http_versioned(http: Any) -> None:
    inputs, a, b = _simple_inputs(httpclient, True)
    result = http.infer("simple", inputs, model_version="1")
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    assert result.get_response()["model_version"] == "1"


def test_simple_grpc(grpc: Any) -> None:
    inputs, a, b = _simple_inputs(grpcclient)
    outputs = [
        grpcclient.InferRequestedOutput("OUTPUT0"),
        grpcclient.InferRequestedOutput("OUTPUT1"),
    ]
    result = grpc.infer("simple", inputs, outputs=outputs, request_id="g-1", client_timeout=TIMEOUT)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert result.get_response().id == "g-1"
    result = grpc.infer("simple", inputs, model_version="1", client_timeout=TIMEOUT)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)


def _string_inputs(module: Any, binary: bool | None) -> tuple[list[Any], np.ndarray, np.ndarray]:
    a = np.arange(16, dtype=np.int64).reshape(1, 16)
    b = np.full((1, 16), -7, dtype=np.int64)
    inputs = []
    for name, data in (("INPUT0", a), ("INPUT1", b)):
        item = module.InferInput(name, [1, 16], "BYTES")
        text = np.array([str(x).encode() for x in data.ravel()], dtype=object).reshape(1, 16)
        if binary is None:
            item.set_data_from_numpy(text)
        else:
            item.set_data_from_numpy(text, binary_data=binary)
        inputs.append(item)
    return inputs, a, b


def _as_ints(values: np.ndarray) -> np.ndarray:
    return np.array([int(v) for v in values.ravel()]).reshape(values.shape)


@pytest.mark.parametrize("binary", [True, False])
def test_simple_string_http(http: Any, binary: bool) -> None:
    inputs, a, b = _string_inputs(httpclient, binary)
    outputs = [
        httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary),
        httpclient.InferRequestedOutput("OUTPUT1", binary_data=binary),
    ]
    result = http.infer("simple_string", inputs, outputs=outputs)
    np.testing.assert_array_equal(_as_ints(result.as_numpy("OUTPUT0")), a + b)
    np.testing.assert_array_equal(_as_ints(result.as_numpy("OUTPUT1")), a - b)


def test_simple_string_grpc(grpc: Any) -> None:
    inputs, a, b = _string_inputs(grpcclient, None)
    result = grpc.infer("simple_string", inputs, client_timeout=TIMEOUT)
    np.testing.assert_array_equal(_as_ints(result.as_numpy("OUTPUT0")), a + b)
    np.testing.assert_array_equal(_as_ints(result.as_numpy("OUTPUT1")), a - b)


def test_add_sub(http: Any, grpc: Any) -> None:
    x = np.array([1.5, -2.0, 3.25, 0.0], dtype=np.float32)
    y = np.array([0.5, 0.5, 0.25, -0.0], dtype=np.float32)
    for module, client in ((httpclient, http), (grpcclient, grpc)):
        inputs = [
            module.InferInput("INPUT0", [4], "FP32"),
            module.InferInput("INPUT1", [4], "FP32"),
        ]
        inputs[0].set_data_from_numpy(x)
        inputs[1].set_data_from_numpy(y)
        result = client.infer("add_sub", inputs)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), x + y)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), x - y)


# ------------------------------------------------------------------------------ identity


def _sample(datatype: str) -> np.ndarray:
    if datatype == "BOOL":
        return np.array([[True, False, True], [False, False, True]])
    if datatype == "BYTES":
        return np.array([[b"", b"abc", "wörld".encode()], [b"x" * 300, b"0", b"-"]], dtype=object)
    if datatype == "BF16":
        return np.array([[1.5, -2.0, 0.0], [-0.0, 65280.0, 0.0078125]], dtype=ml_dtypes.bfloat16)
    dtype = np.dtype(datatype.lower().replace("fp", "float"))
    if dtype.kind == "f":
        return np.array([[0.1, -0.0, 1e-3], [65504.0, -2.5, 3.0]], dtype=dtype)
    info = np.iinfo(dtype)
    return np.array([[info.min, 0, 1], [info.max, info.max - 1, 7]], dtype=dtype)


DATATYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
             "FP16", "FP32", "FP64", "BF16", "BYTES"]  # fmt: skip


def _same(got: np.ndarray, want: np.ndarray, datatype: str) -> None:
    assert got.shape == want.shape
    if datatype == "BF16":
        assert got.dtype == ml_dtypes.bfloat16
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    elif datatype == "BYTES":
        as_bytes = [v if isinstance(v, bytes) else v.encode() for v in got.ravel()]
        assert as_bytes == list(want.ravel())
    else:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("datatype", DATATYPES)
def test_identity_http_binary(http: Any, datatype: str) -> None:
    data = _sample(datatype)
    item = httpclient.InferInput("IN", list(data.shape), datatype)
    item.set_data_from_numpy(data, binary_data=True)
    result = http.infer("identity", [item])
    assert result.get_response()["outputs"][0]["datatype"] == datatype
    _same(result.as_numpy("IN"), data, datatype)


# tritonclient refuses BF16 as JSON (test_server_http.py sends it by hand); FP16 goes.
@pytest.mark.parametrize("datatype", [d for d in DATATYPES if d != "BF16"])
def test_identity_http_json(http: Any, datatype: str) -> None:
    data = _sample(datatype)
    item = httpclient.InferInput("IN", list(data.shape), datatype)
    item.set_data_from_numpy(data, binary_data=False)
    result = http.infer(
        "identity", [item], outputs=[httpclient.InferRequestedOutput("IN", binary_data=False)]
    )
    assert "data" in result.get_response()["outputs"][0]
    _same(result.as_numpy("IN"), data, datatype)


@pytest.mark.parametrize("datatype", DATATYPES)
def test_identity_grpc(grpc: Any, datatype: str) -> None:
    data = _sample(datatype)
    item = grpcclient.InferInput("IN", list(data.shape), datatype)
    item.set_data_from_numpy(data)
    result = grpc.infer("identity", [item], client_timeout=TIMEOUT)
    _same(result.as_numpy("IN"), data, datatype)


def test_identity_special_floats(http: Any, grpc: Any) -> None:
    data = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], dtype=np.float32)
    item = httpclient.InferInput("X", [5], "FP32")
    item.set_data_from_numpy(data, binary_data=True)
    got = http.infer("identity", [item]).as_numpy("X")
    np.testing.assert_array_equal(got.view(np.uint32), data.view(np.uint32))
    gitem = grpcclient.InferInput("X", [5], "FP32")
    gitem.set_data_from_numpy(data)
    got = grpc.infer("identity", [gitem]).as_numpy("X")
    np.testing.assert_array_equal(got.view(np.uint32), data.view(np.uint32))


def test_identity_many_inputs(http: Any) -> None:
    arrays = {f"T{i}": np.full((i + 1,), i, dtype=np.int16) for i in range(5)}
    inputs = []
    for name, data in arrays.items():
        item = httpclient.InferInput(name, list(data.shape), "INT16")
        item.set_data_from_numpy(data, binary_data=name != "T2")
        inputs.append(item)
    result = http.infer("identity", inputs)
    for name, data in arrays.items():
        np.testing.assert_array_equal(result.as_numpy(name), data)


# ------------------------------------------------------------------------------ outputs


def test_output_selection_http(http: Any) -> None:
    inputs, a, b = _simple_inputs(httpclient, True)
    result = http.infer("simple", inputs, outputs=[httpclient.InferRequestedOutput("OUTPUT1")])
    assert [o["name"] for o in result.get_response()["outputs"]] == ["OUTPUT1"]
    assert result.as_numpy("OUTPUT0") is None
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def test_output_selection_mixed_binary(http: Any) -> None:
    inputs, a, b = _simple_inputs(httpclient, True)
    outputs = [
        httpclient.InferRequestedOutput("OUTPUT0", binary_data=False),
        httpclient.InferRequestedOutput("OUTPUT1", binary_data=True),
    ]
    result = http.infer("simple", inputs, outputs=outputs)
    by_name = {o["name"]: o for o in result.get_response()["outputs"]}
    assert "data" in by_name["OUTPUT0"]
    assert by_name["OUTPUT1"]["parameters"]["binary_data_size"] == a.nbytes
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def test_output_selection_grpc(grpc: Any) -> None:
    inputs, a, b = _simple_inputs(grpcclient)
    result = grpc.infer("simple", inputs, outputs=[grpcclient.InferRequestedOutput("OUTPUT0")])
    assert [o.name for o in result.get_response().outputs] == ["OUTPUT0"]
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)


def test_unknown_output(http: Any, grpc: Any) -> None:
    inputs, _, _ = _simple_inputs(httpclient, True)
    with pytest.raises(InferenceServerException, match="unexpected inference output 'NOPE'"):
        http.infer("simple", inputs, outputs=[httpclient.InferRequestedOutput("NOPE")])
    ginputs, _, _ = _simple_inputs(grpcclient)
    with pytest.raises(InferenceServerException, match="INVALID_ARGUMENT"):
        grpc.infer("simple", ginputs, outputs=[grpcclient.InferRequestedOutput("NOPE")])


# ------------------------------------------------------------------------------ compression


@pytest.mark.parametrize("request_encoding", [None, "gzip", "deflate"])
@pytest.mark.parametrize("response_encoding", [None, "gzip", "deflate"])
@pytest.mark.parametrize("binary", [True, False])
def test_compression_http(
    http: Any, request_encoding: str | None, response_encoding: str | None, binary: bool
) -> None:
    inputs, a, b = _simple_inputs(httpclient, binary)
    outputs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary)]
    result = http.infer(
        "simple",
        inputs,
        outputs=outputs,
        request_compression_algorithm=request_encoding,
        response_compression_algorithm=response_encoding,
    )
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)


@pytest.mark.parametrize("algorithm", ["gzip", "deflate"])
def test_compression_grpc(grpc: Any, algorithm: str) -> None:
    inputs, a, b = _simple_inputs(grpcclient)
    result = grpc.infer("simple", inputs, compression_algorithm=algorithm)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)


# ------------------------------------------------------------------------------ async, stream


def test_async_infer_http(http: Any) -> None:
    pending = []
    for i in range(8):
        data = np.full((1, 16), i, dtype=np.int32)
        inputs = [
            httpclient.InferInput("INPUT0", [1, 16], "INT32"),
            httpclient.InferInput("INPUT1", [1, 16], "INT32"),
        ]
        inputs[0].set_data_from_numpy(data)
        inputs[1].set_data_from_numpy(data)
        pending.append((i, http.async_infer("simple", inputs, request_id=str(i))))
    for i, request in pending:
        result = request.get_result(timeout=TIMEOUT)
        assert result.get_response()["id"] == str(i)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), np.full((1, 16), 2 * i))


def test_async_infer_grpc(grpc: Any) -> None:
    results: queue.Queue[tuple[Any, Any]] = queue.Queue()
    for i in range(8):
        data = np.full((1, 16), i, dtype=np.int32)
        inputs = [
            grpcclient.InferInput("INPUT0", [1, 16], "INT32"),
            grpcclient.InferInput("INPUT1", [1, 16], "INT32"),
        ]
        inputs[0].set_data_from_numpy(data)
        inputs[1].set_data_from_numpy(data)
        grpc.async_infer(
            "simple", inputs, lambda result, error: results.put((result, error)), request_id=str(i)
        )
    seen = set()
    for _ in range(8):
        result, error = results.get(timeout=TIMEOUT)
        assert error is None
        i = int(result.get_response().id)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), np.zeros((1, 16)))
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), np.full((1, 16), 2 * i))
        seen.add(i)
    assert seen == set(range(8))


def test_stream_infer_grpc(server: RunningServer) -> None:
    client = grpcclient.InferenceServerClient(server.grpc_address)
    results: queue.Queue[tuple[Any, Any]] = queue.Queue()
    client.start_stream(callback=lambda result, error: results.put((result, error)))
    try:
        for i in range(5):
            data = np.full((1, 16), i, dtype=np.int32)
            inputs = [
                grpcclient.InferInput("INPUT0", [1, 16], "INT32"),
                grpcclient.InferInput("INPUT1", [1, 16], "INT32"),
            ]
            inputs[0].set_data_from_numpy(data)
            inputs[1].set_data_from_numpy(data)
            client.async_stream_infer("simple", inputs, request_id=f"s{i}")
        # An error in the stream is answered in the stream, and the stream goes on.
        bad = grpcclient.InferInput("INPUT0", [1, 3], "INT32")
        bad.set_data_from_numpy(np.zeros((1, 3), dtype=np.int32))
        client.async_stream_infer("simple", [bad], request_id="bad")
        item = grpcclient.InferInput("X", [2], "FP64")
        item.set_data_from_numpy(np.array([1.0, 2.0]))
        client.async_stream_infer("identity", [item], request_id="after")
        got = [results.get(timeout=TIMEOUT) for _ in range(7)]
    finally:
        client.stop_stream()
        client.close()
    ok = {r.get_response().id: r for r, e in got if e is None}
    errors = [e for _, e in got if e is not None]
    assert set(ok) == {"s0", "s1", "s2", "s3", "s4", "after"}
    for i in range(5):
        np.testing.assert_array_equal(ok[f"s{i}"].as_numpy("OUTPUT0"), np.full((1, 16), 2 * i))
    np.testing.assert_array_equal(ok["after"].as_numpy("X"), [1.0, 2.0])
    assert len(errors) == 1 and "INPUT0" in str(errors[0])


# ------------------------------------------------------------------------------ errors, repository


def test_errors_http(http: Any) -> None:
    inputs, _, _ = _simple_inputs(httpclient, True)
    with pytest.raises(InferenceServerException, match="unknown model"):
        http.infer("no_such_model", inputs)
    bad = httpclient.InferInput("INPUT0", [1, 3], "INT32")
    bad.set_data_from_numpy(np.zeros((1, 3), dtype=np.int32))
    with pytest.raises(InferenceServerException, match=r"shape \[1, 3\].*\[-1, 16\]"):
        http.infer("simple", [bad, inputs[1]])
    assert http.is_server_live()


def test_errors_grpc(grpc: Any) -> None:
    inputs, _, _ = _simple_inputs(grpcclient)
    with pytest.raises(InferenceServerException, match="NOT_FOUND"):
        grpc.infer("no_such_model", inputs)
    with pytest.raises(InferenceServerException, match="NOT_FOUND"):
        grpc.infer("simple", inputs, model_version="7")
    bad = grpcclient.InferInput("INPUT0", [2, 16], "FP32")
    bad.set_data_from_numpy(np.zeros((2, 16), dtype=np.float32))
    with pytest.raises(InferenceServerException, match=r"INVALID_ARGUMENT.*datatype FP32"):
        grpc.infer("simple", [bad, inputs[1]])
    assert grpc.is_server_live()


def test_repository_http(http: Any) -> None:
    index = http.get_model_repository_index()
    assert {"name": "add_sub", "version": "1", "state": "READY", "reason": ""} in index
    http.unload_model("add_sub")
    try:
        assert not http.is_model_ready("add_sub")
        states = {m["name"]: m["state"] for m in http.get_model_repository_index()}
        assert states["add_sub"] == "UNAVAILABLE"
        x = [httpclient.InferInput(f"INPUT{i}", [1], "FP32") for i in (0, 1)]
        for item in x:
            item.set_data_from_numpy(np.ones(1, np.float32))
        with pytest.raises(InferenceServerException, match="no available versions"):
            http.infer("add_sub", x)
    finally:
        http.load_model("add_sub")
    assert http.is_model_ready("add_sub")
    with pytest.raises(InferenceServerException, match="unknown model"):
        http.load_model("no_such_model")


def test_repository_grpc(grpc: Any) -> None:
    names = {m.name for m in grpc.get_model_repository_index().models}
    assert names == {
        "simple",
        "simple_string",
        "identity",
        "add_sub",
        "simple_identity",
        "simple_int8",
        "square_int32",
        "repeat_int32",
    }
    grpc.unload_model("add_sub")
    try:
        assert not grpc.is_model_ready("add_sub")
        x = [grpcclient.InferInput(f"INPUT{i}", [1], "FP32") for i in (0, 1)]
        for item in x:
            item.set_data_from_numpy(np.ones(1, np.float32))
        with pytest.raises(InferenceServerException, match="UNAVAILABLE"):
            grpc.infer("add_sub", x)
    finally:
        grpc.load_model("add_sub")
    assert grpc.is_model_ready("add_sub")
    with pytest.raises(InferenceServerException, match="NOT_FOUND"):
        grpc.load_model("no_such_model")
