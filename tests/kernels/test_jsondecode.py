"""json_to_array on both implementations: round trips, correct rounding, structure, errors."""

from __future__ import annotations

import json
import math
import re
import struct
import sys
import threading
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from oipcodec import datatypes
from oipcodec.errors import DecodeError, LimitError, ShapeError

ROOT = Path(__file__).resolve().parents[2]
INTS = ["UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64"]
# (significand bits, smallest normal exponent, largest exponent) of the narrow formats
FORMATS = {"FP32": (24, -126, 127), "FP16": (11, -14, 15), "BF16": (8, -126, 127)}


def bits_of(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array).tobytes()


def dumps(values: object) -> str:
    return json.dumps(values)  # NaN, Infinity, -Infinity as Python writes them


# ---- an exact reference for rounding decimals -----------------------------------------------


def round_fraction(x: Fraction, fmt: str) -> float:
    """x rounded to nearest, ties to even, in format fmt; inf on overflow. As a float."""
    p, emin, emax = FORMATS[fmt]
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    x = abs(x)
    exponent = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** exponent > x:
        exponent -= 1
    quantum = Fraction(2) ** (max(exponent, emin) - (p - 1))
    scaled = x / quantum
    whole = scaled.numerator // scaled.denominator
    rest = scaled - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1):
        whole += 1
    value = whole * quantum
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if value > largest:
        return sign * math.inf
    return sign * float(value)


def decimal_text(x: Fraction) -> str:
    """The exact decimal expansion of a dyadic rational."""
    sign = "-" if x < 0 else ""
    x = abs(x)
    k = x.denominator.bit_length() - 1
    assert x.denominator == 1 << k
    digits = str(x.numerator * 5**k).rjust(k + 1, "0")
    return sign + (digits[:-k] + "." + digits[-k:] if k else digits)


def stored_as_float(array: np.ndarray, fmt: str) -> float:
    return float(array.astype(np.float64).reshape(-1)[0])


# ---- round trips ----------------------------------------------------------------------------


def _shapes() -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, 4), min_size=0, max_size=3)


@st.composite
def typed_arrays(draw: st.DrawFn, datatype: str) -> np.ndarray:
    shape = draw(_shapes())
    size = math.prod(shape)
    if datatype in INTS:
        info = np.iinfo(datatype.lower())
        ints = st.sampled_from([int(info.min), int(info.max), 0]) | st.integers(
            int(info.min), int(info.max)
        )
        return np.array(
            draw(st.lists(ints, min_size=size, max_size=size)), dtype=datatype.lower()
        ).reshape(shape)
    if datatype == "BOOL":
        return np.array(
            draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool
        ).reshape(shape)
    if datatype == "BYTES":
        texts = st.text(max_size=8).map(lambda s: s.encode("utf-8", "surrogatepass"))
        values = draw(st.lists(texts, min_size=size, max_size=size))
        assume(all(_utf8(v) for v in values))
        out = np.empty(size, dtype=object)
        out[:] = values
        return out.reshape(shape)
    width = {"FP16": 16, "BF16": 16, "FP32": 32, "FP64": 64}[datatype]
    raw = draw(st.lists(st.integers(0, 2**width - 1), min_size=size, max_size=size))
    dtype = {
        "FP16": np.float16,
        "BF16": ml_dtypes.bfloat16,
        "FP32": np.float32,
        "FP64": np.float64,
    }[datatype]
    array = np.array(raw, dtype=f"u{width // 8}").view(dtype).reshape(shape)
    # NaN comes back as the canonical quiet NaN: compare those separately. (Casting a NaN
    # bit pattern warns in some numpy/ml_dtypes versions; the NaNs are replaced right here.)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(array.astype(np.float64))
        return np.where(nan, dtype(math.inf), array).astype(dtype)


def _utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _to_json(array: np.ndarray, datatype: str, nested: bool) -> str:
    if datatype == "BYTES":
        items = [v.decode("utf-8") for v in array.reshape(-1)]
        values: object = (
            np.array(items, dtype=object).reshape(array.shape).tolist() if nested else items
        )
        return json.dumps(values, ensure_ascii=bool(len(items) % 2))
    if datatype in ("FP16", "BF16", "FP32"):
        array = array.astype(np.float64)  # exact: every narrow value is a double
    listed = array.tolist() if nested else array.reshape(-1).tolist()
    return dumps(listed if array.ndim or not nested else [listed])


