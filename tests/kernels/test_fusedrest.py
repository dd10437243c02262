"""The fused REST kernels (prototype, issue 45) on both implementations: what they take gives
what rest.decode_request / rest.encode_response give, byte for byte; what they do not take
gives None (the general codec's work)."""

from __future__ import annotations

import gc
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from oipcodec import rest
from oipcodec._shared.fusedrest import FIXED_WIDTH, fused_plan
from oipcodec.datatypes import DATATYPES
from oipcodec.limits import Limits
from oipcodec.types import InferRequest, InferResponse, RequestedOutput, Tensor

# Names orjson writes as they are (no escapes), non-ASCII included.
names = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters='"\\'),
    min_size=1,
    max_size=6,
)
plain_ids = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E).filter(lambda c: c not in '"\\'),
    max_size=8,
)


@st.composite
def tensors(draw: Any, count: int) -> list[tuple[str, str, np.ndarray, tuple[int, ...]]]:
    """(name, datatype, array, declared dims) per tensor, names distinct."""
    chosen = draw(st.lists(names, min_size=count, max_size=count, unique=True))
    out = []
    for name in chosen:
        datatype = draw(st.sampled_from(sorted(FIXED_WIDTH)))
        shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
        array = draw(hnp.arrays(DATATYPES[datatype].numpy_dtype, shape))
        dims = tuple(-1 if draw(st.booleans()) else d for d in shape)
        out.append((name, datatype, array, dims))
    return out


def spaced(body: bytes, indent: int | None) -> bytes:
    """The same JSON with white space between its tokens (the numbers' text unchanged)."""
    spread = json.dumps(
        json.loads(body), indent=indent, separators=(" , ", " : "), ensure_ascii=False
    )
    return spread.encode()


def _same_inputs(got: Any, expected: InferRequest) -> None:
    """decode_inputs' arrays and id are decode_request's inputs and id."""
    arrays, got_id, _, _ = got
    assert got_id == expected.id
    assert list(arrays) == [t.name for t in expected.inputs]
    for tensor in expected.inputs:
        array = arrays[tensor.name]
        assert array.dtype == tensor.data.dtype
        assert array.shape == tensor.shape
        assert array.tobytes() == tensor.data.tobytes()


@settings(max_examples=60, deadline=None)
@given(
    given_inputs=st.integers(1, 3).flatmap(tensors),
    request_id=st.none() | plain_ids,
    nested=st.booleans(),
    indent=st.sampled_from([None, -1, 0, 2]),
    declared=st.booleans(),
)
def test_decode_gives_what_decode_request_gives(
    impl, given_inputs, request_id, nested, indent, declared
) -> None:
    inputs = [(n, dt, dims) for n, dt, _, dims in given_inputs] if declared else None
    plan = fused_plan("m", "1", inputs, [])
    assert plan is not None
    request = InferRequest(
        [Tensor(n, dt, a.shape, a) for n, dt, a, _ in given_inputs], id=request_id
    )
    body, _ = rest.encode_request(request, binary=False, nested=nested)
    if indent != -1:
        body = spaced(body, indent)
    expected = rest.decode_request(body, model_name="m", kernels=impl)
    got = impl.decode_inputs(body, plan)
    assert got is not None, body
    _same_inputs(got, expected)


BASE = (
    b'{"id":"7","inputs":[{"name":"x","shape":[1,3],"datatype":"FP32","data":[1,2.5,3]},'
    b'{"name":"k","shape":[2],"datatype":"INT64","data":[4,5]}]}'
)
PLAN = fused_plan("m", "1", [("x", "FP32", (1, -1)), ("k", "INT64", (2,))], [])


