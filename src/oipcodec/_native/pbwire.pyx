# Protobuf wire kernel for ModelInferRequest / ModelInferResponse: the native kernel. Its twin
# and reference is oipcodec/_pure/pbwire.py; field tables, the writer's envelope planner and
# every error message live in oipcodec/_shared/pbwire.py. The structure of the reader below follows
# the twin function by function, so that both stop at the same byte with the same error.

from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

from oipcodec._native.pbvarint cimport (
    OIPCODEC_PB_OK,
    OIPCODEC_PB_OVERLONG,
    oipcodec_pb_count_packed,
    oipcodec_pb_decode_packed,
    oipcodec_pb_varint,
    oipcodec_pb_varint_size,
    oipcodec_pb_varints_size,
    oipcodec_pb_write_varint,
    oipcodec_pb_write_varints,
)
from oipcodec._native.endian cimport oipcodec_load_le64

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared import pbwire as pc
from oipcodec._shared.buffers import byte_view
from oipcodec._shared.pbwire import CONTRACTS
from oipcodec.limits import DEFAULT_LIMITS

__all__ = ["read_infer_message", "write_infer_message"]

cdef extern from "Python.h":
    object PyUnicode_DecodeUTF8(const char *s, Py_ssize_t size, const char *errors)
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL

# The wire types (VARINT ... I32) are C constants from pbwire.pxd.

cdef int MAX_GROUP_DEPTH = pc.MAX_GROUP_DEPTH
cdef int MAX_DIMS = pc.MAX_DIMS

# The reader's state: the message bytes and the field it is in.
cdef struct Cursor:
    const uint8_t *base
    Py_ssize_t pos
    Py_ssize_t end


# --------------------------------------------------------------------------------------------
# Reader: primitives


cdef inline int _varint(const uint8_t *base, Py_ssize_t *pos, Py_ssize_t end,
                        uint64_t *out) except -1:
    cdef const uint8_t *p = base + pos[0]
    cdef int code = oipcodec_pb_varint(&p, base + end, out)
    if code == OIPCODEC_PB_OK:
        pos[0] = p - base
        return 0
    if code == OIPCODEC_PB_OVERLONG:
        raise pc.overlong_varint(pos[0])
    raise pc.truncated_varint(pos[0])


cdef inline int _tag(const uint8_t *base, Py_ssize_t *pos, Py_ssize_t end,
                     uint32_t *field, int *wire_type) except -1:
    cdef Py_ssize_t start = pos[0]
    cdef uint64_t tag
    _varint(base, pos, end, &tag)
    if tag > 0xFFFFFFFF or tag >> 3 == 0 or (tag & 7) > 5:
        raise pc.bad_tag(start, tag)
    field[0] = <uint32_t>(tag >> 3)
    wire_type[0] = <int>(tag & 7)
    return 0


cdef inline int _length(const uint8_t *base, Py_ssize_t *pos, Py_ssize_t end,
                        Py_ssize_t tag_offset, Py_ssize_t *start) except -1:
    """Reads a length; start is the value's first byte, pos its end."""
    cdef uint64_t length
    _varint(base, pos, end, &length)
    if length > <uint64_t>(end - pos[0]):
        raise pc.past_end(tag_offset, length, end - pos[0])
    start[0] = pos[0]
    pos[0] += <Py_ssize_t>length
    return 0


cdef inline int _fixed(Py_ssize_t *pos, Py_ssize_t end, Py_ssize_t size,
                       Py_ssize_t tag_offset) except -1:
    if end - pos[0] < size:
        raise pc.fixed_past_end(tag_offset, size, end - pos[0])
    pos[0] += size
    return 0


