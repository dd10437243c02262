"""The data model: validation of tensors, and the request/response containers."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from oipcodec import InferRequest, InferResponse, RequestedOutput, Tensor
from oipcodec.errors import DatatypeError, DecodeError, LimitError, OIPError, ShapeError
from oipcodec.limits import Limits, element_count


def test_tensor_accepts_matching_data_and_stores_shape_as_tuple() -> None:
    t = Tensor("x", "FP32", [2, 3], np.zeros((2, 3), np.float32))
    assert t.shape == (2, 3) and t.parameters == {}


def test_tensor_accepts_any_layout_and_byte_order() -> None:
    """A transposed big-endian array and a reversed view are kept as given (no copy, no
    conversion): the codecs read any layout and byte order."""
    for datatype, data in (
        ("FP32", np.arange(6, dtype=">f4").reshape(2, 3).T),
        ("INT64", np.arange(6, dtype="<i8")[::-1]),
    ):
        t = Tensor("x", datatype, data.shape, data)
        assert t.data is data and t.shape == data.shape
        assert t.data.dtype == data.dtype and not t.data.flags.c_contiguous


def test_scalar_shape_holds_one_element() -> None:
    assert element_count([]) == 1
    Tensor("s", "INT32", [], np.array(7, np.int32))
    with pytest.raises(ShapeError, match=r"shape \[\] holds 1 elements but data has 0"):
        Tensor("s", "INT32", [], np.zeros(0, np.int32))


def test_zero_size_shape() -> None:
    assert element_count([4, 0, 2**20]) == 0  # [4, 0, 2**62]: LimitError, see test_limits.py
    Tensor("e", "FP64", [4, 0], np.zeros((4, 0)))


def test_mismatched_shape_names_the_tensor() -> None:
    with pytest.raises(
        ShapeError, match=r"tensor 'x': shape \[2, 2\] holds 4 elements but data has 3"
    ):
        Tensor("x", "FP32", [2, 2], np.zeros(3, np.float32))


@pytest.mark.parametrize("shape", [[-1, 2], [2, 1.5], [True], ["3"]])
def test_invalid_shapes(shape: list[object]) -> None:
    with pytest.raises(ShapeError, match="tensor 'x': shape"):
        Tensor("x", "FP32", shape, np.zeros(2, np.float32))  # type: ignore[arg-type]


def test_huge_shape_refused_before_allocation() -> None:
    with pytest.raises(LimitError, match="more than the limit"):
        element_count([2**40, 2**40])
    with pytest.raises(LimitError):
        element_count([1000, 1000], Limits(max_tensor_elements=999_999))
    with pytest.raises(LimitError, match="dimensions"):
        element_count([1] * 65)
    assert issubclass(LimitError, DecodeError)


def test_wrong_dtype_is_refused() -> None:
    with pytest.raises(
        DatatypeError, match="tensor 'x': numpy dtype float64 cannot carry datatype FP32"
    ):
        Tensor("x", "FP32", [2], np.zeros(2))
    with pytest.raises(DatatypeError, match="numpy dtype int32 cannot carry datatype BYTES"):
        Tensor("x", "BYTES", [2], np.zeros(2, np.int32))
    with pytest.raises(DatatypeError, match="data must be a numpy array, got list"):
        Tensor("x", "FP32", [2], [1.0, 2.0])  # type: ignore[arg-type]


def test_unknown_datatype() -> None:
    with pytest.raises(DatatypeError, match="unknown datatype 'FLOAT'"):
        Tensor("x", "FLOAT", [1], np.zeros(1))


def test_bytes_tensor_accepts_object_s_and_u() -> None:
    for data in (
        np.array([b"a", b"bc"], dtype=object),
        np.array([b"a", b"bc"]),
        np.array(["a", "b"]),
    ):
        t = Tensor("b", "BYTES", [2], data)
        assert t.data is data and t.shape == (2,) and t.datatype == "BYTES"


def test_bf16_accepts_float32_values_and_bfloat16() -> None:
    Tensor("h", "BF16", [2], np.zeros(2, np.float32))
    ml_dtypes = pytest.importorskip("ml_dtypes")
    Tensor("h", "BF16", [2], np.zeros(2, ml_dtypes.bfloat16))
    with pytest.raises(DatatypeError):
        Tensor("h", "BF16", [2], np.zeros(2, np.int16))


def test_from_array_infers_datatype_and_shape() -> None:
    t = Tensor.from_array("x", np.zeros((2, 5), np.uint16), {"a": 1})
    assert (t.datatype, t.shape, t.parameters) == ("UINT16", (2, 5), {"a": 1})
    assert Tensor.from_array("s", ["ab", "c"]).datatype == "BYTES"


def test_request_and_response_lookups() -> None:
    a = Tensor.from_array("a", np.ones(3, np.int8))
    request = InferRequest([a], outputs=[RequestedOutput("o", {"binary_data": True})], id="7")
    assert request.input("a") is a and request.outputs[0].parameters == {"binary_data": True}
    response = InferResponse("m", [a], id="7")
    assert response.output("a") is a
    with pytest.raises(KeyError):
        response.output("missing")


def test_dataclasses_are_slotted() -> None:
    with pytest.raises(AttributeError):
        RequestedOutput("o").extra = 1  # type: ignore[attr-defined]


def test_errors_locate_and_pickle() -> None:
    err = DecodeError("expected a JSON integer", index=3, offset=17)
    assert str(err) == "element 3 at byte offset 17: expected a JSON integer"
    named = err.for_tensor("INPUT0", kind="input")
    assert type(named) is DecodeError
    assert str(named) == "input 'INPUT0': element 3 at byte offset 17: expected a JSON integer"
    clone = pickle.loads(pickle.dumps(named))
    assert type(clone) is DecodeError and str(clone) == str(named) and clone.index == 3
    assert str(OIPError("bad", offset=4)) == "byte offset 4: bad"


def test_into_copies_the_elements_into_a_slice_of_a_batch_buffer():
    batch = np.zeros((5, 3), np.float32)
    t = Tensor("x", "FP32", [2, 3], np.arange(6, dtype=np.float32))  # flat data, 2x3 shape
    t.into(batch[1:3])
    assert batch[1:3].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert batch[0].tolist() == [0, 0, 0] and batch[3:].sum() == 0
    words = Tensor("w", "BYTES", [2], np.array([b"a", b"bc"], dtype=object))
    out = np.empty(3, dtype=object)
    words.into(out[1:])
    assert out[1:].tolist() == [b"a", b"bc"]


def test_into_names_the_tensor_when_the_destination_does_not_fit():
    t = Tensor("x", "FP32", [2, 3], np.zeros((2, 3), np.float32))
    with pytest.raises(ShapeError, match=r"'x'.*\[3, 3\].*\[2, 3\]"):
        t.into(np.empty((3, 3), np.float32))
    with pytest.raises(DatatypeError, match=r"'x'.*int64.*FP32"):
        t.into(np.empty((2, 3), np.int64))
