"""Row-major layout: flatten / unflatten / little_endian_view on both implementations."""

from __future__ import annotations

import math
import struct
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oipcodec import datatypes
from oipcodec.errors import DatatypeError, EncodeError, LimitError, ShapeError
from oipcodec.limits import Limits

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

INTS = ["UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64"]
FLOATS = ["FP16", "FP32", "FP64", "BF16"]
ALL = ["BOOL", *INTS, *FLOATS, "BYTES"]
# (significand bits with the implicit one, smallest normal exponent, largest exponent)
FORMATS = {"FP16": (11, -14, 15), "FP32": (24, -126, 127), "BF16": (8, -126, 127)}

shapes = st.lists(st.integers(0, 4), max_size=4).map(tuple)


def bits_of(array: np.ndarray) -> np.ndarray:
    return array.view(f"u{array.dtype.itemsize}")


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit, except that any NaN matches any NaN (payloads are not carried
    through Python floats: float64 conversion quietens signalling NaNs)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return a.tolist() == b.tolist()
    if a.dtype.kind in "biu":
        return np.array_equal(a, b)
    # Widening a signalling NaN raises the invalid flag (numpy warns of it): expected here.
    with np.errstate(invalid="ignore"):
        nan = np.isnan(a.astype(np.float64))
        other_nan = np.isnan(b.astype(np.float64))
    return bool(np.array_equal(nan, other_nan)) and bool(
        np.array_equal(bits_of(a)[~nan], bits_of(b)[~nan])
    )


def test_same_values_compares_signalling_nans_without_warning() -> None:
    # Hypothesis draws signalling NaNs only now and then; here they are certain.
    snan = np.array([0x7F81, 0xFF81, 0x3F80], dtype=np.uint16).view(BF16)
    quiet = np.array([0x7FC1, 0xFFC1, 0x3F80], dtype=np.uint16).view(BF16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same_values(snan, quiet)


@st.composite
def arrays(draw: Any, datatype: str) -> np.ndarray:
    shape = draw(shapes)
    n = math.prod(shape)
    if datatype == "BYTES":
        values = draw(st.lists(st.binary(max_size=8), min_size=n, max_size=n))
        out = np.empty(n, dtype=object)
        out[:] = values
        return out.reshape(shape)
    if datatype == "BOOL":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool).reshape(shape)
    dtype = BF16 if datatype == "BF16" else datatypes.to_numpy(datatype)
    if datatype in INTS:
        info = np.iinfo(dtype)
        values = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=n, max_size=n))
        return np.array(values, dtype=dtype).reshape(shape)
    # Floats from raw bit patterns: every sign, subnormal, -0.0, inf and NaN is reachable.
    width = dtype.itemsize * 8
    raw = draw(st.lists(st.integers(0, 2**width - 1), min_size=n, max_size=n))
    return np.array(raw, dtype=f"u{dtype.itemsize}").view(dtype).reshape(shape)


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("datatype", ALL)
@given(data=st.data())
@settings(max_examples=40)
def test_flatten_of_unflatten_round_trips(impl, datatype: str, data: Any) -> None:
    array = data.draw(arrays(datatype))
    nested = impl.unflatten(array.reshape(-1), array.shape)
    assert isinstance(nested, list) == (array.shape != ())
    flat, shape = impl.flatten(nested, datatype)
    # Lists cannot show the dimensions after a zero-length one: [] is shape (0,), whatever
    # shape (0, 3) or (0, 0) array it came from.
    visible = array.shape[: array.shape.index(0) + 1] if 0 in array.shape else array.shape
    assert shape == visible
    assert flat.ndim == 1 and flat.flags.c_contiguous
    assert same_values(flat, array.reshape(-1))


