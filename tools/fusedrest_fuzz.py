"""Differential fuzzing of the fused REST kernels (``decode_inputs`` and
``encode_outputs``, native and pure) against each other and against the general codec.

Decode cases: small requests written for a few plans (declared FP32 / INT64 / BOOL / FP16 / ...
inputs, the open plan, a plan with small limits) in varied JSON (member order, white space,
number spellings, nested or flat data, ids, parameters), then 0-3 byte mutations (bit flips,
insertions, deletions, truncations, splices of two bodies, number edits, white space, escapes,
duplicate keys and inputs, deep nesting). Each must give the same from both twins (None, or the
same arrays and id); a body the fused path takes, ``rest.decode_request`` must take too under
the same limits, with the same arrays, id and nothing the fused result drops (parameters,
requested outputs). Encode cases: random outputs (every fixed-width dtype, other byte order,
strided, 0-d, empty, NaN / inf, names and ids needing escapes) must give the same bytes from
both twins or None from both, and those bytes must be ``rest.encode_response_parts``' joined.
Any exception from a kernel is a failure.

Run: ``python tools/fusedrest_fuzz.py --count 1000000 [--seed 1] [--seconds S]``; prints the
rate as it goes, then the count per verdict; exit status 1 on the first failure not in
``KNOWN``, with a reproducer (``--case N`` replays case N of the seed and prints it).
tests/kernels/test_fusedrest_fuzz.py runs 2,000.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from oipcodec import kernels, rest
from oipcodec._shared.fusedrest import ANY_OUTPUT, FIXED_WIDTH, FusedPlan, fused_plan
from oipcodec.datatypes import DATATYPES
from oipcodec.errors import OIPError
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.types import InferResponse, Tensor


class Rng(random.Random):
    """A case's random source; ``noise``: how often a body's writer puts in a token the codec
    refuses (white space JSON does not have, an element out of range or misspelt)."""

    noise = 0.0


class Plan(NamedTuple):
    label: str
    plan: FusedPlan
    limits: Limits
    #: (name, datatype, declared dims) per input; None: the open plan
    inputs: list[tuple[str, str, tuple[int, ...]]] | None
    #: (name, datatype, declared dims) per output, each optional; None: any
    outputs: list[tuple[str, str, tuple[int, ...]]] | None
    model: tuple[str, str]


def _plan(
    label: str, inputs: Any, outputs: Any, limits: Limits = DEFAULT_LIMITS, model: str = "m"
) -> Plan:
    declared = None if outputs is None else [(n, dt, dims, True) for n, dt, dims in outputs]
    plan = fused_plan(model, "1", inputs, declared, limits)
    assert plan is not None
    return Plan(label, plan, limits, inputs, outputs, (model, "1"))


SMALL = Limits(max_tensor_elements=6, max_request_elements=10, max_depth=6, max_tensors=3)
PLANS = [
    _plan("fp32+int64", [("x", "FP32", (1, -1)), ("k", "INT64", (2,))], [("y", "FP32", (-1, -1))]),
    _plan("bool+fp16", [("b", "BOOL", (-1,)), ("h", "FP16", (2, -1))], [("h", "FP16", (2, -1))]),
    _plan(
        "ints",
        [
            ("in é", "INT8", (-1, -1)),
            ("u", "UINT64", (-1,)),
            ("w", "UINT16", (3,)),
            ("s", "INT32", ()),
        ],
        [("o", "INT32", (-1,)), ("p", "UINT8", ())],
    ),
    _plan(
        "fp64",
        [("INPUT0", "FP64", (-1, 2, -1))],
        [("OUTPUT0", "FP64", (-1, 2, -1))],
        model='m "é\\',
    ),
    _plan("open", None, None),
    _plan("open-small", None, None, SMALL),
]
DATATYPE_NAMES = sorted(FIXED_WIDTH)


# --------------------------------------------------------------------------- the bodies


def _ws(rng: Rng) -> str:
    """White space between two tokens: mostly none."""
    r = rng.random()
    if r < 0.8:
        return ""
    if r < 1 - rng.noise / 30:
        return rng.choice((" ", "\n", "  ", "\t", "\r\n", " \n  "))
    return rng.choice(("\f", "\v", "\x00", "\u00a0", "\u3000"))  # not JSON white space


_FLOATS = (
    "0", "-0", "1", "-1", "0.5", "-0.0", "1e3", "1E3", "1e+3", "1e-3", "2.5e-1", "1e400",
    "-1e400", "1e-400", "65504", "65520", "6.1e-5", "5.96e-8", "3.4028235e38", "3.4028236e38",
    "1.7976931348623157e308", "4.9e-324", "0.1", "123456789012345678901234567890",
    "0.30000000000000004", "1.00000000000000000000001", "NaN", "Infinity", "-Infinity", "1.",
    ".5", "01", "+1", "1e", "-", "0x10", "1_0",
)  # fmt: skip
_INTS = ("0", "-0", "1", "-1", "1.0", "1e2", "01", "+1", "1.5", "true", "null", "00")


#: The decimal exponents of each float datatype's finite values, one past at the top.
_EXPONENTS = {"FP16": (-8, 5), "FP32": (-46, 39), "FP64": (-325, 308)}


def _int_bounds(datatype: str) -> tuple[int, int]:
    info = np.iinfo(DATATYPES[datatype].numpy_dtype)
    return int(info.min), int(info.max)


def _element(rng: Rng, datatype: str) -> str:
    """One element's JSON text for ``datatype``: mostly valid, sometimes not."""
    odd = rng.random() < rng.noise / 10
    if datatype == "BOOL":
        if odd:
            return rng.choice(("0", "1", "null", "True", "tru", '"true"', "truee"))
        return rng.choice(("true", "false"))
    if datatype.startswith("FP"):
        r = rng.random()
        if odd or r < 0.15:
            return rng.choice(_FLOATS[: 24 if r < 0.14 else None])
        if r < 0.45:
            return str(rng.randint(-1000, 1000))
        value = rng.uniform(-1, 1) * 10.0 ** rng.randint(*_EXPONENTS[datatype])
        if r < 0.6:  # a float64's digits: the datatype's rounding
            return repr(value)
        with np.errstate(over="ignore"):  # rounded to the datatype: inf, then "1"
            text = repr(float(np.dtype(DATATYPES[datatype].numpy_dtype).type(value)))
        return text if math.isfinite(float(text)) else "1"
    low, high = _int_bounds(datatype)
    r = rng.random()
    if odd:
        return rng.choice(_INTS)
    if r < 0.1:
        return str(rng.choice((low, high, 0, -1 if low else 1)))
    if r < rng.noise / 2:
        return str(rng.choice((2**63, 2**64, -(2**63) - 1, 2**64 - 1, 10**30)))
    return str(rng.randint(max(low, -1000), min(high, 1000)))


