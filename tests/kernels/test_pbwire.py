"""The protobuf wire kernel (read_infer_message / write_infer_message) on both implementations,
against the official protobuf runtime (the generated classes of open_inference_grpc.proto)."""

from __future__ import annotations

import math
import random
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oipcodec.errors import DecodeError, EncodeError, LimitError
from oipcodec.limits import Limits
from oipcodec.proto import open_inference_grpc_pb2 as pb

CONTENTS = (
    "bool_contents",
    "int_contents",
    "int64_contents",
    "uint_contents",
    "uint64_contents",
    "fp32_contents",
    "fp64_contents",
    "bytes_contents",
)
DTYPES = {
    "bool_contents": np.bool_,
    "int_contents": np.int32,
    "int64_contents": np.int64,
    "uint_contents": np.uint32,
    "uint64_contents": np.uint64,
    "fp32_contents": "<f4",
    "fp64_contents": "<f8",
}


# ---------------------------------------------------------------------------------------------
# Helpers: protobuf bytes by hand, and the reader's result next to the runtime's message.


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def len_field(field: int, payload: bytes) -> bytes:
    return tag(field, 2) + varint(len(payload)) + payload


def param_value(p: Any) -> Any:
    which = p.WhichOneof("parameter_choice")
    return getattr(p, which)


def payload_values(name: str, payload: Any) -> list[Any]:
    if name in ("fp32_contents", "fp64_contents"):
        assert isinstance(payload, memoryview) and payload.readonly
        return np.frombuffer(payload, DTYPES[name]).tolist()
    assert isinstance(payload, np.ndarray)
    if name == "bytes_contents":
        assert payload.dtype == object
        return list(payload)
    assert payload.dtype == np.dtype(DTYPES[name]), (name, payload.dtype)
    return payload.tolist()


