# The HTTP/1.1 request head of the native front end: the kernel, over csrc/oipcodec/http/head.h.
# Its twin and reference is oipcodec/_pure/http11.py; the contract is in oipcodec/_shared/.

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport int64_t

from oipcodec._shared import contract
from oipcodec._shared.http11 import CONTRACTS

__all__ = ["parse_head"]

# HEAD_* come from http11.pxd (generated from _shared/http11.py), equal to head.h's OIP_HTTP_*.

cdef extern from "oipcodec/http/head.h":
    ctypedef struct oip_http_head:
        size_t head_length
        size_t line_length
        int64_t content_length
        int64_t header_length
        int keep_alive
        int v10
    int oip_http_parse_head(const unsigned char *p, size_t n, oip_http_head *h) nogil


@contract(CONTRACTS)
def parse_head(data):
    cdef Py_buffer view
    cdef oip_http_head h
    cdef int kind
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        kind = oip_http_parse_head(<const unsigned char *>view.buf, <size_t>view.len, &h)
    finally:
        PyBuffer_Release(&view)
    if kind != HEAD_FAST:
        return (kind, 0, 0, -1, -1, False, False)
    return (
        kind,
        h.head_length,
        h.line_length,
        h.content_length,
        h.header_length,
        bool(h.keep_alive),
        bool(h.v10),
    )