def _data(rng: Rng, datatype: str, shape: list[int], nested: bool) -> str:
    count = math.prod(shape) if shape else 1
    if rng.random() < 0.05:  # not the shape's count
        count = max(0, count + rng.choice((-1, 1)))
    elements = [_element(rng, datatype) for _ in range(count)]
    if not nested or len(shape) < 2 or count != math.prod(shape) or not count:
        return "[" + _ws(rng) + ("," + _ws(rng)).join(elements) + _ws(rng) + "]"

    def rows(level: int, items: list[str]) -> str:
        if level == len(shape) - 1:
            return "[" + ",".join(items) + "]"
        step = len(items) // shape[level]
        return (
            "["
            + ",".join(rows(level + 1, items[i : i + step]) for i in range(0, len(items), step))
            + "]"
        )

    return rows(0, elements)


_OPEN_NAMES = ("x", "INPUT0", "é", "a b", "日本", "in.0", "x" * 40, 'a\\"b', "\\u0078", "a\\\\b")


#: Datatypes the fused path leaves to the general decoder (BYTES and BF16 elements are not read
#: as numbers by it), and ones that are not datatypes.
_NOT_TAKEN = ("BYTES", "BF16", "fp32", "FP32 ", "INT128", "")


def _shape_for(rng: Rng, dims: tuple[int, ...] | None) -> list[int]:
    if dims is None:
        r = rng.random()
        if r < 0.05:
            return [1] * rng.choice((4, 5, 6, 7, 20, 63, 64, 65, 97, 98, 99))  # deep data
        return [rng.randint(1, 4) for _ in range(rng.randint(0 if r < 0.1 else 1, 3))]
    shape = [d if d != -1 else rng.randint(1, 4) for d in dims]
    if rng.random() < 0.04 and shape:
        shape[rng.randrange(len(shape))] = rng.choice((0, 5, 2))
    return shape