@pytest.mark.parametrize("datatype", [*INTS, "BOOL", "BYTES", "FP16", "FP32", "FP64", "BF16"])
@given(data=st.data(), nested=st.booleans())
@settings(max_examples=60)
def test_round_trip_is_bit_exact(impl, datatype: str, data: st.DataObject, nested: bool) -> None:
    array = data.draw(typed_arrays(datatype))
    text = _to_json(array, datatype, nested)
    out = impl.json_to_array(text, datatype, list(array.shape))
    assert out.shape == array.shape
    if datatype == "BYTES":
        assert out.dtype == object and out.tolist() == array.tolist()
    else:
        assert out.dtype == datatypes.to_numpy(datatype)
        assert bits_of(out) == bits_of(array)


def test_special_values(impl) -> None:
    out = impl.json_to_array(
        "[-0.0, 5e-324, 1.7976931348623157e308, NaN, null, Infinity, -Infinity]", "FP64", [7]
    )
    assert out.view(np.uint64).tolist() == [
        0x8000000000000000,
        1,
        0x7FEFFFFFFFFFFFFF,
        0x7FF8000000000000,
        0x7FF8000000000000,
        0x7FF0000000000000,
        0xFFF0000000000000,
    ]
    for datatype, nan in (("FP32", 0x7FC00000), ("FP16", 0x7E00), ("BF16", 0x7FC0)):
        out = impl.json_to_array(b"[NaN, null, -0.0]", datatype, [3])
        width = out.dtype.itemsize
        assert out.view(f"u{width}").tolist() == [nan, nan, 1 << (8 * width - 1)]
    tiny = impl.json_to_array("[1e-46, -1e-46, 1.4e-45]", "FP32", [3])
    assert tiny.view(np.uint32).tolist() == [0, 0x80000000, 1]


