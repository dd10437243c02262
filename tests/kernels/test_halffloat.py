"""FP16/BF16 raw packing: pack_fp16 / unpack_fp16 / pack_bf16 / unpack_bf16 / view_bf16 on both
implementations, against numpy (FP16), ml_dtypes (BF16) and an exact rational reference."""

from __future__ import annotations

import math
import threading
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from oipcodec.errors import DecodeError, EncodeError

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
ALL16 = np.arange(1 << 16, dtype=np.uint16)


def bits16(wire: bytes) -> np.ndarray:
    return np.frombuffer(wire, dtype="<u2").astype(np.uint16)


def f32(*patterns: int) -> np.ndarray:
    return np.array(patterns, dtype=np.uint32).view(np.float32)


def quiet_cast(array: np.ndarray, dtype) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns on NaN/overflow casts
        return array.astype(dtype)


# Edge float32 bit patterns: zeros, subnormals, the FP16 and BF16 boundaries, halfway cases on
# both sides of an even/odd last bit, max-finite, infinities, quiet and signalling NaN payloads.
EDGE_F32 = f32(
    *[
        sign | bits
        for sign in (0, 0x80000000)
        for bits in (
            0x00000000,
            0x00000001,
            0x007FFFFF,
            0x00800000,
            0x00800001,  # float32 subnormals
            0x33000000,
            0x33000001,
            0x337FFFFF,
            0x33800000,
            0x33C00000,  # FP16 smallest subnormal
            0x387FC000,
            0x387FE000,
            0x387FF000,
            0x38800000,  # FP16 subnormal/normal boundary
            0x3F800000,
            0x3F801000,
            0x3F803000,
            0x3F801001,
            0x3F802FFF,  # FP16 ties near 1
            0x3F808000,
            0x3F818000,
            0x3F808001,
            0x3F817FFF,  # BF16 ties near 1
            0x477FE000,
            0x477FEFFF,
            0x477FF000,
            0x47800000,  # FP16 max-finite and overflow
            0x7F7F7FFF,
            0x7F7F8000,
            0x7F7FFFFF,
            0x7F800000,  # BF16 max-finite and overflow
            0x7F800001,
            0x7F802000,
            0x7F812345,
            0x7FA00000,
            0x7FBFFFFF,  # signalling NaNs
            0x7FC00000,
            0x7FC00001,
            0x7FC02000,
            0x7FFFFFFF,  # quiet NaNs
        )
    ]
)


def exact_round(x: float, mantissa: int, emin: int, emax: int) -> float:
    """x (a finite float) rounded to nearest, ties to even, to a binary format with ``mantissa``
    stored bits and normal exponents emin..emax, computed exactly with Fractions."""
    if x == 0 or math.isinf(x):
        return x
    a = abs(Fraction(x))
    e = max(math.floor(math.log2(a)), emin)
    while Fraction(2) ** e > a and e > emin:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    quantum = Fraction(2) ** (e - mantissa)
    q, rest = divmod(a, quantum)
    if rest > quantum / 2 or (rest == quantum / 2 and q % 2 == 1):
        q += 1
    value = q * quantum
    if value >= Fraction(2) ** (emax + 1):
        return math.copysign(math.inf, x)
    return math.copysign(float(value), x)


def exact_bf16_bits(x: float) -> int:
    value = exact_round(x, 7, -126, 127)
    return int(np.array([value], np.float32).view(np.uint32)[0] >> 16)


def exact_fp16_bits(x: float) -> int:
    value = exact_round(x, 10, -14, 15)
    return int(np.array([value], np.float16).view(np.uint16)[0])


# ---- BF16 ------------------------------------------------------------------------------------


