"""What the two protobuf wire kernels (``oipcodec._native.pbwire`` and ``oipcodec._pure.pbwire``)
share: the field tables of the ModelInfer messages, the writer's envelope planner, the
parameter conversions and every error message.

The wire format (https://protobuf.dev/programming-guides/encoding/): a message is a sequence of
fields, each a varint tag ``field_number << 3 | wire_type`` then a value: a varint (type 0), 8
little-endian bytes (type 1), a varint length and that many bytes (type 2: strings, bytes,
sub-messages, packed repeated scalars), a group (types 3/4, deprecated) or 4 little-endian
bytes (type 5). Fields may come in any order; a singular field seen twice keeps the last value,
an embedded message seen twice is merged, and fields a parser does not know are skipped.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from oipcodec.errors import DecodeError, EncodeError, LimitError
from oipcodec.limits import Limits

__all__: list[str] = []

# Wire types; the native kernel takes them as C constants (written to _native/pbwire.pxd).
VARINT = 0
I64 = 1
LEN = 2
SGROUP = 3
EGROUP = 4
I32 = 5

C_CONSTANTS = ("VARINT", "I64", "LEN", "SGROUP", "EGROUP", "I32")
WIRE_TYPE_NAMES = ("VARINT", "I64", "LEN", "SGROUP", "EGROUP", "I32", "6", "7")

#: Deepest nesting of (unknown) groups a reader skips; protobuf's own recursion limit is 100.
MAX_GROUP_DEPTH = 100
#: Most dimensions a shape may have (numpy's limit).
MAX_DIMS = 64

# InferTensorContents field numbers and names, in field order (index = field number).
CONTENTS_FIELDS = (
    "",
    "bool_contents",
    "int_contents",
    "int64_contents",
    "uint_contents",
    "uint64_contents",
    "fp32_contents",
    "fp64_contents",
    "bytes_contents",
)
CONTENTS_FIELD_NUMBERS = {name: number for number, name in enumerate(CONTENTS_FIELDS) if name}
# The numpy dtype of each varint contents field after protobuf's conversion of the varint
# (int32/uint32 keep the low 32 bits, bool is "not zero").
VARINT_DTYPES = {
    1: np.dtype(np.bool_),
    2: np.dtype(np.int32),
    3: np.dtype(np.int64),
    4: np.dtype(np.uint32),
    5: np.dtype(np.uint64),
}
RAW_FIELD = {"request": 7, "response": 6}
TENSORS_NAME = {"request": "inputs", "response": "outputs"}
RAW_NAME = {"request": "raw_input_contents", "response": "raw_output_contents"}
MESSAGE_NAME = {"request": "ModelInferRequest", "response": "ModelInferResponse"}
TENSOR_MESSAGE = {"request": "InferInputTensor", "response": "InferOutputTensor"}

# Expected wire type of each known field, per message, and its name for messages.
# A repeated scalar field also accepts LEN (packed) besides its element wire type.
ENVELOPE_FIELDS: dict[str, dict[int, tuple[str, int]]] = {
    "request": {
        1: ("model_name", LEN),
        2: ("model_version", LEN),
        3: ("id", LEN),
        4: ("parameters", LEN),
        5: ("inputs", LEN),
        6: ("outputs", LEN),
        7: ("raw_input_contents", LEN),
    },
    "response": {
        1: ("model_name", LEN),
        2: ("model_version", LEN),
        3: ("id", LEN),
        4: ("parameters", LEN),
        5: ("outputs", LEN),
        6: ("raw_output_contents", LEN),
    },
}
TENSOR_FIELDS = {
    1: ("name", LEN),
    2: ("datatype", LEN),
    3: ("shape", VARINT),
    4: ("parameters", LEN),
    5: ("contents", LEN),
}
REQUESTED_FIELDS = {1: ("name", LEN), 2: ("parameters", LEN)}
ENTRY_FIELDS = {1: ("key", LEN), 2: ("value", LEN)}
PARAMETER_FIELDS = {
    1: ("bool_param", VARINT),
    2: ("int64_param", VARINT),
    3: ("string_param", LEN),
    4: ("double_param", I64),
    5: ("uint64_param", VARINT),
}
CONTENTS_WIRE = {1: VARINT, 2: VARINT, 3: VARINT, 4: VARINT, 5: VARINT, 6: I32, 7: I64, 8: LEN}

INT64_MIN = -(2**63)
UINT64_MAX = 2**64 - 1
_DOUBLE = struct.Struct("<d")


def check_kind(kind: str) -> str:
    if kind not in ("request", "response"):
        raise ValueError(f"kind must be 'request' or 'response', got {kind!r}")
    return kind


# --------------------------------------------------------------------------------------------
# Reader errors. The twins call these with the same arguments at the same points.


def truncated_varint(offset: int) -> DecodeError:
    return DecodeError("truncated varint: the message ends inside it", offset=offset)


def overlong_varint(offset: int) -> DecodeError:
    return DecodeError("malformed varint: longer than 10 bytes", offset=offset)


def bad_tag(offset: int, tag: int) -> DecodeError:
    return DecodeError(
        f"invalid field tag {tag}: field number {tag >> 3}, wire type {tag & 7} "
        "(field numbers are 1..2**29-1, wire types 0..5)",
        offset=offset,
    )


def wrong_wire_type(
    offset: int, message: str, field: str, wire_type: int, expected: int
) -> DecodeError:
    return DecodeError(
        f"{message}.{field} has wire type {WIRE_TYPE_NAMES[wire_type]}, "
        f"expected {WIRE_TYPE_NAMES[expected]}",
        offset=offset,
    )


def past_end(offset: int, length: int, left: int) -> DecodeError:
    return DecodeError(
        f"length-delimited field says {length} bytes, only {left} left", offset=offset
    )


def fixed_past_end(offset: int, size: int, left: int) -> DecodeError:
    return DecodeError(f"{size}-byte fixed-width field, only {left} bytes left", offset=offset)


def unmatched_end_group(offset: int) -> DecodeError:
    return DecodeError("end-group tag without a matching start-group tag", offset=offset)


def group_too_deep(offset: int) -> DecodeError:
    return DecodeError(f"groups nested deeper than {MAX_GROUP_DEPTH} levels", offset=offset)


def unterminated_group(offset: int, field: int) -> DecodeError:
    return DecodeError(f"group of field {field} has no end-group tag", offset=offset)


def mismatched_end_group(offset: int, field: int, expected: int) -> DecodeError:
    return DecodeError(
        f"end-group tag of field {field} closes the group of field {expected}", offset=offset
    )


def packed_not_multiple(offset: int, field: str, length: int, size: int) -> DecodeError:
    return DecodeError(
        f"packed {field} of {length} bytes is not a multiple of {size}", offset=offset
    )


def packed_truncated(offset: int, field: str) -> DecodeError:
    return DecodeError(f"packed {field} ends inside a varint", offset=offset)


def invalid_utf8(offset: int, field: str) -> DecodeError:
    return DecodeError(f"{field} is not valid UTF-8", offset=offset)


def parameter_without_value(offset: int, key: str) -> DecodeError:
    return DecodeError(
        f"parameter {key!r} has no value (no InferParameter field set)", offset=offset
    )


def too_many_dims(offset: int) -> LimitError:
    return LimitError(f"shape has more than {MAX_DIMS} dimensions", offset=offset)


def check_raw_contents(
    kind: str, model: str, tensors: list[Any], raw: list[Any], raw_offset: int
) -> None:
    """A message for ``model`` with raw contents: no tensor may also carry typed contents, and
    there is one raw entry per tensor (``tensors`` as :func:`read_infer_message` returns them),
    or one per tensor that is not in shared memory (a request from tritonclient has no entry
    for an input that names a ``shared_memory_region``)."""
    in_shm = 0
    for index, tensor in enumerate(tensors):
        # An empty contents message carries nothing to mix up: MLServer 1.7 sends one beside
        # raw_output_contents for every output (its data cleared to []).
        if tensor[4]:
            raise mixed_contents(tensor[6], kind, index, tensor[0], model)
        if tensor[3] and "shared_memory_region" in tensor[3]:
            in_shm += 1
    if len(raw) != len(tensors) and len(raw) != len(tensors) - in_shm:
        raise raw_count_mismatch(raw_offset, kind, len(raw), len(tensors))


def message_too_large(size: int, limits: Limits) -> LimitError:
    return LimitError(f"message of {size} bytes exceeds the limit of {limits.max_body_bytes} bytes")


def too_many_tensors(offset: int, what: str, limits: Limits) -> LimitError:
    return LimitError(f"more than {limits.max_tensors} {what}", offset=offset)


def too_many_elements(offset: int, field: str, count: int, limits: Limits) -> LimitError:
    return LimitError(
        f"{field} holds {count} elements, more than the limit of {limits.max_tensor_elements}",
        offset=offset,
    )


def bytes_element_too_long(offset: int, length: int, limits: Limits) -> LimitError:
    return LimitError(
        f"bytes_contents element of {length} bytes exceeds the limit of {limits.max_bytes_element}",
        offset=offset,
    )


def mixed_contents(offset: int, kind: str, index: int, name: str, model: str) -> DecodeError:
    # The first sentence is Triton's own wording, which its example clients look for.
    return DecodeError(
        f"contents field must not be specified when using {RAW_NAME[kind]} for '{name}' "
        f"for model '{model}' ({TENSORS_NAME[kind]}[{index}] has typed contents too; a "
        "message uses one or the other)",
        offset=offset,
    )


def raw_count_mismatch(offset: int, kind: str, raw: int, tensors: int) -> DecodeError:
    return DecodeError(
        f"{raw} {RAW_NAME[kind]} entries for {tensors} {TENSORS_NAME[kind]}; raw contents "
        "need one entry per tensor, in order",
        offset=offset,
    )


def decode_utf8(data: Any, offset: int, field: str) -> str:
    """``data`` (bytes or a memoryview) as UTF-8 text, as proto3 requires of string fields."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError:
        raise invalid_utf8(offset, field) from None