def test_the_base_body_is_taken(impl) -> None:
    got = impl.decode_inputs(BASE, PLAN)
    assert got is not None
    assert got[1] == "7"
    assert got[0]["x"].tolist() == [[1.0, 2.5, 3.0]]
    assert got[0]["k"].dtype == np.int64


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'{"id"', b'{"parameters":{"a":1},"id"'),  # request parameters
        (b'"id":"7",', b'"outputs":[{"name":"y"}],'),  # requested outputs
        (b'"id":"7",', b'"id":"7","id":"8",'),  # a key twice
        (b'"id":"7"', b'"id":"\xc3\xa9"'),  # an id that is not printable ASCII
        (b'"id":"7"', b'"id":"\\u0037"'),  # an escape
        (b'"id":"7"', b'"id":7'),  # not a string
        (b'"id":"7"', b'"other":"7"'),  # a member the fused path does not know
        (b'{"name":"x"', b'{"n\\u0061me":"x"'),  # a key written with an escape
        (b'{"name":"x"', b'{"name":"x","parameters":{}'),  # input parameters
        (b'"name":"x"', b'"name":"z"'),  # an undeclared input
        (b'"name":"k"', b'"name":"x"'),  # an input twice
        (b',{"name":"k","shape":[2],"datatype":"INT64","data":[4,5]}', b""),  # one missing
        (b'"datatype":"FP32"', b'"datatype":"FP64"'),  # not the declared datatype
        (b'"shape":[2]', b'"shape":[3]'),  # not the declared shape
        (b'"shape":[1,3]', b'"shape":[01,3]'),  # a number JSON does not allow
        (b'"shape":[1,3]', b'"shape":[1.0,3]'),  # a float dimension
        (b'"shape":[1,3]', b'"shape":[1,-3]'),  # a negative one
        (b'"shape":[2]', b'"shape":[0]'),  # a zero dimension
        (b"[1,2.5,3]", b'[1,"2.5",3]'),  # a string element
        (b"[1,2.5,3]", b"[1,2.5]"),  # too few elements
        (b"[1,2.5,3]", b"[1,2.5,x]"),  # not a number
        (b"[4,5]", b"[4,5.5]"),  # not an integer
        (b"]}", b"]} x"),  # text after the object
        (b"]}", b"]"),  # the object not closed
    ],
)
def test_what_is_not_taken_gives_none(impl, old: bytes, new: bytes) -> None:
    assert old in BASE
    body = BASE.replace(old, new, 1) if old != b"]}" else BASE[: -len(old)] + new
    assert impl.decode_inputs(body, PLAN) is None


def test_the_limits_give_none(impl) -> None:
    for limits in (Limits(max_tensor_elements=2), Limits(max_request_elements=4)):
        plan = fused_plan("m", "1", [("x", "FP32", (1, -1)), ("k", "INT64", (2,))], [], limits)
        assert impl.decode_inputs(BASE, plan) is None
    assert impl.decode_inputs(BASE, PLAN) is not None


@settings(max_examples=60, deadline=None)
@given(
    given_outputs=st.integers(1, 3).flatmap(tensors),
    request_id=st.none() | plain_ids,
    version=st.sampled_from(["1", "v é"]),
    transpose=st.booleans(),
    declared=st.booleans(),
)
def test_encode_gives_what_encode_response_gives(
    impl, given_outputs, request_id, version, transpose, declared
) -> None:
    outputs = (
        [(n, dt, dims[::-1] if transpose else dims, False) for n, dt, _, dims in given_outputs]
        if declared
        else None
    )
    plan = fused_plan("m é", version, [], outputs)
    assert plan is not None
    arrays = {n: (a.T if transpose else a) for n, _, a, _ in given_outputs}
    response = InferResponse(
        "m é",
        [Tensor(n, dt, arrays[n].shape, arrays[n]) for n, dt, _, _ in given_outputs],
        id=request_id,
        model_version=version,
    )
    expected, _ = rest.encode_response(response, kernels=impl)
    assert impl.encode_outputs(plan, request_id, arrays) == expected


class _Sub(np.ndarray):
    pass


