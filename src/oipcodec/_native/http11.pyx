# The HTTP/1.1 request head of the native front end: the kernel, over csrc/oipcodec/http/head.h.
# Its twin and reference is oipcodec/_pure/http11.py; the contract is in oipcodec/_shared/.

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_AS_STRING
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcmp, memmove

cdef extern from "Python.h":
    bint PyCoro_CheckExact(object)

import weakref

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


# --------------------------------------------------------------------------- the connection
#
# The native front end's connection (issue 45), wrapped for asyncio as
# oipcodec.server.http11.native.NativeProtocol, which says what it answers and hands over.
# Not a kernel (no pure twin): with the pure kernels the Python protocol serves instead.

#: The read buffer: the Python protocol's first size; it doubles, up to MAX_BUFFER (room for
#: the largest fast request and the start of the next), only while a fast request that filled
#: it is still arriving.
cdef enum:
    READ_BUFFER = 1 << 15
    MAX_BUFFER = 1 << 17
#: The longest head and the largest Content-Length body served fast (above: handed over).
MAX_FAST_HEAD = 8 << 10
MAX_FAST_BODY = 64 << 10
#: How long the rest of a request (its head or its body) is waited for, from the first read
#: that left it incomplete (seconds): clients that write the head and the body apart
#: (Python's http.client), a head cut by TCP segments, and the next of pipelined requests
#: are read in pieces, and handing those over cost their whole connection the fast path. A
#: request still incomplete then goes to the Python protocol, whose head and body timeouts
#: start there (so a slowloris is closed as before, PIECE_WAIT later). Half a second, not
#: less: a client (or this server) descheduled on a loaded machine misses 0.1 s.
PIECE_WAIT = 0.5

cdef bytes _CRLF = b"\r\n"
cdef bytes _CLOSE = b"connection: close\r\n\r\n"


cdef inline uint64_t _fnv1a(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ p[i]) * 1099511628211ULL
    return h


cdef class RouteTable:
    """One FastPath's routes at one generation, shared by its connections: the request lines
    in an open-addressing hash table (FNV-1a, linear probing, at most half full), each with
    its entry: a probe's (status line, rest of the answer, rest with connection: close), or
    a slot's infer."""

    cdef readonly object generation
    cdef tuple keys, entries
    cdef Py_ssize_t *slots
    cdef Py_ssize_t mask

    def __cinit__(self, fast, dict status_lines):
        cdef Py_ssize_t i, h, size = 8
        cdef bytes key
        self.generation = fast.generation  # read first: a change meanwhile rebuilds again
        keys, entries = [], []
        for line, value in fast.routes.items():
            keys.append(bytes(line))
            if isinstance(value, tuple):
                status, headers, body = value
                entries.append(
                    (status_lines[status], headers + _CRLF + body, headers + _CLOSE + body)
                )
            else:
                entries.append(value.infer)
        self.keys, self.entries = tuple(keys), tuple(entries)
        while size < 2 * len(keys):
            size *= 2
        self.slots = <Py_ssize_t *>PyMem_Malloc(size * sizeof(Py_ssize_t))
        if self.slots == NULL:
            raise MemoryError()
        self.mask = size - 1
        for i in range(size):
            self.slots[i] = -1
        for i in range(len(keys)):
            key = keys[i]
            h = _fnv1a(<const unsigned char *>PyBytes_AS_STRING(key), len(key)) & self.mask
            while self.slots[h] >= 0:
                h = (h + 1) & self.mask
            self.slots[h] = i

    def __dealloc__(self):
        PyMem_Free(self.slots)

    cdef object find(self, const unsigned char *line, Py_ssize_t length):
        """The entry of the request line ``line[:length]``, or None."""
        cdef Py_ssize_t i, h = _fnv1a(line, length) & self.mask
        cdef object key
        while True:
            i = self.slots[h]
            if i < 0:
                return None
            key = <object>PyTuple_GET_ITEM(self.keys, i)
            if PyBytes_GET_SIZE(key) == length and memcmp(
                PyBytes_AS_STRING(key), line, length
            ) == 0:
                return <object>PyTuple_GET_ITEM(self.entries, i)
            h = (h + 1) & self.mask


#: FastPath -> its RouteTable, rebuilt by the first connection that sees a new generation.
_TABLES = weakref.WeakKeyDictionary()


cdef RouteTable _table_of(fast, dict status_lines):
    cdef RouteTable table = _TABLES.get(fast)
    if table is None or table.generation != fast.generation:
        table = _TABLES[fast] = RouteTable(fast, status_lines)
    return table


