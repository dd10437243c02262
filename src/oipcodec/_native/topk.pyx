# Top-k ranking and Triton's classification strings: the native kernel. Its twin and reference
# is oipcodec/_pure/topk.py; both share argument checks, widening and messages in
# oipcodec/_shared/topk.py, whose docstring states the ranking and formatting rules.
#
# top_k selects each row's best `count` indices with a binary heap whose root is the worst one
# kept: an element that does not beat the root (most of them, for a small k) costs one
# comparison with the root's value. The heap is then emptied from the back, which leaves the
# row's answer sorted. O(classes * log k) per row, and no allocation beyond the k-slot heap.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport Py_INCREF
from libc.math cimport isinf, isnan, signbit
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.string cimport memcpy

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.topk import CONTRACTS, format_source, label_table, rank_source

__all__ = ["classification_strings", "top_k"]

# FORMAT_* codes come from topk.pxd (generated from _shared/topk.py).

ctypedef fused rank_t:
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t
    uint16_t
    uint32_t
    uint64_t
    float
    double


cdef inline bint _is_nan(rank_t v) noexcept nogil:
    if rank_t is float or rank_t is double:
        return v != v
    else:
        return False


cdef inline bint _better(const rank_t *row, int64_t i, int64_t j) noexcept nogil:
    # Whether element i ranks above element j: larger first, NaN last, ties by lower index.
    cdef rank_t a = row[i]
    cdef rank_t b = row[j]
    if _is_nan(a):
        return _is_nan(b) and i < j
    if _is_nan(b):
        return True
    if a > b:
        return True
    if a < b:
        return False
    return i < j


cdef inline void _sift_down(
    const rank_t *row, int64_t *heap, Py_ssize_t size, Py_ssize_t at
) noexcept nogil:
    # Restore the heap below `at`: every parent ranks below (is worse than) its children.
    cdef Py_ssize_t child
    cdef int64_t moving = heap[at]
    while True:
        child = 2 * at + 1
        if child >= size:
            break
        if child + 1 < size and _better(row, heap[child], heap[child + 1]):
            child += 1
        if not _better(row, moving, heap[child]):
            break
        heap[at] = heap[child]
        at = child
    heap[at] = moving


cdef void _rank_rows(
    const rank_t *src, Py_ssize_t rows, Py_ssize_t classes, Py_ssize_t count,
    int64_t *heap, int64_t *out,
) noexcept nogil:
    cdef Py_ssize_t r, i, size, at, parent
    cdef const rank_t *row
    cdef int64_t *answer
    cdef rank_t x, worst
    cdef bint worst_nan
    for r in range(rows):
        row = src + r * classes
        answer = out + r * count
        size = 0
        for i in range(count):
            # The first `count` elements fill the heap; each rises (sift up) while it ranks
            # below its parent.
            at = size
            size += 1
            while at > 0:
                parent = (at - 1) // 2
                if not _better(row, heap[parent], i):
                    break
                heap[at] = heap[parent]
                at = parent
            heap[at] = i
        # The rest: i is larger than every index kept, so it wins a tie never, and beats the
        # root only by a larger value, or by being a number where the root is NaN. The root's
        # value is kept at hand, which leaves one comparison per rejected element.
        worst = row[heap[0]]
        worst_nan = _is_nan(worst)
        for i in range(count, classes):
            x = row[i]
            if x > worst or (worst_nan and not _is_nan(x)):
                heap[0] = i
                _sift_down(row, heap, size, 0)
                worst = row[heap[0]]
                worst_nan = _is_nan(worst)
        # The root is the worst kept: it goes last, then the next worst, and so on.
        while size > 0:
            size -= 1
            answer[size] = heap[0]
            heap[0] = heap[size]
            _sift_down(row, heap, size, 0)


