"""Tensor elements to JSON ``data`` array text, pure twin of ``oipcodec._native.jsonencode``.

This module is the reference that defines the text (the native kernel must match it byte for
byte). It is written with Python's and numpy's own formatting, independently of the native
kernel's engines (C tables and integer arithmetic): integers in decimal, floats as the shortest
decimal that reads back to the same value in the tensor's type (positional within a range of
exponents, else ``d1[.d2...dn]e[+-]E``), NaN/Infinity tokens, BYTES as JSON strings. The text
in full: docs/kernels.md#the-twins-shared-rules-in-full ("jsonencode").
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.buffers import bytes_elements, element_type_error, utf8_error
from oipcodec._shared.jsonencode import (
    CONTRACTS,
    empty_nested,
    nonfinite_error,
    not_utf8_error,
    prepare,
)

__all__ = ["array_to_json"]

# Positional ranges of the decimal exponent (see the module docstring).
_F64_RANGE = (-5, 15)
_F32_RANGE = (-6, 12)


@contract(CONTRACTS)
def array_to_json(
    array: Any, datatype: str, nested: bool = False, *, nonfinite: str = "tokens"
) -> bytes:
    prepared = prepare(array, datatype, nested, nonfinite)
    shape = prepared.shape
    if prepared.datatype == "BYTES":
        tokens = _bytes_tokens(prepared.values)
    else:
        tokens = _number_tokens(prepared.datatype, prepared.values.reshape(-1), nonfinite)
    if 0 in shape:
        return empty_nested(shape)
    return _nest(tokens, shape).encode("utf-8")


def _nest(tokens: list[str], shape: tuple[int, ...]) -> str:
    level = tokens
    for dim in reversed(shape):
        level = ["[" + ",".join(level[i : i + dim]) + "]" for i in range(0, len(level), dim)]
    return level[0]


def _number_tokens(datatype: str, flat: np.ndarray[Any, Any], nonfinite: str) -> list[str]:
    if datatype == "BOOL":
        return ["true" if v else "false" for v in flat.tolist()]
    if datatype.startswith(("INT", "UINT")):
        return [str(v) for v in flat.tolist()]
    if datatype == "FP64":
        tokens = [_f64_text(v) for v in flat.tolist()]
    elif datatype == "FP32":
        tokens = [_f32_text(v) for v in flat]
    else:
        text = _fp16_text if datatype == "FP16" else _bf16_text
        cache: dict[int, str] = {}
        tokens = []
        for bits in flat.tolist():
            token = cache.get(bits)
            if token is None:
                token = cache[bits] = text(bits)
            tokens.append(token)
    if nonfinite == "error":
        for index, token in enumerate(tokens):
            if token in ("NaN", "Infinity", "-Infinity"):
                raise nonfinite_error(index, token)
    return tokens


def _nonfinite_token(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _layout(negative: bool, digits: str, e: int, lo: int, hi: int) -> str:
    """The text of a number with significant digits ``digits`` and decimal exponent ``e``."""
    sign = "-" if negative else ""
    n = len(digits)
    if digits == "0":
        return sign + "0.0"
    if lo <= e <= hi:
        if e < 0:
            return sign + "0." + "0" * (-e - 1) + digits
        if n <= e + 1:
            return sign + digits + "0" * (e + 1 - n) + ".0"
        return sign + digits[: e + 1] + "." + digits[e + 1 :]
    mantissa = digits[0] + ("." + digits[1:] if n > 1 else "")
    return f"{sign}{mantissa}e{'-' if e < 0 else '+'}{abs(e)}"


def _split(text: str) -> tuple[str, int]:
    """Significant digits and decimal exponent of a finite, unsigned decimal text."""
    mantissa, _, exponent = text.lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    stripped = all_digits.lstrip("0")
    digits = stripped.rstrip("0")
    if not digits:
        return "0", 0
    lead = len(all_digits) - len(stripped)
    return digits, len(whole) - 1 - lead + int(exponent or 0)


def _f64_text(value: float) -> str:
    if not math.isfinite(value):
        return _nonfinite_token(value)
    digits, e = _split(repr(abs(value)))
    return _layout(math.copysign(1.0, value) < 0, digits, e, *_F64_RANGE)


def _f32_text(value: np.floating[Any]) -> str:
    if not np.isfinite(value):
        return _nonfinite_token(float(value))
    digits, e = _split(np.format_float_scientific(abs(value), unique=True))
    return _layout(bool(np.signbit(value)), digits, e, *_F32_RANGE)


def _fp16_text(bits: int) -> str:
    value = np.array([bits], dtype=np.uint16).view(np.float16)[0]
    if not np.isfinite(value):
        return _nonfinite_token(float(value))
    digits, e = _split(np.format_float_scientific(abs(value), unique=True))
    return _layout(bool(bits & 0x8000), digits, e, *_F32_RANGE)


def _bf16_text(bits: int) -> str:
    negative = bool(bits & 0x8000)
    efield, m = (bits >> 7) & 0xFF, bits & 0x7F
    if efield == 0xFF:
        return "NaN" if m else ("-Infinity" if negative else "Infinity")
    if efield == 0 and m == 0:
        return _layout(negative, "0", 0, *_F32_RANGE)
    significand = (m | 0x80) if efield else m
    q = (efield or 1) - 127 - 7
    digits, e = _shortest_exact(significand, q, lower_gap_halves=(m == 0 and efield > 1))
    return _layout(negative, digits, e, *_F32_RANGE)


def _shortest_exact(significand: int, q: int, lower_gap_halves: bool) -> tuple[str, int]:
    """Shortest digits of ``significand * 2**q`` that round back to it, by exact arithmetic.

    The value rounds back from any decimal strictly inside the interval halfway to its
    neighbours (the ends too when the significand is even: ties go to even), the lower
    neighbour being half as far below a power of two. Of the decimals with the fewest
    significant digits in it, the closest to the value (ties: the even one).
    """
    value = Fraction(significand) * Fraction(2) ** q
    unit = Fraction(2) ** q
    high = value + unit / 2
    low = value - (unit / 4 if lower_gap_halves else unit / 2)
    inclusive = significand % 2 == 0
    e10 = math.floor(math.log10(value))
    while Fraction(10) ** e10 > value:
        e10 -= 1
    while Fraction(10) ** (e10 + 1) <= value:
        e10 += 1
    for precision in range(1, 20):
        scale = Fraction(10) ** (e10 - precision + 1)
        first, last = math.ceil(low / scale), math.floor(high / scale)
        if not inclusive:
            first += first * scale == low
            last -= last * scale == high
        if first > last:
            continue
        below = math.floor(value / scale)
        rest = value / scale - below
        candidates = [c for c in (below, below + 1) if first <= c <= last]
        if len(candidates) == 2:
            closer_up = rest > Fraction(1, 2) or (rest == Fraction(1, 2) and below % 2 == 1)
            chosen = below + 1 if closer_up else below
        else:
            chosen = candidates[0] if candidates else first
        return _split(f"{chosen}e{e10 - precision + 1}")
    raise AssertionError("no shortest decimal found")  # pragma: no cover - cannot happen


def _bytes_tokens(values: Any) -> list[str]:
    tokens = []
    for index, element in enumerate(bytes_elements(values)):
        if isinstance(element, str):
            try:
                element.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise utf8_error(index, exc) from None
            text = element
        elif isinstance(element, (bytes, bytearray, memoryview)):
            try:
                text = bytes(element).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise not_utf8_error(index, exc.start) from None
        else:
            raise element_type_error(index, element)
        tokens.append(json.dumps(text, ensure_ascii=False))
    return tokens