def test_shortest_float32_text(impl) -> None:
    rng = np.random.default_rng(1)
    values = np.concatenate(
        [rng.standard_normal(2000), rng.uniform(-1e38, 1e38, 500), rng.uniform(-1e-38, 1e-38, 500)]
    ).astype(np.float32)
    values = np.concatenate(
        [values, rng.integers(0, 2**32, 2000, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    )
    values = values[np.isfinite(values)]
    shortest = "[" + ",".join(str(v) for v in values) + "]"
    # What json.dumps writes for the values widened to Python floats (tritonclient's JSON
    # bodies): up to 17 significant digits, ", " between them; then both kinds mixed.
    widened = json.dumps(values.astype(np.float64).tolist())
    mixed = (
        "["
        + ", ".join(
            np.format_float_positional(v, unique=True, trim="-") if i % 2 else repr(float(v))
            for i, v in enumerate(values)
        )
        + "]"
    )
    for text in (shortest, widened, mixed):
        assert bits_of(impl.json_to_array(text, "FP32", [values.size])) == bits_of(values)


# ---- correct rounding against the exact reference ---------------------------------------------


def _value_of(fmt: str, bits: int) -> Fraction:
    """The value of positive format bits; the pattern after the largest finite value counts
    as 2**(emax + 1), the next step of the grid."""
    p, emin, emax = FORMATS[fmt]
    exponent, mantissa = bits >> (p - 1), bits & ((1 << (p - 1)) - 1)
    if exponent == 0:
        return mantissa * Fraction(2) ** (emin - (p - 1))
    return ((1 << (p - 1)) + mantissa) * Fraction(2) ** (exponent - emax - (p - 1))


def _neighbours(fmt: str, bits: int) -> tuple[Fraction, Fraction]:
    return _value_of(fmt, bits), _value_of(fmt, bits + 1)


@st.composite
def hard_decimals(draw: st.DrawFn, fmt: str) -> str:
    """Decimal texts at, just below and just above midpoints of fmt, in every range."""
    width = 32 if fmt == "FP32" else 16
    top = {"FP32": 0x7F7FFFFF, "FP16": 0x7BFF, "BF16": 0x7F7F}[fmt]
    bits = draw(st.sampled_from([0, 1, 2, 0x7F, top - 1, top]) | st.integers(0, top))
    low, high = _neighbours(fmt, bits)  # at the top, the midpoint that decides overflow
    mid = (low + high) / 2
    nudge = draw(st.sampled_from(["exact", "below", "above", "long", "short"]))
    text = decimal_text(mid)
    if nudge == "below":
        text = decimal_text(mid - (high - low) / 2**70)
    elif nudge == "above":
        text = decimal_text(mid + (high - low) / 2**70)
    elif nudge == "long":
        text = (
            text + ("0" * draw(st.integers(1, 30))) + "1"
            if "." in text
            else text + ".000000000000000000001"
        )
    elif nudge == "short":
        digits = draw(st.integers(9, 25))
        text = f"{float(mid):.{digits}e}" if mid else "0.0"
    sign = "-" if draw(st.booleans()) else ""
    assert width
    return sign + text


@pytest.mark.parametrize("fmt", ["FP32", "FP16", "BF16"])
@given(data=st.data())
@settings(max_examples=300)
def test_narrow_floats_round_correctly(impl, fmt: str, data: st.DataObject) -> None:
    text = data.draw(hard_decimals(fmt))
    expected = round_fraction(Fraction(text), fmt)
    if math.isinf(expected):
        with pytest.raises(DecodeError, match="out of range"):
            impl.json_to_array(f"[{text}]", fmt, [1])
        return
    out = impl.json_to_array(f"[{text}]", fmt, [1])
    got = stored_as_float(out, fmt)
    assert got == expected and math.copysign(1, got) == math.copysign(1, expected), text


@st.composite
def long_fp32_texts(draw: st.DrawFn) -> str:
    """Positional decimals 16 to 26 bytes long, the shape of FP32's second fast lane (dot after
    1..8 integer digits, up to 19 digits in all) and its edges: float32 values written with
    17 digits, float32 midpoints written exactly or nudged by one in the last place, and
    arbitrary digits with leading zeros."""
    kind = draw(st.sampled_from(["value", "midpoint", "digits"]))
    sign = "-" if draw(st.booleans()) else ""
    if kind == "digits":
        integer = draw(st.sampled_from(["0", str(draw(st.integers(1, 10**8 - 1)))]))
        zeros = "0" * draw(st.integers(0, 12))
        fraction = zeros + str(draw(st.integers(0, 10**12)))
        size = draw(st.integers(16, 26)) - len(sign) - len(integer) - 1
        fraction = (fraction + "0" * 30)[: max(size, 1)]
        return sign + integer + "." + fraction
    bits = draw(st.integers(0x32000000, 0x4CBEBC1F))  # about 7e-9 to 1e8
    if kind == "value":
        return sign + repr(float(np.uint32(bits).view(np.float32)))
    low, high = _neighbours("FP32", bits)
    text = decimal_text((low + high) / 2)
    text = text if "." in text else text + ".0"  # above 2**24 the midpoints are integers
    digits = draw(st.integers(17, 22))
    head = text[: text.index(".") + 1 + digits]
    if head != text or draw(st.booleans()):
        last = int(head[-1]) + draw(st.sampled_from([-1, 0, 1]))
        head = head[:-1] + str(min(max(last, 0), 9))
    return sign + head


@given(texts=st.lists(long_fp32_texts(), min_size=12, max_size=40), spaced=st.booleans())
@settings(max_examples=300)
def test_long_fp32_text_rounds_correctly(impl, texts: list[str], spaced: bool) -> None:
    """Whole arrays of them (the native lanes engage on 128 bytes or more), every element
    against the exact reference."""
    text = "[" + (", " if spaced else ",").join(texts) + "]"
    out = impl.json_to_array(text, "FP32", [len(texts)])
    expected = np.array(
        [math.copysign(round_fraction(Fraction(t), "FP32"), -(t[0] == "-")) for t in texts],
        np.float32,
    )
    assert bits_of(out) == bits_of(expected), text


@given(
    mantissa=st.integers(1, 10**40),
    exponent=st.integers(-360, 330),
    point=st.integers(0, 45),
    negative=st.booleans(),
)
@settings(max_examples=300)
def test_fp64_equals_python_float(
    impl, mantissa: int, exponent: int, point: int, negative: bool
) -> None:
    digits = str(mantissa)
    point = min(point, len(digits) - 1)
    text = (
        ("-" if negative else "")
        + digits[: len(digits) - point]
        + ("." + digits[-point:] if point else "")
        + f"e{exponent}"
    )
    expected = float(text)
    if math.isinf(expected):
        with pytest.raises(DecodeError, match="out of range for FP64"):
            impl.json_to_array(f"[{text}]", "FP64", [1])
        return
    out = impl.json_to_array(f"[{text}]", "FP64", [1])
    assert out.view(np.uint64)[0] == struct.unpack("<Q", struct.pack("<d", expected))[0], text
    for fmt in ("FP32", "FP16", "BF16"):
        rounded = round_fraction(Fraction(text), fmt)
        if math.isfinite(rounded):
            assert stored_as_float(impl.json_to_array(f"[{text}]", fmt, [1]), fmt) == rounded, (
                fmt,
                text,
            )


def test_known_hard_cases(impl) -> None:
    cases = {
        "FP64": [
            "9007199254740993",
            "2.2250738585072011e-308",
            "4.9406564584124654e-324",
            "2.4703282292062328e-324",
            "1.7976931348623158e308",
            "0.1000000000000000055511151231257827021181583404541015625",
            "7.038531e-26",
            "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368",
        ],
        "FP32": [
            "16777217",
            "16777219",
            "3.4028235677973366e38",
            "3.4028235e38",
            "1.00000005960464477550",
            "1.0000000596046447753906250000000000001",
            "7.006492321624085e-46",
            "7.0064923216240862e-46",
            "1.1754942807573643e-38",
            "0.1",
        ],
        "FP16": [
            "65519.99",
            "2049",
            "2051",
            "0.000000059604644775390625",
            "0.0000000298023223876953125",
            "0.00000002980232238769531250001",
        ],
        "BF16": ["1.00390625", "1.00390625000000000001", "3.3895313892515355e38", "257"],
    }
    for fmt, texts in cases.items():
        for text in texts:
            for sign in ("", "-"):
                token = sign + text
                if fmt == "FP64":
                    expected = float(token)
                    got = float(impl.json_to_array(f"[{token}]", fmt, [1])[0])
                    assert struct.pack("<d", got) == struct.pack("<d", expected), token
                    continue
                expected = round_fraction(Fraction(token), fmt)
                if math.isinf(expected):
                    with pytest.raises(DecodeError, match="out of range"):
                        impl.json_to_array(f"[{token}]", fmt, [1])
                else:
                    assert (
                        stored_as_float(impl.json_to_array(f"[{token}]", fmt, [1]), fmt) == expected
                    ), token


def test_bf16_without_ml_dtypes(impl, monkeypatch) -> None:
    monkeypatch.setattr(datatypes, "BF16_DTYPE", None)
    out = impl.json_to_array("[1.00390625, 3.0, NaN, -Infinity]", "BF16", [4])
    assert out.dtype == np.float32
    assert (out.view(np.uint32) >> 16).tolist() == [0x3F80, 0x4040, 0x7FC0, 0xFF80]
    assert (out.view(np.uint32) & 0xFFFF).tolist() == [0, 0, 0, 0]


# ---- integers, BOOL, BYTES ------------------------------------------------------------------


@pytest.mark.parametrize("datatype", INTS)
def test_integer_ranges(impl, datatype: str) -> None:
    info = np.iinfo(datatype.lower())
    out = impl.json_to_array(f"[{info.min}, {info.max}, -0]", datatype, [3])
    assert out.tolist() == [info.min, info.max, 0]
    for bad in (info.min - 1, info.max + 1, 10**30, -(10**30)):
        with pytest.raises(
            DecodeError, match=rf"element 1 at byte offset 4: {bad} is out of range for {datatype}"
        ):
            impl.json_to_array(f"[0, {bad}]", datatype, [2])
    for bad in ("1.0", "1e3", "true", '"1"', "NaN", "+1", "01", "0x10", "1_0"):
        with pytest.raises(DecodeError, match=f"expected a JSON integer for {datatype}"):
            impl.json_to_array(f"[{bad}]", datatype, [1])


def test_bool(impl) -> None:
    assert impl.json_to_array(" [ true , false ] ", "BOOL", [2]).tolist() == [True, False]
    for bad in ("1", "0", "null", '"true"', "True", "truex"):
        with pytest.raises(DecodeError, match="expected true or false for BOOL"):
            impl.json_to_array(f"[{bad}]", "BOOL", [1])


def test_bytes_escapes(impl) -> None:
    text = r'["", "a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20AC\ud83d\ude00", "é€😀", "\u0000"]'
    out = impl.json_to_array(text, "BYTES", [5])
    assert out.tolist() == [b"", b'a"b\\c/d\b\f\n\r\t', "é€😀".encode(), "é€😀".encode(), b"\x00"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'["ab', r"element 0 at byte offset 1: unterminated string"),
        (b'["ab\\', r"element 0 at byte offset 1: unterminated string"),
        (b'["a\nb"]', r"element 0 at byte offset 3: raw control character U\+000A in string"),
        (b'["a\\xb"]', r"element 0 at byte offset 3: invalid escape '\\x' in string"),
        (b'["\\u12G4"]', r"element 0 at byte offset 2: invalid \\u escape in string"),
        (b'["\\ud83d"]', r"element 0 at byte offset 2: lone surrogate \\uD83D in string"),
        (b'["\\ud83dx"]', r"element 0 at byte offset 2: lone surrogate \\uD83D"),
        (b'["\\ud83d\\u0041"]', r"element 0 at byte offset 2: lone surrogate \\uD83D"),
        (b'["\\ude00"]', r"element 0 at byte offset 2: lone surrogate \\uDE00"),
        (b'["ok", "a\xffb"]', r"element 1 at byte offset 9: invalid UTF-8 in string"),
        (b'["\xed\xa0\x80"]', r"element 0 at byte offset 2: invalid UTF-8 in string"),
        (b'["\xc0\x80"]', r"element 0 at byte offset 2: invalid UTF-8 in string"),
        (b"[12]", r"element 0 at byte offset 1: expected a JSON string for BYTES, got '12'"),
    ],
)
def test_bytes_errors(impl, text: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=f"^{message}"):
        impl.json_to_array(text, "BYTES", [1] if b'"ok"' not in text else [2])