@contract(CONTRACTS)
def top_k(values, k):
    array, count_ = rank_source(values, k)
    cdef Py_ssize_t rows = array.shape[0], classes = array.shape[1], count = count_
    out = np.empty((rows, count), dtype=np.int64)
    if rows == 0 or count == 0:
        return out, np.take_along_axis(values, out, axis=1)
    cdef const unsigned char[::1] raw = array.reshape(-1).view(np.uint8)
    cdef int64_t[:, ::1] dst = out
    cdef const unsigned char *p = &raw[0]
    cdef int64_t *heap = <int64_t *>PyMem_Malloc(count * sizeof(int64_t))
    if heap == NULL:
        raise MemoryError()
    # The element type, as one of the fused specialisations (chosen before the GIL is let go).
    dtype = array.dtype
    cdef int kind = (0 if dtype.kind == "f" else 1 if dtype.kind == "i" else 2)
    cdef int size = dtype.itemsize
    cdef int64_t *answer = &dst[0, 0]
    try:
        with nogil:
            if kind == 0:
                if size == 4:
                    _rank_rows(<const float *>p, rows, classes, count, heap, answer)
                else:
                    _rank_rows(<const double *>p, rows, classes, count, heap, answer)
            elif kind == 1:
                if size == 1:
                    _rank_rows(<const int8_t *>p, rows, classes, count, heap, answer)
                elif size == 2:
                    _rank_rows(<const int16_t *>p, rows, classes, count, heap, answer)
                elif size == 4:
                    _rank_rows(<const int32_t *>p, rows, classes, count, heap, answer)
                else:
                    _rank_rows(<const int64_t *>p, rows, classes, count, heap, answer)
            else:
                if size == 1:
                    _rank_rows(<const uint8_t *>p, rows, classes, count, heap, answer)
                elif size == 2:
                    _rank_rows(<const uint16_t *>p, rows, classes, count, heap, answer)
                elif size == 4:
                    _rank_rows(<const uint32_t *>p, rows, classes, count, heap, answer)
                else:
                    _rank_rows(<const uint64_t *>p, rows, classes, count, heap, answer)
    finally:
        PyMem_Free(heap)
    return out, np.take_along_axis(values, out, axis=1)


# Longest "value:index": %f of the largest double is 309 digits, a sign, a point and six
# decimals (317), then ':' and up to 19 digits of index.
cdef enum:
    _TEXT_MAX = 352


cdef inline Py_ssize_t _decimal(char *buf, uint64_t u) noexcept nogil:
    # u in decimal (what %llu prints), without printf's parsing of a format each time.
    cdef char digits[20]
    cdef Py_ssize_t n = 0, i
    while True:
        digits[n] = <char>(48 + u % 10)
        n += 1
        u //= 10
        if u == 0:
            break
    for i in range(n):
        buf[i] = digits[n - 1 - i]
    return n


cdef Py_ssize_t _value_text(
    char *buf, int code, int64_t s, uint64_t u, double d
) noexcept nogil:
    if code == FORMAT_SIGNED:
        if s < 0:
            buf[0] = c'-'
            # The magnitude as unsigned: exact for INT64_MIN too.
            return 1 + _decimal(buf + 1, 0 - <uint64_t>s)
        return _decimal(buf, <uint64_t>s)
    if code == FORMAT_UNSIGNED:
        return _decimal(buf, u)
    # NaN and infinities spelled as glibc does, on every platform.
    if isnan(d):
        return snprintf(buf, _TEXT_MAX, "%s", "-nan" if signbit(d) else "nan")
    if isinf(d):
        return snprintf(buf, _TEXT_MAX, "%s", "-inf" if d < 0 else "inf")
    return snprintf(buf, _TEXT_MAX, "%f", d)


@contract(CONTRACTS)
def classification_strings(values, indices, labels=None):
    flat, index, code_ = format_source(values, indices)
    table = label_table(labels)
    cdef Py_ssize_t n = flat.shape[0], i, length, label_length, n_labels = len(table)
    cdef int code = code_
    cdef const int64_t[::1] at = index
    cdef const int64_t[::1] signed_values
    cdef const uint64_t[::1] unsigned_values
    cdef const double[::1] float_values
    if code == FORMAT_SIGNED:
        signed_values = flat
    elif code == FORMAT_UNSIGNED:
        unsigned_values = flat
    else:
        float_values = flat
    cdef char buf[_TEXT_MAX]
    cdef bytes label, element
    cdef char *dst
    elements = PyList_New(n)
    for i in range(n):
        if code == FORMAT_SIGNED:
            length = _value_text(buf, code, signed_values[i], 0, 0.0)
        elif code == FORMAT_UNSIGNED:
            length = _value_text(buf, code, 0, unsigned_values[i], 0.0)
        else:
            length = _value_text(buf, code, 0, 0, float_values[i])
        buf[length] = c':'
        length += 1 + _decimal(buf + length + 1, <uint64_t>at[i])  # indices are >= 0
        label_length = 0
        if at[i] < n_labels:
            label = table[at[i]]
            label_length = PyBytes_GET_SIZE(label)
        if label_length:
            element = PyBytes_FromStringAndSize(NULL, length + 1 + label_length)
            dst = PyBytes_AS_STRING(element)
            memcpy(dst, buf, length)
            dst[length] = c':'
            memcpy(dst + length + 1, PyBytes_AS_STRING(label), label_length)
        else:
            element = PyBytes_FromStringAndSize(buf, length)
        Py_INCREF(element)
        PyList_SET_ITEM(elements, i, element)
    out = np.empty(n, dtype=object)
    out[:] = elements
    return out.reshape(np.shape(values))
