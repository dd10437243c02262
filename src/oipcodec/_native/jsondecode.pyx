# JSON data array text to a typed array: the native kernel. Its twin and reference is
# oipcodec/_pure/jsondecode.py; both take their arguments, grammar and messages from
# oipcodec/_shared/jsondecode.py (its docstring states the grammar this walk implements).
#
# One pass over the text without the GIL: the walk checks the structure against the shape and
# parses each number straight into the output buffer (csrc/oipcodec/read/json.h, which includes
# the number headers, does the numbers). The GIL is taken back only for the rare numbers the fast algorithms cannot settle
# (see _python_float and _settle). BYTES elements need Python objects: the walk validates the
# strings without the GIL, then a second pass with it makes the bytes objects.

from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy

from oipcodec._native.half cimport oipcodec_f64bits_to_bf16, oipcodec_f64bits_to_fp16
from oipcodec._native.jsonnum cimport (
    oipcodec_decimal,
    oipcodec_decimal_to_f64bits,
    oipcodec_decode_string,
    oipcodec_float_run,
    oipcodec_int_run,
    oipcodec_is_midpoint,
    oipcodec_json_delim,
    oipcodec_scan_integer,
    oipcodec_scan_number,
    oipcodec_scan_string,
    oipcodec_skip_ws,
)

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.jsondecode import CONTRACTS, exact_side, prepare

__all__ = ["json_to_array"]

# The element kinds (K_*) and stop codes (OK ... PYTHON_ERROR) are C constants from
# jsondecode.pxd, written from oipcodec._shared.jsondecode; the Walk and the functions other
# native modules call (walk_init, walk) are declared in jsondecode_api.pxi, which it includes.

# Bit patterns written for the non-finite tokens: canonical quiet NaN, +inf, -inf.
cdef uint64_t[3] F64_WORDS = [0x7FF8000000000000ULL, 0x7FF0000000000000ULL, 0xFFF0000000000000ULL]
cdef uint32_t[3] F32_WORDS = [0x7FC00000, 0x7F800000, 0xFF800000]
cdef uint16_t[3] FP16_WORDS = [0x7E00, 0x7C00, 0xFC00]
cdef uint16_t[3] BF16_WORDS = [0x7FC0, 0x7F80, 0xFF80]


cdef inline const unsigned char *_stop(Walk *w, int code, const unsigned char *p) noexcept nogil:
    w.code = code
    w.stop = p
    return NULL


cdef void walk_init(
    Walk *w, int kind, Py_ssize_t itemsize, Py_ssize_t alloc, Py_ssize_t max_depth,
    const unsigned char *base, Py_ssize_t length
) noexcept nogil:
    w.kind = kind
    w.float_lane = K_FP16 <= kind <= K_BF16_AS_FP32
    w.int_lane = K_UINT8 <= kind <= K_INT64
    if K_UINT8 <= kind <= K_UINT64:
        w.max_negative = 0
        w.max_positive = 0xFFFFFFFFFFFFFFFFULL >> (64 - 8 * itemsize)
    else:
        w.max_negative = 1ULL << (8 * itemsize - 1)
        w.max_positive = w.max_negative - 1
    w.itemsize = itemsize
    w.index = 0
    w.alloc = alloc
    w.max_depth = max_depth
    w.flat = True
    w.nopen = 0
    w.code = OK
    w.out = NULL
    w.base = base
    w.end = base + length
    w.stop = base