@pytest.mark.parametrize("datatype", ALL)
@given(data=st.data())
@settings(max_examples=20)
def test_flatten_of_an_array_is_the_array(impl, datatype: str, data: Any) -> None:
    array = data.draw(arrays(datatype))
    flat, shape = impl.flatten(array, datatype)
    assert shape == array.shape
    assert same_values(flat, array.reshape(-1))
    flat, shape = impl.flatten(np.asfortranarray(array), datatype)
    assert same_values(flat, array.reshape(-1))


def test_scalars_and_zero_size(impl) -> None:
    flat, shape = impl.flatten(2.5, "FP32")
    assert shape == () and flat.tolist() == [2.5] and flat.dtype == np.float32
    assert impl.flatten(b"x", "BYTES")[1] == ()
    assert impl.flatten([], "INT8")[1] == (0,)
    flat, shape = impl.flatten([[], []], "FP64")
    assert shape == (2, 0) and flat.shape == (0,) and flat.dtype == np.float64
    assert impl.flatten([[[]], [[]]], "BYTES")[1] == (2, 1, 0)
    assert impl.unflatten(np.array([7], np.int8), ()) == 7
    assert impl.unflatten(np.zeros(0), (2, 0, 3)) == [[], []]
    assert impl.unflatten(np.zeros(0), (0, 3)) == []


def test_numpy_values_at_any_level(impl) -> None:
    nested = [np.array([1, 2], np.int16), [np.int64(3), 4], (np.uint8(5), np.array(6))]
    flat, shape = impl.flatten(nested, "INT32")
    assert shape == (3, 2) and flat.tolist() == [1, 2, 3, 4, 5, 6] and flat.dtype == np.int32
    flat, shape = impl.flatten([np.array([[1.5, 2]]), [[np.float32(3), 4]]], "FP64")
    assert shape == (2, 1, 2) and flat.tolist() == [1.5, 2.0, 3.0, 4.0]
    flat, _ = impl.flatten([np.True_, False, np.array(True)], "BOOL")
    assert flat.tolist() == [True, False, True]


def test_bytes_elements(impl) -> None:
    values = [
        b"raw",
        "t\u00e9xt",
        bytearray(b"ba"),
        memoryview(b"mv"),
        np.bytes_(b"nb"),
        np.str_("ns"),
    ]
    flat, shape = impl.flatten(values, "BYTES")
    assert flat.dtype == object and shape == (6,)
    assert flat.tolist() == [b"raw", "t\u00e9xt".encode(), b"ba", b"mv", b"nb", b"ns"]
    assert all(type(x) is bytes for x in flat)
    flat, shape = impl.flatten(np.array([["a", "bc"]]), "BYTES")
    assert shape == (1, 2) and flat.tolist() == [b"a", b"bc"]
    flat, _ = impl.flatten([np.array([b"x\x00", b""], dtype="S2")], "BYTES")
    assert flat.tolist() == [b"x", b""]  # numpy drops trailing NULs of S cells


def test_array_input_of_the_right_dtype_is_not_copied(impl) -> None:
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    flat, _ = impl.flatten(array, "FP32")
    assert np.shares_memory(flat, array)
    flat, _ = impl.flatten(array.astype(">f4"), "FP32")
    assert flat.dtype == np.float32 and flat.dtype.isnative and flat.tolist() == list(range(12))
    assert not np.shares_memory(impl.flatten(array.T, "FP32")[0], array)


def test_bf16_gives_ml_dtypes(impl) -> None:
    flat, _ = impl.flatten([1.0, 3.0078125], "BF16")
    assert flat.dtype == BF16
    assert bits_of(flat).tolist() == [0x3F80, 0x4040]  # 3.0078125 is a tie: to even (3.0)


# --- rounding -------------------------------------------------------------------------------


def exact_round(value: Fraction, datatype: str) -> float:
    """``value`` rounded to nearest even in ``datatype``, from the exact rational."""
    bits, emin, emax = FORMATS[datatype]
    if value == 0:
        return 0.0
    sign = -1 if value < 0 else 1
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    ulp = Fraction(2) ** (max(exponent, emin) - (bits - 1))
    units, rest = divmod(magnitude, ulp)
    if rest > ulp / 2 or (rest == ulp / 2 and units % 2):
        units += 1
    result = units * ulp
    if result >= Fraction(2) ** (emax + 1):
        return sign * math.inf
    return sign * float(result)


