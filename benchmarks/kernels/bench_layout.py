"""Layout kernels: flatten / unflatten / little_endian_view, ours (native, pure) vs numpy.

The peers are what servers and clients do today: ``np.asarray(nested, dtype)`` (which checks
neither raggedness per path nor integer ranges: it wraps or raises late), ``arr.tolist()``, and
``arr.tobytes()`` (tritonclient's way of putting a tensor on the wire: always a copy).
The group name puts each case side by side in pytest-benchmark's table.
"""

from __future__ import annotations

import numpy as np
import pytest

N = 1_000_000


@pytest.fixture(scope="module")
def fp32_grid() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)


@pytest.fixture(scope="module")
def fp32_nested(fp32_grid) -> list:
    return fp32_grid.tolist()


@pytest.fixture(scope="module")
def int64_flat() -> list:
    return np.random.default_rng(1).integers(-(2**31), 2**31, N).tolist()


# flatten: [1000, 1000] nested FP32 list


@pytest.mark.benchmark(group="flatten FP32 [1000,1000] nested")
def test_flatten_fp32_native(benchmark, native, fp32_nested) -> None:
    _, shape = benchmark(native.flatten, fp32_nested, "FP32")
    assert shape == (1000, 1000)


@pytest.mark.benchmark(group="flatten FP32 [1000,1000] nested")
def test_flatten_fp32_pure(benchmark, pure, fp32_nested) -> None:
    benchmark.pedantic(pure.flatten, (fp32_nested, "FP32"), rounds=3)


@pytest.mark.benchmark(group="flatten FP32 [1000,1000] nested")
def test_flatten_fp32_numpy_asarray(benchmark, fp32_nested) -> None:
    benchmark(np.asarray, fp32_nested, np.float32)


# flatten: 1M flat INT64 list (values in the int32 range, like ids and tokens)


@pytest.mark.benchmark(group="flatten INT64 1M flat")
def test_flatten_int64_native(benchmark, native, int64_flat) -> None:
    benchmark(native.flatten, int64_flat, "INT64")


@pytest.mark.benchmark(group="flatten INT64 1M flat")
def test_flatten_int64_pure(benchmark, pure, int64_flat) -> None:
    benchmark.pedantic(pure.flatten, (int64_flat, "INT64"), rounds=3)


@pytest.mark.benchmark(group="flatten INT64 1M flat")
def test_flatten_int64_numpy_asarray(benchmark, int64_flat) -> None:
    benchmark(np.asarray, int64_flat, np.int64)


# unflatten: a 1M FP32 array to [1000, 1000] nested lists


@pytest.mark.benchmark(group="unflatten FP32 [1000,1000]")
def test_unflatten_native(benchmark, native, fp32_grid) -> None:
    benchmark(native.unflatten, fp32_grid.reshape(-1), (1000, 1000))


@pytest.mark.benchmark(group="unflatten FP32 [1000,1000]")
def test_unflatten_pure(benchmark, pure, fp32_grid) -> None:
    benchmark(pure.unflatten, fp32_grid.reshape(-1), (1000, 1000))


@pytest.mark.benchmark(group="unflatten FP32 [1000,1000]")
def test_unflatten_numpy_tolist(benchmark, fp32_grid) -> None:
    benchmark(fp32_grid.tolist)


# wire bytes of a contiguous little-endian 4 MB tensor (the common case: no copy) and of a
# Fortran-order one (one copy)


@pytest.mark.benchmark(group="wire bytes FP32 [1000,1000] C order")
def test_wire_view_native(benchmark, native, fp32_grid) -> None:
    benchmark(native.little_endian_view, fp32_grid)


@pytest.mark.benchmark(group="wire bytes FP32 [1000,1000] C order")
def test_wire_view_numpy_tobytes(benchmark, fp32_grid) -> None:
    benchmark(fp32_grid.tobytes)


@pytest.mark.benchmark(group="wire bytes FP32 [1000,1000] Fortran order")
def test_wire_view_fortran_native(benchmark, native, fp32_grid) -> None:
    benchmark(native.little_endian_view, np.asfortranarray(fp32_grid))


@pytest.mark.benchmark(group="wire bytes FP32 [1000,1000] Fortran order")
def test_wire_view_fortran_numpy_tobytes(benchmark, fp32_grid) -> None:
    fortran = np.asfortranarray(fp32_grid)
    benchmark(lambda: np.ascontiguousarray(fortran).tobytes())