cdef int walk(Walk *w, int ndim, const Py_ssize_t *shape, Py_ssize_t count) noexcept nogil:
    cdef const unsigned char *end = w.end
    cdef const unsigned char *p = oipcodec_skip_ws(w.base, end)
    cdef const unsigned char *first
    cdef Py_ssize_t flat_dims[1]
    if ndim == 0 and (p == end or p[0] != b'['):
        p = _element(w, p)  # shape []: the bare value
        if p == NULL:
            return w.code
        p = oipcodec_skip_ws(p, end)
        if p != end:
            _stop(w, TRAILING, p)
            return w.code
        return OK
    if p == end or p[0] != b'[':
        _stop(w, EXPECTED_OPEN, p)
        return w.code
    if w.max_depth < 1:
        _stop(w, DEPTH, p)
        return w.code
    first = oipcodec_skip_ws(p + 1, end)
    w.flat = not (ndim >= 2 and first < end and first[0] == b'[')
    if w.flat:
        flat_dims[0] = count
        p = _array(w, first, flat_dims, 1)
    else:
        p = _array(w, first, shape, ndim)
    if p == NULL:
        return w.code
    p = oipcodec_skip_ws(p, end)
    if p != end:
        _stop(w, TRAILING, p)
        return w.code
    return OK


cdef const unsigned char *_array(
    Walk *w, const unsigned char *p, const Py_ssize_t *dims, int ndim
) noexcept nogil:
    # The entries of an array whose '[' is read (p is at its first token), and its ']'.
    cdef const unsigned char *end = w.end
    cdef int level = w.nopen
    cdef Py_ssize_t n = 0, dim = dims[0], run
    cdef bint after_comma = False
    w.nopen = level + 1
    w.counts[level] = 0
    if p < end and p[0] == b']':
        return _close(w, p, dim, n)
    while True:
        if after_comma and p < end and p[0] == b']':  # trailing comma
            w.counts[level] = n
            return _stop(w, ELEMENT if ndim == 1 else EXPECTED_ARRAY, p)
        if p == end:
            w.counts[level] = n
            return _stop(w, ELEMENT if ndim == 1 else EXPECTED_ARRAY, p)
        if n == dim:
            w.counts[level] = n
            return _stop(w, TOO_MANY, p)
        if ndim > 1:
            w.counts[level] = n
            if p[0] != b'[':
                return _stop(w, EXPECTED_ARRAY, p)
            if level + 2 > w.max_depth:
                return _stop(w, DEPTH, p)
            p = _array(w, oipcodec_skip_ws(p + 1, end), dims + 1, ndim - 1)
            if p == NULL:
                return NULL
        else:
            if p[0] == b'[':
                w.counts[level] = n
                return _too_deep(w, p, level + 1)
            if w.float_lane:
                # Plain "number," pairs in bulk; whatever the lane leaves (the last element,
                # anything unusual) goes through the general code below.
                run = oipcodec_float_run(
                    &p, end, w.out + w.index * w.itemsize,
                    min(dim - n, w.alloc - w.index), w.kind)
                if run:
                    n += run
                    w.index += run
                    after_comma = True
                    continue
            elif w.int_lane:
                run = oipcodec_int_run(
                    &p, end, w.out + w.index * w.itemsize,
                    min(dim - n, w.alloc - w.index), <int>w.itemsize,
                    w.max_positive, w.max_negative)
                if run:
                    n += run
                    w.index += run
                    after_comma = True
                    continue
            p = _element(w, p)
            if p == NULL:
                w.counts[level] = n
                return NULL
        n += 1
        p = oipcodec_skip_ws(p, end)
        if p < end and p[0] == b',':
            p = oipcodec_skip_ws(p + 1, end)
            after_comma = True
            continue
        if p < end and p[0] == b']':
            return _close(w, p, dim, n)
        w.counts[level] = n
        return _stop(w, EXPECTED_SEP, p)


cdef inline const unsigned char *_close(
    Walk *w, const unsigned char *p, Py_ssize_t dim, Py_ssize_t n
) noexcept nogil:
    if n != dim:
        w.counts[w.nopen - 1] = n
        return _stop(w, TOO_FEW, p)
    w.nopen -= 1
    return p + 1


cdef const unsigned char *_too_deep(Walk *w, const unsigned char *p, Py_ssize_t depth) noexcept nogil:
    # A '[' where an element belongs: DEPTH where its run of '[' passes max_depth, if it does.
    cdef const unsigned char *start = p
    while p < w.end and p[0] == b'[':
        depth += 1
        if depth > w.max_depth:
            return _stop(w, DEPTH, p)
        p = oipcodec_skip_ws(p + 1, w.end)
    return _stop(w, ELEMENT, start)