def same_floats(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(
        struct.pack("<d", x) == struct.pack("<d", y) or (math.isnan(x) and math.isnan(y))
        for x, y in zip(a, b, strict=False)
    )


def assert_matches(result: tuple, message: Any, kind: str) -> None:
    """The reader's result carries exactly what the runtime parsed into ``message``."""
    name, version, id_, params, tensors, requested, raw = result
    assert (name, version, id_) == (message.model_name, message.model_version, message.id)
    assert_params(params, message.parameters)
    expected = message.inputs if kind == "request" else message.outputs
    assert len(tensors) == len(expected)
    for got, want in zip(tensors, expected, strict=False):
        t_name, datatype, shape, t_params, contents, _, _ = got
        assert (t_name, datatype, list(shape)) == (want.name, want.datatype, list(want.shape))
        assert_params(t_params, want.parameters)
        if not want.HasField("contents"):
            assert contents is None
            continue
        assert contents is not None
        for field in CONTENTS:
            values = list(getattr(want.contents, field))
            ours = payload_values(field, contents[field]) if field in contents else []
            if field in ("fp32_contents", "fp64_contents"):
                assert same_floats(ours, values), field
            else:
                assert ours == values, field
    if kind == "request":
        assert [(r[0]) for r in requested] == [o.name for o in message.outputs]
        for (_, r_params), o in zip(requested, message.outputs, strict=False):
            assert_params(r_params, o.parameters)
        assert [bytes(v) for v in raw] == list(message.raw_input_contents)
    else:
        assert [bytes(v) for v in raw] == list(message.raw_output_contents)
    assert all(v.readonly for v in raw)


def assert_params(ours: dict, theirs: Any) -> None:
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        want = param_value(value)
        got = ours[key]
        assert type(got) is type(want), (key, got, want)
        if isinstance(want, float):
            assert struct.pack("<d", got) == struct.pack("<d", want)
        else:
            assert got == want


# ---------------------------------------------------------------------------------------------
# Hand-written cases


def sample_request() -> Any:
    r = pb.ModelInferRequest(model_name="model", model_version="2", id="req-1")
    r.parameters["int"].int64_param = -(2**63)
    r.parameters["uint"].uint64_param = 2**64 - 1
    r.parameters["double"].double_param = -0.0
    r.parameters["bool"].bool_param = False
    r.parameters["str"].string_param = "wörld"
    t = r.inputs.add(name="a", datatype="FP32", shape=[2, 2])
    t.contents.fp32_contents.extend([1.5, -0.0, float("inf"), float("nan")])
    t.parameters["binary_data_size"].int64_param = 16
    r.inputs.add(name="b", datatype="INT32", shape=[3]).contents.int_contents.extend(
        [-1, 0, 2**31 - 1]
    )
    r.inputs.add(name="c", datatype="BYTES", shape=[2]).contents.bytes_contents.extend([b"x", b""])
    r.inputs.add(name="d", datatype="BOOL", shape=[2]).contents.bool_contents.extend([True, False])
    r.inputs.add(name="e", datatype="UINT64", shape=[1]).contents.uint64_contents.append(2**64 - 1)
    r.inputs.add(name="f", datatype="FP64", shape=[1]).contents.fp64_contents.append(1e-310)
    r.inputs.add(name="g", datatype="UINT32", shape=[1]).contents.uint_contents.append(2**32 - 1)
    r.inputs.add(name="h", datatype="INT64", shape=[1]).contents.int64_contents.append(-5)
    o = r.outputs.add(name="out")
    o.parameters["binary_data"].bool_param = True
    return r


def test_reads_runtime_request(impl) -> None:
    message = sample_request()
    data = message.SerializeToString()
    for buffer in (data, bytearray(data), memoryview(data)):
        assert_matches(impl.read_infer_message(buffer, "request"), message, "request")


def test_fp32_contents_is_a_view_of_the_message(impl) -> None:
    message = sample_request()
    data = bytearray(message.SerializeToString())
    contents = impl.read_infer_message(data)[4][0][4]
    view = contents["fp32_contents"]
    assert view.readonly
    assert np.shares_memory(np.frombuffer(view, np.uint8), np.frombuffer(data, np.uint8))


def test_raw_contents_are_views(impl) -> None:
    r = pb.ModelInferResponse(model_name="m")
    r.outputs.add(name="x", datatype="FP32", shape=[3])
    r.raw_output_contents.append(np.arange(3, dtype="<f4").tobytes())
    data = bytearray(r.SerializeToString())
    result = impl.read_infer_message(data, "response")
    assert_matches(result, r, "response")
    (raw,) = result[6]
    assert raw.readonly
    assert np.shares_memory(np.frombuffer(raw, np.uint8), np.frombuffer(data, np.uint8))


def test_unpacked_and_split_repeated_fields(impl) -> None:
    """Parsers must accept the non-packed encoding of packed fields, and both mixed."""
    values = [1, 2**31 - 1, -1, 300]
    unpacked = b"".join(tag(2, 0) + varint(v) for v in values[:2])
    packed = len_field(2, b"".join(varint(v) for v in values[2:]))
    floats = tag(6, 5) + struct.pack("<f", 1.5) + len_field(6, struct.pack("<2f", 2.5, 3.5))
    doubles = tag(7, 1) + struct.pack("<d", 0.25)
    shape = tag(3, 0) + varint(4) + len_field(3, varint(1))
    tensor = len_field(1, b"t") + shape + len_field(5, unpacked + packed + floats + doubles)
    data = len_field(5, tensor)
    message = pb.ModelInferRequest.FromString(data)
    assert list(message.inputs[0].contents.int_contents) == values
    assert_matches(impl.read_infer_message(data), message, "request")


def test_embedded_messages_seen_twice_are_merged(impl) -> None:
    tensor = (
        len_field(1, b"t")
        + len_field(5, len_field(6, struct.pack("<f", 1.0)))
        + len_field(2, b"FP32")
        + len_field(5, len_field(6, struct.pack("<f", 2.0)))
        + len_field(1, b"renamed")
    )
    entry = (
        len_field(1, b"k")
        + len_field(2, tag(2, 0) + varint(5))
        + len_field(2, tag(3, 2) + b"\x01s")
    )
    data = len_field(5, tensor) + len_field(4, entry) + len_field(1, b"a") + len_field(1, b"b")
    message = pb.ModelInferRequest.FromString(data)
    result = impl.read_infer_message(data)
    assert_matches(result, message, "request")
    assert result[0] == "b" and result[3] == {"k": "s"}
    assert result[4][0][0] == "renamed"


def test_unknown_fields_of_every_wire_type_are_skipped(impl) -> None:
    unknown = (
        tag(100, 0) + varint(2**64 - 1)
        + tag(101, 1) + b"\x00" * 8
        + len_field(102, b"anything")
        + tag(103, 5) + b"\x00" * 4
        + tag(104, 3) + tag(1, 0) + varint(1) + tag(7, 3) + tag(7, 4) + tag(104, 4)
    )  # fmt: skip
    tensor = (
        unknown + len_field(1, b"t") + unknown + len_field(5, unknown + len_field(6, b"\x00" * 4))
    )
    entry = len_field(1, b"k") + len_field(2, unknown + tag(1, 0) + b"\x01")
    data = unknown + len_field(5, tensor) + len_field(4, entry) + unknown
    message = pb.ModelInferRequest.FromString(data)
    assert_matches(impl.read_infer_message(data), message, "request")
    # upb moves a map entry holding unknown fields to the unknown fields of the parent; the
    # encoding guide says to skip unknown fields, which keeps the entry.
    data = len_field(4, unknown + len_field(1, b"k") + len_field(2, tag(1, 0) + b"\x01"))
    assert impl.read_infer_message(data)[3] == {"k": True}


def test_empty_message(impl) -> None:
    assert impl.read_infer_message(b"") == ("", "", "", {}, [], [], [])
    assert impl.read_infer_message(b"", "response") == ("", "", "", {}, [], [], [])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (tag(1, 2) + b"\x05ab", "byte offset 0: length-delimited field says 5 bytes, only 2 left"),
        (b"\x0a\xff", "byte offset 1: truncated varint"),
        (
            tag(20, 0) + b"\xff" * 10 + b"\x01",
            "byte offset 2: malformed varint: longer than 10 bytes",
        ),
        (tag(1, 0) + b"\x01", "ModelInferRequest.model_name has wire type VARINT, expected LEN"),
        (b"\x00", "invalid field tag 0"),
        (b"\x0f", "wire type 7"),
        (tag(20, 4), "end-group tag without a matching start-group tag"),
        (tag(20, 3) + tag(1, 0) + b"\x01", "group of field 20 has no end-group tag"),
        (tag(20, 3) + tag(21, 4), "end-group tag of field 21 closes the group of field 20"),
        (tag(20, 3) * 101, "groups nested deeper than 100 levels"),
        (tag(20, 1) + b"\x00" * 7, "8-byte fixed-width field, only 7 bytes left"),
        (
            len_field(5, len_field(5, len_field(6, b"\x00" * 5))),
            "packed fp32_contents of 5 bytes is not a multiple of 4",
        ),
        (
            len_field(5, len_field(5, len_field(2, b"\x80"))),
            "packed int_contents ends inside a varint",
        ),
        (
            len_field(5, len_field(5, len_field(3, b"\xff" * 10 + b"\x01"))),
            "malformed varint: longer than 10 bytes",
        ),
        (
            len_field(5, len_field(5, tag(8, 0) + b"\x01")),
            "InferTensorContents.bytes_contents has wire type VARINT, expected LEN",
        ),
        (len_field(5, len_field(3, b"\x80")), "truncated varint"),
        (
            len_field(5, tag(3, 5) + b"\x00" * 4),
            "InferInputTensor.shape has wire type I32, expected VARINT",
        ),
        (len_field(1, b"\xff"), "ModelInferRequest.model_name is not valid UTF-8"),
        (len_field(4, len_field(1, b"k")), "parameter 'k' has no value"),
        (
            len_field(4, len_field(2, tag(4, 0) + b"\x01")),
            "InferParameter.double_param has wire type VARINT, expected I64",
        ),
        (
            len_field(5, len_field(1, b"a") + len_field(5, len_field(2, b"\x01")))
            + len_field(7, b""),
            "contents field must not be specified when using raw_input_contents for 'a' for model "
            "'' (inputs[0] has typed contents too",
        ),
        (
            len_field(5, b"") + len_field(5, b"") + len_field(7, b""),
            "1 raw_input_contents entries for 2 inputs",
        ),
        (len_field(7, b"x"), "1 raw_input_contents entries for 0 inputs"),
    ],
)
def test_malformed_messages(impl, data: bytes, message: str) -> None:
    with pytest.raises(
        DecodeError,
        match=message.replace("(", r"\(")
        .replace(")", r"\)")
        .replace("[", r"\[")
        .replace("]", r"\]"),
    ):
        impl.read_infer_message(data)