# ---- structure, scalars and empty shapes ------------------------------------------------------


def test_nested_and_flat_forms(impl) -> None:
    expected = np.arange(6, dtype=np.int32).reshape(2, 3)
    for text in ("[[0,1,2],[3,4,5]]", "[0,1,2,3,4,5]", " \n[ [ 0 , 1,2 ],\t[3,4,5] ] \r\n"):
        assert (impl.json_to_array(text, "INT32", [2, 3]) == expected).all()
    cube = impl.json_to_array("[[[1],[2]],[[3],[4]]]", "FP64", (2, 2, 1))
    assert cube.shape == (2, 2, 1) and cube.reshape(-1).tolist() == [1, 2, 3, 4]


def test_scalar_and_empty_shapes(impl) -> None:
    for text in ("7", "[7]", " 7 "):
        out = impl.json_to_array(text, "INT64", [])
        assert out.shape == () and int(out) == 7
    assert impl.json_to_array('"x"', "BYTES", []).tolist() == b"x"
    for shape, texts in {
        (0,): ["[]"],
        (2, 0): ["[[],[]]", "[]"],
        (0, 3): ["[]"],
        (3, 0, 2): ["[[],[],[]]", "[]"],
    }.items():
        for text in texts:
            out = impl.json_to_array(text, "FP32", list(shape))
            assert out.shape == shape and out.dtype == np.float32
    with pytest.raises(DecodeError, match=r"data has more than 0 entries"):
        impl.json_to_array("[[]]", "FP32", [0, 3])
    with pytest.raises(DecodeError, match=r"data\[1\] has more than 0 entries"):
        impl.json_to_array("[[],[1]]", "FP32", [2, 0])