cdef inline const unsigned char *_element(Walk *w, const unsigned char *p) noexcept nogil:
    cdef int kind = w.kind
    if w.index >= w.alloc and kind != K_BYTES:
        # The buffer holds every element the text has room for (see prepare), so no valid
        # element can start here: the token is refused, as it would be once read, and the
        # buffer is never overrun.
        return _stop(w, ELEMENT, p)
    if kind >= K_FP16 and kind <= K_BF16_AS_FP32:
        return _float_element(w, p)
    if kind == K_BYTES:
        return _string_element(w, p)
    if kind == K_BOOL:
        return _bool_element(w, p)
    return _int_element(w, p)


cdef inline bint _ends_token(Walk *w, const unsigned char *p) noexcept nogil:
    return p >= w.end or oipcodec_json_delim[p[0]]


cdef const unsigned char *_int_element(Walk *w, const unsigned char *p) noexcept nogil:
    cdef int negative = 0, overflow = 0
    cdef uint64_t magnitude = 0, limit
    cdef const unsigned char *q = oipcodec_scan_integer(p, w.end, &negative, &magnitude, &overflow)
    cdef int kind = w.kind
    cdef int bits
    cdef unsigned char *out
    if q == NULL or not _ends_token(w, q) or overflow:
        return _stop(w, ELEMENT, p)
    if kind <= K_UINT64:
        bits = 8 << (kind - K_UINT8)
        limit = 0 if negative else (0xFFFFFFFFFFFFFFFFULL >> (64 - bits))
    else:
        bits = 8 << (kind - K_INT8)
        limit = (1ULL << (bits - 1)) - (0 if negative else 1)
    if magnitude > limit:
        return _stop(w, ELEMENT, p)
    # Two's complement of the magnitude, truncated to the element size, is the value.
    if negative:
        magnitude = 0 - magnitude
    out = w.out + w.index * (bits >> 3)
    if bits == 8:
        out[0] = <unsigned char>magnitude
    elif bits == 16:
        (<uint16_t *>out)[0] = <uint16_t>magnitude
    elif bits == 32:
        (<uint32_t *>out)[0] = <uint32_t>magnitude
    else:
        (<uint64_t *>out)[0] = magnitude
    w.index += 1
    return q


cdef const unsigned char *_bool_element(Walk *w, const unsigned char *p) noexcept nogil:
    cdef Py_ssize_t left = w.end - p
    cdef unsigned char value
    cdef const unsigned char *q
    if left >= 4 and memcmp(p, b"true", 4) == 0:
        value, q = 1, p + 4
    elif left >= 5 and memcmp(p, b"false", 5) == 0:
        value, q = 0, p + 5
    else:
        return _stop(w, ELEMENT, p)
    if not _ends_token(w, q):
        return _stop(w, ELEMENT, p)
    w.out[w.index] = value
    w.index += 1
    return q


cdef const unsigned char *_string_element(Walk *w, const unsigned char *p) noexcept nogil:
    cdef int escaped
    cdef const unsigned char *q
    if p >= w.end or p[0] != b'"':
        return _stop(w, ELEMENT, p)
    q = oipcodec_scan_string(p, w.end, &escaped)
    if q == NULL:
        return _stop(w, ELEMENT, p)
    w.index += 1
    return q


