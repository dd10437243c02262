"""Top-k ranking and classification strings: top_k / classification_strings on both
implementations, against a reference written with Python's sorted() and '%f' / '%d'."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from oipcodec.errors import EncodeError

# Every OIP numeric datatype as numpy holds it (BF16 separately: ml_dtypes is optional).
DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
]


def reference_top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Each row's indices, best first: a Python sort on (NaN?, -value, index), values as exact
    Python numbers (ints stay ints, so int64/uint64 extremes compare exactly)."""
    rows = []
    for row in values.tolist():
        key = [
            (isinstance(v, float) and math.isnan(v), -v, i) for i, v in enumerate(row)
        ]  # bool -v is an int: True (1) ranks above False (0)
        rows.append([i for _, _, i in sorted(key)][: min(k, len(row))])
    return np.array(rows, dtype=np.int64).reshape(values.shape[0], min(k, values.shape[1]))


def reference_text(value: Any) -> str:
    """std::to_string's text of one value, written with Python's own formatting."""
    # printf's own conversions, on purpose: %d and %f are the rule under test.
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return "%d" % int(value)  # noqa: UP031
    value = float(value)
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return "%f" % value  # noqa: UP031


def arrays(dtype: Any) -> st.SearchStrategy[np.ndarray]:
    shape = st.tuples(st.integers(0, 5), st.integers(0, 40))
    # Few distinct values, so that ties are common.
    if np.dtype(dtype).kind == "f":
        pool = st.sampled_from([0.0, -0.0, 1.0, -1.5, 2.5, math.inf, -math.inf, math.nan, 1e4])
        elements = st.one_of(pool, st.floats(width=np.dtype(dtype).itemsize * 8))
        return hnp.arrays(dtype, shape, elements=elements)
    return hnp.arrays(dtype, shape)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@given(data=st.data())
def test_top_k_matches_the_reference(impl, dtype, data) -> None:
    values = data.draw(arrays(dtype))
    k = data.draw(st.integers(1, 50))
    indices, picked = impl.top_k(values, k)
    expected = reference_top_k(values, k)
    np.testing.assert_array_equal(indices, expected)
    assert indices.dtype == np.int64
    assert picked.dtype == values.dtype
    np.testing.assert_array_equal(picked, np.take_along_axis(values, expected, axis=1))


def test_ties_nan_and_signed_zero(impl) -> None:
    values = np.array([[np.nan, 1.0, -0.0, 1.0, 0.0, np.nan, -np.inf]], np.float32)
    indices, _ = impl.top_k(values, 7)
    assert indices.tolist() == [[1, 3, 2, 4, 6, 0, 5]]
    only_nan = np.full((2, 3), np.nan)
    assert impl.top_k(only_nan, 2)[0].tolist() == [[0, 1], [0, 1]]


def test_integer_extremes_and_layouts(impl) -> None:
    big = np.array([[2**63 - 1, -(2**63), 2**63 - 2, 0]], np.int64)
    assert impl.top_k(big, 2)[0].tolist() == [[0, 2]]
    huge = np.array([[2**64 - 1, 2**63, 0, 2**64 - 1]], np.uint64)
    assert impl.top_k(huge, 3)[0].tolist() == [[0, 3, 1]]
    swapped = np.array([[1, 5, 3]], dtype=">i4")
    assert impl.top_k(swapped, 2)[0].tolist() == [[1, 2]]
    fortran = np.asfortranarray(np.array([[1.0, 3.0], [4.0, 2.0]]))
    assert impl.top_k(fortran, 1)[0].tolist() == [[1], [0]]
    unaligned = np.frombuffer(b"\0" + np.array([1.0, 9.0, 3.0]).tobytes(), np.float64, offset=1)
    assert not unaligned.flags.aligned
    assert impl.top_k(unaligned.reshape(1, 3), 2)[0].tolist() == [[1, 2]]


def test_bfloat16(impl) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    values = np.array([[0.5, 3.0, np.nan, 3.0, -2.0]], dtype=ml_dtypes.bfloat16)
    indices, picked = impl.top_k(values, 4)
    assert indices.tolist() == [[1, 3, 0, 4]]
    assert picked.dtype == values.dtype
    strings = impl.classification_strings(picked, indices)
    assert strings.tolist() == [[b"3.000000:1", b"3.000000:3", b"0.500000:0", b"-2.000000:4"]]


def test_k_beyond_the_classes_and_empty_tensors(impl) -> None:
    values = np.array([[3, 1, 2]], np.int32)
    assert impl.top_k(values, 10)[0].tolist() == [[0, 2, 1]]
    # A huge k costs nothing: the answer is capped by the class count before allocating.
    indices, picked = impl.top_k(values, 2**62)
    assert indices.shape == picked.shape == (1, 3)
    assert impl.top_k(np.zeros((0, 1000), np.float32), 5)[0].shape == (0, 5)
    assert impl.top_k(np.zeros((4, 0), np.float32), 5)[0].shape == (4, 0)