def _member(rng: Rng, key: str, value: str) -> str:
    return f'"{key}"{_ws(rng)}:{_ws(rng)}{value}'


def _input(rng: Rng, name: str, datatype: str, dims: tuple[int, ...] | None) -> str:
    shape = _shape_for(rng, dims)
    data = _data(rng, datatype if datatype in FIXED_WIDTH else "FP32", shape, rng.random() < 0.5)
    members = [
        _member(rng, "name", f'"{name}"'),
        _member(rng, "datatype", f'"{datatype}"'),
        _member(rng, "shape", "[" + ("," + _ws(rng)).join(map(str, shape)) + "]"),
        _member(rng, "data", data),
    ]
    rng.shuffle(members)
    r = rng.random()
    if r < 0.03:
        members.append(_member(rng, "parameters", rng.choice(("{}", '{"a":1}'))))
    elif r < 0.06:
        members.append(rng.choice(members))  # a key twice
    elif r < 0.08:
        members.pop(rng.randrange(4))
    return "{" + _ws(rng) + ("," + _ws(rng)).join(members) + _ws(rng) + "}"


def _id(rng: Rng) -> str:
    r = rng.random()
    if r < 0.7:
        return (
            '"' + "".join(rng.choice("0123456789abcdef-") for _ in range(rng.randint(0, 12))) + '"'
        )
    return rng.choice(('"a b~!"', '"é"', '"\\u0037"', '"a\\"b"', "7", "null", '""', '"\x7f"'))


def body(rng: Rng, plan: Plan) -> bytes:
    """A small request for ``plan``, mostly one it takes."""
    if plan.inputs is None:
        count = rng.choice((1, 1, 2, 3, 4)) if plan.limits is SMALL else rng.randint(1, 3)
        names = [rng.choice(_OPEN_NAMES) if rng.random() < 0.3 else f"t{i}" for i in range(count)]
        types = DATATYPE_NAMES if rng.random() > rng.noise else [*DATATYPE_NAMES, *_NOT_TAKEN]
        chosen = [(n, rng.choice(types), None) for n in names]
    else:
        chosen = [(n, dt, dims) for n, dt, dims in plan.inputs]
        rng.shuffle(chosen)
        r = rng.random()
        if r < 0.03:
            chosen.pop()
        elif r < 0.06:
            chosen.append(rng.choice(chosen))
        elif r < 0.08:
            n, _, dims = chosen[0]
            chosen[0] = (n, rng.choice(DATATYPE_NAMES), dims)
    inputs = "[" + ",".join(_ws(rng) + _input(rng, *entry) for entry in chosen) + _ws(rng) + "]"
    members = [_member(rng, "inputs", inputs)]
    if rng.random() < 0.5:
        members.append(_member(rng, "id", _id(rng)))
    r = rng.random()
    if r < 0.2:
        members.append(_member(rng, "parameters", "{" + _ws(rng) + "}"))
    elif r < 0.23:
        members.append(_member(rng, "parameters", '{"binary_data_output":true}'))
    elif r < 0.26:
        members.append(_member(rng, "outputs", '[{"name":"y"}]'))
    rng.shuffle(members)
    text = _ws(rng) + "{" + ",".join(_ws(rng) + m for m in members) + _ws(rng) + "}" + _ws(rng)
    return text.encode()


