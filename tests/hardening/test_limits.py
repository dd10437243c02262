"""Every limit of oipcodec.Limits refuses its input *before* memory is allocated for it.

Each test decodes a small input that claims something huge (a shape, a length prefix, an
inflated size, a nesting depth) and checks the error and, with tracemalloc, that the peak
of memory allocated during the call stays tiny. tracemalloc sees numpy's array buffers and
the kernels' PyMem allocations, so an allocation sized by the claim would show.
"""

from __future__ import annotations

import gzip
import re
import struct
import tracemalloc
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import oipcodec
from oipcodec import pb, rest
from oipcodec.errors import DecodeError, LimitError
from oipcodec.limits import DEFAULT_LIMITS, Limits, element_count
from oipcodec.raw import raw_to_array

SMALL = 256 * 1024  # bytes: far below anything a claimed size would allocate


def peak_of(call: Callable[[], Any], error: type[Exception], match: str | None) -> int:
    """Run ``call``, which must raise ``error`` matching ``match``; return the peak bytes
    allocated (tracemalloc) while it ran."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with pytest.raises(error, match=match):
            call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def body(*inputs: bytes) -> bytes:
    return b'{"inputs":[' + b",".join(inputs) + b"]}"


def tensor(name: str, datatype: str, shape: list[int], data: bytes) -> bytes:
    return b'{"name":"%s","datatype":"%s","shape":%s,"data":%s}' % (
        name.encode(),
        datatype.encode(),
        str(shape).replace(" ", "").encode(),
        data,
    )


def pb_tensor(name: bytes, datatype: bytes, shape: list[int]) -> bytes:
    """An InferInputTensor (name 1, datatype 2, packed shape 3) written by hand."""
    dims = b"".join(varint(d) for d in shape)
    return (
        b"\x0a" + varint(len(name)) + name
        + b"\x12" + varint(len(datatype)) + datatype
        + b"\x1a" + varint(len(dims)) + dims
    )  # fmt: skip


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def pb_inputs(*tensors: bytes) -> bytes:
    return b"".join(b"\x2a" + varint(len(t)) + t for t in tensors)  # field 5, inputs


# ------------------------------------------------------------------------- one documented place


def test_limits_are_one_frozen_dataclass_with_documented_defaults() -> None:
    assert oipcodec.Limits is Limits and Limits() == oipcodec.limits.DEFAULT_LIMITS
    assert Limits().max_body_bytes == 64 * 1024 * 1024
    assert Limits().max_depth == 100
    assert Limits().max_bytes_element == 2**32 - 1
    with pytest.raises(AttributeError):
        DEFAULT_LIMITS.max_depth = 5  # type: ignore[misc]
    assert Limits(max_tensors=3).max_tensors == 3


# ------------------------------------------------------------------------- max_body_bytes


def test_body_size_rest_and_pb() -> None:
    limits = Limits(max_body_bytes=1024)
    big = b" " * 4096
    peak = peak_of(lambda: rest.decode_request(big, limits=limits), LimitError, "4096 bytes")
    assert peak < SMALL
    peak = peak_of(lambda: pb.decode_request(big, limits=limits), LimitError, "4096 bytes")
    assert peak < SMALL
    peak = peak_of(lambda: rest.decode_response(big, limits=limits), LimitError, "limit of 1024")
    assert peak < SMALL


def test_body_size_is_not_copied_before_refusal() -> None:
    big = bytearray(8 << 20)  # the body is the caller's: refusing it must not copy it
    limits = Limits(max_body_bytes=1 << 20)
    assert peak_of(lambda: rest.decode_request(big, limits=limits), LimitError, None) < SMALL
    assert peak_of(lambda: pb.decode_request(big, limits=limits), LimitError, None) < SMALL


# ------------------------------------------------------------------------- max_decompressed_bytes


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_compression_bomb_costs_at_most_the_limit(encoding: str) -> None:
    inflated = 256 << 20  # 256 MB of zeros, about 250 KB compressed
    bomb = rest.compress(bytes(1 << 20), encoding)
    if encoding == "gzip":  # concatenated gzip members inflate as one stream
        bomb = gzip.compress(bytes(inflated), compresslevel=9)
    else:
        deflater = zlib.compressobj(9)
        bomb = deflater.compress(bytes(inflated)) + deflater.flush()
    assert len(bomb) < 512 * 1024
    limits = Limits(max_decompressed_bytes=1 << 20)
    peak = peak_of(
        lambda: rest.decode_request(bomb, content_encoding=encoding, limits=limits),
        LimitError,
        f"inflates past the limit of {1 << 20} bytes",
    )
    # The inflater stops one chunk (1 MB) past nothing: at most about the limit, twice (the
    # chunks and their join), never the 256 MB the bomb holds.
    assert peak < 4 << 20


def test_decompressed_limit_also_bounds_decompress_directly() -> None:
    bomb = gzip.compress(bytes(64 << 20))
    with pytest.raises(LimitError):
        rest.decompress(bomb, "gzip", max_size=1000)
    assert len(rest.decompress(gzip.compress(b"x" * 1000), "gzip", max_size=1000)) == 1000


# ------------------------------------------------------------------------- max_tensor_elements


def test_tiny_rest_body_declaring_shape_2_pow_40() -> None:
    request = b'{"inputs":[{"shape":[1099511627776],"datatype":"FP64","name":"x","data":[]}]}'
    peak = peak_of(lambda: rest.decode_request(request), LimitError, "1099511627776 elements")
    assert peak < SMALL
    # The same claim in the binary extension: binary_data_size is never trusted to allocate.
    binary = (
        b'{"inputs":[{"name":"x","datatype":"FP64","shape":[1099511627776],'
        b'"parameters":{"binary_data_size":8796093022208}}]}'
    )
    peak = peak_of(lambda: rest.decode_request(binary, len(binary)), LimitError, "elements")
    assert peak < SMALL


def test_thirty_byte_raw_request_declaring_shape_2_pow_40() -> None:
    payload = b"\x00" * 30
    peak = peak_of(lambda: raw_to_array(payload, "FP32", [2**40]), LimitError, "more than")
    assert peak < SMALL


def test_protobuf_message_declaring_a_huge_shape() -> None:
    message = pb_inputs(pb_tensor(b"x", b"FP32", [2**40]))
    assert len(message) < 30
    peak = peak_of(lambda: pb.decode_request(message), DecodeError, "1099511627776 elements")
    assert peak < SMALL
    # Many dimensions whose product overflows int64.
    message = pb_inputs(pb_tensor(b"x", b"FP32", [2**62, 2**62, 4]))
    peak = peak_of(lambda: pb.decode_request(message), DecodeError, "elements")
    assert peak < SMALL


def test_tensor_element_limit_is_configurable_per_call() -> None:
    limits = Limits(max_tensor_elements=10)
    text = b"[" + b",".join([b"1"] * 11) + b"]"
    with pytest.raises(LimitError, match="limit of 10"):
        rest.decode_request(body(tensor("x", "INT8", [11], text)), limits=limits)
    assert rest.decode_request(body(tensor("x", "INT8", [11], text))).inputs[0].data.size == 11
    with pytest.raises(LimitError, match="limit of 10"):
        element_count([11], limits)
    with pytest.raises(LimitError):
        oipcodec.kernels.flatten(list(range(11)), "INT8", limits=limits)
    message = pb.encode_request(
        oipcodec.InferRequest(
            [oipcodec.Tensor("x", "INT8", (11,), np.zeros(11, np.int8))], model_name="m"
        )
    )
    with pytest.raises(LimitError, match="limit of 10"):
        pb.decode_request(message, limits=limits)
    typed = pb.encode_request(
        oipcodec.InferRequest(
            [oipcodec.Tensor("x", "INT32", (11,), np.zeros(11, np.int32))], model_name="m"
        ),
        raw=False,
    )
    with pytest.raises(LimitError):
        pb.decode_request(typed, limits=limits)


def test_json_data_claiming_a_huge_shape_with_little_text(impl) -> None:
    # Within the element limit (2**31-1 FP64 would be 16 GB): the text cannot hold it, and
    # json_to_array allocates only what the text could hold.
    peak = peak_of(
        lambda: impl.json_to_array(b"[1,2,3]", "FP64", [2**31 - 1]), DecodeError, "needs"
    )
    assert peak < SMALL
    peak = peak_of(
        lambda: impl.json_to_array(b"[[[1]]]", "FP64", [2**20, 2**10, 2**0]), DecodeError, "needs"
    )
    assert peak < SMALL
    request = body(tensor("x", "FP64", [2**31 - 1], b"[1]"))
    assert peak_of(lambda: rest.decode_request(request), DecodeError, "needs") < SMALL


def test_huge_count_to_the_framing_and_half_float_kernels(impl) -> None:
    assert peak_of(lambda: impl.deserialize_bytes(b"", 2**40), DecodeError, None) < SMALL
    assert peak_of(lambda: impl.bytes_offsets(b"\0" * 8, 2**40), DecodeError, None) < SMALL
    assert peak_of(lambda: impl.unpack_fp16(b"\0\0", 2**40), DecodeError, None) < SMALL
    assert peak_of(lambda: impl.unpack_bf16(b"\0\0", 2**40), DecodeError, None) < SMALL


# ------------------------------------------------------------------------- max_request_elements


def test_request_element_limit_refuses_the_tensor_that_passes_it_before_allocating() -> None:
    limits = Limits(max_request_elements=1000)
    # The second tensor's text really holds 10**6 numbers: decoding it would allocate 8 MB.
    big = b"[" + b"0," * (10**6 - 1) + b"0]"
    request = body(
        tensor("a", "FP64", [10], b"[0,0,0,0,0,0,0,0,0,0]"), tensor("b", "FP64", [10**6], big)
    )
    peak = peak_of(lambda: rest.decode_request(request, limits=limits), LimitError, "limit of 1000")
    # The 8 MB array is never made; the pure scanner's copy of the 2 MB body may be.
    assert peak < 4 << 20
    assert rest.decode_request(request).inputs[1].data.size == 10**6


def test_request_element_limit_in_protobuf() -> None:
    limits = Limits(max_request_elements=1000)
    raw = b"\x3a" + varint(4800) + bytes(4800)  # raw_input_contents (field 7) of 600 FP64
    message = pb_inputs(pb_tensor(b"a", b"FP64", [600]), pb_tensor(b"b", b"FP64", [600])) + raw * 2
    peak = peak_of(lambda: pb.decode_request(message, limits=limits), LimitError, "1000")
    assert peak < SMALL


def test_request_element_limit_for_responses() -> None:
    limits = Limits(max_request_elements=5)
    response = b'{"model_name":"m","outputs":[%s,%s]}' % (
        tensor("a", "INT8", [3], b"[1,2,3]"),
        tensor("b", "INT8", [3], b"[1,2,3]"),
    )
    with pytest.raises(LimitError, match="outputs hold more than the limit of 5"):
        rest.decode_response(response, limits=limits)


# ------------------------------------------------------------------------- max_depth


def test_depth_limit_json_to_array(impl) -> None:
    deep = b"[" * 200_000 + b"]" * 200_000  # would overflow a recursive parser's stack
    peak = peak_of(lambda: impl.json_to_array(deep, "FP32", [1]), LimitError, "max_depth=100")
    assert peak < 1 << 20
    with pytest.raises(LimitError, match="max_depth=2"):
        impl.json_to_array(b"[[[1]]]", "FP32", [1, 1, 1], max_depth=2)
    assert impl.json_to_array(b"[[[1]]]", "FP32", [1, 1, 1], max_depth=3).shape == (1, 1, 1)


def test_depth_limit_rest_per_call() -> None:
    request = body(tensor("x", "INT8", [1, 1, 1, 1], b"[[[[1]]]]"))
    with pytest.raises(LimitError, match="max_depth=3"):
        rest.decode_request(request, limits=Limits(max_depth=3))
    assert rest.decode_request(request).inputs[0].data.shape == (1, 1, 1, 1)
    deep = body(tensor("x", "INT8", [1], b"[" * 100_000 + b"]" * 100_000))
    assert peak_of(lambda: rest.decode_request(deep), LimitError, "max_depth") < 1 << 20


def test_deep_nesting_in_the_envelope_is_a_decode_error() -> None:
    # Outside "data", nesting is orjson's to refuse (its own limit), never a RecursionError.
    deep = b'{"inputs":[],"parameters":{"p":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    with pytest.raises(DecodeError):
        rest.decode_request(deep)


def test_depth_limit_flatten(impl) -> None:
    nested: list[Any] = [1]
    for _ in range(150):
        nested = [nested]
    with pytest.raises(LimitError, match="100 levels"):
        impl.flatten(nested, "INT8")
    with pytest.raises(LimitError, match="3 levels"):
        impl.flatten([[[[1]]]], "INT8", limits=Limits(max_depth=3))


# ------------------------------------------------------------------------- max_bytes_element


def test_bytes_prefix_claiming_4_gb(impl) -> None:
    wire = b"\xff\xff\xff\xff" + b"x" * 10
    for call in (
        lambda: impl.deserialize_bytes(wire, 1),
        lambda: impl.deserialize_bytes(wire),
        lambda: impl.bytes_offsets(wire, 1),
    ):
        assert peak_of(call, DecodeError, "says 4294967295 bytes, only 10 left") < SMALL


def test_bytes_prefix_claiming_4_gb_in_rest_and_pb() -> None:
    wire = b"\xff\xff\xff\xff" + b"x" * 10
    header = b'{"inputs":[{"name":"s","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":14}}]}'
    peak = peak_of(
        lambda: rest.decode_request(header + wire, len(header)), DecodeError, "4294967295"
    )
    assert peak < SMALL
    message = pb_inputs(pb_tensor(b"s", b"BYTES", [1])) + b"\x3a" + varint(len(wire)) + wire
    assert peak_of(lambda: pb.decode_request(message), DecodeError, "4294967295") < SMALL


def bytes_request(length: int) -> oipcodec.InferRequest:
    element = np.array([b"ok", b"x" * length], dtype=object)
    return oipcodec.InferRequest([oipcodec.Tensor("s", "BYTES", (2,), element)], model_name="m")


@pytest.mark.parametrize("path", ["rest-binary", "pb-raw", "pb-typed"])
def test_bytes_element_limit_before_the_element_is_made(path: str) -> None:
    limits = Limits(max_bytes_element=1000)
    request = bytes_request(4 << 20)
    if path == "rest-binary":
        data, header = rest.encode_request(request, binary=True)
        call = lambda: rest.decode_request(data, header, limits=limits)  # noqa: E731
    else:
        data = pb.encode_request(request, raw=path == "pb-raw")
        call = lambda: pb.decode_request(data, limits=limits)  # noqa: E731
    match = r"element of 4194304 bytes exceeds the limit of 1000"
    assert peak_of(call, LimitError, match) < SMALL


def test_bytes_element_limit_for_json_strings() -> None:
    limits = Limits(max_bytes_element=1000)
    data, _ = rest.encode_request(bytes_request(2000), binary=False)
    with pytest.raises(LimitError, match=r"input 's': element 1: BYTES element of 2000 bytes"):
        rest.decode_request(data, limits=limits)
    data, _ = rest.encode_request(bytes_request(1000), binary=False)
    assert len(rest.decode_request(data, limits=limits).inputs[0].data[1]) == 1000


def test_bytes_element_limit_raw_to_array_names_element_and_offset(impl) -> None:
    wire = oipcodec.kernels.serialize_bytes([b"a", b"bb", b"c" * 50])
    with pytest.raises(LimitError) as caught:
        raw_to_array(wire, "BYTES", [3], limits=Limits(max_bytes_element=10), kernels=impl)
    assert caught.value.index == 2 and caught.value.offset == 11
    assert raw_to_array(wire, "BYTES", [3], limits=Limits(max_bytes_element=50)).size == 3


# ------------------------------------------------------------------------- max_tensors


def test_tensor_count_limit_rest() -> None:
    limits = Limits(max_tensors=2)
    three = body(*(tensor(n, "INT8", [1], b"[1]") for n in "abc"))
    with pytest.raises(LimitError, match="3 inputs, more than the limit of 2"):
        rest.decode_request(three, limits=limits)
    outputs = b'{"inputs":[],"outputs":[{"name":"a"},{"name":"b"},{"name":"c"}]}'
    with pytest.raises(LimitError, match="outputs"):
        rest.decode_request(outputs, limits=limits)


def test_tensor_count_limit_pb_before_reading_the_rest() -> None:
    limits = Limits(max_tensors=2)
    one = pb_tensor(b"a", b"INT8", [1])
    # 100,000 tensor entries: refused at the third, without building the others.
    message = pb_inputs(*[one] * 100_000)
    peak = peak_of(lambda: pb.decode_request(message, limits=limits), LimitError, "more than 2")
    assert peak < SMALL
    raw = b"".join(b"\x3a\x01\x00" for _ in range(3))  # raw_input_contents entries
    with pytest.raises(LimitError, match="more than 2 raw_input_contents"):
        pb.decode_request(raw, limits=limits)


def test_error_messages_name_the_limit() -> None:
    # A client told "limit" and the number can fix its request without reading the source.
    with pytest.raises(LimitError) as caught:
        rest.decode_request(b"x" * 20, limits=Limits(max_body_bytes=10))
    assert re.search(r"body of 20 bytes is larger than the limit of 10", str(caught.value))
    assert struct.calcsize("<I") == 4  # the BYTES prefix the max_bytes_element default matches


# ------------------------------------------------------------------------- fuzzing regressions


ZERO_DIM_HUGE = [0, 2**40, 2**40]  # zero elements, but numpy refuses to make it ("too big")


def test_zero_size_shape_with_huge_other_dimensions(impl) -> None:
    # Found by fuzz_pb_request: numpy's "array is too big" ValueError escaped every decoder.
    match = "non-zero dimensions multiply to"
    with pytest.raises(LimitError, match=match):
        impl.json_to_array(b"[]", "FP32", ZERO_DIM_HUGE)
    with pytest.raises(LimitError, match=match):
        raw_to_array(b"", "FP32", ZERO_DIM_HUGE, kernels=impl)
    with pytest.raises(LimitError, match=match):
        raw_to_array(b"", "BYTES", ZERO_DIM_HUGE, kernels=impl)
    with pytest.raises(LimitError, match=match):
        element_count([2**31, 0])
    assert element_count([0, 2**31 - 1]) == 0  # within the limit, an empty shape is fine


def test_zero_size_shape_with_huge_other_dimensions_rest_and_pb(impl) -> None:
    request = body(tensor("a", "FP32", ZERO_DIM_HUGE, b"[]"))
    with pytest.raises(LimitError, match="input 'a': shape"):
        rest.decode_request(request)
    # The fuzzer's input: shape [3, 42, 14, 58, 12, 0, 83, 1407, 1, 66, 18, 9, 66, 2, 67].
    message = (
        b"\n\x01m\x12\x011*\x1c\n\x01A\x12\x04FP32\x1a\x11\x03*\x0e:\x0c\x00S\xff\n\x01B"
        b"\x12\tB\x02\xc3\x00*\x00"
    )
    with pytest.raises(LimitError, match=r"input 'A': shape .* multiply to 13557752272476099072"):
        pb.decode_request(message, kernels=impl)
