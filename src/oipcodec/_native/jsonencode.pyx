# Tensor elements to JSON array text: the native kernel. Its twin and reference, which defines
# the text byte for byte, is oipcodec/_pure/jsonencode.py; both check and normalise their input
# with oipcodec/_shared/jsonencode.py.
#
# Every datatype has a C writer in csrc/oipcodec/write/json.h, run without the GIL (measured
# against orjson's numpy serialiser in benchmarks/kernels/bench_jsonencode.py). FP32 and FP64
# find each element's shortest digits with integer arithmetic (FP32 checked against the exact
# path on every float32 value by tools/check_f32_writer.sh, FP64 against repr() by
# tools/check_f64_writer.py); FP16 and BF16 copy each element's text from a 65536-entry table
# built on first use.

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING
from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF
from libc.stddef cimport ptrdiff_t
from libc.string cimport memcpy

from oipcodec._native.jsonwrite cimport *

import threading

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.buffers import bytes_elements, element_type_error, utf8_error
from oipcodec._shared.jsonencode import (
    CONTRACTS,
    empty_nested,
    nonfinite_error,
    not_utf8_error,
    prepare,
)

__all__ = ["array_to_json"]

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL
    PyObject *PyBytes_FromStringAndSize_raw "PyBytes_FromStringAndSize"(
        const char *v, Py_ssize_t size)
    int _PyBytes_Resize(PyObject **bytes, Py_ssize_t newsize)
    Py_ssize_t Py_SIZE(object o)
    void Py_SET_SIZE(object o, Py_ssize_t size)

# Longest text of one element, per datatype (with its sign).
_MAX_TOKEN = {
    "BOOL": 5, "UINT8": 3, "UINT16": 5, "UINT32": 10, "UINT64": 20,
    "INT8": 4, "INT16": 6, "INT32": 11, "INT64": 20,
}

# Integer arrays from this many elements get a buffer sized by their own min and max (one
# cheap pass each, docs/measurements.md#kernel-design-decisions) rather than by the datatype's longest text.
_TIGHT_BOUND_MIN = 65536

# The 16-bit float text tables (FP16, BF16), built on first use. Every read takes the lock too:
# a pointer read outside it could be seen before the table's bytes on a free-threaded build
# (no GIL orders them), and the lock costs little next to writing an array's text.
cdef char *_half_tables[2]
_half_tables[0] = NULL
_half_tables[1] = NULL
_half_lock = threading.Lock()

@contract(CONTRACTS)
def array_to_json(array, datatype, nested=False, *, nonfinite="tokens"):
    prepared = prepare(array, datatype, nested, nonfinite)
    return write_elements(prepared.values, prepared.shape, prepared.datatype, nonfinite == "error")


cdef object write_elements(values, tuple shape, str dt, bint strict):
    if dt == "BYTES":
        return _write_bytes(values, shape)
    if 0 in shape:
        return empty_nested(shape)
    if dt == "FP32" or dt == "FP64":
        return _write_binary_float(values, shape, dt == "FP64", strict)
    if dt == "FP16" or dt == "BF16":
        return _write_half(values, shape, dt == "BF16", strict)
    return _write_fixed(values, shape, dt)


# ------------------------------------------------------------------ output buffers

cdef PyObject *_alloc(Py_ssize_t size) except NULL:
    cdef PyObject *raw = PyBytes_FromStringAndSize_raw(NULL, size)
    if raw == NULL:
        raise MemoryError()
    return raw


cdef object _finish(PyObject *raw, char *end):
    """The bytes object `raw`, cut to end at `end` (ownership of `raw` passes to the result)."""
    cdef char *start = PyBytes_AS_STRING(<object>raw)
    cdef Py_ssize_t size = end - start, allocated = Py_SIZE(<object>raw)
    if allocated <= 2 * size:
        # Only the length is cut, the memory is kept: shrinking a large buffer with realloc
        # makes glibc lower its mmap threshold below the next call's request, so that every
        # call gets fresh pages from the kernel, whose faults cost as much as writing the text.
        Py_SET_SIZE(<object>raw, size)
        start[size] = 0
    elif _PyBytes_Resize(&raw, size) < 0:
        raise MemoryError()  # _PyBytes_Resize has freed it
    result = <object>raw
    Py_DECREF(result)  # the cast took a reference; the one from _alloc is the result's
    return result


