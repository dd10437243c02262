"""Protobuf wire kernel for ModelInferRequest / ModelInferResponse, pure twin of
``oipcodec._native.pbwire``.

The reader walks the serialized message itself instead of building protobuf objects: raw
contents and packed fp32/fp64 contents come back as zero-copy views of the message bytes,
varint contents as typed numpy arrays, bytes_contents as an object array. The writer puts the
envelope and every tensor payload into one buffer. Field tables, the envelope planner and the
error messages are shared with the native kernel through :mod:`oipcodec._shared.pbwire`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared import pbwire as pc
from oipcodec._shared.buffers import byte_view
from oipcodec._shared.pbwire import CONTRACTS
from oipcodec.limits import DEFAULT_LIMITS, Limits

__all__ = ["read_infer_message", "write_infer_message"]

Tensor = tuple[str, str, tuple[int, ...], dict[str, Any], "dict[str, Any] | None", int, int]
Message = tuple[
    str, str, str, dict[str, Any], list[Tensor], list[tuple[str, dict[str, Any]]], list[memoryview]
]

_U64 = (1 << 64) - 1


# --------------------------------------------------------------------------------------------
# Reader


def _varint(buf: memoryview, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it. A varint is at most 10 bytes; bits
    past the 64th are dropped, as protobuf does."""
    start = pos
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise pc.truncated_varint(start)
        byte = buf[pos]
        pos += 1
        if shift == 63 and byte & 0x80:
            raise pc.overlong_varint(start)
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & _U64, pos
        shift += 7


def _tag(buf: memoryview, pos: int, end: int) -> tuple[int, int, int]:
    """(field number, wire type, next position) of the tag at ``pos``."""
    tag, after = _varint(buf, pos, end)
    if tag > 0xFFFFFFFF or tag >> 3 == 0 or tag & 7 > 5:
        raise pc.bad_tag(pos, tag)
    return tag >> 3, tag & 7, after


def _length(buf: memoryview, pos: int, end: int, tag_offset: int) -> tuple[int, int]:
    """(start, stop) of the length-delimited value whose length varint is at ``pos``."""
    length, pos = _varint(buf, pos, end)
    if length > end - pos:
        raise pc.past_end(tag_offset, length, end - pos)
    return pos, pos + length


def _fixed(pos: int, end: int, size: int, tag_offset: int) -> int:
    if end - pos < size:
        raise pc.fixed_past_end(tag_offset, size, end - pos)
    return pos + size


def _skip(
    buf: memoryview, pos: int, end: int, tag_offset: int, field: int, wire_type: int, depth: int
) -> int:
    """The position after the value of an unknown field, whose tag was at ``tag_offset``."""
    if wire_type == pc.VARINT:
        return _varint(buf, pos, end)[1]
    if wire_type == pc.I64:
        return _fixed(pos, end, 8, tag_offset)
    if wire_type == pc.LEN:
        return _length(buf, pos, end, tag_offset)[1]
    if wire_type == pc.I32:
        return _fixed(pos, end, 4, tag_offset)
    if wire_type == pc.EGROUP:
        raise pc.unmatched_end_group(tag_offset)
    # SGROUP: skip fields up to the matching end-group tag.
    if depth >= pc.MAX_GROUP_DEPTH:
        raise pc.group_too_deep(tag_offset)
    while True:
        if pos >= end:
            raise pc.unterminated_group(tag_offset, field)
        inner_offset = pos
        inner_field, inner_type, pos = _tag(buf, pos, end)
        if inner_type == pc.EGROUP:
            if inner_field != field:
                raise pc.mismatched_end_group(inner_offset, inner_field, field)
            return pos
        pos = _skip(buf, pos, end, inner_offset, inner_field, inner_type, depth + 1)


def _expect(
    wire_type: int, expected: int, tag_offset: int, message: str, fields: dict[int, Any], f: int
) -> None:
    if wire_type != expected:
        raise pc.wrong_wire_type(tag_offset, message, fields[f][0], wire_type, expected)


def _string(buf: memoryview, start: int, stop: int, tag_offset: int, what: str) -> str:
    return pc.decode_utf8(buf[start:stop], tag_offset, what)


def _parameter(buf: memoryview, pos: int, end: int) -> Any:
    """The value of an InferParameter (the last oneof field set wins), or None."""
    value: Any = None
    while pos < end:
        tag_offset = pos
        field, wire_type, pos = _tag(buf, pos, end)
        if field in pc.PARAMETER_FIELDS:
            _expect(
                wire_type, pc.PARAMETER_FIELDS[field][1], tag_offset, "InferParameter",
                pc.PARAMETER_FIELDS, field,
            )  # fmt: skip
            if field == 3:
                start, pos = _length(buf, pos, end, tag_offset)
                value = _string(buf, start, pos, tag_offset, "InferParameter.string_param")
            elif field == 4:
                after = _fixed(pos, end, 8, tag_offset)
                value = pc.parameter_value(4, int.from_bytes(buf[pos:after], "little"), None)
                pos = after
            else:
                bits, pos = _varint(buf, pos, end)
                value = pc.parameter_value(field, bits, None)
        else:
            pos = _skip(buf, pos, end, tag_offset, field, wire_type, 0)
    return value


