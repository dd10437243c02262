"""The GraphPipe flatbuffer kernel (read_flatbuffer / write_flatbuffer / pack_strings) on both
implementations, against the ``flatbuffers`` runtime (tests/support/graphpipe_fb.py)."""

from __future__ import annotations

import random
import struct
from typing import Any

import flatbuffers
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oipcodec.errors import DecodeError, EncodeError, LimitError
from oipcodec.limits import Limits
from tests.support import graphpipe_fb as ref

# ---------------------------------------------------------------------------------------------
# Strategies: tables as the kernel returns them (bytes for strings, lists for string vectors).

names = st.binary(max_size=12)
shapes = st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5).map(tuple)
string_lists = st.lists(st.binary(max_size=20), max_size=6)


@st.composite
def tensors(draw: st.DrawFn) -> tuple[Any, ...]:
    kind = draw(st.integers(0, 12))
    shape = draw(st.none() | shapes)
    if kind == 12:
        return (kind, shape, None, draw(st.none() | string_lists))
    return (kind, shape, draw(st.none() | st.binary(max_size=40)), None)


infer_requests = st.tuples(
    st.none() | names,
    st.none() | st.lists(names, max_size=4),
    st.none() | st.lists(tensors(), max_size=4),
    st.none() | st.lists(names, max_size=4),
)
requests = st.one_of(
    infer_requests.map(lambda r: (1, r)),
    st.just((2, ())),
    st.just((0, None)),
)
errors = st.tuples(st.integers(-(2**63), 2**63 - 1), st.none() | names)
infer_responses = st.tuples(
    st.none() | st.lists(tensors(), max_size=4), st.none() | st.lists(errors, max_size=3)
)
io_metadata = st.tuples(
    st.none() | names, st.none() | names, st.none() | shapes, st.integers(0, 12)
)
metadata_responses = st.tuples(
    *(st.none() | names for _ in range(4)),
    st.none() | st.lists(io_metadata, max_size=3),
    st.none() | st.lists(io_metadata, max_size=3),
)
ROOTS = {
    "Request": requests,
    "InferResponse": infer_responses,
    "MetadataResponse": metadata_responses,
}


def ours(impl: Any, root: str, value: tuple[Any, ...], **kwargs: Any) -> bytes:
    return b"".join(bytes(p) for p in impl.write_flatbuffer(root, value, **kwargs))


# ---------------------------------------------------------------------------------------------
# Both directions against the runtime, for every root table.


@pytest.mark.parametrize("root", sorted(ROOTS))
@settings(max_examples=60)
@given(data=st.data())
def test_runtime_buffers_read_by_ours(impl: Any, root: str, data: st.DataObject) -> None:
    value = data.draw(ROOTS[root])
    buffer = ref.build(root, value)
    for form in (buffer, bytearray(buffer), memoryview(buffer)):
        assert ref.plain(impl.read_flatbuffer(form, root)) == ref.plain(value)


@pytest.mark.parametrize("root", sorted(ROOTS))
@settings(max_examples=60)
@given(data=st.data(), inline_limit=st.sampled_from([0, 8, 1 << 20]))
def test_our_buffers_read_by_runtime(
    impl: Any, root: str, data: st.DataObject, inline_limit: int
) -> None:
    value = data.draw(ROOTS[root])
    buffer = ours(impl, root, value, inline_limit=inline_limit)
    # The runtime reads absent and empty alike only where we wrote what we were given.
    assert ref.plain(ref.read(root, buffer)) == ref.plain(value)
    assert ref.plain(impl.read_flatbuffer(buffer, root)) == ref.plain(value)


def test_data_is_a_read_only_view_and_large_data_a_part_of_its_own(impl: Any) -> None:
    data = np.arange(1 << 16, dtype="<f4")
    value = ([(10, (1 << 16,), memoryview(data.data), None)], None)
    parts = impl.write_flatbuffer("InferResponse", value)
    assert len(parts) == 2 and parts[1].obj is data  # the tensor is not copied
    body = bytearray(b"".join(bytes(p) for p in parts))
    view = impl.read_flatbuffer(body, "InferResponse")[0][0][2]
    assert view.readonly and view.obj is not None
    assert np.frombuffer(view, "<f4").tolist() == data.tolist()
    start = len(parts[0])
    assert start % 8 == 0  # data 8-aligned in the buffer
    body[start] = 0xFF  # a view: the reader copied nothing
    assert view[0] == 0xFF


