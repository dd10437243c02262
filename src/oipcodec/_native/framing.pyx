# BYTES length-prefix framing: the native kernel. Its twin and reference is
# oipcodec/_pure/framing.py; both share input handling and messages in oipcodec/_shared/.
#
# The wire form of a BYTES tensor is its elements in row-major order, each preceded by its
# length as a 4-byte little-endian unsigned integer.

from cpython.buffer cimport (
    PyBUF_C_CONTIGUOUS,
    PyBUF_FORMAT,
    PyBUF_WRITABLE,
    PyBuffer_Release,
    PyObject_GetBuffer,
)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport (
    PyMem_Free,
    PyMem_Malloc,
    PyMem_RawFree,
    PyMem_RawMalloc,
    PyMem_RawRealloc,
)
from cpython.object cimport PyObject
from cpython.ref cimport Py_XDECREF, Py_XINCREF
from libc.stdint cimport int64_t, uint32_t
from libc.string cimport memcpy

from oipcodec._native.endian cimport oipcodec_load_le32, oipcodec_store_le32

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.buffers import (
    byte_view,
    bytes_array,
    check_count,
    element_too_long_error,
    element_type_error,
    utf8_error,
)
from oipcodec._shared.framing import CONTRACTS, framing_error, out_cells

__all__ = ["bytes_offsets", "deserialize_bytes", "serialize_bytes"]

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL
    # Borrowed-pointer forms, so reading a cell costs no reference-count traffic.
    bint PyBytes_Check(PyObject *o)
    bint PyUnicode_Check(PyObject *o)
    const char *_bytes_data "PyBytes_AS_STRING" (PyObject *o)
    Py_ssize_t _bytes_size "PyBytes_GET_SIZE" (PyObject *o)
    bint PyByteArray_Check(PyObject *o)
    bint PyMemoryView_Check(PyObject *o)
    const char *_bytearray_data "PyByteArray_AS_STRING" (PyObject *o)
    Py_ssize_t _bytearray_size "PyByteArray_GET_SIZE" (PyObject *o)
    object _new_bytes_object "PyBytes_FromStringAndSize" (const char *v, Py_ssize_t n)
    # A new reference the caller stores (or releases) itself.
    PyObject *_new_bytes "PyBytes_FromStringAndSize" (const char *v, Py_ssize_t n) except NULL

cdef Py_ssize_t MAX_ELEMENT = 0xFFFFFFFF

# The codes a framing scan stops with are C constants for the nogil loop, from framing.pxd
# (written from oipcodec._shared.framing, which turns them into messages). One more, native only:
cdef enum:
    FRAMING_NO_MEMORY = -1  # the list of element starts could not grow

# One element to copy: where its bytes are and how many. ``owner`` is a strong reference to
# the object holding them when we need one (see serialize_bytes), else NULL.
cdef struct Piece:
    PyObject *owner
    PyObject *cell
    const char *data
    Py_ssize_t size

# The average element size from which the copy runs without the GIL. Below it the copy costs
# about what taking and dropping a reference to every element does, so it is done with the GIL
# held instead (see serialize_bytes).
cdef Py_ssize_t NOGIL_AVERAGE_SIZE = 256


