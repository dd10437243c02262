"""What a model returns, checked against what it declares (names, datatypes, shapes, the batch
size), values converted to the declared datatype when they fit exactly, and inputs a model
may write into (``writable_inputs``): driven by the real tritonclient over REST JSON, REST
binary and gRPC against a server in a thread of this process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec import EncodeError
from oipcodec.server import Model, TensorSpec
from oipcodec.server.model import fit_datatype
from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402

X = TensorSpec("X", "FP32", [-1, 4])


class Returns(Model):
    """Declares ``outputs`` and returns ``value`` (a callable of the input) for output
    ``key``."""

    inputs = (X,)

    def __init__(
        self, name: str, outputs: Any, key: str, value: Any, max_batch_size: int = 0
    ) -> None:
        self.key, self.value = key, value
        super().__init__(name, outputs=outputs, max_batch_size=max_batch_size)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {self.key: self.value(inputs["X"])}


class AddsInPlace(Model):
    """Writes into its input, as ``x += 1`` does."""

    name = "adds_in_place"
    inputs = (X,)
    outputs = (X,)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        x = inputs["X"]
        x += 1
        return {"X": x}


class AddsInPlaceWritable(AddsInPlace):
    name = "adds_in_place_writable"
    writable_inputs = True


Y4 = (TensorSpec("Y", "FP32", [-1, 4]),)
MODELS = [
    Returns("wrong_name", Y4, "Z", lambda x: x),
    Returns("wrong_shape", Y4, "Y", lambda x: x[0]),
    Returns("wrong_rows", Y4, "Y", lambda x: np.concatenate([x, x]), max_batch_size=8),
    Returns("right_rows", Y4, "Y", lambda x: x * 2, max_batch_size=8),
    Returns("missing", (*Y4, TensorSpec("W", "INT8", [1])), "Y", lambda x: x),
    Returns("optional_missing", (*Y4, TensorSpec("W", "INT8", [1], optional=True)), "Y", lambda x: x),
    Returns("list_fp32", Y4, "Y", lambda x: [[1.0, 2.0, 3.0, 4.0]] * len(x)),
    Returns("scalar_int64", (TensorSpec("N", "INT64", []),), "N", lambda x: len(x)),
    Returns("float64_array", Y4, "Y", lambda x: x.astype(np.float64) / 3),
    Returns("list_not_int", (TensorSpec("N", "INT32", [2]),), "N", lambda x: [1, 2.5]),
    Returns("undeclared", None, "anything", lambda x: np.arange(3, dtype=np.int16)),
    AddsInPlace(),
    AddsInPlaceWritable(),
]  # fmt: skip

CLIENTS = ["http-json", "http-binary", "grpc"]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(MODELS, process=False) as running:
        yield running


def _infer(server: RunningServer, client: str, model: str, x: np.ndarray) -> Any:
    """The answer of ``model`` to input ``x``, from tritonclient over ``client``'s protocol."""
    if client == "grpc":
        with grpcclient.InferenceServerClient(server.grpc_address) as grpc:
            tensor = grpcclient.InferInput("X", list(x.shape), "FP32")
            tensor.set_data_from_numpy(x)
            return grpc.infer(model, [tensor])
    with httpclient.InferenceServerClient(server.http_address) as http:
        tensor = httpclient.InferInput("X", list(x.shape), "FP32")
        tensor.set_data_from_numpy(x, binary_data=client == "http-binary")
        return http.infer(model, [tensor])


def _refused(server: RunningServer, client: str, model: str) -> str:
    with pytest.raises(InferenceServerException) as caught:
        _infer(server, client, model, np.ones((2, 4), np.float32))
    status = caught.value.status()
    assert status in ("500", "StatusCode.INTERNAL"), status
    return str(caught.value.message())