def test_bf16_every_value_round_trips_and_widens_like_ml_dtypes(impl) -> None:
    values = ALL16.view(BF16)
    assert bits16(impl.pack_bf16(values)).tolist() == ALL16.tolist()
    widened = impl.unpack_bf16(ALL16.astype("<u2").tobytes())
    assert widened.dtype == np.float32
    assert np.array_equal(widened.view(np.uint32), values.astype(np.float32).view(np.uint32))
    # ...and the widened float32 values pack back to the same bits (NaN to the quiet NaN).
    repacked = bits16(impl.pack_bf16(widened))
    nan = np.isnan(widened)
    assert np.array_equal(repacked[~nan], ALL16[~nan])
    assert set(repacked[nan].tolist()) == {0x7FC0, 0xFFC0}


def test_bf16_from_float32_matches_ml_dtypes_on_edges(impl) -> None:
    expected = quiet_cast(EDGE_F32, BF16).view(np.uint16)
    assert bits16(impl.pack_bf16(EDGE_F32)).tolist() == expected.tolist()


def test_bf16_from_float32_matches_ml_dtypes_on_random_bits(impl) -> None:
    rng = np.random.default_rng(1)
    values = rng.integers(0, 1 << 32, size=200_000, dtype=np.uint64).astype(np.uint32)
    # Half of them moved onto or next to a BF16 halfway point.
    values[::2] = (values[::2] & 0xFFFF0000) | rng.choice([0x7FFF, 0x8000, 0x8001], 100_000)
    floats = values.view(np.float32)
    expected = quiet_cast(floats, BF16).view(np.uint16)
    assert np.array_equal(bits16(impl.pack_bf16(floats)), expected)


def test_bf16_nan_is_the_quiet_nan_with_its_sign(impl) -> None:
    nans = f32(0x7F800001, 0x7FC00000, 0xFFC12345, 0xFF800001, 0x7FFFFFFF)
    assert bits16(impl.pack_bf16(nans)).tolist() == [0x7FC0, 0x7FC0, 0xFFC0, 0xFFC0, 0x7FC0]


@given(st.floats(allow_nan=False, width=64))
@settings(max_examples=300, deadline=None)
def test_bf16_from_float64_is_rounded_once(impl, x: float) -> None:
    assert bits16(impl.pack_bf16(np.array([x])))[0] == exact_bf16_bits(x)


def test_bf16_from_float64_double_rounding_traps(impl) -> None:
    # Rounding to float32 first would land exactly on a BF16 halfway point and then round to
    # even (down): each of these is above the halfway point by less than a float32 unit.
    traps = [
        1 + 2**-8 + 2**-30,
        -(1 + 2**-8 + 2**-40),
        3 * 2**100 * (1 + 2**-9 + 2**-50),
        (1 + 2**-8 + 2**-35) * 2**-130,  # in the subnormal range
        (2 - 2**-8 - 2**-50) * 2**127,  # just under the overflow threshold: max-finite
        (2 - 2**-8 + 2**-50) * 2**127,  # just over it: infinity
        2.0**-134 + 2.0**-160,  # above half the smallest subnormal
        2.0**-134,  # exactly half: to even (zero)
    ]
    got = bits16(impl.pack_bf16(np.array(traps))).tolist()
    assert got == [exact_bf16_bits(x) for x in traps]
    assert got[0] == 0x3F81 and got[4] == 0x7F7F and got[5] == 0x7F80 and got[7] == 0
    # ml_dtypes rounds float64 through float32, hence the documented difference:
    assert np.array([traps[0]]).astype(BF16).view(np.uint16)[0] == 0x3F80


def test_bf16_from_float64_matches_exact_reference_on_random_bits(impl) -> None:
    rng = np.random.default_rng(2)
    raw = rng.integers(0, 1 << 64, size=2_000, dtype=np.uint64)
    exponents = rng.integers(1023 - 140, 1023 + 130, size=raw.size).astype(np.uint64)
    raw = (raw & np.uint64((1 << 52) - 1 | 1 << 63)) | (exponents << np.uint64(52))
    raw[::3] &= ~np.uint64((1 << 44) - 1)  # exact BF16 halfway points and representable values
    raw[1::3] |= np.uint64((1 << 44) - 1)
    values = raw.view(np.float64)
    got = bits16(impl.pack_bf16(values)).tolist()
    assert got == [exact_bf16_bits(float(x)) for x in values]