def test_what_encode_does_not_take_gives_none(impl) -> None:
    plan = fused_plan("m", "1", [], [("y", "FP32", (1, -1), False), ("o", "INT8", (1,), True)])
    y = np.ones((1, 2), np.float32)
    o = np.ones(1, np.int8)
    assert impl.encode_outputs(plan, None, {"y": y}) is not None  # "o" is optional
    assert impl.encode_outputs(plan, None, {"o": o, "y": y}) is not None
    assert impl.encode_outputs(plan, None, {"o": o}) is None  # "y" is missing
    assert impl.encode_outputs(plan, None, {"y": y, "z": y}) is None  # undeclared
    assert impl.encode_outputs(plan, None, {"y": y.reshape(2, 1)}) is None  # shape
    assert impl.encode_outputs(plan, None, {"y": y[0]}) is None  # dims
    assert impl.encode_outputs(plan, None, [("y", y)]) is None  # not a dict
    assert impl.encode_outputs(plan, None, {np.str_("y"): y}) is None  # a str subclass
    small = fused_plan("m", "1", [], [("y", "FP32", (1, -1), False)], max_output_bytes=7)
    assert small is not None
    assert impl.encode_outputs(small, None, {"y": y[:, :1]}) is not None
    assert impl.encode_outputs(small, None, {"y": y}) is None  # 8 bytes: the general encoder's
    assert impl.encode_outputs(plan, None, {"y": y.astype(np.float64)}) is None  # dtype
    assert impl.encode_outputs(plan, None, {"y": y.astype(">f4")}) is None  # byte order
    assert impl.encode_outputs(plan, None, {"y": y.view(_Sub)}) is None  # a subclass
    assert impl.encode_outputs(plan, None, {"y": [1.0, 2.0]}) is None  # not an array
    for request_id in ('a"b', "a\\b", "\x01", "é"):  # ids orjson escapes or leaves UTF-8
        assert impl.encode_outputs(plan, request_id, {"y": y}) is None


OPEN = fused_plan("m", "1", None, None)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'"datatype":"FP32"', b'"datatype":"BYTES"'),  # not a fixed-width datatype
        (b'"datatype":"FP32"', b'"datatype":"fp32"'),  # not a datatype
        (b'"name":"x"', b'"name":"\xff"'),  # not UTF-8
        (b'"name":"x"', b'"name":"\\u0078"'),  # an escape
        (b'"name":"k"', b'"name":"x"'),  # an input twice
    ],
)
def test_what_an_open_plan_does_not_take_gives_none(impl, old: bytes, new: bytes) -> None:
    assert impl.decode_inputs(BASE, OPEN) is not None
    body = BASE.replace(old, new, 1)
    assert body != BASE
    assert impl.decode_inputs(body, OPEN) is None


def test_what_an_open_plan_does_not_encode_gives_none(impl) -> None:
    y = np.ones((1, 2), np.float32)
    assert impl.encode_outputs(OPEN, None, {"y é": y}) is not None
    for name in ('a"b', "a\\b", "a\nb", "\ud800"):  # escaped by orjson, or not UTF-8
        assert impl.encode_outputs(OPEN, None, {name: y}) is None
    assert impl.encode_outputs(OPEN, None, {"y": y.astype(">f4")}) is None  # byte order
    assert impl.encode_outputs(OPEN, None, {"y": np.array([b"a"], object)}) is None  # BYTES


def test_a_plan_only_for_fixed_width_datatypes() -> None:
    assert fused_plan("m", "1", [("x", "BYTES", (1,))], []) is None
    assert fused_plan("m", "1", [], [("y", "BF16", (1,), False)]) is None


@settings(max_examples=300, deadline=None)
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, len(BASE)), st.integers(0, 2), st.sampled_from(b' ",:[]{}01-.e\\x')
        ),
        min_size=1,
        max_size=3,
    ),
    declared=st.booleans(),
)
def test_a_mangled_body_is_taken_only_as_decode_request_takes_it(impl, edits, declared) -> None:
    """What the fused decode takes, the general one takes too, with the same arrays: byte
    edits (insert, replace, delete) of a good body."""
    body = bytearray(BASE)
    for at, how, byte in edits:
        at = min(at, len(body))
        if how == 0:
            body[at:at] = bytes([byte])
        elif at < len(body):
            body[at : at + 1] = b"" if how == 1 else bytes([byte])
    got = impl.decode_inputs(body, PLAN if declared else OPEN)
    if got is None:
        return
    expected = rest.decode_request(bytes(body), model_name="m", kernels=impl)
    assert got[1] == expected.id
    assert list(got[0]) == [t.name for t in expected.inputs]
    for tensor in expected.inputs:
        assert tensor.datatype == ("FP32" if tensor.name == "x" else "INT64") or not declared
        assert got[0][tensor.name].shape == tensor.shape
        assert got[0][tensor.name].tobytes() == tensor.data.tobytes()