def as_float(flat: np.ndarray) -> float:
    return float(flat.astype(np.float64)[0])


@pytest.mark.parametrize("datatype", ["FP16", "FP32", "BF16"])
@given(value=st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**80), 2**80))
@settings(max_examples=300)
def test_narrowing_is_correctly_rounded(impl, datatype: str, value: float | int) -> None:
    expected = exact_round(Fraction(value), datatype)
    if math.isinf(expected):
        with pytest.raises(EncodeError, match="out of range"):
            impl.flatten([value], datatype)
        return
    got = as_float(impl.flatten([value], datatype)[0])
    assert got == expected and math.copysign(1, got) == math.copysign(1, expected or value)
    # The same value inside a numpy array goes through the vectorised path: same result.
    source = np.array([value], dtype=np.float64 if isinstance(value, float) else object)
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        source = source.astype(np.int64)
    assert as_float(impl.flatten(source, datatype)[0]) == expected


@pytest.mark.parametrize(
    ("datatype", "value", "expected"),
    [
        ("BF16", 1 + 2**-8 + 2**-30, 1 + 2**-7),  # ml_dtypes' double rounding gives 1.0
        ("FP16", 1 + 2**-11 + 2**-40, 1 + 2**-10),
        ("FP32", 2**60 + 2**36 + 1, 2.0**60 + 2**37),  # int -> float64 -> float32 gives 2**60
        ("FP32", math.nextafter(2.0**128 - 2.0**103, 0), 3.4028234663852886e38),  # below the tie
        ("FP16", 65519.99, 65504.0),
        ("BF16", 2.0**-130, 2.0**-130),  # subnormal
        ("BF16", 2.0**-134, 0.0),  # half the smallest subnormal: a tie, to even (zero)
        ("BF16", 1.5 * 2.0**-134, 2.0**-133),
        ("FP32", -0.0, -0.0),
    ],
)
def test_hard_rounding_cases(impl, datatype: str, value: float, expected: float) -> None:
    got = as_float(impl.flatten([value], datatype)[0])
    assert got == expected and math.copysign(1, got) == math.copysign(1, expected)


@pytest.mark.parametrize("datatype", FLOATS)
def test_non_finite_values_are_kept(impl, datatype: str) -> None:
    flat, _ = impl.flatten([math.inf, -math.inf, math.nan, -math.nan], datatype)
    wide = flat.astype(np.float64)
    assert wide[0] == math.inf and wide[1] == -math.inf and np.isnan(wide[2:]).all()
    assert np.signbit(wide[3]) and not np.signbit(wide[2])


# --- errors: classes and exact messages -------------------------------------------------------