def test_error_offsets_point_at_the_fault(impl) -> None:
    data = len_field(1, b"m") + len_field(5, len_field(1, b"t") + tag(3, 0) + b"\xff" * 11)
    with pytest.raises(DecodeError) as info:
        impl.read_infer_message(data)
    assert info.value.offset == 3 + 2 + 3 + 1


def test_response_field_numbers(impl) -> None:
    # Field 6 is raw_output_contents in a response, requested outputs in a request.
    r = pb.ModelInferResponse(model_name="m", id="x")
    r.outputs.add(name="o", datatype="UINT8", shape=[2])
    r.raw_output_contents.append(b"\x01\x02")
    data = r.SerializeToString()
    assert_matches(impl.read_infer_message(data, "response"), r, "response")
    with pytest.raises(DecodeError):
        impl.read_infer_message(data, "request")  # field 6 then holds a bad requested output
    with pytest.raises(ValueError, match="kind"):
        impl.read_infer_message(data, "reply")


def test_limits_are_checked_before_allocating(impl) -> None:
    with pytest.raises(LimitError, match="exceeds the limit of 10 bytes"):
        impl.read_infer_message(b"\x00" * 11, "request", Limits(max_body_bytes=10))
    data = len_field(5, b"") * 3
    with pytest.raises(LimitError, match="more than 2 inputs"):
        impl.read_infer_message(data, "request", Limits(max_tensors=2))
    contents = len_field(5, len_field(2, b"\x01" * 5))
    with pytest.raises(LimitError, match="int_contents holds 5 elements, more than the limit of 4"):
        impl.read_infer_message(len_field(5, contents), "request", Limits(max_tensor_elements=4))
    contents = len_field(5, len_field(8, b"abc"))
    with pytest.raises(LimitError, match="bytes_contents element of 3 bytes"):
        impl.read_infer_message(len_field(5, contents), "request", Limits(max_bytes_element=2))
    shape = len_field(3, b"\x01" * 65)
    with pytest.raises(LimitError, match="more than 64 dimensions"):
        impl.read_infer_message(len_field(5, shape))