cdef class Connection:
    """One connection's fast path: heads read by head.h, the request line matched against
    the FastPath routes, Probes answered from bytes, Slots called once per request, the
    answers of one read written at once; everything else handed to the Python protocol."""

    cdef object loop, transport, server_state, fast, make_python, status_lines
    cdef object args, kwargs
    cdef bytearray buf
    cdef Py_ssize_t start, end
    cdef RouteTable table
    cdef object default_source
    cdef bytes default_lines
    cdef object task, timer, wait_timer
    cdef double activity, keep_alive_timeout
    cdef Py_ssize_t max_head
    cdef bint closed, handed, write_paused, reading_paused, closing, pending_keep_alive
    cdef bint cancels  # the pending task is cancelled when the client goes away
    cdef bint hand_over_at_once

    def __init__(self, config, server_state, app_state=None, _loop=None, *, fast_path,
                 make_python, status_lines, **options):
        import asyncio

        self.loop = _loop or asyncio.get_event_loop()
        self.server_state = server_state
        self.fast = fast_path
        self.make_python = make_python  # the Python protocol's class
        self.status_lines = status_lines
        self.args = (config, server_state, app_state, _loop)
        self.kwargs = options
        # A head the Python protocol would answer 431 (its max_head_bytes) goes to it.
        self.max_head = min(MAX_FAST_HEAD, options.get("max_head_bytes", MAX_FAST_HEAD))
        self.keep_alive_timeout = config.timeout_keep_alive
        self.buf = bytearray(READ_BUFFER)
        self.start = self.end = 0
        self.hand_over_at_once = fast_path is None

    # ------------------------------------------------------------------ asyncio protocol

    def connection_made(self, transport):
        self.transport = transport
        self.server_state.connections.add(self)
        if self.hand_over_at_once:
            self._hand_over()
            return
        self.activity = self.loop.time()
        self.timer = self.loop.call_later(self.keep_alive_timeout, self._expire)

    def connection_lost(self, exc):
        self.closed = True
        self.server_state.connections.discard(self)
        self._stop_wait()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.task is not None:
            if self.cancels:
                self.task.cancel()
            self.task = None

    def get_buffer(self, Py_ssize_t sizehint):
        if self.end == len(self.buf):
            if self.start:
                self._compact()
            elif not self._busy() and len(self.buf) < MAX_BUFFER:
                self.buf.extend(bytes(len(self.buf)))
        return memoryview(self.buf)[self.end:]

    def buffer_updated(self, Py_ssize_t nbytes):
        self.end += nbytes
        self.activity = self.loop.time()
        if self.closed:
            self.start = self.end = 0
            return
        if not self._busy():
            self._process()
        if not self.handed and not self.closed and self._busy():
            self._compact()
            if self.end == len(self.buf):  # full while it cannot go on: the rest waits
                self.reading_paused = True
                self.transport.pause_reading()

    def eof_received(self):
        return None

    def pause_writing(self):
        self.write_paused = True

    def resume_writing(self):
        self.write_paused = False
        if self.task is None and not self.closed and not self.handed:
            self._go_on()

    def shutdown(self):
        """uvicorn's graceful shutdown: close when idle, else after the answer in progress."""
        if self.task is None:
            self.transport.close()
        else:
            self.closing = True

    # ------------------------------------------------------------------ requests

    cdef inline bint _busy(self):
        """Whether requests wait: an answer pending, or the transport's buffer full."""
        return self.task is not None or self.write_paused

    cdef _go_on(self):
        """Reading and answering again, after a pending answer or a full transport."""
        if self.reading_paused:
            self.reading_paused = False
            self.transport.resume_reading()
        if self.start < self.end:
            self._process()

    cdef void _compact(self):
        cdef char *base = PyByteArray_AS_STRING(self.buf)
        memmove(base, base + self.start, self.end - self.start)
        self.end -= self.start
        self.start = 0

    cdef bytes _defaults(self):
        """uvicorn's default header lines (its date), joined again when it replaced them."""
        source = self.server_state.default_headers
        if source is not self.default_source:
            self.default_source = source
            self.default_lines = b"".join(
                [bytes(name).lower() + b": " + bytes(value) + _CRLF for name, value in source]
            )
        return self.default_lines

    cdef void _answer(self, list out, answer, bint keep_alive):
        status, headers, body = answer
        out.append(self.status_lines[status])
        out.append(self._defaults())
        out.append(headers)
        out.append(_CRLF if keep_alive else _CLOSE)
        out.append(body)

    cdef _process(self):
        """Answer every complete fast request in the buffer, in order, in one write; hand the
        connection over at the first request that is not one."""
        cdef oip_http_head h
        cdef int kind
        cdef Py_ssize_t length, total, offset
        cdef const unsigned char *p
        cdef list out = []
        cdef bint keep_alive, due = False
        cdef Py_ssize_t first = self.start
        if self.table is None or self.table.generation != self.fast.generation:
            self.table = _table_of(self.fast, self.status_lines)
        while self.start < self.end:
            p = <const unsigned char *>PyByteArray_AS_STRING(self.buf) + self.start
            kind = oip_http_parse_head(p, <size_t>(self.end - self.start), &h)
            if kind == HEAD_PARTIAL:  # the rest waited for, up to the Python protocol's limit
                due = self.end - self.start <= self.max_head
                break
            length = h.content_length if h.content_length > 0 else 0
            total = <Py_ssize_t>h.head_length + length
            if (
                kind != HEAD_FAST
                or <Py_ssize_t>h.head_length > self.max_head
                or length > MAX_FAST_BODY
            ):
                break
            entry = self.table.find(p, <Py_ssize_t>h.line_length)
            if entry is None:
                break
            if total > self.end - self.start:  # the rest of the body in a later read
                due = True
                break
            keep_alive = h.keep_alive and not self.closing
            if isinstance(entry, tuple):
                out.append(<object>PyTuple_GET_ITEM(entry, 0))
                out.append(self._defaults())
                out.append(<object>PyTuple_GET_ITEM(entry, 1 if keep_alive else 2))
            else:
                # A view of the read buffer, released after the call: Slot.infer makes the
                # one copy a model may keep, so the body is copied once, not twice.
                offset = self.start + <Py_ssize_t>h.head_length
                body = memoryview(self.buf)[offset:offset + length]
                try:
                    answer = entry(body, h.header_length)
                finally:
                    body.release()
                if answer is None:  # not for the fast path: this request on, Python's
                    break
                if not isinstance(answer, tuple):  # its answer comes later
                    self.start += total
                    self._write(out)
                    self._stop_wait()
                    self.pending_keep_alive = keep_alive
                    # A coroutine runs as this connection's task, cancelled if the client goes
                    # away (a wait in a queue); a task of its own is left to finish.
                    self.cancels = PyCoro_CheckExact(answer)
                    self.task = self.loop.create_task(answer) if self.cancels else answer
                    self.server_state.tasks.add(self.task)
                    self.task.add_done_callback(self._answered)
                    return
                self._answer(out, answer, keep_alive)
            self.start += total
            self.server_state.total_requests += 1
            if not keep_alive:
                self._write(out)
                self._close()
                return
        self._write(out)
        if self.start != first or not due:  # the wait is the current request's
            self._stop_wait()
        if self.start == self.end:
            self.start = self.end = 0
        elif due:  # waited for a moment (PIECE_WAIT), from the first read that lacked it
            if self.wait_timer is None:
                self.wait_timer = self.loop.call_later(PIECE_WAIT, self._late)
        else:
            self._hand_over()

    cdef void _write(self, list out):
        if out:
            self.transport.write(b"".join(out))

    cdef void _stop_wait(self):
        if self.wait_timer is not None:
            self.wait_timer.cancel()
            self.wait_timer = None

    def _late(self):
        """A request not complete PIECE_WAIT after its first piece: the connection to the
        Python protocol (unless an answer is pending: the request is looked at again after
        it)."""
        self.wait_timer = None
        if not (self.closed or self.handed or self._busy()) and self.start < self.end:
            self._hand_over()

    cdef void _close(self):
        self.closed = True
        self._stop_wait()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.transport.close()

    def _answered(self, task):
        """The coroutine's answer is in: write it, then go on with what was read meanwhile."""
        cdef list out = []
        cdef bint keep_alive
        self.server_state.tasks.discard(task)
        if self.closed or task is not self.task:
            return
        self.task = None
        if task.cancelled():
            return
        keep_alive = self.pending_keep_alive and not self.closing
        error = task.exception()
        if error is not None:  # Slot's coroutines answer errors themselves: a bug
            self.loop.call_exception_handler(
                {"message": "the fast path's answer failed", "exception": error}
            )
            self._close()
            return
        self._answer(out, task.result(), keep_alive)
        self.server_state.total_requests += 1
        self._write(out)
        if not keep_alive:
            self._close()
            return
        self.activity = self.loop.time()
        if not self.write_paused:
            self._go_on()

    def _expire(self):
        """The keep-alive wait (config.timeout_keep_alive): close when nothing came for that
        long and no answer is pending, as the Python protocol does; a request that stopped
        arriving goes to the Python protocol, whose head and body timeouts take it on."""
        cdef double idle = self.loop.time() - self.activity
        self.timer = None
        if self.closed or self.handed:
            return
        if self.task is not None:
            idle = 0.0  # busy: look again a whole wait later
        if idle < self.keep_alive_timeout:
            self.timer = self.loop.call_later(self.keep_alive_timeout - idle, self._expire)
        elif self.start < self.end:
            self._hand_over()
        else:
            self._close()

    def _hand_over(self):
        """The rest of the connection to the Python protocol: it gets the transport and the
        bytes not consumed yet."""
        self.handed = True
        self._stop_wait()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        args, kwargs = self.args, self.kwargs
        python = self.make_python(*args, **kwargs)
        self.server_state.connections.discard(self)
        transport = self.transport
        transport.set_protocol(python)
        python.connection_made(transport)
        if self.reading_paused:
            self.reading_paused = False
            transport.resume_reading()
        data = memoryview(self.buf)[self.start:self.end]
        self.start = self.end = 0
        while len(data):
            room = python.get_buffer(len(data))
            n = min(len(room), len(data))
            room[:n] = data[:n]
            room = None  # no export left while it runs (it may grow its buffer)
            python.buffer_updated(n)
            data = data[n:]
        data.release()
