"""The REST body codec: JSON, the binary tensor data extension, compression, errors.

Every test that encodes or decodes takes the ``codec`` fixture: the codec's functions bound to
one kernel implementation, so each runs on the native kernels and on the pure twins in one
pytest run.
"""

from __future__ import annotations

import functools
import gzip
import zlib
from types import SimpleNamespace
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from oipcodec import InferRequest, InferResponse, RequestedOutput, Tensor, datatypes, rest
from oipcodec.errors import DecodeError, EncodeError, LimitError
from oipcodec.limits import Limits

ml_dtypes = pytest.importorskip("ml_dtypes")

_CODEC = ("decode_request", "decode_response", "encode_request", "encode_response",
          "encode_response_parts")  # fmt: skip


@pytest.fixture
def codec(impl: SimpleNamespace) -> SimpleNamespace:
    """The REST codec's functions with ``kernels=`` one implementation (see conftest's impl)."""
    return SimpleNamespace(**{n: functools.partial(getattr(rest, n), kernels=impl) for n in _CODEC})


FIXED = [
    "BOOL",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "FP16",
    "FP32",
    "FP64",
    "BF16",
]
ALL = [*FIXED, "BYTES"]


def sample(datatype: str, shape: tuple[int, ...] = (2, 3), seed: int = 0) -> np.ndarray:
    """Values that exercise the datatype's edges: extremes, signed zero, subnormals, infinities."""
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape))
    if datatype == "BYTES":
        words = [b"", b"a", "caf\u00e9".encode(), b'quote"back\\slash', b"\x01ctl\n", b"x" * 40]
        return np.array([words[i % len(words)] for i in range(count)], dtype=object).reshape(shape)
    if datatype == "BOOL":
        return rng.integers(0, 2, count).astype(bool).reshape(shape)
    dtype = datatypes.to_numpy(datatype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
        edges = np.array([info.min, info.max, 0, 1], dtype=dtype)
    else:
        fi = ml_dtypes.finfo(dtype)  # numpy's floats and bfloat16 alike
        values = (rng.standard_normal(count) * 100).astype(dtype)
        edges = np.array(
            [
                -0.0,
                float(fi.max),
                -float(fi.max),
                float(fi.tiny),
                float(fi.smallest_subnormal),
                np.inf,
                -np.inf,
            ]
        ).astype(dtype)
    values[: min(count, len(edges))] = edges[:count]
    return values.reshape(shape)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values of equal shape; floats compared bit for bit (NaNs by NaN-ness)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or a.dtype == np.dtype(ml_dtypes.bfloat16):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(a64)
        if not np.array_equal(nan, np.isnan(b64)):
            return False
        bits = a.dtype.itemsize * 8
        ua = a.view(f"u{bits // 8}")[~nan]
        ub = b.astype(a.dtype).view(f"u{bits // 8}")[~nan]
        return bool(np.array_equal(ua, ub))
    return a.tolist() == b.tolist()


def request_with(*tensors: Tensor, **kwargs: Any) -> InferRequest:
    return InferRequest(list(tensors), **kwargs)


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("datatype", ALL)
@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("nested", [False, True])
def test_request_round_trip_every_datatype(
    codec, datatype: str, binary: bool, nested: bool
) -> None:
    data = sample(datatype)
    request = request_with(
        Tensor("x", datatype, data.shape, data, {"scale": 2, "note": "n", "f": 1.5, "b": True}),
        id="req-1",
        parameters={"priority": 3, "sequence_start": True, "ratio": 1.0, "tag": "t"},
    )
    body, header = codec.encode_request(request, binary=binary, nested=nested)
    assert (header is not None) == binary
    back = codec.decode_request(body, header)
    tensor = back.input("x")
    assert (tensor.name, tensor.datatype, tensor.shape) == ("x", datatype, data.shape)
    assert same(tensor.data, data)
    assert tensor.parameters == {"scale": 2, "note": "n", "f": 1.5, "b": True}
    assert back.id == "req-1"
    assert back.parameters["priority"] == 3 and type(back.parameters["priority"]) is int
    assert back.parameters["ratio"] == 1.0 and type(back.parameters["ratio"]) is float


@pytest.mark.parametrize("datatype", ALL)
@pytest.mark.parametrize("binary", [True, False])
def test_response_round_trip_every_datatype(codec, datatype: str, binary: bool) -> None:
    data = sample(datatype, (4,), seed=1)
    response = InferResponse("m", [Tensor("y", datatype, (4,), data)], id="7", model_version="2")
    body, header = codec.encode_response(response, binary=binary)
    back = codec.decode_response(body, header)
    assert (back.model_name, back.model_version, back.id) == ("m", "2", "7")
    assert same(back.output("y").data, data)


def test_mixed_binary_and_json_in_one_body(codec) -> None:
    tensors = [Tensor.from_array(f"t{i}", sample(dt, (3,), seed=i)) for i, dt in enumerate(ALL)]
    names = {t.name for t in tensors[::2]}
    body, header = codec.encode_request(request_with(*tensors), binary=names)
    assert header is not None
    doc = orjson.loads(body[:header])
    for entry in doc["inputs"]:
        assert ("data" in entry) == (entry["name"] not in names)
        assert ("binary_data_size" in entry.get("parameters", {})) == (entry["name"] in names)
    back = codec.decode_request(body, header)
    for tensor in tensors:
        assert same(back.input(tensor.name).data, tensor.data)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("binary", [True, False])
def test_compressed_round_trip(codec, encoding: str, binary: bool) -> None:
    data = sample("FP32", (64, 8))
    body, header = codec.encode_request(request_with(Tensor.from_array("x", data)), binary=binary)
    packed = rest.compress(body, encoding)
    assert len(packed) < len(body)
    back = codec.decode_request(packed, header, content_encoding=encoding)
    assert same(back.input("x").data, data)


def test_deflate_without_zlib_wrapper_is_accepted(codec) -> None:
    body, _ = codec.encode_request(request_with(Tensor.from_array("x", np.arange(5))), binary=False)
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    bare = raw.compress(body) + raw.flush()
    assert codec.decode_request(bare, None, "deflate").input("x").data.tolist() == list(range(5))


@given(
    array=hnp.arrays(
        dtype=st.sampled_from([np.int8, np.uint16, np.int64, np.float32, np.float64, np.bool_]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    ),
    binary=st.booleans(),
    nested=st.booleans(),
)
@settings(max_examples=150)
def test_round_trip_any_shape(codec, array: np.ndarray, binary: bool, nested: bool) -> None:
    body, header = codec.encode_request(
        request_with(Tensor.from_array("a", array)), binary=binary, nested=nested
    )
    back = codec.decode_request(body, header).input("a")
    assert back.shape == array.shape
    assert same(back.data, array)


def test_key_order_does_not_matter(codec) -> None:
    body = (
        b'{"inputs":[{"data":[[1,2],[3,4]],"parameters":{"p":1},"shape":[2,2],'
        b'"datatype":"INT32","name":"a"}],"id":"x"}'
    )
    request = codec.decode_request(body)
    assert request.input("a").data.tolist() == [[1, 2], [3, 4]]
    assert request.input("a").data.dtype == np.int32


def test_requested_outputs_and_binary_output_flags(codec) -> None:
    x = Tensor.from_array("x", np.zeros(2, np.float32))
    body, header = codec.encode_request(
        request_with(
            x,
            outputs=[RequestedOutput("o1"), RequestedOutput("o2", {"binary_data": False, "k": 5})],
        )
    )
    doc = orjson.loads(body[:header])
    assert doc["outputs"] == [
        {"name": "o1", "parameters": {"binary_data": True}},
        {"name": "o2", "parameters": {"binary_data": False, "k": 5}},
    ]
    body, header = codec.encode_request(request_with(x))
    assert orjson.loads(body[:header])["parameters"] == {"binary_data_output": True}
    body, header = codec.encode_request(request_with(x), binary=False)
    assert header is None and "parameters" not in orjson.loads(body)
    back = codec.decode_request(
        *codec.encode_request(request_with(x, outputs=[RequestedOutput("o", {"k": 1})]))
    )
    assert back.outputs == [RequestedOutput("o", {"k": 1, "binary_data": True})]


# ----------------------------------------------------------------------------- zero copy


def test_binary_inputs_are_read_only_views_at_any_alignment(codec) -> None:
    data = np.arange(1000, dtype=np.float64)
    header = orjson.dumps(
        {
            "inputs": [
                {
                    "name": "x",
                    "datatype": "FP64",
                    "shape": [1000],
                    "parameters": {"binary_data_size": data.nbytes},
                }
            ]
        }
    )
    seen = set()
    for pad in range(8):  # JSON may end with white space: the tensor starts at every alignment
        json_part = header + b" " * pad
        body = json_part + data.tobytes()
        whole = np.frombuffer(body, np.uint8)
        decoded = codec.decode_request(body, len(json_part)).input("x").data
        assert same(decoded, data)
        assert np.shares_memory(decoded, whole)  # no copy, whatever the size
        assert not decoded.flags.writeable
        aligned = (whole.ctypes.data + len(json_part)) % 8 == 0
        assert decoded.flags.aligned == aligned
        seen.add(aligned)
    assert seen == {True, False}


# ----------------------------------------------------------------------------- peer interop


def _triton_inputs(httpclient: Any, arrays: dict[str, np.ndarray], binary: bool) -> list[Any]:
    inputs = []
    for name, array in arrays.items():
        tensor = httpclient.InferInput(name, list(array.shape), datatypes.datatype_of(array))
        tensor.set_data_from_numpy(array, binary_data=binary)
        inputs.append(tensor)
    return inputs


@pytest.mark.parametrize("binary", [True, False])
def test_decodes_tritonclient_request_bodies(codec, binary: bool) -> None:
    httpclient = pytest.importorskip("tritonclient.http")
    arrays = {
        "INPUT0": np.arange(16, dtype=np.int32).reshape(1, 16),
        "F": sample("FP32", (2, 5)),
        "D": sample("FP64", (3,)),
        "S": np.array([b"one", "tw\u00f6".encode(), b""], dtype=object),
        "B": np.array([[True, False]]),
        "U": sample("UINT64", (4,)),
    }
    if binary:
        arrays["H"] = sample("FP16", (2, 2))
    inputs = _triton_inputs(httpclient, arrays, binary)
    outputs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary)]
    body, json_size = httpclient.InferenceServerClient.generate_request_body(
        inputs, outputs=outputs, request_id="abc", parameters={"custom": 7}
    )
    request = codec.decode_request(body, json_size)
    assert request.id == "abc" and request.parameters == {"custom": 7}
    assert [o.name for o in request.outputs or []] == ["OUTPUT0"]
    for name, array in arrays.items():
        assert same(request.input(name).data, array), name


