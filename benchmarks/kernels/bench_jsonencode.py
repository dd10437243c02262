"""array_to_json: ours (native, pure) vs orjson's numpy serialiser vs json.dumps(arr.tolist()).

Each group puts the four side by side on the same array. orjson's text differs from ours only
where it is wrong for OIP (null for NaN/inf; the arrays here are finite) and it cannot write
BYTES object arrays, so the BYTES peers decode to str first, as a server would, nor bfloat16,
so the BF16 peers widen to float32 first.

On a shared machine, time with ``--benchmark-timer=time.thread_time`` (CPU time of the calling
thread; the writers run in it with the GIL released): the wall clock moves with the other
load, the CPU time of a call much less. docs/measurements.md has the figures.
"""

from __future__ import annotations

import json

import numpy as np
import orjson
import pytest
from ml_dtypes import bfloat16

OPT = orjson.OPT_SERIALIZE_NUMPY
BF16 = np.dtype(bfloat16)
RNG = np.random.default_rng(0)
M = 1_000_000
_rng = np.random.default_rng(32)
WIDE = _rng.choice([-1.0, 1.0], M) * 10.0 ** _rng.uniform(-20, 20, M)

CASES = {
    "FP32 1M flat": ("FP32", RNG.standard_normal(M).astype(np.float32), False),
    "FP32 [1000,1000] nested": (
        "FP32",
        RNG.standard_normal(M).astype(np.float32).reshape(1000, 1000),
        True,
    ),
    # Magnitudes 1e-20..1e20: the exponent form and every positional layout, mixed at random
    # (a generator of its own, so the other cases' values stay as they were).
    "FP32 1M wide range": ("FP32", WIDE.astype(np.float32), False),
    "FP64 1M": ("FP64", RNG.standard_normal(M), False),
    # Generators of their own, so that the cases after these keep their data.
    "FP64 [1000,1000] nested": (
        "FP64",
        np.random.default_rng(64).standard_normal(M).reshape(1000, 1000),
        True,
    ),
    "FP64 1M wide exponents": (
        "FP64",
        np.random.default_rng(65).standard_normal(M)
        * 10.0 ** np.random.default_rng(66).integers(-30, 31, M),
        False,
    ),
    "INT64 1M full range": ("INT64", RNG.integers(-(2**63), 2**63 - 1, M, dtype=np.int64), False),
    "INT64 1M below 50k": ("INT64", RNG.integers(0, 50_000, M, dtype=np.int64), False),
    "INT32 1M full range": ("INT32", RNG.integers(-(2**31), 2**31 - 1, M, dtype=np.int32), False),
    "INT8 1M full range": ("INT8", RNG.integers(-128, 127, M, dtype=np.int8), False),
    # Small magnitudes, as token ids, labels and counts are.
    "INT64 1M -50k..50k": ("INT64", RNG.integers(-50_000, 50_000, M, dtype=np.int64), False),
    "INT32 1M below 50k": ("INT32", RNG.integers(0, 50_000, M, dtype=np.int32), False),
    "UINT32 1M below 50k": ("UINT32", RNG.integers(0, 50_000, M, dtype=np.uint32), False),
    "INT16 1M full range": ("INT16", RNG.integers(-(2**15), 2**15 - 1, M, dtype=np.int16), False),
    "UINT8 1M full range": ("UINT8", RNG.integers(0, 255, M, dtype=np.uint8), False),
    "UINT64 1M full range": ("UINT64", RNG.integers(0, 2**64 - 1, M, dtype=np.uint64), False),
    "BOOL 1M": ("BOOL", RNG.random(M) < 0.5, False),
    "FP16 1M": ("FP16", RNG.standard_normal(M).astype(np.float16), False),
    "BF16 1M": ("BF16", RNG.standard_normal(M).astype(BF16), False),
    "BYTES 100k": (
        "BYTES",
        np.array([f"token-{i}".encode() for i in RNG.integers(0, 10**6, 100_000)], dtype=object),
        False,
    ),
}


def _flat(values: np.ndarray, nested: bool) -> np.ndarray:
    return values if nested else values.reshape(-1)


@pytest.mark.parametrize("case", list(CASES))
def test_native(benchmark, native, case) -> None:
    datatype, values, nested = CASES[case]
    benchmark.group = f"array_to_json {case}"
    benchmark(native.array_to_json, values, datatype, nested)


@pytest.mark.parametrize("case", list(CASES))
def test_pure(benchmark, pure, case) -> None:
    datatype, values, nested = CASES[case]
    benchmark.group = f"array_to_json {case}"
    # Seconds per call: a few rounds are enough to see the ratio.
    benchmark.pedantic(pure.array_to_json, (values, datatype, nested), rounds=2, iterations=1)


@pytest.mark.parametrize("case", list(CASES))
def test_orjson_numpy(benchmark, case) -> None:
    datatype, values, nested = CASES[case]
    benchmark.group = f"array_to_json {case}"
    if datatype == "BYTES":
        benchmark(lambda: orjson.dumps([b.decode() for b in values.tolist()]))
    elif datatype == "BF16":  # orjson has no bfloat16: widened to float32 first
        benchmark(lambda: orjson.dumps(values.astype(np.float32), option=OPT))
    else:
        benchmark(orjson.dumps, _flat(values, nested), option=OPT)


@pytest.mark.parametrize("case", list(CASES))
def test_json_dumps_tolist(benchmark, case) -> None:
    datatype, values, nested = CASES[case]
    benchmark.group = f"array_to_json {case}"
    if datatype == "BYTES":
        benchmark(lambda: json.dumps([b.decode() for b in values.tolist()]).encode())
    else:
        flat = _flat(values, nested)
        if datatype == "BF16":
            flat = flat.astype(np.float32)
        benchmark(lambda: json.dumps(flat.tolist(), separators=(",", ":")).encode())