cdef int _skip(const uint8_t *base, Py_ssize_t *pos, Py_ssize_t end, Py_ssize_t tag_offset,
               uint32_t field, int wire_type, int depth) except -1:
    cdef uint64_t ignored
    cdef Py_ssize_t start, inner_offset
    cdef uint32_t inner_field
    cdef int inner_type
    if wire_type == VARINT:
        return _varint(base, pos, end, &ignored)
    if wire_type == I64:
        return _fixed(pos, end, 8, tag_offset)
    if wire_type == LEN:
        return _length(base, pos, end, tag_offset, &start)
    if wire_type == I32:
        return _fixed(pos, end, 4, tag_offset)
    if wire_type == EGROUP:
        raise pc.unmatched_end_group(tag_offset)
    if depth >= MAX_GROUP_DEPTH:
        raise pc.group_too_deep(tag_offset)
    while True:
        if pos[0] >= end:
            raise pc.unterminated_group(tag_offset, field)
        inner_offset = pos[0]
        _tag(base, pos, end, &inner_field, &inner_type)
        if inner_type == EGROUP:
            if inner_field != field:
                raise pc.mismatched_end_group(inner_offset, inner_field, field)
            return 0
        _skip(base, pos, end, inner_offset, inner_field, inner_type, depth + 1)


cdef inline int _expect(int wire_type, int expected, Py_ssize_t tag_offset, str message,
                        dict fields, uint32_t field) except -1:
    if wire_type != expected:
        raise pc.wrong_wire_type(tag_offset, message, fields[field][0], wire_type, expected)
    return 0


cdef inline str _string(const uint8_t *base, Py_ssize_t start, Py_ssize_t stop,
                        Py_ssize_t tag_offset, str what, str field=None):
    # The error's words (``what``, or ``what.field``) joined only on an error: a good
    # message's three strings would otherwise build three labels per call.
    try:
        return PyUnicode_DecodeUTF8(<const char *>base + start, stop - start, NULL)
    except UnicodeDecodeError:
        raise pc.invalid_utf8(tag_offset, what if field is None else what + "." + field) from None


cdef inline int64_t _signed(uint64_t bits) noexcept:
    return <int64_t>bits


# --------------------------------------------------------------------------------------------
# Reader: messages


cdef object _parameter(const uint8_t *base, Py_ssize_t pos, Py_ssize_t end):
    cdef object value = None
    cdef Py_ssize_t tag_offset, start
    cdef uint32_t field
    cdef int wire_type
    cdef uint64_t bits
    cdef double number
    while pos < end:
        tag_offset = pos
        _tag(base, &pos, end, &field, &wire_type)
        if 1 <= field <= 5:
            _expect(wire_type, pc.PARAMETER_FIELDS[field][1], tag_offset, "InferParameter",
                    pc.PARAMETER_FIELDS, field)
            if field == 3:
                _length(base, &pos, end, tag_offset, &start)
                value = _string(base, start, pos, tag_offset, "InferParameter.string_param")
            elif field == 4:
                start = pos
                _fixed(&pos, end, 8, tag_offset)
                bits = oipcodec_load_le64(base + start)
                memcpy(&number, &bits, 8)
                value = number
            else:
                _varint(base, &pos, end, &bits)
                if field == 1:
                    value = bits != 0
                elif field == 2:
                    value = _signed(bits)
                else:
                    value = bits
        else:
            _skip(base, &pos, end, tag_offset, field, wire_type, 0)
    return value


cdef int _entry(const uint8_t *base, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t entry_offset,
                dict into) except -1:
    cdef str key = ""
    cdef object value = None, found
    cdef Py_ssize_t tag_offset, start
    cdef uint32_t field
    cdef int wire_type
    while pos < end:
        tag_offset = pos
        _tag(base, &pos, end, &field, &wire_type)
        if field == 1 or field == 2:
            _expect(wire_type, LEN, tag_offset, "ParametersEntry", pc.ENTRY_FIELDS, field)
            _length(base, &pos, end, tag_offset, &start)
            if field == 1:
                key = _string(base, start, pos, tag_offset, "parameter name")
            else:
                found = _parameter(base, start, pos)
                if found is not None:
                    value = found
        else:
            _skip(base, &pos, end, tag_offset, field, wire_type, 0)
    if value is None:
        raise pc.parameter_without_value(entry_offset, key)
    into[key] = value
    return 0


