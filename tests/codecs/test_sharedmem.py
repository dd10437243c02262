"""Tensors in shared memory at the codec level: the parameters, and the REST and protobuf
codecs reading and writing such tensors (both kernel implementations). The regions here are
bytearrays behind a resolver; the server's mapped regions are tested over real sockets in
tests/server/test_server_shm.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oipcodec import pb, rest
from oipcodec.errors import DecodeError, InvalidArgumentError, UnavailableError
from oipcodec.sharedmem import (
    Location,
    check_key,
    location,
    names_region,
    parameters_for,
)
from oipcodec.types import InferRequest, InferResponse, RequestedOutput, Tensor

A = np.arange(16, dtype=np.int32).reshape(1, 16)
B = np.full((1, 16), 9, dtype=np.int32)


class Regions:
    """Named bytearrays and the resolver the codecs take (what the server's regions do,
    without the mapping)."""

    def __init__(self, **regions: bytearray) -> None:
        self.regions = regions
        self.asked: list[tuple[str, str, bool]] = []

    def resolve(self, where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        self.asked.append((tensor, kind, writable))
        view = memoryview(self.regions[where.region])[where.offset : where.offset + where.byte_size]
        return view if writable else view.toreadonly()


def _in_region(name: str, array: np.ndarray[Any, Any], region: str, offset: int = 0) -> Tensor:
    where = Location(region, array.nbytes, offset)
    return Tensor.from_array(name, array, parameters_for(where))


def test_location_reads_the_parameters() -> None:
    assert location({}) is None and not names_region({}) and not names_region(None)
    assert location({"shared_memory_region": "r", "shared_memory_byte_size": 8}) == Location(
        "r", 8, 0
    )
    given = {"shared_memory_region": "r", "shared_memory_byte_size": 8, "shared_memory_offset": 4}
    assert location(given) == Location("r", 8, 4) and names_region(given)
    assert parameters_for(Location("r", 8)) == {
        "shared_memory_region": "r",
        "shared_memory_byte_size": 8,
    }
    assert parameters_for(Location("r", 8, 4)) == given


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"shared_memory_byte_size": 8}, "has 'shared_memory_byte_size' but no"),
        ({"shared_memory_region": "", "shared_memory_byte_size": 8}, "non-empty string"),
        ({"shared_memory_region": 3, "shared_memory_byte_size": 8}, "non-empty string"),
        ({"shared_memory_region": "r"}, "has no 'shared_memory_byte_size'"),
        ({"shared_memory_region": "r", "shared_memory_byte_size": -1}, "non-negative"),
        ({"shared_memory_region": "r", "shared_memory_byte_size": True}, "non-negative"),
        (
            {
                "shared_memory_region": "r",
                "shared_memory_byte_size": 8,
                "shared_memory_offset": "4",
            },
            "'shared_memory_offset' must be a non-negative integer",
        ),
    ],
)
def test_location_refuses_bad_parameters(parameters: dict[str, Any], message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        location(parameters)


@pytest.mark.parametrize("key", ["/ok", "/a.b-c_d", "/" + "x" * 255])
def test_keys_accepted(key: str) -> None:
    assert check_key(key) == key


@pytest.mark.parametrize("key", ["", "x", "/", "//", "/a/b", "/.", "/..", "/" + "x" * 256, 3])
def test_keys_refused(key: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        check_key(key)


@pytest.mark.parametrize("binary", [True, False])
def test_rest_request_names_the_region_and_reads_it(impl: Any, binary: bool) -> None:
    regions = Regions(r=bytearray(A.tobytes() + B.tobytes()))
    request = InferRequest(
        [_in_region("INPUT0", A, "r"), _in_region("INPUT1", B, "r", 64)], model_name="simple"
    )
    body, header_length = rest.encode_request(request, binary=binary, kernels=impl)
    assert header_length is None and b'"data"' not in body  # nothing but the envelope
    back = rest.decode_request(body, header_length, kernels=impl, shared_memory=regions.resolve)
    np.testing.assert_array_equal(back.inputs[0].data, A)
    np.testing.assert_array_equal(back.inputs[1].data, B)
    assert not back.inputs[0].data.flags.writeable
    assert regions.asked == [("INPUT0", "input", False), ("INPUT1", "input", False)]
    with pytest.raises(DecodeError, match="no shared memory regions are known here"):
        rest.decode_request(body, header_length, kernels=impl)


def test_rest_mixed_binary_and_region(impl: Any) -> None:
    regions = Regions(r=bytearray(B.tobytes()))
    request = InferRequest(
        [Tensor.from_array("INPUT0", A), _in_region("INPUT1", B, "r")], model_name="simple"
    )
    body, header_length = rest.encode_request(request, binary=True, kernels=impl)
    assert header_length is not None and len(body) - header_length == A.nbytes
    back = rest.decode_request(body, header_length, kernels=impl, shared_memory=regions.resolve)
    np.testing.assert_array_equal(back.inputs[0].data, A)
    np.testing.assert_array_equal(back.inputs[1].data, B)


def test_rest_data_and_region_together(impl: Any) -> None:
    body = (
        b'{"inputs":[{"name":"X","shape":[1],"datatype":"INT32","data":[1],'
        b'"parameters":{"shared_memory_region":"r","shared_memory_byte_size":4}}]}'
    )
    with pytest.raises(DecodeError, match=r"input 'X'.*carries data as well"):
        rest.decode_request(body, kernels=impl, shared_memory=Regions(r=bytearray(4)).resolve)


def test_rest_size_must_match_the_shape(impl: Any) -> None:
    regions = Regions(r=bytearray(64))
    tensor = Tensor("X", "INT32", (1, 16), A, parameters_for(Location("r", 60)))
    body, header_length = rest.encode_request(InferRequest([tensor]), kernels=impl)
    with pytest.raises(DecodeError, match=r"input 'X'.*expected 64 bytes"):
        rest.decode_request(body, header_length, kernels=impl, shared_memory=regions.resolve)


def test_rest_response_output_in_region(impl: Any) -> None:
    regions = Regions(out=bytearray(A.tobytes()))
    output = _in_region("OUTPUT0", A, "out")
    body, header_length = rest.encode_response(
        InferResponse("simple", [output]), binary=True, kernels=impl
    )
    assert header_length is None and b'"data"' not in body
    back = rest.decode_response(body, header_length, kernels=impl, shared_memory=regions.resolve)
    np.testing.assert_array_equal(back.outputs[0].data, A)
    assert back.outputs[0].parameters == output.parameters


@pytest.mark.parametrize("raw", [True, False])
def test_pb_request_inputs_in_region(impl: Any, raw: bool) -> None:
    """An input in a region has no raw entry (as tritonclient sends it); the others keep
    theirs, in order."""
    pytest.importorskip("tritonclient.grpc")
    regions = Regions(r=bytearray(A.tobytes()))
    request = InferRequest(
        [_in_region("INPUT0", A, "r"), Tensor.from_array("INPUT1", B)],
        outputs=[RequestedOutput("OUTPUT0", parameters_for(Location("out", 64)))],
        model_name="simple",
    )
    data = pb.encode_request(request, raw=raw, kernels=impl)
    if raw:
        from tritonclient.grpc import service_pb2

        assert list(service_pb2.ModelInferRequest.FromString(data).raw_input_contents) == [
            B.tobytes()
        ]
    back = pb.decode_request(data, kernels=impl, shared_memory=regions.resolve)
    np.testing.assert_array_equal(back.inputs[0].data, A)
    np.testing.assert_array_equal(back.inputs[1].data, B)
    assert back.outputs is not None and location(back.outputs[0].parameters) == Location("out", 64)
    with pytest.raises(DecodeError, match=r"input 'INPUT0'.*no shared memory regions"):
        pb.decode_request(data, kernels=impl)


def test_pb_one_raw_entry_per_input_is_accepted(impl: Any) -> None:
    """A request with an (empty) raw entry for the input in a region is read too; a
    non-empty one is data beside the region, refused; a count that fits neither form is
    refused as before."""
    pytest.importorskip("tritonclient.grpc")
    from tritonclient.grpc import service_pb2

    def message(entries: list[bytes]) -> bytes:
        request = service_pb2.ModelInferRequest(model_name="simple")
        first = request.inputs.add(name="INPUT0", datatype="INT32", shape=[1, 16])
        first.parameters["shared_memory_region"].string_param = "r"
        first.parameters["shared_memory_byte_size"].int64_param = 64
        request.inputs.add(name="INPUT1", datatype="INT32", shape=[1, 16])
        request.raw_input_contents.extend(entries)
        return request.SerializeToString()

    regions = Regions(r=bytearray(A.tobytes()))
    back = pb.decode_request(
        message([b"", B.tobytes()]), kernels=impl, shared_memory=regions.resolve
    )
    np.testing.assert_array_equal(back.inputs[1].data, B)
    with pytest.raises(DecodeError, match="carries data as well"):
        pb.decode_request(
            message([A.tobytes(), B.tobytes()]), kernels=impl, shared_memory=regions.resolve
        )
    with pytest.raises(DecodeError, match="raw contents need one entry per tensor"):
        pb.decode_request(
            message([b"", b"", B.tobytes()]), kernels=impl, shared_memory=regions.resolve
        )


def test_pb_response_keeps_an_empty_raw_entry(impl: Any) -> None:
    """An output in a region keeps its place in raw_output_contents with an empty entry, as
    Triton answers, so that tritonclient finds the other outputs by index."""
    pytest.importorskip("tritonclient.grpc")
    from tritonclient.grpc import service_pb2

    regions = Regions(out=bytearray(A.tobytes()))
    response = InferResponse(
        "simple", [_in_region("OUTPUT0", A, "out"), Tensor.from_array("OUTPUT1", B)]
    )
    data = pb.encode_response(response, kernels=impl)
    theirs = service_pb2.ModelInferResponse.FromString(data)
    assert list(theirs.raw_output_contents) == [b"", B.tobytes()]
    back = pb.decode_response(data, kernels=impl, shared_memory=regions.resolve)
    np.testing.assert_array_equal(back.outputs[0].data, A)
    np.testing.assert_array_equal(back.outputs[1].data, B)


@pytest.mark.parametrize("codec", ["rest", "pb"])
def test_a_resolver_s_unavailable_error_passes_the_codecs_as_it_is(impl: Any, codec: str) -> None:
    """A server whose requests in flight hold its shared-memory budget refuses the read with
    :class:`UnavailableError` (503: the request is valid): both codecs raise it as it is, with
    the resolver's message and no byte offset; any other resolver error is still a
    :class:`DecodeError` at the tensor (400). Before, the first became a DecodeError too."""
    full = "input 'A': region 'r' is busy: retry later"

    def busy(where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        raise UnavailableError(full)

    def missing(where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        raise InvalidArgumentError(f"{kind} '{tensor}': no region '{where.region}'")

    request = InferRequest([_in_region("A", A, "r")], model_name="m")
    if codec == "rest":
        body, header_length = rest.encode_request(request, kernels=impl)

        def decode(resolver: Any) -> Any:
            return rest.decode_request(body, header_length, kernels=impl, shared_memory=resolver)
    else:
        data = pb.encode_request(request, kernels=impl)

        def decode(resolver: Any) -> Any:
            return pb.decode_request(data, kernels=impl, shared_memory=resolver)

    with pytest.raises(UnavailableError) as refused:
        decode(busy)
    assert type(refused.value) is UnavailableError and str(refused.value) == full
    with pytest.raises(DecodeError, match="no region 'r'"):
        decode(missing)