@pytest.mark.parametrize(
    ("text", "shape", "error", "message"),
    [
        (
            "",
            [2],
            DecodeError,
            r"^byte offset 0: expected '\[' opening the data array, got end of text",
        ),
        (
            "   ",
            [],
            DecodeError,
            r"^element 0 at byte offset 3: expected a JSON number, NaN, Infinity, -Infinity or null for FP32, got end of text",
        ),
        ("{}", [2], DecodeError, r"^byte offset 0: expected '\[' opening the data array, got '\{'"),
        (
            "[1,2",
            [2],
            DecodeError,
            r"^element 2 at byte offset 4: expected ',' or '\]' in data, got end of text",
        ),
        (
            "[1,",
            [2],
            DecodeError,
            r"^element 1 at byte offset 3: expected a JSON number.* got end of text",
        ),
        (
            "[1,2,]",
            [2],
            DecodeError,
            r"^element 2 at byte offset 5: expected a JSON number.*got '\]' \(trailing comma\)",
        ),
        ("[1,2,]", [3], DecodeError, r"^element 2 at byte offset 5: .*got '\]' \(trailing comma\)"),
        (
            "[[1,2],[3,4],]",
            [2, 2],
            DecodeError,
            r"^element 4 at byte offset 13: expected '\[' opening data\[2\].*got '\]' \(trailing comma\)",
        ),
        ("[,1]", [1], DecodeError, r"^element 0 at byte offset 1: .*got ','"),
        ("[1,,2]", [2], DecodeError, r"^element 1 at byte offset 3: .*got ','"),
        (
            "[1 2]",
            [2],
            DecodeError,
            r"^element 1 at byte offset 3: expected ',' or '\]' in data, got '2'",
        ),
        ("[1,2]]", [2], DecodeError, r"^byte offset 5: unexpected '\]' after the data array"),
        (
            "[1,2] [3]",
            [2],
            DecodeError,
            r"^byte offset 6: unexpected an array after the data array",
        ),
        (
            "[1,2,3]",
            [2],
            DecodeError,
            r"^element 2 at byte offset 5: data has more than 2 entries \(shape \[2\]\)",
        ),
        (
            "[1]",
            [2],
            DecodeError,
            r"^element 1 at byte offset 2: data has 1 entries, shape \[2\] needs 2",
        ),
        (
            "[1,2,3,4,5]",
            [2, 3],
            DecodeError,
            r"^element 5 at byte offset 10: data has 5 entries, the flat form of shape \[2, 3\] needs 6",
        ),
        (
            "[[1,2,3],[4,5]]",
            [2, 3],
            DecodeError,
            r"^element 5 at byte offset 13: data\[1\] has 2 entries, shape \[2, 3\] at dimension 1 needs 3",
        ),
        (
            "[[1,2,3],[4,5,6,7]]",
            [2, 3],
            DecodeError,
            r"^element 6 at byte offset 16: data\[1\] has more than 3 entries \(shape \[2, 3\] at dimension 1\)",
        ),
        (
            "[[1,2,3]]",
            [2, 3],
            DecodeError,
            r"^element 3 at byte offset 8: data has 1 entries, shape \[2, 3\] at dimension 0 needs 2",
        ),
        (
            "[[1,2,3],4]",
            [2, 3],
            DecodeError,
            r"^element 3 at byte offset 9: expected '\[' opening data\[1\] \(shape \[2, 3\] nests 2 levels\), got '4'",
        ),
        (
            "[1,[2,3]]",
            [3, 1],
            DecodeError,
            r"^element 1 at byte offset 3: expected a JSON number.*got an array",
        ),
        (
            "[[[1]]]",
            [1, 1],
            DecodeError,
            r"^element 0 at byte offset 2: expected a JSON number.*got an array",
        ),
        (
            "[1e400]",
            [1],
            DecodeError,
            r"^element 0 at byte offset 1: 1e400 is out of range for FP32 \(rounds to infinity",
        ),
        (
            "[3.5e38]",
            [1],
            DecodeError,
            r"^element 0 at byte offset 1: 3.5e38 is out of range for FP32",
        ),
        (
            '["1"]',
            [1],
            DecodeError,
            r'^element 0 at byte offset 1: expected a JSON number.*got a string "1"',
        ),
        (
            "[true]",
            [1],
            DecodeError,
            r"^element 0 at byte offset 1: expected a JSON number.*got 'true'",
        ),
        ("[1.]", [1], DecodeError, r"^element 0 at byte offset 1: .*got '1\.'"),
        ("[.5]", [1], DecodeError, r"^element 0 at byte offset 1: .*got '\.5'"),
        ("[-]", [1], DecodeError, r"^element 0 at byte offset 1: .*got '-'"),
        ("[1e]", [1], DecodeError, r"^element 0 at byte offset 1: .*got '1e'"),
        ("[inf]", [1], DecodeError, r"^element 0 at byte offset 1: .*got 'inf'"),
        ("[-NaN]", [1], DecodeError, r"^element 0 at byte offset 1: .*got '-NaN'"),
        ("[1.5x]", [1], DecodeError, r"^element 0 at byte offset 1: .*got '1\.5x'"),
        (
            "[1:2]",
            [2],
            DecodeError,
            r"^element 1 at byte offset 2: expected ',' or '\]' in data, got ':'",
        ),
        (
            "[" * 101 + "]" * 101,
            [1],
            LimitError,
            r"^element 0 at byte offset 100: arrays nested deeper than max_depth=100",
        ),
    ],
)
def test_malformed(impl, text: str, shape: list[int], error: type, message: str) -> None:
    with pytest.raises(error, match=message) as caught:
        impl.json_to_array(text, "FP32", shape)
    assert type(caught.value) is error


