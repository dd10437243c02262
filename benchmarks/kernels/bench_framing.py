"""BYTES framing: 100,000 short strings, ours (native, pure) vs tritonclient.utils.

The group name puts the three side by side in pytest-benchmark's table.
"""

from __future__ import annotations

import numpy as np
import pytest

N = 100_000


@pytest.fixture(scope="module")
def strings() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.array([rng.bytes(int(n)) for n in rng.integers(1, 32, N)], dtype=object)


@pytest.fixture(scope="module")
def wire(strings, native) -> bytes:
    return native.serialize_bytes(strings)


@pytest.mark.benchmark(group="serialize_bytes 100k")
def test_serialize_native(benchmark, native, strings) -> None:
    benchmark(native.serialize_bytes, strings)


@pytest.mark.benchmark(group="serialize_bytes 100k")
def test_serialize_pure(benchmark, pure, strings) -> None:
    benchmark(pure.serialize_bytes, strings)


@pytest.mark.benchmark(group="serialize_bytes 100k")
def test_serialize_tritonclient(benchmark, strings) -> None:
    utils = pytest.importorskip("tritonclient.utils")
    benchmark(utils.serialize_byte_tensor, strings)


@pytest.mark.benchmark(group="deserialize_bytes 100k")
def test_deserialize_native(benchmark, native, wire) -> None:
    benchmark(native.deserialize_bytes, wire, N)


@pytest.mark.benchmark(group="deserialize_bytes 100k")
def test_deserialize_pure(benchmark, pure, wire) -> None:
    benchmark(pure.deserialize_bytes, wire, N)


@pytest.mark.benchmark(group="deserialize_bytes 100k")
def test_deserialize_tritonclient(benchmark, wire) -> None:
    utils = pytest.importorskip("tritonclient.utils")
    benchmark(utils.deserialize_bytes_tensor, wire)


@pytest.mark.benchmark(group="bytes_offsets 100k (zero-copy)")
def test_bytes_offsets_native(benchmark, native, wire) -> None:
    benchmark(native.bytes_offsets, wire, N)


@pytest.mark.benchmark(group="bytes_offsets 100k (zero-copy)")
def test_bytes_offsets_pure(benchmark, pure, wire) -> None:
    benchmark(pure.bytes_offsets, wire, N)


@pytest.mark.benchmark(group="bytes_offsets 100k (zero-copy)")
def test_bytes_offsets_vs_tritonclient_deserialize(benchmark, wire) -> None:
    utils = pytest.importorskip("tritonclient.utils")
    benchmark(utils.deserialize_bytes_tensor, wire)