# ---------------------------------------------------------------------------------------------
# Writer


def build_with_runtime(tensors: list[tuple], kind: str, raw: bool) -> Any:
    message = pb.ModelInferRequest() if kind == "request" else pb.ModelInferResponse()
    message.model_name = "model"
    message.id = "id-1"
    message.parameters["a"].int64_param = 7
    message.parameters["b"].uint64_param = 2**63
    message.parameters["c"].double_param = 0.5
    message.parameters["d"].bool_param = True
    message.parameters["e"].string_param = "s"
    for name, datatype, shape, params, field, payload in tensors:
        t = (message.inputs if kind == "request" else message.outputs).add(
            name=name, datatype=datatype, shape=shape
        )
        for k, v in params.items():
            t.parameters[k].int64_param = v
        if raw:
            (
                message.raw_input_contents if kind == "request" else message.raw_output_contents
            ).append(bytes(payload))
            continue
        t.contents.SetInParent()
        target = getattr(t.contents, CONTENTS[field - 1])
        if field == 8:
            target.extend(payload)
        elif field in (6, 7):
            target.extend(np.frombuffer(payload, DTYPES[CONTENTS[field - 1]]).tolist())
        else:
            target.extend(
                payload.view(DTYPES[CONTENTS[field - 1]]).tolist()
                if field in (3, 5)
                else payload.astype(np.uint64).tolist()
            )
    if kind == "request":
        message.outputs.add(name="out").parameters["binary_data"].bool_param = True
    return message


def typed_tensors() -> list[tuple]:
    rng = np.random.default_rng(1)
    return [
        ("b", "BOOL", [3], {}, 1, np.array([1, 0, 1], np.uint64)),
        (
            "i",
            "INT64",
            [2, 2],
            {"p": 1},
            3,
            np.array([-1, 0, 2**62, -(2**63)], np.int64).view(np.uint64),
        ),
        ("u", "UINT64", [2], {}, 5, np.array([0, 2**64 - 1], np.uint64)),
        ("u32", "UINT32", [2], {}, 4, np.array([0, 2**32 - 1], np.uint64)),
        ("f", "FP32", [4], {}, 6, rng.standard_normal(4).astype("<f4")),
        ("d", "FP64", [2], {}, 7, np.array([np.inf, -0.0], "<f8")),
        ("s", "BYTES", [2], {}, 8, [b"abc", b""]),
        ("empty", "FP32", [0], {}, 6, np.zeros(0, "<f4")),
    ]