# --------------------------------------------------------------------------- the mutations

_FRAGMENTS = (
    b" ", b",", b":", b"[", b"]", b"{", b"}", b'"', b"\\", b"0", b"1", b"-", b".", b"e", b"\x00",
    b"\xff", b"\xc3", b"\xc3\xa9", b"true", b"null", b"[]", b"{}", b",,", b'""', b"\\u0000",
    b'"id":"z",', b'"parameters":{},', b'"name":"x",', b'"shape":[1],', b'"data":[1],',
)  # fmt: skip
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_STRING = re.compile(rb'"[^"\\]*"')
_KEY = re.compile(rb'"(?:id|inputs|parameters|name|datatype|shape|data)"\s*:')
_NUMBERS = [n.encode() for n in _FLOATS + _INTS] + [
    str(n).encode() for n in (2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), 255, 256, -129, 65535)
]


def _number_edit(rng: Rng, data: bytes) -> bytes:
    spans = [m.span() for m in _NUMBER.finditer(data)]
    if not spans:
        return data
    start, end = rng.choice(spans)
    return data[:start] + rng.choice(_NUMBERS) + data[end:]


def _escape(rng: Rng, data: bytes) -> bytes:
    spans = [m.span() for m in _STRING.finditer(data) if m.end() - m.start() > 2]
    if not spans:
        return data
    start, end = rng.choice(spans)
    at = rng.randrange(start + 1, end - 1)
    r = rng.random()
    if r < 0.5:  # a character written as \u00XX
        return data[:at] + b"\\u%04x" % data[at] + data[at + 1 :]
    return (
        data[:at] + rng.choice((b'\\"', b"\\\\", b"\\/", b"\\n", b"\\", b"\\x", b"\n")) + data[at:]
    )


def _duplicate(rng: Rng, data: bytes) -> bytes:
    """A member written twice (the key and a value of the kind it takes), or an input object
    written twice."""
    keys = list(_KEY.finditer(data))
    if not keys:
        return data
    key = rng.choice(keys)
    name = key.group().split(b'"')[1]
    value = {
        b"id": b'"dup"',
        b"inputs": b"[]",
        b"parameters": b"{}",
        b"name": b'"x"',
        b"datatype": b'"FP32"',
        b"shape": b"[1]",
        b"data": b"[1]",
    }[name]
    if rng.random() < 0.5:
        return data[: key.start()] + b'"%s":%s,' % (name, value) + data[key.start() :]
    if name == b"name":  # the whole input again: from its '{' to the matching '}'
        start = data.rfind(b"{", 0, key.start())
        depth, end = 0, start
        for end in range(start, len(data)):
            depth += {0x7B: 1, 0x7D: -1}.get(data[end], 0)
            if depth == 0:
                break
        return data[: end + 1] + b"," + data[start : end + 1] + data[end + 1 :]
    return data[: key.start()] + b'"%s":%s,' % (name, value) + data[key.start() :]


def _nest(rng: Rng, data: bytes) -> bytes:
    """Brackets added around an array, or a deep array put in place of a value."""
    k = rng.choice((1, 2, 5, 60, 95, 97, 98, 99, 100, 101, 200, 5000))
    at = data.find(b"[", rng.randrange(len(data) + 1))
    if at < 0 or rng.random() < 0.3:
        spans = [m.span() for m in _NUMBER.finditer(data)]
        if not spans:
            return data
        start, end = rng.choice(spans)
        return data[:start] + b"[" * k + data[start:end] + b"]" * k + data[end:]
    depth, end = 0, at
    for end in range(at, len(data)):
        depth += {0x5B: 1, 0x5D: -1}.get(data[end], 0)
        if depth == 0:
            break
    return data[:at] + b"[" * k + data[at : end + 1] + b"]" * k + data[end + 1 :]


