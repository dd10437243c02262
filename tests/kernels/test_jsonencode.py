"""array_to_json on both implementations: the text, the twins' agreement, round trips, errors."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oipcodec._shared.jsonencode import bf16_bits
from oipcodec.errors import DatatypeError, EncodeError

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

INT_TYPES = {
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
}

SPECIAL_F64 = [
    0.0,
    -0.0,
    math.nan,
    -math.nan,
    math.inf,
    -math.inf,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    1.7976931348623157e308,
    0.1,
    1.1,
    1e-7,
    1e16,
    9007199254740993.0,
    123456789.0,
    1e23,
    2.0**-1074 * 3,
]
SPECIAL_F32 = [
    0.0,
    -0.0,
    math.nan,
    math.inf,
    -math.inf,
    1e-45,
    1.1754942e-38,
    1.1754944e-38,
    3.4028235e38,
    1.1,
    0.1,
    16777216.0,
    16777217.0,
    1e-7,
    1e13,
    3.0e-39,
]


def objects(items: list) -> np.ndarray:
    """A 1-D object array holding exactly these items."""
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


def loads(text: bytes):
    """Python's json, which reads the NaN/Infinity tokens."""
    return json.loads(text)


def bits_of(values: np.ndarray) -> np.ndarray:
    return values.view(f"u{values.dtype.itemsize}")


def same_floats(got: np.ndarray, expected: np.ndarray) -> bool:
    """Bit-identical, except that any NaN equals any NaN (sign and payload are not carried)."""
    with np.errstate(invalid="ignore"):
        nan = np.isnan(expected.astype(np.float64))
        got_nan = np.isnan(got.astype(np.float64))
    if not np.array_equal(got_nan, nan):
        return False
    return bool(np.array_equal(bits_of(got)[~nan], bits_of(expected)[~nan]))


def float_arrays(dtype, specials: list[float]):
    """Arrays of any bit pattern of `dtype`, with special values mixed in."""
    itemsize = np.dtype(dtype).itemsize
    element = st.one_of(
        st.integers(0, 2 ** (8 * itemsize) - 1).map(
            lambda b: np.array([b], dtype=f"u{itemsize}").view(dtype)[0]
        ),
        st.sampled_from(specials).map(lambda v: np.array([v]).astype(dtype)[0]),
    )
    return st.lists(element, max_size=40).map(lambda xs: np.array(xs, dtype=dtype))


# ---------------------------------------------------------------------------- the text


@pytest.mark.parametrize(
    ("values", "datatype", "expected"),
    [
        (np.array([1.1, 0.1, 1.0, -0.0, 0.0], np.float32), "FP32", b"[1.1,0.1,1.0,-0.0,0.0]"),
        (
            np.array([0.1 + 0.2, 1.0, 1e100], np.float64),
            "FP64",
            b"[0.30000000000000004,1.0,1e+100]",
        ),
        (np.array([1.1, 65504, 6e-8], np.float16), "FP16", b"[1.1,65500.0,6e-8]"),
        (np.array([1.1, 3.0, 1 / 3], np.float32), "BF16", b"[1.1,3.0,0.334]"),
        (np.array([np.nan, np.inf, -np.inf], np.float32), "FP32", b"[NaN,Infinity,-Infinity]"),
        (np.array([np.nan, np.inf, -np.inf], np.float64), "FP64", b"[NaN,Infinity,-Infinity]"),
        (np.array([-np.nan, np.inf, -np.inf], np.float16), "FP16", b"[NaN,Infinity,-Infinity]"),
        (np.array([np.nan, np.inf, -np.inf]).astype(BF16), "BF16", b"[NaN,Infinity,-Infinity]"),
        (np.array([True, False]), "BOOL", b"[true,false]"),
        (np.array([0, -1, 7]), "INT64", b"[0,-1,7]"),
    ],
)
def test_examples(impl, values, datatype, expected) -> None:
    assert impl.array_to_json(values, datatype) == expected


# The layout rule: positional for decimal exponents -5..15 (FP64) and -6..12 (FP32, FP16,
# BF16), exponent form outside; integral positional values end in ".0".
@pytest.mark.parametrize(
    ("value", "fp64", "fp32"),
    [
        (1e-7, b"1e-7", b"1e-7"),
        (1.5e-7, b"1.5e-7", b"1.5e-7"),
        (1e-6, b"1e-6", b"0.000001"),
        (2.5e-6, b"2.5e-6", b"0.0000025"),
        (1e-5, b"0.00001", b"0.00001"),
        (0.000123, b"0.000123", b"0.000123"),
        (123.25, b"123.25", b"123.25"),
        (1e12, b"1000000000000.0", b"1000000000000.0"),
        (1.5e12, b"1500000000000.0", b"1500000000000.0"),
        (1e13, b"10000000000000.0", b"1e+13"),
        (1.25e15, b"1250000000000000.0", b"1.25e+15"),
        (1e16, b"1e+16", b"1e+16"),
        (-1.5e16, b"-1.5e+16", b"-1.5e+16"),
        (1e22, b"1e+22", b"1e+22"),
        (-2.5e-9, b"-2.5e-9", b"-2.5e-9"),
        (1e-40, b"1e-40", b"1e-40"),
    ],
)
def test_float_layout(impl, value, fp64, fp32) -> None:
    assert impl.array_to_json(np.array([value]), "FP64") == b"[" + fp64 + b"]"
    assert impl.array_to_json(np.array([value], np.float32), "FP32") == b"[" + fp32 + b"]"


def test_integer_extremes(impl) -> None:
    for datatype, dtype in INT_TYPES.items():
        info = np.iinfo(dtype)
        values = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dtype)
        text = impl.array_to_json(values, datatype)
        assert loads(text) == [int(v) for v in values]
        assert text == ("[" + ",".join(str(int(v)) for v in values) + "]").encode()