@pytest.mark.parametrize("binary", [True, False])
def test_tritonclient_reads_our_response_bodies(codec, binary: bool) -> None:
    httpclient = pytest.importorskip("tritonclient.http")
    outputs = {
        "OUTPUT0": np.arange(16, dtype=np.int32).reshape(1, 16),
        "F": sample("FP32", (2, 5)),
        "S": np.array([b"x", b"yz"], dtype=object),
        "Q": sample("INT64", (3,)),
    }
    response = InferResponse(
        "simple", [Tensor.from_array(n, a) for n, a in outputs.items()], id="1"
    )
    body, header = codec.encode_response(response, binary=binary)
    result = httpclient.InferResult.from_response_body(body, False, header)
    assert result.get_response()["model_name"] == "simple"
    for name, array in outputs.items():
        got = result.as_numpy(name)
        if not binary and array.dtype == object:  # tritonclient gives JSON strings back as str
            got = np.array([s.encode() for s in got.tolist()], dtype=object)
        assert same(got, array), name


def test_tritonclient_reads_bf16_binary_output(codec) -> None:
    httpclient = pytest.importorskip("tritonclient.http")
    values = sample("BF16", (6,))
    body, header = codec.encode_response(
        InferResponse("m", [Tensor.from_array("h", values)]), binary=True
    )
    result = httpclient.InferResult.from_response_body(body, False, header)
    assert same(result.as_numpy("h").astype(ml_dtypes.bfloat16), values)


