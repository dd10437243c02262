# The statistics counting kernel: the native twin. Its reference is oipcodec/_pure/counters.py;
# the slot layout, the contract and the errors are oipcodec/_shared/counters.py.
#
# Each slot is read and written with memcpy, so a buffer at any address is taken without an
# unaligned access (on x86-64 and AArch64 the compiler makes each a plain load and store), and
# added as uint64, so a sum past 2**63 - 1 wraps instead of being undefined.

from cpython.buffer cimport (
    PyBUF_FULL_RO,
    PyBuffer_IsContiguous,
    PyBuffer_Release,
    PyObject_GetBuffer,
)
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy

# Declared here rather than cimported from cpython's module of that name, which the Windows
# ABI check (tests/kernels/test_windows_abi.py) reads as a use of C's 32-bit integer there.
cdef extern from "Python.h":
    long long PyLong_AsLongLong(object) except? -1

from oipcodec._shared import contract
from oipcodec._shared.counters import CONTRACTS, SlotLayout, block_outside, not_slots, slot_layout

__all__ = ["SlotLayout", "count_success", "slot_layout"]


cdef inline void _add(char *slots, Py_ssize_t index, uint64_t value) noexcept nogil:
    cdef uint64_t total
    memcpy(&total, slots + index * 8, 8)
    total += value
    memcpy(slots + index * 8, &total, 8)


@contract(CONTRACTS)
def count_success(
    object slots,
    object model,
    object path,
    object batch,
    object rows,
    object received,
    object checked,
    object started,
    object finished,
    object encoded,
    object request_bytes,
    object response_bytes,
):
    # PyLong_AsLongLong takes what operator.index takes (a float is a TypeError, as in the
    # twin), where Cython's conversion of an int64_t argument would truncate a float.
    cdef int64_t m = PyLong_AsLongLong(model)
    cdef int64_t p = PyLong_AsLongLong(path)
    cdef int64_t b = PyLong_AsLongLong(batch)
    cdef int64_t r = PyLong_AsLongLong(rows)
    cdef int64_t t_received = PyLong_AsLongLong(received)
    cdef int64_t t_checked = PyLong_AsLongLong(checked)
    cdef int64_t t_started = PyLong_AsLongLong(started)
    cdef int64_t t_finished = PyLong_AsLongLong(finished)
    cdef int64_t t_encoded = PyLong_AsLongLong(encoded)
    cdef int64_t n_in = PyLong_AsLongLong(request_bytes)
    cdef int64_t n_out = PyLong_AsLongLong(response_bytes)
    cdef Py_buffer view
    PyObject_GetBuffer(slots, &view, PyBUF_FULL_RO)  # any buffer, refused below by name
    cdef char *s = <char *>view.buf
    cdef int64_t n = view.len // 8
    cdef uint64_t input_ns, infer_ns, output_ns
    cdef int contiguous
    try:
        contiguous = PyBuffer_IsContiguous(&view, b'C')
        if view.readonly or not contiguous or view.len % 8:
            raise not_slots(bool(view.readonly), bool(contiguous), view.len)
        if m < 0 or m > n - MODEL_WIDTH:
            raise block_outside("model", m, MODEL_WIDTH, n)
        if p < 0 or p > n - PATH_WIDTH:
            raise block_outside("path", p, PATH_WIDTH, n)
        if b != -1 and (b < 0 or b > n - BATCH_WIDTH):
            raise block_outside("batch", b, BATCH_WIDTH, n)
        input_ns = <uint64_t>t_checked - <uint64_t>t_received
        infer_ns = <uint64_t>t_finished - <uint64_t>t_started
        output_ns = <uint64_t>t_encoded - <uint64_t>t_finished
        _add(s, m, 1)
        _add(s, m + M_SUCCESS_NS, <uint64_t>t_encoded - <uint64_t>t_received)
        _add(s, m + M_QUEUE_NS, <uint64_t>t_started - <uint64_t>t_checked)
        _add(s, m + M_INPUT_NS, input_ns)
        _add(s, m + M_INFER_NS, infer_ns)
        _add(s, m + M_OUTPUT_NS, output_ns)
        _add(s, m + M_EXTRA_ROWS, <uint64_t>r - 1)
        memcpy(s + (m + M_LAST) * 8, &t_received, 8)
        _add(s, p, 1)
        _add(s, p + 1, <uint64_t>n_in)
        _add(s, p + 2, <uint64_t>n_out)
        _add(s, p + 3, input_ns)
        _add(s, p + 4, output_ns)
        if b != -1:
            _add(s, b, 1)
            _add(s, b + 1, input_ns)
            _add(s, b + 2, infer_ns)
            _add(s, b + 3, output_ns)
    finally:
        PyBuffer_Release(&view)