cdef Py_ssize_t _structure_size(tuple shape):
    # Bytes of brackets and commas: two brackets per list, one comma after every element and
    # every list (the last ones are not written, which only leaves room).
    cdef Py_ssize_t lists = 0, level = 1, n = 1, dim, k
    for k in range(len(shape) - 1):
        lists += level
        level *= <Py_ssize_t>shape[k]
    lists += level
    for dim in shape:
        n *= dim
    return 3 * lists + n


cdef oipcodec_row_fn _row_writer(str dt):
    if dt == "BOOL":
        return oipcodec_row_bool
    if dt == "UINT8":
        return oipcodec_row_u8
    if dt == "UINT16":
        return oipcodec_row_u16
    if dt == "UINT32":
        return oipcodec_row_u32
    if dt == "UINT64":
        return oipcodec_row_u64
    if dt == "INT8":
        return oipcodec_row_i8
    if dt == "INT16":
        return oipcodec_row_i16
    if dt == "INT32":
        return oipcodec_row_i32
    return oipcodec_row_i64


cdef class _Elements:
    """The elements of a C-contiguous array as bytes, held for a with block: a plain
    Py_buffer, as a typed memoryview (with the reshape and view it needs) costs about a
    microsecond per call, more than writing a small array's text."""

    cdef Py_buffer view
    cdef const unsigned char *raw
    cdef bint held

    def __cinit__(self, values):
        PyObject_GetBuffer(values, &self.view, PyBUF_SIMPLE)
        self.held = True
        self.raw = <const unsigned char *>self.view.buf

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)


cdef object _write_rows(const unsigned char *raw, tuple shape, Py_ssize_t itemsize,
                        Py_ssize_t text_bytes, oipcodec_row_fn row, const void *ctx):
    # text_bytes: at least the elements' text without commas (the buffer's size; _finish
    # shrinks a buffer the text fills less than half of, which costs fresh pages next call).
    cdef ptrdiff_t dims[64]
    cdef int ndim = len(shape), k
    for k in range(ndim):
        dims[k] = shape[k]
    # The row writers store fixed-width chunks that may run past the text's end.
    cdef Py_ssize_t slack = max(2 * OIPCODEC_HALF_SLOT, OIPCODEC_F32_SLACK, OIPCODEC_F64_SLACK)
    cdef PyObject *out = _alloc(text_bytes + _structure_size(shape) + slack)
    cdef char *end
    cdef char *start = PyBytes_AS_STRING(<object>out)
    with nogil:
        end = oipcodec_write_nested(<const char *>raw, itemsize, dims, ndim, start, row, ctx)
    return _finish(out, end)


# ------------------------------------------------------------------ integers and BOOL

cdef object _write_fixed(values, tuple shape, str dt):
    cdef _Elements elements = _Elements(values)
    cdef Py_ssize_t max_token = _MAX_TOKEN[dt]
    if dt != "BOOL" and values.size >= _TIGHT_BOUND_MIN:
        # The buffer sized by the longest text the values have, not the type's: a 1M INT64
        # array below 50,000 would get 21 MB for 6 MB of text, and _finish would then shrink it
        # with realloc, which makes glibc hand out fresh pages on every call (their faults cost
        # more than writing the text). The SIMD rows store 64 bytes ahead of at least 16
        # elements; 2 bytes each plus the slack covers that, hence the floor of 2.
        max_token = max(len(str(int(values.min()))), len(str(int(values.max()))), 2)
    return _write_rows(elements.raw, shape, values.dtype.itemsize, values.size * max_token,
                       _row_writer(dt), NULL)


# ------------------------------------------------------------------ FP16 and BF16

cdef const char *_half_table(int bf16) except NULL:
    cdef char *table
    with _half_lock:
        if _half_tables[bf16] == NULL:
            table = <char *>PyMem_RawMalloc(65536 * (OIPCODEC_HALF_SLOT + 1))
            if table == NULL:
                raise MemoryError()
            with nogil:
                failed = oipcodec_build_half_table(table, bf16)
            if failed:
                PyMem_RawFree(table)
                raise RuntimeError("oipcodec: could not build the 16-bit float text table")
            _half_tables[bf16] = table
        return _half_tables[bf16]