@pytest.mark.parametrize("client", CLIENTS)
def test_an_undeclared_output_is_refused(server: RunningServer, client: str) -> None:
    message = _refused(server, client, "wrong_name")
    assert message == (
        "model 'wrong_name' returned output 'Z', which it does not declare; its outputs are ['Y']"
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_a_missing_output_is_refused_unless_optional(server: RunningServer, client: str) -> None:
    message = _refused(server, client, "missing")
    assert message == "model 'missing' did not return its output 'W'; it returned ['Y']"
    answer = _infer(server, client, "optional_missing", np.ones((2, 4), np.float32))
    assert answer.as_numpy("Y").shape == (2, 4)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_wrong_shape_is_refused(server: RunningServer, client: str) -> None:
    message = _refused(server, client, "wrong_shape")
    assert message == (
        "model 'wrong_shape' returned output 'Y' of shape [4], its metadata says [-1, 4] "
        "(-1: any size)"
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_a_batching_model_answers_one_row_per_request_row(
    server: RunningServer, client: str
) -> None:
    message = _refused(server, client, "wrong_rows")
    assert message == (
        "model 'wrong_rows' returned output 'Y' with 4 rows (first dimension) for a request "
        "of batch size 2"
    )
    x = np.ones((3, 4), np.float32)
    assert _infer(server, client, "right_rows", x).as_numpy("Y").tolist() == (x * 2).tolist()


@pytest.mark.parametrize("client", CLIENTS)
def test_values_that_fit_are_converted(server: RunningServer, client: str) -> None:
    x = np.ones((2, 4), np.float32)
    answer = _infer(server, client, "list_fp32", x).as_numpy("Y")
    assert answer.dtype == np.float32 and answer.tolist() == [[1.0, 2.0, 3.0, 4.0]] * 2
    count = _infer(server, client, "scalar_int64", x).as_numpy("N")
    assert count.dtype == np.int64 and count.shape == () and int(count) == 2
    thirds = _infer(server, client, "float64_array", x).as_numpy("Y")
    assert thirds.dtype == np.float32 and thirds[0, 0] == np.float32(1 / 3)
    anything = _infer(server, client, "undeclared", x).as_numpy("anything")
    assert anything.dtype == np.int16 and anything.tolist() == [0, 1, 2]


@pytest.mark.parametrize("client", CLIENTS)
def test_values_that_do_not_fit_are_refused(server: RunningServer, client: str) -> None:
    message = _refused(server, client, "list_not_int")
    assert message == (
        "model 'list_not_int' returned an invalid output 'N': a list (numpy makes it float64) "
        "does not fit datatype INT32 exactly: element 1 is 2.5 (values must be integral and "
        "in its range)"
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_writing_into_an_input_names_the_switch(server: RunningServer, client: str) -> None:
    x = np.ones((2, 4), np.float32)
    if client == "http-json":  # decoded from JSON text into an array of its own
        assert _infer(server, client, "adds_in_place", x).as_numpy("X").tolist() == [[2.0] * 4] * 2
    else:  # a view of the request body
        message = _refused(server, client, "adds_in_place")
        assert message.startswith("model 'adds_in_place' failed: ValueError: ")
        assert "read-only" in message
        assert message.endswith(
            "(its inputs are read-only views of the request: set writable_inputs = True on "
            "the model to get writable copies)"
        )
    answer = _infer(server, client, "adds_in_place_writable", x)
    assert answer.as_numpy("X").tolist() == [[2.0] * 4] * 2


# ------------------------------------------------------------------------------ fit_datatype


@pytest.mark.parametrize(
    ("value", "datatype", "expected"),
    [
        ([1.0, 2.0], "FP32", np.array([1.0, 2.0], np.float32)),
        (0.1, "FP32", np.float32(0.1)),  # rounded to the nearest FP32
        (0.1, "FP16", np.float16(0.1)),
        ([1, 2], "FP16", np.array([1, 2], np.float16)),
        (2**24, "FP32", np.float32(2**24)),
        ([2.0, -3.0], "INT8", np.array([2, -3], np.int8)),
        ([0, 1], "BOOL", np.array([False, True])),
        (np.array([255], np.int64), "UINT8", np.array([255], np.uint8)),
        (True, "INT32", np.int32(1)),
        (["a", "b"], "BYTES", np.array(["a", "b"])),
        ([float("nan"), float("inf")], "FP16", np.array([np.nan, np.inf], np.float16)),
    ],
)
def test_fit_datatype_converts_what_fits(value: Any, datatype: str, expected: Any) -> None:
    fitted = fit_datatype(value, datatype)
    assert fitted.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(fitted, expected)


@pytest.mark.parametrize(
    ("value", "datatype", "message"),
    [
        ([1.5], "INT32", "a list (numpy makes it float64) does not fit datatype INT32 exactly: "
         "element 0 is 1.5 (values must be integral and in its range)"),
        ([1, 300], "INT8", "element 1 is 300 (values must be integral and in its range)"),
        ([-1], "UINT16", "element 0 is -1"),
        ([float("nan")], "INT64", "element 0 is nan"),
        ([2], "BOOL", "element 0 is 2"),
        (2**24 + 1, "FP32", "a int does not fit datatype FP32 exactly: element 0 is 16777217 "
         "(integers must be exactly representable)"),
        (np.array([70000.0]), "FP16", "a float64 array does not fit datatype FP16 exactly: "
         "element 0 is 70000.0 (a finite value must stay finite)"),
        ([1, 2], "BYTES", "a list (numpy makes it int64) cannot hold datatype BYTES"),
        (["x"], "FP32", "cannot hold datatype FP32"),
        ([1 + 2j], "FP64", "cannot hold datatype FP64"),
    ],
)  # fmt: skip
def test_fit_datatype_refuses_what_does_not_fit(value: Any, datatype: str, message: str) -> None:
    with pytest.raises(EncodeError) as caught:
        fit_datatype(value, datatype)
    assert message in str(caught.value)


def test_an_array_of_the_datatype_is_not_copied() -> None:
    array = np.ones(3, np.float32)
    assert fit_datatype(array, "FP32") is array
