# The fused REST kernels: the native twin. Its reference is oipcodec/_pure/fusedrest.py; the
# plan and the contracts are oipcodec/_shared/fusedrest.py.
#
# The envelope is walked here in C, each data array read by jsondecode's
# walk straight into the input's array, and each output's text written by jsonencode's writer
# without array_to_json's argument checks (the plan made them: C-contiguous, native dtype).

from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.string cimport memcmp

from oipcodec._native.jsondecode cimport OK, Walk, walk, walk_init
from oipcodec._native.jsonencode cimport write_elements

import numpy as np

from oipcodec._native.jsonencode import array_to_json
from oipcodec._shared import contract
from oipcodec._shared.buffers import byte_view
from oipcodec._shared.fusedrest import (
    ANY_INPUT,
    ANY_OUTPUT,
    CONTRACTS,
    FusedPlan,
    binary_entry,
    binary_inputs,
    fused_plan,
)

__all__ = ["FusedPlan", "decode_inputs", "encode_outputs", "fused_plan"]

cdef enum:
    MAX_DIMS = 64
    MAX_DIGITS = 18  # an int64 dim; longer ones are the general decoder's to refuse


cdef struct Scan:
    const unsigned char *base
    const unsigned char *pos
    const unsigned char *end


cdef inline int _peek(Scan *s) noexcept nogil:
    """The next byte after white space, or -1 at the end."""
    cdef const unsigned char *p = s.pos
    while p < s.end and (p[0] == b' ' or p[0] == b'\t' or p[0] == b'\n' or p[0] == b'\r'):
        p += 1
    s.pos = p
    return p[0] if p < s.end else -1


cdef inline bint _expect(Scan *s, unsigned char c) noexcept nogil:
    if _peek(s) != c:
        return False
    s.pos += 1
    return True


cdef bint _string(Scan *s, const unsigned char **start, Py_ssize_t *length) noexcept nogil:
    """A string with no escapes and no control characters: where its bytes are."""
    cdef const unsigned char *p
    if not _expect(s, b'"'):
        return False
    p = s.pos
    while p < s.end and p[0] != b'"':
        if p[0] == b'\\' or p[0] < 0x20:
            return False
        p += 1
    if p == s.end:
        return False
    start[0] = s.pos
    length[0] = p - s.pos
    s.pos = p + 1
    return True


cdef inline bint _is(const unsigned char *key, Py_ssize_t n, const char *word, Py_ssize_t m) noexcept nogil:
    return n == m and memcmp(key, word, m) == 0


cdef bint _dim(Scan *s, long long *value) noexcept nogil:
    """A positive integer as JSON writes it (no leading zero, sign or fraction)."""
    cdef const unsigned char *p
    cdef const unsigned char *start
    cdef long long v = 0
    _peek(s)
    start = p = s.pos
    while p < s.end and 0x30 <= p[0] <= 0x39:  # a digit
        v = v * 10 + (p[0] - 0x30)
        p += 1
        if p - start > MAX_DIGITS:
            return False
    if p == start or (start[0] == b'0' and p - start > 1):
        return False
    if p < s.end and (p[0] == b'.' or p[0] == b'e' or p[0] == b'E'):
        return False
    s.pos = p
    value[0] = v
    return True


cdef int _more(Scan *s, unsigned char close) noexcept nogil:
    """After a member or an entry: 1 on ',', 0 on ``close``, -1 on anything else."""
    cdef int c = _peek(s)
    s.pos += 1
    if c == b',':
        return 1
    return 0 if c == close else -1


cdef bint _array_span(Scan *s, Py_ssize_t *start, Py_ssize_t *stop) noexcept nogil:
    """Move past an array of numbers, booleans and arrays."""
    cdef const unsigned char *p
    cdef Py_ssize_t depth = 0
    if _peek(s) != b'[':
        return False
    p = s.pos
    while p < s.end:
        if p[0] == b'[':
            depth += 1
        elif p[0] == b']':
            depth -= 1
            if depth == 0:
                start[0] = s.pos - s.base
                stop[0] = p + 1 - s.base
                s.pos = p + 1
                return True
        elif p[0] == b'"' or p[0] == b'{':
            return False
        p += 1
    return False