def test_bf16_from_float64_specials(impl) -> None:
    values = np.array([0.0, -0.0, math.inf, -math.inf, 1e300, -1e300, 5e-324, -5e-324])
    assert bits16(impl.pack_bf16(values)).tolist() == [
        0,
        0x8000,
        0x7F80,
        0xFF80,
        0x7F80,
        0xFF80,
        0,
        0x8000,
    ]
    nans = np.array([0x7FF8000000000000, 0xFFF0000000000001, 0x7FF0000000000001], np.uint64)
    assert bits16(impl.pack_bf16(nans.view(np.float64))).tolist() == [0x7FC0, 0xFFC0, 0x7FC0]


# ---- FP16 ------------------------------------------------------------------------------------


def test_fp16_every_value_round_trips(impl) -> None:
    values = ALL16.view(np.float16)
    wire = impl.pack_fp16(values)
    assert bits16(wire).tolist() == ALL16.tolist()
    assert np.array_equal(impl.unpack_fp16(wire).view(np.uint16), ALL16)
    # Through float32 and float64 too, widened from the bits: numpy's cast keeps a signalling
    # NaN's payload on x86 but quietens it where the CPU converts (AArch64: 0x7C01 -> 0x7E01).
    assert bits16(impl.pack_fp16(widen_fp16_bits(ALL16, np.float32))).tolist() == ALL16.tolist()
    assert bits16(impl.pack_fp16(widen_fp16_bits(ALL16, np.float64))).tolist() == ALL16.tolist()


def widen_fp16_bits(bits: np.ndarray, dtype: type) -> np.ndarray:
    """FP16 bit patterns widened exactly to float32/float64, every NaN payload kept unquietened."""
    nan = (bits & 0x7C00 == 0x7C00) & (bits & 0x3FF != 0)
    # numpy's cast is exact for every other value on every CPU (a NaN would raise "invalid").
    wide = np.zeros(bits.shape, dtype)
    wide[~nan] = bits[~nan].view(np.float16).astype(dtype)
    b = bits[nan].astype(np.uint64)
    if np.dtype(dtype).itemsize == 4:
        raw = ((b & 0x8000) << 16) | 0x7F800000 | ((b & 0x3FF) << 13)
        wide.view(np.uint32)[nan] = raw.astype(np.uint32)
    else:
        raw = ((b & 0x8000) << 48) | 0x7FF0000000000000 | ((b & 0x3FF) << 42)
        wide.view(np.uint64)[nan] = raw
    return wide


def _numpy_uses_software_nan_rule() -> bool:
    # numpy's software conversion keeps a signalling NaN's payload unquietened; builds that
    # convert in hardware (F16C, ARM) quieten it. The NaN rule of common/half.h is the software one.
    return int(quiet_cast(f32(0x7F802000), np.float16).view(np.uint16)[0]) == 0x7C01


def test_fp16_from_float32_matches_numpy_on_edges(impl) -> None:
    expected = quiet_cast(EDGE_F32, np.float16).view(np.uint16)
    got = bits16(impl.pack_fp16(EDGE_F32))
    finite = ~np.isnan(EDGE_F32)
    assert np.array_equal(got[finite], expected[finite])
    if _numpy_uses_software_nan_rule():
        assert np.array_equal(got, expected)


def test_fp16_nan_payloads(impl) -> None:
    # The documented rule: sign kept, top 10 payload bits kept, 0x7C01 if none is left.
    nans = f32(0x7F802000, 0x7F800001, 0xFFC00000, 0x7FFFFFFF, 0xFF812345)
    assert bits16(impl.pack_fp16(nans)).tolist() == [0x7C01, 0x7C01, 0xFE00, 0x7FFF, 0xFC09]
    doubles = np.array(
        [0x7FF8000000000000, 0xFFF0000000000001, 0x7FF0040000000000], np.uint64
    ).view(np.float64)
    assert bits16(impl.pack_fp16(doubles)).tolist() == [0x7E00, 0xFC01, 0x7C01]