ERRORS = [
    (
        [[1, 2, 3, 4], [5, 6, 7]],
        "INT32",
        ShapeError,
        "[1]: expected a list of 4 elements, got a list of 3",
    ),
    (
        [[[0] * 4] * 4, [[0] * 4] * 3 + [[0] * 3]],
        "INT32",
        ShapeError,
        "[1][3]: expected a list of 4 elements, got a list of 3",
    ),
    ([[1], 2], "FP32", ShapeError, "[1]: expected a list of 1 element, got int 2"),
    ([1, [2]], "FP32", ShapeError, "[1]: expected a scalar, got a list of 1"),
    ([(1, 2), (3, (4,))], "INT8", ShapeError, "[1][1]: expected a scalar, got a tuple of 1"),
    (
        [np.zeros(2), np.zeros(3)],
        "FP32",
        ShapeError,
        "[1]: expected shape (2,), got an array of shape (3,)",
    ),
    (
        [[1, 2], [3, np.zeros(1)]],
        "FP32",
        ShapeError,
        "[1][1]: expected a scalar, got an array of shape (1,)",
    ),
    (
        [[1, 2], [3, 300]],
        "INT8",
        EncodeError,
        "element 3: [1][1]: 300 is out of range for INT8 [-128, 127]",
    ),
    (
        [-1],
        "UINT64",
        EncodeError,
        "element 0: [0]: -1 is out of range for UINT64 [0, 18446744073709551615]",
    ),
    (
        [2**64],
        "UINT64",
        EncodeError,
        "element 0: [0]: 18446744073709551616 is out of range for UINT64 [0, 18446744073709551615]",
    ),
    (
        [0, np.int64(-129)],
        "INT8",
        EncodeError,
        "element 1: [1]: -129 is out of range for INT8 [-128, 127]",
    ),
    (
        [np.array([[1, 2], [3, 70000]])],
        "UINT16",
        EncodeError,
        "element 3: [0][1][1]: 70000 is out of range for UINT16 [0, 65535]",
    ),
    (
        [1, 2.0],
        "INT64",
        EncodeError,
        "element 1: [1]: expected an integer for INT64, got float 2.0",
    ),
    ([True], "INT8", EncodeError, "element 0: [0]: expected an integer for INT8, got bool True"),
    (
        [np.float32(1.5)],
        "INT16",
        EncodeError,
        "element 0: [0]: expected an integer for INT16, got float32 1.5",
    ),
    (
        [[1], np.array([0.5])],
        "INT8",
        EncodeError,
        "element 1: [1][0]: expected an integer for INT8, got float64 0.5",
    ),
    ([True, 1], "BOOL", EncodeError, "element 1: [1]: expected a bool for BOOL, got int 1"),
    (
        [False],
        "FP32",
        EncodeError,
        "element 0: [0]: expected a number (int or float) for FP32, got bool False",
    ),
    (
        ["1.0"],
        "FP64",
        EncodeError,
        "element 0: [0]: expected a number (int or float) for FP64, got str '1.0'",
    ),
    (
        [None],
        "BYTES",
        EncodeError,
        "element 0: [0]: expected bytes or str for BYTES, got NoneType None",
    ),
    (
        [1e39],
        "FP32",
        EncodeError,
        "element 0: [0]: 1e+39 is out of range for FP32 (it rounds to infinity)",
    ),
    (
        [2.0**128 - 2.0**103],
        "FP32",
        EncodeError,
        "element 0: [0]: 3.4028235677973366e+38 is out of range for FP32 (it rounds to infinity)",
    ),
    (
        [65520],
        "FP16",
        EncodeError,
        "element 0: [0]: 65520 is out of range for FP16 (it rounds to infinity)",
    ),
    (
        [[0.0], np.array([-1e300])],
        "BF16",
        EncodeError,
        "element 1: [1][0]: -1e+300 is out of range for BF16 (it rounds to infinity)",
    ),
    (
        [2**1100],
        "FP64",
        EncodeError,
        "element 0: [0]: <1101-bit integer> is out of range for FP64 (it rounds to infinity)",
    ),
    (
        ["ok", "\ud800"],
        "BYTES",
        EncodeError,
        "element 1: [1]: str is not encodable as UTF-8 ('utf-8' codec can't encode character '\\ud800' in position 0: surrogates not allowed)",
    ),
    (
        np.array([[1, [2]]], dtype=object),
        "INT8",
        ShapeError,
        "[0][1]: expected a scalar, got a list of 1",
    ),
    (
        np.array([b"a", 5], dtype=object),
        "BYTES",
        EncodeError,
        "element 1: [1]: expected bytes or str for BYTES, got int 5",
    ),
    (
        np.array([1, 2]),
        "BYTES",
        EncodeError,
        "element 0: [0]: expected bytes or str for BYTES, got int64 1",
    ),
    (
        np.array([1 + 2j]),
        "FP64",
        EncodeError,
        "element 0: [0]: expected a number (int or float) for FP64, got complex128 (1+2j)",
    ),
    (1.5, "INT8", EncodeError, "element 0: expected an integer for INT8, got float 1.5"),
]