def parameter_value(field: int, bits: int, text: Any) -> bool | int | str | float:
    """The Python value of an InferParameter field: ``bits`` is the varint or fixed64 read
    (an unsigned 64-bit pattern), ``text`` the decoded string of string_param."""
    if field == 1:
        return bits != 0
    if field == 2:
        return bits - (1 << 64) if bits >> 63 else bits
    if field == 3:
        return text
    if field == 4:
        value: float = _DOUBLE.unpack(bits.to_bytes(8, "little"))[0]
        return value
    return bits


# --------------------------------------------------------------------------------------------
# Writer: the envelope planner shared by both kernels.
#
# The planner encodes every small field (strings, shapes, parameters, tags and lengths) in
# Python and leaves the tensor payloads to the kernel as "payload segments": (field, data)
# with field 0 for raw contents (copied as is), 1..5 for varint contents (a uint64 array
# holding each element's 64-bit pattern), 6/7 for fixed-width float contents (little-endian
# bytes, copied as is) and 8 for bytes_contents (a list of bytes, each written with its own
# tag). The kernel gives the planner the encoded size of a payload, and writes the segments.

Segment = bytes | tuple[int, Any]
PayloadSize = Callable[[int, Any], int]


# One-byte varints (0..127), looked up rather than built: tags, lengths and dims of small
# messages are nearly all below 128.
_SMALL_VARINTS = tuple(bytes((value,)) for value in range(0x80))