def test_fp16_from_float32_matches_numpy_on_random_bits(impl) -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 1 << 32, size=200_000, dtype=np.uint64).astype(np.uint32)
    values[::2] = (values[::2] & 0xFFFFE000) | rng.choice([0x0FFF, 0x1000, 0x1001], 100_000)
    floats = values.view(np.float32)
    floats = floats[~np.isnan(floats)]
    expected = quiet_cast(floats, np.float16).view(np.uint16)
    assert np.array_equal(bits16(impl.pack_fp16(floats)), expected)


@given(st.floats(allow_nan=False, width=64))
@settings(max_examples=300, deadline=None)
def test_fp16_from_float64_is_rounded_once(impl, x: float) -> None:
    got = bits16(impl.pack_fp16(np.array([x])))[0]
    assert got == exact_fp16_bits(x)
    assert got == quiet_cast(np.array([x]), np.float16).view(np.uint16)[0]


def test_fp16_from_float64_double_rounding_traps(impl) -> None:
    traps = [
        1 + 2**-11 + 2**-40,  # via float32: 1 + 2**-11, a tie, to even: 1.0
        -(2048 + 1 + 2**-30),
        (1 + 2**-11 + 2**-45) * 2**-14,
        2.0**-25 + 2.0**-60,  # above half the smallest subnormal
        2.0**-25,  # exactly half: zero
        65520 - 2**-20,  # just under the overflow threshold: 65504
        65520.0,  # the threshold: infinity
    ]
    got = bits16(impl.pack_fp16(np.array(traps))).tolist()
    assert got == [exact_fp16_bits(x) for x in traps]
    assert got[0] == 0x3C01 and got[3] == 1 and got[4] == 0 and got[5] == 0x7BFF
    assert got[6] == 0x7C00
    assert got == quiet_cast(np.array(traps), np.float16).view(np.uint16).tolist()


def test_fp16_from_float64_matches_numpy_on_random_bits(impl) -> None:
    rng = np.random.default_rng(4)
    raw = rng.integers(0, 1 << 64, size=200_000, dtype=np.uint64)
    exponents = rng.integers(1023 - 30, 1023 + 20, size=raw.size).astype(np.uint64)
    raw = (raw & np.uint64((1 << 52) - 1 | 1 << 63)) | (exponents << np.uint64(52))
    raw[::3] &= ~np.uint64((1 << 41) - 1)
    raw[1::3] |= np.uint64((1 << 41) - 1)
    values = raw.view(np.float64)
    expected = quiet_cast(values, np.float16).view(np.uint16)
    assert np.array_equal(bits16(impl.pack_fp16(values)), expected)


# ---- conversions between the half types ------------------------------------------------------


def test_fp16_to_bf16_and_back(impl) -> None:
    halves = ALL16.view(np.float16)
    finite = ~np.isnan(halves)
    expected = quiet_cast(halves.astype(np.float32), BF16).view(np.uint16)
    got = bits16(impl.pack_bf16(halves))
    assert np.array_equal(got[finite], expected[finite])
    assert set(got[~finite].tolist()) == {0x7FC0, 0xFFC0}
    brains = ALL16.view(BF16)
    finite = ~np.isnan(brains.astype(np.float32))
    expected = quiet_cast(brains.astype(np.float32), np.float16).view(np.uint16)
    assert np.array_equal(bits16(impl.pack_fp16(brains))[finite], expected[finite])


# ---- layout, byte order, shapes, inputs ------------------------------------------------------


@pytest.mark.parametrize("dtype", ["<f2", ">f2", "<f4", ">f4", "<f8", ">f8"])
@pytest.mark.parametrize("pack", ["pack_fp16", "pack_bf16"])
def test_any_byte_order_and_layout(impl, dtype: str, pack: str) -> None:
    rng = np.random.default_rng(5)
    base = rng.standard_normal((6, 7)).astype(np.float16).astype(np.float64) * 100
    base[0, :3] = [np.inf, -0.0, np.nan]
    expected = getattr(impl, pack)(base.astype(np.dtype(dtype).newbyteorder("=")))
    grid = base.astype(dtype)
    assert getattr(impl, pack)(grid) == expected
    assert getattr(impl, pack)(np.asfortranarray(grid)) == expected
    assert getattr(impl, pack)(grid.T.copy().T) == expected
    flipped = getattr(impl, pack)(np.ascontiguousarray(grid[::-1, ::-2]).astype(np.float64))
    assert getattr(impl, pack)(grid[::-1, ::-2]) == flipped