@pytest.mark.parametrize(("nested", "datatype", "error", "message"), ERRORS)
def test_error_classes_and_messages(
    impl, nested: Any, datatype: str, error: type, message: str
) -> None:
    with pytest.raises(error) as caught:
        impl.flatten(nested, datatype)
    assert str(caught.value) == message


def test_first_problem_in_row_major_order_wins(impl) -> None:
    # A bad element before a ragged row is reported, and a ragged row before a bad element.
    with pytest.raises(EncodeError, match=r"^element 1: \[0\]\[1\]"):
        impl.flatten([[1, 1.5], [1]], "INT8")
    with pytest.raises(ShapeError, match=r"^\[1\]"):
        impl.flatten([[1, 2], [1], [1.5, 0]], "INT8")


def test_unknown_datatype(impl) -> None:
    with pytest.raises(DatatypeError, match="unknown datatype 'fp32'"):
        impl.flatten([1.0], "fp32")


def test_depth_limit(impl) -> None:
    deep: Any = 1.0
    for _ in range(64):
        deep = [deep]
    assert impl.flatten(deep, "FP32")[1] == (1,) * 64
    with pytest.raises(
        LimitError, match=r"^shape has 65 dimensions, more than numpy's limit of 64$"
    ):
        impl.flatten([deep], "FP32")  # within max_depth (100), but past numpy's dimensions
    for _ in range(37):
        deep = [deep]
    with pytest.raises(LimitError, match=r"^data is nested more than 100 levels deep$"):
        impl.flatten(deep, "FP32")
    with pytest.raises(LimitError, match="more than 3 levels deep"):
        impl.flatten([[[[1]]]], "INT8", limits=Limits(max_depth=3))
    assert impl.flatten([[[1]]], "INT8", limits=Limits(max_depth=3))[1] == (1, 1, 1)


def test_a_list_containing_itself_is_refused(impl) -> None:
    loop: list[Any] = [1]
    loop[0] = loop
    with pytest.raises(LimitError, match="nested more than"):
        impl.flatten(loop, "FP32")
    row: list[Any] = [1, 2]
    outer = [row, row]
    row[1] = outer
    with pytest.raises(ShapeError, match=r"^\[0\]\[1\]: expected a scalar, got a list of 2$"):
        impl.flatten(outer, "INT8")


def test_element_count_limit_is_checked_before_allocating(impl) -> None:
    with pytest.raises(LimitError, match="describes 15 elements, more than the limit of 10"):
        impl.flatten([[0] * 5] * 3, "INT8", limits=Limits(max_tensor_elements=10))
    # A broadcast array is a few bytes of memory but claims 2**40 elements.
    huge = np.broadcast_to(np.float32(0), (2**20, 2**20))
    with pytest.raises(LimitError, match="more than the limit"):
        impl.flatten(huge, "FP32")
    with pytest.raises(LimitError, match="more than the limit"):
        impl.flatten([huge], "FP32")


def test_list_shortened_during_the_walk(impl) -> None:
    row: list[Any] = []

    class Shrinking(float):
        def __float__(self) -> float:
            row.clear()
            return 1.0

    row.extend([Shrinking(1.0), 2.0, 3.0])
    with pytest.raises(
        ShapeError, match=r"^\[0\]: expected a list of 3 elements, got a list of 0$"
    ):
        impl.flatten([row], "FP32")


def test_unflatten_checks_the_shape(impl) -> None:
    with pytest.raises(ShapeError, match=r"^shape \[2, 3\] holds 6 elements, the array has 5$"):
        impl.unflatten(np.zeros(5), [2, 3])
    with pytest.raises(ShapeError, match="non-negative"):
        impl.unflatten(np.zeros(0), [-1, 0])
    with pytest.raises(ShapeError, match="must be integers"):
        impl.unflatten(np.zeros(1), [True])
    with pytest.raises(ShapeError, match="sequence of integers"):
        impl.unflatten(np.zeros(1), 1)


