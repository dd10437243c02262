# The native load generator: a thin wrapper over csrc/oipcodec/load/sender.c (HTTP/1.1) and
# h2sender.c (HTTP/2, gRPC, on the vendored nghttp2); their headers state the loops and bounds. oipcodec.bench.sender is its API and holds the
# pure-Python twin; this module is not a codec kernel, so it sits here and not in _native
# (setup.py builds it on POSIX only: poll and BSD sockets).

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int64_t, uint16_t, uint64_t
from libc.string cimport memset

import numpy as np


cdef extern from "oipcodec/load/sender.h" nogil:
    enum:
        OIP_ERR_KINDS
    ctypedef struct oip_sender_run:
        int family
        const char *address
        unsigned short port
        const char *const *requests
        const size_t *lengths
        size_t n_requests
        int connections
        double duration
        uint64_t count
        double rate
        double timeout
        uint64_t max_answer
        uint64_t capacity
        int64_t *done_ns
        int64_t *latency_ns
        uint16_t *status
        uint64_t recorded
        uint64_t completed
        uint64_t sent
        uint64_t unsent
        uint64_t status_counts[600]
        uint64_t errors[7]
        char first_error[320]
        double elapsed
        double cpu
        int setup_failed
    int oip_sender_run_load(oip_sender_run *run)

cdef extern from "oipcodec/load/h2sender.h" nogil:
    ctypedef struct oip_h2_options:
        const char *authority
        const char *path
        int streams
    int oip_h2_sender_run_load(oip_sender_run *run, const oip_h2_options *h2)

#: The error kinds, in the order of enum oip_sender_error.
ERROR_KINDS = ("connect", "send", "closed", "malformed", "too_large", "timeout", "status")


def run_load(int family, str address, int port, list requests, int connections, double duration,
             unsigned long long count, double rate, double timeout,
             unsigned long long max_answer, unsigned long long capacity, tuple h2=None) -> dict:
    """Run the load (arguments as oipcodec.bench.sender.run, checked there); ``h2`` is None
    (HTTP/1.1) or (authority, path, streams): gRPC calls over HTTP/2. The GIL is released for
    the whole run. Returns the raw outcome as a dict."""
    cdef oip_sender_run run
    cdef oip_h2_options options
    cdef bytes authority = h2[0].encode("ascii") if h2 is not None else b""
    cdef bytes rpc = h2[1].encode("ascii") if h2 is not None else b""
    options.authority = authority
    options.path = rpc
    options.streams = h2[2] if h2 is not None else 1
    cdef Py_ssize_t n = len(requests), i
    cdef bytes item
    cdef bytes host = address.encode("ascii")
    memset(&run, 0, sizeof(run))
    if n < 1 or capacity < 1:
        raise ValueError("run_load needs one request or more and a capacity of 1 or more")
    done = np.zeros(capacity, dtype=np.int64)
    latency = np.zeros(capacity, dtype=np.int64)
    status = np.zeros(capacity, dtype=np.uint16)
    cdef int64_t[::1] done_view = done
    cdef int64_t[::1] latency_view = latency
    cdef uint16_t[::1] status_view = status
    cdef const char **pointers = <const char **>PyMem_Malloc(n * sizeof(char *))
    cdef size_t *lengths = <size_t *>PyMem_Malloc(n * sizeof(size_t))
    if pointers == NULL or lengths == NULL:
        PyMem_Free(pointers)
        PyMem_Free(lengths)
        raise MemoryError()
    try:
        for i in range(n):
            item = requests[i]
            pointers[i] = item
            lengths[i] = len(item)
        run.family = family
        run.address = host
        run.port = port
        run.requests = pointers
        run.lengths = lengths
        run.n_requests = n
        run.connections = connections
        run.duration = duration
        run.count = count
        run.rate = rate
        run.timeout = timeout
        run.max_answer = max_answer
        run.capacity = capacity
        run.done_ns = &done_view[0]
        run.latency_ns = &latency_view[0]
        run.status = &status_view[0]
        if h2 is None:
            with nogil:
                oip_sender_run_load(&run)
        else:
            with nogil:
                oip_h2_sender_run_load(&run, &options)
    finally:
        PyMem_Free(pointers)
        PyMem_Free(lengths)
    k = run.recorded
    return {
        "setup_failed": bool(run.setup_failed),
        "first_error": run.first_error.decode("utf-8", "replace"),
        "done_ns": done[:k],
        "latency_ns": latency[:k],
        "status": status[:k],
        "completed": run.completed,
        "sent": run.sent,
        "unsent": run.unsent,
        "status_counts": {c: run.status_counts[c] for c in range(600) if run.status_counts[c]},
        "errors": {ERROR_KINDS[e]: run.errors[e] for e in range(7) if run.errors[e]},
        "elapsed": run.elapsed,
        "cpu": run.cpu,
    }