def test_integer_digit_count_boundaries(impl) -> None:
    # Every power of ten and its neighbours within each type's range: the writers build the
    # digits in blocks of 8 and trim leading zeros, so each digit count is its own case.
    for datatype, dtype in INT_TYPES.items():
        info = np.iinfo(dtype)
        edges = {int(info.min), int(info.min) + 1, int(info.max), int(info.max) - 1, 0}
        for k in range(21):
            for v in (10**k - 1, 10**k, 10**k + 1):
                edges |= {v, -v}
        values = sorted(v for v in edges if info.min <= v <= info.max)
        text = impl.array_to_json(np.array(values, dtype=dtype), datatype)
        assert text == json.dumps(values, separators=(",", ":")).encode()


@pytest.mark.parametrize("datatype", list(INT_TYPES))
@pytest.mark.parametrize("top", [0, 9, 99_999])
def test_large_integer_arrays_in_a_buffer_sized_by_their_values(impl, datatype, top) -> None:
    # From 65,536 elements the native writer sizes its buffer by the array's own min and max:
    # all zeros (one digit each) leaves the least room past the vector stores.
    info = np.iinfo(INT_TYPES[datatype])
    rng = np.random.default_rng(top)
    low = max(info.min, -top)
    values = rng.integers(low, min(info.max, top) + 1, 70_000).astype(INT_TYPES[datatype])
    assert (
        impl.array_to_json(values, datatype)
        == json.dumps(values.tolist(), separators=(",", ":")).encode()
    )
    rows = values.reshape(7_000, 10)
    assert json.loads(impl.array_to_json(rows, datatype, True)) == rows.tolist()


@pytest.mark.parametrize("datatype", list(INT_TYPES))
@given(data=st.data())
@settings(max_examples=40)
def test_integers_are_exact(impl, datatype, data) -> None:
    info = np.iinfo(INT_TYPES[datatype])
    values = data.draw(st.lists(st.integers(int(info.min), int(info.max)), max_size=50))
    array = np.array(values, dtype=INT_TYPES[datatype])
    text = impl.array_to_json(array, datatype)
    assert text == json.dumps(values, separators=(",", ":")).encode()


def test_bool_is_any_nonzero_byte(impl) -> None:
    raw = np.array([0, 1, 2, 255], np.uint8).view(np.bool_)
    assert impl.array_to_json(raw, "BOOL") == b"[false,true,true,true]"


# The native integer rows write blocks of 8 elements whose magnitudes are below 10**8 with
# AVX-512 where the processor has it, stop 16 elements before a row's end, and hand blocks with
# larger magnitudes, the tail and a growing run after them to the scalar writers. The tests
# below place values at every offset of those blocks, tails and runs.


def json_text(values: list[int]) -> bytes:
    return json.dumps(values, separators=(",", ":")).encode()


def small_magnitudes(rng: np.random.Generator, dtype, size: int) -> np.ndarray:
    """Token ids, labels and counts: below 50,000 (and the type's range), both signs."""
    info = np.iinfo(dtype)
    return rng.integers(max(int(info.min), -50_000), min(int(info.max), 50_000) + 1, size, dtype)


def test_integer_rows_of_every_length_match_pure(both) -> None:
    native, pure = both
    rng = np.random.default_rng(26)
    for datatype, dtype in INT_TYPES.items():
        info = np.iinfo(dtype)
        for length in range(41):
            full = rng.integers(int(info.min), int(info.max), length, dtype, endpoint=True)
            small = small_magnitudes(rng, dtype, length)
            mixed = np.where(rng.random(length) < 0.1, full, small).astype(dtype)
            for values in (small, full, mixed):
                text = native.array_to_json(values, datatype)
                assert text == pure.array_to_json(values, datatype), (datatype, values)
                assert text == json_text(values.tolist())
            # two rows: the second starts where the first's text ends
            rows = np.stack([small, mixed])
            assert native.array_to_json(rows, datatype, nested=True) == json_text(rows.tolist())


def test_integer_edges_in_whole_blocks(both) -> None:
    # Each power of ten, its neighbours and the type's extremes fill a block of 8 of their own,
    # so the vector kernel writes those below 10**8 and stops at the others.
    native, pure = both
    for datatype, dtype in INT_TYPES.items():
        info = np.iinfo(dtype)
        edges = {int(info.min), int(info.min) + 1, int(info.max), int(info.max) - 1, 0}
        for k in range(21):
            for v in (10**k - 1, 10**k, 10**k + 1):
                edges |= {v, -v}
        values = [v for v in sorted(edges) if info.min <= v <= info.max for _ in range(8)]
        values += [7] * 16
        array = np.array(values, dtype=dtype)
        text = native.array_to_json(array, datatype)
        assert text == json_text(values)
        assert text == pure.array_to_json(array, datatype)