# ----------------------------------------------------------------------------- malformed


def _body(inputs: list[dict[str, Any]], **extra: Any) -> bytes:
    return orjson.dumps({"inputs": inputs, **extra})


GOOD = {"name": "a", "datatype": "INT32", "shape": [2], "data": [1, 2]}


@pytest.mark.parametrize(
    ("body", "header", "message"),
    [
        (
            _body([GOOD]),
            10_000,
            r"Inference-Header-Content-Length 10000 is outside the \d+-byte body",
        ),
        (_body([GOOD]), -1, r"Inference-Header-Content-Length -1 is outside"),
        (_body([GOOD]), "12x", r"Inference-Header-Content-Length must be an integer, got '12x'"),
        (_body([GOOD]), 0, r"a raw binary request with no JSON"),
        (b"[1, 2]", None, r"byte offset 0: invalid JSON: expected a JSON object, got '\['"),
        (b'"text"', None, r"expected a JSON object"),
        (b'{"inputs": [', None, r"JSON ends early"),
        (b'{"inputs": []} trailing', None, r"expected the end of the JSON text"),
        (b'{"id": "x"}', None, r"the body has no 'inputs'"),
        (_body([GOOD, GOOD]), None, r"input 'a' appears more than once"),
        (_body([{**GOOD, "datatype": "FLOAT"}]), None, r"input 'a': unknown datatype 'FLOAT'"),
        (
            _body([{**GOOD, "shape": [-2]}]),
            None,
            r"input 'a': shape \[-2\]: dimensions must be non-negative",
        ),
        (
            _body([{**GOOD, "shape": [2**40, 2**40]}]),
            None,
            r"input 'a': shape .* more than the limit",
        ),
        (_body([{**GOOD, "shape": "2"}]), None, r"input 'a': 'shape' must be a list"),
        (
            _body([{k: v for k, v in GOOD.items() if k != "shape"}]),
            None,
            r"^input 'a': has no 'shape' \(every tensor gives its name, shape and datatype\)$",
        ),
        (
            _body([{k: v for k, v in GOOD.items() if k != "datatype"}]),
            None,
            r"^input 'a': has no 'datatype'",
        ),
        (_body([{**GOOD, "data": [1, 2, 3]}]), None, r"input 'a'"),
        (_body([{**GOOD, "data": [1, 2.5]}]), None, r"input 'a': element 1 at byte offset \d+"),
        (
            _body([{"name": "a", "datatype": "INT32", "shape": [2]}]),
            None,
            r"has neither 'data' nor 'binary_data_size'",
        ),
        (
            _body([{**GOOD, "parameters": {"binary_data_size": 8}}]),
            None,
            r"has both 'data' and 'binary_data_size'",
        ),
        (
            _body([{**GOOD, "parameters": {"p": [1]}}]),
            None,
            r"parameter 'p' must be a string, number or boolean",
        ),
        (_body([{**GOOD, "name": 3}]), None, r"input 0 needs a string 'name'"),
        (_body([GOOD], id=5), None, r"'id' must be a string"),
    ],
)
def test_malformed_requests(codec, body: bytes, header: Any, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        codec.decode_request(body, header)


def _binary_request(
    size: int, payload: bytes, shape: list[int], datatype: str = "FP32"
) -> tuple[bytes, int]:
    header = orjson.dumps(
        {
            "inputs": [
                {
                    "name": "x",
                    "datatype": datatype,
                    "shape": shape,
                    "parameters": {"binary_data_size": size},
                }
            ]
        }
    )
    return header + payload, len(header)


def test_binary_size_disagreeing_with_shape(codec) -> None:
    body, header = _binary_request(8, bytes(8), [3])
    with pytest.raises(
        DecodeError,
        match=r"input 'x': expected 12 bytes for 3 FP32 elements of shape \[3\], got 8",
    ):
        codec.decode_request(body, header)


def test_missing_binary_bytes_use_tritons_wording(codec) -> None:
    body, header = _binary_request(12, bytes(8), [3])
    with pytest.raises(
        DecodeError, match=r"unexpected size for input 'x', expecting 12 bytes for model 'm'"
    ):
        codec.decode_request(body, header, model_name="m")


def test_extra_binary_bytes_use_tritons_wording(codec) -> None:
    body, header = _binary_request(12, bytes(13), [3])
    with pytest.raises(
        DecodeError, match=r"unexpected additional input data for model 'm': 1 bytes"
    ):
        codec.decode_request(body, header, model_name="m")


def test_binary_bytes_framing_validated_against_shape(codec) -> None:
    payload = b"\x01\x00\x00\x00a\x05\x00\x00\x00b"
    body, header = _binary_request(len(payload), payload, [2], "BYTES")
    with pytest.raises(
        DecodeError,
        match=r"input 'x': element 1 at byte offset \d+: BYTES length prefix says 5 bytes",
    ):
        codec.decode_request(body, header)


def test_binary_bool_must_be_zero_or_one(codec) -> None:
    body, header = _binary_request(3, b"\x00\x01\x02", [3], "BOOL")
    with pytest.raises(
        DecodeError,
        match=r"input 'x': element 2 at byte offset \d+: BOOL bytes must be 0 or 1, got 2",
    ):
        codec.decode_request(body, header)


@pytest.mark.parametrize("size", [-1, 1.5, True, "8"])
def test_bad_binary_data_size(codec, size: Any) -> None:
    body, header = _binary_request(0, b"", [0])
    body = body.replace(b'"binary_data_size":0', b'"binary_data_size":' + orjson.dumps(size))
    with pytest.raises(DecodeError, match=r"'binary_data_size' must be a non-negative integer"):
        codec.decode_request(body, header + len(orjson.dumps(size)) - 1)


def test_json_error_offsets_point_into_the_body(codec) -> None:
    body = b'{"inputs":[{"name":"a","datatype":"INT8","shape":[3],"data":[1,2,300]}]}'
    with pytest.raises(DecodeError) as info:
        codec.decode_request(body)
    assert info.value.tensor == "a" and info.value.index == 2
    assert body[info.value.offset : info.value.offset + 3] == b"300"


def test_body_limit_and_tensor_count_limit(codec) -> None:
    body = _body([GOOD])
    with pytest.raises(LimitError, match="larger than the limit"):
        codec.decode_request(body, limits=Limits(max_body_bytes=10))
    with pytest.raises(LimitError, match="more than the limit of 1"):
        codec.decode_request(_body([GOOD, {**GOOD, "name": "b"}]), limits=Limits(max_tensors=1))
    with pytest.raises(LimitError, match="more than the limit of 3 elements"):
        codec.decode_request(
            _body([GOOD, {**GOOD, "name": "b"}]), limits=Limits(max_request_elements=3)
        )


# ----------------------------------------------------------------------------- compression


def test_decompression_bomb_is_refused_while_inflating(codec) -> None:
    bomb = gzip.compress(b"\0" * (50 << 20))  # 50 MiB of zeros in ~50 KiB
    assert len(bomb) < 100_000
    with pytest.raises(LimitError, match="inflates past the limit of 1048576 bytes"):
        rest.decompress(bomb, "gzip", max_size=1 << 20)
    with pytest.raises(LimitError):
        codec.decode_request(bomb, None, "gzip", limits=Limits(max_decompressed_bytes=1 << 20))


@pytest.mark.parametrize(
    ("data", "encoding", "message"),
    [
        (gzip.compress(b"{}")[:-5], "gzip", "truncated"),
        (gzip.compress(b"{}") + b"xx", "gzip", "2 bytes follow the end"),
        (b"not compressed", "gzip", "invalid gzip body"),
        (b"{}", "br", "unsupported Content-Encoding 'br'"),
    ],
)
def test_bad_compressed_bodies(data: bytes, encoding: str, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        rest.decompress(data, encoding)


def test_header_length_counts_the_inflated_json(codec) -> None:
    body, header = codec.encode_request(request_with(Tensor.from_array("x", np.arange(4))))
    packed = rest.compress(body, "gzip")
    assert header is not None and header < len(body)
    assert codec.decode_request(packed, str(header), "gzip").input("x").data.tolist() == [
        0,
        1,
        2,
        3,
    ]


# ----------------------------------------------------------------------------- encoding errors


def test_encode_errors_name_the_tensor(codec) -> None:
    bad = Tensor("s", "BYTES", (1,), np.array([b"\xff\xfe"], dtype=object))
    with pytest.raises(EncodeError, match="input 's'"):
        codec.encode_request(request_with(bad), binary=False)
    assert codec.decode_request(*codec.encode_request(request_with(bad))).input(
        "s"
    ).data.tolist() == [b"\xff\xfe"]
    with pytest.raises(
        EncodeError, match="parameter 'p' must be a string, number or boolean, got list"
    ):
        codec.encode_request(
            request_with(Tensor.from_array("x", np.zeros(1)), parameters={"p": [1]})
        )
    with pytest.raises(EncodeError, match="not there"):
        codec.encode_request(request_with(Tensor.from_array("x", np.zeros(1))), binary=["y"])


def test_error_body() -> None:
    assert orjson.loads(rest.error_body(DecodeError("bad", tensor="x", kind="input"))) == {
        "error": "input 'x': bad"
    }
    assert rest.error_body("plain") == b'{"error":"plain"}'


# ------------------------------------------------------------------ response parts


@pytest.mark.parametrize("binary", [False, True, {"big"}, {"small"}])
def test_encode_response_parts_join_to_encode_response(codec, binary: Any) -> None:
    rng = np.random.default_rng(11)
    response = InferResponse(
        "m",
        [
            Tensor("small", "INT32", (3,), np.array([1, -2, 3], dtype=np.int32)),
            Tensor("big", "FP32", (40_000,), rng.random(40_000, dtype=np.float32)),
            Tensor("text", "BYTES", (2,), np.array([b"a\x00b", b'"q"'], dtype=object)),
            Tensor("big2", "FP64", (2, 10_000), rng.random((2, 10_000))),
        ],
        id="r1",
        parameters={"p": 1},
    )
    parts, header_length = codec.encode_response_parts(response, binary)
    body, expected_length = codec.encode_response(response, binary)
    assert b"".join(parts) == body
    assert header_length == expected_length
    # The large texts and binary tensors stand apart: nothing was joined into one buffer.
    names = [t.name for t in response.outputs]
    in_binary = set(names) if binary is True else set(binary or ())
    large_texts = [n for n in ("big", "big2") if n not in in_binary]
    assert len(parts) == 1 + 2 * len(large_texts) + len(in_binary)
    decoded = codec.decode_response(body, header_length)
    for sent, got in zip(response.outputs, decoded.outputs, strict=True):
        assert got.name == sent.name and np.array_equal(got.data, sent.data)


def test_a_nul_in_a_string_does_not_split_the_envelope(codec) -> None:
    # orjson escapes control characters, so the NUL that marks a text's place is never data.
    response = InferResponse(
        "m\x00odel",
        [Tensor("big", "FP32", (20_000,), np.ones(20_000, dtype=np.float32))],
        id="\x00",
        parameters={"k\x00": "v\x00"},
    )
    parts, _ = codec.encode_response_parts(response)
    assert len(parts) == 3
    decoded = codec.decode_response(b"".join(parts))
    assert decoded.model_name == "m\x00odel" and decoded.id == "\x00"
    assert decoded.parameters == {"k\x00": "v\x00"}


# ----------------------------------------------------------------------------- binary outputs


@pytest.mark.parametrize(
    ("outputs", "parameters", "expected"),
    [
        (None, {}, False),
        (None, {"binary_data_output": True}, True),
        (None, {"binary_data_output": False}, False),
        (None, {"binary_data_output": "yes"}, False),  # only true asks for binary
        ([RequestedOutput("A"), RequestedOutput("B", {"binary_data": True})], {}, {"B"}),
        ([RequestedOutput("A", {"binary_data": False})], {"binary_data_output": True}, set()),
        ([RequestedOutput("A")], {"binary_data_output": True}, set()),  # listed: stays JSON
    ],
)
def test_binary_outputs_follows_tritons_rules(
    outputs: list[RequestedOutput] | None, parameters: dict[str, Any], expected: Any
) -> None:
    request = InferRequest([], outputs=outputs, parameters=parameters)
    assert rest.binary_outputs(request) == expected


@pytest.mark.parametrize("flag", ["yes", 1, 0, "true", [True]])
def test_binary_outputs_refuses_a_binary_data_that_is_not_a_boolean(flag: Any) -> None:
    """The one rule oipcodec serve and the MLServer route answer with (a 400 there): the
    message names the output and what was expected."""
    request = InferRequest([], outputs=[RequestedOutput("OUT", {"binary_data": flag})])
    with pytest.raises(DecodeError) as raised:
        rest.binary_outputs(request)
    assert str(raised.value) == (
        f"output 'OUT': parameter 'binary_data' must be a boolean, got {flag!r}"
    )
    assert raised.value.tensor == "OUT"


def test_binary_outputs_of_a_decoded_request() -> None:
    body = orjson.dumps(
        {
            "inputs": [{"name": "X", "datatype": "FP32", "shape": [1], "data": [1.0]}],
            "outputs": [{"name": "Y", "parameters": {"binary_data": True}}, {"name": "Z"}],
        }
    )
    assert rest.binary_outputs(rest.decode_request(body)) == {"Y"}


def test_an_output_in_a_region_is_not_asked_for_in_binary() -> None:
    """A binary request asks for its outputs in binary, but not one written into a
    shared-memory region: Triton refuses an output that sets both, and so does
    binary_outputs, with Triton's words and the output's name."""
    region = {"shared_memory_region": "out", "shared_memory_byte_size": 64}
    request = InferRequest(
        [Tensor.from_array("INPUT0", np.arange(4, dtype=np.int32))],
        outputs=[RequestedOutput("OUTPUT0", parameters=dict(region)), RequestedOutput("OUTPUT1")],
    )
    body, header_length = rest.encode_request(request, binary=True)
    assert header_length is not None
    outputs = orjson.loads(body[:header_length])["outputs"]
    assert outputs[0]["parameters"] == region
    assert outputs[1]["parameters"] == {"binary_data": True}
    assert rest.binary_outputs(rest.decode_request(body, header_length)) == {"OUTPUT1"}
    both = InferRequest(
        request.inputs,
        outputs=[RequestedOutput("OUTPUT0", parameters={**region, "binary_data": True})],
    )
    with pytest.raises(DecodeError, match="Output can't set both") as info:
        rest.binary_outputs(both)
    assert "OUTPUT0" in str(info.value)


def test_an_output_answered_without_data_is_read_from_the_region_requested() -> None:
    """The real Triton server answers an output written into a region with its name, datatype
    and shape only: given the request's outputs, the decoder reads it from the region they
    named; without them it is refused as before."""
    from oipcodec.sharedmem import Location

    values = np.arange(4, dtype=np.float32)
    seen: list[Location] = []

    def resolve(where: Location, name: str, kind: str, writable: bool) -> memoryview:
        seen.append(where)
        return memoryview(values.tobytes())

    region = {"shared_memory_region": "out", "shared_memory_byte_size": 16}
    body = orjson.dumps(
        {"model_name": "m", "outputs": [{"name": "OUTPUT0", "datatype": "FP32", "shape": [4]}]}
    )
    requested = [RequestedOutput("OUTPUT0", parameters=dict(region))]
    response = rest.decode_response(body, shared_memory=resolve, requested=requested)
    assert response.outputs[0].data.tolist() == values.tolist()
    assert seen[0].region == "out" and seen[0].byte_size == 16
    with pytest.raises(DecodeError, match="neither 'data' nor"):
        rest.decode_response(body, shared_memory=resolve)
    with pytest.raises(DecodeError, match="neither 'data' nor"):  # not a region output
        rest.decode_response(body, shared_memory=resolve, requested=[RequestedOutput("OUTPUT0")])