@contract(CONTRACTS)
def serialize_bytes(values):
    array = bytes_array(values)
    if array.dtype.kind == "S":
        return _serialize_fixed_width(array)
    # The object array's cells are read in place, without building a list of the elements: a
    # Py_buffer gives the PyObject* pointers (C-contiguous after bytes_array).
    cdef Py_buffer view
    PyObject_GetBuffer(array, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS)
    cdef Py_ssize_t n = view.len // <Py_ssize_t>sizeof(PyObject *)
    cdef PyObject **cells = <PyObject **>view.buf
    cdef Piece *pieces = <Piece *>PyMem_Malloc(max(n, 1) * sizeof(Piece))
    cdef Py_ssize_t i, done = 0, total = 0, size
    cdef const char *data
    cdef char *dst
    cdef PyObject *cell
    cdef bint release_gil
    if pieces == NULL:
        PyBuffer_Release(&view)
        raise MemoryError()
    try:
        # Pass 1, with the GIL: find each element's bytes. The elements are borrowed from the
        # array: nothing here runs Python code (no other thread can replace a cell meanwhile).
        # A str keeps its UTF-8 form cached, so it holds those bytes itself; a mutable buffer
        # is copied to a bytes object we own.
        for i in range(n):
            cell = cells[i]
            pieces[i].owner = NULL
            pieces[i].cell = cell
            done = i + 1
            if PyBytes_Check(cell):
                data = _bytes_data(cell)
                size = _bytes_size(cell)
            elif PyUnicode_Check(cell):
                try:
                    data = PyUnicode_AsUTF8AndSize(<object>cell, &size)
                except UnicodeError as exc:
                    raise utf8_error(i, exc) from None
            elif PyByteArray_Check(cell) or PyMemoryView_Check(cell):
                # C-level checks and copies: isinstance() or a subclass's __bytes__ could run
                # Python code here.
                if PyByteArray_Check(cell):
                    copied = _new_bytes_object(_bytearray_data(cell), _bytearray_size(cell))
                else:
                    copied = bytes(<object>cell)  # a memoryview's tobytes(), in C
                Py_XINCREF(<PyObject *>copied)
                pieces[i].owner = <PyObject *>copied
                data = _bytes_data(<PyObject *>copied)
                size = _bytes_size(<PyObject *>copied)
            else:
                raise element_type_error(i, <object>cell)
            if size > MAX_ELEMENT:
                raise element_too_long_error(i, size)
            pieces[i].data = data
            pieces[i].size = size
            total += 4 + size
        out = PyBytes_FromStringAndSize(NULL, total)
        dst = PyBytes_AS_STRING(out)
        # Pass 2, the copy. Without the GIL another thread could replace (and free) an element
        # of the caller's array, so that needs a reference to every element; for many small
        # elements that costs as much as the copy, which is then done with the GIL held.
        release_gil = total - 4 * n >= NOGIL_AVERAGE_SIZE * n
        if release_gil:
            for i in range(n):
                if pieces[i].owner == NULL:
                    Py_XINCREF(pieces[i].cell)
                    pieces[i].owner = pieces[i].cell
            with nogil:
                _write_pieces(dst, pieces, n)
        else:
            _write_pieces(dst, pieces, n)
        return out
    finally:
        for i in range(done):
            Py_XDECREF(pieces[i].owner)
        PyMem_Free(pieces)
        PyBuffer_Release(&view)