# ------------------------------------------------------------------ the binary data extension


@settings(max_examples=60, deadline=None)
@given(
    given_inputs=st.integers(1, 3).flatmap(tensors),
    in_binary=st.lists(st.booleans(), min_size=3, max_size=3),
    request_id=st.none() | plain_ids,
    asked=st.sampled_from(["none", "all", "listed"]),
    flags=st.lists(st.sampled_from([None, True, False]), min_size=3, max_size=3),
    declared=st.booleans(),
)
def test_a_binary_body_gives_what_decode_request_gives(
    impl, given_inputs, in_binary, request_id, asked, flags, declared
) -> None:
    """Inputs in binary or JSON, requested outputs (all in binary, or listed with or without
    binary_data): the arrays as decode_request's, read-only views of the body, and the
    outputs as binary_outputs reads them."""
    inputs = [(n, dt, dims) for n, dt, _, dims in given_inputs] if declared else None
    names = [n for n, _, _, _ in given_inputs]
    plan = fused_plan("m", "1", inputs, None)
    assert plan is not None
    binary = {n for n, b in zip(names, in_binary, strict=False) if b}
    parameters = {"binary_data_output": True} if asked == "all" else {}
    requested = None
    if asked == "listed":
        requested = [
            RequestedOutput(n, {} if f is None else {"binary_data": f})
            for n, f in zip(names, flags, strict=False)
        ]
    request = InferRequest(
        [Tensor(n, dt, a.shape, a) for n, dt, a, _ in given_inputs],
        id=request_id,
        outputs=requested,
        parameters=parameters,
    )
    body, header_length = rest.encode_request(request, binary=binary)
    if header_length is None:  # nothing in binary: the JSON head is the whole body
        header_length = len(body)
    body = bytearray(body)
    expected = rest.decode_request(body, header_length, model_name="m", kernels=impl)
    got = impl.decode_inputs(body, plan, header_length)
    assert got is not None, body
    _same_inputs(got, expected)
    arrays, _, got_requested, got_binary = got
    for name, array in arrays.items():
        assert array.flags.writeable == (name not in binary)
    assert got_requested == (None if requested is None else names)
    assert got_binary == rest.binary_outputs(expected)
    assert type(got_binary) is type(rest.binary_outputs(expected))


BINARY_HEAD = (
    b'{"id":"7","inputs":[{"name":"x","shape":[1,3],"datatype":"FP32",'
    b'"parameters":{"binary_data_size":12}},'
    b'{"name":"k","shape":[2],"datatype":"INT64","data":[4,5]}],'
    b'"outputs":[{"name":"y","parameters":{"binary_data":true}}]}'
)
BINARY_BODY = BINARY_HEAD + np.array([1, 2.5, 3], np.float32).tobytes()
BINARY_PLAN = fused_plan(
    "m", "1", [("x", "FP32", (1, -1)), ("k", "INT64", (2,))], [("y", "FP32", (-1,), False)]
)