def _entry(buf: memoryview, pos: int, end: int, entry_offset: int, into: dict[str, Any]) -> None:
    """One map<string, InferParameter> entry, stored into ``into`` (a later key wins)."""
    key = ""
    value: Any = None
    while pos < end:
        tag_offset = pos
        field, wire_type, pos = _tag(buf, pos, end)
        if field in pc.ENTRY_FIELDS:
            _expect(wire_type, pc.LEN, tag_offset, "ParametersEntry", pc.ENTRY_FIELDS, field)
            start, pos = _length(buf, pos, end, tag_offset)
            if field == 1:
                key = _string(buf, start, pos, tag_offset, "parameter name")
            else:
                # An embedded message seen twice is merged: a later oneof field wins.
                found = _parameter(buf, start, pos)
                if found is not None:
                    value = found
        else:
            pos = _skip(buf, pos, end, tag_offset, field, wire_type, 0)
    if value is None:
        raise pc.parameter_without_value(entry_offset, key)
    into[key] = value


def _signed(bits: int) -> int:
    return bits - (1 << 64) if bits >> 63 else bits


def _tensor(
    buf: memoryview, pos: int, end: int, tensor_offset: int, kind: str, limits: Limits
) -> Tensor:
    message = pc.TENSOR_MESSAGE[kind]
    name = datatype = ""
    shape: list[int] = []
    parameters: dict[str, Any] = {}
    ranges: list[tuple[int, int]] = []
    contents_offset = -1
    while pos < end:
        tag_offset = pos
        field, wire_type, pos = _tag(buf, pos, end)
        if field == 3:
            if wire_type == pc.LEN:
                start, stop = _length(buf, pos, end, tag_offset)
                pos = start
                while pos < stop:
                    if len(shape) == pc.MAX_DIMS:
                        raise pc.too_many_dims(tag_offset)
                    bits, pos = _varint(buf, pos, stop)
                    shape.append(_signed(bits))
            else:
                _expect(wire_type, pc.VARINT, tag_offset, message, pc.TENSOR_FIELDS, field)
                if len(shape) == pc.MAX_DIMS:
                    raise pc.too_many_dims(tag_offset)
                bits, pos = _varint(buf, pos, end)
                shape.append(_signed(bits))
        elif field in pc.TENSOR_FIELDS:
            _expect(wire_type, pc.LEN, tag_offset, message, pc.TENSOR_FIELDS, field)
            start, pos = _length(buf, pos, end, tag_offset)
            if field == 1:
                name = _string(buf, start, pos, tag_offset, f"{message}.name")
            elif field == 2:
                datatype = _string(buf, start, pos, tag_offset, f"{message}.datatype")
            elif field == 4:
                _entry(buf, start, pos, tag_offset, parameters)
            else:
                if contents_offset < 0:
                    contents_offset = tag_offset
                ranges.append((start, pos))
        else:
            pos = _skip(buf, pos, end, tag_offset, field, wire_type, 0)
    contents = _contents(buf, ranges, contents_offset, limits) if ranges else None
    return name, datatype, tuple(shape), parameters, contents, tensor_offset, contents_offset


def _packed_varints(buf: memoryview, start: int, stop: int, tag_offset: int, what: str) -> int:
    """The number of varints in a packed field, after checking every one is well formed."""
    data = np.frombuffer(buf[start:stop], dtype=np.uint8)
    ends = np.flatnonzero(data < 0x80)
    firsts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else ends
    long = np.flatnonzero(ends - firsts >= 10)
    if len(long):
        raise pc.overlong_varint(start + int(firsts[long[0]]))
    tail = len(data) - (int(ends[-1]) + 1 if len(ends) else 0)
    if tail:
        if tail >= 10:
            raise pc.overlong_varint(stop - tail)
        raise pc.packed_truncated(tag_offset, what)
    return len(ends)


