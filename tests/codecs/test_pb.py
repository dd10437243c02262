"""oipcodec.pb: InferRequest / InferResponse to serialized ModelInfer messages and back, on both
kernel implementations, against the protobuf runtime and tritonclient.grpc."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from oipcodec import InferRequest, InferResponse, RequestedOutput, Tensor, datatypes, pb
from oipcodec.errors import DecodeError, EncodeError
from oipcodec.limits import Limits
from oipcodec.proto import open_inference_grpc_pb2 as pb2

ml_dtypes = pytest.importorskip("ml_dtypes")

NUMERIC = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
           "FP16", "FP32", "FP64"]  # fmt: skip
ALL = [*NUMERIC, "BF16", "BYTES"]


def sample(datatype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape))
    if datatype == "BYTES":
        return np.array(
            [rng.bytes(int(n)) for n in rng.integers(0, 9, count)], dtype=object
        ).reshape(shape)
    if datatype == "BF16":
        return rng.standard_normal(count).astype(ml_dtypes.bfloat16).reshape(shape)
    dtype = datatypes.to_numpy(datatype)
    if dtype.kind == "b":
        return rng.integers(0, 2, count).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True).reshape(shape)
    values = rng.standard_normal(count).astype(dtype)
    if count >= 4:
        values[:4] = [np.nan, np.inf, -0.0, -np.inf]
    return values.reshape(shape)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and a.tolist() == b.tolist()
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def make_request(datatypes_: list[str], shape: tuple[int, ...] = (2, 3)) -> InferRequest:
    inputs = [
        Tensor(f"in_{dt}", dt, shape, sample(dt, shape, i)) for i, dt in enumerate(datatypes_)
    ]
    return InferRequest(
        inputs,
        outputs=[RequestedOutput("out", {"binary_data": True}), RequestedOutput("o2")],
        id="req-1",
        parameters={"i": -5, "big": 2**64 - 1, "f": 0.25, "s": "wörld", "b": False},
        model_name="model",
        model_version="3",
    )


def assert_same_request(a: InferRequest, b: InferRequest) -> None:
    assert (a.id, a.model_name, a.model_version, a.parameters) == (
        b.id,
        b.model_name,
        b.model_version,
        b.parameters,
    )
    assert [type(v) for v in a.parameters.values()] == [type(v) for v in b.parameters.values()]
    assert a.outputs == b.outputs
    assert [t.name for t in a.inputs] == [t.name for t in b.inputs]
    for x, y in zip(a.inputs, b.inputs, strict=False):
        assert (x.datatype, x.shape, x.parameters) == (y.datatype, y.shape, y.parameters)
        assert same(x.data, y.data), x.name


# ---------------------------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize("raw", [True, False])
@pytest.mark.parametrize("datatype", ALL)
def test_round_trip_every_datatype(impl, datatype: str, raw: bool) -> None:
    request = make_request([datatype])
    data = pb.encode_request(request, raw=raw, kernels=impl)
    assert_same_request(pb.decode_request(data, kernels=impl), request)
    message = pb2.ModelInferRequest.FromString(data)
    typed = not raw and datatype not in ("FP16", "BF16")
    assert len(message.raw_input_contents) == (0 if typed else 1)
    assert message.inputs[0].HasField("contents") == typed


@pytest.mark.parametrize("raw", [True, False])
def test_round_trip_response_all_types(impl, raw: bool) -> None:
    outputs = [
        Tensor(f"o{i}", dt, (3,), sample(dt, (3,), i))
        for i, dt in enumerate(ALL)
        if dt not in ("FP16", "BF16")
    ]
    response = InferResponse("model", outputs, id="x", model_version="1", parameters={"p": 1.5})
    data = pb.encode_response(response, raw=raw, kernels=impl)
    back = pb.decode_response(data, kernels=impl)
    assert (back.model_name, back.id, back.model_version, back.parameters) == (
        "model",
        "x",
        "1",
        {"p": 1.5},
    )
    for x, y in zip(outputs, back.outputs, strict=False):
        assert same(x.data, y.data)
    assert len(pb2.ModelInferResponse.FromString(data).raw_output_contents) == (
        len(outputs) if raw else 0
    )


@pytest.mark.parametrize("raw", [True, False])
def test_many_inputs_keep_their_order(impl, raw: bool) -> None:
    names = [f"t{i:03d}" for i in range(300)][::-1]
    request = InferRequest(
        [Tensor(n, "INT32", (1,), np.array([i], np.int32)) for i, n in enumerate(names)],
        model_name="m",
    )
    back = pb.decode_request(pb.encode_request(request, raw=raw, kernels=impl), kernels=impl)
    assert [t.name for t in back.inputs] == names
    assert [int(t.data[0]) for t in back.inputs] == list(range(300))


@pytest.mark.parametrize("raw", [True, False])
@pytest.mark.parametrize("datatype", ALL)
def test_empty_tensors(impl, datatype: str, raw: bool) -> None:
    request = InferRequest(
        [Tensor("e", datatype, (0, 4), sample(datatype, (0, 4)))], model_name="m"
    )
    back = pb.decode_request(pb.encode_request(request, raw=raw, kernels=impl), kernels=impl)
    assert back.inputs[0].shape == (0, 4) and back.inputs[0].data.shape == (0, 4)


def test_scalar_shape(impl) -> None:
    request = InferRequest([Tensor("s", "FP64", (), np.array(2.5))], model_name="m")
    for raw in (True, False):
        back = pb.decode_request(pb.encode_request(request, raw=raw, kernels=impl), kernels=impl)
        assert back.inputs[0].shape == () and float(back.inputs[0].data) == 2.5


def test_parameters_keep_their_types(impl) -> None:
    params = {
        "b": True,
        "i": -(2**63),
        "j": 2**63 - 1,
        "u": 2**63,
        "umax": 2**64 - 1,
        "d": -0.0,
        "s": "",
        "f": 1e308,
    }
    data = pb.encode_request(InferRequest([], parameters=params, model_name="m"), kernels=impl)
    message = pb2.ModelInferRequest.FromString(data)
    kinds = {k: v.WhichOneof("parameter_choice") for k, v in message.parameters.items()}
    assert kinds == {"b": "bool_param", "i": "int64_param", "j": "int64_param", "u": "uint64_param",
                     "umax": "uint64_param", "d": "double_param", "s": "string_param", "f": "double_param"}  # fmt: skip
    back = pb.decode_request(data, kernels=impl).parameters
    assert back == params and {k: type(v) for k, v in back.items()} == {
        k: type(v) for k, v in params.items()
    }
    with pytest.raises(EncodeError, match="fits neither"):
        pb.encode_request(InferRequest([], parameters={"x": 2**64}, model_name="m"), kernels=impl)


def test_tensor_and_output_parameters(impl) -> None:
    request = InferRequest(
        [Tensor("a", "FP32", (1,), np.ones(1, np.float32), {"x": "y", "n": 3})],
        outputs=[RequestedOutput("o", {"binary_data": True, "classification": 2})],
        model_name="m",
    )
    back = pb.decode_request(pb.encode_request(request, kernels=impl), kernels=impl)
    assert back.inputs[0].parameters == {"x": "y", "n": 3}
    assert back.outputs == request.outputs
    assert (
        pb.decode_request(
            pb.encode_request(InferRequest([], model_name="m"), kernels=impl), kernels=impl
        ).outputs
        is None
    )


@given(
    array=hnp.arrays(
        st.sampled_from(
            [np.float32, np.float64, np.int8, np.int16, np.uint16, np.int64, np.uint64, np.bool_]
        ),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    ),
    raw=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_round_trip_random_arrays(impl, array: np.ndarray, raw: bool) -> None:
    request = InferRequest([Tensor.from_array("x", array)], model_name="m")
    back = pb.decode_request(pb.encode_request(request, raw=raw, kernels=impl), kernels=impl)
    assert same(back.inputs[0].data, array.astype(array.dtype.newbyteorder("=")))


def test_any_layout_and_byte_order_is_written_little_endian_row_major(impl) -> None:
    base = np.arange(12, dtype=">i4").reshape(3, 4)
    for array in (base, base.T, base[::-1, ::2], np.asfortranarray(base)):
        for raw in (True, False):
            data = pb.encode_request(
                InferRequest([Tensor.from_array("x", array)], model_name="m"), raw=raw, kernels=impl
            )
            assert pb.decode_request(data, kernels=impl).inputs[0].data.tolist() == array.tolist()


def test_bf16_from_float32_is_rounded(impl) -> None:
    values = np.array([1.0, 1.00390625, np.nan, -np.inf], np.float32)
    data = pb.encode_request(
        InferRequest([Tensor("b", "BF16", (4,), values)], model_name="m"), kernels=impl
    )
    out = pb.decode_request(data, kernels=impl).inputs[0].data
    assert out.dtype == ml_dtypes.bfloat16
    assert same(out, values.astype(ml_dtypes.bfloat16))


# ---------------------------------------------------------------------------------------------
# Views, against the runtime and tritonclient


def test_decoded_arrays_are_read_only_views(impl) -> None:
    request = InferRequest(
        [Tensor("a", "FP32", (1000,), np.arange(1000, dtype=np.float32))], model_name="m"
    )
    for raw in (True, False):
        data = bytearray(pb.encode_request(request, raw=raw, kernels=impl))
        array = pb.decode_request(data, kernels=impl).inputs[0].data
        assert not array.flags.writeable
        assert np.shares_memory(array, np.frombuffer(data, np.uint8))


@pytest.mark.parametrize("raw", [True, False])
def test_our_output_equals_runtime_built_message(impl, raw: bool) -> None:
    request = make_request(["FP32", "INT16", "UINT64", "BYTES", "BOOL", "FP64", "INT64", "UINT8"])
    ours = pb2.ModelInferRequest.FromString(pb.encode_request(request, raw=raw, kernels=impl))
    expected = pb2.ModelInferRequest(model_name="model", model_version="3", id="req-1")
    for key, value in request.parameters.items():
        p = expected.parameters[key]
        if isinstance(value, bool):
            p.bool_param = value
        elif isinstance(value, int):
            if value < 2**63:
                p.int64_param = value
            else:
                p.uint64_param = value
        elif isinstance(value, float):
            p.double_param = value
        else:
            p.string_param = value
    for t in request.inputs:
        m = expected.inputs.add(name=t.name, datatype=t.datatype, shape=t.shape)
        if raw:
            if t.datatype == "BYTES":
                expected.raw_input_contents.append(
                    b"".join(len(e).to_bytes(4, "little") + e for e in t.data.ravel())
                )
            else:
                expected.raw_input_contents.append(
                    t.data.astype(t.data.dtype.newbyteorder("<")).tobytes()
                )
        else:
            field = datatypes.get(t.datatype).contents_field
            getattr(m.contents, field).extend(t.data.ravel().tolist())
    for o in request.outputs or []:
        r = expected.outputs.add(name=o.name)
        for key, value in o.parameters.items():
            r.parameters[key].bool_param = value
    assert ours == expected


@pytest.mark.parametrize("datatype", [dt for dt in ALL if dt not in ("FP16", "BF16")])
def test_runtime_typed_messages_decode(impl, datatype: str) -> None:
    array = sample(datatype, (2, 3), 5)
    message = pb2.ModelInferResponse(model_name="m")
    t = message.outputs.add(name="x", datatype=datatype, shape=[2, 3])
    getattr(t.contents, datatypes.get(datatype).contents_field).extend(array.ravel().tolist())
    out = pb.decode_response(message.SerializeToString(), kernels=impl).outputs[0].data
    assert same(out, array)


@pytest.mark.parametrize("datatype", ALL)
def test_tritonclient_requests_decode(impl, datatype: str) -> None:
    grpcclient = pytest.importorskip("tritonclient.grpc")
    from tritonclient.grpc import _utils

    array = sample(datatype, (3, 2), 7)
    infer_input = grpcclient.InferInput("x", list(array.shape), datatype)
    infer_input.set_data_from_numpy(array)
    outputs = [grpcclient.InferRequestedOutput("y")]
    message = _utils._get_inference_request(
        model_name="m", inputs=[infer_input], model_version="", request_id="r1", outputs=outputs,
        sequence_id=0, sequence_start=False, sequence_end=False, priority=0, timeout=None,
        parameters=None,
    )  # fmt: skip
    request = pb.decode_request(message.SerializeToString(), kernels=impl)
    assert same(request.inputs[0].data, array)
    assert request.id == "r1" and request.outputs == [RequestedOutput("y")]


@pytest.mark.parametrize("datatype", ALL)
def test_tritonclient_reads_our_responses(impl, datatype: str) -> None:
    grpcclient = pytest.importorskip("tritonclient.grpc")
    from tritonclient.grpc import service_pb2

    array = sample(datatype, (2, 2), 3)
    data = pb.encode_response(
        InferResponse("m", [Tensor("y", datatype, (2, 2), array)]), kernels=impl
    )
    result = grpcclient.InferResult(service_pb2.ModelInferResponse.FromString(data))
    theirs = result.as_numpy("y")
    if datatype == "BYTES":
        assert theirs.tolist() == array.tolist()
    elif datatype == "BF16":
        assert theirs.astype(np.float32).tobytes() == array.astype(np.float32).tobytes()
    else:
        assert same(theirs, array)


# ---------------------------------------------------------------------------------------------
# Errors


def request_message(**fields: Any) -> pb2.ModelInferRequest:
    m = pb2.ModelInferRequest(model_name="m")
    t = m.inputs.add(
        name="x", datatype=fields.get("datatype", "FP32"), shape=fields.get("shape", [2])
    )
    if "raw" in fields:
        m.raw_input_contents.append(fields["raw"])
    if "contents" in fields:
        field, values = fields["contents"]
        getattr(t.contents, field).extend(values)
    return m


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (
            request_message(raw=b"\x00" * 7),
            r"input 'x': expected 8 bytes for 2 FP32 elements of shape \[2\], got 7",
        ),
        (
            request_message(datatype="BYTES", raw=b"\x01\x00\x00\x00a"),
            "input 'x': byte offset 5: expected 2 BYTES elements, the buffer holds only 1",
        ),
        (
            request_message(contents=("fp32_contents", [1.0])),
            "input 'x': fp32_contents holds 1 values, the shape needs 2",
        ),
        (
            request_message(contents=("int_contents", [1, 2])),
            "input 'x': contents hold int_contents, but datatype FP32 uses fp32_contents",
        ),
        (
            request_message(datatype="INT8", contents=("int_contents", [1, 200])),
            "input 'x': element 1: int_contents value 200 is out of range for INT8",
        ),
        (
            request_message(datatype="FP16", contents=("fp32_contents", [1.0, 2.0])),
            "input 'x': FP16 has no typed contents field",
        ),
        (
            request_message(datatype="fp32", raw=b""),
            "input 'x': byte offset 3: unknown datatype 'fp32'",
        ),
        (request_message(shape=[-1], raw=b""), "input 'x'.*dimensions must be non-negative"),
        (request_message(), "input 'x': no data: 2 elements expected"),
    ],
)
def test_decode_errors_name_the_tensor(impl, message: Any, error: str) -> None:
    with pytest.raises(DecodeError, match=error):
        pb.decode_request(message.SerializeToString(), kernels=impl)


def test_duplicate_names(impl) -> None:
    m = pb2.ModelInferRequest()
    for _ in range(2):
        m.inputs.add(name="x", datatype="FP32", shape=[0])
    with pytest.raises(DecodeError, match=r"input 'x': byte offset .*: duplicate input name"):
        pb.decode_request(m.SerializeToString(), kernels=impl)
    tensors = [Tensor("x", "FP32", (0,), np.zeros(0, np.float32))] * 2
    with pytest.raises(EncodeError, match="input 'x': duplicate name"):
        pb.encode_request(InferRequest(tensors, model_name="m"), kernels=impl)
    with pytest.raises(EncodeError, match="output 'x': duplicate name"):
        pb.encode_response(InferResponse("m", tensors), kernels=impl)


def test_shape_limit_is_checked_before_allocating(impl) -> None:
    m = request_message(shape=[2**40, 2**20], raw=b"")
    with pytest.raises(DecodeError, match="more than the limit"):
        pb.decode_request(m.SerializeToString(), kernels=impl)
    m = request_message(shape=[5], raw=b"\x00" * 20)
    with pytest.raises(DecodeError, match="more than 4 elements together"):
        pb.decode_request(
            m.SerializeToString(), kernels=impl, limits=Limits(max_request_elements=4)
        )


def test_encode_errors(impl) -> None:
    bad = np.array([b"a", 3], dtype=object)
    with pytest.raises(
        EncodeError, match="input 'x': element 1: BYTES elements must be bytes or str"
    ):
        pb.encode_request(
            InferRequest([Tensor("x", "BYTES", (2,), bad)], model_name="m"), raw=False, kernels=impl
        )
    with pytest.raises(EncodeError, match="input 'x': element 1"):
        pb.encode_request(
            InferRequest([Tensor("x", "BYTES", (2,), bad)], model_name="m"), raw=True, kernels=impl
        )


@given(data=st.data())
@settings(max_examples=300, deadline=None)
def test_fuzzed_messages_raise_only_decode_error(impl, data: Any) -> None:
    dts = data.draw(st.lists(st.sampled_from(ALL), min_size=1, max_size=3, unique=True))
    raw = data.draw(st.booleans())
    message = bytearray(pb.encode_request(make_request(dts, (2,)), raw=raw, kernels=impl))
    for _ in range(data.draw(st.integers(0, 3))):
        message[data.draw(st.integers(0, len(message) - 1))] = data.draw(st.integers(0, 255))
    message = message[: data.draw(st.integers(0, len(message)))]
    with contextlib.suppress(DecodeError):
        pb.decode_request(bytes(message), kernels=impl)


@pytest.mark.parametrize("name", [None, ""])
def test_a_request_must_name_its_model(impl, name: str | None) -> None:
    """ModelInferRequest.model_name is required: a request without one is refused, not sent
    as a message the server can only answer with an error."""
    request = InferRequest([Tensor("x", "INT8", (1,), np.ones(1, np.int8))], model_name=name)
    with pytest.raises(EncodeError) as caught:
        pb.encode_request(request, kernels=impl)
    assert str(caught.value) == (
        f"the request names no model: ModelInferRequest.model_name is required "
        f"(model_name={name!r})"
    )