@pytest.mark.parametrize(
    ("old", "new", "length"),
    [
        (b"", b"", len(BINARY_HEAD) + 1),  # the JSON head ends in the binary part
        (b"", b"", len(BINARY_BODY) + 1),  # a header length past the body
        (b"", b"", 0),  # a raw binary request
        (b"", b"", -1),  # binary_data_size without the header
        (b'"binary_data_size":12', b'"binary_data_size":8', None),  # not the shape's bytes
        (b'"binary_data_size":12', b'"binary_data_size":16', None),  # more than is there
        (b'"binary_data_size":12', b'"binary_data_size":true', None),  # not a number
        (b'"binary_data_size":12', b'"binary_data_size":12,"a":1', None),  # another one
        (b'"binary_data_size":12}', b'"binary_data_size":12},"data":[1,2,3]', None),  # both
        (b'"data":[4,5]', b'"parameters":{},"data":[4,5]', None),  # parameters with data
        (b'"binary_data":true', b'"binary_data":1', None),  # not a boolean
        (b'"binary_data":true', b'"classification":2', None),  # another output parameter
        (b'{"name":"y",', b'{"name":"z",', None),  # an undeclared output
        (b'"parameters":{"binary_data":true}', b'"name":"y"', None),  # an output twice
        (b'{"name":"y","parameters":{"binary_data":true}}', b"", None),  # no output listed
        (b'"id":"7"', b'"id":"7","parameters":{"binary_data_output":1}', None),  # not boolean
        (b'"id":"7"', b'"id":"7","parameters":{"binary_data":true}', None),  # transport
    ],
)
def test_what_the_binary_decode_does_not_take_gives_none(
    impl, old: bytes, new: bytes, length: int | None
) -> None:
    assert impl.decode_inputs(BINARY_BODY, BINARY_PLAN, len(BINARY_HEAD)) is not None
    head = BINARY_HEAD.replace(old, new, 1)
    assert (head != BINARY_HEAD) == (length is None)
    body = head + BINARY_BODY[len(BINARY_HEAD) :]
    assert impl.decode_inputs(body, BINARY_PLAN, len(head) if length is None else length) is None


def test_binary_parts_that_do_not_fill_the_body_give_none(impl) -> None:
    length = len(BINARY_HEAD)
    assert impl.decode_inputs(BINARY_BODY + b"\0", BINARY_PLAN, length) is None  # trailing
    assert impl.decode_inputs(BINARY_BODY[:-1], BINARY_PLAN, length) is None  # short
    head = BINARY_HEAD.replace(b'"FP32"', b'"BOOL"').replace(b"12}", b"3}")
    plan = fused_plan("m", "1", [("x", "BOOL", (1, -1)), ("k", "INT64", (2,))], None)
    assert impl.decode_inputs(head + b"\1\0\1", plan, len(head)) is not None
    assert impl.decode_inputs(head + b"\1\2\1", plan, len(head)) is None  # a BOOL byte of 2


@settings(max_examples=60, deadline=None)
@given(
    given_outputs=st.integers(1, 3).flatmap(tensors),
    request_id=st.none() | plain_ids,
    which=st.lists(st.booleans(), min_size=3, max_size=3),
    everything=st.booleans(),
    declared=st.booleans(),
)
def test_binary_encode_gives_what_encode_response_parts_gives(
    impl, given_outputs, request_id, which, everything, declared
) -> None:
    outputs = [(n, dt, dims, False) for n, dt, _, dims in given_outputs] if declared else None
    plan = fused_plan("m", "1", [], outputs)
    assert plan is not None
    arrays = {n: a for n, _, a, _ in given_outputs}
    binary: bool | set[str] = True
    if not everything:
        binary = {n for n, b in zip(arrays, which, strict=False) if b}
    response = InferResponse(
        "m",
        [Tensor(n, dt, a.shape, a) for n, dt, a, _ in given_outputs],
        id=request_id,
        model_version="1",
    )
    parts, header_length = rest.encode_response_parts(response, binary=binary, kernels=impl)
    got = impl.encode_outputs(plan, request_id, arrays, binary)
    if header_length is None:
        assert got == b"".join(parts)
    else:
        assert got == (b"".join(parts), header_length)


def test_binary_inputs_are_views_of_the_body_until_released(impl) -> None:
    """The binary inputs hold the body (a model may keep them); nothing else does after."""
    body = bytearray(BINARY_BODY)
    got = impl.decode_inputs(body, BINARY_PLAN, len(BINARY_HEAD))
    assert got is not None
    with pytest.raises(BufferError):
        body.extend(b"x")  # exported to the view of x
    assert got[0]["x"].tolist() == [[1.0, 2.5, 3.0]]
    del got
    gc.collect()
    body.extend(b"x")
    assert impl.decode_inputs(body, BINARY_PLAN, len(BINARY_HEAD)) is None  # a byte after
    gc.collect()
    body.extend(b"x")