@pytest.mark.parametrize("kind", ["request", "response"])
def test_writer_typed_matches_runtime(impl, kind: str) -> None:
    tensors = typed_tensors()
    ours = impl.write_infer_message(
        kind, "model", None, "id-1", {"a": 7, "b": 2**63, "c": 0.5, "d": True, "e": "s"},
        tensors, [("out", {"binary_data": True})],
    )  # fmt: skip
    expected = build_with_runtime(tensors, kind, raw=False)
    parsed = type(expected).FromString(ours)
    assert parsed == expected
    assert_matches(impl.read_infer_message(ours, kind), expected, kind)


@pytest.mark.parametrize("kind", ["request", "response"])
def test_writer_raw_matches_runtime(impl, kind: str) -> None:
    tensors = [
        ("x", "FP32", [2], {}, 0, np.array([1.0, 2.0], "<f4").view(np.uint8)),
        ("y", "BYTES", [1], {"q": 3}, 0, b"\x01\x00\x00\x00z"),
        ("z", "INT8", [0], {}, 0, b""),
    ]
    ours = impl.write_infer_message(
        kind, "model", "", "id-1", {"a": 7, "b": 2**63, "c": 0.5, "d": True, "e": "s"},
        tensors, [("out", {"binary_data": True})],
    )  # fmt: skip
    expected = build_with_runtime(tensors, kind, raw=True)
    assert type(expected).FromString(ours) == expected
    assert_matches(impl.read_infer_message(ours, kind), expected, kind)


def test_writer_refuses_bad_input(impl) -> None:
    with pytest.raises(EncodeError, match="mixed"):
        impl.write_infer_message(
            "request",
            "m",
            None,
            None,
            {},
            [("a", "FP32", [1], {}, 0, b"\x00" * 4), ("b", "FP32", [1], {}, 6, b"\x00" * 4)],
        )
    with pytest.raises(EncodeError, match="fits neither"):
        impl.write_infer_message("request", "m", None, None, {"x": 2**64}, [])
    with pytest.raises(EncodeError, match="fits neither"):
        impl.write_infer_message("request", "m", None, None, {"x": -(2**63) - 1}, [])
    with pytest.raises(EncodeError, match="bool, int, float or str"):
        impl.write_infer_message("request", "m", None, None, {"x": None}, [])
    with pytest.raises(EncodeError, match="UTF-8"):
        impl.write_infer_message("request", "\ud800", None, None, {}, [])


def test_twins_write_identical_bytes(both) -> None:
    native, pure = both
    args = ("request", "m", "1", "id", {"a": -1, "b": 1e300}, typed_tensors(), [("o", {})])
    assert native.write_infer_message(*args) == pure.write_infer_message(*args)


def written(impl: Any, args: tuple[Any, ...]) -> Any:
    try:
        return impl.write_infer_message(*args)
    except (EncodeError, ValueError, TypeError) as exc:
        return (type(exc).__name__, str(exc))


# The raw form (what the server answers ModelInfer with) has a writer of its own in the native
# kernel; everything else it meets here (odd names, shapes, payloads) it leaves to the planner.
raw_text = st.one_of(st.none(), st.text(max_size=4), st.just("\ud800"), st.just(7))
raw_payload = st.one_of(
    st.binary(max_size=9),
    st.binary(max_size=8).map(memoryview),
    st.lists(st.floats(width=32), max_size=3).map(lambda v: memoryview(np.array(v, "<f4"))),
    st.lists(st.integers(0, 255), max_size=4).map(lambda v: np.array(v, np.uint8)),
    st.none(),
)
raw_tensor = st.tuples(
    raw_text,
    raw_text,
    st.one_of(
        st.lists(st.integers(0, 2**63 - 1), max_size=3),
        st.lists(st.integers(-1, 300), max_size=3).map(tuple),
        st.just((np.int64(2), True)),
    ),
    st.one_of(st.just({}), st.just(None), st.just({"q": 1})),
    st.sampled_from([0, 0, 0, 6]),
    raw_payload,
)


def test_a_strided_raw_payload_is_written_as_its_copy(both) -> None:
    native, _ = both
    strided = memoryview(np.arange(6, dtype=np.uint8)[::2])
    head = ("response", "m", None, None, {})
    copied = native.write_infer_message(*head, [("x", "UINT8", [3], {}, 0, strided.tobytes())])
    assert native.write_infer_message(*head, [("x", "UINT8", [3], {}, 0, strided)]) == copied
    with pytest.raises(TypeError, match="bytes-like"):
        native.write_infer_message(*head, [("x", "UINT8", [3], {}, 0, 12)])