def _decode_packed(data: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Well-formed packed varints as their 64-bit patterns (uint64), vectorised."""
    ends = np.flatnonzero(data < 0x80)
    if not len(ends):
        return np.zeros(0, np.uint64)
    firsts = np.concatenate(([0], ends[:-1] + 1))
    position = np.arange(len(data)) - np.repeat(firsts, ends - firsts + 1)
    groups = (data & 0x7F).astype(np.uint64) << (7 * position).astype(np.uint64)
    out: np.ndarray[Any, Any] = np.bitwise_or.reduceat(groups, firsts)
    return out


def _narrow(field: int, bits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Varint patterns to the contents field's type, as protobuf converts them."""
    if field == 1:
        return bits != 0
    if field in (2, 4):
        return bits.astype(np.uint32).view(pc.VARINT_DTYPES[field])
    return bits.view(pc.VARINT_DTYPES[field])


def _contents(
    buf: memoryview, ranges: list[tuple[int, int]], contents_offset: int, limits: Limits
) -> dict[str, Any]:
    """Every InferTensorContents field present in the (merged) contents ``ranges``."""
    counts = [0] * 9
    pieces = [0] * 9
    first: list[tuple[int, int, bool] | None] = [None] * 9
    # Pass 1: validate and count, allocating nothing.
    for pos, end in ranges:
        while pos < end:
            tag_offset = pos
            field, wire_type, pos = _tag(buf, pos, end)
            if not 1 <= field <= 8:
                pos = _skip(buf, pos, end, tag_offset, field, wire_type, 0)
                continue
            what = pc.CONTENTS_FIELDS[field]
            expected = pc.CONTENTS_WIRE[field]
            start = pos
            packed = False
            if wire_type == pc.LEN and field != 8:
                packed = True
                start, pos = _length(buf, pos, end, tag_offset)
                if field <= 5:
                    counts[field] += _packed_varints(buf, start, pos, tag_offset, what)
                else:
                    size = 4 if field == 6 else 8
                    if (pos - start) % size:
                        raise pc.packed_not_multiple(tag_offset, what, pos - start, size)
                    counts[field] += (pos - start) // size
            elif wire_type != expected:
                raise pc.wrong_wire_type(
                    tag_offset, "InferTensorContents", what, wire_type, expected
                )
            elif field <= 5:
                pos = _varint(buf, pos, end)[1]
                counts[field] += 1
            elif field == 8:
                start, pos = _length(buf, pos, end, tag_offset)
                if pos - start > limits.max_bytes_element:
                    raise pc.bytes_element_too_long(tag_offset, pos - start, limits)
                counts[field] += 1
            else:
                pos = _fixed(pos, end, 4 if field == 6 else 8, tag_offset)
                counts[field] += 1
            if first[field] is None:
                first[field] = (start, pos, packed)
            pieces[field] += 1
    for field in range(1, 9):
        if counts[field] > limits.max_tensor_elements:
            raise pc.too_many_elements(
                contents_offset, pc.CONTENTS_FIELDS[field], counts[field], limits
            )
    # Pass 2: the payloads. One packed fixed-width piece is a view; anything else is gathered.
    out: dict[str, Any] = {}
    gather: dict[int, list[Any]] = {}
    for field in range(1, 9):
        piece = first[field]
        if piece is None:
            continue
        if field in (6, 7) and pieces[field] == 1 and piece[2]:
            out[pc.CONTENTS_FIELDS[field]] = buf[piece[0] : piece[1]]
        else:
            gather[field] = []
    if gather:
        for pos, end in ranges:
            while pos < end:
                tag_offset = pos
                field, wire_type, pos = _tag(buf, pos, end)
                if field not in gather:
                    pos = _skip(buf, pos, end, tag_offset, field, wire_type, 0)
                    continue
                parts = gather[field]
                if wire_type == pc.LEN:
                    start, pos = _length(buf, pos, end, tag_offset)
                    if field <= 5:
                        parts.append(_decode_packed(np.frombuffer(buf[start:pos], np.uint8)))
                    else:
                        parts.append(bytes(buf[start:pos]))
                elif field <= 5:
                    bits, pos = _varint(buf, pos, end)
                    parts.append(np.array([bits], np.uint64))
                else:
                    size = 4 if field == 6 else 8
                    parts.append(bytes(buf[pos : pos + size]))
                    pos += size
        for field, parts in gather.items():
            name = pc.CONTENTS_FIELDS[field]
            if field <= 5:
                patterns = np.concatenate(parts) if parts else np.zeros(0, np.uint64)
                out[name] = _narrow(field, patterns.astype(np.uint64, copy=False))
            elif field == 8:
                elements = np.empty(len(parts), dtype=object)
                elements[:] = parts
                out[name] = elements
            else:
                out[name] = memoryview(b"".join(parts))
    return {name: out[name] for name in pc.CONTENTS_FIELDS if name in out}


def _requested(buf: memoryview, pos: int, end: int) -> tuple[str, dict[str, Any]]:
    name = ""
    parameters: dict[str, Any] = {}
    while pos < end:
        tag_offset = pos
        field, wire_type, pos = _tag(buf, pos, end)
        if field in pc.REQUESTED_FIELDS:
            _expect(
                wire_type, pc.LEN, tag_offset, "InferRequestedOutputTensor", pc.REQUESTED_FIELDS,
                field,
            )  # fmt: skip
            start, pos = _length(buf, pos, end, tag_offset)
            if field == 1:
                name = _string(buf, start, pos, tag_offset, "InferRequestedOutputTensor.name")
            else:
                _entry(buf, start, pos, tag_offset, parameters)
        else:
            pos = _skip(buf, pos, end, tag_offset, field, wire_type, 0)
    return name, parameters


@contract(CONTRACTS)
def read_infer_message(
    data: Any, kind: str = "request", limits: Limits = DEFAULT_LIMITS
) -> Message:
    kind = pc.check_kind(kind)
    buf = byte_view(data, "message").toreadonly()
    end = len(buf)
    if end > limits.max_body_bytes:
        raise pc.message_too_large(end, limits)
    fields = pc.ENVELOPE_FIELDS[kind]
    message = pc.MESSAGE_NAME[kind]
    raw_field = pc.RAW_FIELD[kind]
    strings = ["", "", ""]
    parameters: dict[str, Any] = {}
    tensors: list[Tensor] = []
    requested: list[tuple[str, dict[str, Any]]] = []
    raw: list[memoryview] = []
    raw_offset = -1
    pos = 0
    while pos < end:
        tag_offset = pos
        field, wire_type, pos = _tag(buf, pos, end)
        if field not in fields:
            pos = _skip(buf, pos, end, tag_offset, field, wire_type, 0)
            continue
        _expect(wire_type, pc.LEN, tag_offset, message, fields, field)
        start, pos = _length(buf, pos, end, tag_offset)
        if field <= 3:
            strings[field - 1] = _string(
                buf, start, pos, tag_offset, f"{message}.{fields[field][0]}"
            )
        elif field == 4:
            _entry(buf, start, pos, tag_offset, parameters)
        elif field == 5:
            if len(tensors) == limits.max_tensors:
                raise pc.too_many_tensors(tag_offset, pc.TENSORS_NAME[kind], limits)
            tensors.append(_tensor(buf, start, pos, tag_offset, kind, limits))
        elif field == raw_field:
            if len(raw) == limits.max_tensors:
                raise pc.too_many_tensors(tag_offset, pc.RAW_NAME[kind], limits)
            if raw_offset < 0:
                raw_offset = tag_offset
            raw.append(buf[start:pos])
        else:
            if len(requested) == limits.max_tensors:
                raise pc.too_many_tensors(tag_offset, "requested outputs", limits)
            requested.append(_requested(buf, start, pos))
    if raw:
        pc.check_raw_contents(kind, strings[0], tensors, raw, raw_offset)
    return strings[0], strings[1], strings[2], parameters, tensors, requested, raw


# --------------------------------------------------------------------------------------------
# Writer


def _encode_varints(bits: np.ndarray[Any, Any]) -> bytes:
    """uint64 patterns as concatenated varints, vectorised: up to 10 groups of 7 bits per
    value, every group but the last with the continuation bit."""
    if not len(bits):
        return b""
    sizes = _varint_sizes(bits)
    shifts = np.arange(10, dtype=np.uint64) * np.uint64(7)
    groups = ((bits[:, None] >> shifts) & np.uint64(0x7F)).astype(np.uint8)
    index = np.arange(10)
    groups[index[None, :] < (sizes[:, None] - 1)] |= 0x80
    return groups[index[None, :] < sizes[:, None]].tobytes()


def _varint_sizes(bits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    sizes = np.ones(len(bits), dtype=np.int64)
    for k in range(1, 10):
        sizes += bits >= np.uint64(1 << (7 * k))
    return sizes


def _payload_size(field: int, payload: Any) -> int:
    if field == 0 or field in (6, 7):
        return memoryview(payload).nbytes
    if field == 8:
        return sum(1 + pc.varint_size(len(e)) + len(e) for e in payload)
    return int(_varint_sizes(payload).sum())


@contract(CONTRACTS)
def write_infer_message(
    kind: str,
    model_name: str | None,
    model_version: str | None,
    id: str | None,
    parameters: Mapping[str, object] | None,
    tensors: list[tuple[Any, ...]],
    requested: list[tuple[str, Mapping[str, object] | None]] | None = None,
) -> bytes:
    segments, total = pc.plan_message(
        kind, model_name, model_version, id, parameters, tensors, requested, _payload_size
    )
    parts: list[bytes] = []
    for segment in segments:
        if isinstance(segment, bytes):
            parts.append(segment)
            continue
        field, payload = segment
        if field == 8:
            for element in payload:
                parts.append(b"\x42" + pc.varint_bytes(len(element)) + bytes(element))
        elif 1 <= field <= 5:
            parts.append(_encode_varints(payload))
        else:
            parts.append(bytes(memoryview(payload).cast("B")))
    out = b"".join(parts)
    assert len(out) == total
    return out
