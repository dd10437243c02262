"""FP16/BF16 packing on 1M floats: ours (native, pure) vs numpy astype (FP16) and ml_dtypes
astype (BF16), each peer measured producing the same wire bytes.

The group name puts native, pure and the peer side by side in pytest-benchmark's table.
"""

from __future__ import annotations

import numpy as np
import pytest

N = 1_000_000
ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(scope="module")
def f32() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(N).astype(np.float32)


@pytest.fixture(scope="module")
def f64(f32) -> np.ndarray:
    return f32.astype(np.float64) * np.pi


@pytest.fixture(scope="module")
def wire16(f32) -> bytes:
    return f32.astype("<f2").tobytes()


@pytest.fixture(scope="module")
def wire_bf16(f32) -> bytes:
    return f32.astype(BF16).tobytes()


# ---- pack ----


@pytest.mark.benchmark(group="pack_fp16 float32 1M")
def test_pack_fp16_f32_native(benchmark, native, f32) -> None:
    benchmark(native.pack_fp16, f32)


@pytest.mark.benchmark(group="pack_fp16 float32 1M")
def test_pack_fp16_f32_pure(benchmark, pure, f32) -> None:
    benchmark(pure.pack_fp16, f32)


@pytest.mark.benchmark(group="pack_fp16 float32 1M")
def test_pack_fp16_f32_numpy(benchmark, f32) -> None:
    benchmark(lambda: f32.astype("<f2").tobytes())


@pytest.mark.benchmark(group="pack_fp16 float64 1M")
def test_pack_fp16_f64_native(benchmark, native, f64) -> None:
    benchmark(native.pack_fp16, f64)


@pytest.mark.benchmark(group="pack_fp16 float64 1M")
def test_pack_fp16_f64_pure(benchmark, pure, f64) -> None:
    benchmark(pure.pack_fp16, f64)


@pytest.mark.benchmark(group="pack_fp16 float64 1M")
def test_pack_fp16_f64_numpy(benchmark, f64) -> None:
    benchmark(lambda: f64.astype("<f2").tobytes())


@pytest.mark.benchmark(group="pack_bf16 float32 1M")
def test_pack_bf16_f32_native(benchmark, native, f32) -> None:
    benchmark(native.pack_bf16, f32)


@pytest.mark.benchmark(group="pack_bf16 float32 1M")
def test_pack_bf16_f32_pure(benchmark, pure, f32) -> None:
    benchmark(pure.pack_bf16, f32)


@pytest.mark.benchmark(group="pack_bf16 float32 1M")
def test_pack_bf16_f32_ml_dtypes(benchmark, f32) -> None:
    benchmark(lambda: f32.astype(BF16).tobytes())


@pytest.mark.benchmark(group="pack_bf16 float64 1M")
def test_pack_bf16_f64_native(benchmark, native, f64) -> None:
    benchmark(native.pack_bf16, f64)


@pytest.mark.benchmark(group="pack_bf16 float64 1M")
def test_pack_bf16_f64_pure(benchmark, pure, f64) -> None:
    benchmark(pure.pack_bf16, f64)


@pytest.mark.benchmark(group="pack_bf16 float64 1M")
def test_pack_bf16_f64_ml_dtypes(benchmark, f64) -> None:
    # ml_dtypes rounds float64 via float32 (twice); ours rounds once.
    benchmark(lambda: f64.astype(BF16).tobytes())


# ---- unpack ----


@pytest.mark.benchmark(group="unpack_fp16 1M")
def test_unpack_fp16_native(benchmark, native, wire16) -> None:
    benchmark(native.unpack_fp16, wire16)


@pytest.mark.benchmark(group="unpack_fp16 1M")
def test_unpack_fp16_pure(benchmark, pure, wire16) -> None:
    benchmark(pure.unpack_fp16, wire16)


@pytest.mark.benchmark(group="unpack_fp16 1M")
def test_unpack_fp16_numpy(benchmark, wire16) -> None:
    benchmark(np.frombuffer, wire16, "<f2")


@pytest.mark.benchmark(group="unpack_bf16 to float32 1M")
def test_unpack_bf16_native(benchmark, native, wire_bf16) -> None:
    benchmark(native.unpack_bf16, wire_bf16)


@pytest.mark.benchmark(group="unpack_bf16 to float32 1M")
def test_unpack_bf16_pure(benchmark, pure, wire_bf16) -> None:
    benchmark(pure.unpack_bf16, wire_bf16)


@pytest.mark.benchmark(group="unpack_bf16 to float32 1M")
def test_unpack_bf16_ml_dtypes(benchmark, wire_bf16) -> None:
    benchmark(lambda: np.frombuffer(wire_bf16, BF16).astype(np.float32))


@pytest.mark.benchmark(group="view_bf16 1M")
def test_view_bf16_native(benchmark, native, wire_bf16) -> None:
    benchmark(native.view_bf16, wire_bf16)


@pytest.mark.benchmark(group="view_bf16 1M")
def test_view_bf16_ml_dtypes(benchmark, wire_bf16) -> None:
    benchmark(np.frombuffer, wire_bf16, BF16)
