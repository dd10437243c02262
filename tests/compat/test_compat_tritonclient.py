"""oipcodec.compat.tritonclient against the installed tritonclient: same results, same input."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import oipcodec
from oipcodec import pb, rest
from oipcodec.compat import tritonclient as compat
from tests.support.arrays import assert_same as _same
from tests.support.peers import require_peer

tc_utils = require_peer("tritonclient.utils")
tc_http = require_peer("tritonclient.http")
tc_grpc = require_peer("tritonclient.grpc")
ml_dtypes = require_peer("ml_dtypes")

NAMES = ["BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
         "FP16", "FP32", "FP64", "BF16", "BYTES"]  # fmt: skip


# ----------------------------------------------------------------------------- framing

BYTES_CASES = [
    np.array([b"a", b"", b"\x00\x01xyz"], dtype=object),
    np.array([["ab", "c\u00e9"], ["", "\U0001f600"]], dtype=object),
    np.array([b"x", "y", 3, 1.5, None, bytearray(b"z"), np.bytes_(b"q")], dtype=object),
    np.array([b"ab\x00", b"c", b""], dtype="S3"),
    np.array([[b"a", b"bb"], [b"ccc", b"d"]], dtype="S")[:, ::-1],
    np.array(b"scalar", dtype=object),
    np.array([], dtype=object),
    np.zeros((0, 3), dtype=np.float32),
    np.array([b"x" * 1000] * 50, dtype=object).reshape(5, 10).T,
]


@pytest.mark.parametrize("array", BYTES_CASES, ids=range(len(BYTES_CASES)))
def test_serialize_byte_tensor_matches(array: np.ndarray) -> None:
    _same(compat.serialize_byte_tensor(array), tc_utils.serialize_byte_tensor(array))


@given(st.lists(st.one_of(st.binary(max_size=20), st.text(max_size=10)), max_size=30))
def test_serialize_byte_tensor_matches_random(values: list[Any]) -> None:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    _same(compat.serialize_byte_tensor(array), tc_utils.serialize_byte_tensor(array))


@pytest.mark.parametrize(
    "array",
    [np.array([1, 2], dtype=np.int32), np.array(["a", "b"]), np.array([1.0])],
    ids=["int32", "unicode", "float"],
)
def test_serialize_byte_tensor_refuses_as_tritonclient(array: np.ndarray) -> None:
    with pytest.raises(tc_utils.InferenceServerException) as theirs:
        tc_utils.serialize_byte_tensor(array)
    with pytest.raises(tc_utils.InferenceServerException) as ours:
        compat.serialize_byte_tensor(array)
    assert ours.value.message() == theirs.value.message()
    assert compat.InferenceServerException is tc_utils.InferenceServerException


def test_serialize_byte_tensor_unencodable_str_as_tritonclient() -> None:
    array = np.array(["ok", "\ud800"], dtype=object)
    with pytest.raises(UnicodeEncodeError):
        tc_utils.serialize_byte_tensor(array)
    with pytest.raises(UnicodeEncodeError):
        compat.serialize_byte_tensor(array)


@given(st.lists(st.binary(max_size=40), max_size=40))
def test_deserialize_bytes_tensor_matches(values: list[bytes]) -> None:
    framed = b"".join(struct.pack("<I", len(v)) + v for v in values)
    for buffer in (framed, bytearray(framed), memoryview(framed)):
        _same(compat.deserialize_bytes_tensor(buffer), tc_utils.deserialize_bytes_tensor(buffer))


def test_round_trip_through_both() -> None:
    array = np.array([b"a", b"bc", b"", b"\xff"], dtype=object)
    framed = compat.serialize_byte_tensor(array).item()
    _same(compat.deserialize_bytes_tensor(framed), tc_utils.deserialize_bytes_tensor(framed))


@pytest.mark.parametrize(
    "buffer",
    [b"\x01\x00", b"\x05\x00\x00\x00abc", b"\x01\x00\x00\x00a\x02", b"\xff\xff\xff\xff"],
    ids=["short-prefix", "past-end", "trailing-short-prefix", "huge-length"],
)
def test_deserialize_bytes_tensor_malformed_raises_struct_error(buffer: bytes) -> None:
    with pytest.raises(struct.error):
        tc_utils.deserialize_bytes_tensor(buffer)
    with pytest.raises(struct.error) as ours:
        compat.deserialize_bytes_tensor(buffer)
    assert isinstance(ours.value, oipcodec.DecodeError)
    assert "offset" in str(ours.value)


# ----------------------------------------------------------------------------- dtypes

DTYPE_INPUTS: list[Any] = [
    bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.object_, ml_dtypes.bfloat16,
    np.dtype(bool), np.dtype("i1"), np.dtype("i2"), np.dtype("i4"), np.dtype("i8"),
    np.dtype("u1"), np.dtype("u2"), np.dtype("u4"), np.dtype("u8"), np.dtype("f2"),
    np.dtype("f4"), np.dtype("f8"), np.dtype(object), np.dtype("S"), np.dtype("S7"),
    np.dtype(ml_dtypes.bfloat16), np.dtype(">f4"), np.dtype(">i8"), np.dtype("U3"),
    np.dtype("c8"), np.dtype("M8[s]"), np.dtype("V4"), np.dtype([("a", "i4")]),
    np.array([1.0], dtype=np.float32).dtype, np.array(["x"], dtype=object).dtype,
]  # fmt: skip


def _outcome(function: Any, value: Any) -> tuple[str, Any]:
    try:
        return "returned", function(value)
    except Exception as exc:
        return "raised", type(exc)


@pytest.mark.parametrize("value", DTYPE_INPUTS, ids=[repr(v) for v in DTYPE_INPUTS])
def test_np_to_triton_dtype_matches(value: Any) -> None:
    assert compat.np_to_triton_dtype(value) == tc_utils.np_to_triton_dtype(value)


@pytest.mark.parametrize("value", [int, float, "float32", 3, np.bool_, np.str_, np.bytes_])
def test_np_to_triton_dtype_odd_input_fails_as_tritonclient(value: Any) -> None:
    # tritonclient answers numpy.bool_ (a type, not bool) with an AttributeError: so do we
    theirs = _outcome(tc_utils.np_to_triton_dtype, value)
    assert theirs[0] == "raised"
    assert _outcome(compat.np_to_triton_dtype, value) == theirs


@pytest.mark.parametrize(
    "name",
    [*NAMES, "fp32", "STRING", "", None, 3, ["FP32"], np.str_("INT8"), np.array("FP16"),
     np.array("nope"), np.array(["BOOL"])],
    ids=repr,
)  # fmt: skip
def test_triton_to_np_dtype_matches(name: Any) -> None:
    assert compat.triton_to_np_dtype(name) is tc_utils.triton_to_np_dtype(name)


# ----------------------------------------------------------------------------- results


def _sample(datatype: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    if datatype == "BYTES":
        return np.array([b"a", b"", b"xyz\x00", b"\xff" * 3, b"e", b"f"], dtype=object).reshape(
            2, 3
        )
    if datatype == "BOOL":
        return rng.integers(0, 2, 6).astype(bool).reshape(2, 3)
    dtype = np.dtype(compat.triton_to_np_dtype(datatype))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.max, 0, 1, 2, 3], dtype=dtype).reshape(2, 3)
    values = np.array([0.5, -0.0, np.inf, -np.inf, 1e-3, 3.25], dtype=np.float32)
    return values.astype(dtype).reshape(2, 3)


def _response(datatype: str) -> oipcodec.InferResponse:
    return oipcodec.InferResponse(
        "m", [oipcodec.Tensor.from_array("OUT", _sample(datatype))], id="7"
    )


@pytest.mark.parametrize("datatype", NAMES)
def test_decode_http_result_binary_matches_as_numpy(datatype: str) -> None:
    body, header_length = rest.encode_response(_response(datatype), binary=True)
    result = tc_http.InferResult.from_response_body(body, header_length=header_length)
    ours = compat.decode_http_result(result).output("OUT").data
    _same(np.asarray(ours), result.as_numpy("OUT"))
    _same(compat.decode_http_body(body, header_length).output("OUT").data, result.as_numpy("OUT"))


@pytest.mark.parametrize("datatype", [n for n in NAMES if n not in ("FP16", "BF16", "BYTES")])
def test_decode_http_result_json_matches_as_numpy(datatype: str) -> None:
    body, header_length = rest.encode_response(_response(datatype), binary=False)
    assert header_length is None
    result = tc_http.InferResult.from_response_body(body)
    _same(compat.decode_http_result(result).output("OUT").data, result.as_numpy("OUT"))


def test_decode_http_result_json_bytes_are_bytes() -> None:
    body, _ = rest.encode_response(_response("BYTES").__class__(
        "m", [oipcodec.Tensor.from_array("OUT", np.array([b"ab", b"c"], dtype=object))]
    ), binary=False)  # fmt: skip
    result = tc_http.InferResult.from_response_body(body)
    assert result.as_numpy("OUT").tolist() == ["ab", "c"]
    assert compat.decode_http_result(result).output("OUT").data.tolist() == [b"ab", b"c"]


@pytest.mark.parametrize("datatype", NAMES)
def test_decode_grpc_response_matches_as_numpy(datatype: str) -> None:
    data = pb.encode_response(_response(datatype), raw=True)
    message = tc_grpc.service_pb2.ModelInferResponse.FromString(data)
    result = tc_grpc.InferResult(message)
    expected = result.as_numpy("OUT")
    for given_ in (result, message, data):
        _same(compat.decode_grpc_response(given_).output("OUT").data, expected)


@pytest.mark.parametrize("datatype", [n for n in NAMES if n not in ("FP16", "BF16")])
def test_decode_grpc_response_typed_contents(datatype: str) -> None:
    # tritonclient's as_numpy reads only raw and bytes contents (and the latter fails under
    # numpy 2: np.array(copy=False)), so typed contents are checked against the sent array.
    data = pb.encode_response(_response(datatype), raw=False)
    message = tc_grpc.service_pb2.ModelInferResponse.FromString(data)
    decoded = compat.decode_grpc_response(tc_grpc.InferResult(message)).output("OUT").data
    _same(np.ascontiguousarray(decoded), _sample(datatype))


def test_decode_http_result_bad_binary_names_the_output() -> None:
    body, header_length = rest.encode_response(_response("BYTES"), binary=True)
    broken = body[:-1]
    result = tc_http.InferResult.from_response_body(broken, header_length=header_length)
    with pytest.raises(oipcodec.DecodeError, match="OUT"):
        compat.decode_http_result(result)


@pytest.mark.parametrize(
    ("output", "match"),
    [
        ({"data": [1, 2, 3]}, r"output 'OUT': shape \[2, 2\] holds 4 elements but data has 3"),
        ({"data": [1, 2, 3, 1.5]}, r"output 'OUT': element 3"),
        ({}, "output 'OUT': has neither 'data' nor 'binary_data_size'"),
    ],
)
def test_decode_http_result_bad_json_output_names_it(output: dict[str, Any], match: str) -> None:
    document = {
        "model_name": "m",
        "outputs": [{"name": "OUT", "datatype": "INT32", "shape": [2, 2], **output}],
    }
    result = tc_http.InferResult.from_response_body(orjson.dumps(document))
    with pytest.raises(oipcodec.OIPError, match=match):
        compat.decode_http_result(result)


def test_decode_http_result_bad_binary_size_names_the_output() -> None:
    header = orjson.dumps({"model_name": "m", "outputs": [{"name": "OUT", "datatype": "INT8",
                           "shape": [1], "parameters": {"binary_data_size": -1}}]})  # fmt: skip
    result = tc_http.InferResult.from_response_body(header + b"\x01", header_length=len(header))
    with pytest.raises(oipcodec.DecodeError, match="output 'OUT': 'binary_data_size' must be"):
        compat.decode_http_result(result)