@pytest.mark.parametrize("k", [0, -1, 1.0, True, "3", None])
def test_k_must_be_a_positive_integer(impl, k) -> None:
    with pytest.raises(EncodeError, match="k must be a positive integer"):
        impl.top_k(np.zeros((1, 3)), k)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (np.zeros(3), "2-D array"),
        (np.zeros((1, 2, 3)), "2-D array"),
        (np.array([[b"a"]], dtype=object), "must hold numbers"),
        (np.array([["a"]]), "must hold numbers"),
        (np.zeros((1, 2), np.complex64), "must hold numbers"),
        ([[1, 2]], "numpy array"),
    ],
)
def test_refused_values(impl, values, message) -> None:
    with pytest.raises(EncodeError, match=message):
        impl.top_k(values, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@given(data=st.data())
def test_strings_match_the_reference(impl, dtype, data) -> None:
    values = data.draw(arrays(dtype))
    indices = data.draw(hnp.arrays(np.int64, values.shape, elements=st.integers(0, 2**40)))
    labels = data.draw(st.none() | st.lists(st.text(max_size=4), max_size=6))
    strings = impl.classification_strings(values, indices, labels)
    assert strings.shape == values.shape
    assert strings.dtype == object
    for value, at, got in zip(values.ravel(), indices.ravel(), strings.ravel(), strict=True):
        text = f"{reference_text(value)}:{at}"
        if labels is not None and at < len(labels) and labels[at]:
            text += ":" + labels[at]
        assert got == text.encode(), (value, at)


def test_strings_as_cpp_prints_them(impl) -> None:
    def strings(values: Any, dtype: Any) -> list[bytes]:
        array = np.array(values, dtype=dtype)
        return impl.classification_strings(array, np.arange(array.size)).tolist()

    assert strings([16], np.int32) == [b"16:0"]
    assert strings([3.3], np.float32) == [b"3.300000:0"]  # float32(3.3) = 3.2999999523...
    assert strings([1e30], np.float32) == [b"1000000015047466219876688855040.000000:0"]
    assert strings([1e-7, -1e-7], np.float64) == [b"0.000000:0", b"-0.000000:1"]
    assert strings([np.nan, -np.nan, np.inf, -np.inf], np.float64) == [
        b"nan:0",
        b"-nan:1",
        b"inf:2",
        b"-inf:3",
    ]
    assert strings([-128, 127], np.int8) == [b"-128:0", b"127:1"]
    assert strings([2**64 - 1], np.uint64) == [b"18446744073709551615:0"]
    assert strings([-(2**63)], np.int64) == [b"-9223372036854775808:0"]
    assert strings([True, False], np.bool_) == [b"1:0", b"0:1"]
    assert strings([65504], np.float16) == [b"65504.000000:0"]
    largest = impl.classification_strings(np.array([-1.7976931348623157e308]), np.array([2**62]))
    expected = "%f:%d" % (-1.7976931348623157e308, 2**62)  # noqa: UP031
    assert largest[0] == expected.encode()


def test_labels(impl) -> None:
    values = np.array([[0.25, 0.75]], np.float32)
    indices = np.array([[1, 0]])
    got = impl.classification_strings(values, indices, ["cat", "dog"])
    assert got.tolist() == [[b"0.250000:1:dog", b"0.750000:0:cat"]]
    got = impl.classification_strings(values, indices, [b"", "\u00e9t\u00e9"])
    assert got.tolist() == [[b"0.250000:1:\xc3\xa9t\xc3\xa9", b"0.750000:0"]]
    with pytest.raises(EncodeError, match="sequence of labels"):
        impl.classification_strings(values, indices, "cat")
    with pytest.raises(EncodeError, match="label 1 must be str or bytes"):
        impl.classification_strings(values, indices, ["cat", 3])


def test_refused_strings_arguments(impl) -> None:
    values = np.array([[1.0, 2.0]])
    with pytest.raises(EncodeError, match="shape"):
        impl.classification_strings(values, np.array([1, 0]))
    with pytest.raises(EncodeError, match="integer numpy array"):
        impl.classification_strings(values, np.array([[1.0, 0.0]]))
    with pytest.raises(EncodeError, match="negative"):
        impl.classification_strings(values, np.array([[1, -1]]))
    with pytest.raises(EncodeError, match="must hold numbers"):
        impl.classification_strings(np.array([[b"x"]], dtype=object), np.array([[0]]))


def test_twins_agree_on_a_large_random_batch(both) -> None:
    native, pure = both
    rng = np.random.default_rng(22)
    values = rng.standard_normal((64, 1000)).astype(np.float32)
    values[rng.random(values.shape) < 0.01] = np.nan
    values[:, 500] = values[:, 3]  # ties across the row
    for k in (1, 5, 1000):
        n_idx, n_val = native.top_k(values, k)
        p_idx, p_val = pure.top_k(values, k)
        np.testing.assert_array_equal(n_idx, p_idx)
        np.testing.assert_array_equal(
            native.classification_strings(n_val, n_idx), pure.classification_strings(p_val, p_idx)
        )