cdef object _write_half(values, tuple shape, int bf16, bint strict):
    cdef const char *table = _half_table(bf16)
    cdef _Elements elements = _Elements(values)
    cdef const unsigned short *bits = <const unsigned short *>elements.raw
    cdef Py_ssize_t n = values.size, i
    cdef const unsigned char *lens = <const unsigned char *>table + 65536 * OIPCODEC_HALF_SLOT
    cdef int efield_mask = 0x7F80 if bf16 else 0x7C00
    if strict:
        for i in range(n):
            if bits[i] & efield_mask == efield_mask:
                token = table[bits[i] * OIPCODEC_HALF_SLOT: bits[i] * OIPCODEC_HALF_SLOT
                              + lens[bits[i]]].decode("ascii")
                raise nonfinite_error(i, token)
    # The exact length of the text, one table lookup per element: sized by the longest text
    # instead (16 bytes for BF16), the buffer would be shrunk on every call.
    cdef Py_ssize_t text_bytes = 0
    with nogil:
        for i in range(n):
            text_bytes += lens[bits[i]]
    return _write_rows(elements.raw, shape, 2, text_bytes, oipcodec_row_half, table)


# ------------------------------------------------------------------ FP32 and FP64

cdef object _write_binary_float(values, tuple shape, bint wide, bint strict):
    cdef _Elements elements = _Elements(values)
    cdef const unsigned char *raw = elements.raw
    cdef ptrdiff_t n = values.size, count, first = -1
    cdef size_t length = 0
    cdef const char *token
    if strict:
        with nogil:
            count = oipcodec_count_nonfinite(raw, n, wide, &first)
        if count:
            token = oipcodec_nonfinite_token(raw, first, wide, &length)
            raise nonfinite_error(first, token[:length].decode("ascii"))
    if wide:
        return _write_rows(raw, shape, 8, n * OIPCODEC_F64_MAX, oipcodec_row_f64, NULL)
    return _write_rows(raw, shape, 4, n * OIPCODEC_F32_MAX, oipcodec_row_f32, NULL)


# ------------------------------------------------------------------ BYTES

cdef object _write_bytes(values, tuple shape):
    cdef list elements = bytes_elements(values)
    cdef Py_ssize_t n = len(elements), i, size, valid
    cdef size_t total = 0
    cdef const char *data
    cdef oipcodec_piece *pieces
    if 0 in shape:
        return empty_nested(shape)
    pieces = <oipcodec_piece *>PyMem_RawMalloc(n * sizeof(oipcodec_piece))
    if pieces == NULL:
        raise MemoryError()
    try:
        # Pass 1, with the GIL: find and check each element's bytes, in order, so the first bad
        # element is the one reported. The list is ours (a fresh tolist()), and mutable
        # buffers are copied to bytes first, so the pointers stay valid through pass 2.
        for i in range(n):
            element = elements[i]
            if isinstance(element, str):
                try:
                    data = PyUnicode_AsUTF8AndSize(element, &size)
                except UnicodeError as exc:
                    raise utf8_error(i, exc) from None
            elif isinstance(element, (bytes, bytearray, memoryview)):
                if not isinstance(element, bytes):
                    element = bytes(element)
                    elements[i] = element
                data = PyBytes_AS_STRING(element)
                size = len(<bytes>element)
                valid = oipcodec_utf8_valid_prefix(<const unsigned char *>data, size)
                if valid != size:
                    raise not_utf8_error(i, valid)
            else:
                raise element_type_error(i, element)
            pieces[i].data = <const unsigned char *>data
            pieces[i].size = size
            total += oipcodec_escaped_size(<const unsigned char *>data, size) + 2
        return _write_pieces(pieces, n, total, shape)
    finally:
        PyMem_RawFree(pieces)


cdef object _write_pieces(oipcodec_piece *pieces, Py_ssize_t n, size_t total, tuple shape):
    cdef ptrdiff_t dims[64]
    cdef int ndim = len(shape), k
    for k in range(ndim):
        dims[k] = shape[k]
    cdef PyObject *out = _alloc(total + _structure_size(shape) + 16)
    cdef char *start = PyBytes_AS_STRING(<object>out)
    cdef char *end
    with nogil:
        end = oipcodec_write_nested(<const char *>pieces, sizeof(oipcodec_piece), dims, ndim,
                                    start, oipcodec_row_strings, NULL)
    return _finish(out, end)
