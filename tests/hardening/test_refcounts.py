"""No reference leaks and no memory growth in the native kernels, on success and error paths.

For every native kernel: the reference counts of the inputs (and of the objects inside them)
are the same before and after many calls; a fresh result is referenced only by its holder;
a bytearray input can be resized once the results are gone (every buffer export released);
and memory traced by tracemalloc stays flat over many calls.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable
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

FP32 = np.linspace(-3, 3, 1000, dtype=np.float32)
ELEMENTS = [b"ab" * (i % 5 + 1) for i in range(200)]
OBJECTS = np.array(ELEMENTS, dtype=object)
WIRE = oipcodec.kernels.serialize_bytes(ELEMENTS)
NESTED = [[float(i + j) for j in range(8)] for i in range(8)]
TEXT = b"[[1.5,2.5,-0.0,NaN],[1e10,3,4,5]]"
REQUEST = oipcodec.InferRequest(
    [
        oipcodec.Tensor("a", "FP32", (1000,), FP32),
        oipcodec.Tensor("b", "BYTES", (200,), OBJECTS),
        oipcodec.Tensor("c", "INT32", (4,), np.arange(4, dtype=np.int32)),
    ],
    parameters={"p": 1, "q": "text"},
    model_name="m",
)
BODY = rest.encode_request(REQUEST, binary=False)[0]
MESSAGE = pb.encode_request(REQUEST)
TYPED = pb.encode_request(REQUEST, raw=False)
FUSED_PLAN = fused_plan("m", "1", [("x", "FP32", (-1,))], [("y", "FP32", (-1,), False)])
OPEN_PLAN = fused_plan("m", "1", None, None)
FUSED_TEXT = oipcodec.kernels.array_to_json(FP32, "FP32")
FUSED_BODY = b'{"id":"7","inputs":[{"name":"x","shape":[1000],"datatype":"FP32","data":%s}]}' % (
    FUSED_TEXT
)
# One element short: the walk stops after the input's array was made.
FUSED_SHORT = FUSED_BODY.replace(b"[1000]", b"[1001]")
FUSED_OUTPUTS = {"y": FP32, "z é": np.arange(4, dtype=np.int64)}
# The binary data extension: x after the JSON head, y asked in binary.
FUSED_HEAD = (
    b'{"inputs":[{"name":"x","shape":[1000],"datatype":"FP32",'
    b'"parameters":{"binary_data_size":4000}}],"outputs":[{"name":"y","parameters":'
    b'{"binary_data":true}}]}'
)
FUSED_BINARY = FUSED_HEAD + FP32.tobytes()
# (values, indices) as top_k answers them, and labels for some of the indices.
RANKED = (np.array([[2.5, 1.0, -3.0]] * 4, np.float32), np.array([[7, 0, 1]] * 4, np.int64))
LABELS = ["zero", "one", "", "three", "four", "five", "six", "seven"]


def _pb_decode(k: SimpleNamespace, data: bytes) -> Any:
    return pb.decode_request(data, kernels=k)


def _pb_encode(k: SimpleNamespace, request: oipcodec.InferRequest) -> Any:
    return pb.encode_request(request, kernels=k)


# (kernel, function of the kernel namespace, its arguments). Arguments are module-level
# objects, so their reference counts are stable between measurements.
CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("serialize_bytes", lambda k, a: k.serialize_bytes(a), (ELEMENTS,)),
    ("serialize_bytes", lambda k, a: k.serialize_bytes(a), (OBJECTS,)),
    ("deserialize_bytes", lambda k, a: k.deserialize_bytes(a, 200), (WIRE,)),
    ("bytes_offsets", lambda k, a: k.bytes_offsets(a), (WIRE,)),
    ("pack_fp16", lambda k, a: k.pack_fp16(a), (FP32,)),
    ("pack_bf16", lambda k, a: k.pack_bf16(a), (FP32,)),
    ("unpack_fp16", lambda k, a: k.unpack_fp16(a), (WIRE[:400],)),
    ("unpack_bf16", lambda k, a: k.unpack_bf16(a), (WIRE[:400],)),
    ("view_bf16", lambda k, a: k.view_bf16(a), (WIRE[:400],)),
    ("json_to_array", lambda k, a: k.json_to_array(a, "FP32", [2, 4]), (TEXT,)),
    ("json_to_array", lambda k, a: k.json_to_array(a, "BYTES", [2]), (b'["ab\\n", "\\u00e9"]',)),
    ("array_to_json", lambda k, a: k.array_to_json(a, "FP32", True), (FP32,)),
    ("array_to_json", lambda k, a: k.array_to_json(a, "BYTES"), (OBJECTS,)),
    ("locate_data", lambda k, a: k.locate_data(a), (BODY,)),
    ("flatten", lambda k, a: k.flatten(a, "FP64"), (NESTED,)),
    ("flatten", lambda k, a: k.flatten(a, "BYTES"), (ELEMENTS,)),
    ("unflatten", lambda k, a: k.unflatten(a, (10, 100)), (FP32,)),
    ("little_endian_view", lambda k, a: k.little_endian_view(a), (FP32,)),
    ("read_infer_message", _pb_decode, (MESSAGE,)),
    ("read_infer_message", _pb_decode, (TYPED,)),
    ("write_infer_message", _pb_encode, (REQUEST,)),
    ("top_k", lambda k, a: k.top_k(a, 5), (FP32.reshape(10, 100),)),
    ("top_k", lambda k, a: k.top_k(a, 2**62), (FP32.reshape(10, 100)[:, ::3],)),
    ("classification_strings", lambda k, a: k.classification_strings(*a), (RANKED,)),
    ("classification_strings", lambda k, a: k.classification_strings(*a, LABELS), (RANKED,)),
    ("decode_inputs", lambda k, a: k.decode_inputs(a, FUSED_PLAN), (FUSED_BODY,)),
    ("decode_inputs", lambda k, a: k.decode_inputs(a, OPEN_PLAN), (FUSED_BODY,)),
    ("encode_outputs", lambda k, a: k.encode_outputs(FUSED_PLAN, "7", a), ({"y": FP32},)),
    ("encode_outputs", lambda k, a: k.encode_outputs(OPEN_PLAN, "7", a), (FUSED_OUTPUTS,)),
    (
        "decode_inputs",
        lambda k, a: k.decode_inputs(a, FUSED_PLAN, len(FUSED_HEAD)),
        (FUSED_BINARY,),
    ),
    ("encode_outputs", lambda k, a: k.encode_outputs(OPEN_PLAN, "7", a, {"y"}), (FUSED_OUTPUTS,)),
]

# Inputs each kernel refuses: the error paths must release what they took, too.
ERRORS: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("serialize_bytes", lambda k, a: k.serialize_bytes(a), ([b"ok", 1],)),
    ("deserialize_bytes", lambda k, a: k.deserialize_bytes(a, 201), (WIRE,)),
    ("bytes_offsets", lambda k, a: k.bytes_offsets(a[:-1]), (WIRE,)),
    ("pack_fp16", lambda k, a: k.pack_fp16(a), (np.arange(3),)),
    ("unpack_fp16", lambda k, a: k.unpack_fp16(a), (WIRE[:5],)),
    ("unpack_bf16", lambda k, a: k.unpack_bf16(a, 9), (WIRE[:4],)),
    ("json_to_array", lambda k, a: k.json_to_array(a, "FP32", [2, 5]), (TEXT,)),
    ("json_to_array", lambda k, a: k.json_to_array(a, "BYTES", [2]), (b'["ab", "\\ud800"]',)),
    ("array_to_json", lambda k, a: k.array_to_json(a, "BYTES"), (np.array([b"\xff"], object),)),
    ("locate_data", lambda k, a: k.locate_data(a[:-7]), (BODY,)),
    ("flatten", lambda k, a: k.flatten(a, "INT8"), ([[1, 2], [3]],)),
    ("flatten", lambda k, a: k.flatten(a, "INT8"), ([[1, 2], [3, 300]],)),
    ("unflatten", lambda k, a: k.unflatten(a, (3, 3)), (FP32,)),
    ("read_infer_message", _pb_decode, (MESSAGE[:-9],)),
    ("top_k", lambda k, a: k.top_k(a, 0), (FP32.reshape(10, 100),)),
    ("classification_strings", lambda k, a: k.classification_strings(a[0], a[1][:, :1]), (RANKED,)),
    ("classification_strings", lambda k, a: k.classification_strings(*a, [b"x", 1]), (RANKED,)),
    (
        "decode_inputs",
        lambda k, a: k.decode_inputs(a, FUSED_PLAN),
        (FUSED_SHORT,),
    ),  # None: no error, the fallback
    (
        "decode_inputs",
        lambda k, a: k.decode_inputs(a, FUSED_PLAN, len(FUSED_HEAD)),
        (FUSED_BINARY + b"\0",),
    ),  # a byte after the binary parts: None
]


def ids(cases: list[tuple[str, Any, Any]]) -> list[str]:
    return [f"{name}-{i}" for i, (name, _, _) in enumerate(cases)]


def _run(call: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    try:
        return call(NATIVE, *args)
    except OIPError as exc:
        return exc


def _tracked(args: tuple[Any, ...]) -> list[Any]:
    """The arguments and the objects directly inside them (list items, object-array cells)."""
    objects = list(args)
    for arg in args:
        if isinstance(arg, list):
            objects += arg[:20]
        elif isinstance(arg, np.ndarray) and arg.dtype == object:
            objects += list(arg[:20])
    return objects


def _counts(objects: list[Any]) -> list[int]:
    return [sys.getrefcount(o) for o in objects]


@pytest.mark.parametrize(("name", "call", "args"), CASES + ERRORS, ids=ids(CASES + ERRORS))
def test_input_refcounts_unchanged(name: str, call: Callable[..., Any], args: tuple) -> None:
    getattr(NATIVE, name)  # skips when the family is not built
    for _ in range(3):
        _run(call, args)
    gc.collect()  # an error's traceback holds the arguments until its cycle is collected
    objects = _tracked(args)
    before = _counts(objects)
    for _ in range(200):
        result = _run(call, args)
        del result
    gc.collect()
    assert _counts(objects) == before


@pytest.mark.parametrize(("name", "call", "args"), CASES, ids=ids(CASES))
def test_results_are_owned_by_their_holder_only(name: str, call: Callable, args: tuple) -> None:
    getattr(NATIVE, name)
    result = call(NATIVE, *args)
    gc.collect()
    assert sys.getrefcount(result) == 2  # `result` and getrefcount's argument
    parts = result if isinstance(result, tuple) else ()
    for part in parts:
        if isinstance(part, np.ndarray):
            assert sys.getrefcount(part) == 3  # the tuple, `part`, the argument
    if isinstance(result, np.ndarray) and result.dtype == object:
        fresh = [x for x in result.reshape(-1)[:20] if len(x) > 1]  # b"" and b"a" are shared
        for x in fresh:
            assert sys.getrefcount(x) == 4  # the array, `fresh`, `x`, the argument


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("deserialize_bytes", lambda k, b: k.deserialize_bytes(b)),
        ("bytes_offsets", lambda k, b: k.bytes_offsets(b)),
        ("unpack_fp16", lambda k, b: k.unpack_fp16(b)),
        ("unpack_bf16", lambda k, b: k.unpack_bf16(b)),
        ("view_bf16", lambda k, b: k.view_bf16(b)),
        ("json_to_array", lambda k, b: k.json_to_array(b, "UINT8", [len(b) // 2])),
        ("locate_data", lambda k, b: k.locate_data(b)),
        ("decode_inputs", lambda k, b: k.decode_inputs(b, OPEN_PLAN)),
        ("read_infer_message", lambda k, b: k.read_infer_message(b)),
    ],
)
def test_buffer_exports_released(name: str, call: Callable[..., Any]) -> None:
    """A bytearray can only be resized when no buffer of it is exported: every kernel must
    release the one it took, after success and after an error, once its results are gone."""
    getattr(NATIVE, name)
    for content in (bytes(WIRE[:400]), b"\xff\xff\xff\xff\x01", b"[1,2,3"):
        buffer = bytearray(content)
        result = _run(call, (buffer,))
        del result
        gc.collect()
        buffer.extend(b"x")  # BufferError if an export leaked


@pytest.mark.parametrize(("name", "call", "args"), CASES + ERRORS, ids=ids(CASES + ERRORS))
def test_memory_flat_over_many_calls(name: str, call: Callable[..., Any], args: tuple) -> None:
    getattr(NATIVE, name)
    for _ in range(50):
        _run(call, args)
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(20):
            _run(call, args)
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(400):
            result = _run(call, args)
            del result
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    # 400 leaked results or exports would be far more than this (the smallest result,
    # a 24-byte array plus its header, leaks 400 * ~100 bytes).
    assert growth < 8 * 1024, f"{growth} bytes more after 400 calls"
