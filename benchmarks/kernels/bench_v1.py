"""The v1 API's per-request header cost on the small payload (Triton's ``simple``: two INT32
[1, 16] inputs, two outputs): oipcodec's text reader (the ``scan_request_header`` kernel,
native and pure) and writer vs google.protobuf's text_format, with the binary protobuf form
beside them; and the whole server side of one
v1 request (header, body split into views, answer header) beside v2's gRPC raw request.

Every reader case ends with the same ``InferRequestHeader`` message, every writer case with
the same one-line text (a test below checks both)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from google.protobuf import text_format

from oipcodec import InferRequest, InferResponse, Tensor, pb, trtis_v1
from oipcodec.proto import trtis_v1_pb2 as v1pb

HEADER = (
    'batch_size: 1 input { name: "INPUT0" dims: 16 batch_byte_size: 64 } '
    'input { name: "INPUT1" dims: 16 batch_byte_size: 64 } '
    'output { name: "OUTPUT0" } output { name: "OUTPUT1" }'
)
BINARY = text_format.Parse(HEADER, v1pb.InferRequestHeader()).SerializeToString()
SPECS = [
    trtis_v1.InputSpec("INPUT0", "INT32", (-1, 16)),
    trtis_v1.InputSpec("INPUT1", "INT32", (-1, 16)),
]
A = np.arange(16, dtype=np.int32).reshape(1, 16)
BODY = A.tobytes() + A.tobytes()
OUTPUTS = [Tensor("OUTPUT0", "INT32", (1, 16), A), Tensor("OUTPUT1", "INT32", (1, 16), A)]
RESPONSE = InferResponse("simple", OUTPUTS, model_version="1")
ANSWER, _ = trtis_v1.encode_response(RESPONSE, batch_size=1, batched=True)


def test_the_cases_agree() -> None:
    expected = text_format.Parse(HEADER, v1pb.InferRequestHeader())
    assert trtis_v1.parse_request_header(HEADER) == expected
    assert trtis_v1.parse_request_header(BINARY, binary=True) == expected
    assert trtis_v1.response_header_text(ANSWER) == text_format.MessageToString(
        ANSWER, as_one_line=True
    )


@pytest.mark.benchmark(group="v1 request header: read")
def test_read_header_native(benchmark: Any, native: Any) -> None:
    benchmark(trtis_v1.parse_request_header, HEADER, kernels=native)


@pytest.mark.benchmark(group="v1 request header: read")
def test_read_header_pure(benchmark: Any, pure: Any) -> None:
    benchmark(trtis_v1.parse_request_header, HEADER, kernels=pure)


@pytest.mark.benchmark(group="v1 request header: read")
def test_read_header_text_format(benchmark: Any) -> None:
    benchmark(lambda: text_format.Parse(HEADER, v1pb.InferRequestHeader()))


@pytest.mark.benchmark(group="v1 request header: read")
def test_read_header_binary_protobuf(benchmark: Any) -> None:
    benchmark(v1pb.InferRequestHeader.FromString, BINARY)


@pytest.mark.benchmark(group="v1 response header: write")
def test_write_answer_oipcodec(benchmark: Any) -> None:
    benchmark(trtis_v1.response_header_text, ANSWER)


@pytest.mark.benchmark(group="v1 response header: write")
def test_write_answer_text_format(benchmark: Any) -> None:
    benchmark(text_format.MessageToString, ANSWER, as_one_line=True)


@pytest.mark.benchmark(group="v1 response header: write")
def test_write_answer_binary_protobuf(benchmark: Any) -> None:
    benchmark(ANSWER.SerializeToString)


def _v1_server_side() -> Any:
    header = trtis_v1.parse_request_header(HEADER)
    inputs = trtis_v1.decode_inputs(header, BODY, SPECS, 8)
    answer, parts = trtis_v1.encode_response(RESPONSE, batch_size=1, batched=True)
    return inputs, trtis_v1.response_header_text(answer), parts


V2_MESSAGE = pb.encode_request(
    InferRequest(
        [Tensor("INPUT0", "INT32", (1, 16), A), Tensor("INPUT1", "INT32", (1, 16), A)],
        model_name="simple",
    )
)


def _v2_server_side() -> Any:
    return pb.decode_request(V2_MESSAGE), pb.encode_response(RESPONSE, raw=True)


@pytest.mark.benchmark(group="server side of one small request (decode + encode)")
def test_server_side_v1_http(benchmark: Any) -> None:
    benchmark(_v1_server_side)


@pytest.mark.benchmark(group="server side of one small request (decode + encode)")
def test_server_side_v2_grpc_raw(benchmark: Any) -> None:
    benchmark(_v2_server_side)