cdef Py_ssize_t _input(Scan *s, plan, dict arrays, Py_ssize_t total, list pending) except -2:
    """One input object: the request's element count so far with its own, or -1 to fall back.
    An input sent in binary (``pending`` not None: the body has a binary part) is added to
    ``pending`` and holds its place in ``arrays`` with None."""
    cdef const unsigned char *key
    cdef const unsigned char *name = NULL
    cdef const unsigned char *datatype = NULL
    cdef Py_ssize_t n, name_n = 0, datatype_n = 0, start = -1, stop = -1, i
    cdef Py_ssize_t ndim = -1, count = 1, max_tensor
    cdef long long[MAX_DIMS] shape
    cdef Py_ssize_t[MAX_DIMS] dims_c
    cdef long long size, binary_size = -1
    cdef Py_buffer cells
    cdef Walk w
    cdef int more, code
    if not _expect(s, b'{'):
        return -1
    while True:
        if not _string(s, &key, &n) or not _expect(s, b':'):
            return -1
        if _is(key, n, "name", 4) and name == NULL:
            if not _string(s, &name, &name_n):
                return -1
        elif _is(key, n, "datatype", 8) and datatype == NULL:
            if not _string(s, &datatype, &datatype_n):
                return -1
        elif _is(key, n, "shape", 5) and ndim < 0:
            if not _expect(s, b'['):
                return -1
            ndim = 0
            if _peek(s) == b']':
                s.pos += 1
            else:
                while True:
                    if ndim == MAX_DIMS or not _dim(s, &shape[ndim]):
                        return -1
                    ndim += 1
                    more = _more(s, b']')
                    if more < 0:
                        return -1
                    if more == 0:
                        break
        elif _is(key, n, "data", 4) and start < 0 and binary_size < 0:
            if not _array_span(s, &start, &stop):
                return -1
        elif _is(key, n, "parameters", 10) and pending is not None and start < 0 and binary_size < 0:
            # {"binary_data_size": N} alone: any other parameter is the general decoder's
            if not _expect(s, b'{') or not _string(s, &key, &n) or not _expect(s, b':'):
                return -1
            if not _is(key, n, "binary_data_size", 16) or not _dim(s, &binary_size):
                return -1
            if not _expect(s, b'}'):
                return -1
        else:
            return -1
        more = _more(s, b'}')
        if more < 0:
            return -1
        if more == 0:
            break
    if name == NULL or datatype == NULL or ndim < 0 or (start < 0 and binary_size < 0):
        return -1
    name_bytes = PyBytes_FromStringAndSize(<const char *>name, name_n)
    if plan.inputs is None:  # the model declares none: any name and fixed-width datatype
        facts = ANY_INPUT.get(PyBytes_FromStringAndSize(<const char *>datatype, datatype_n))
        if facts is None:
            return -1
        try:
            input_name = name_bytes.decode("utf-8")
        except UnicodeDecodeError:
            return -1
        dt, kind, dtype = facts
        dims = None
    else:
        declared = plan.inputs.get(name_bytes)
        if declared is None:
            return -1
        input_name, dt, dt_bytes, dims, kind, dtype = declared
        if len(dims) != ndim or not _is(datatype, datatype_n, dt_bytes, len(dt_bytes)):
            return -1
    if input_name in arrays:
        return -1
    max_tensor = plan.max_tensor_elements
    for i in range(ndim):
        size = shape[i]
        # (no zero dimension: the count then grows at each step and is checked as it does)
        if size == 0 or size > max_tensor // count:
            return -1
        if dims is not None and dims[i] != -1 and size != dims[i]:
            return -1
        count *= size
    if count > plan.max_request_elements - total:
        return -1
    if binary_size >= 0:
        if binary_size != count * dtype.itemsize:
            return -1
        pending.append((input_name, dtype, tuple([shape[i] for i in range(ndim)]), count))
        arrays[input_name] = None
        return total + count
    if count > (stop - start + 1) // 2:
        return -1  # more elements than the text can hold: nothing allocated for them
    for i in range(ndim):
        dims_c[i] = shape[i]
    out = np.empty(tuple([shape[i] for i in range(ndim)]), dtype)
    PyObject_GetBuffer(out, &cells, PyBUF_WRITABLE)
    walk_init(&w, kind, dtype.itemsize, count, plan.max_depth, s.base + start, stop - start)
    w.out = <unsigned char *>cells.buf
    code = walk(&w, ndim, dims_c, count)
    PyBuffer_Release(&cells)
    if code != OK:
        return -1  # the general decoder names the element at fault
    arrays[input_name] = out
    return total + count