def test_pack_strings_twins_agree(both: Any) -> None:
    native, pure = both
    rng = random.Random(5)
    for _ in range(50):
        values = [bytes(rng.randrange(256) for _ in range(rng.randrange(9))) for _ in range(7)]
        values += ["é\0x".encode(), b""]
        assert native.pack_strings(values) == pure.pack_strings(values)
        assert native.pack_strings(np.array(values, dtype=object)) == pure.pack_strings(values)
    # str elements are sent UTF-8 encoded
    assert native.pack_strings(["é", "x"]) == pure.pack_strings(["é".encode(), b"x"])
    assert pure.pack_strings(np.array(["é", ""])) == native.pack_strings(["é".encode(), b""])


@pytest.mark.parametrize("bad", [1, None, bytearray(b"x"), "\ud800"])
def test_pack_strings_refuses_non_strings(impl: Any, bad: Any) -> None:
    with pytest.raises(EncodeError, match="element 1"):
        impl.pack_strings([b"ok", bad])


# ---------------------------------------------------------------------------------------------
# Hostile buffers.

U32 = struct.Struct("<I")


def metadata_request() -> bytearray:
    return bytearray(ref.build("Request", (2, ())))


def tensor_request(shape: tuple[int, ...] = (2,), data: bytes = b"ab") -> bytearray:
    return bytearray(ref.build("Request", (1, (None, None, [(1, shape, data, None)], None))))


