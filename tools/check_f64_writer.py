"""Check the native FP64 JSON writer against Python's repr() on many float64 values.

Run from the repository root (the native extension built in place):

    PYTHONPATH=src python tools/check_f64_writer.py [COUNT] [--seed N]

COUNT (default 10**7) random values are written by ``oipcodec._native.jsonencode`` and each
token is compared with the reference text of ``oipcodec._pure.jsonencode``, whose digits are
``repr()``'s and whose layout defines the text; every token is also read back with ``float()``
and compared bit for bit. Half of the values are uniform over all finite bit patterns (every
exponent equally likely, subnormals included), a quarter are standard normal samples (what
tensors hold), a quarter have magnitudes spread evenly over 10**-7 to 10**17 (every layout of
the positional range and either side of it). Before the random ones, the fixed classes: every
power of two and of ten in range, their float neighbours, the subnormals 1..10**4 units and the
largest ones, the extremes. The values go to the writer in rows of 10**6, so on a processor
with AVX-512 (F, CD, BW, DQ, VL, VBMI, VBMI2) they take its vector path, unless OIPCODEC_SIMD=0
or 1 in the environment keeps the writer scalar; the last line says which path ran.
Exits 1 on any difference and prints the first few.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from oipcodec._native import jsonencode as native
from oipcodec._pure.jsonencode import _f64_text

CHUNK = 1_000_000


def fixed_values() -> np.ndarray:
    """Subnormals, powers of two and ten with their neighbours, and the extremes."""
    tiny = np.arange(1, 10_001, dtype=np.uint64)
    top_subnormal = np.uint64(0x000FFFFFFFFFFFFF) - np.arange(10_000, dtype=np.uint64)
    powers2 = np.ldexp(1.0, np.arange(-1074, 1024))
    with np.errstate(over="ignore"):
        powers10 = np.array([float(f"1e{k}") for k in range(-323, 309)])
    around = np.concatenate([powers2, powers10])
    neighbours = np.concatenate(
        [around, np.nextafter(around, np.inf), np.nextafter(around, 0.0), -around]
    )
    extremes = np.array(
        [np.finfo(np.float64).max, np.finfo(np.float64).tiny, 5e-324, 0.0, 1.0, 0.1, 1 / 3]
    )
    bits = np.concatenate([tiny, top_subnormal]).view(np.float64)
    values = np.concatenate([bits, neighbours, extremes])
    return values[np.isfinite(values)]


def random_values(rng: np.random.Generator, count: int) -> np.ndarray:
    half = count // 2
    bits = rng.integers(0, 0x7FF0000000000000, half, dtype=np.uint64)
    signs = rng.integers(0, 2, half, dtype=np.uint64) << np.uint64(63)
    uniform = (bits | signs).view(np.float64)
    quarter = (count - half) // 2
    spread = rng.standard_normal(count - half - quarter) * 10.0 ** rng.uniform(
        -7, 17, count - half - quarter
    )
    return np.concatenate([uniform, rng.standard_normal(quarter), spread])


def processor_avx512() -> str:
    """Whether the FP64 writer's AVX-512 path ran: the processor has what it needs (read on
    Linux) and OIPCODEC_SIMD does not cap it."""
    if os.environ.get("OIPCODEC_SIMD", "")[:1] in ("0", "1"):
        return "no (capped by OIPCODEC_SIMD)"
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            flags = next((line.split() for line in info if line.startswith("flags")), [])
    except OSError:
        return "unknown (no /proc/cpuinfo)"
    wanted = {"avx2", "bmi1", "bmi2", "popcnt", "avx512f", "avx512cd", "avx512bw", "avx512dq"}
    wanted |= {"avx512vl", "avx512vbmi", "avx512_vbmi2"}
    return "yes" if wanted <= set(flags) else "no"


def check(values: np.ndarray) -> list[str]:
    """The differences between the native text and the reference for these values."""
    tokens = native.array_to_json(values, "FP64")[1:-1].split(b",")
    problems = []
    for value, token in zip(values.tolist(), tokens, strict=True):
        text = token.decode()
        if text != _f64_text(value) or float(text) != value:
            problems.append(f"{value!r}: native {text}, reference {_f64_text(value)}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", nargs="?", type=int, default=10**7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.monotonic()
    problems = check(fixed_values())
    checked = len(fixed_values())
    rng = np.random.default_rng(args.seed)
    remaining = args.count
    while remaining > 0 and len(problems) < 10:
        size = min(CHUNK, remaining)
        problems += check(random_values(rng, size))
        checked += size
        remaining -= size
    for line in problems[:10]:
        print(line)
    seconds = time.monotonic() - start
    print(f"{checked} float64 values checked against repr() in {seconds:.0f} s: ", end="")
    print(f"{len(problems)} differ" if problems else "all identical", end="")
    print(f" (AVX-512 path: {processor_avx512()})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