def test_depth_limit(impl) -> None:
    nested = "[" * 3 + "1" + "]" * 3
    assert impl.json_to_array(nested, "INT8", [1, 1, 1], max_depth=3).tolist() == [[[1]]]
    with pytest.raises(LimitError, match="byte offset 2: arrays nested deeper than max_depth=2"):
        impl.json_to_array(nested, "INT8", [1, 1, 1], max_depth=2)
    with pytest.raises(LimitError, match="byte offset 0: arrays nested deeper than max_depth=0"):
        impl.json_to_array("[1]", "INT8", [1], max_depth=0)
    deep = "[" * 100_000
    with pytest.raises(LimitError):
        impl.json_to_array(deep, "INT8", [1])
    with pytest.raises(DecodeError, match="max_depth must be"):
        impl.json_to_array("[1]", "INT8", [1], max_depth=-1)


def test_huge_shape_from_tiny_text_allocates_nothing(impl) -> None:
    with pytest.raises(
        DecodeError, match=r"data has 1 entries, shape \[2147483647\] needs 2147483647"
    ):
        impl.json_to_array("[1]", "FP64", [2**31 - 1])
    with pytest.raises(LimitError):
        impl.json_to_array("[1]", "FP64", [2**31])
    with pytest.raises(ShapeError):
        impl.json_to_array("[1]", "FP64", [-1])


