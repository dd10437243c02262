"""gzip bodies: the standard library's zlib (level 6, its default, and 1) vs ISA-L (python-isal)
vs zlib-ng, side by side, compressing and inflating, one table per body.

Bodies: 4 MB of random normal FP32 (raw bytes, as the binary extension sends them), 64 kB of
INT64 token ids below 32000, and the JSON text of an image request (1x3x224x224 FP32, about
3 MB). Each compress case records its ratio (``extra_info["ratio"]``) and its size against
zlib level 6 (``extra_info["size_vs_zlib6"]``); inflating starts from zlib level 6's stream (what
a peer sends). ``oipcodec`` rows are :mod:`oipcodec.compression` as installed (the library and
level it picked), the path the server and clients take.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import compression

GZIP = 16 + zlib.MAX_WBITS


def _bodies() -> dict[str, bytes]:
    rng = np.random.default_rng(0)
    image = rng.standard_normal(3 * 224 * 224).astype(np.float32)
    document = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3, 224, 224]}]}
    document["inputs"][0]["data"] = image.tolist()
    return {
        "fp32 4MB": rng.standard_normal(1 << 20).astype(np.float32).tobytes(),
        "int64 tokens 64kB": rng.integers(0, 32000, 8192, dtype=np.int64).tobytes(),
        "json image": orjson.dumps(document),
    }


BODIES = _bodies()


def _library(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


# (row name, zlib-compatible module, level)
COMPRESSORS: list[tuple[str, Any, int | None]] = [
    ("zlib 6", zlib, 6),
    ("zlib 1", zlib, 1),
    ("isal 1", _library("isal.isal_zlib"), 1),
    ("isal 2", _library("isal.isal_zlib"), 2),
    ("zlib-ng 1", _library("zlib_ng.zlib_ng"), 1),
    ("zlib-ng 2", _library("zlib_ng.zlib_ng"), 2),
    (f"oipcodec ({compression.BACKEND} {compression.LEVEL})", None, None),
]
INFLATERS: list[tuple[str, Any]] = [
    ("zlib", zlib),
    ("isal", _library("isal.isal_zlib")),
    ("zlib-ng", _library("zlib_ng.zlib_ng")),
]


def _gzip(module: Any, level: int | None) -> Callable[[bytes], bytes]:
    if module is None:
        return lambda body: compression.compress(body, "gzip", level)

    def run(body: bytes) -> bytes:
        deflater = module.compressobj(level, zlib.DEFLATED, GZIP)
        return deflater.compress(body) + deflater.flush()

    return run


def _run(benchmark: Any, fn: Callable[[], Any]) -> Any:
    # Level 6 on 4 MB takes a tenth of a second or more here: a few rounds, not thousands.
    return benchmark.pedantic(fn, rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("body_name", list(BODIES))
@pytest.mark.parametrize(("row", "module", "level"), COMPRESSORS, ids=[c[0] for c in COMPRESSORS])
def test_compress(benchmark: Any, body_name: str, row: str, module: Any, level: int | None) -> None:
    if module is None and level is not None:
        pytest.skip(f"{row.split()[0]} is not installed")
    benchmark.group = f"gzip compress {body_name}"
    body = BODIES[body_name]
    packed = _run(benchmark, lambda: _gzip(module, level)(body))
    assert zlib.decompress(packed, GZIP) == body
    benchmark.extra_info["ratio"] = round(len(body) / len(packed), 3)
    benchmark.extra_info["size_vs_zlib6"] = round(len(packed) / len(_gzip(zlib, 6)(body)), 3)


@pytest.mark.parametrize("body_name", list(BODIES))
@pytest.mark.parametrize(("row", "module"), INFLATERS, ids=[i[0] for i in INFLATERS])
def test_inflate(benchmark: Any, body_name: str, row: str, module: Any) -> None:
    if module is None:
        pytest.skip(f"{row} is not installed")
    benchmark.group = f"gzip inflate {body_name}"
    body = BODIES[body_name]
    packed = _gzip(zlib, 6)(body)
    assert _run(benchmark, lambda: module.decompress(packed, GZIP)) == body


@pytest.mark.parametrize("body_name", list(BODIES))
def test_inflate_oipcodec(benchmark: Any, body_name: str) -> None:
    """The capped, chunked inflate the server runs (rest.decompress), on the library picked."""
    benchmark.group = f"gzip inflate {body_name}"
    body = BODIES[body_name]
    packed = _gzip(zlib, 6)(body)
    assert _run(benchmark, lambda: compression.decompress(packed, "gzip")) == body
