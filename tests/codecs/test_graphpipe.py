"""oipcodec.graphpipe: GraphPipe requests and answers to and from tensors, on both kernel
implementations; buffers built by the flatbuffers runtime (tests/support/graphpipe_fb.py) as the
other side."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from oipcodec import graphpipe
from oipcodec.errors import DecodeError, EncodeError, LimitError
from oipcodec.limits import Limits
from oipcodec.types import Tensor
from tests.support import graphpipe_fb as ref
from tests.support.arrays import assert_same

NUMERIC = ["<u1", "<i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8", "<f2", "<f4", "<f8"]


def body(parts: list[Any]) -> bytes:
    return b"".join(bytes(p) for p in parts)


arrays = st.one_of(
    *(
        hnp.arrays(np.dtype(d), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
        for d in NUMERIC
    ),
    hnp.arrays(
        object,
        hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=3),
        elements=st.binary(max_size=8),
    ),
)


@settings(max_examples=80)
@given(inputs=st.lists(arrays, max_size=4), named=st.booleans(), config=st.none() | st.text())
def test_request_round_trip(impl: Any, inputs: list[Any], named: bool, config: str | None) -> None:
    names = [f"in{i}" for i in range(len(inputs))] if named else None
    wire = body(graphpipe.encode_request(inputs, names, ["o1", "ö"], config, kernels=impl))
    request = graphpipe.decode_request(wire, kernels=impl)
    assert request.kind == "infer"
    assert request.input_names == (names or [])
    assert request.output_names == ["o1", "ö"]
    assert request.config == (None if config is None else config.encode())
    for index, (tensor, array) in enumerate(zip(request.inputs, inputs, strict=True)):
        assert tensor.name == (f"in{index}" if named else "")
        assert tensor.shape == array.shape
        if array.dtype == object:
            assert tensor.datatype == "BYTES"
            assert tensor.data.tolist() == array.tolist()
        else:
            assert not tensor.data.flags.writeable  # a view of the body
            assert_same(tensor.data, array)


@settings(max_examples=40)
@given(outputs=st.lists(arrays, max_size=3))
def test_response_round_trip_and_the_runtime_reads_it(impl: Any, outputs: list[Any]) -> None:
    wire = body(graphpipe.encode_response_parts(outputs, kernels=impl))
    answer = graphpipe.decode_response(wire, kernels=impl)
    assert answer.errors == []
    for got, want in zip(answer.outputs, outputs, strict=True):
        if want.dtype == object:
            assert got.tolist() == want.tolist()
        else:
            assert_same(got, want)
    tensors, errors = ref.read("InferResponse", wire)
    assert errors is None and len(tensors or []) == len(outputs)


def test_errors_round_trip(impl: Any) -> None:
    wire = graphpipe.encode_response([], [(400, "input 'x': bad"), (-1, "é")], kernels=impl)
    assert graphpipe.decode_response(wire, kernels=impl).errors == [
        (400, "input 'x': bad"),
        (-1, "é"),
    ]
    assert ref.read("InferResponse", wire) == (None, [(400, b"input 'x': bad"), (-1, "é".encode())])


def test_metadata_round_trip(impl: Any) -> None:
    meta = graphpipe.MetadataResponse(
        "m",
        "1.0",
        "oipcodec",
        "a model",
        [graphpipe.IOMetadata("x", "FP32", (-1, 3), "the input")],
        [graphpipe.IOMetadata("y", "BYTES", (-1,))],
    )
    wire = graphpipe.encode_metadata_response(meta, kernels=impl)
    assert graphpipe.decode_metadata_response(wire, kernels=impl) == meta
    fields = ref.read("MetadataResponse", wire)
    assert fields[:4] == (b"m", b"1.0", b"oipcodec", b"a model")
    assert fields[4] == [(b"x", b"the input", (-1, 3), 10)]
    assert meta.document()["outputs"] == [
        {"name": "y", "description": "", "shape": [-1], "type": "String"}
    ]
    assert graphpipe.decode_request(graphpipe.encode_metadata_request(kernels=impl)).kind == (
        "metadata"
    )


def test_bool_and_bf16_have_no_graphpipe_type(impl: Any) -> None:
    flags = np.array([True, False, True])
    halves = np.array([1.5, -2.0], dtype=np.float32)
    wire = graphpipe.encode_response(
        [Tensor("F", "BOOL", (3,), flags), Tensor("H", "BF16", (2,), halves)], kernels=impl
    )
    first, second = ref.read("InferResponse", wire)[0]
    assert first[0] == 1 and first[2] == b"\x01\x00\x01"  # Uint8
    assert second[0] == 10 and second[2] == halves.tobytes()  # Float32


def test_runtime_built_request(impl: Any) -> None:
    data = np.arange(6, dtype="<f4")
    wire = ref.build(
        "Request",
        (1, (b"", [b"x", b"s"], [(10, (2, 3), data.tobytes(), None), (12, (2,), None, [b"", b"\0a"])], None)),
    )  # fmt: skip
    request = graphpipe.decode_request(wire, kernels=impl)
    assert [t.name for t in request.inputs] == ["x", "s"]
    assert_same(request.inputs[0].data, data.reshape(2, 3))
    assert request.inputs[1].data.tolist() == [b"", b"\0a"]


def tensor_request(*tensors: tuple[Any, ...], names: list[bytes] | None = None) -> bytes:
    return ref.build("Request", (1, (None, names, list(tensors), None)))


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (tensor_request((0, (1,), b"x", None)), "input '#0': type Null: expected one of"),
        (tensor_request((13, (1,), b"x", None)), "input '#0': type unknown type 13"),
        (tensor_request((1, (2, -1), b"", None)), "input '#0': shape \\[2, -1\\]: dimensions must"),
        (tensor_request((1, (2**62, 4), b"", None)), "input '#0': shape .* describes"),
        (tensor_request((10, (2, 2), b"x" * 15, None)), "expected 16 bytes of data for 4 Float32"),
        (tensor_request((12, (2,), None, [b"a"])), "shape \\[2\\] holds 2 elements but string_val"),
        (tensor_request((12, (1,), b"x", [b"a"])), "a String tensor carries its elements in"),
        (tensor_request((1, (1,), b"x", [b"a"])), "a Uint8 tensor carries its elements in data"),
        (tensor_request((1, (1,), b"x", None), names=[]), None),
        (tensor_request((1, (1,), b"x", None), names=[b"a", b"b"]), "2 input names for 1 input"),
        (tensor_request((1, (1,), b"x", None), names=[b"\xff"]), "input_names\\[0\\] is not UTF-8"),
        (
            tensor_request((1, (1,), b"x", None), (1, (1,), b"y", None), names=[b"a", b"a"]),
            "input 'a' appears more than once",
        ),
        (ref.build("Request", (0, None)), "neither an InferRequest nor a MetadataRequest"),
    ],
)
def test_refused_requests(impl: Any, wire: bytes, message: str | None) -> None:
    if message is None:
        assert graphpipe.decode_request(wire, kernels=impl).inputs[0].data.tolist() == [120]
        return
    with pytest.raises(DecodeError, match=message):
        graphpipe.decode_request(wire, kernels=impl)


def test_limits(impl: Any) -> None:
    wire = tensor_request(*[(1, (1,), b"x", None)] * 3)
    with pytest.raises(LimitError, match="3 input tensors, more than the limit of 2"):
        graphpipe.decode_request(wire, limits=Limits(max_tensors=2), kernels=impl)
    with pytest.raises(LimitError, match="more than 2 elements together"):
        graphpipe.decode_request(wire, limits=Limits(max_request_elements=2), kernels=impl)
    with pytest.raises(LimitError, match=r"a body of .* bytes, more than the limit of 10"):
        graphpipe.decode_request(wire, limits=Limits(max_body_bytes=10), kernels=impl)


def test_shape_overflow_is_refused_before_allocating(impl: Any) -> None:
    # int64 dimensions whose product overflows 64 bits: Python's integers do not wrap.
    wire = tensor_request((11, (2**32, 2**32, 16), b"", None))
    with pytest.raises(LimitError, match="describes 295147905179352825856 elements"):
        graphpipe.decode_request(wire, kernels=impl)


def test_encode_refuses(impl: Any) -> None:
    with pytest.raises(
        EncodeError,
        match=r"field 'Request.req.input_tensors\[1\].string_val': element 0: BYTES elements",
    ):
        graphpipe.encode_request([np.zeros(1), np.array([1], dtype=object)], kernels=impl)
    with pytest.raises(EncodeError, match="complex"):
        graphpipe.encode_request([np.zeros(1, dtype=complex)], kernels=impl)


def test_big_endian_and_strided_inputs_are_sent_little_endian(impl: Any) -> None:
    array = np.arange(12, dtype=">i4").reshape(3, 4)[:, ::2]
    wire = body(graphpipe.encode_request([array], kernels=impl))
    (tensor,) = graphpipe.decode_request(wire, kernels=impl).inputs
    assert tensor.data.tolist() == array.tolist()
    assert struct.unpack_from("<i", tensor.data.tobytes(), 4)[0] == 2