def test_input_types(impl) -> None:
    text = '[1.5, "x", 2]'.replace('"x", ', "")
    for given_text in (
        text,
        text.encode(),
        bytearray(text.encode()),
        memoryview(text.encode()),
        memoryview(b"  " + text.encode() + b"  ")[1:-1],
        np.frombuffer(text.encode(), np.uint8),
    ):
        assert impl.json_to_array(given_text, "FP64", [2]).tolist() == [1.5, 2.0]
    assert impl.json_to_array('["é"]', "BYTES", [1]).tolist() == ["é".encode()]
    with pytest.raises(DecodeError, match="text is not encodable as UTF-8"):
        impl.json_to_array('["\udc80"]', "BYTES", [1])
    with pytest.raises(DecodeError, match="text must be a bytes-like object"):
        impl.json_to_array(12, "FP64", [1])


def test_threads_agree(impl) -> None:
    rng = np.random.default_rng(5)
    values = rng.standard_normal(200_000).astype(np.float32)
    text = ("[" + ",".join(map(str, values)) + "]").encode()
    expected = impl.json_to_array(text, "FP32", [values.size])
    results: list[np.ndarray] = []

    def work() -> None:
        for _ in range(2):
            results.append(impl.json_to_array(text, "FP32", [values.size]))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 16
    assert all(bits_of(r) == bits_of(expected) for r in results)
    assert bits_of(expected) == bits_of(values)


# ---- the twins agree -------------------------------------------------------------------------

_TOKENS = [
    "[",
    "]",
    "[",
    "]",
    ",",
    ",",
    " ",
    "1",
    "-0",
    "1.5",
    "1e3",
    "300",
    "-129",
    "2e-50",
    "1e39",
    "NaN",
    "null",
    "Infinity",
    "-Infinity",
    "true",
    "false",
    '"a"',
    '"\\u00e9"',
    '"\\ud800"',
    "x",
    "{",
    ":",
    "\n",
    "65520",
    "16777217",
    "1.00000005960464477550",
    '"',
    "\\",
    "0.1",
]


@given(
    tokens=st.lists(st.sampled_from(_TOKENS), max_size=14),
    datatype=st.sampled_from(
        ["FP32", "FP64", "FP16", "BF16", "INT8", "UINT8", "INT64", "BOOL", "BYTES"]
    ),
    shape=st.lists(st.integers(0, 3), max_size=3),
    max_depth=st.sampled_from([1, 2, 100]),
)
@settings(max_examples=300)
def test_twins_agree_on_random_text(
    both, tokens: list[str], datatype: str, shape: list[int], max_depth: int
) -> None:
    text = "".join(tokens).encode()
    results = []
    for kernels in both:
        try:
            out = kernels.json_to_array(text, datatype, shape, max_depth=max_depth)
            results.append(
                ("ok", out.dtype, out.shape, out.tolist() if datatype == "BYTES" else bits_of(out))
            )
        except DecodeError as exc:
            results.append((type(exc).__name__, str(exc)))
    assert results[0] == results[1]


@given(
    values=st.lists(
        st.floats(width=32, allow_nan=False)
        | st.integers(-(2**70), 2**70)
        | st.booleans()
        | st.text(max_size=3),
        max_size=9,
    ),
    datatype=st.sampled_from(["FP32", "FP64", "FP16", "BF16", "INT16", "UINT32", "BOOL", "BYTES"]),
    cut=st.integers(0, 200),
)
@settings(max_examples=300)
def test_twins_agree_on_valid_and_truncated_json(
    both, values: list, datatype: str, cut: int
) -> None:
    text = json.dumps(values).encode()
    for candidate in (text, text[:cut]):
        results = []
        for kernels in both:
            try:
                out = kernels.json_to_array(candidate, datatype, [len(values)])
                results.append(("ok", out.tolist() if datatype == "BYTES" else bits_of(out)))
            except DecodeError as exc:
                results.append((type(exc).__name__, str(exc)))
        assert results[0] == results[1]


def test_long_tokens(both) -> None:
    # Hundreds of digits, and exponents far beyond any float: exact, and never slow.
    texts = [
        "0." + "0" * 5000 + "1e5000",
        "1" + "0" * 400 + "e-400",
        "16777217" + "0" * 4400 + "e-4400",
        "1e99999999999999999999",
        "-1e-99999999999999999999",
        "9" * 1000,
    ]
    for text in texts:
        outcomes = []
        for kernels in both:
            for datatype in ("FP64", "FP32", "FP16"):
                try:
                    outcomes.append(bits_of(kernels.json_to_array(f"[{text}]", datatype, [1])))
                except DecodeError as exc:
                    outcomes.append(str(exc))
        assert outcomes[:3] == outcomes[3:]
    native, _ = both
    assert float(native.json_to_array("[" + texts[1] + "]", "FP64", [1])[0]) == 1.0
    assert float(native.json_to_array("[" + texts[2] + "]", "FP32", [1])[0]) == 16777216.0


