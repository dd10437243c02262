"""FP16/BF16 raw packing, pure twin of ``oipcodec._native.halffloat``.

The OIP wire carries FP16 and BF16 elements as 2-byte little-endian values, row-major. Packing
rounds to nearest, ties to even, once from the source value (float64 included); overflow goes
to infinity. NaN stays NaN with its sign: FP16 keeps the top 10 payload bits (0x7C01 if none
is left), as numpy does; BF16 is the quiet NaN 0x7FC0, as ml_dtypes does.

This twin is an independent reference for the C code in csrc/oipcodec/common/half.h: it works on the
bit patterns with numpy integer arithmetic and uses neither numpy's float16 casts nor ml_dtypes
for the rounding (the tests compare both twins against those libraries).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.halffloat import (
    CONTRACTS,
    SOURCE_F16,
    SOURCE_F32,
    SOURCE_F64,
    bfloat16_dtype,
    half_source,
    le_uint16_view,
    wire_view,
)

__all__ = ["pack_bf16", "pack_fp16", "unpack_bf16", "unpack_fp16", "view_bf16"]

_U32 = np.uint32
_U64 = np.uint64


def _native_bits(array: np.ndarray[Any, Any], little: bool, uint: type) -> np.ndarray[Any, Any]:
    """The elements' bit patterns as native unsigned integers of the same width."""
    bits = array.view(np.dtype(uint).newbyteorder("<" if little else ">"))
    return bits.astype(uint)