cdef int _flag(Scan *s, const char *word, Py_ssize_t m) noexcept nogil:
    """An object with no member or only ``word``: 1 for ``true``, 0 for ``false`` or
    absent, -1 for anything else."""
    cdef const unsigned char *key
    cdef Py_ssize_t n
    cdef int value
    if not _expect(s, b'{'):
        return -1
    if _peek(s) == b'}':
        s.pos += 1
        return 0
    if not _string(s, &key, &n) or not _is(key, n, word, m) or not _expect(s, b':'):
        return -1
    _peek(s)
    if s.end - s.pos >= 4 and memcmp(s.pos, b"true", 4) == 0:
        s.pos += 4
        value = 1
    elif s.end - s.pos >= 5 and memcmp(s.pos, b"false", 5) == 0:
        s.pos += 5
        value = 0
    else:
        return -1
    return value if _expect(s, b'}') else -1


cdef bint _outputs(Scan *s, plan, list requested, set binary) except -1:
    """The requested outputs' names in the body's order into ``requested``, those asked in
    binary into ``binary``; False to fall back."""
    cdef const unsigned char *key
    cdef const unsigned char *name
    cdef Py_ssize_t n, name_n
    cdef int asked, more
    declared = plan.outputs
    if not _expect(s, b'['):
        return False
    while True:
        name = NULL
        asked = -2
        if not _expect(s, b'{'):
            return False
        while True:
            if not _string(s, &key, &n) or not _expect(s, b':'):
                return False
            if _is(key, n, "name", 4) and name == NULL:
                if not _string(s, &name, &name_n):
                    return False
            elif _is(key, n, "parameters", 10) and asked == -2:
                asked = _flag(s, "binary_data", 11)
                if asked < 0:
                    return False
            else:
                return False
            more = _more(s, b'}')
            if more < 0:
                return False
            if more == 0:
                break
        if name == NULL:
            return False
        try:
            output = PyBytes_FromStringAndSize(<const char *>name, name_n).decode("utf-8")
        except UnicodeDecodeError:
            return False
        if output in requested or (declared is not None and output not in declared):
            return False  # (an undeclared one: the general step refuses it before predict)
        requested.append(output)
        if asked == 1:
            binary.add(output)
        more = _more(s, b']')
        if more < 0:
            return False
        if more == 0:
            return True


@contract(CONTRACTS)
def decode_inputs(body, plan, Py_ssize_t header_length=-1):
    view = byte_view(body, "body")
    cdef Py_buffer data
    cdef Scan s
    cdef const unsigned char *key
    cdef const unsigned char *id_start = NULL
    cdef Py_ssize_t n, id_n = 0, total = 0, i, count = 0
    cdef Py_ssize_t max_tensors = plan.max_tensors
    cdef bint inputs = False, parameters = False
    cdef int more, binary_output = 0
    cdef dict arrays = {}
    cdef list pending = None
    cdef list requested = None
    cdef set binary = None
    PyObject_GetBuffer(view, &data, PyBUF_SIMPLE)
    try:
        if header_length == 0 or header_length > data.len:
            return None
        s.base = s.pos = <const unsigned char *>data.buf
        s.end = s.base + data.len
        if header_length > 0:
            pending = []
            s.end = s.base + header_length
        if not _expect(&s, b'{'):
            return None
        while True:
            if not _string(&s, &key, &n) or not _expect(&s, b':'):
                return None
            if _is(key, n, "id", 2) and id_start == NULL:
                if not _string(&s, &id_start, &id_n):
                    return None
                for i in range(id_n):
                    if id_start[i] > 0x7E:
                        return None
            elif _is(key, n, "parameters", 10) and not parameters:
                parameters = True
                binary_output = _flag(&s, "binary_data_output", 18)
                if binary_output < 0:
                    return None
            elif _is(key, n, "inputs", 6) and not inputs:
                inputs = True
                if not _expect(&s, b'['):
                    return None
                while True:
                    count += 1
                    if count > max_tensors:  # (rest.decode_request's limit)
                        return None
                    total = _input(&s, plan, arrays, total, pending)
                    if total < 0:
                        return None
                    more = _more(&s, b']')
                    if more < 0:
                        return None
                    if more == 0:
                        break
            elif _is(key, n, "outputs", 7) and requested is None:
                requested, binary = [], set()
                if not _outputs(&s, plan, requested, binary) or len(requested) > max_tensors:
                    return None
            else:
                return None
            more = _more(&s, b'}')
            if more < 0:
                return None
            if more == 0:
                break
        if _peek(&s) != -1 or not inputs:
            return None
        if plan.inputs is not None and len(arrays) != len(plan.inputs):
            return None
        request_id = (
            None if id_start == NULL
            else PyBytes_FromStringAndSize(<const char *>id_start, id_n).decode("ascii")
        )
    finally:
        PyBuffer_Release(&data)
    if pending is not None and not binary_inputs(view, header_length, pending, arrays):
        return None
    if requested is None:
        return arrays, request_id, None, binary_output == 1
    return arrays, request_id, requested, binary