cdef tuple _tensor(object buf, const uint8_t *base, Py_ssize_t pos, Py_ssize_t end,
                   Py_ssize_t tensor_offset, str kind, object limits):
    cdef str message = pc.TENSOR_MESSAGE[kind]
    cdef str name = "", datatype = ""
    cdef list shape = []
    cdef dict parameters = {}
    cdef list ranges = []
    cdef Py_ssize_t contents_offset = -1, tag_offset, start, stop
    cdef uint32_t field
    cdef int wire_type
    cdef uint64_t bits
    while pos < end:
        tag_offset = pos
        _tag(base, &pos, end, &field, &wire_type)
        if field == 3:
            if wire_type == LEN:
                _length(base, &pos, end, tag_offset, &start)
                stop = pos
                pos = start
                while pos < stop:
                    if len(shape) == MAX_DIMS:
                        raise pc.too_many_dims(tag_offset)
                    _varint(base, &pos, stop, &bits)
                    shape.append(_signed(bits))
            else:
                _expect(wire_type, VARINT, tag_offset, message, pc.TENSOR_FIELDS, field)
                if len(shape) == MAX_DIMS:
                    raise pc.too_many_dims(tag_offset)
                _varint(base, &pos, end, &bits)
                shape.append(_signed(bits))
        elif 1 <= field <= 5:
            _expect(wire_type, LEN, tag_offset, message, pc.TENSOR_FIELDS, field)
            _length(base, &pos, end, tag_offset, &start)
            if field == 1:
                name = _string(base, start, pos, tag_offset, message, "name")
            elif field == 2:
                datatype = _string(base, start, pos, tag_offset, message, "datatype")
            elif field == 4:
                _entry(base, start, pos, tag_offset, parameters)
            else:
                if contents_offset < 0:
                    contents_offset = tag_offset
                ranges.append((start, pos))
        else:
            _skip(base, &pos, end, tag_offset, field, wire_type, 0)
    contents = _contents(buf, base, ranges, contents_offset, limits) if ranges else None
    return name, datatype, tuple(shape), parameters, contents, tensor_offset, contents_offset


