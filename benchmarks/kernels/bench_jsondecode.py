"""json_to_array: ours (native, pure) vs orjson + numpy and pysimdjson, on the same text.

Each group is one input; the peers do the same job: text to a typed numpy array of the shape.
- orjson: ``np.asarray(orjson.loads(text), dtype=...)`` (what OIP servers do today);
- pysimdjson: ``Parser().parse(text).as_buffer(of_type=...)`` then ``np.frombuffer`` (no
  per-element Python objects, a SIMD parser; it has no float32 output, so FP32 goes through
  its float64 buffer and ``astype``; BOOL and BYTES it cannot buffer at all).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
import pytest

N = 1_000_000


def _fp32_values() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(N).astype(np.float32)


def _fp32_text(values: np.ndarray, rows: int | None = None) -> bytes:
    # Shortest float32 text, compact separators: about 10.9 MB for 1M standard normals.
    items = [str(v) for v in values]
    if rows is None:
        return ("[" + ",".join(items) + "]").encode()
    width = len(items) // rows
    return (
        "["
        + ",".join("[" + ",".join(items[r * width : (r + 1) * width]) + "]" for r in range(rows))
        + "]"
    ).encode()


CASES: dict[str, tuple[Callable[[], bytes], str, list[int], Any]] = {
    "FP32 1M flat": (lambda: _fp32_text(_fp32_values()), "FP32", [N], np.float32),
    # What tritonclient sends: json.dumps of the values widened to Python floats (up to 17
    # significant digits, ", " between them; about 20.6 MB).
    "FP32 1M flat, json.dumps of widened": (
        lambda: json.dumps(_fp32_values().tolist()).encode(),
        "FP32",
        [N],
        np.float32,
    ),
    "FP32 [1000,1000] nested": (
        lambda: _fp32_text(_fp32_values(), 1000),
        "FP32",
        [1000, 1000],
        np.float32,
    ),
    "INT64 1M": (
        lambda: orjson.dumps(np.random.default_rng(1).integers(-(2**40), 2**40, N).tolist()),
        "INT64",
        [N],
        np.int64,
    ),
    "BOOL 1M": (
        lambda: orjson.dumps((np.random.default_rng(2).random(N) < 0.5).tolist()),
        "BOOL",
        [N],
        np.bool_,
    ),
    "BYTES 100k": (
        lambda: orjson.dumps([f"token-{i:x}-é" for i in range(100_000)]),
        "BYTES",
        [100_000],
        object,
    ),
}

_TEXTS: dict[str, bytes] = {}


def _text(case: str) -> bytes:
    if case not in _TEXTS:
        _TEXTS[case] = CASES[case][0]()
    return _TEXTS[case]


def _orjson(text: bytes, dtype: Any, shape: list[int]) -> np.ndarray:
    if dtype is object:
        out = np.empty(shape, dtype=object)
        out[:] = [s.encode() for s in orjson.loads(text)]
        return out
    return np.asarray(orjson.loads(text), dtype=dtype)


def _simdjson(parser: Any, text: bytes, dtype: Any, shape: list[int]) -> np.ndarray:
    of_type = {np.float32: "d", np.int64: "i"}[dtype]
    flat = np.frombuffer(
        parser.parse(text).as_buffer(of_type=of_type),
        dtype=np.float64 if of_type == "d" else np.int64,
    )
    return flat.astype(dtype, copy=False).reshape(shape)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("engine", ["native", "pure", "orjson+numpy", "pysimdjson"])
def test_json_to_array(benchmark, native, pure, case: str, engine: str) -> None:
    text = _text(case)
    _, datatype, shape, dtype = CASES[case]
    benchmark.group = f"json_to_array {case} ({len(text) / 1e6:.1f} MB)"
    if engine == "native":
        run = lambda: native.json_to_array(text, datatype, shape)  # noqa: E731
    elif engine == "pure":
        run = lambda: pure.json_to_array(text, datatype, shape)  # noqa: E731
        benchmark.pedantic(run, rounds=2, iterations=1)
        return
    elif engine == "orjson+numpy":
        run = lambda: _orjson(text, dtype, shape)  # noqa: E731
    else:
        simdjson = pytest.importorskip("simdjson")
        if dtype not in (np.float32, np.int64):
            pytest.skip("pysimdjson's as_buffer has no bool or string buffers")
        parser = simdjson.Parser()
        run = lambda: _simdjson(parser, text, dtype, shape)  # noqa: E731
    result = benchmark(run)
    reference = native.json_to_array(text, datatype, shape)
    if dtype is object:
        assert result.tolist() == reference.tolist()
    else:
        assert np.array_equal(result.reshape(-1), reference.reshape(-1))


# ---- into a batch buffer's rows: parse into the slice vs parse then copy -------------------

#: A request's rows ([rows, 1024], the issue's model width) and the batch they go into.
INTO_CASES = {
    "FP32 [1,1024]": ("FP32", np.float32, 1),
    "FP32 [64,1024]": ("FP32", np.float32, 64),
    "INT64 [1,1024]": ("INT64", np.int64, 1),
    "INT64 [64,1024]": ("INT64", np.int64, 64),
}
BATCH_ROWS = 128


def _into_request(case: str) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The REST body of one request, its values, and the batch buffer's rows for it."""
    from oipcodec import InferRequest, Tensor, rest

    _, dtype, rows = INTO_CASES[case]
    rng = np.random.default_rng(3)
    if dtype is np.float32:
        values = rng.standard_normal((rows, 1024)).astype(np.float32)
    else:
        values = rng.integers(-(2**40), 2**40, (rows, 1024))
    body, _ = rest.encode_request(InferRequest([Tensor.from_array("x", values)]), binary=False)
    batch = np.zeros((BATCH_ROWS, 1024), dtype)
    return body, values, batch[BATCH_ROWS - rows :]


@pytest.mark.parametrize("case", list(INTO_CASES))
@pytest.mark.parametrize(
    "way",
    ["kernel into slice", "kernel parse + copy", "REST defer_json + into", "REST eager + into"],
)
def test_json_into_rows(benchmark, native, case: str, way: str) -> None:
    """The same rows filled two ways, side by side: parsed straight into the batch buffer's
    slice (``out=``; ``decode_request(defer_json=True)`` then ``into``), or parsed into an
    array of its own then copied (what a batcher does without ``out=``)."""
    from oipcodec import rest

    body, values, rows = _into_request(case)
    datatype = INTO_CASES[case][0]
    benchmark.group = f"json into batch rows {case} ({len(body) / 1e3:.0f} kB body)"
    if way.startswith("kernel"):
        text = rest.decode_request(body, defer_json=True, kernels=native).inputs[0].text
        shape = list(values.shape)
        if way == "kernel into slice":
            run = lambda: native.json_to_array(text, datatype, shape, out=rows)  # noqa: E731
        else:
            run = lambda: np.copyto(rows, native.json_to_array(text, datatype, shape))  # noqa: E731
    else:
        defer = way.startswith("REST defer")

        def run() -> None:
            rest.decode_request(body, defer_json=defer, kernels=native).inputs[0].into(rows)

    rows[:] = 0
    benchmark(run)
    assert rows.tobytes() == values.tobytes()