@pytest.mark.parametrize("datatype", ["INT64", "UINT64"])
def test_neighbours_of_multiples_of_10_8(both, datatype) -> None:
    # 64-bit magnitudes are split by 10**8 from a double precision quotient, which is one off
    # next to a multiple of 10**8 (above 2**53 the value itself rounds onto one).
    native, pure = both
    dtype = INT_TYPES[datatype]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(10**8)
    multiples = [int(m) * 10**8 for m in rng.integers(1, int(info.max) // 10**8, 300)]
    multiples += [10**16 * int(m) for m in range(1, 923)] + [10**8, 10**16]
    values = [
        sign * (m + d)
        for m in multiples
        for d in (-2, -1, 0, 1, 2)
        for sign in ((1, -1) if info.min < 0 else (1,))
        if info.min <= sign * (m + d) <= info.max
    ]
    values += [7] * 16
    array = np.array(values, dtype=dtype)
    text = native.array_to_json(array, datatype)
    assert text == json_text(values)
    assert text == pure.array_to_json(array, datatype)


@pytest.mark.parametrize("datatype", ["INT32", "INT64", "UINT32", "UINT64"])
def test_one_large_magnitude_at_every_offset(both, datatype) -> None:
    native, pure = both
    dtype = INT_TYPES[datatype]
    info = np.iinfo(dtype)
    larges = [10**8, 10**8 + 1, int(info.max), int(info.min), -(10**8), -(10**8) + 1, -99999999]
    rng = np.random.default_rng(8)
    for large in (v for v in larges if info.min <= v <= info.max):
        for offset in range(48):
            values = small_magnitudes(rng, dtype, 48)
            values[offset] = large
            text = native.array_to_json(values, datatype)
            assert text == json_text(values.tolist()), (large, offset)
            assert text == pure.array_to_json(values, datatype)


@pytest.mark.parametrize("datatype", list(INT_TYPES))
def test_long_rows_switching_between_small_and_large(both, datatype) -> None:
    # Stretches of small and of full-range values, of many lengths: the writer goes from the
    # kernel to scalar runs of growing length and back.
    native, pure = both
    dtype = INT_TYPES[datatype]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(64)
    pieces = []
    for length in rng.integers(1, 3000, 40):
        if rng.random() < 0.5:
            pieces.append(small_magnitudes(rng, dtype, int(length)))
        else:
            pieces.append(rng.integers(int(info.min), int(info.max), length, dtype, endpoint=True))
    values = np.concatenate(pieces)
    text = native.array_to_json(values, datatype)
    assert text == json_text(values.tolist())
    assert text == pure.array_to_json(values, datatype)


def test_bool_rows_of_every_length_match_pure(both) -> None:
    native, pure = both
    rng = np.random.default_rng(2)
    for length in range(41):
        values = rng.random(length) < 0.5
        text = native.array_to_json(values, "BOOL")
        assert text == pure.array_to_json(values, "BOOL")
        assert text == json_text(values.tolist())


# ---------------------------------------------------------------------------- twins and round trips


@given(values=float_arrays(np.float64, SPECIAL_F64))
@settings(max_examples=300)
def test_fp64_twins_agree_and_read_back(both, values) -> None:
    native, pure = both
    text = native.array_to_json(values, "FP64")
    assert text == pure.array_to_json(values, "FP64")
    assert same_floats(np.array(loads(text), np.float64).reshape(-1), values)
    # The digits are Python's repr's, so the numbers are what json.dumps writes.
    finite = values[np.isfinite(values)]
    assert [float(t) for t in loads(native.array_to_json(finite, "FP64"))] == finite.tolist()


@given(values=float_arrays(np.float32, SPECIAL_F32))
@settings(max_examples=300)
def test_fp32_twins_agree_and_read_back(both, values) -> None:
    native, pure = both
    text = native.array_to_json(values, "FP32")
    assert text == pure.array_to_json(values, "FP32")
    assert same_floats(np.array(loads(text), np.float64).astype(np.float32).reshape(-1), values)


def test_fp32_is_shortest_at_float32_precision(impl) -> None:
    values = np.array([1.1, 0.2, 3.4028235e38, 1e-45, 16777217.0, 0.3], np.float32)
    text = impl.array_to_json(values, "FP32")
    assert text == b"[1.1,0.2,3.4028235e+38,1e-45,16777216.0,0.3]"
    for token in text[1:-1].split(b","):
        # one digit fewer never reads back to the same float32
        assert len(token.replace(b".0", b"").replace(b"-", b"")) <= 15


# The classes a float32 shortest-digits writer gets wrong: the native writer has a fast path
# for normal values that are not powers of two and an exact fallback for the rest, and the
# positional/exponent switch at decimal exponents -6 and 12.


def _f32_bits(patterns) -> np.ndarray:
    return np.array(sorted(set(patterns)), dtype=np.uint64).astype(np.uint32).view(np.float32)


def _f32_exact_text(value: np.float32) -> bytes:
    """The reference text by exact arithmetic (the pure twin's BF16 search, used for float32
    here): independent of numpy's and of the native digit generation."""
    from oipcodec._pure import jsonencode as pure_module

    bits = int(np.array([value], np.float32).view(np.uint32)[0])
    negative, field, m = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if field == 0 and m == 0:
        return b"-0.0" if negative else b"0.0"
    significand = (m | 0x800000) if field else m
    digits, e = pure_module._shortest_exact(
        significand, (field or 1) - 150, lower_gap_halves=(m == 0 and field > 1)
    )
    return pure_module._layout(bool(negative), digits, e, -6, 12).encode()


def _f32_hard_values() -> np.ndarray:
    rng = np.random.default_rng(32)
    patterns: list[int] = []
    # powers of two (the lower neighbour is half as far) and their neighbours, every exponent
    for field in range(0, 255):
        patterns += [(field << 23) + delta for delta in (-1, 0, 1) if (field << 23) + delta >= 0]
    # subnormals: the smallest, the largest, and some in between; the smallest normal
    patterns += list(range(1, 40)) + list(range(0x7FFFFF - 40, 0x800002))
    patterns += rng.integers(1, 0x800000, 200).tolist()
    # the largest finite value and its neighbours
    patterns += [0x7F7FFFFF, 0x7F7FFFFE, 0x7F7FFFFD]
    # integers near 2**24 (above it only even integers exist) and up to 2**27, where the
    # interval's ends are integers themselves
    integers = [*range(2**24 - 12, 2**24 + 24), 10**8, 99999990, 123456790, 2**27 - 8]
    integers += rng.integers(2**24, 2**27, 300).tolist()
    patterns += np.array(integers, np.float32).view(np.uint32).tolist()
    # each layout boundary: 10**E for E around -6 and 12, with 1 and 9 digits, and neighbours
    for exponent in (-8, -7, -6, -5, 11, 12, 13, 14):
        for mantissa in (1.0, 1.5, 9.9999999, 1.2345678, 9.876543):
            base = int(np.array([mantissa * 10.0**exponent], np.float32).view(np.uint32)[0])
            patterns += [base - 1, base, base + 1]
    return _f32_bits(patterns)


def _f32_nine_digit_values() -> np.ndarray:
    """Random normal values whose shortest form has all 9 significant digits."""
    rng = np.random.default_rng(9)
    candidates = rng.integers(0x00800000, 0x7F800000, 4000, dtype=np.uint64).astype(np.uint32)
    values = candidates.view(np.float32)
    nine = [
        i
        for i, v in enumerate(values)
        if len(np.format_float_scientific(v, unique=True).split("e")[0].replace(".", "")) == 9
    ]
    return values[nine[:400]]


def test_fp32_hard_classes_match_exact_reference(both) -> None:
    native, pure = both
    values = np.concatenate([_f32_hard_values(), _f32_nine_digit_values()])
    assert np.isfinite(values).all()
    values = np.concatenate([values, -values])
    text = native.array_to_json(values, "FP32")
    assert text == pure.array_to_json(values, "FP32")
    expected = [_f32_exact_text(v) for v in values]
    assert text[1:-1].split(b",") == expected
    nested = values[: values.size // 2 * 2].reshape(-1, 2)
    assert native.array_to_json(nested, "FP32", True) == pure.array_to_json(nested, "FP32", True)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.0**-149, b"1e-45"),
        (2.0**-126, b"1.1754944e-38"),
        (2.0**127, b"1.7014118e+38"),
        (float(np.finfo(np.float32).max), b"3.4028235e+38"),
        (16777216.0, b"16777216.0"),
        (16777218.0, b"16777218.0"),
        (2.0**26 + 8, b"67108870.0"),
        (123456790.0, b"123456790.0"),
        (9.999999e-7, b"9.999999e-7"),
        (1.0000001e-6, b"0.0000010000001"),
        (0.33333334, b"0.33333334"),
        (999999900000.0, b"999999900000.0"),
        (9.999999e12, b"9999999000000.0"),
        (1.0000001e13, b"1.0000001e+13"),
    ],
)
def test_fp32_hard_examples(impl, value, text) -> None:
    assert impl.array_to_json(np.array([value, -value], np.float32), "FP32") == (
        b"[" + text + b",-" + text + b"]"
    )