cdef void _write_pieces(char *out, const Piece *pieces, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        oipcodec_store_le32(out, <uint32_t>pieces[i].size)
        memcpy(out + 4, pieces[i].data, pieces[i].size)
        out += 4 + pieces[i].size


cdef bytes _serialize_fixed_width(values):
    # numpy S arrays: fixed-width cells, shorter values padded with NULs. Framed straight from
    # the array's memory (one contiguous copy at most), trailing NULs stripped as numpy does.
    cdef Py_ssize_t width = values.dtype.itemsize
    cdef const unsigned char[::1] cells = byte_view(values)
    cdef Py_ssize_t n = cells.shape[0] // width if width else values.size
    cdef Py_ssize_t i, total = 4 * n, size
    cdef const unsigned char *cell
    with nogil:
        for i in range(n):
            total += _cell_size(&cells[0] + i * width, width)
    out = PyBytes_FromStringAndSize(NULL, total)
    cdef char *dst = PyBytes_AS_STRING(out)
    with nogil:
        for i in range(n):
            cell = &cells[0] + i * width
            size = _cell_size(cell, width)
            oipcodec_store_le32(dst, <uint32_t>size)
            memcpy(dst + 4, cell, size)
            dst += 4 + size
    return out


cdef inline Py_ssize_t _cell_size(const unsigned char *cell, Py_ssize_t width) noexcept nogil:
    while width > 0 and cell[width - 1] == 0:
        width -= 1
    return width


@contract(CONTRACTS)
def deserialize_bytes(buffer, count=None, *, out=None):
    cdef Scan scan
    cdef const unsigned char[::1] data = byte_view(buffer)
    cells_array = None
    if out is not None:
        cells_array, count = out_cells(out, count)
    _scan_or_raise(&scan, data, count)
    cdef Py_ssize_t i, start
    cdef Py_buffer view
    cdef PyObject **cells
    cdef PyObject *element
    try:
        if cells_array is None:
            out = cells_array = np.empty(scan.n, dtype=object)
        PyObject_GetBuffer(
            cells_array, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE
        )
        cells = <PyObject **>view.buf
        try:
            # One bytes object per element, stored straight into the array's cells (each
            # replaces what the cell held: numpy's None, or the caller's value). The starts
            # found by the scan make these independent reads instead of a second walk from
            # prefix to prefix.
            for i in range(scan.n):
                start = scan.starts[i]
                element = _new_bytes(
                    <const char *>scan.base + start, oipcodec_load_le32(scan.base + start - 4)
                )
                Py_XDECREF(cells[i])
                cells[i] = element
        finally:
            PyBuffer_Release(&view)
        return out
    finally:
        PyMem_RawFree(scan.starts)


@contract(CONTRACTS)
def bytes_offsets(buffer, count=None):
    cdef Scan scan
    cdef const unsigned char[::1] data = byte_view(buffer)
    _scan_or_raise(&scan, data, count)
    try:
        offsets = np.empty(scan.n, dtype=np.int64)
        lengths = np.empty(scan.n, dtype=np.int64)
        if scan.n:
            _fill_offsets(&scan, offsets, lengths)
        return offsets, lengths
    finally:
        PyMem_RawFree(scan.starts)


cdef int _fill_offsets(const Scan *scan, int64_t[::1] offsets, int64_t[::1] lengths) except -1:
    cdef Py_ssize_t i
    with nogil:
        memcpy(&offsets[0], scan.starts, scan.n * sizeof(int64_t))
        for i in range(scan.n):
            lengths[i] = oipcodec_load_le32(scan.base + scan.starts[i] - 4)
    return 0


# What a framing scan found: the elements' start offsets (past each prefix) in a buffer the
# caller frees with PyMem_RawFree, or where and why the buffer stopped making sense.
cdef struct Scan:
    const unsigned char *base
    Py_ssize_t size
    Py_ssize_t n
    Py_ssize_t offset
    uint32_t length
    int64_t *starts
    Py_ssize_t capacity


cdef int _scan_or_raise(Scan *scan, const unsigned char[::1] data, count) except -1:
    # The validation deserialize_bytes and bytes_offsets share. On success scan->starts holds
    # scan->n offsets (the caller frees it); on failure it is freed and DecodeError raised.
    cdef Py_ssize_t expected = check_count(count)
    cdef int code
    scan.base = &data[0] if data.shape[0] else NULL
    scan.size = data.shape[0]
    # Every element takes at least its 4-byte prefix, so the buffer bounds the count: with a
    # count the starts get their final size at once, without one they grow by doubling.
    scan.capacity = scan.size // 4
    if expected >= 0 and expected < scan.capacity:
        scan.capacity = expected
    elif expected < 0 and scan.capacity > 4096:
        scan.capacity = 4096
    scan.starts = <int64_t *>PyMem_RawMalloc(max(scan.capacity, 1) * sizeof(int64_t))
    if scan.starts == NULL:
        raise MemoryError()
    with nogil:
        code = _scan(scan, expected)
    if code == FRAMING_OK:
        return 0
    PyMem_RawFree(scan.starts)
    scan.starts = NULL
    if code == FRAMING_NO_MEMORY:
        raise MemoryError()
    raise framing_error(code, scan.n, scan.offset, scan.size, scan.length, count)


cdef int _scan(Scan *scan, Py_ssize_t expected) noexcept nogil:
    cdef const unsigned char *data = scan.base
    cdef Py_ssize_t offset = 0, n = 0, size = scan.size
    cdef uint32_t length = 0
    cdef int code = FRAMING_OK
    cdef int64_t *grown
    while offset < size and n != expected:
        if size - offset < 4:
            code = FRAMING_TRUNCATED_PREFIX
            break
        length = oipcodec_load_le32(data + offset)
        if length > size - offset - 4:
            code = FRAMING_PAST_END
            break
        if n == scan.capacity:
            # Only without a count: with one, the capacity is the count or the most elements
            # the buffer can hold, and the loop stops before reaching it.
            grown = <int64_t *>PyMem_RawRealloc(scan.starts, (2 * n + 16) * sizeof(int64_t))
            if grown == NULL:
                code = FRAMING_NO_MEMORY
                break
            scan.starts = grown
            scan.capacity = 2 * n + 16
        scan.starts[n] = offset + 4
        offset += 4 + length
        n += 1
    if code == FRAMING_OK and expected >= 0:
        if n < expected:
            code = FRAMING_TOO_FEW
        elif offset < size:
            code = FRAMING_TRAILING
    scan.n = n
    scan.offset = offset
    scan.length = length
    return code
