"""Copies of the element data from the wire to a batch buffer's rows, per path: what each
decoder allocates on the way (tracemalloc, which sees numpy's arrays) when a request is
decoded and its tensor put into preallocated rows with ``Tensor.into``.

An intermediate array of the tensor's size is one copy more than the one into the rows. The
table of docs/codec.md ("Copies per path") is this module's output:
``PYTHONPATH=src python -m tests.codecs.test_copies``.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oipcodec import InferRequest, Tensor, graphpipe, kernels, pb, rest
from oipcodec import trtis_v1 as v1
from oipcodec.sharedmem import Location, parameters_for

ROWS, WIDTH = 64, 1024


def peak(call: Callable[[], object]) -> int:
    """The most memory traced during ``call()`` above what was traced before it."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _request(tensor: Tensor) -> InferRequest:
    return InferRequest([tensor], model_name="m")


def paths(array: np.ndarray[Any, Any], rows: np.ndarray[Any, Any]) -> dict[str, Callable[[], None]]:
    """Each wire path as a call that decodes one request holding ``array`` and puts it into
    ``rows``."""
    tensor = Tensor.from_array("x", array)
    found: dict[str, Callable[[], None]] = {}
    json_body, _ = rest.encode_request(_request(tensor), binary=False)
    found["REST JSON, defer_json + into"] = lambda: (
        rest.decode_request(json_body, defer_json=True).inputs[0].into(rows)
    )
    found["REST JSON, eager + into"] = lambda: rest.decode_request(json_body).inputs[0].into(rows)
    binary_body, length = rest.encode_request(_request(tensor), binary=True)
    found["REST binary"] = lambda: rest.decode_request(binary_body, length).inputs[0].into(rows)
    found["gRPC raw contents"] = _pb(pb.encode_request(_request(tensor), raw=True), rows)
    found["gRPC typed contents"] = _pb(pb.encode_request(_request(tensor), raw=False), rows)
    if array.dtype != object:
        region = bytearray(array.tobytes())
        where = Location("r", len(region), 0)
        shm = Tensor.from_array("x", array, parameters_for(where))
        shm_body, _ = rest.encode_request(_request(shm))

        def resolve(where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
            return memoryview(region).toreadonly()

        found["shared memory (REST)"] = lambda: (
            rest.decode_request(shm_body, shared_memory=resolve).inputs[0].into(rows)
        )
        header = v1.parse_request_header(f'batch_size: {len(array)} input {{ name: "x" }}')
        specs = [v1.InputSpec("x", tensor.datatype, (-1, *array.shape[1:]))]
        v1_body = array.tobytes()
        found["v1 (TRTIS)"] = lambda: v1.decode_inputs(header, v1_body, specs, 2 * len(array))[
            0
        ].into(rows)
        gp_body = b"".join(bytes(part) for part in graphpipe.encode_request([array]))
        found["GraphPipe"] = lambda: graphpipe.decode_request(gp_body).inputs[0].into(rows)
    return found


def _pb(message: bytes, rows: np.ndarray[Any, Any]) -> Callable[[], None]:
    return lambda: pb.decode_request(message).inputs[0].into(rows)


def measure(array: np.ndarray[Any, Any], size: int) -> dict[str, float]:
    """Each path's peak allocation as a multiple of ``size`` (the element bytes)."""
    rows = np.zeros_like(array) if array.dtype != object else np.empty(array.shape, object)
    ratios = {}
    for name, call in paths(array, rows).items():
        call()  # warm up, and check
        if array.dtype == object:
            assert rows.tolist() == array.tolist(), name
            rows[...] = None  # the references of the warm-up go
        else:
            assert rows.tobytes() == array.tobytes(), name
        ratios[name] = peak(call) / size
    return ratios


def _fp32() -> np.ndarray[Any, Any]:
    return np.random.default_rng(0).standard_normal((ROWS, WIDTH)).astype(np.float32)


def _int64() -> np.ndarray[Any, Any]:
    return np.random.default_rng(1).integers(-(2**40), 2**40, (ROWS, WIDTH))


def _bytes() -> np.ndarray[Any, Any]:
    cells = [[bytes([65 + (r + c) % 26]) * 64 for c in range(16)] for r in range(ROWS)]
    return np.array(cells, dtype=object)


native = pytest.mark.skipif(
    kernels.IMPLEMENTATION != "native", reason="the pure twins build temporaries by design"
)

#: Paths that hand ``into`` a view of the wire bytes (or parse into the rows): no
#: intermediate array, so one copy (or none, the JSON parse writing the rows itself).
NO_INTERMEDIATE = {
    "FP32": [
        "REST JSON, defer_json + into",
        "REST binary",
        "gRPC raw contents",
        "gRPC typed contents",
        "shared memory (REST)",
        "v1 (TRTIS)",
        "GraphPipe",
    ],
    "INT64": [
        "REST JSON, defer_json + into",
        "REST binary",
        "gRPC raw contents",
        "shared memory (REST)",
        "v1 (TRTIS)",
        "GraphPipe",
    ],
}
#: Paths that make an array of the request's own first: two copies.
INTERMEDIATE = {
    "FP32": ["REST JSON, eager + into"],
    "INT64": ["REST JSON, eager + into", "gRPC typed contents"],  # varints
}


@native
@pytest.mark.parametrize("datatype", ["FP32", "INT64"])
def test_copies_per_path(datatype: str) -> None:
    array = _fp32() if datatype == "FP32" else _int64()
    ratios = measure(array, array.nbytes)
    assert set(ratios) == set(NO_INTERMEDIATE[datatype]) | set(INTERMEDIATE[datatype])
    for name in NO_INTERMEDIATE[datatype]:
        assert ratios[name] < 0.125, (name, ratios[name])
    for name in INTERMEDIATE[datatype]:
        assert ratios[name] >= 1.0, (name, ratios[name])


@native
def test_bytes_copies_each_element_once() -> None:
    """BYTES: every path makes each element's bytes object once (the one copy of its
    bytes); parsed into the rows, JSON strings need no array of references of their own."""
    array = _bytes()
    ratios = measure(array, array.size * 64)
    deferred = ratios.pop("REST JSON, defer_json + into")
    for name, ratio in ratios.items():
        assert deferred < ratio, (name, deferred, ratio)
    assert max(ratios.values()) < 2.5  # no second copy of the element bytes anywhere


def main() -> None:
    """Print the table docs/codec.md shows."""
    for datatype, array, size in (
        ("FP32", _fp32(), None),
        ("INT64", _int64(), None),
        ("BYTES (64-byte elements)", _bytes(), ROWS * 16 * 64),
    ):
        print(f"{datatype} {list(array.shape)}: peak allocated / element bytes")
        for name, ratio in measure(array, size or array.nbytes).items():
            print(f"  {name:32s} {ratio:6.3f}")


if __name__ == "__main__":
    main()