def test_unflatten_values_and_layouts(impl) -> None:
    array = np.arange(6, dtype=">i2").reshape(2, 3)
    assert impl.unflatten(array, (3, 2)) == [[0, 1], [2, 3], [4, 5]]
    assert impl.unflatten(np.asfortranarray(array), [6]) == [0, 1, 2, 3, 4, 5]
    nested = impl.unflatten(np.array([1.5, -0.0], BF16), (2,))
    assert nested == [1.5, -0.0] and all(type(x) is float for x in nested)
    assert impl.unflatten(np.array([True]), (1, 1)) == [[True]]
    assert impl.unflatten(np.array([2**64 - 1], np.uint64), (1,)) == [2**64 - 1]
    obj = np.empty(2, dtype=object)
    obj[:] = [b"a", b"b"]
    assert impl.unflatten(obj, (2, 1)) == [[b"a"], [b"b"]]


# --- twins agree --------------------------------------------------------------------------

scalars = st.one_of(
    st.integers(-(2**65), 2**65),
    st.floats(),
    st.booleans(),
    st.binary(max_size=3),
    st.text(max_size=3),
    st.none(),
    st.integers(-128, 127).map(np.int8),
    st.floats(width=32).map(np.float32),
    st.integers(0, 2**64 - 1).map(np.uint64),
    st.booleans().map(np.bool_),
    st.floats(width=16).map(np.float16),
    st.integers(0, 2**64 - 1).map(lambda b: np.array([b], np.uint64).view(np.float64)[0]),
)
leaves = st.one_of(
    scalars,
    st.lists(st.integers(-300, 300), max_size=3).map(np.array),
    st.lists(st.floats(width=32), max_size=3).map(lambda v: np.array(v, np.float32)),
)
nestings = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner))


def outcome(kernels: Any, nested: Any, datatype: str) -> tuple[Any, ...]:
    try:
        flat, shape = kernels.flatten(nested, datatype)
    except Exception as exc:  # the class and the message must agree
        return (type(exc).__name__, str(exc))
    if flat.dtype == object:
        return ("ok", shape, flat.tolist())
    return ("ok", shape, str(flat.dtype), flat.view(np.uint8).tobytes())


@given(nested=nestings, datatype=st.sampled_from(ALL))
@settings(max_examples=300)
def test_twins_agree_on_arbitrary_nestings(both, nested: Any, datatype: str) -> None:
    native, pure = both
    assert outcome(native, nested, datatype) == outcome(pure, nested, datatype)


@given(
    values=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=8),
    datatype=st.sampled_from(FLOATS),
)
@settings(max_examples=200)
def test_twins_agree_on_float64_bit_patterns(both, values: list[int], datatype: str) -> None:
    """Every float64 (NaN payloads, subnormals, the overflow edge), as Python floats (the native
    scalar loop) and as an array (the shared vectorised path), agrees between the twins."""
    native, pure = both
    doubles = np.array(values, np.uint64).view(np.float64)
    as_list = [float(x) for x in doubles]
    assert outcome(native, as_list, datatype) == outcome(pure, as_list, datatype)
    assert outcome(native, as_list, datatype) == outcome(native, doubles, datatype)
    assert outcome(pure, doubles, datatype) == outcome(native, doubles, datatype)


# --- little_endian_view -------------------------------------------------------------------


def le_bytes(array: np.ndarray) -> bytes:
    """The reference: the elements row-major, little-endian, via struct-free numpy."""
    if array.dtype == BF16:
        return np.ascontiguousarray(array).view(np.uint16).astype("<u2").tobytes()
    return np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()


def address(view: memoryview) -> int:
    return np.frombuffer(view, np.uint8).__array_interface__["data"][0] if view.nbytes else 0


