# The statistics counting kernel: the native twin. Its reference is oipcodec/_pure/counters.py;
# the slot layout, the contract and the errors are oipcodec/_shared/counters.py.
#
# Each slot is read and written with memcpy, so a buffer at any address is taken without an
# unaligned access (on x86-64 and AArch64 the compiler makes each a plain load and store), and
# added as uint64, so a sum past 2**63 - 1 wraps instead of being undefined.

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy

from oipcodec._shared import contract
from oipcodec._shared.counters import (
    BATCH_FIELDS,
    CONTRACTS,
    MODEL_FIELDS,
    PATH_FIELDS,
    block_outside,
    not_slots,
)

__all__ = ["BATCH_FIELDS", "MODEL_FIELDS", "PATH_FIELDS", "count_success"]


cdef inline void _add(char *slots, Py_ssize_t index, uint64_t value) noexcept nogil:
    cdef uint64_t total
    memcpy(&total, slots + index * 8, 8)
    total += value
    memcpy(slots + index * 8, &total, 8)


@contract(CONTRACTS)
def count_success(
    object slots,
    int64_t model,
    int64_t path,
    int64_t batch,
    int64_t rows,
    int64_t received,
    int64_t checked,
    int64_t started,
    int64_t finished,
    int64_t encoded,
    int64_t request_bytes,
    int64_t response_bytes,
):
    cdef Py_buffer view
    PyObject_GetBuffer(slots, &view, PyBUF_SIMPLE)
    cdef char *s = <char *>view.buf
    cdef int64_t n = view.len // 8
    cdef uint64_t input_ns, infer_ns, output_ns
    try:
        if view.readonly or view.len % 8:
            raise not_slots(bool(view.readonly), view.len)
        if model < 0 or model > n - MODEL_WIDTH:
            raise block_outside("model", model, MODEL_WIDTH, n)
        if path < 0 or path > n - PATH_WIDTH:
            raise block_outside("path", path, PATH_WIDTH, n)
        if batch != -1 and (batch < 0 or batch > n - BATCH_WIDTH):
            raise block_outside("batch", batch, BATCH_WIDTH, n)
        input_ns = <uint64_t>checked - <uint64_t>received
        infer_ns = <uint64_t>finished - <uint64_t>started
        output_ns = <uint64_t>encoded - <uint64_t>finished
        _add(s, model, 1)
        _add(s, model + M_SUCCESS_NS, <uint64_t>encoded - <uint64_t>received)
        _add(s, model + M_QUEUE_NS, <uint64_t>started - <uint64_t>checked)
        _add(s, model + M_INPUT_NS, input_ns)
        _add(s, model + M_INFER_NS, infer_ns)
        _add(s, model + M_OUTPUT_NS, output_ns)
        _add(s, model + M_EXTRA_ROWS, <uint64_t>rows - 1)
        memcpy(s + (model + M_LAST) * 8, &received, 8)
        _add(s, path, 1)
        _add(s, path + 1, <uint64_t>request_bytes)
        _add(s, path + 2, <uint64_t>response_bytes)
        _add(s, path + 3, input_ns)
        _add(s, path + 4, output_ns)
        if batch != -1:
            _add(s, batch, 1)
            _add(s, batch + 1, input_ns)
            _add(s, batch + 2, infer_ns)
            _add(s, batch + 3, output_ns)
    finally:
        PyBuffer_Release(&view)