cdef _undeclared(name, array):
    """An undeclared output's datatype and entry bytes (as the plan's), or None when its
    dtype is not in ANY_OUTPUT or orjson would escape its name."""
    cdef const unsigned char *raw
    cdef Py_ssize_t n, i
    datatype = ANY_OUTPUT.get(array.dtype)
    if datatype is None or type(name) is not str:
        return None
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    raw = encoded
    n = len(encoded)
    for i in range(n):
        if raw[i] < 0x20 or raw[i] == b'"' or raw[i] == b'\\':
            return None
    return datatype, b'{"name":"%s","shape":' % encoded, b',"datatype":"%s","data":' % datatype.encode()


@contract(CONTRACTS)
def encode_outputs(plan, request_id, outputs, binary=False):
    cdef list parts = [plan.head]
    cdef bint first = True
    cdef bytes raw
    cdef Py_ssize_t i, ndim, nbytes = 0, required = 0
    cdef Py_ssize_t max_bytes = plan.max_output_bytes
    cdef tuple dims
    cdef list raws = []
    cdef bytes head
    if type(outputs) is not dict:
        return None
    if request_id is not None:
        if type(request_id) is not str or not request_id.isascii():
            return None
        raw = request_id.encode("ascii")
        for i in range(len(raw)):
            if raw[i] < 0x20 or raw[i] > 0x7E or raw[i] == b'"' or raw[i] == b'\\':
                return None
        parts += (b',"id":"', raw, b'"')
    parts.append(b',"outputs":[')
    declared_outputs = plan.outputs
    for name, array in (<dict>outputs).items():
        if type(array) is not np.ndarray or type(name) is not str:
            return None
        nbytes += array.nbytes
        if nbytes > max_bytes:
            return None
        if declared_outputs is None:
            entry = _undeclared(name, array)
            if entry is None:
                return None
            datatype, before, between = entry
        else:
            declared = declared_outputs.get(name)
            if declared is None or array.dtype != declared[1]:
                return None
            datatype, _, before, between, dims, optional = declared
            ndim = array.ndim
            if len(dims) != ndim:
                return None
            shape_of = array.shape
            for i in range(ndim):
                if dims[i] != -1 and dims[i] != shape_of[i]:
                    return None
            required += not optional
        shape = b"[%s]" % b",".join([b"%d" % d for d in array.shape])
        if binary is True or (binary is not False and name in binary):
            tail, raw = binary_entry(between, array)
            raws.append(raw)
        elif array.ndim and datatype != "FP16" and array.flags.c_contiguous and array.flags.aligned:
            tail = between + write_elements(array, (array.size,), datatype, False) + b"}"
        else:  # a scalar, FP16's bits, a strided array: array_to_json prepares them
            tail = between + array_to_json(array, datatype) + b"}"
        parts += (b"" if first else b",", before, shape, tail)
        first = False
    if declared_outputs is not None and required != plan.required:
        return None
    parts.append(b"]}")
    head = b"".join(parts)
    if not raws:
        return head
    return head + b"".join(raws), len(head)