def _f32_one_of_each_class() -> np.ndarray:
    """A float32 of every class the native writers treat apart, each with both signs: NaN and
    the infinities (tokens), zeros, subnormals, powers of two (exact path), every positional
    decimal exponent -6..12 and the exponent form with one and two exponent digits, 1 to 9
    significant digits, and ordinary values (the fast path)."""
    values = [math.nan, math.inf, 0.0, 1e-45, 3.0e-39, 1.1754942e-38, 2.0**-126, 2.0**-20, 0.5]
    values += [1.0, 2.0**40, 3.4028235e38, 1e-7, 1.2345678e-9, 9.876543e-30, 1e13, 1.5e16]
    values += [1.2345678e22, 1.0000001e-6, 9.999999e-7, 9999999000000.0, 999999900000.0]
    values += [float(np.float32(d * 10.0**e)) for e in range(-6, 13) for d in (1.0, 1.2345678)]
    values += [0.1, 1.1, 0.33333334, 16777216.0, 67108870.0, 123456790.0, 7.0, 70.0, 0.007]
    values += np.random.default_rng(26).standard_normal(12).tolist()
    array = np.array(values, np.float32)
    return np.concatenate([array, -array])


def test_fp32_every_length_and_tail_matches_pure(both) -> None:
    # The native writer works in blocks of 64 elements and lanes of 8 (write/x86/f32.h on
    # processors with AVX-512): every length 0..40, the block edges, and each class of value
    # at every lane position (the array rotated) give the pure twin's text.
    native, pure = both
    values = _f32_one_of_each_class()
    for shift in range(9):
        rotated = np.roll(values, shift)
        for n in [*range(41), 63, 64, 65, 127, 129, values.size]:
            part = rotated[:n]
            assert native.array_to_json(part, "FP32") == pure.array_to_json(part, "FP32"), (
                shift,
                n,
            )
    mixed = np.random.default_rng(32).permutation(np.tile(values, 7))
    assert native.array_to_json(mixed, "FP32") == pure.array_to_json(mixed, "FP32")
    nested = mixed[: mixed.size // 11 * 11].reshape(-1, 11)  # one call per row of 11
    assert native.array_to_json(nested, "FP32", True) == pure.array_to_json(nested, "FP32", True)


# The native writers pick their SIMD path once per process, by the processor (AVX-512, AVX2 or
# scalar) capped by OIPCODEC_SIMD: a child process writes with each cap, and its text must be
# the pure twin's (on a processor without AVX-512 or AVX2 the cap changes nothing). Each array
# is saved under "<datatype>-<label>".
_CHILD_WRITER = """
import sys
import numpy as np
from oipcodec import kernels
arrays = np.load(sys.argv[1])
native = kernels.load("native")
with open(sys.argv[2], "wb") as out:
    out.write(b"\\n".join(native.array_to_json(arrays[k], k.split("-")[0]) for k in arrays.files))
"""


def _each_writer_inputs() -> dict[str, np.ndarray]:
    lengths = [*range(41), 63, 64, 65, 127, 129]
    values = np.concatenate([_f32_one_of_each_class(), _f32_hard_values()])
    mixed = np.random.default_rng(33).permutation(np.tile(values, 3))
    arrays = {f"FP32-n{n}": mixed[:n] for n in [*lengths, mixed.size]}
    doubles = np.random.default_rng(35).permutation(np.tile(_f64_categories(), 3))
    arrays.update({f"FP64-n{n}": doubles[:n] for n in [*lengths, doubles.size]})
    rng = np.random.default_rng(34)
    for datatype, dtype in INT_TYPES.items():
        info = np.iinfo(dtype)
        small = rng.integers(max(info.min, -999), min(info.max, 999) + 1, 200).astype(dtype)
        full = rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
        both_kinds = np.where(rng.random(200) < 0.1, full, small)
        for n in lengths:
            arrays[f"{datatype}-small{n}"] = small[:n]
            arrays[f"{datatype}-mixed{n}"] = both_kinds[:n]
        arrays[f"{datatype}-edges"] = np.array([info.min, info.max, 0, 1] * 10, dtype=dtype)
    return arrays


@pytest.mark.parametrize("cap", ["0", "1"])
def test_each_native_writer_matches_pure(both, tmp_path, cap) -> None:
    native, pure = both
    assert native.array_to_json  # skips when the native kernel is not built
    arrays = _each_writer_inputs()
    np.savez(tmp_path / "in.npz", **arrays)
    subprocess.run(
        [sys.executable, "-c", _CHILD_WRITER, str(tmp_path / "in.npz"), str(tmp_path / "out")],
        env={**os.environ, "OIPCODEC_SIMD": cap},
        check=True,
        timeout=120,
    )
    texts = (tmp_path / "out").read_bytes().split(b"\n")
    assert texts == [pure.array_to_json(a, key.split("-")[0]) for key, a in arrays.items()]


def test_fp32_text_patterns_are_generated() -> None:
    root = Path(__file__).resolve().parents[2]
    tool = root / "tools" / "gen_f32_text_patterns.py"
    if not tool.exists() or not (root / "csrc").is_dir():
        pytest.skip("tools/ is not next to the tests (an installed wheel)")
    result = subprocess.run(
        [sys.executable, str(tool), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("datatype", "dtype"), [("FP16", np.float16), ("BF16", BF16)])
def test_every_16_bit_pattern(both, datatype, dtype) -> None:
    native, pure = both
    values = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(dtype)
    text = native.array_to_json(values, datatype)
    assert text == pure.array_to_json(values, datatype)
    read = np.array(loads(text), np.float64)
    back = read.astype(np.float16) if datatype == "FP16" else bf16_bits(read).view(BF16)
    assert same_floats(back, values)
    # shortest at the type's own precision: no token has more digits than the type needs
    digits = [
        len(t.split(b"e")[0].strip(b"-").replace(b".", b"").strip(b"0"))
        for t in text[1:-1].split(b",")
        if t[-1:].isdigit()
    ]
    assert max(digits) == (5 if datatype == "FP16" else 4)


@given(values=float_arrays(np.float16, [0.0, -0.0, math.nan, math.inf, 6e-8, 65504.0]))
@settings(max_examples=100)
def test_fp16_twins_agree(both, values) -> None:
    native, pure = both
    for nested in (False, True):
        assert native.array_to_json(values, "FP16", nested) == pure.array_to_json(
            values, "FP16", nested
        )


@given(values=float_arrays(np.float64, SPECIAL_F64))
@settings(max_examples=200)
def test_bf16_from_float64_and_float32_twins_agree(both, values) -> None:
    native, pure = both
    assert native.array_to_json(values, "BF16") == pure.array_to_json(values, "BF16")
    with np.errstate(over="ignore"):
        as32 = values.astype(np.float32)
    assert native.array_to_json(as32, "BF16") == pure.array_to_json(as32, "BF16")


def test_bf16_from_float_is_rounded_once_to_nearest_even(impl) -> None:
    # 1 + 2**-8 is halfway between two BF16 values: ties to even (1.0); a hair above it must
    # round up, which rounding through float32 first would lose (ml_dtypes does that).
    values = np.array([1 + 2**-8, 1 + 2**-8 + 2**-30, 1 + 3 * 2**-8])
    assert impl.array_to_json(values, "BF16") == b"[1.0,1.01,1.016]"
    assert impl.array_to_json(values.astype(np.float32), "BF16") == b"[1.0,1.0,1.016]"
    as_bf16 = np.array([1.0, 1.0078125, 1.015625]).astype(BF16)
    assert impl.array_to_json(as_bf16, "BF16") == b"[1.0,1.01,1.016]"


def test_bf16_bits_matches_ml_dtypes_from_float32() -> None:
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    values = values[~np.isnan(values)]
    assert np.array_equal(bf16_bits(values), values.astype(BF16).view(np.uint16))


def test_fp64_hard_classes_match_reference(both) -> None:
    """The native FP64 writer (Schubfach on the parser's 128-bit powers of ten) on the classes
    where its arithmetic is closest to a decision: subnormals (scaled by up to 10**324, the
    table's tail), powers of two (whose rounding interval is narrower below) and of ten, their
    neighbours, the extremes, random bit patterns, nested. tools/check_f64_writer.py runs the
    same comparison on 10**8 values."""
    native, pure = both
    rng = np.random.default_rng(3)
    subnormals = np.concatenate(
        [np.arange(1, 2000, dtype=np.uint64), 0x000FFFFFFFFFFFFF - np.arange(2000, dtype=np.uint64)]
    ).view(np.float64)
    powers = np.concatenate(
        [np.ldexp(1.0, np.arange(-1074, 1024)), [float(f"1e{k}") for k in range(-323, 309)]]
    )
    around = np.concatenate([powers, np.nextafter(powers, np.inf), np.nextafter(powers, 0.0)])
    random_bits = rng.integers(0, 0x7FF0000000000000, 20_000, dtype=np.uint64).view(np.float64)
    values = np.concatenate([subnormals, around, -around, random_bits, np.array(SPECIAL_F64)])
    values = values[: values.size // 2 * 2]
    for nested in (False, True):
        shaped = values.reshape(2, -1) if nested else values
        assert native.array_to_json(shaped, "FP64", nested) == pure.array_to_json(
            shaped, "FP64", nested
        )


def _f64_categories() -> np.ndarray:
    """One or more float64 values of every kind the native writer treats apart: each exponent
    of the positional range and either side of it, 1 to 17 digits, integral values, the exact
    path's (zero, subnormals, powers of two, the table's tail), non-finite, both signs."""
    digits = [1.0, 1.5, 1.25, 1.2345678901234567, 9.999999999999998, 3.0000000000000004]
    scaled = [float(f"{d!r}e{e}") for e in range(-8, 19) for d in digits]
    integral = [1.0, 10.0, 100.0, 123456789.0, 1e15, 9007199254740993.0, 2.0**53 - 1]
    exact_path = [5e-324, 2.0**-1074 * 3, 2.2250738585072014e-308, 0.5, 2.0, 2.0**60, 1e-300]
    special = [0.0, -0.0, math.nan, math.inf, -math.inf, 1.7976931348623157e308]
    normal = np.random.default_rng(11).standard_normal(40).tolist()
    values = np.array(scaled + integral + exact_path + special + normal, np.float64)
    signs = np.where(np.arange(values.size) % 3 == 0, -1.0, 1.0)
    return values * signs


@pytest.mark.parametrize("length", [*range(41), 63, 64, 65, 127, 128, 129])
def test_fp64_block_tails_match_reference(both, length) -> None:
    """Every row length from 0 to 40 and around the block of 64: the native writer works on
    blocks of 64 elements and, where the processor has AVX-512, on groups of eight (the vector
    part masked at a group's tail, the layout written in pairs), with the scalar code for short
    rows. Each length is checked with every category at every position of a group."""
    native, pure = both
    pool = _f64_categories()
    for shift in range(0, pool.size, 7):
        values = np.roll(pool, shift)[:length]
        assert native.array_to_json(values, "FP64") == pure.array_to_json(values, "FP64"), shift


def test_fp64_layouts(both) -> None:
    """Each positional exponent and exponents of 1, 2 and 3 digits, both signs, with 1 to 17
    significant digits, in one row (so in the vector layout where the processor has it): the
    point's place, the leading zeros, '.0' for integral values, the switch to exponent form
    outside -5..15, the exponent's digits."""
    native, pure = both
    mantissas = [float("1." + "2345678901234567"[:n] if n else "1") for n in range(17)]
    exponents = [*range(-10, 19), -308, -300, -123, -100, -99, 99, 100, 123, 300, 308]
    values = np.array([float(f"{m!r}e{e}") for e in exponents for m in mantissas], np.float64)
    values = np.concatenate([values, -values])
    text = native.array_to_json(values, "FP64")
    assert text == pure.array_to_json(values, "FP64")
    assert b"0.000012345," in text
    assert b"123456789012345.6," in text
    assert b"1.2345e+16," in text
    assert b"-1.23e-123," in text


# ---------------------------------------------------------------------------- shapes and layouts


def test_nested_by_shape(impl) -> None:
    grid = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    assert loads(impl.array_to_json(grid, "INT32", nested=True)) == grid.tolist()
    assert loads(impl.array_to_json(grid, "INT32")) == grid.ravel().tolist()
    ones = np.arange(3, dtype=np.int16).reshape(1, 3, 1, 1)
    assert impl.array_to_json(ones, "INT16", nested=True) == b"[[[[0]],[[1]],[[2]]]]"


@given(
    shape=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    datatype=st.sampled_from(["FP32", "INT8", "BOOL", "FP16", "BYTES", "FP64", "BF16"]),
)
@settings(max_examples=150)
def test_nested_matches_tolist_for_any_shape(impl, shape, datatype) -> None:
    count = math.prod(shape)
    if datatype == "BYTES":
        array = np.array([str(i).encode() for i in range(count)], dtype=object).reshape(shape)
        expected = (
            np.vectorize(lambda b: b.decode(), otypes=[object])(array).tolist()
            if count
            else array.tolist()
        )
    else:
        dtype = {
            "FP32": np.float32,
            "INT8": np.int8,
            "BOOL": np.bool_,
            "FP16": np.float16,
            "FP64": np.float64,
            "BF16": np.float32,
        }[datatype]
        array = (np.arange(count) % 7).astype(dtype).reshape(shape)
        expected = array.tolist()
    text = impl.array_to_json(array, datatype, nested=True)
    assert loads(text) == expected
    assert (
        loads(impl.array_to_json(array, datatype))
        == np.array(expected, dtype=object).ravel().tolist()
        if count
        else loads(impl.array_to_json(array, datatype)) == []
    )


def test_scalar_is_a_one_element_array(impl) -> None:
    # Shape [] holds one element (docs/codec.md): its data is written [x], flat or nested.
    assert impl.array_to_json(np.array(2.5, np.float32), "FP32") == b"[2.5]"
    assert impl.array_to_json(np.array(2.5, np.float32), "FP32", nested=True) == b"[2.5]"
    assert impl.array_to_json(np.float64(0.1), "FP64") == b"[0.1]"
    assert impl.array_to_json(np.array(b"x", dtype=object), "BYTES", nested=True) == b'["x"]'
    assert impl.array_to_json(np.array(7, np.uint8), "UINT8") == b"[7]"


def test_zero_size(impl) -> None:
    for datatype, dtype in (
        ("FP32", np.float32),
        ("INT64", np.int64),
        ("BYTES", object),
        ("FP16", np.float16),
    ):
        empty = np.zeros((2, 0, 3), dtype=dtype)
        assert impl.array_to_json(empty, datatype) == b"[]"
        assert impl.array_to_json(empty, datatype, nested=True) == b"[[],[]]"
        assert impl.array_to_json(np.zeros((0, 5), dtype=dtype), datatype, nested=True) == b"[]"
        assert (
            impl.array_to_json(np.zeros((2, 1, 0), dtype=dtype), datatype, nested=True)
            == b"[[[]],[[]]]"
        )


@pytest.mark.parametrize(
    ("datatype", "dtype"),
    [
        ("FP32", np.float32),
        ("FP64", np.float64),
        ("INT16", np.int16),
        ("UINT64", np.uint64),
        ("FP16", np.float16),
        ("BF16", np.float32),
        ("BOOL", np.bool_),
    ],
)
def test_any_memory_layout_and_byte_order(impl, datatype, dtype) -> None:
    values = np.arange(60) * 1.25 - 20
    if np.dtype(dtype).kind in "iu":
        # Through int64 (exact for these values), then wrapped: a negative float cast straight
        # to uint64 is undefined in C, and x86 wraps where AArch64 saturates to 0.
        values = np.trunc(values).astype(np.int64)
    base = values.astype(dtype).reshape(3, 4, 5)
    for nested in (False, True):
        expected = impl.array_to_json(base, datatype, nested)
        assert impl.array_to_json(np.asfortranarray(base), datatype, nested) == expected
        assert (
            impl.array_to_json(base.astype(base.dtype.newbyteorder(">")), datatype, nested)
            == expected
        )
        assert impl.array_to_json(base[::-1, :, ::-1][::-1, :, ::-1], datatype, nested) == expected
        strided = np.repeat(base, 2, axis=2)[:, :, ::2]
        assert impl.array_to_json(strided, datatype, nested) == expected


# ---------------------------------------------------------------------------- non-finite values


@pytest.mark.parametrize(
    ("dtype", "datatype"),
    [
        (np.float32, "FP32"),
        (np.float64, "FP64"),
        (np.float16, "FP16"),
        (BF16, "BF16"),
        (np.float64, "BF16"),
    ],
)
def test_nonfinite_error_names_the_element(impl, dtype, datatype) -> None:
    values = np.array([1.0, 2.0, -np.inf, np.nan]).astype(dtype).reshape(2, 2)
    with pytest.raises(
        EncodeError, match=r"^element 2: element is -Infinity, which strict JSON"
    ) as info:
        impl.array_to_json(values, datatype, nonfinite="error")
    assert info.value.index == 2
    assert impl.array_to_json(values[:1], datatype, nonfinite="error") == b"[1.0,2.0]"


def test_nonfinite_tokens_read_back_with_python_json(impl) -> None:
    values = np.array([np.nan, -np.inf, np.inf, -np.nan, 1.0], np.float32)
    out = loads(impl.array_to_json(values, "FP32"))
    assert math.isnan(out[0]) and out[1] == -math.inf and out[2] == math.inf and math.isnan(out[3])


# ---------------------------------------------------------------------------- BYTES


def test_bytes_escaping(impl) -> None:
    elements = [
        b'quote " and backslash \\',
        "tab\t nl\n cr\r bs\b ff\f",
        b"\x00\x01\x1f\x7f",
        "é ✓ \u2028 😀",
        b"/slash/",
        "",
    ]
    text = impl.array_to_json(np.array(elements, dtype=object), "BYTES")
    assert text == (
        b'["quote \\" and backslash \\\\","tab\\t nl\\n cr\\r bs\\b ff\\f",'
        b'"\\u0000\\u0001\\u001f\x7f","\xc3\xa9 \xe2\x9c\x93 \xe2\x80\xa8 \xf0\x9f\x98\x80","/slash/",""]'
    )
    assert loads(text) == [e if isinstance(e, str) else e.decode() for e in elements]


@given(texts=st.lists(st.text(max_size=12), max_size=20))
@settings(max_examples=200)
def test_bytes_text_round_trips(both, texts) -> None:
    native, pure = both
    for values in (
        np.array(texts, dtype=object),
        np.array([t.encode("utf-8", "surrogatepass") for t in texts], dtype=object),
    ):
        results = []
        for kernels in (native, pure):
            try:
                results.append(kernels.array_to_json(values, "BYTES"))
            except EncodeError as exc:
                results.append(str(exc))
        assert results[0] == results[1]
        if isinstance(results[0], bytes):
            assert loads(results[0]) == texts


@given(elements=st.lists(st.binary(max_size=8), max_size=12))
@settings(max_examples=300)
def test_bytes_twins_agree_on_any_bytes(both, elements) -> None:
    native, pure = both
    values = objects(elements)
    results = []
    for kernels in (native, pure):
        try:
            results.append(kernels.array_to_json(values, "BYTES"))
        except EncodeError as exc:
            results.append((exc.index, str(exc)))
    assert results[0] == results[1]


def test_bytes_not_utf8(impl) -> None:
    values = np.array([b"ok", b"ab\xff", b"\xed\xa0\x80"], dtype=object)
    with pytest.raises(
        EncodeError,
        match=r"^element 1: BYTES element is not valid UTF-8 \(at byte 2 of the element\).*binary tensor data extension",
    ) as info:
        impl.array_to_json(values, "BYTES")
    assert info.value.index == 1
    for bad in (b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80"):
        with pytest.raises(EncodeError, match="not valid UTF-8 \\(at byte 0 "):
            impl.array_to_json(np.array([bad], dtype=object), "BYTES")


def test_bytes_array_kinds(impl) -> None:
    assert (
        impl.array_to_json(np.array([b"a\x00b", b"cd\x00"], dtype="S4"), "BYTES")
        == b'["a\\u0000b","cd"]'
    )
    assert (
        impl.array_to_json(np.array([["x", "é"]], dtype="U"), "BYTES", nested=True)
        == '[["x","é"]]'.encode()
    )
    mixed = np.array(
        [bytearray(b"ba"), memoryview(b"mv"), np.bytes_(b"nb"), np.str_("ns")], dtype=object
    )
    assert impl.array_to_json(mixed, "BYTES") == b'["ba","mv","nb","ns"]'


def test_bytes_bad_elements(impl) -> None:
    with pytest.raises(
        EncodeError, match=r"^element 1: BYTES elements must be bytes or str, got int"
    ):
        impl.array_to_json(np.array([b"a", 3], dtype=object), "BYTES")
    with pytest.raises(EncodeError, match=r"^element 0: str element is not encodable as UTF-8"):
        impl.array_to_json(np.array(["\ud800"], dtype=object), "BYTES")


# ---------------------------------------------------------------------------- argument errors


def test_datatype_errors(impl) -> None:
    with pytest.raises(DatatypeError, match="unknown datatype 'FP8'"):
        impl.array_to_json(np.zeros(2, np.float32), "FP8")
    with pytest.raises(DatatypeError, match="numpy dtype float32 cannot carry datatype INT32"):
        impl.array_to_json(np.zeros(2, np.float32), "INT32")
    with pytest.raises(DatatypeError, match="cannot carry datatype BYTES"):
        impl.array_to_json(np.zeros(2, np.int8), "BYTES")
    with pytest.raises(DatatypeError, match="cannot carry datatype FP16"):
        impl.array_to_json(np.zeros(2, np.float32), "FP16")
    with pytest.raises(DatatypeError, match="cannot carry datatype BF16"):
        impl.array_to_json(np.zeros(2, np.float16), "BF16")


def test_argument_errors(impl) -> None:
    with pytest.raises(EncodeError, match="array must be a numpy array, got list"):
        impl.array_to_json([1.0], "FP32")
    with pytest.raises(EncodeError, match="nonfinite must be 'tokens' or 'error', got 'null'"):
        impl.array_to_json(np.zeros(1, np.float32), "FP32", nonfinite="null")


def test_result_is_independent_bytes(impl) -> None:
    values = np.arange(5, dtype=np.int64)
    first = impl.array_to_json(values, "INT64")
    values[0] = 9
    assert first == b"[0,1,2,3,4]"
    assert type(first) is bytes


# ---------------------------------------------------------------------------- with json_to_array


ROUND_TRIP_TYPES = [
    ("FP32", float_arrays(np.float32, SPECIAL_F32)),
    ("FP64", float_arrays(np.float64, SPECIAL_F64)),
    ("FP16", float_arrays(np.float16, [0.0, -0.0, math.nan, math.inf, -math.inf, 6e-8])),
    ("BF16", float_arrays(BF16, [0.0, -0.0, math.nan, math.inf, -math.inf])),
    *[
        (
            name,
            st.lists(st.integers(int(np.iinfo(t).min), int(np.iinfo(t).max)), max_size=30).map(
                lambda xs, t=t: np.array(xs, dtype=t)
            ),
        )
        for name, t in INT_TYPES.items()
    ],
    ("BOOL", st.lists(st.booleans(), max_size=30).map(lambda xs: np.array(xs, dtype=np.bool_))),
    (
        "BYTES",
        st.lists(
            st.text(max_size=8).map(lambda s: s.encode("utf-8", "surrogatepass")), max_size=20
        ).map(objects),
    ),
]


@pytest.mark.parametrize(
    ("datatype", "arrays"), ROUND_TRIP_TYPES, ids=[t[0] for t in ROUND_TRIP_TYPES]
)
@given(data=st.data())
@settings(max_examples=60)
def test_round_trip_through_json_to_array(impl, datatype, arrays, data) -> None:
    values = data.draw(arrays)
    if datatype == "BYTES":
        valid = []
        for v in values.tolist():
            try:
                v.decode("utf-8")
                valid.append(v)
            except UnicodeDecodeError:
                pass
        values = objects(valid)
    shape = data.draw(st.sampled_from([(values.size,), (1, values.size)]))
    shaped = values.reshape(shape)
    for nested in (False, True):
        text = impl.array_to_json(shaped, datatype, nested)
        back = impl.json_to_array(text, datatype, list(shape))
        assert back.shape == shape
        if datatype == "BYTES":
            assert back.ravel().tolist() == values.tolist()
        elif datatype in ("FP16", "FP32", "FP64", "BF16"):
            got = back.ravel()
            if datatype == "BF16" and got.dtype != BF16:
                got = bf16_bits(got.astype(np.float32)).view(BF16)
            assert same_floats(got, values)
        else:
            assert np.array_equal(back.ravel(), values)


def test_scalar_and_zero_size_round_trip_through_json_to_array(impl) -> None:
    for nested in (False, True):
        scalar = np.array(-2.5, np.float32)
        back = impl.json_to_array(impl.array_to_json(scalar, "FP32", nested), "FP32", [])
        assert back.shape == () and back == scalar
        empty = np.zeros((2, 0, 3), np.int32)
        back = impl.json_to_array(impl.array_to_json(empty, "INT32", nested), "INT32", [2, 0, 3])
        assert back.shape == (2, 0, 3)