@pytest.mark.parametrize("kind", ["request", "response"])
@given(data=st.data())
@settings(max_examples=300, deadline=None)
def test_twins_write_the_raw_form_alike(both, kind: str, data: Any) -> None:
    native, pure = both
    args = (
        kind,
        data.draw(raw_text),
        data.draw(raw_text),
        data.draw(raw_text),
        data.draw(st.one_of(st.just({}), st.just(None), st.just({"a": 1, "b": "x"}))),
        data.draw(st.lists(raw_tensor, max_size=3)),
        data.draw(st.one_of(st.none(), st.just([]), st.just([("o", {})]))),
    )
    ours = written(native, args)
    assert ours == written(pure, args)
    if isinstance(ours, bytes) and all(t[4] == 0 for t in args[5]):  # protobuf reads it whole
        M = pb.ModelInferRequest if kind == "request" else pb.ModelInferResponse
        assert len(M.FromString(ours).SerializeToString()) == len(ours)


# ---------------------------------------------------------------------------------------------
# Differential tests against google.protobuf on random messages


names = st.text(max_size=8)
param_values = st.one_of(
    st.booleans().map(lambda v: ("bool_param", v)),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: ("int64_param", v)),
    st.integers(0, 2**64 - 1).map(lambda v: ("uint64_param", v)),
    st.floats(allow_nan=False).map(lambda v: ("double_param", v)),
    st.text(max_size=8).map(lambda v: ("string_param", v)),
)
params = st.dictionaries(names, param_values, max_size=3)
contents_values = {
    "bool_contents": st.lists(st.booleans(), max_size=6),
    "int_contents": st.lists(st.integers(-(2**31), 2**31 - 1), max_size=6),
    "int64_contents": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=6),
    "uint_contents": st.lists(st.integers(0, 2**32 - 1), max_size=6),
    "uint64_contents": st.lists(st.integers(0, 2**64 - 1), max_size=6),
    "fp32_contents": st.lists(st.floats(width=32), max_size=6),
    "fp64_contents": st.lists(st.floats(), max_size=6),
    "bytes_contents": st.lists(st.binary(max_size=6), max_size=4),
}
contents = st.fixed_dictionaries({}, optional=contents_values)
tensor_st = st.tuples(
    names,
    st.sampled_from(["FP32", "INT8", "BYTES", "weird"]),
    st.lists(st.integers(-3, 2**40), max_size=4),
    params,
    st.none() | contents,
)
unknown_field = st.one_of(
    st.tuples(st.integers(9, 2**29 - 1), st.integers(0, 2**64 - 1)).map(
        lambda t: tag(t[0], 0) + varint(t[1])
    ),
    st.tuples(st.integers(9, 1000), st.binary(min_size=8, max_size=8)).map(
        lambda t: tag(t[0], 1) + t[1]
    ),
    st.tuples(st.integers(9, 1000), st.binary(max_size=10)).map(lambda t: len_field(t[0], t[1])),
    st.tuples(st.integers(9, 1000), st.binary(min_size=4, max_size=4)).map(
        lambda t: tag(t[0], 5) + t[1]
    ),
    st.integers(9, 1000).map(lambda f: tag(f, 3) + tag(f + 1, 0) + b"\x01" + tag(f, 4)),
)


def set_params(target: Any, values: dict) -> None:
    for key, (field, value) in values.items():
        setattr(target[key], field, value)