cdef dict _contents(object buf, const uint8_t *base, list ranges, Py_ssize_t contents_offset,
                    object limits):
    cdef Py_ssize_t counts[9]
    cdef Py_ssize_t pieces[9]
    cdef Py_ssize_t first_start[9]
    cdef Py_ssize_t first_stop[9]
    cdef bint first_packed[9]
    cdef Py_ssize_t fill[9]
    cdef Py_ssize_t pos, end, tag_offset, start, n, bad, size, max_bytes
    cdef uint32_t field
    cdef int wire_type, expected, code, f
    cdef bint packed
    cdef uint64_t bits
    cdef char *dst
    for f in range(9):
        counts[f] = 0
        pieces[f] = 0
        first_start[f] = first_stop[f] = 0
        first_packed[f] = False
        fill[f] = 0
    max_bytes = min(limits.max_bytes_element, 2**62)
    # Pass 1: validate and count, allocating nothing.
    for pos, end in ranges:
        while pos < end:
            tag_offset = pos
            _tag(base, &pos, end, &field, &wire_type)
            if not 1 <= field <= 8:
                _skip(base, &pos, end, tag_offset, field, wire_type, 0)
                continue
            expected = pc.CONTENTS_WIRE[field]
            start = pos
            packed = False
            if wire_type == LEN and field != 8:
                packed = True
                _length(base, &pos, end, tag_offset, &start)
                if field <= 5:
                    with nogil:
                        code = oipcodec_pb_count_packed(base + start, base + pos, &n, &bad)
                    if code == OIPCODEC_PB_OVERLONG:
                        raise pc.overlong_varint(start + bad)
                    if code != OIPCODEC_PB_OK:
                        raise pc.packed_truncated(tag_offset, pc.CONTENTS_FIELDS[field])
                    counts[field] += n
                else:
                    size = 4 if field == 6 else 8
                    if (pos - start) % size:
                        raise pc.packed_not_multiple(
                            tag_offset, pc.CONTENTS_FIELDS[field], pos - start, size)
                    counts[field] += (pos - start) // size
            elif wire_type != expected:
                raise pc.wrong_wire_type(tag_offset, "InferTensorContents",
                                         pc.CONTENTS_FIELDS[field], wire_type, expected)
            elif field <= 5:
                _varint(base, &pos, end, &bits)
                counts[field] += 1
            elif field == 8:
                _length(base, &pos, end, tag_offset, &start)
                if pos - start > max_bytes:
                    raise pc.bytes_element_too_long(tag_offset, pos - start, limits)
                counts[field] += 1
            else:
                _fixed(&pos, end, 4 if field == 6 else 8, tag_offset)
                counts[field] += 1
            if pieces[field] == 0:
                first_start[field] = start
                first_stop[field] = pos
                first_packed[field] = packed
            pieces[field] += 1
    for f in range(1, 9):
        if counts[f] > limits.max_tensor_elements:
            raise pc.too_many_elements(contents_offset, pc.CONTENTS_FIELDS[f], counts[f], limits)
    # Pass 2: the payloads. One packed fixed-width piece is a view; anything else is gathered
    # into a buffer of the counted size.
    cdef dict out = {}
    cdef list targets = [None] * 9
    cdef bint gather = False
    cdef unsigned char[::1] target
    cdef object[::1] cells
    for f in range(1, 9):
        if pieces[f] == 0:
            continue
        if (f == 6 or f == 7) and pieces[f] == 1 and first_packed[f]:
            out[pc.CONTENTS_FIELDS[f]] = buf[first_start[f]:first_stop[f]]
            continue
        gather = True
        if f <= 5:
            targets[f] = np.empty(counts[f], dtype=pc.VARINT_DTYPES[f])
        elif f == 8:
            targets[f] = np.empty(counts[f], dtype=object)
        else:
            targets[f] = bytearray(counts[f] * (4 if f == 6 else 8))
    if gather:
        for pos, end in ranges:
            while pos < end:
                tag_offset = pos
                _tag(base, &pos, end, &field, &wire_type)
                if field > 8 or targets[field] is None:
                    _skip(base, &pos, end, tag_offset, field, wire_type, 0)
                    continue
                if field == 8:
                    _length(base, &pos, end, tag_offset, &start)
                    cells = targets[field]
                    cells[fill[field]] = PyBytes_FromStringAndSize(
                        <const char *>base + start, pos - start)
                    fill[field] += 1
                    continue
                target = targets[field].view(np.uint8) if field <= 5 else targets[field]
                size = targets[field].itemsize if field <= 5 else (4 if field == 6 else 8)
                if wire_type == LEN:
                    _length(base, &pos, end, tag_offset, &start)
                    if field <= 5:
                        with nogil:
                            n = oipcodec_pb_decode_packed(
                                base + start, base + pos, &target[0] + fill[field] * size, field)
                        fill[field] += n
                    elif pos > start:
                        memcpy(&target[0] + fill[field] * size, base + start, pos - start)
                        fill[field] += (pos - start) // size
                elif field <= 5:
                    start = pos
                    _varint(base, &pos, end, &bits)
                    oipcodec_pb_decode_packed(
                        base + start, base + pos, &target[0] + fill[field] * size, field)
                    fill[field] += 1
                else:
                    memcpy(&target[0] + fill[field] * size, base + pos, size)
                    pos += size
                    fill[field] += 1
        for f in range(1, 9):
            if targets[f] is not None:
                value = targets[f]
                out[pc.CONTENTS_FIELDS[f]] = memoryview(value).toreadonly() if 6 <= f <= 7 else value
    return {name: out[name] for name in pc.CONTENTS_FIELDS if name in out}