def _f64_to_f32_odd(u: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """float64 bits (NaN excluded) -> float32 bits rounded to odd: truncated, with the last bit
    set when anything was dropped. The final rounding to FP16/BF16 from there is exact."""
    sign = ((u >> _U64(32)) & _U64(0x80000000)).astype(_U32)
    e = ((u >> _U64(52)) & _U64(0x7FF)).astype(np.int64)
    m = u & _U64((1 << 52) - 1)
    e32 = e - 1023 + 127
    # Normal float32: 29 bits dropped.
    normal = (
        (np.clip(e32, 0, 255).astype(_U64) << _U64(23))
        | (m >> _U64(29))
        | ((m & _U64((1 << 29) - 1)) != 0).astype(_U64)
    ).astype(_U32)
    # Subnormal float32: significand with its implicit bit in units of 2**-149.
    shift = np.clip(30 - e32, 0, 63).astype(_U64)
    sig = m | _U64(1 << 52)
    sub = ((sig >> shift) | ((sig & ((_U64(1) << shift) - _U64(1))) != 0)).astype(_U32)
    out = np.where(e32 >= 1, normal, np.where((e32 <= -34) | (e == 0), _U32(1), sub))
    out = np.where(e32 >= 255, _U32(0x7F7FFFFF), out)  # beyond float32: odd, rounds to inf
    out = np.where(e == 0x7FF, _U32(0x7F800000), out)
    out = np.where((e == 0) & (m == 0), _U32(0), out)
    return (out | sign).astype(_U32)


def _f32_to_bf16(u: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    u = u.astype(_U64)  # room for the carry
    rounded = (u + _U64(0x7FFF) + ((u >> _U64(16)) & _U64(1))) >> _U64(16)
    nan = (u & _U64(0x7FFFFFFF)) > _U64(0x7F800000)
    quiet = ((u >> _U64(16)) & _U64(0x8000)) | _U64(0x7FC0)
    return np.where(nan, quiet, rounded).astype(np.uint16)


def _f32_to_fp16(u: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    u = u.astype(np.int64)
    sign = (u >> 16) & 0x8000
    a = u & 0x7FFFFFFF
    nan_bits = 0x7C00 | ((a & 0x7FFFFF) >> 13)
    nan_bits = np.where(nan_bits == 0x7C00, 0x7C01, nan_bits)
    big = np.where(a > 0x7F800000, nan_bits, 0x7C00)
    n = a - ((127 - 15) << 23)
    normal = (n + 0x0FFF + ((n >> 13) & 1)) >> 13
    e = a >> 23
    shift = np.clip(126 - e, 1, 62)
    sig = (a & 0x7FFFFF) | 0x800000
    h = sig >> shift
    rest = sig & ((1 << shift) - 1)
    halfway = 1 << (shift - 1)
    sub = h + ((rest > halfway) | ((rest == halfway) & ((h & 1) == 1)))
    out = np.where(a >= 0x47800000, big, np.where(a >= 0x38800000, normal, sub))
    out = np.where(a < 0x33000000, 0, out)
    return (out | sign).astype(np.uint16)


def _f64_nan_to_fp16(u: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    sign = ((u >> _U64(48)) & _U64(0x8000)).astype(np.uint16)
    h = (_U64(0x7C00) | ((u & _U64((1 << 52) - 1)) >> _U64(42))).astype(np.uint16)
    return np.where(h == 0x7C00, np.uint16(0x7C01), h) | sign


def _fp16_to_f32(h: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """FP16 bits -> float32 bits, exactly (subnormals normalised, NaN payloads kept)."""
    h = h.astype(np.int64)
    sign = (h & 0x8000) << 16
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    special = 0x7F800000 | (m << 13)
    normal = ((e + 112) << 23) | (m << 13)
    # Subnormal m * 2**-24: its leading bit at position p gives exponent p - 24.
    p = np.floor(np.log2(np.maximum(m, 1))).astype(np.int64)
    sub = ((p - 24 + 127) << 23) | (((m << (10 - p)) & 0x3FF) << 13)
    out = np.where(e == 0x1F, special, np.where(e != 0, normal, np.where(m == 0, 0, sub)))
    return (out | sign).astype(_U32)


def _pack(values: Any, target: str) -> bytes:
    array, source, little = half_source(values, target)
    if source == SOURCE_F64:
        u64 = _native_bits(array, little, _U64)
        nan = (u64 & _U64((1 << 63) - 1)) > _U64(0x7FF0000000000000)
        f32 = _f64_to_f32_odd(np.where(nan, _U64(0), u64))
        if target == "FP16":
            out = np.where(nan, _f64_nan_to_fp16(u64), _f32_to_fp16(f32))
        else:
            quiet = ((u64 >> _U64(48)) & _U64(0x8000)).astype(np.uint16) | np.uint16(0x7FC0)
            out = np.where(nan, quiet, _f32_to_bf16(f32))
    elif source == SOURCE_F32:
        f32 = _native_bits(array, little, _U32)
        out = _f32_to_fp16(f32) if target == "FP16" else _f32_to_bf16(f32)
    else:
        u16 = _native_bits(array, little, np.uint16)
        if (source == SOURCE_F16) == (target == "FP16"):
            out = u16
        elif source == SOURCE_F16:
            out = _f32_to_bf16(_fp16_to_f32(u16))
        else:
            out = _f32_to_fp16(u16.astype(_U32) << _U32(16))
    return out.astype("<u2").tobytes()


@contract(CONTRACTS)
def pack_fp16(array: Any) -> bytes:
    return _pack(array, "FP16")


@contract(CONTRACTS)
def pack_bf16(array: Any) -> bytes:
    return _pack(array, "BF16")


@contract(CONTRACTS)
def unpack_fp16(buffer: Any, count: int | None = None) -> np.ndarray[Any, Any]:
    view, n = wire_view(buffer, count, "FP16")
    return le_uint16_view(view, n, np.dtype(np.float16))


@contract(CONTRACTS)
def unpack_bf16(buffer: Any, count: int | None = None) -> np.ndarray[Any, Any]:
    view, n = wire_view(buffer, count, "BF16")
    u16 = np.frombuffer(view, dtype="<u2", count=n)
    return (u16.astype(_U32) << _U32(16)).view(np.float32)


@contract(CONTRACTS)
def view_bf16(buffer: Any, count: int | None = None) -> np.ndarray[Any, Any]:
    dtype = bfloat16_dtype()
    view, n = wire_view(buffer, count, "BF16")
    return le_uint16_view(view, n, dtype)