# ---- the C table ------------------------------------------------------------------------------


def test_pow5_table_matches_generator() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_pow5_table
    finally:
        sys.path.pop(0)
    header = (ROOT / "csrc" / "oipcodec" / "common/pow5_table.h").read_text()
    assert header == gen_pow5_table.render()
    entries = re.findall(
        r"\{0x([0-9A-F]{16})ull, 0x([0-9A-F]{16})ull\}, /\* 5\^(-?\d+) \*/", header
    )
    # 5**-342 .. 5**308 for the parser, then the tail 5**309 .. 5**324 for the FP64 writer
    assert [int(q) for _, _, q in entries] == list(range(-342, 325))
    for high, low, q in entries[::7]:
        value = (int(high, 16) << 64) | int(low, 16)
        q = int(q)
        exact = Fraction(5) ** q
        shift = 127 - (math.floor(math.log2(exact)) if q >= 0 else -(5**-q).bit_length())
        assert value == math.floor(exact * Fraction(2) ** shift)


# The native fast lanes (FP32 and integers) engage only with at least 128 bytes of text ahead:
# long arrays of varied tokens, separators and damage, compared with the pure twin.
_LONG_TOKENS = {
    "FP32": st.one_of(
        st.floats(width=32, allow_nan=False, allow_infinity=False).map(lambda x: repr(float(x))),
        st.floats(width=32, allow_nan=False, allow_infinity=False).map(
            lambda x: np.format_float_positional(np.float32(x), unique=True)
        ),
        st.integers(-(10**12), 10**12).map(str),
        st.sampled_from(["0", "-0", "0.0", "1e-05", "-3.25E+7", "NaN", "null", "1.", ".5", "01"]),
    ),
    "INT64": st.one_of(
        st.integers(-(2**63), 2**63 - 1).map(str),
        st.integers(-1000, 1000).map(str),
        st.sampled_from(["-0", "1.0", "1e3", "9223372036854775808", "00", "+1", "true"]),
    ),
    "INT16": st.one_of(
        st.integers(-(2**15), 2**15 - 1).map(str),
        st.sampled_from(["32768", "-32769", "7"]),
    ),
}


def _shortest_fp32(x: float) -> str:
    """The FP32 text oipcodec's encoder writes (shortest digits): what the fast lane is for."""
    from oipcodec._pure.jsonencode import array_to_json

    return array_to_json(np.array([x], np.float32), "FP32").decode()[1:-1]


_VALID_TOKENS = {
    "FP32": st.one_of(
        st.floats(width=32, allow_nan=False, allow_infinity=False).map(_shortest_fp32),
        st.floats(-1e6, 1e6, width=32).map(_shortest_fp32),
        st.floats(-1e6, 1e6, width=32).map(lambda x: repr(float(x))),  # json.dumps of widened
    ),
    "INT64": st.integers(-(2**63), 2**63 - 1).map(str),
    "INT16": st.integers(-(2**15), 2**15 - 1).map(str),
}
_SEPARATORS = st.sampled_from([",", ", ", " ,", ",\n", ",\t ", ",,", ""])
_VALID_SEPARATORS = st.sampled_from([",", ",", ",", ", ", ",\n"])


@pytest.mark.parametrize("damaged", [False, True])
@pytest.mark.parametrize("datatype", sorted(_LONG_TOKENS))
@given(data=st.data())
@settings(max_examples=150)
def test_long_arrays_native_matches_pure(
    both, datatype: str, damaged: bool, data: st.DataObject
) -> None:
    native, pure = both
    tokens_of = _LONG_TOKENS if damaged else _VALID_TOKENS
    separators = _SEPARATORS if damaged else _VALID_SEPARATORS
    tokens = data.draw(st.lists(tokens_of[datatype], min_size=20, max_size=200))
    text = "[" + "".join(t + data.draw(separators) for t in tokens[:-1]) + tokens[-1] + "]"
    cut = data.draw(st.integers(0, 3)) if damaged else 0  # sometimes truncated at the end
    text = text[: len(text) - cut] if cut else text
    results = []
    for kernels in (native, pure):
        try:
            out = kernels.json_to_array(text, datatype, [len(tokens)])
            results.append(("ok", out.dtype.str, out.tobytes()))
        except DecodeError as exc:
            results.append((type(exc).__name__, str(exc)))
    assert results[0] == results[1], text[:200]
    if not damaged:
        assert results[0][0] == "ok"
