"""Fuzz the TensorRT Inference Server v1 request decoder: oipcodec.trtis_v1.parse_request_header
(the text reader, or the binary form) and decode_inputs (the body split into views against the
model's inputs). Besides the native/pure agreement, a text header must be read exactly as
google.protobuf's text_format reads it: the same message, or an error where it errs.

Input layout: byte 0: bits 0-1 pick the limits, bit 2 the binary header form, bit 3 a model
that batches (max_batch_size 8) or not, bits 4-5 the model's inputs (INT32 [-1, 16] pairs,
FP32 [-1, -1], BYTES [-1, 4], BOOL [-1]); bytes 1-2 the header length (little-endian); then
the header, then the body."""

from __future__ import annotations

from typing import Any

from _harness import LIMITS, Mismatch, Reader, compare
from google.protobuf import text_format

from oipcodec import trtis_v1
from oipcodec.errors import DecodeError, RequestError
from oipcodec.proto import trtis_v1_pb2 as pb

#: The model inputs a case may be checked against, with the batch dimension first.
SPECS = (
    (
        trtis_v1.InputSpec("INPUT0", "INT32", (-1, 16)),
        trtis_v1.InputSpec("INPUT1", "INT32", (-1, 16)),
    ),
    (trtis_v1.InputSpec("X", "FP32", (-1, -1)),),
    (trtis_v1.InputSpec("S", "BYTES", (-1, 4)),),
    (trtis_v1.InputSpec("B", "BOOL", (-1,)),),
)


def _reference(text: bytes) -> Any:
    """text_format's reading of ``text``, or None where it refuses it."""
    try:
        return text_format.Parse(text.decode("utf-8"), pb.InferRequestHeader())
    except (text_format.ParseError, UnicodeDecodeError):
        return None


def decode(data: bytes) -> tuple[Any, ...]:
    reader = Reader(data)
    flags = reader.byte()
    limits = LIMITS[flags & 3]
    binary = bool(flags & 4)
    max_batch_size = 8 if flags & 8 else 0
    specs = SPECS[(flags >> 4) & 3]
    size = reader.byte() | reader.byte() << 8
    rest = reader.rest()
    header_bytes, body = rest[:size], rest[size:]
    try:
        header = trtis_v1.parse_request_header(header_bytes, binary=binary)
    except DecodeError:
        header = None
    if not binary:
        expected = _reference(header_bytes)
        if header != expected:
            raise Mismatch(
                f"the text reader and text_format disagree\n ours: {header}\n "
                f"text_format: {expected}\ninput: {data!r}"
            )
    if header is None:
        return ("header refused",)

    def run(kernels: Any) -> Any:
        try:
            return trtis_v1.decode_inputs(
                header, body, specs, max_batch_size, limits=limits, kernels=kernels
            )
        except RequestError as exc:  # shared memory: UNSUPPORTED, a request error
            return (type(exc).__name__, str(exc))

    return compare(run, data)


def one_input(data: bytes) -> None:
    decode(data)


if __name__ == "__main__":
    from _harness import main

    main(one_input)