def varint_bytes(value: int) -> bytes:
    """``value`` (0 <= value < 2**64) as a protobuf varint."""
    if 0 <= value < 0x80:
        return _SMALL_VARINTS[value]
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_size(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def _tag(field: int, wire_type: int) -> bytes:
    return varint_bytes(field << 3 | wire_type)


def _len_field(field: int, payload: bytes) -> bytes:
    return b"".join((varint_bytes(field << 3 | LEN), varint_bytes(len(payload)), payload))


def _utf8(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise EncodeError(f"{what} must be a str, got {type(value).__name__}")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(f"{what} is not encodable as UTF-8 ({exc})") from None


def encode_parameter(key: object, value: object) -> bytes:
    """One InferParameter: bool -> bool_param, an int in the int64 range -> int64_param, a larger
    non-negative int (< 2**64) -> uint64_param, float -> double_param, str -> string_param."""
    name = _utf8(key, "parameter name")
    if isinstance(value, (bool, np.bool_)):
        body = _tag(1, VARINT) + (b"\x01" if value else b"\x00")
    elif isinstance(value, (int, np.integer)):
        number = operator.index(value)
        if INT64_MIN <= number < 2**63:
            body = _tag(2, VARINT) + varint_bytes(number & UINT64_MAX)
        elif 0 <= number <= UINT64_MAX:
            body = _tag(5, VARINT) + varint_bytes(number)
        else:
            raise EncodeError(
                f"parameter {key!r}: integer {number} fits neither int64_param nor uint64_param"
            )
    elif isinstance(value, (float, np.floating)):
        body = _tag(4, I64) + _DOUBLE.pack(float(value))
    elif isinstance(value, str):
        body = _len_field(3, _utf8(value, f"parameter {key!r}"))
    else:
        raise EncodeError(
            f"parameter {key!r}: value must be bool, int, float or str, got {type(value).__name__}"
        )
    return _len_field(1, name) + _len_field(2, body)


def encode_parameters(field: int, parameters: Mapping[str, object] | None) -> bytes:
    if not parameters:
        return b""
    return b"".join(_len_field(field, encode_parameter(k, v)) for k, v in parameters.items())


def _shape(shape: Iterable[int]) -> bytes:
    body = b"".join([varint_bytes(operator.index(d) & UINT64_MAX) for d in shape])
    if not body:
        return b""
    return _len_field(3, body)


def _string_field(field: int, value: str | None, what: str) -> bytes:
    if not value:
        return b""
    return _len_field(field, _utf8(value, what))


class _Builder:
    """Collects segments, merging consecutive small byte strings."""

    __slots__ = ("pending", "segments", "size")

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.pending: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> None:
        self.pending.append(data)
        self.size += len(data)

    def payload(self, field: int, data: Any, size: int) -> None:
        self.flush()
        self.segments.append((field, data))
        self.size += size

    def flush(self) -> None:
        if self.pending:
            self.segments.append(b"".join(self.pending))
            self.pending = []


def plan_message(
    kind: str,
    model_name: str | None,
    model_version: str | None,
    id: str | None,
    parameters: Mapping[str, object] | None,
    tensors: list[tuple[Any, ...]],
    requested: list[tuple[str, Mapping[str, object] | None]] | None,
    payload_size: PayloadSize,
) -> tuple[list[Segment], int]:
    """The segments of a ModelInferRequest (``kind="request"``) or ModelInferResponse, in field
    order (what the protobuf runtime writes), and the message's total size.

    ``tensors`` holds ``(name, datatype, shape, parameters, field, payload)``; ``field`` is 0 for
    raw contents (then every tensor must use 0) or the InferTensorContents field number.
    """
    check_kind(kind)
    out = _Builder()
    out.add(_string_field(1, model_name, "model_name"))
    out.add(_string_field(2, model_version, "model_version"))
    out.add(_string_field(3, id, "id"))
    out.add(encode_parameters(4, parameters))
    raw_fields = {t[4] == 0 for t in tensors}
    if len(raw_fields) > 1:
        raise EncodeError("raw and typed contents cannot be mixed in one message")
    raw_payloads: list[tuple[Any, int]] = []
    for name, datatype, shape, params, field, payload in tensors:
        head = (
            _string_field(1, name, "tensor name")
            + _string_field(2, datatype, "datatype")
            + _shape(shape)
            + encode_parameters(4, params)
        )
        if field == 0 and payload is None:  # in shared memory: no raw entry (a request's input)
            out.add(_len_field(5, head))
            continue
        size = payload_size(field, payload)
        if field == 0:
            raw_payloads.append((payload, size))
            out.add(_len_field(5, head))
            continue
        if field == 8:
            contents_size = size  # each element carries its own tag and length
            contents_head = b""
        elif size:
            contents_head = _tag(field, LEN) + varint_bytes(size)
            contents_size = len(contents_head) + size
        else:
            contents_head = b""  # proto3 writes no empty packed field
            contents_size = 0
        contents_field = _tag(5, LEN) + varint_bytes(contents_size) + contents_head
        tensor_size = len(head) + len(contents_field) + size
        out.add(_tag(5, LEN) + varint_bytes(tensor_size) + head + contents_field)
        if size:
            out.payload(field, payload, size)
    if kind == "request" and requested:
        for name, params in requested:
            body = _string_field(1, name, "output name") + encode_parameters(2, params)
            out.add(_len_field(6, body))
    raw_tag = _tag(RAW_FIELD[kind], LEN)
    for payload, size in raw_payloads:
        out.add(raw_tag + varint_bytes(size))
        if size:
            out.payload(0, payload, size)
    out.flush()
    return out.segments, out.size


def element_limit(count: int, limits: Limits) -> bool:
    return count > limits.max_tensor_elements


def prod(shape: Iterable[int]) -> int:
    return math.prod(shape)


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "read_infer_message": """Read a serialized ModelInferRequest (``kind="request"``) or
    ModelInferResponse.

    Returns ``(model_name, model_version, id, parameters, tensors, requested, raw)``:
    ``parameters`` a dict of bool/int/str/float; ``tensors`` (inputs or outputs) a list of
    ``(name, datatype, shape, parameters, contents, offset, contents_offset)`` where
    ``contents`` is ``None`` (no contents field) or a dict from InferTensorContents field name
    to its data: a read-only memoryview of little-endian bytes for fp32/fp64 (a view of
    ``data`` when the field is one packed run), a numpy array for the varint fields (bool,
    int32, int64, uint32, uint64 as protobuf converts them) and an object array of bytes for
    bytes_contents; ``requested`` the requested outputs as ``(name, parameters)`` (requests
    only); ``raw`` the raw contents entries as read-only views of ``data``.

    Per the protobuf encoding, fields may come in any order, a repeated scalar field may be
    packed or not (or both), an embedded message seen twice is merged, and unknown fields of
    every wire type (groups included) are skipped. A known field with the wrong wire type,
    a varint over 10 bytes, a length past the end, raw contents mixed with typed contents, or
    a raw entry count different from the tensor count raise :class:`DecodeError` with the byte
    offset; ``limits`` are checked before anything is allocated.
    """,
    "write_infer_message": """Serialize a ModelInferRequest (``kind="request"``) or
    ModelInferResponse into one buffer.

    ``tensors`` holds ``(name, datatype, shape, parameters, field, payload)``: ``field`` 0 puts
    ``payload`` (a bytes-like object) in raw_input_contents / raw_output_contents, which then
    holds one entry per tensor; otherwise ``field`` is the InferTensorContents field number and
    ``payload`` is a contiguous uint64 array of 64-bit patterns (fields 1-5, varints), a
    bytes-like object of little-endian floats (6, 7) or a list of bytes (8). Fields are
    written in field-number order, as the protobuf runtime writes them.
    """,
}