def test_swapped_bytes_are_read_as_values(impl) -> None:
    little = np.array([1.0, -2.5, 65504.0], "<f4")
    big = little.astype(">f4")
    assert big.tobytes() != little.tobytes()
    assert impl.pack_fp16(big) == impl.pack_fp16(little) == np.array(little, "<f2").tobytes()
    assert impl.pack_bf16(big) == bytes.fromhex("803f20c08047")


def test_sequences_scalars_and_empty(impl) -> None:
    assert impl.pack_fp16([[1.0, 2], [3, 4]]) == np.array([1, 2, 3, 4], "<f2").tobytes()
    assert impl.pack_bf16(1.0) == b"\x80\x3f"
    assert impl.pack_bf16(np.float32(1.0)) == b"\x80\x3f"
    assert impl.pack_fp16(np.zeros((0, 3), np.float32)) == b""
    assert impl.unpack_fp16(b"").shape == (0,)
    assert impl.unpack_bf16(b"", 0).shape == (0,)


@pytest.mark.parametrize("values", [np.arange(3), np.array([True]), np.array(["1.0"]), [b"x"]])
def test_non_float_input_is_refused(impl, values) -> None:
    with pytest.raises(EncodeError, match="values must be"):
        impl.pack_fp16(values)
    with pytest.raises(EncodeError, match="values must be"):
        impl.pack_bf16(values)