cdef const unsigned char *_float_element(Walk *w, const unsigned char *p) noexcept nogil:
    cdef oipcodec_decimal dec
    cdef int integer
    cdef uint64_t bits = 0
    cdef double value
    cdef float single
    cdef uint32_t single_bits
    cdef uint16_t half
    cdef int kind = w.kind
    cdef const unsigned char *q = oipcodec_scan_number(p, w.end, &dec, &integer)
    if q == NULL or not _ends_token(w, q):
        return _float_word(w, p)
    if oipcodec_decimal_to_f64bits(&dec, &bits) == 0:
        bits |= <uint64_t>dec.negative << 63
    elif _python_float(w, p, q, &bits) != 0:
        return NULL
    if kind == K_FP32:
        # Only float64s with 28 zero low bits can be float32 midpoints: one test in the loop.
        if (bits & 0x0FFFFFFF) == 0 and oipcodec_is_midpoint(bits, 24, -126, 127):
            if _settle(w, p, q, &bits) != 0:
                return NULL
        memcpy(&value, &bits, 8)
        single = <float>value
        memcpy(&single_bits, &single, 4)
        if (single_bits & 0x7FFFFFFF) == 0x7F800000:
            return _stop(w, ELEMENT, p)
        (<uint32_t *>w.out)[w.index] = single_bits
    elif kind == K_FP64:
        if (bits & 0x7FFFFFFFFFFFFFFFULL) == 0x7FF0000000000000ULL:
            return _stop(w, ELEMENT, p)
        (<uint64_t *>w.out)[w.index] = bits
    elif kind == K_FP16:
        if (bits & 0x1FFFFFFFFFFULL) == 0 and oipcodec_is_midpoint(bits, 11, -14, 15):
            if _settle(w, p, q, &bits) != 0:
                return NULL
        half = oipcodec_f64bits_to_fp16(bits)
        if (half & 0x7FFF) == 0x7C00:
            return _stop(w, ELEMENT, p)
        (<uint16_t *>w.out)[w.index] = half
    else:
        if (bits & 0xFFFFFFFFFFFULL) == 0 and oipcodec_is_midpoint(bits, 8, -126, 127):
            if _settle(w, p, q, &bits) != 0:
                return NULL
        half = oipcodec_f64bits_to_bf16(bits)
        if (half & 0x7FFF) == 0x7F80:
            return _stop(w, ELEMENT, p)
        if kind == K_BF16:
            (<uint16_t *>w.out)[w.index] = half
        else:
            (<uint32_t *>w.out)[w.index] = <uint32_t>half << 16
    w.index += 1
    return q


cdef const unsigned char *_float_word(Walk *w, const unsigned char *p) noexcept nogil:
    # NaN, null, Infinity or -Infinity, else a bad element.
    cdef const unsigned char *q = p
    cdef Py_ssize_t size
    cdef int word
    cdef int kind = w.kind
    while q < w.end and not oipcodec_json_delim[q[0]]:
        q += 1
    size = q - p
    if (size == 3 and memcmp(p, b"NaN", 3) == 0) or (size == 4 and memcmp(p, b"null", 4) == 0):
        word = 0
    elif size == 8 and memcmp(p, b"Infinity", 8) == 0:
        word = 1
    elif size == 9 and memcmp(p, b"-Infinity", 9) == 0:
        word = 2
    else:
        return _stop(w, ELEMENT, p)
    if kind == K_FP32 or kind == K_BF16_AS_FP32:
        (<uint32_t *>w.out)[w.index] = F32_WORDS[word]
    elif kind == K_FP64:
        (<uint64_t *>w.out)[w.index] = F64_WORDS[word]
    elif kind == K_FP16:
        (<uint16_t *>w.out)[w.index] = FP16_WORDS[word]
    else:
        (<uint16_t *>w.out)[w.index] = BF16_WORDS[word]
    w.index += 1
    return q


cdef int _python_float(
    Walk *w, const unsigned char *p, const unsigned char *q, uint64_t *bits
) noexcept nogil:
    # The fast algorithms could not decide this token's float64 (about one random input in
    # 10**15, or ambiguous digits past the 19th): Python's float() is the exact reference.
    cdef double value
    with gil:
        try:
            value = float(PyBytes_FromStringAndSize(<const char *>p, q - p))
        except BaseException:
            _stop(w, PYTHON_ERROR, p)
            return -1
    memcpy(bits, &value, 8)
    return 0


