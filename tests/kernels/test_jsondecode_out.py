"""json_to_array(..., out=): parsing straight into a caller's array (a batch buffer's rows),
on both implementations."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oipcodec.errors import DatatypeError, DecodeError, LimitError, ShapeError

SAMPLES = {
    "BOOL": ("[true, false, true, true, false, false]", np.bool_),
    "UINT8": ("[0, 1, 2, 250, 254, 255]", np.uint8),
    "UINT16": ("[0, 1, 2, 65000, 7, 65535]", np.uint16),
    "UINT32": ("[0, 1, 2, 4294967295, 7, 8]", np.uint32),
    "UINT64": ("[0, 1, 2, 18446744073709551615, 7, 8]", np.uint64),
    "INT8": ("[-128, 1, 2, 127, -7, 0]", np.int8),
    "INT16": ("[-32768, 1, 2, 32767, -7, 0]", np.int16),
    "INT32": ("[-2147483648, 1, 2, 2147483647, -7, 0]", np.int32),
    "INT64": ("[-9223372036854775808, 1, 2, 9223372036854775807, -7, 0]", np.int64),
    "FP16": ("[0.1, -2.5, 65504, NaN, -Infinity, 1e-7]", np.float16),
    "FP32": ("[0.1, -2.5, 3.4e38, NaN, Infinity, 1e-45]", np.float32),
    "FP64": ("[0.1, -2.5, 1.7e308, null, -Infinity, 5e-324]", np.float64),
    "BF16": ("[0.1, -2.5, 3.3e38, NaN, Infinity, 1.00390625]", ml_dtypes.bfloat16),
    "BYTES": ('["a", "", "\\u00e9", "x\\ny", "\\ud83d\\ude00", "zz"]', object),
}


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype == object:
        return a.tolist() == b.tolist()
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("datatype", sorted(SAMPLES))
def test_into_rows_of_a_larger_buffer(impl, datatype: str) -> None:
    """The parse lands in the given rows, equal bit for bit to the allocating parse, and the
    rows around them are untouched."""
    text, dtype = SAMPLES[datatype]
    expected = impl.json_to_array(text, datatype, [2, 3])
    batch = np.zeros((4, 3), dtype=dtype) if dtype is not object else np.full((4, 3), b"-", object)
    guard = batch.copy()
    got = impl.json_to_array(text, datatype, [2, 3], out=batch[1:3])
    assert got.base is batch or got.base is batch.base or np.shares_memory(got, batch)
    assert _same(batch[1:3], expected)
    assert _same(batch[[0, 3]], guard[[0, 3]])


@pytest.mark.parametrize("datatype", sorted(SAMPLES))
def test_out_of_another_shape(impl, datatype: str) -> None:
    """out need not have the request's shape, only its element count."""
    text, dtype = SAMPLES[datatype]
    out = np.empty(6, dtype=dtype)
    assert impl.json_to_array(text, datatype, [3, 2], out=out) is out
    assert _same(out, impl.json_to_array(text, datatype, [6]))


def test_nested_text_into_rows(impl) -> None:
    batch = np.zeros((3, 2, 2), np.int32)
    impl.json_to_array("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]", "INT32", [2, 2, 2], out=batch[1:])
    assert batch.ravel().tolist() == [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]


def test_bf16_widened_into_float32(impl) -> None:
    """BF16 parsed into float32 holds the BF16-rounded values (as decoding without ml_dtypes
    returns them)."""
    text = "[0.1, -2.5, 1.00390625, 1.01171875, 3.3e38, NaN]"
    out = np.empty(6, np.float32)
    impl.json_to_array(text, "BF16", [6], out=out)
    expected = impl.json_to_array(text, "BF16", [6]).astype(np.float32)
    assert out.tobytes() == expected.tobytes()


def test_fp16_narrowed_on_the_way(impl) -> None:
    """FP16 is rounded once from the decimal text (not through float32): the halfway case
    between two halves rounds as the text says."""
    text = "[1.00048828125, 1.0004882812500001]"  # exactly a tie; just above it
    out = np.empty(2, np.float16)
    impl.json_to_array(text, "FP16", [2], out=out)
    assert out.view(np.uint16).tolist() == [0x3C00, 0x3C01]