cdef tuple _requested(const uint8_t *base, Py_ssize_t pos, Py_ssize_t end):
    cdef str name = ""
    cdef dict parameters = {}
    cdef Py_ssize_t tag_offset, start
    cdef uint32_t field
    cdef int wire_type
    while pos < end:
        tag_offset = pos
        _tag(base, &pos, end, &field, &wire_type)
        if field == 1 or field == 2:
            _expect(wire_type, LEN, tag_offset, "InferRequestedOutputTensor",
                    pc.REQUESTED_FIELDS, field)
            _length(base, &pos, end, tag_offset, &start)
            if field == 1:
                name = _string(base, start, pos, tag_offset, "InferRequestedOutputTensor.name")
            else:
                _entry(base, start, pos, tag_offset, parameters)
        else:
            _skip(base, &pos, end, tag_offset, field, wire_type, 0)
    return name, parameters


@contract(CONTRACTS)
def read_infer_message(data, kind="request", limits=DEFAULT_LIMITS):
    kind = pc.check_kind(kind)
    cdef const uint8_t[::1] view
    cdef Py_ssize_t end
    cdef const uint8_t *base
    if type(data) is bytes:  # a server's message: read-only already, read in place
        buf = memoryview(data)
        end = PyBytes_GET_SIZE(data)
        base = <const uint8_t *>PyBytes_AS_STRING(data)
    else:
        buf = byte_view(data, "message").toreadonly()
        view = buf
        end = view.shape[0]
        base = &view[0] if end else <const uint8_t *>b""
    if end > limits.max_body_bytes:
        raise pc.message_too_large(end, limits)
    cdef dict fields = pc.ENVELOPE_FIELDS[kind]
    cdef str message = pc.MESSAGE_NAME[kind]
    cdef uint32_t raw_field = pc.RAW_FIELD[kind]
    cdef Py_ssize_t max_tensors = limits.max_tensors
    cdef list strings = ["", "", ""]
    cdef dict parameters = {}
    cdef list tensors = [], requested = [], raw = []
    cdef Py_ssize_t raw_offset = -1, pos = 0, tag_offset, start
    cdef uint32_t field
    cdef int wire_type
    while pos < end:
        tag_offset = pos
        _tag(base, &pos, end, &field, &wire_type)
        if field not in fields:
            _skip(base, &pos, end, tag_offset, field, wire_type, 0)
            continue
        _expect(wire_type, LEN, tag_offset, message, fields, field)
        _length(base, &pos, end, tag_offset, &start)
        if field <= 3:
            strings[field - 1] = _string(base, start, pos, tag_offset, message,
                                         fields[field][0])
        elif field == 4:
            _entry(base, start, pos, tag_offset, parameters)
        elif field == 5:
            if len(tensors) == max_tensors:
                raise pc.too_many_tensors(tag_offset, pc.TENSORS_NAME[kind], limits)
            tensors.append(_tensor(buf, base, start, pos, tag_offset, kind, limits))
        elif field == raw_field:
            if len(raw) == max_tensors:
                raise pc.too_many_tensors(tag_offset, pc.RAW_NAME[kind], limits)
            if raw_offset < 0:
                raw_offset = tag_offset
            raw.append(buf[start:pos])
        else:
            if len(requested) == max_tensors:
                raise pc.too_many_tensors(tag_offset, "requested outputs", limits)
            requested.append(_requested(base, start, pos))
    if raw and (len(raw) != len(tensors) or any((<tuple>t)[4] for t in tensors)):
        # What check_raw_contents refuses needs one of these (the usual message: neither).
        pc.check_raw_contents(kind, strings[0], tensors, raw, raw_offset)
    return strings[0], strings[1], strings[2], parameters, tensors, requested, raw


# --------------------------------------------------------------------------------------------
# Writer