def mutate(rng: Rng, data: bytes, other: bytes) -> tuple[str, bytes]:
    """One mutation of ``data`` (``other``: a second body, for splices): its class, the bytes."""
    op = rng.choice((0, 1, 2, 3, 4, 5, 5, 5, 6, 6, 7, 8, 9, 10))  # more of the gentle edits
    at = rng.randint(0, len(data))
    if op == 0 and data:
        at = rng.randrange(len(data))
        return "flip", data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    if op == 1:
        return "insert", data[:at] + rng.choice(_FRAGMENTS) + data[at:]
    if op == 2:
        return "delete", data[:at] + data[at + rng.randint(1, 8) :]
    if op == 3:
        return "truncate", data[: rng.randrange(len(data) + 1)]
    if op == 4:
        return "splice", data[:at] + other[rng.randint(0, len(other)) :]
    if op == 5:
        return "number", _number_edit(rng, data)
    if op == 6:
        spots = [i + 1 for i, c in enumerate(data) if c in b"{}[],:"] or [0]
        spot = rng.choice(spots)
        space = rng.choice((b" ", b"\n", b"\t", b"\r", b"\x0c", b"\x0b", b"\xc2\xa0", b" " * 300))
        return "space", data[:spot] + space + data[spot:]
    if op == 7:
        return "escape", _escape(rng, data)
    if op == 8:
        return "duplicate", _duplicate(rng, data)
    if op == 9:
        return "nest", _nest(rng, data)
    return "replace", data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]


# --------------------------------------------------------------------------- decode checks