def fragments(draw: Any, kind: str) -> list[tuple[str, bytes]]:
    """Single-field serialized fragments of a random message, each tagged with its ordering
    group (repeated fields must keep their relative order; anything else may move)."""
    M = pb.ModelInferRequest if kind == "request" else pb.ModelInferResponse
    out: list[tuple[str, bytes]] = []
    for field in ("model_name", "model_version", "id"):
        for _ in range(draw(st.integers(0, 2))):
            out.append((field, M(**{field: draw(names)}).SerializeToString()))
    message = M()
    set_params(message.parameters, draw(params))
    out.append(("params", message.SerializeToString()))
    n = draw(st.integers(0, 3))
    raw = draw(st.booleans())
    for _ in range(n):
        name, datatype, shape, t_params, t_contents = draw(tensor_st)
        T = M.InferInputTensor if kind == "request" else M.InferOutputTensor
        t = T(name=name, datatype=datatype, shape=shape)
        set_params(t.parameters, t_params)
        if t_contents is not None and not raw:
            t.contents.SetInParent()
            for field, values in t_contents.items():
                getattr(t.contents, field).extend(values)
        # Unknown fields inside the tensor message: appended to its bytes.
        extra = b"".join(draw(st.lists(unknown_field, max_size=2)))
        out.append(("tensors", len_field(5, t.SerializeToString() + extra)))
        if raw:
            out.append(
                ("raw", len_field(7 if kind == "request" else 6, draw(st.binary(max_size=8))))
            )
    if kind == "request":
        for _ in range(draw(st.integers(0, 2))):
            m = M()
            o = m.outputs.add(name=draw(names))
            set_params(o.parameters, draw(params))
            out.append(("requested", m.SerializeToString()))
    for piece in draw(st.lists(unknown_field, max_size=3)):
        out.append(("unknown", piece))
    return out


@st.composite
def random_messages(draw: Any, kind: str) -> bytes:
    """A random message as the concatenation of its fields in random order (both parsers read
    the same bytes, so any order is fair game; protobuf merges the fragments)."""
    pieces = [data for _, data in fragments(draw, kind)]
    return b"".join(pieces[i] for i in draw(st.permutations(range(len(pieces)))))


@pytest.mark.parametrize("kind", ["request", "response"])
@given(data=st.data())
@settings(max_examples=150, deadline=None)
def test_differential_against_protobuf(both, kind: str, data: Any) -> None:
    message_bytes = data.draw(random_messages(kind))
    M = pb.ModelInferRequest if kind == "request" else pb.ModelInferResponse
    message = M.FromString(message_bytes)
    for impl in both:
        try:
            result = impl.read_infer_message(message_bytes, kind)
        except DecodeError as exc:
            # Only the checks protobuf does not make: raw/typed mixed, raw count.
            assert "raw_" in str(exc), exc
            continue
        assert_matches(result, message, kind)


# ---------------------------------------------------------------------------------------------
# Fuzz: truncations and byte flips of valid messages


def outcome(impl, data: bytes, kind: str) -> Any:
    try:
        impl.read_infer_message(data, kind)
    except DecodeError as exc:
        return (type(exc).__name__, str(exc))
    return "ok"


@given(data=st.data())
@settings(max_examples=300, deadline=None)
def test_fuzzed_messages_give_decode_error_and_twins_agree(both, data: Any) -> None:
    kind = data.draw(st.sampled_from(["request", "response"]))
    valid = bytearray(data.draw(random_messages(kind)))
    if valid:
        for _ in range(data.draw(st.integers(0, 4))):
            index = data.draw(st.integers(0, len(valid) - 1))
            valid[index] = data.draw(st.integers(0, 255))
        cut = data.draw(st.integers(0, len(valid)))
        valid = valid[:cut] if data.draw(st.booleans()) else valid
    native, pure = both
    assert outcome(native, bytes(valid), kind) == outcome(pure, bytes(valid), kind)


@given(data=st.binary(max_size=64))
@settings(max_examples=300, deadline=None)
def test_arbitrary_bytes_twins_agree(both, data: bytes) -> None:
    native, pure = both
    for kind in ("request", "response"):
        assert outcome(native, data, kind) == outcome(pure, data, kind)


def test_truncations_of_a_large_message(both) -> None:
    data = sample_request().SerializeToString()
    native, pure = both
    rng = random.Random(0)
    for cut in range(len(data)):
        mutated = bytearray(data[:cut])
        if mutated and rng.random() < 0.5:
            mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8)
        assert outcome(native, bytes(mutated), "request") == outcome(
            pure, bytes(mutated), "request"
        )


def test_empty_typed_contents_beside_raw_contents_are_ignored(impl) -> None:
    """MLServer 1.7 answers raw with an empty contents message on every output as well."""
    # outputs (5) holding name (1) and an empty contents (5); raw_output_contents (6)
    message = len_field(5, len_field(1, b"y") + len_field(5, b"")) + len_field(6, b"\x01\x00")
    *_, tensors, _, raw = impl.read_infer_message(message, "response")
    assert [bytes(r) for r in raw] == [b"\x01\x00"]
    assert tensors[0][0] == "y"