cdef int _settle(
    Walk *w, const unsigned char *p, const unsigned char *q, uint64_t *bits
) noexcept nogil:
    # The float64 lies exactly halfway between two values of the narrower format: compare the
    # decimal text with it exactly and step one float64 towards the text, so that the narrowing
    # rounds the way the text does (an exact tie stays and rounds to even).
    cdef double value
    cdef int side
    memcpy(&value, bits, 8)
    with gil:
        try:
            side = exact_side(PyBytes_FromStringAndSize(<const char *>p, q - p), value)
        except BaseException:
            _stop(w, PYTHON_ERROR, p)
            return -1
    if side != 0:
        # Sign-magnitude bits: moving up in magnitude is +1 for positive values, -1 for negative.
        if (side > 0) == ((bits[0] >> 63) == 0):
            bits[0] += 1
        else:
            bits[0] -= 1
    return 0


@contract(CONTRACTS)
def json_to_array(text, datatype, shape, *, max_depth=100, out=None):
    job = prepare(text, datatype, shape, max_depth, out)
    # Plain Py_buffers, not typed memoryviews: acquiring those costs about a microsecond per
    # call, more than the walk of a small request's array.
    cdef Py_buffer data, cells
    cdef Py_ssize_t[MAX_LEVELS] dims
    cdef int ndim = len(job.shape), i, code
    cdef Walk w
    cdef unsigned char empty = 0
    cdef bint writing = False
    out = job.storage()
    cdef Py_ssize_t count = job.count
    for i in range(ndim):
        dims[i] = job.shape[i]
    PyObject_GetBuffer(job.data, &data, PyBUF_SIMPLE)
    try:
        walk_init(&w, job.kind, out.itemsize, job.alloc, job.max_depth,
                  <const unsigned char *>data.buf if data.len else &empty, data.len)
        if w.kind != K_BYTES and job.alloc:
            # (PyBUF_SIMPLE asks numpy for a C-contiguous array, as the walk writes it)
            PyObject_GetBuffer(out, &cells, PyBUF_WRITABLE)
            writing = True
            w.out = <unsigned char *>cells.buf
        with nogil:
            code = walk(&w, ndim, dims, count)
        if code == OK and w.kind == K_BYTES:
            _fill_strings(out, w.base, w.end, job.count)
    finally:
        if writing:
            PyBuffer_Release(&cells)
        PyBuffer_Release(&data)
    if code != OK:
        raise job.error(code, w.stop - w.base, w.index, [w.counts[i] for i in range(w.nopen)],
                        w.flat)
    return job.result(out)


cdef _fill_strings(out, const unsigned char *p, const unsigned char *end, Py_ssize_t count):
    # The walk validated every string: find each in turn and make its bytes object.
    cdef object[::1] cells = out
    cdef Py_ssize_t i, scratch_size = 0, length
    cdef const unsigned char *start
    cdef const unsigned char *stop
    cdef unsigned char *scratch = NULL
    try:
        for i in range(count):
            p = <const unsigned char *>memchr(p, b'"', end - p)
            start = p + 1
            stop = <const unsigned char *>memchr(start, b'"', end - start)
            if memchr(start, b'\\', stop - start) == NULL:
                cells[i] = PyBytes_FromStringAndSize(<const char *>start, stop - start)
                p = stop + 1
                continue
            # Escapes: the closing quote is the first one not escaped.
            stop = start
            while stop[0] != b'"':
                stop += 2 if stop[0] == b'\\' else 1
            if stop - start > scratch_size:
                PyMem_Free(scratch)
                scratch_size = max(stop - start, 2 * scratch_size)
                scratch = <unsigned char *>PyMem_Malloc(scratch_size)
                if scratch == NULL:
                    raise MemoryError()
            length = oipcodec_decode_string(start, stop, scratch)
            cells[i] = PyBytes_FromStringAndSize(<const char *>scratch, length)
            p = stop + 1
    finally:
        PyMem_Free(scratch)