def _same_array(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    """Same dtype, shape and bytes (NaN's payload aside)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.tobytes() == b.tobytes():
        return True
    return a.dtype.kind == "f" and bool(np.array_equal(a, b, equal_nan=True))


def _decode(kernel: Callable[..., Any], data: bytes, plan: FusedPlan, side: str) -> Any:
    try:
        return kernel(data, plan)
    except Exception:  # any raise is a failure: the kernels return None instead
        raise AssertionError(f"{side} decode_inputs raised:\n{traceback.format_exc()}") from None


def _buffer(data: bytes, how: int) -> Any:
    """``data`` as bytes (0), a bytearray (1), or a memoryview of exactly its size in a block
    of its own (2: a read past its end is one the sanitizers see; a bytes object has a NUL
    after its data and small ones share pymalloc's arenas)."""
    if how == 1:
        return bytearray(data)
    if how == 2:
        return memoryview(np.frombuffer(data, np.uint8).copy())
    return data


def check_decode(native: Any, pure: Any, plan: Plan, data: bytes, how: int = 0) -> str:
    """The verdict for one body ("fused" taken / "general" only / "neither"); AssertionError
    with the reason on a failure. ``how``: the buffer type given to the kernels (_buffer)."""
    ours = _decode(native.decode_inputs, _buffer(data, how), plan.plan, "native")
    theirs = _decode(pure.decode_inputs, _buffer(data, how), plan.plan, "pure")
    if (ours is None) != (theirs is None):
        raise AssertionError(f"native gave {_brief(ours)}, pure {_brief(theirs)}")
    if ours is not None:
        if ours[1:] != theirs[1:] or list(ours[0]) != list(theirs[0]):
            raise AssertionError(f"native gave {_brief(ours)}, pure {_brief(theirs)}")
        for name, array in ours[0].items():
            if not _same_array(array, theirs[0][name]):
                raise AssertionError(f"input {name!r}: native {array!r}, pure {theirs[0][name]!r}")
    try:
        general = rest.decode_request(data, None, limits=plan.limits)
    except OIPError as exc:
        if ours is not None:
            raise AssertionError(f"the fused path took it, decode_request refused: {exc}") from None
        return "neither"
    except Exception as exc:  # the general decoder's own bug, but one all the same
        raise AssertionError(f"decode_request raised {type(exc).__name__}: {exc}") from None
    if ours is None:
        return "general"
    arrays, request_id, requested, binary = ours
    asked = None if general.outputs is None else [o.name for o in general.outputs]
    if requested != asked or binary != rest.binary_outputs(general):
        raise AssertionError(f"fused asked {requested!r} binary {binary!r}; decode_request "
                             f"{asked!r} {rest.binary_outputs(general)!r}")  # fmt: skip
    if request_id != general.id or list(arrays) != [t.name for t in general.inputs]:
        raise AssertionError(f"fused {_brief(ours)}, decode_request id {general.id!r}, inputs "
                             f"{[t.name for t in general.inputs]}")  # fmt: skip
    transport = {"binary_data_output", "binary_data"}
    if (
        set(general.parameters) - transport
        or any(set(o.parameters) - transport for o in general.outputs or ())
        or any(t.parameters for t in general.inputs)
    ):
        raise AssertionError(f"the fused path dropped parameters: {general}")
    declared = {n: dt for n, dt, _ in plan.inputs or ()}
    for tensor in general.inputs:
        expected = np.asarray(tensor.data).reshape(tensor.shape)
        if not _same_array(arrays[tensor.name], expected):
            raise AssertionError(
                f"input {tensor.name!r}: fused {arrays[tensor.name]!r}, "
                f"decode_request {tensor.datatype} {expected!r}"
            )
        if declared.get(tensor.name, tensor.datatype) != tensor.datatype:
            raise AssertionError(f"input {tensor.name!r} is {tensor.datatype}, not the declared")
    return "fused"


def _brief(got: Any) -> str:
    if got is None:
        return "None"
    arrays, request_id = got[:2]
    return f"id {request_id!r}, " + ", ".join(
        f"{n!r}: {a.dtype}{list(a.shape)}" for n, a in arrays.items()
    )


# --------------------------------------------------------------------------- encode cases

_OUT_NAMES = ("y", "OUTPUT0", "é", "日本", 'a"b', "a\\b", "a\nb", "\x7f", "\ud800", "a/b", "")
_IDS = (None, None, "7", "", "abc-123", 'a"b', "a\\b", "\x01", "é", "\x7f", "~ !", "\ud800")


def _values(rng: Rng, dtype: np.dtype[Any], shape: tuple[int, ...]) -> Any:
    count = math.prod(shape)
    if dtype.kind == "b":
        if rng.random() < 0.03:  # bytes other than 0 and 1 (a view of other data)
            return np.frombuffer(rng.randbytes(count), dtype).reshape(shape).copy()
        return np.array([rng.random() < 0.5 for _ in range(count)], dtype).reshape(shape)
    if rng.random() < 0.5:  # any bits: NaN payloads, inf, subnormals, the extremes
        raw = np.frombuffer(rng.randbytes(count * dtype.itemsize), dtype)
        return raw.reshape(shape).copy()
    if dtype.kind == "f":
        pool = (0.0, -0.0, 1.5, -2.0, np.nan, -np.nan, np.inf, -np.inf, 1e-7, 3e38, 65504.0)
        with np.errstate(over="ignore"):  # 3e38 as FP16: inf
            return np.array([rng.choice(pool) for _ in range(count)], dtype).reshape(shape)
    info = np.iinfo(dtype)
    pool_i = (int(info.min), int(info.max), 0, 1, int(info.max) // 2)
    return np.array([rng.choice(pool_i) for _ in range(count)], dtype).reshape(shape)


def _output(rng: Rng, datatype: str, ndim: int | None = None) -> Any:
    """An array of ``datatype``'s dtype, sometimes another, strided, unaligned, 0-d, empty or
    not an ndarray."""
    dtype = np.dtype(DATATYPES[datatype].numpy_dtype)
    r = rng.random()
    if r < 0.05:
        dtype = np.dtype(DATATYPES[rng.choice(DATATYPE_NAMES)].numpy_dtype)
    elif r < 0.1 and dtype.itemsize > 1:
        dtype = dtype.newbyteorder()
    ndim = rng.randint(0, 3) if ndim is None else ndim
    shape = tuple(rng.randint(0 if rng.random() < 0.1 else 1, 4) for _ in range(ndim))
    array = _values(rng, dtype, tuple(s * 2 for s in shape) if rng.random() < 0.2 else shape)
    if array.shape != shape:
        array = array[tuple(slice(None, None, 2) for _ in shape)]  # strided
    if rng.random() < 0.15 and array.ndim > 1:
        array = array.T
    if rng.random() < 0.05 and dtype.itemsize > 1:  # one byte off alignment
        block = np.empty(array.nbytes + 1, np.uint8)[1:].view(dtype).reshape(array.shape)
        block[...] = array
        array = block
    r = rng.random()
    if r < 0.02:
        return array.tolist()
    if r < 0.04:
        return array.view(_Sub)
    if r < 0.05:
        return np.float32(1.5)  # a numpy scalar, not an ndarray
    return array


class _Sub(np.ndarray):  # type: ignore[type-arg]
    pass


def outputs_for(rng: Rng, plan: Plan) -> tuple[str | None, dict[str, Any]]:
    request_id = rng.choice(_IDS)
    if plan.outputs is None:
        names = rng.sample(_OUT_NAMES, rng.randint(0, 3))
        if rng.random() < 0.7:
            names = [n for n in names if n.isalnum()] or ["y"]
        return request_id, {n: _output(rng, rng.choice(DATATYPE_NAMES)) for n in names}
    chosen = rng.sample(plan.outputs, rng.randint(1, len(plan.outputs)))
    # Of the declared number of dimensions, or now and then another.
    outputs = {
        n: _output(rng, dt, len(dims) if rng.random() < 0.9 else None) for n, dt, dims in chosen
    }
    if rng.random() < 0.05:
        outputs["undeclared"] = _output(rng, "FP32")
    return request_id, outputs


def check_encode(native: Any, pure: Any, plan: Plan, request_id: Any, outputs: Any) -> str:
    got = []
    for side, impl in (("native", native), ("pure", pure)):
        try:
            got.append(impl.encode_outputs(plan.plan, request_id, outputs))
        except Exception:
            raise AssertionError(
                f"{side} encode_outputs raised:\n{traceback.format_exc()}"
            ) from None
    if got[0] != got[1]:
        raise AssertionError(f"native {got[0]!r}\npure   {got[1]!r}")
    if got[0] is None:
        return "encode None"
    declared = {n: dt for n, dt, _ in plan.outputs or ()}
    response = InferResponse(
        plan.model[0],
        [Tensor(n, declared.get(n) or _any_output(a), a.shape, a) for n, a in outputs.items()],
        id=request_id,
        model_version=plan.model[1],
    )
    parts, _ = rest.encode_response_parts(response)
    expected = b"".join(parts)
    if got[0] != expected:
        raise AssertionError(f"fused {got[0]!r}\nrest  {expected!r}")
    return "encode fused"


def _any_output(array: np.ndarray[Any, Any]) -> str:
    return ANY_OUTPUT[array.dtype]


# --------------------------------------------------------------------------- the run


def case(seed: int, index: int) -> tuple[str, Plan, Any]:
    """Case ``index`` of ``seed``: ("decode"/its mutation classes, plan, body) or ("encode",
    plan, (id, outputs)); the same for the same arguments."""
    rng = Rng(seed * 1_000_003 + index)
    rng.noise = rng.choice((0.0, 0.0, 0.1, 0.3))
    plan = rng.choice(PLANS)
    if rng.random() < 0.2:
        return "encode", plan, outputs_for(rng, plan)
    data = body(rng, plan)
    kinds = []
    for _ in range(0 if rng.random() < 0.3 else rng.choice((1, 1, 1, 2, 3))):
        other = body(rng, rng.choice(PLANS)) if rng.random() < 0.5 else data
        kind, data = mutate(rng, data, other)
        kinds.append(kind)
    how = rng.choice((0, 0, 1, 2))
    return "decode " + ("+".join(sorted(kinds)) or "valid"), plan, (data, how)


def check(native: Any, pure: Any, kind: str, plan: Plan, payload: Any) -> str:
    if kind == "encode":
        return check_encode(native, pure, plan, *payload)
    return check_decode(native, pure, plan, *payload)


def reproducer(seed: int, index: int, kind: str, plan: Plan, payload: Any) -> str:
    if kind == "encode":
        request_id, outputs = payload
        shown = {
            n: (
                a
                if not isinstance(a, np.ndarray)
                else f"{a.dtype.str} {a.shape} {a.strides} aligned={a.flags.aligned} {a!r}"
            )
            for n, a in outputs.items()
        }
        what = f"encode_outputs(plan, {request_id!r}, {shown})"
    else:
        data, how = payload
        what = f"decode_inputs({('', 'bytearray', 'an exact buffer of ')[how]}{data!r}, plan)"
    where = f"case {index} of seed {seed}, plan {plan.label} {plan.inputs} {plan.outputs}"
    return f"{where} {plan.limits}:\n  {what}"


#: Failures already reported, each with its xfail test in tests/kernels/test_fusedrest_fuzz.py:
#: a substring of the failure's text -> its name. A run counts these and goes on (they are
#: printed once each at the end); any other failure ends it.
KNOWN: dict[str, str] = {}


def run(
    count: int,
    seed: int,
    native: Any,
    pure: Any,
    *,
    start: int = 0,
    seconds: float | None = None,
    report: Callable[[str], None] | None = None,
) -> Counter[str]:
    """Cases ``start`` to ``start + count`` of ``seed`` (fewer if ``seconds`` run out first):
    the count per verdict (and per mutation class); AssertionError with a reproducer on the
    first failure."""
    tally: Counter[str] = Counter()
    began = last = time.perf_counter()
    for index in range(start, start + count):
        if seconds is not None and time.perf_counter() - began > seconds:
            break
        kind, plan, payload = case(seed, index)
        try:
            verdict = check(native, pure, kind, plan, payload)
        except AssertionError as exc:
            text = f"{reproducer(seed, index, kind, plan, payload)}\n{exc}"
            known = [name for key, name in KNOWN.items() if key in str(exc)]
            if not known:
                raise AssertionError(text) from None
            verdict = known[0]
            if not tally[verdict] and report:
                report(f"{verdict}, first: {text}")
        tally[verdict] += 1
        if kind != "encode":
            tally[f"{kind} {verdict}"] += 1
        if report and time.perf_counter() - last > 30:
            last = time.perf_counter()
            done = index - start + 1
            counts = ", ".join(f"{v} {tally[v]}" for v in ("fused", "general", "neither"))
            report(f"{done} cases, {done / (last - began):.0f}/s: decode {counts}; encode "
                   f"fused {tally['encode fused']}, None {tally['encode None']}")  # fmt: skip
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="the first case's index")
    parser.add_argument("--seconds", type=float, help="stop after this long")
    parser.add_argument("--case", type=int, help="replay this case and print it")
    args = parser.parse_args()
    native, pure = kernels.load("native"), kernels.load("pure")
    if args.case is not None:
        kind, plan, payload = case(args.seed, args.case)
        print(reproducer(args.seed, args.case, kind, plan, payload))
        try:
            print(check(native, pure, kind, plan, payload))
        except AssertionError as exc:
            print(f"FAILED: {exc}")
            return 1
        return 0
    began = time.perf_counter()
    try:
        tally = run(
            args.count, args.seed, native, pure, start=args.start, seconds=args.seconds,
            report=lambda line: print(line, flush=True),
        )  # fmt: skip
    except AssertionError as exc:
        print(f"FAILED: {exc}")
        return 1
    elapsed = time.perf_counter() - began
    for verdict, n in sorted(tally.items()):
        print(f"{n:9d} {verdict}")
    done = sum(n for verdict, n in tally.items() if not verdict.startswith("decode "))
    print(f"{done} cases (seed {args.seed}, from {args.start}) in {elapsed:.0f} s, "
          f"{done / elapsed:.0f}/s; new failures: 0")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
