"""The kernels that release the GIL, hammered from 8 threads on shared inputs.

Every job runs once single-threaded for the expected result, then all jobs run many times
from 8 threads at once on the *same* input objects; every result must equal the expected one
(bit for bit). A kernel keeping state in a global, or writing to its input, shows up as a
wrong or failed result. Bounded: a few hundred calls in all, on inputs large enough that the
threads spend their time inside the nogil loops.
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import oipcodec
from oipcodec import kernels as facade
from oipcodec import pb, rest
from oipcodec._shared.fusedrest import fused_plan
from oipcodec.errors import OIPError

NATIVE = SimpleNamespace(**vars(facade.load("native", partial=True)))
PURE = facade.load("pure")
THREADS = 8

rng = np.random.default_rng(20261122)
FLOATS = rng.standard_normal(200_000).astype(np.float32)
FLOATS64 = rng.standard_normal(100_000)
INTS = rng.integers(-(2**62), 2**62, 100_000)
SHORT = [bytes(rng.integers(1, 128, int(n), dtype=np.uint8)) for n in rng.integers(0, 20, 20_000)]
LONG = [bytes(rng.integers(0, 256, 512, dtype=np.uint8)) for _ in range(400)]  # > 256: nogil copy
WIRE = oipcodec.kernels.serialize_bytes(SHORT)
HALF = oipcodec.kernels.pack_fp16(FLOATS)
HALVES = FLOATS[:20_000].astype(np.float16)
BF16 = oipcodec.kernels.pack_bf16(FLOATS)
FP32_TEXT = oipcodec.kernels.array_to_json(FLOATS[:50_000], "FP32")
INT_TEXT = oipcodec.kernels.array_to_json(INTS, "INT64")
BYTES_TEXT = b'["' + b'","'.join(b"x\\n\\u00e9" * (i % 7) for i in range(20_000)) + b'"]'


def sample_request(floats: int, ints: int, strings: int) -> tuple[Any, bytes, bytes, bytes]:
    """A request of FP32, INT64 and BYTES tensors of these sizes; its gRPC message with raw
    contents, with typed contents, and its REST JSON body."""
    request = oipcodec.InferRequest(
        [
            oipcodec.Tensor("f", "FP32", (floats,), FLOATS[:floats]),
            oipcodec.Tensor("i", "INT64", (ints,), INTS[:ints]),
            oipcodec.Tensor("s", "BYTES", (strings,), np.array(SHORT[:strings], dtype=object)),
        ],
        model_name="m",
    )
    raw, typed = pb.encode_request(request), pb.encode_request(request, raw=False)
    return request, raw, typed, rest.encode_request(request, binary=False)[0]


REQUEST, RAW_MESSAGE, TYPED_MESSAGE, REST_BODY = sample_request(50_000, 100_000, 2_000)


def comparable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return value.tolist()
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return [comparable(v) for v in value]
    if isinstance(value, memoryview):
        return value.tobytes()
    if isinstance(value, oipcodec.InferRequest):
        return [(t.name, t.shape, comparable(t.data)) for t in value.inputs]
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    return value


def errors(call: Callable[[], Any]) -> Callable[[], Any]:
    """A job whose expected outcome is an error: the message is the result."""

    def run() -> Any:
        try:
            call()
        except OIPError as exc:
            return f"{type(exc).__name__}: {exc}"
        return "no error"

    return run


def hammer(
    jobs: dict[str, Callable[[], Any]], expected: dict[str, Any], threads: int, rounds: int
) -> list[list[str]]:
    """Every job `rounds` times from each of `threads` threads started together, each thread in
    its own order (so that different kernels overlap too); the wrong results, by thread."""
    barrier = threading.Barrier(threads)

    def worker(seed: int) -> list[str]:
        order = [name for _ in range(rounds) for name in jobs]
        np.random.default_rng(seed).shuffle(order)
        barrier.wait()
        return [name for name in order if comparable(jobs[name]()) != expected[name]]

    with ThreadPoolExecutor(threads) as pool:
        return [wrong for wrong in pool.map(worker, range(threads)) if wrong]


JOBS: dict[str, Callable[[], Any]] = {
    "deserialize_bytes": lambda: NATIVE.deserialize_bytes(WIRE, len(SHORT)),
    "bytes_offsets": lambda: NATIVE.bytes_offsets(WIRE),
    "deserialize_bytes-error": errors(lambda: NATIVE.deserialize_bytes(WIRE[:-1])),
    "serialize_bytes-short": lambda: NATIVE.serialize_bytes(SHORT),
    "serialize_bytes-long": lambda: NATIVE.serialize_bytes(LONG),
    "pack_fp16": lambda: NATIVE.pack_fp16(FLOATS),
    "pack_bf16": lambda: NATIVE.pack_bf16(FLOATS64),
    "unpack_bf16": lambda: NATIVE.unpack_bf16(BF16),
    "unpack_fp16": lambda: NATIVE.unpack_fp16(HALF[1:-1]),  # unaligned: the copying path
    "json_to_array-fp32": lambda: NATIVE.json_to_array(FP32_TEXT, "FP32", [50_000]),
    "json_to_array-int64": lambda: NATIVE.json_to_array(INT_TEXT, "INT64", [100_000]),
    "json_to_array-bytes": lambda: NATIVE.json_to_array(BYTES_TEXT, "BYTES", [20_000]),
    "json_to_array-error": errors(lambda: NATIVE.json_to_array(INT_TEXT, "INT32", [100_000])),
    "array_to_json-int64": lambda: NATIVE.array_to_json(INTS, "INT64"),
    "array_to_json-fp16": lambda: NATIVE.array_to_json(HALVES, "FP16"),
    "array_to_json-bf16": lambda: NATIVE.array_to_json(FLOATS[:20_000], "BF16"),
    "array_to_json-bytes": lambda: NATIVE.array_to_json(np.array(SHORT, object), "BYTES"),
    "locate_data": lambda: NATIVE.locate_data(REST_BODY),
    "read_infer_message-raw": lambda: pb.decode_request(RAW_MESSAGE, kernels=NATIVE),
    "read_infer_message-typed": lambda: pb.decode_request(TYPED_MESSAGE, kernels=NATIVE),
    "write_infer_message": lambda: pb.encode_request(REQUEST, raw=False, kernels=NATIVE),
    "top_k": lambda: NATIVE.top_k(FLOATS[:64_000].reshape(64, 1000), 5),
    "classification_strings": lambda: NATIVE.classification_strings(
        *NATIVE.top_k(FLOATS[:64_000].reshape(64, 1000), 3)[::-1], ["a", "b", "c"] * 400
    ),
}


def test_kernels_agree_with_a_single_thread_when_hammered_from_8_threads() -> None:
    for name in ("deserialize_bytes", "pack_fp16", "json_to_array", "array_to_json"):
        getattr(NATIVE, name)  # skip when a family is not built
    _ = NATIVE.read_infer_message
    expected = {name: comparable(job()) for name, job in JOBS.items()}
    rounds = 2
    assert hammer(JOBS, expected, THREADS, rounds) == []
    assert THREADS * rounds * len(JOBS) >= 300  # the calls this test makes
    # Inputs are untouched (a kernel writing into a shared input would show here).
    assert oipcodec.kernels.serialize_bytes(SHORT) == WIRE
    assert pb.encode_request(REQUEST) == RAW_MESSAGE


# Every kernel of every family, as a call on an implementation `k`; the result of the pure twin
# is the expected one. Inputs are smaller than JOBS' so that the pure twins compute them fast.
SMALL_F32 = FLOATS[:4096]
SMALL_INTS = INTS[:4096]
SMALL_SHORT = SHORT[:2048]
SMALL_WIRE = oipcodec.kernels.serialize_bytes(SMALL_SHORT)
NESTED = SMALL_INTS.reshape(64, 64).tolist()
FLAT_RESPONSE = ([(10, (4096,), memoryview(SMALL_F32.data), None)], None)
FLAT_BUFFER = b"".join(bytes(p) for p in oipcodec.kernels.write_flatbuffer(
    "InferResponse", FLAT_RESPONSE
))  # fmt: skip
SMALL_REQUEST, SMALL_RAW, SMALL_TYPED, SMALL_BODY = sample_request(4096, 4096, 256)
HTTP_HEAD = (
    b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 64\r\n\r\n"
)
FUSED_PLAN = fused_plan("m", "1", [("x", "FP32", (-1,))], [("y", "FP32", (-1,), False)])
FUSED_BODY = b'{"inputs":[{"name":"x","shape":[4096],"datatype":"FP32","data":%s}]}' % (
    oipcodec.kernels.array_to_json(SMALL_F32, "FP32")
)
V1_REQUEST = (
    'batch_size: 2 input { name: "INPUT0" dims: 16 dims: -1 batch_byte_size: 128 } '
    'output { name: "OUTPUT1" cls: { count: 3 } } id: 18446744073709551615 flags: 7'
)
V1_RESPONSE = 'model_name: "m" model_version: 3 batch_size: 1 output { name: "o" raw { dims: 4 } }'
SCORES = FLOATS[:16_000].reshape(16, 1000)


def _counted(k: Any) -> bytes:
    """Two requests counted into fresh slots (each thread its own: a process's slots are
    written by its event loop's thread only)."""
    slots = bytearray(8 * 32)
    k.count_success(slots, 0, 13, 18, 4, 100, 110, 115, 150, 170, 1000, 50)
    k.count_success(slots, 0, 13, -1, 1, 200, 210, 210, 250, 260, 900, 40)
    return bytes(slots)


FAMILY_JOBS: dict[str, Callable[[Any], Any]] = {
    "counters.count_success": _counted,
    "counters.slot_layout": lambda k: k.slot_layout(),
    "counters.SlotLayout": lambda k: k.SlotLayout._fields,
    "flatbuf.pack_strings": lambda k: k.pack_strings(SMALL_SHORT),
    "flatbuf.write_flatbuffer": lambda k: b"".join(
        bytes(p) for p in k.write_flatbuffer("InferResponse", FLAT_RESPONSE)
    ),
    "flatbuf.read_flatbuffer": lambda k: k.read_flatbuffer(FLAT_BUFFER, "InferResponse"),
    "framing.serialize_bytes": lambda k: k.serialize_bytes(SMALL_SHORT),
    "framing.serialize_bytes-long": lambda k: k.serialize_bytes(LONG[:64]),
    "framing.deserialize_bytes": lambda k: k.deserialize_bytes(SMALL_WIRE, len(SMALL_SHORT)),
    "framing.bytes_offsets": lambda k: k.bytes_offsets(SMALL_WIRE),
    "halffloat.pack_fp16": lambda k: k.pack_fp16(SMALL_F32),
    "halffloat.pack_bf16": lambda k: k.pack_bf16(FLOATS64[:4096]),
    "halffloat.unpack_fp16": lambda k: k.unpack_fp16(HALF[2:8194]),
    "halffloat.unpack_bf16": lambda k: k.unpack_bf16(BF16[1:8193]),  # unaligned
    "halffloat.view_bf16": lambda k: k.view_bf16(BF16[:8192]).view(np.uint16),
    "fusedrest.decode_inputs": lambda k: k.decode_inputs(FUSED_BODY, FUSED_PLAN),
    "fusedrest.encode_outputs": lambda k: k.encode_outputs(FUSED_PLAN, "id", {"y": SMALL_F32}),
    "fusedrest.fused_plan": lambda k: k.fused_plan("m", "1", [("x", "FP32", (-1,))], None),
    "fusedrest.FusedPlan": lambda k: k.FusedPlan._fields,
    "jsondecode.json_to_array-fp32": lambda k: k.json_to_array(
        oipcodec.kernels.array_to_json(SMALL_F32, "FP32"), "FP32", [4096]
    ),
    "jsondecode.json_to_array-int64": lambda k: k.json_to_array(
        oipcodec.kernels.array_to_json(SMALL_INTS, "INT64"), "INT64", [64, 64]
    ),
    "jsondecode.json_to_array-bytes": lambda k: k.json_to_array(
        b'["a","b\\n","\\u00e9"]', "BYTES", [3]
    ),
    "jsondecode.json_to_array-error": lambda k: errors(
        lambda: k.json_to_array(b"[1, 2, 3.5]", "INT32", [3])
    )(),
    "jsonencode.array_to_json-fp32": lambda k: k.array_to_json(SMALL_F32, "FP32"),
    "jsonencode.array_to_json-fp64": lambda k: k.array_to_json(FLOATS64[:4096], "FP64"),
    "jsonencode.array_to_json-fp16": lambda k: k.array_to_json(HALVES[:4096], "FP16"),
    "jsonencode.array_to_json-bf16": lambda k: k.array_to_json(SMALL_F32, "BF16"),
    "jsonencode.array_to_json-int64": lambda k: k.array_to_json(SMALL_INTS, "INT64", True),
    "jsonencode.array_to_json-bytes": lambda k: k.array_to_json(
        np.array(SMALL_SHORT, object), "BYTES"
    ),
    "jsonscan.locate_data": lambda k: k.locate_data(SMALL_BODY),
    "layout.flatten-nested": lambda k: k.flatten(NESTED, "INT64"),
    "layout.flatten-array": lambda k: k.flatten(SMALL_F32.reshape(64, 64).T, "FP32"),
    "layout.unflatten": lambda k: k.unflatten(SMALL_INTS, (64, 64)),
    "layout.little_endian_view": lambda k: k.little_endian_view(SMALL_INTS.astype(">i8")),
    "layout.uninitialized_bytearray": lambda k: len(k.uninitialized_bytearray(1 << 16)),
    "pbwire.read_infer_message-raw": lambda k: pb.decode_request(SMALL_RAW, kernels=k),
    "pbwire.read_infer_message-typed": lambda k: pb.decode_request(SMALL_TYPED, kernels=k),
    "pbwire.write_infer_message": lambda k: pb.encode_request(SMALL_REQUEST, raw=False, kernels=k),
    "topk.top_k": lambda k: k.top_k(SCORES, 5),
    "topk.classification_strings": lambda k: k.classification_strings(
        *k.top_k(SCORES, 3)[::-1], [f"label{i}" for i in range(1000)]
    ),
    "http11.parse_head": lambda k: k.parse_head(HTTP_HEAD),
    "v1text.scan_request_header": lambda k: k.scan_request_header(V1_REQUEST),
    "v1text.scan_response_header": lambda k: k.scan_response_header(V1_RESPONSE),
}


def test_every_family_from_16_threads_matches_the_pure_twins() -> None:
    """Every kernel of every family, called from 16 threads at once, many times each, on the
    same inputs: each result equals the pure twin's. With the GIL this checks the kernels'
    GIL-free sections and their module state; on a free-threaded build, all of their code."""
    native = facade.load("native")  # every family must be built
    covered = {name.split("-")[0].split(".")[1] for name in FAMILY_JOBS}
    assert covered == set(vars(native)) - {"IMPLEMENTATION"}
    expected = {name: comparable(job(PURE)) for name, job in FAMILY_JOBS.items()}
    jobs = {name: functools.partial(job, native) for name, job in FAMILY_JOBS.items()}
    threads, rounds = 16, 4
    assert hammer(jobs, expected, threads, rounds) == []
    assert threads * rounds * len(FAMILY_JOBS) >= 2000  # the calls this test makes


def test_first_use_from_8_threads_in_a_fresh_process() -> None:
    """Lazily built state (the FP16/BF16 text tables, the orjson layout check) is built once,
    correctly, when 8 threads need it at the same moment."""
    _ = NATIVE.array_to_json
    script = textwrap.dedent(
        """
        import threading
        from concurrent.futures import ThreadPoolExecutor
        import numpy as np
        from oipcodec import kernels
        k = kernels.load("native")
        values = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
        jobs = [(values.astype(np.float16), "FP16"), (values, "BF16"), (values, "FP32"), (values.astype(np.float64), "FP64")]
        barrier = threading.Barrier(8)
        def work(i):
            barrier.wait()
            return [k.array_to_json(v, d) for v, d in jobs]
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(work, range(8)))
        single = [k.array_to_json(v, d) for v, d in jobs]
        assert all(r == single for r in results), "threads disagree"
        for (v, d), text in zip(jobs, single):
            back = k.json_to_array(text, d, [v.size])
            assert back.size == v.size
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize("kernel", ["json_to_array", "deserialize_bytes", "unpack_bf16"])
def test_input_mutated_by_another_thread_never_crashes(kernel: str) -> None:
    """A bytearray being written by one thread while another decodes it: the decode holds
    a buffer export, so the writer cannot resize it; in-place writes may give any result or
    an OIPError, but never a crash."""
    getattr(NATIVE, kernel)
    source = {"json_to_array": INT_TEXT, "deserialize_bytes": WIRE, "unpack_bf16": BF16}[kernel]
    buffer = bytearray(source)
    call = {
        "json_to_array": lambda: NATIVE.json_to_array(buffer, "INT64", [100_000]),
        "deserialize_bytes": lambda: NATIVE.deserialize_bytes(buffer),
        "unpack_bf16": lambda: NATIVE.unpack_bf16(buffer),
    }[kernel]
    stop = threading.Event()

    def scribble() -> None:
        r = np.random.default_rng(2)
        while not stop.is_set():
            i = int(r.integers(0, len(buffer)))
            buffer[i] = int(r.integers(0, 256))

    writer = threading.Thread(target=scribble)
    writer.start()
    try:
        for _ in range(30):
            with contextlib.suppress(OIPError):
                call()
    finally:
        stop.set()
        writer.join()