def find(buffer: bytes | bytearray, needle: bytes) -> int:
    at = bytes(buffer).find(needle)
    assert at >= 0
    return at


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "at least 8 bytes"),
        (U32.pack(8) + bytes(4), "byte offset 0: Request: offset points to byte 8, past the end"),
        (U32.pack(0) + bytes(4), "offset is 0"),
        (U32.pack(2**31) + bytes(4), "2\\*\\*31 or more"),
        (U32.pack(2) + bytes(6), "byte offset 2: Request is not 4-byte aligned"),
        (U32.pack(4) + struct.pack("<i", 100), "vtable at byte -96 is outside the buffer"),
        (U32.pack(4) + struct.pack("<i", 1), "Request vtable is not 2-byte aligned"),
        (U32.pack(4) + struct.pack("<i", 4), "vtable gives the table 0 bytes, fewer than 4"),
        (U32.pack(4) + struct.pack("<i", 2) + bytes(4), "vtable size 0 is not an even number"),
    ],
)
def test_broken_envelopes(impl: Any, body: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        impl.read_flatbuffer(body, "Request")


def test_lengths_past_the_end(impl: Any) -> None:
    body = tensor_request(data=b"abcdefgh")
    at = find(body, U32.pack(8) + b"abcdefgh")
    body[at : at + 4] = U32.pack(2**32 - 1)
    with pytest.raises(DecodeError, match=f"byte offset {at}: Tensor.data needs 4294967299 bytes"):
        impl.read_flatbuffer(body, "Request")
    body = tensor_request()
    with pytest.raises(DecodeError, match="past the end"):
        impl.read_flatbuffer(body[: len(body) - 4], "Request")


def test_every_truncation_is_refused(impl: Any) -> None:
    body = ref.build(
        "Request", (1, (b"c", [b"x"], [(12, (1,), None, [b"s"]), (1, (2,), b"ab", None)], [b"y"]))
    )
    impl.read_flatbuffer(body, "Request")
    # The runtime builds back to front: the buffer ends with the first string made ("c", its
    # NUL and 2 bytes of padding, which nothing reads).
    for end in range(len(body.rstrip(b"\0")) + 1):
        with pytest.raises(DecodeError):
            impl.read_flatbuffer(body[:end], "Request")


def test_misaligned_int64_vector(impl: Any) -> None:
    body = tensor_request(shape=(7,))
    at = find(body, U32.pack(1) + struct.pack("<q", 7))
    assert (at + 4) % 8 == 0
    # Move the shape vector 4 bytes on (onto the padding before it) and point at it there.
    moved = body[:]
    moved[at - 4 : at + 8] = U32.pack(1) + struct.pack("<q", 7)
    ref_at = next(i for i in range(0, len(body) - 3, 4) if U32.unpack_from(body, i)[0] == at - i)
    moved[ref_at : ref_at + 4] = U32.pack(at - 4 - ref_at)
    with pytest.raises(DecodeError, match=f"byte offset {at}: Tensor.shape elements is not 8-byte"):
        impl.read_flatbuffer(moved, "Request")


def test_string_without_nul(impl: Any) -> None:
    body = bytearray(ref.build("Request", (1, (b"config!", None, None, None))))
    at = find(body, b"config!\0") + 7
    body[at] = 0x41
    with pytest.raises(DecodeError, match=f"byte offset {at}: InferRequest.config: string does"):
        impl.read_flatbuffer(body, "Request")


def test_union_type_that_disagrees_with_its_table(impl: Any) -> None:
    body = tensor_request()
    # Say MetadataRequest (2) for the InferRequest table: its vtable lists fields.
    request = impl.read_flatbuffer(body, "Request")
    assert request[0] == 1
    type_at = _union_type_position(body)
    body[type_at] = 2
    with pytest.raises(DecodeError, match="MetadataRequest: vtable lists field 2, but"):
        impl.read_flatbuffer(body, "Request")
    body[type_at] = 9
    with pytest.raises(DecodeError, match="union type 9 is not 0 \\(none\\) or one of 1"):
        impl.read_flatbuffer(body, "Request")
    body[type_at] = 0  # none: the table is ignored, as flatbuffers does
    assert impl.read_flatbuffer(body, "Request") == (0, None)


def _union_type_position(body: bytearray) -> int:
    root = U32.unpack_from(body, 0)[0]
    vt = root - struct.unpack_from("<i", body, root)[0]
    return root + struct.unpack_from("<H", body, vt + 4)[0]


def test_shared_offsets_cannot_expand_a_small_buffer(impl: Any) -> None:
    # One Tensor table (64 strings of 64 bytes) referenced 2000 times from input_tensors: 270 kB
    # that would read as 8 MB of strings and 128000 objects.
    builder = flatbuffers.Builder(1024)
    tensor = ref.table(builder, "Tensor", (12, (64,), None, [b"x" * 64] * 64))
    builder.StartVector(4, 2000, 4)
    for _ in range(2000):
        builder.PrependUOffsetTRelative(tensor)
    tensors = builder.EndVector()
    builder.StartObject(4)
    builder.PrependUOffsetTRelativeSlot(2, tensors, 0)
    infer = builder.EndObject()
    builder.StartObject(2)
    builder.PrependUint8Slot(0, 1, 0)
    builder.PrependUOffsetTRelativeSlot(1, infer, 0)
    builder.Finish(builder.EndObject())
    with pytest.raises(LimitError, match=r"than one per 4 of its|strings read would hold more"):
        impl.read_flatbuffer(bytes(builder.Output()), "Request")


def test_string_limit(impl: Any) -> None:
    body = ref.build("Request", (1, (b"x" * 100, None, None, None)))
    with pytest.raises(LimitError, match="string of 100 bytes, more than the limit of 99"):
        impl.read_flatbuffer(body, "Request", limits=Limits(max_bytes_element=99))


def test_unknown_root(impl: Any) -> None:
    with pytest.raises(ValueError, match="root must be one of"):
        impl.read_flatbuffer(metadata_request(), "Tensor")


# ---------------------------------------------------------------------------------------------
# The twins stop at the same byte with the same error on damaged buffers.


def _outcome(kernels: Any, body: bytes, root: str) -> Any:
    try:
        return ("ok", ref.plain(kernels.read_flatbuffer(body, root)))
    except DecodeError as exc:
        return (type(exc).__name__, str(exc))


@settings(max_examples=150)
@given(
    value=infer_responses,
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_twins_agree_on_damaged_buffers(
    both: Any, value: tuple[Any, ...], flips: list[tuple[int, int]]
) -> None:
    native, pure = both
    body = bytearray(ref.build("InferResponse", value))
    for at, byte in flips:
        body[at % len(body)] = byte
    assert _outcome(native, bytes(body), "InferResponse") == _outcome(
        pure, bytes(body), "InferResponse"
    )


def test_writer_refuses_what_the_schema_cannot_hold(impl: Any) -> None:
    io = (b"x", None, (2**63,), 10)
    with pytest.raises(EncodeError, match=r"MetadataResponse.inputs\[1\].shape: int64 values"):
        impl.write_flatbuffer(
            "MetadataResponse", (None, None, None, None, [(*io[:2], (1,), 1), io], None)
        )
    with pytest.raises(EncodeError, match=r"Request.req: union type 3 names no table"):
        impl.write_flatbuffer("Request", (3, ()))
    with pytest.raises(EncodeError, match=r"InferResponse.output_tensors\[0\].type: a uint8"):
        impl.write_flatbuffer("InferResponse", ([(256, None, None, None)], None))
    with pytest.raises(EncodeError, match="Tensor has 4 fields, got 2 values"):
        impl.write_flatbuffer("InferResponse", ([(1, None)], None))
