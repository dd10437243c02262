# BYTES length-prefix framing: the native kernel. Its twin and reference is
# oipcodec/_pure/framing.py; both share input handling and messages in oipcodec/_common.py.
#
# The wire form of a BYTES tensor is its elements in row-major order, each preceded by its
# length as a 4-byte little-endian unsigned integer.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

from oipcodec._native.endian cimport oipcodec_load_le32, oipcodec_store_le32

import numpy as np

from oipcodec import _common
from oipcodec._common import (
    byte_view,
    bytes_elements,
    check_count,
    element_too_long_error,
    element_type_error,
    framing_error,
    utf8_error,
)

__all__ = ["deserialize_bytes", "serialize_bytes"]

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL

cdef Py_ssize_t MAX_ELEMENT = 0xFFFFFFFF

# The codes a framing scan stops with, as C constants for the nogil loop. Their values are
# oipcodec._common's FRAMING_* codes, which turn them into messages; checked at import.
cdef enum:
    FRAMING_OK = 0
    FRAMING_TRUNCATED_PREFIX = 1
    FRAMING_PAST_END = 2
    FRAMING_TRAILING = 3
    FRAMING_TOO_FEW = 4

if (_common.FRAMING_OK, _common.FRAMING_TRUNCATED_PREFIX, _common.FRAMING_PAST_END,
        _common.FRAMING_TRAILING, _common.FRAMING_TOO_FEW) != (0, 1, 2, 3, 4):
    raise ImportError("oipcodec._native.framing is out of step with oipcodec._common")

# One element to copy: where its bytes are and how many.
cdef struct Piece:
    const char *data
    Py_ssize_t size


def serialize_bytes(values):
    """serialize_bytes(values) -> bytes

    Frame BYTES elements: each as a 4-byte little-endian length followed by its bytes.

    ``values`` is a numpy object/``S``/``U`` array or a (nested) sequence of any shape,
    flattened row-major. ``str`` elements are UTF-8 encoded (``U`` arrays too); ``S`` elements
    lose trailing NULs as numpy does; bytes, bytearray and memoryview are taken as they are.
    Any other element, or one of 2**32 bytes or more, raises :class:`EncodeError`.
    """
    if isinstance(values, np.ndarray) and values.dtype.kind == "S":
        return _serialize_fixed_width(values)
    cdef list elements = bytes_elements(values)
    cdef Py_ssize_t n = len(elements), i, total = 0, size
    cdef const char *data
    cdef Piece *pieces = <Piece *>PyMem_Malloc(max(n, 1) * sizeof(Piece))
    if pieces == NULL:
        raise MemoryError()
    try:
        # Pass 1, with the GIL: find each element's bytes. The list is ours (a fresh
        # tolist()), and mutable buffers are copied to bytes first, so the pointers stay valid
        # while pass 2 runs without the GIL.
        for i in range(n):
            element = elements[i]
            if isinstance(element, bytes):
                data = PyBytes_AS_STRING(element)
                size = PyBytes_GET_SIZE(element)
            elif isinstance(element, str):
                try:
                    data = PyUnicode_AsUTF8AndSize(element, &size)
                except UnicodeError as exc:
                    raise utf8_error(i, exc) from None
            elif isinstance(element, (bytearray, memoryview)):
                element = bytes(element)
                elements[i] = element
                data = PyBytes_AS_STRING(element)
                size = PyBytes_GET_SIZE(element)
            else:
                raise element_type_error(i, element)
            if size > MAX_ELEMENT:
                raise element_too_long_error(i, size)
            pieces[i].data = data
            pieces[i].size = size
            total += 4 + size
        out = PyBytes_FromStringAndSize(NULL, total)
        _write_pieces(PyBytes_AS_STRING(out), pieces, n)
        return out
    finally:
        PyMem_Free(pieces)


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


def deserialize_bytes(buffer, count=None):
    """deserialize_bytes(buffer, count=None) -> numpy.ndarray

    Split a framed BYTES buffer into a 1-D object array of ``bytes``.

    Every length prefix is checked against what is left of the buffer. With ``count``, the
    buffer must hold exactly ``count`` elements and nothing after them. Problems raise
    :class:`DecodeError` naming the element index and byte offset.
    """
    cdef Py_ssize_t expected = check_count(count)
    cdef const unsigned char[::1] data = byte_view(buffer)
    cdef Py_ssize_t size = data.shape[0], offset = 0, n = 0, i
    cdef uint32_t length = 0
    cdef int code = FRAMING_OK
    cdef const unsigned char *base = &data[0] if size else NULL
    # Pass 1, without the GIL: validate every prefix and count the elements.
    with nogil:
        code = _scan(base, size, expected, &n, &offset, &length)
    if code != FRAMING_OK:
        raise framing_error(code, n, offset, size, length, count)
    # Pass 2: one bytes object per element, stored straight into the object array.
    out = np.empty(n, dtype=object)
    cdef object[::1] cells = out
    offset = 0
    for i in range(n):
        length = oipcodec_load_le32(base + offset)
        cells[i] = PyBytes_FromStringAndSize(<const char *>base + offset + 4, length)
        offset += 4 + length
    return out


cdef int _scan(
    const unsigned char *data, Py_ssize_t size, Py_ssize_t expected,
    Py_ssize_t *n_out, Py_ssize_t *offset_out, uint32_t *length_out,
) noexcept nogil:
    cdef Py_ssize_t offset = 0, n = 0
    cdef uint32_t length = 0
    cdef int code = FRAMING_OK
    while offset < size and n != expected:
        if size - offset < 4:
            code = FRAMING_TRUNCATED_PREFIX
            break
        length = oipcodec_load_le32(data + offset)
        if length > size - offset - 4:
            code = FRAMING_PAST_END
            break
        offset += 4 + length
        n += 1
    if code == FRAMING_OK and expected >= 0:
        if n < expected:
            code = FRAMING_TOO_FEW
        elif offset < size:
            code = FRAMING_TRAILING
    n_out[0] = n
    offset_out[0] = offset
    length_out[0] = length
    return code