@given(
    hnp.arrays(
        dtype=st.sampled_from([np.float16, np.float32, np.float64]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
        elements={"allow_nan": False},
    )
)
@settings(max_examples=200, deadline=None)
def test_hypothesis_round_trips(impl, array: np.ndarray) -> None:
    exact16 = quiet_cast(array, np.float16)
    assert np.array_equal(
        impl.unpack_fp16(impl.pack_fp16(exact16), exact16.size).view(np.uint16),
        exact16.reshape(-1).view(np.uint16),
    )
    bf = quiet_cast(quiet_cast(array, np.float32), BF16)
    back = impl.unpack_bf16(impl.pack_bf16(bf), bf.size)
    assert np.array_equal(back.view(np.uint32), bf.reshape(-1).astype(np.float32).view(np.uint32))
    assert np.array_equal(
        impl.view_bf16(impl.pack_bf16(bf)).view(np.uint16), bf.reshape(-1).view(np.uint16)
    )


@given(
    hnp.arrays(
        dtype=st.sampled_from(["<f4", ">f4", "<f8", ">f8", "<f2"]),
        shape=hnp.array_shapes(min_dims=1, max_dims=2, max_side=8),
    )
)
@settings(max_examples=200, deadline=None)
def test_twins_agree(both, array: np.ndarray) -> None:
    native, pure = both
    assert native.pack_fp16(array) == pure.pack_fp16(array)
    assert native.pack_bf16(array) == pure.pack_bf16(array)


# ---- unpacking: views, alignment, lengths ----------------------------------------------------


def test_unpack_fp16_is_a_read_only_view_when_aligned(impl) -> None:
    wire = np.array([1.0, -2.0, 0.5], "<f2").tobytes()
    out = impl.unpack_fp16(wire)
    assert out.dtype == np.float16 and out.tolist() == [1.0, -2.0, 0.5]
    assert not out.flags.writeable
    buffer = bytearray(wire)
    view = impl.unpack_fp16(buffer)
    assert np.shares_memory(view, np.frombuffer(buffer, np.uint8))
    buffer[0:2] = b"\x00\x40"
    assert view[0] == 2.0  # a view, not a copy


def test_unpack_misaligned_buffers_copy_once(impl) -> None:
    backing = bytearray(b"\x00" + np.array([1.5, -3.0], "<f2").tobytes())
    misaligned = memoryview(backing)[1:]
    out = impl.unpack_fp16(misaligned)
    assert out.tolist() == [1.5, -3.0] and out.flags.aligned and not out.flags.writeable
    assert not np.shares_memory(out, np.frombuffer(backing, np.uint8))
    bf = impl.view_bf16(memoryview(bytearray(b"\x00\x80\x3f"))[1:])
    assert bf.dtype == BF16 and bf.tolist() == [1.0] and bf.flags.aligned


def test_view_bf16_is_zero_copy(impl) -> None:
    buffer = bytearray(bytes.fromhex("803f0040"))
    view = impl.view_bf16(buffer, 2)
    assert view.dtype == BF16 and view.astype(np.float32).tolist() == [1.0, 2.0]
    assert np.shares_memory(view, np.frombuffer(buffer, np.uint8))
    assert not view.flags.writeable


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_any_buffer_is_accepted(impl, kind) -> None:
    wire = bytes.fromhex("803f00c0")
    assert impl.unpack_bf16(kind(wire), 2).tolist() == [1.0, -2.0]
    assert impl.unpack_fp16(kind(bytes.fromhex("003c00c0"))).tolist() == [1.0, -2.0]


@pytest.mark.parametrize("unpack", ["unpack_fp16", "unpack_bf16", "view_bf16"])
@pytest.mark.parametrize(
    ("wire", "count", "message"),
    [
        (
            b"\x00\x3c\x00",
            None,
            r"byte offset 2: (FP16|BF16) buffer of 3 bytes is not a whole number of 2-byte elements",
        ),
        (b"\x00", None, r"byte offset 0: .*buffer of 1 bytes"),
        (
            b"\x00\x3c\x00\x3c",
            1,
            r"byte offset 2: unexpected additional data: 2 bytes after the 1 expected",
        ),
        (b"\x00\x3c\x00", 1, r"byte offset 2: unexpected additional data: 1 bytes after the 1"),
        (
            b"\x00\x3c",
            2,
            r"byte offset 2: expected 2 (FP16|BF16) elements \(4 bytes\), the buffer has only 2 bytes",
        ),
        (b"", 1, r"byte offset 0: expected 1"),
    ],
)
def test_bad_lengths_name_the_offset(impl, unpack, wire, count, message) -> None:
    with pytest.raises(DecodeError, match=message):
        getattr(impl, unpack)(wire, count)


@pytest.mark.parametrize("count", [-1, 1.5, True, "2"])
def test_bad_count(impl, count) -> None:
    with pytest.raises(DecodeError, match="count must be None or a non-negative integer"):
        impl.unpack_fp16(b"", count)


def test_not_a_buffer(impl) -> None:
    with pytest.raises(DecodeError, match="buffer must be a bytes-like object, got list"):
        impl.unpack_bf16([1, 2])


# ---- threads ---------------------------------------------------------------------------------


def test_concurrent_calls_on_shared_inputs(impl) -> None:
    rng = np.random.default_rng(6)
    f32_in = rng.standard_normal(200_000).astype(np.float32)
    f64_in = rng.standard_normal(200_000) * 1e3
    wire = impl.pack_bf16(f32_in)
    calls = [
        lambda: impl.pack_fp16(f32_in),
        lambda: impl.pack_bf16(f32_in),
        lambda: impl.pack_fp16(f64_in),
        lambda: impl.pack_bf16(f64_in),
        lambda: impl.unpack_bf16(wire).tobytes(),
        lambda: impl.unpack_fp16(wire).tobytes(),
    ]
    expected = [call() for call in calls]
    results: list[list[object]] = [[] for _ in range(8)]
    barrier = threading.Barrier(8)

    def worker(slot: int) -> None:
        barrier.wait()
        for _ in range(3):
            results[slot].append([call() for call in calls])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for slot in results:
        assert len(slot) == 3
        for got in slot:
            assert got == expected