@pytest.mark.parametrize(
    "out, error, message",
    [
        (np.empty(5, np.float32), ShapeError, "out holds 5 elements; shape [2, 3] needs 6"),
        (np.empty(7, np.float32), ShapeError, "out holds 7 elements; shape [2, 3] needs 6"),
        (np.empty(6, np.float64), DatatypeError, "FP32 data goes into float32"),
        (np.empty(6, ">f4"), DatatypeError, "out has dtype >f4"),
        (np.empty((6, 2), np.float32)[:, 0], DecodeError, "C-contiguous"),
        ([0.0] * 6, DecodeError, "out must be a numpy array, got list"),
    ],
)
def test_bad_destinations_are_refused_before_reading(impl, out, error, message) -> None:
    with pytest.raises(error) as caught:
        impl.json_to_array("[1, 2, 3, 4, 5, 6]", "FP32", [2, 3], out=out)
    assert message in str(caught.value)


def test_read_only_destination(impl) -> None:
    out = np.zeros(3, np.int64)
    out.flags.writeable = False
    with pytest.raises(DecodeError, match="writable"):
        impl.json_to_array("[1, 2, 3]", "INT64", [3], out=out)
    assert out.tolist() == [0, 0, 0]


@pytest.mark.parametrize("datatype", ["INT64", "FP32", "BOOL", "BYTES", "FP16", "BF16"])
def test_more_elements_than_out_writes_nothing_past_it(impl, datatype: str) -> None:
    """A text with more elements than the destination stops at element out.size, names it
    and the expected count, and the buffer after the destination keeps its values."""
    text, dtype = SAMPLES[datatype]
    sentinel = np.full(8, b"!", dtype=object) if dtype is object else np.full(8, 1, dtype)
    batch = sentinel.copy()
    with pytest.raises(DecodeError) as caught:
        impl.json_to_array(text, datatype, [4], out=batch[:4])
    assert caught.value.index == 4
    assert "more than 4 entries" in str(caught.value)
    assert _same(batch[4:], sentinel[4:])


@pytest.mark.parametrize(
    "text, datatype, shape",
    [
        ("[1, 2, x]", "INT32", [3]),
        ("[1, 2, 300]", "UINT8", [3]),
        ("[1.5, 2]", "INT64", [2]),
        ("[[1, 2], [3]]", "FP32", [2, 2]),
        ("[1, 2", "FP64", [2]),
        ("[1, 2] 3", "FP32", [2]),
        ('["a", 1]', "BYTES", [2]),
        ("[1e39, 1]", "FP32", [2]),
        ("[true, 1]", "BOOL", [2]),
        ("[[[[1]]]]", "FP32", [1]),
    ],
)
def test_errors_equal_the_allocating_parse(impl, text: str, datatype: str, shape) -> None:
    """Writing into out changes no message: the same class, index, offset and text."""
    with pytest.raises(DecodeError) as eager:
        impl.json_to_array(text, datatype, shape, max_depth=3)
    dtype = SAMPLES[datatype][1]
    with pytest.raises(DecodeError) as into:
        impl.json_to_array(
            text, datatype, shape, max_depth=3, out=np.empty(int(np.prod(shape)), dtype)
        )
    assert type(into.value) is type(eager.value)
    assert str(into.value) == str(eager.value)
    assert (into.value.index, into.value.offset) == (eager.value.index, eager.value.offset)


def test_depth_limit_with_out(impl) -> None:
    with pytest.raises(LimitError):
        impl.json_to_array("[[1]]", "FP32", [1, 1], max_depth=1, out=np.empty(1, np.float32))


def test_empty_and_scalar_destinations(impl) -> None:
    empty = np.empty((0, 3), np.float32)
    assert impl.json_to_array("[]", "FP32", [0, 3], out=empty) is empty
    scalar = np.empty((), np.int64)
    impl.json_to_array("7", "INT64", [], out=scalar)
    assert int(scalar) == 7


@given(
    values=st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=64),
    row=st.integers(0, 3),
)
@settings(max_examples=100)
def test_random_fp32_rows(impl, values: list[float], row: int) -> None:
    text = json.dumps(values)
    batch = np.zeros((4, len(values)), np.float32)
    impl.json_to_array(text, "FP32", [1, len(values)], out=batch[row : row + 1])
    expected = impl.json_to_array(text, "FP32", [len(values)])
    assert batch[row].tobytes() == expected.tobytes()
    assert not batch[np.arange(4) != row].any()


@given(values=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=64))
@settings(max_examples=100)
def test_random_int64(impl, values: list[int]) -> None:
    out = np.empty(len(values), np.int64)
    impl.json_to_array(json.dumps(values), "INT64", [len(values)], out=out)
    assert out.tolist() == values