def _payload_size(int field, payload):
    cdef const uint8_t[::1] values
    cdef size_t total = 0
    if field == 0 or field == 6 or field == 7:
        return memoryview(payload).nbytes
    cdef Py_ssize_t size
    if field == 8:
        for element in payload:
            size = PyBytes_GET_SIZE(element) if type(element) is bytes else len(element)
            total += 1 + oipcodec_pb_varint_size(<uint64_t>size) + size
        return total
    values = byte_view(payload)
    with nogil:
        total = oipcodec_pb_varints_size(&values[0] if values.shape[0] else NULL,
                                         values.shape[0] // 8)
    return total


# The raw form (every tensor in raw contents, as the server answers ModelInfer) is sized and
# written here in two passes over the tensors, with no segment list: planning it in Python
# cost about as much as the rest of a small call's encode. Anything else, and anything the
# planner would refuse, takes plan_message, so its errors stay the one source.


cdef struct _RawTensor:
    const char *name
    Py_ssize_t name_size
    const char *datatype
    Py_ssize_t datatype_size
    Py_ssize_t shape_size  # the packed dims' bytes
    Py_ssize_t head_size  # the InferInputTensor / InferOutputTensor message's bytes
    Py_buffer payload
    bint held


cdef inline Py_ssize_t _field_size(Py_ssize_t size) noexcept:
    """A LEN field of a one-byte tag holding ``size`` bytes (none when empty)."""
    return 1 + oipcodec_pb_varint_size(<uint64_t>size) + size if size else 0


cdef inline uint8_t *_put_field(uint8_t *dst, uint8_t tag, const char *data,
                                Py_ssize_t size) noexcept:
    if size:
        dst[0] = tag
        dst = oipcodec_pb_write_varint(dst + 1, <uint64_t>size)
        memcpy(dst, data, size)
        dst += size
    return dst


cdef inline bint _text(value, const char **data, Py_ssize_t *size):
    """A str's UTF-8 (None and "" are absent fields); False for what plan_message must judge."""
    if value is None:
        size[0] = 0
        return True
    if type(value) is not str:
        return False
    try:
        data[0] = PyUnicode_AsUTF8AndSize(value, size)
    except UnicodeEncodeError:
        return False
    return True


cdef object _write_raw(kind, model_name, model_version, id, parameters, list tensors, requested):
    """The message in the raw form, or None when it is not one (plan_message writes it)."""
    cdef const char *text[3]
    cdef Py_ssize_t text_size[3]
    cdef Py_ssize_t n = len(tensors), i, total, size
    cdef _RawTensor *rows
    cdef _RawTensor *row
    cdef uint8_t *dst
    cdef uint8_t raw_tag = 0x3A if kind == "request" else 0x32  # field 7 or 6, LEN
    cdef object d
    cdef long long dim
    cdef bytes out, message_parameters
    if requested or not (
        _text(model_name, &text[0], &text_size[0])
        and _text(model_version, &text[1], &text_size[1])
        and _text(id, &text[2], &text_size[2])
    ):
        return None
    for entry in tensors:
        if type(entry) is not tuple or len(<tuple>entry) != 6 or (<tuple>entry)[4] != 0 \
                or (<tuple>entry)[5] is None or (<tuple>entry)[3]:
            return None
    # An answer's parameters are nearly always none: no Python call for them then.
    message_parameters = pc.encode_parameters(4, parameters) if parameters else b""
    rows = <_RawTensor *>PyMem_Malloc(n * sizeof(_RawTensor) + 1)
    if rows is NULL:
        raise MemoryError()
    for i in range(n):
        rows[i].held = False
    try:
        total = (_field_size(text_size[0]) + _field_size(text_size[1])
                 + _field_size(text_size[2]) + PyBytes_GET_SIZE(message_parameters))
        for i in range(n):
            row = &rows[i]
            name, datatype, shape, _, _, payload = <tuple>tensors[i]
            if not (_text(name, &row.name, &row.name_size)
                    and _text(datatype, &row.datatype, &row.datatype_size)):
                return None
            if type(shape) is not tuple and type(shape) is not list:
                return None
            row.shape_size = 0
            for d in shape:
                if type(d) is not int:
                    return None
                try:
                    dim = d
                except OverflowError:
                    return None
                if dim < 0:
                    return None
                row.shape_size += oipcodec_pb_varint_size(<uint64_t>dim)
            try:
                PyObject_GetBuffer(payload, &row.payload, PyBUF_C_CONTIGUOUS)
            except (BufferError, TypeError):  # strided (the planner copies it), or no buffer
                return None
            row.held = True
            row.head_size = (_field_size(row.name_size) + _field_size(row.datatype_size)
                             + _field_size(row.shape_size))
            total += 1 + oipcodec_pb_varint_size(<uint64_t>row.head_size) + row.head_size
            total += 1 + oipcodec_pb_varint_size(<uint64_t>row.payload.len) + row.payload.len
        out = PyBytes_FromStringAndSize(NULL, total)
        dst = <uint8_t *>PyBytes_AS_STRING(out)
        for i in range(3):
            dst = _put_field(dst, 0x0A + 8 * i, text[i], text_size[i])
        size = PyBytes_GET_SIZE(message_parameters)
        memcpy(dst, PyBytes_AS_STRING(message_parameters), size)
        dst += size
        for i in range(n):
            row = &rows[i]
            dst[0] = 0x2A  # field 5, LEN
            dst = oipcodec_pb_write_varint(dst + 1, <uint64_t>row.head_size)
            dst = _put_field(dst, 0x0A, row.name, row.name_size)
            dst = _put_field(dst, 0x12, row.datatype, row.datatype_size)
            if row.shape_size:
                dst[0] = 0x1A
                dst = oipcodec_pb_write_varint(dst + 1, <uint64_t>row.shape_size)
                for d in (<tuple>tensors[i])[2]:
                    dim = d
                    dst = oipcodec_pb_write_varint(dst, <uint64_t>dim)
        for i in range(n):
            row = &rows[i]
            dst[0] = raw_tag
            dst = oipcodec_pb_write_varint(dst + 1, <uint64_t>row.payload.len)
            memcpy(dst, row.payload.buf, row.payload.len)
            dst += row.payload.len
        if dst != <uint8_t *>PyBytes_AS_STRING(out) + total:
            raise AssertionError("pbwire writer: planned and written sizes differ")
        return out
    finally:
        for i in range(n):
            if rows[i].held:
                PyBuffer_Release(&rows[i].payload)
        PyMem_Free(rows)


@contract(CONTRACTS)
def write_infer_message(kind, model_name, model_version, id, parameters, tensors,
                        requested=None):
    if (kind == "request" or kind == "response") and type(tensors) is list:
        raw = _write_raw(kind, model_name, model_version, id, parameters, tensors, requested)
        if raw is not None:
            return raw
    segments, total = pc.plan_message(
        kind, model_name, model_version, id, parameters, tensors, requested, _payload_size
    )
    cdef Py_ssize_t planned = total
    cdef bytes out = PyBytes_FromStringAndSize(NULL, planned)
    cdef uint8_t *dst = <uint8_t *>PyBytes_AS_STRING(out)
    cdef uint8_t *stop = dst + planned
    cdef const uint8_t[::1] source
    cdef Py_ssize_t size
    cdef int field
    for segment in segments:
        if type(segment) is bytes:
            size = PyBytes_GET_SIZE(segment)
            memcpy(dst, PyBytes_AS_STRING(segment), size)
            dst += size
            continue
        field, payload = segment
        if field == 8:
            for element in payload:
                if type(element) is not bytes:
                    element = bytes(element)
                size = PyBytes_GET_SIZE(element)
                dst[0] = 0x42
                dst = oipcodec_pb_write_varint(dst + 1, <uint64_t>size)
                memcpy(dst, PyBytes_AS_STRING(element), size)
                dst += size
            continue
        source = byte_view(payload)
        size = source.shape[0]
        if size == 0:
            continue
        if 1 <= field <= 5:
            with nogil:
                dst = oipcodec_pb_write_varints(dst, &source[0], <size_t>(size // 8))
        else:
            with nogil:
                memcpy(dst, &source[0], size)
            dst += size
    if dst != stop:
        raise AssertionError("pbwire writer: planned and written sizes differ")
    return out