LAYOUTS = {
    "c": lambda a: a,
    "fortran": np.asfortranarray,
    "reversed": lambda a: a[::-1, ::-1],
    "strided": lambda a: a[:, ::2],
    "big-endian": lambda a: a.astype(a.dtype.newbyteorder(">")) if a.dtype != BF16 else a,
    "big-endian-fortran": lambda a: (
        np.asfortranarray(a.astype(a.dtype.newbyteorder(">"))) if a.dtype != BF16 else a.T
    ),
    "zero-size": lambda a: a[:0],
    "0-d": lambda a: a[1, 1, ...],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["?", "i1", "u2", "i4", "u8", "f2", "f4", "f8", "bf16"])
def test_little_endian_view_layouts(impl, dtype: str, layout: str) -> None:
    base = np.arange(24).reshape(4, 6) % 7
    base = base.astype(BF16 if dtype == "bf16" else dtype)
    array = LAYOUTS[layout](base)
    view = impl.little_endian_view(array)
    assert isinstance(view, memoryview)
    assert view.readonly and view.format == "B" and view.ndim == 1 and view.c_contiguous
    assert view.nbytes == array.nbytes
    assert view.tobytes() == le_bytes(array)
    contiguous_le = array.flags.c_contiguous and array.dtype.byteorder in "=<|"
    if contiguous_le and array.size:
        assert address(view) == array.__array_interface__["data"][0]  # no copy
        assert np.shares_memory(np.frombuffer(view, np.uint8), array)
    elif array.size:
        assert not np.shares_memory(np.frombuffer(view, np.uint8), array)


def test_little_endian_view_keeps_the_array_alive_and_read_only(impl) -> None:
    view = impl.little_endian_view(np.arange(4, dtype="<i4"))
    assert struct.unpack("<4i", view) == (0, 1, 2, 3)
    with pytest.raises(TypeError):
        view[0] = 1


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (
            np.array([b"a"], dtype=object),
            "has no fixed-size layout: frame its elements with serialize_bytes",
        ),
        (np.array(["a"]), "has no fixed-size layout"),
        (np.zeros(2, np.complex64), "numpy dtype complex64 has no OIP datatype"),
        (b"abc", "expected a numpy array, got bytes"),
    ],
)
def test_little_endian_view_refuses(impl, array: Any, message: str) -> None:
    with pytest.raises(DatatypeError, match=message):
        impl.little_endian_view(array)


def test_reference_counts_are_balanced(impl) -> None:
    import sys

    element, number, text = b"element", 12345.5, "t\u00e9xt"

    def counts() -> list[int]:
        return [sys.getrefcount(element), sys.getrefcount(number), sys.getrefcount(text)]

    before = counts()
    flat, _ = impl.flatten([[element, text]] * 50, "BYTES")
    assert counts()[0] == before[0] + 50  # held by the output, once per cell
    del flat
    impl.flatten([[number] * 10] * 10, "FP64")
    with pytest.raises(ShapeError):
        impl.flatten([[number, number]] * 3 + [[number]], "FP32")
    with pytest.raises(EncodeError):
        impl.flatten([text, element, None], "BYTES")
    assert counts() == before


# ------------------------------------------------------------------ uninitialized_bytearray


@pytest.mark.parametrize("size", [0, 1, 7, 1 << 20])
def test_uninitialized_bytearray_size_and_writes(impl, size: int) -> None:
    buffer = impl.uninitialized_bytearray(size)
    assert type(buffer) is bytearray
    assert len(buffer) == size
    pattern = bytes(range(256)) * (size // 256 + 1)
    memoryview(buffer)[:] = pattern[:size]  # writable through a view, the way it is filled
    assert buffer == pattern[:size]
    buffer.extend(b"xy")  # an ordinary bytearray: it can still grow
    assert len(buffer) == size + 2


def test_uninitialized_bytearray_refuses_a_negative_size(impl) -> None:
    with pytest.raises(ValueError, match="cannot be negative, got -1"):
        impl.uninitialized_bytearray(-1)
