# The native gRPC path's HTTP/2 connection (issue 47): Cython on libnghttp2, vendored in
# csrc/third_party/nghttp2. nghttp2 does HTTP/2 (the preface, SETTINGS, HPACK, flow control,
# stream states, PING, RST_STREAM, GOAWAY, and the CONTINUATION-flood limit); this module does
# the rapid-reset limit, and gRPC on top: the message framing, grpc-timeout deadlines,
# grpc-encoding, the size limits, and the hand-over of each call to the Python side
# (oipcodec.server.h2's server).
# Not a kernel (no pure twin): without this module the server runs on grpcio.
# h2c with prior knowledge only: no TLS on this path.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport UINT64_MAX, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, strlen

import asyncio
import base64
import logging
import zlib
from collections import deque

__all__ = ["GrpcAbort", "H2Protocol", "Stream"]

_log = logging.getLogger("oipcodec.server.h2")

cdef extern from "nghttp2/nghttp2.h":
    ctypedef Py_ssize_t nghttp2_ssize
    ctypedef struct nghttp2_session:
        pass
    ctypedef struct nghttp2_session_callbacks:
        pass
    ctypedef struct nghttp2_option:
        pass
    ctypedef struct nghttp2_nv:
        uint8_t *name
        uint8_t *value
        size_t namelen
        size_t valuelen
        uint8_t flags
    ctypedef struct nghttp2_frame_hd:
        size_t length
        int32_t stream_id
        uint8_t type
        uint8_t flags
    ctypedef struct nghttp2_headers:
        nghttp2_frame_hd hd
        int cat
    ctypedef union nghttp2_frame:
        nghttp2_frame_hd hd
        nghttp2_headers headers
    ctypedef union nghttp2_data_source:
        int fd
        void *ptr
    ctypedef nghttp2_ssize (*nghttp2_data_source_read_callback2)(
        nghttp2_session *, int32_t, uint8_t *, size_t, uint32_t *, nghttp2_data_source *, void *
    ) noexcept
    ctypedef struct nghttp2_data_provider2:
        nghttp2_data_source source
        nghttp2_data_source_read_callback2 read_callback
    ctypedef struct nghttp2_settings_entry:
        int32_t settings_id
        uint32_t value

    enum:
        NGHTTP2_DATA = 0
        NGHTTP2_HEADERS = 1
        NGHTTP2_RST_STREAM = 3
        NGHTTP2_HCAT_REQUEST = 0
        NGHTTP2_FLAG_NONE = 0
        NGHTTP2_FLAG_END_STREAM = 1
        NGHTTP2_NV_FLAG_NONE = 0
        NGHTTP2_DATA_FLAG_EOF = 1
        NGHTTP2_DATA_FLAG_NO_END_STREAM = 2
        NGHTTP2_ERR_DEFERRED = -508
        NGHTTP2_ERR_CALLBACK_FAILURE = -902
        NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE = -521
        NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS = 3
        NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE = 4
        NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE = 6
        NGHTTP2_NO_ERROR = 0
        NGHTTP2_PROTOCOL_ERROR = 1
        NGHTTP2_INTERNAL_ERROR = 2
        NGHTTP2_CANCEL = 8
        NGHTTP2_ENHANCE_YOUR_CALM = 11
        NGHTTP2_ERR_BAD_CLIENT_MAGIC = -903
        NGHTTP2_ERR_FLOODED = -904
        NGHTTP2_ERR_TOO_MANY_CONTINUATIONS = -905
        NGHTTP2_ERR_TOO_MANY_SETTINGS = -537

    ctypedef int (*nghttp2_on_begin_headers_callback)(
        nghttp2_session *, const nghttp2_frame *, void *) noexcept
    ctypedef int (*nghttp2_on_header_callback)(
        nghttp2_session *, const nghttp2_frame *, const uint8_t *, size_t, const uint8_t *,
        size_t, uint8_t, void *) noexcept
    ctypedef int (*nghttp2_on_frame_recv_callback)(
        nghttp2_session *, const nghttp2_frame *, void *) noexcept
    ctypedef int (*nghttp2_on_data_chunk_recv_callback)(
        nghttp2_session *, uint8_t, int32_t, const uint8_t *, size_t, void *) noexcept
    ctypedef int (*nghttp2_on_stream_close_callback)(
        nghttp2_session *, int32_t, uint32_t, void *) noexcept

    int nghttp2_session_callbacks_new(nghttp2_session_callbacks **)
    void nghttp2_session_callbacks_del(nghttp2_session_callbacks *)
    void nghttp2_session_callbacks_set_on_begin_headers_callback(
        nghttp2_session_callbacks *, nghttp2_on_begin_headers_callback)
    void nghttp2_session_callbacks_set_on_header_callback(
        nghttp2_session_callbacks *, nghttp2_on_header_callback)
    void nghttp2_session_callbacks_set_on_frame_recv_callback(
        nghttp2_session_callbacks *, nghttp2_on_frame_recv_callback)
    void nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        nghttp2_session_callbacks *, nghttp2_on_data_chunk_recv_callback)
    void nghttp2_session_callbacks_set_on_stream_close_callback(
        nghttp2_session_callbacks *, nghttp2_on_stream_close_callback)
    int nghttp2_option_new(nghttp2_option **)
    void nghttp2_option_del(nghttp2_option *)
    void nghttp2_option_set_no_auto_window_update(nghttp2_option *, int)
    void nghttp2_option_set_max_continuations(nghttp2_option *, size_t)
    void nghttp2_option_set_stream_reset_rate_limit(nghttp2_option *, uint64_t, uint64_t)
    int nghttp2_session_server_new2(
        nghttp2_session **, const nghttp2_session_callbacks *, void *, const nghttp2_option *)
    void nghttp2_session_del(nghttp2_session *)
    nghttp2_ssize nghttp2_session_mem_recv2(nghttp2_session *, const uint8_t *, size_t)
    nghttp2_ssize nghttp2_session_mem_send2(nghttp2_session *, const uint8_t **)
    int nghttp2_session_want_read(nghttp2_session *)
    int nghttp2_session_want_write(nghttp2_session *)
    int nghttp2_session_resume_data(nghttp2_session *, int32_t)
    int nghttp2_session_consume(nghttp2_session *, int32_t, size_t)
    int nghttp2_session_set_local_window_size(nghttp2_session *, uint8_t, int32_t, int32_t)
    int32_t nghttp2_session_get_last_proc_stream_id(nghttp2_session *)
    int nghttp2_submit_settings(nghttp2_session *, uint8_t, const nghttp2_settings_entry *, size_t)
    int nghttp2_submit_response2(
        nghttp2_session *, int32_t, const nghttp2_nv *, size_t, const nghttp2_data_provider2 *)
    int nghttp2_submit_trailer(nghttp2_session *, int32_t, const nghttp2_nv *, size_t)
    int nghttp2_submit_rst_stream(nghttp2_session *, uint8_t, int32_t, uint32_t)
    int nghttp2_submit_goaway(nghttp2_session *, uint8_t, int32_t, uint32_t, const uint8_t *, size_t)
    int nghttp2_submit_shutdown_notice(nghttp2_session *)
    int nghttp2_session_terminate_session(nghttp2_session *, uint32_t)
    const char *nghttp2_strerror(int)

cdef extern from "oipcodec/h2/grpc.h":
    int oip_grpc_prefix(const unsigned char *p, size_t n, int *compressed, uint32_t *length)
    void oip_grpc_put_prefix(unsigned char *p, int compressed, uint32_t length)
    int oip_grpc_timeout(const unsigned char *p, size_t n, int64_t *ns)
    int oip_grpc_content_type(const unsigned char *p, size_t n)

cdef extern from "Python.h":
    char *PyByteArray_AS_STRING(object)
    Py_ssize_t PyByteArray_GET_SIZE(object)


# The gRPC status codes this module sends itself (grpc.StatusCode's numbers, without importing
# grpc: the native path must not pay for it).
cdef enum:
    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    DEADLINE_EXCEEDED = 4
    RESOURCE_EXHAUSTED = 8
    UNIMPLEMENTED = 12
    INTERNAL = 13

cdef enum:
    # The receive window of each stream: at most this many bytes of its request sit unread.
    STREAM_WINDOW = 1 << 20
    # The connection's receive window, shared by its streams.
    CONNECTION_WINDOW = 16 << 20
    # A stream's response bytes not yet handed to nghttp2 above which Stream.write waits.
    WRITE_HIGH = 1 << 20
    # The request header list a stream may send (grpcio's default hard limit is 16 KiB).
    MAX_HEADER_LIST = 16384
    # One read from the socket: asyncio reads into this buffer of the connection's own, not a
    # new 256 KiB bytes per read (docs/measurements.md has the before/after).
    READ_BUFFER = 1 << 16
    # Rapid reset (CVE-2023-44487): RST_STREAM of streams not yet answered, this many at once,
    # then this many a second, before GOAWAY (nghttp2's own defaults).
    RESET_BURST = 1000
    RESET_RATE = 33
ACCEPT_ENCODING = b"identity,deflate,gzip"
# grpc-status values of the codes gRPC defines (0-16), made once rather than per call.
cdef tuple _STATUS = tuple(str(code).encode("ascii") for code in range(17))


cdef inline void _set_nv(nghttp2_nv *nv, const char *name, const char *value) noexcept:
    nv.name = <uint8_t *>name
    nv.namelen = strlen(name)
    nv.value = <uint8_t *>value
    nv.valuelen = strlen(value)
    nv.flags = NGHTTP2_NV_FLAG_NONE


# A call answered OK with no metadata (nearly every call) sends these ready header lists, not
# a _Headers built per call: nghttp2 copies them, so static strings do.
cdef nghttp2_nv _OK_HEADERS[3]
cdef nghttp2_nv _OK_TRAILERS[1]
_set_nv(&_OK_HEADERS[0], b":status", b"200")
_set_nv(&_OK_HEADERS[1], b"content-type", b"application/grpc")
_set_nv(&_OK_HEADERS[2], b"grpc-accept-encoding", b"identity,deflate,gzip")
_set_nv(&_OK_TRAILERS[0], b"grpc-status", b"0")


cdef inline bint _named(const uint8_t *name, size_t namelen, const char *what,
                        size_t size) noexcept:
    return namelen == size and memcmp(name, what, size) == 0


class GrpcAbort(Exception):
    """End a call with gRPC status ``code`` (its number) and ``details``."""

    def __init__(self, code, details=""):
        super().__init__(code, details)
        self.code = int(code)
        self.details = str(details)


cdef bytes _percent_encode(str details):
    # grpc-message is percent-encoded UTF-8: every byte outside printable ASCII, and "%".
    cdef bytes raw = details.encode("utf-8", "replace")
    cdef bytearray out
    cdef unsigned char c
    for c in raw:
        if c < 0x20 or c > 0x7E or c == 0x25:
            break
    else:
        return raw
    out = bytearray()
    for c in raw:
        if c < 0x20 or c > 0x7E or c == 0x25:
            out += b"%%%02X" % c
        else:
            out.append(c)
    return bytes(out)


cdef bytes _as_header_value(object value):
    if isinstance(value, bytes):
        return base64.b64encode(value).rstrip(b"=")
    return str(value).encode("latin-1")


cdef class _Headers:
    """A header list for one nghttp2 submit call: nghttp2 copies names and values, so the bytes
    need to live only as long as this object."""

    cdef list keep
    cdef nghttp2_nv nva[64]
    cdef size_t n

    def __cinit__(self):
        self.keep = []
        self.n = 0

    cdef int add(self, bytes name, bytes value) except -1:
        if self.n == 64:
            raise ValueError("more than 64 response headers")
        self.keep.append(name)
        self.keep.append(value)
        self.nva[self.n].name = <uint8_t *>PyBytes_AS_STRING(name)
        self.nva[self.n].namelen = PyBytes_GET_SIZE(name)
        self.nva[self.n].value = <uint8_t *>PyBytes_AS_STRING(value)
        self.nva[self.n].valuelen = PyBytes_GET_SIZE(value)
        self.nva[self.n].flags = NGHTTP2_NV_FLAG_NONE
        self.n += 1
        return 0

    cdef int add_metadata(self, list metadata) except -1:
        for key, value in metadata:
            self.add(key.lower().encode("ascii"), _as_header_value(value))
        return 0


cdef class Stream:
    """One gRPC call on a connection: what the Python side reads (``path``, ``metadata``,
    ``deadline``, ``peer``, ``cancelled``), sets (``initial_metadata``,
    ``trailing_metadata``) and awaits (``read``, ``write``)."""

    cdef readonly _Connection _conn
    cdef readonly int32_t stream_id
    # None until a handler asks for them (most calls set no metadata).
    cdef list _initial_metadata
    cdef list _trailing_metadata
    cdef readonly object deadline
    cdef readonly bint cancelled
    cdef bytes _path
    cdef bytes _method
    cdef bytes _content_type
    cdef bytes _encoding
    cdef bytes _timeout
    cdef list _raw
    cdef object _metadata
    cdef size_t _header_bytes
    cdef object _route
    cdef bint _streaming
    cdef bint _started
    # request side
    cdef bytearray _buf
    cdef object _messages  # unary: list of messages; streaming: deque
    cdef bint _half_closed
    cdef object _read_waiter
    cdef size_t _queued  # bytes of the whole messages waiting for read()
    cdef size_t _held  # bytes received but not yet given back to the client's window
    # response side
    cdef bint _headers_sent
    cdef bint _finished
    cdef bint _closed
    cdef bytearray _out
    cdef Py_ssize_t _out_pos
    cdef bint _deferred
    cdef int _status
    cdef str _details
    cdef object _write_waiter
    cdef object _task
    cdef object _timer

    def __cinit__(self, _Connection conn, int32_t stream_id):
        self._conn = conn
        self.stream_id = stream_id
        self.deadline = None
        self._raw = []
        self._messages = []
        self._buf = bytearray()
        self._out = bytearray()
        self._path = b""
        self._method = b""
        self._content_type = b""
        self._encoding = b""
        self._timeout = None  # None: no grpc-timeout field (an empty one is malformed)

    @property
    def initial_metadata(self):
        if self._initial_metadata is None:
            self._initial_metadata = []
        return self._initial_metadata

    @initial_metadata.setter
    def initial_metadata(self, list value):
        self._initial_metadata = value

    @property
    def trailing_metadata(self):
        if self._trailing_metadata is None:
            self._trailing_metadata = []
        return self._trailing_metadata

    @trailing_metadata.setter
    def trailing_metadata(self, list value):
        self._trailing_metadata = value

    @property
    def path(self):
        return self._path.decode("utf-8", "replace")

    @property
    def peer(self):
        return self._conn._peer

    @property
    def metadata(self):
        if self._metadata is None:
            items = []
            for key, value in self._raw:
                name = key.decode("latin-1")
                if name.endswith("-bin"):
                    items.append((name, base64.b64decode(value + b"=" * ((4 - len(value) % 4) % 4))))
                else:
                    items.append((name, value.decode("latin-1")))
            self._metadata = tuple(items)
        return self._metadata

    # ------------------------------------------------------------------ request side

    cdef int _header(self, const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen) except -1:
        self._header_bytes += namelen + valuelen + 32
        if self._header_bytes > MAX_HEADER_LIST:
            return 1
        # Names compared in C: only the values kept become bytes (a pseudo-header gRPC does
        # not read, te and grpc-accept-encoding make none).
        if namelen and name[0] == b":":
            if _named(name, namelen, b":path", 5):
                self._path = PyBytes_FromStringAndSize(<const char *>value, valuelen)
            elif _named(name, namelen, b":method", 7):
                self._method = PyBytes_FromStringAndSize(<const char *>value, valuelen)
            return 0
        if _named(name, namelen, b"content-type", 12):
            self._content_type = PyBytes_FromStringAndSize(<const char *>value, valuelen)
        elif _named(name, namelen, b"grpc-timeout", 12):
            self._timeout = PyBytes_FromStringAndSize(<const char *>value, valuelen)
        elif _named(name, namelen, b"grpc-encoding", 13):
            self._encoding = PyBytes_FromStringAndSize(<const char *>value, valuelen)
        elif not (_named(name, namelen, b"te", 2)
                  or _named(name, namelen, b"grpc-accept-encoding", 20)):
            self._raw.append((PyBytes_FromStringAndSize(<const char *>name, namelen),
                              PyBytes_FromStringAndSize(<const char *>value, valuelen)))
        return 0

    cdef int _headers_done(self) except -1:
        """The request's HEADERS are in: check them, find the route, start a streaming call."""
        cdef _Connection conn = self._conn
        cdef int64_t ns
        if self._method != b"POST":
            self._reject(405, UNIMPLEMENTED, ":method %s, expected POST" % self._method.decode("latin-1"))
            return 0
        if not oip_grpc_content_type(<const unsigned char *>PyBytes_AS_STRING(self._content_type),
                                     PyBytes_GET_SIZE(self._content_type)):
            self._reject(415, UNKNOWN, "content-type %r, expected application/grpc[+proto]"
                         % self._content_type.decode("latin-1"))
            return 0
        if self._timeout is not None:
            if oip_grpc_timeout(<const unsigned char *>PyBytes_AS_STRING(self._timeout),
                                PyBytes_GET_SIZE(self._timeout), &ns) != 0:
                self._finish(INTERNAL, "grpc-timeout %r, expected 1 to 8 digits and a unit "
                             "(H, M, S, m, u or n)" % self._timeout.decode("latin-1"))
                return 0
            self.deadline = conn._loop.time() + ns / 1e9
            self._timer = conn._loop.call_at(self.deadline, self._expire)
        if self._encoding not in (b"", b"identity", b"gzip", b"deflate"):
            self._finish(
                UNIMPLEMENTED,
                "Compression algorithm '%s' not supported" % self._encoding.decode("latin-1"),
            )
            return 0
        route = conn._routes.get(self._path)
        if route is None:
            try:
                route = conn._router.route(self._path)
            except Exception as exc:
                self._fail(exc)
                return 0
            if route is None:
                self._finish(UNIMPLEMENTED, "Method not found!")
                return 0
        self._route = route
        self._streaming = route.request_streaming
        if self._streaming:
            self._messages = deque()
            self._started = True
            self._call(None)
        return 0

    cdef int _data(self, const uint8_t *data, size_t n) except -1:
        cdef _Connection conn = self._conn
        cdef Py_ssize_t used, have = PyByteArray_GET_SIZE(self._buf)
        if self._finished or self._route is None:
            nghttp2_session_consume(conn._session, self.stream_id, n)
            return 0
        if have == 0:
            # The usual case, whole messages in one chunk: read straight from nghttp2's buffer.
            used = self._take(data, n)
            if not self._finished and <size_t>used < n:
                self._buf += (<const char *>data)[used:n]
        else:
            self._buf += (<const char *>data)[:n]
            used = self._take(<const uint8_t *>PyByteArray_AS_STRING(self._buf),
                              PyByteArray_GET_SIZE(self._buf))
            if not self._finished:
                del self._buf[:used]
        # The window is given back as bytes arrive while the messages waiting for read() are
        # under one window's worth; past that it is held until read() takes them. So a message
        # larger than the window still arrives, and an unread stream holds at most two windows
        # plus one partial message (within the receive limit). A unary request is held whole
        # anyway, so its window always goes back at once.
        self._held += n
        if self._finished or not self._streaming or self._queued <= STREAM_WINDOW:
            self._give_back()
        return 0

    cdef Py_ssize_t _take(self, const uint8_t *p, size_t n) except -1:
        """Every whole message at ``p`` queued (inflated if compressed); the bytes used."""
        cdef _Connection conn = self._conn
        cdef int compressed = 0, rc
        cdef uint32_t length = 0
        cdef size_t at = 0
        while not self._finished:
            rc = oip_grpc_prefix(p + at, n - at, &compressed, &length)
            if rc == 0:
                break
            if rc < 0:
                self._finish(INTERNAL, "gRPC message flag %d at byte 0 of a message, expected 0 or 1"
                             % p[at])
                break
            if length > conn._max_receive:
                self._finish(
                    RESOURCE_EXHAUSTED,
                    "Received message larger than max (%d vs. %d)" % (length, conn._max_receive),
                )
                break
            if n - at < 5 + <size_t>length:
                break
            message = PyBytes_FromStringAndSize(<const char *>p + at + 5, length)
            at += 5 + length
            if compressed:
                if self._encoding in (b"", b"identity"):
                    self._finish(INTERNAL, "compressed flag set with grpc-encoding identity, "
                                 "expected gzip or deflate")
                    break
                message = self._inflate(message)
                if message is None:
                    break
            if self._streaming:
                self._queued += 5 + length
                self._messages.append((message, 5 + length))
                self._wake_reader()
            else:
                self._messages.append(message)
        return at

    cdef int _give_back(self) except -1:
        if self._held and not self._closed:
            nghttp2_session_consume(self._conn._session, self.stream_id, self._held)
            self._held = 0
            self._conn._schedule_flush()
        return 0

    cdef object _inflate(self, bytes message):
        cdef _Connection conn = self._conn
        # Bounded: a message that inflates past the receive limit is refused after limit + 1
        # bytes, never allocated whole.
        inflater = zlib.decompressobj(31 if self._encoding == b"gzip" else 15)
        try:
            out = inflater.decompress(message, conn._max_receive + 1)
        except zlib.error as exc:
            self._finish(INTERNAL, "could not inflate the %s message: %s" % (self._encoding.decode(), exc))
            return None
        if len(out) > conn._max_receive:
            self._finish(
                RESOURCE_EXHAUSTED,
                "Received message larger than max (more than %d bytes inflated)" % conn._max_receive,
            )
            return None
        if not inflater.eof:
            self._finish(INTERNAL, "truncated %s message" % self._encoding.decode())
            return None
        return out

    cdef int _end(self) except -1:
        """The client half-closed."""
        self._half_closed = True
        if self._finished or self._route is None:
            return 0
        if self._buf:
            self._finish(INTERNAL, "request ends %d bytes into a gRPC message, expected the whole "
                         "message (5-byte prefix and its length)" % len(self._buf))
            return 0
        if self._streaming:
            self._wake_reader()
            return 0
        if len(self._messages) != 1:
            self._finish(
                INTERNAL,
                "expected one request message, received %d" % len(self._messages),
            )
            return 0
        message = self._messages.pop()
        self._started = True
        self._call(message)
        return 0

    cdef int _call(self, message) except -1:
        cdef _Connection conn = self._conn
        try:
            self._result(self._route.call(self, message))
        except GrpcAbort as exc:
            self._finish(exc.code, exc.details)
        except Exception as exc:
            self._fail(exc)
        return 0

    cdef int _fail(self, exc) except -1:
        """A handler's error other than GrpcAbort: INTERNAL, logged once; the connection lives."""
        _log.error("gRPC call %s failed", self.path, exc_info=exc)
        self._finish(INTERNAL, "Unexpected error in the gRPC handler")
        return 0

    cdef int _result(self, result) except -1:
        if result is None:
            self._finish(OK, "")
        elif type(result) is bytes or isinstance(result, (bytearray, memoryview)):
            self._queue(result)
            self._finish(OK, "")
        else:
            if asyncio.iscoroutine(result):
                task = self._conn._loop.create_task(result)
            else:
                task = asyncio.ensure_future(result, loop=self._conn._loop)
            self._task = task
            task.add_done_callback(self._task_done)
        return 0

    def _task_done(self, task):
        self._task = None
        if task.cancelled() or self._closed:
            return
        exc = task.exception()
        if exc is None:
            result = task.result()
            if result is None or isinstance(result, (bytes, bytearray, memoryview)):
                self._result(result)
            else:
                self._fail(TypeError("a gRPC handler's awaitable gave %s, not bytes or None"
                                     % type(result).__name__))
        elif isinstance(exc, GrpcAbort):
            self._finish(exc.code, exc.details)
        else:
            self._fail(exc)

    cdef int _wake_reader(self) except -1:
        waiter = self._read_waiter
        if waiter is not None:
            self._read_waiter = None
            if not waiter.done():
                waiter.set_result(None)
        return 0

    async def read(self):
        """The next request message, or None once the client half-closed."""
        cdef _Connection conn = self._conn
        while True:
            if self.cancelled:
                raise asyncio.CancelledError("the client reset the stream")
            if self._messages:
                message, size = self._messages.popleft()
                self._queued -= size
                if self._queued <= STREAM_WINDOW:
                    self._give_back()
                return message
            if self._half_closed or self._closed:
                return None
            self._read_waiter = conn._loop.create_future()
            await self._read_waiter

    # ------------------------------------------------------------------ response side

    cdef int _queue(self, message) except -1:
        cdef unsigned char prefix[5]
        cdef _Connection conn = self._conn
        cdef nghttp2_data_provider2 provider
        cdef _Headers headers
        cdef int rv
        oip_grpc_put_prefix(prefix, 0, <uint32_t>len(message))
        self._out += (<char *>prefix)[:5]
        self._out += message
        if not self._headers_sent:
            self._headers_sent = True
            provider.source.ptr = <void *>self
            provider.read_callback = _read_data
            if self._initial_metadata:
                headers = _Headers()
                headers.add(b":status", b"200")
                headers.add(b"content-type", b"application/grpc")
                headers.add(b"grpc-accept-encoding", ACCEPT_ENCODING)
                headers.add_metadata(self._initial_metadata)
                rv = nghttp2_submit_response2(conn._session, self.stream_id, headers.nva,
                                              headers.n, &provider)
            else:
                rv = nghttp2_submit_response2(conn._session, self.stream_id, _OK_HEADERS, 3,
                                              &provider)
            if rv != 0:
                raise ConnectionError(nghttp2_strerror(rv).decode())
        elif self._deferred:
            self._deferred = False
            nghttp2_session_resume_data(conn._session, self.stream_id)
        conn._schedule_flush()
        return 0

    async def write(self, message):
        """Queue one response message; waits while this stream has too many unsent bytes."""
        if self._closed or self._finished:
            raise ConnectionResetError("the gRPC stream is closed")
        self._queue(message)
        while PyByteArray_GET_SIZE(self._out) - self._out_pos > WRITE_HIGH:
            self._write_waiter = self._conn._loop.create_future()
            await self._write_waiter
            if self._closed:
                raise ConnectionResetError("the gRPC stream is closed")

    cdef int _finish(self, int status, str details) except -1:
        """End the call with this status: trailers after the messages, or trailers-only."""
        cdef _Connection conn = self._conn
        cdef _Headers headers
        if self._finished or self._closed:
            return 0
        self._finished = True
        self._status = status
        self._details = details
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        # Ended from this side (a bad message, the deadline) with the handler still running: it
        # is cancelled, so it neither runs on for nothing nor meets the ended call as an error.
        task = self._task
        if task is not None:
            self._task = None
            task.cancel()
        if not self._headers_sent:
            self._headers_sent = True
            headers = _Headers()
            headers.add(b":status", b"200")
            headers.add(b"content-type", b"application/grpc")
            if status == UNIMPLEMENTED:
                headers.add(b"grpc-accept-encoding", ACCEPT_ENCODING)
            self._add_status(headers)
            nghttp2_submit_response2(conn._session, self.stream_id, headers.nva, headers.n, NULL)
        elif self._deferred:
            self._deferred = False
            nghttp2_session_resume_data(conn._session, self.stream_id)
        conn._schedule_flush()
        return 0

    cdef int _add_status(self, _Headers headers) except -1:
        headers.add(b"grpc-status", _STATUS[self._status] if 0 <= self._status < 17
                    else str(self._status).encode("ascii"))
        if self._details:
            headers.add(b"grpc-message", _percent_encode(self._details))
        if self._trailing_metadata:
            headers.add_metadata(self._trailing_metadata)
        return 0

    cdef int _reject(self, int http_status, int status, str details) except -1:
        cdef _Headers headers = _Headers()
        self._finished = True
        self._headers_sent = True
        self._status = status
        self._details = details
        headers.add(b":status", str(http_status).encode("ascii"))
        headers.add(b"content-type", b"application/grpc")
        self._add_status(headers)
        nghttp2_submit_response2(self._conn._session, self.stream_id, headers.nva, headers.n, NULL)
        self._conn._schedule_flush()
        return 0

    def _expire(self):
        self._timer = None
        if self._closed or self._finished:
            return
        self._finish(DEADLINE_EXCEEDED, "Deadline Exceeded")

    cdef nghttp2_ssize _read(self, uint8_t *buf, size_t length, uint32_t *flags) except? -1:
        cdef Py_ssize_t left = PyByteArray_GET_SIZE(self._out) - self._out_pos
        cdef Py_ssize_t take = left if <size_t>left < length else <Py_ssize_t>length
        cdef _Headers headers
        if take:
            memcpy(buf, PyByteArray_AS_STRING(self._out) + self._out_pos, take)
            self._out_pos += take
            if self._out_pos == PyByteArray_GET_SIZE(self._out):
                del self._out[:]
                self._out_pos = 0
            elif self._out_pos > (1 << 16) and self._out_pos * 2 > PyByteArray_GET_SIZE(self._out):
                del self._out[:self._out_pos]
                self._out_pos = 0
            waiter = self._write_waiter
            if waiter is not None and PyByteArray_GET_SIZE(self._out) - self._out_pos <= WRITE_HIGH:
                self._write_waiter = None
                if not waiter.done():
                    waiter.set_result(None)
        if PyByteArray_GET_SIZE(self._out) - self._out_pos == 0:
            if self._finished:
                flags[0] |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM
                if self._status == OK and not self._details and not self._trailing_metadata:
                    nghttp2_submit_trailer(self._conn._session, self.stream_id, _OK_TRAILERS, 1)
                else:
                    headers = _Headers()
                    self._add_status(headers)
                    nghttp2_submit_trailer(self._conn._session, self.stream_id, headers.nva,
                                           headers.n)
            elif take == 0:
                self._deferred = True
                return NGHTTP2_ERR_DEFERRED
        return take

    cdef int _on_close(self, uint32_t error_code) except -1:
        """nghttp2 closed the stream: after our end, or by RST_STREAM, or the connection."""
        self._closed = True
        if not self._finished:
            self.cancelled = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task = self._task
        if task is not None:
            self._task = None
            task.cancel()
        self._wake_reader()
        waiter = self._write_waiter
        if waiter is not None:
            self._write_waiter = None
            if not waiter.done():
                waiter.set_result(None)
        self._route = None
        self._messages = None
        self._buf = None
        self._out = None
        return 0


cdef nghttp2_ssize _read_data(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                              size_t length, uint32_t *flags, nghttp2_data_source *source,
                              void *user_data) noexcept:
    try:
        return (<Stream>source.ptr)._read(buf, length, flags)
    except BaseException:
        _log.exception("gRPC stream %d: writing the response failed", stream_id)
        return NGHTTP2_ERR_CALLBACK_FAILURE


cdef int _on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame,
                           void *user_data) noexcept:
    cdef _Connection conn = <_Connection>user_data
    if frame.hd.type != NGHTTP2_HEADERS or frame.headers.cat != NGHTTP2_HCAT_REQUEST:
        return 0
    try:
        conn._streams[frame.hd.stream_id] = Stream(conn, frame.hd.stream_id)
    except BaseException:
        return NGHTTP2_ERR_CALLBACK_FAILURE
    return 0


cdef int _on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                    void *user_data) noexcept:
    cdef _Connection conn = <_Connection>user_data
    cdef Stream stream
    if frame.hd.type != NGHTTP2_HEADERS or frame.headers.cat != NGHTTP2_HCAT_REQUEST:
        return 0  # trailers of a request carry nothing gRPC reads
    try:
        stream = conn._streams.get(frame.hd.stream_id)
        if stream is None:
            return 0
        if stream._header(name, namelen, value, valuelen):
            # Over the header list limit: this stream is reset, the connection lives on.
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE
    except BaseException:
        return NGHTTP2_ERR_CALLBACK_FAILURE
    return 0


cdef int _on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
                        void *user_data) noexcept:
    cdef _Connection conn = <_Connection>user_data
    cdef Stream stream
    if frame.hd.type == NGHTTP2_RST_STREAM:
        try:
            conn._count_reset(frame.hd.stream_id)
        except BaseException:
            _log.exception("gRPC stream %d: counting its reset failed", frame.hd.stream_id)
            return NGHTTP2_ERR_CALLBACK_FAILURE
        return 0
    if frame.hd.type != NGHTTP2_HEADERS and frame.hd.type != NGHTTP2_DATA:
        return 0
    try:
        stream = conn._streams.get(frame.hd.stream_id)
        if stream is None:
            return 0
        if frame.hd.type == NGHTTP2_HEADERS and frame.headers.cat == NGHTTP2_HCAT_REQUEST:
            stream._headers_done()
        if frame.hd.flags & NGHTTP2_FLAG_END_STREAM and not stream._closed:
            stream._end()
    except BaseException:
        _log.exception("gRPC stream %d failed", frame.hd.stream_id)
        return NGHTTP2_ERR_CALLBACK_FAILURE
    return 0


cdef int _on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                        const uint8_t *data, size_t length, void *user_data) noexcept:
    cdef _Connection conn = <_Connection>user_data
    cdef Stream stream
    try:
        stream = conn._streams.get(stream_id)
        if stream is None:
            nghttp2_session_consume(session, stream_id, length)
            return 0
        stream._data(data, length)
    except BaseException:
        _log.exception("gRPC stream %d failed", stream_id)
        return NGHTTP2_ERR_CALLBACK_FAILURE
    return 0


cdef int _on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                          void *user_data) noexcept:
    cdef _Connection conn = <_Connection>user_data
    cdef Stream stream
    try:
        stream = conn._streams.pop(stream_id, None)
        if stream is not None:
            stream._on_close(error_code)
    except BaseException:
        return NGHTTP2_ERR_CALLBACK_FAILURE
    return 0


cdef nghttp2_session_callbacks *_callbacks = NULL
cdef nghttp2_option *_option = NULL


cdef int _setup() except -1:
    global _callbacks, _option
    if nghttp2_session_callbacks_new(&_callbacks) != 0 or nghttp2_option_new(&_option) != 0:
        raise MemoryError()
    nghttp2_session_callbacks_set_on_begin_headers_callback(_callbacks, _on_begin_headers)
    nghttp2_session_callbacks_set_on_header_callback(_callbacks, _on_header)
    nghttp2_session_callbacks_set_on_frame_recv_callback(_callbacks, _on_frame_recv)
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(_callbacks, _on_data_chunk)
    nghttp2_session_callbacks_set_on_stream_close_callback(_callbacks, _on_stream_close)
    # Windows are given back as the request is read (Stream.read), so a client can never have
    # more than the windows' worth of a stream's request waiting in memory.
    nghttp2_option_set_no_auto_window_update(_option, 1)
    # nghttp2's rapid-reset limit is off: it counts every RST_STREAM, so many clients that
    # cancel streams they were answered on (a grpc client's cancel, a closed channel) on one
    # shared connection drew GOAWAY INTERNAL_ERROR for all of them (issue 47);
    # _Connection._count_reset counts only the resets of streams not yet answered. At most 8
    # CONTINUATION frames after a HEADERS (CONTINUATION flood), then the connection closes.
    nghttp2_option_set_stream_reset_rate_limit(_option, UINT64_MAX, UINT64_MAX)
    nghttp2_option_set_max_continuations(_option, 8)
    return 0


_setup()


# Seconds a connection ended by GOAWAY waits for the client to close before closing itself.
LINGER = 1.0


cdef class _Connection:
    """The connection of H2Protocol (below), an extension type: asyncio wants a subclass of
    asyncio.BufferedProtocol to read into a buffer, which an extension type cannot be."""

    cdef nghttp2_session *_session
    cdef object _router
    cdef dict _routes
    cdef readonly dict _streams
    cdef object _loop
    cdef object _transport
    cdef str _peer
    cdef Py_ssize_t _max_receive
    cdef bint _flush_scheduled
    cdef bint _receiving
    cdef bint _paused
    cdef bint _closing
    cdef object _flush_cb
    cdef bytearray _inbuf
    cdef object _inview
    cdef object _linger
    cdef double _reset_tokens
    cdef double _reset_at
    cdef bint _calmed

    def __cinit__(self, router, *, max_receive_message_length=4 * 1024 * 1024,
                  max_concurrent_streams=100):
        self._router = router
        self._routes = router.routes
        self._streams = {}
        self._max_receive = max_receive_message_length
        self._peer = ""
        self._reset_tokens = RESET_BURST
        if nghttp2_session_server_new2(&self._session, _callbacks, <void *>self, _option) != 0:
            raise MemoryError()
        cdef nghttp2_settings_entry iv[3]
        iv[0].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS
        iv[0].value = max_concurrent_streams
        iv[1].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE
        iv[1].value = STREAM_WINDOW
        iv[2].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE
        iv[2].value = MAX_HEADER_LIST
        nghttp2_submit_settings(self._session, NGHTTP2_FLAG_NONE, iv, 3)
        nghttp2_session_set_local_window_size(self._session, NGHTTP2_FLAG_NONE, 0,
                                              CONNECTION_WINDOW)
        self._flush_cb = self._flush
        self._inbuf = bytearray(READ_BUFFER)
        self._inview = memoryview(self._inbuf)

    def __dealloc__(self):
        if self._session is not NULL:
            nghttp2_session_del(self._session)
            self._session = NULL

    @property
    def active_streams(self):
        return len(self._streams)

    def connection_made(self, transport):
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple) and len(peer) >= 2:
            if ":" in peer[0]:
                self._peer = "ipv6:[%s]:%d" % (peer[0], peer[1])
            else:
                self._peer = "ipv4:%s:%d" % (peer[0], peer[1])
        elif peer:
            self._peer = "unix:%s" % (peer,)
        self._flush()

    def get_buffer(self, sizehint):
        return self._inview

    def buffer_updated(self, Py_ssize_t nbytes):
        self._receive(<const uint8_t *>PyByteArray_AS_STRING(self._inbuf), nbytes)

    def data_received(self, bytes data):
        self._receive(<const uint8_t *>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))

    cdef int _receive(self, const uint8_t *data, Py_ssize_t n) except -1:
        cdef nghttp2_ssize rv
        if self._session is NULL or self._linger is not None:
            return 0
        self._receiving = True
        try:
            rv = nghttp2_session_mem_recv2(self._session, data, n)
        finally:
            self._receiving = False
        if rv < 0:
            # A fatal error: nghttp2 stops reading and queues no GOAWAY of its own, so one is
            # sent here (floods get ENHANCE_YOUR_CALM), then the connection is closed.
            _log.debug("HTTP/2 connection from %s: %s", self._peer, nghttp2_strerror(<int>rv).decode())
            nghttp2_session_terminate_session(
                self._session,
                NGHTTP2_ENHANCE_YOUR_CALM
                if rv in (NGHTTP2_ERR_FLOODED, NGHTTP2_ERR_TOO_MANY_CONTINUATIONS,
                          NGHTTP2_ERR_TOO_MANY_SETTINGS)
                else NGHTTP2_INTERNAL_ERROR if rv == NGHTTP2_ERR_CALLBACK_FAILURE
                else NGHTTP2_PROTOCOL_ERROR,
            )
            self._closing = True
        self._flush()
        return 0

    cdef int _count_reset(self, int32_t stream_id) except -1:
        """A RST_STREAM from the client: one of the rapid-reset budget unless the stream was
        answered (a client leaving a call it had answers on ends only that call); over the
        budget, GOAWAY ENHANCE_YOUR_CALM, once, and the calls in flight go on."""
        cdef Stream stream = self._streams.get(stream_id)
        cdef double now
        if stream is not None and stream._headers_sent:
            return 0
        now = self._loop.time()
        self._reset_tokens = min(<double>RESET_BURST,
                                 self._reset_tokens + (now - self._reset_at) * RESET_RATE)
        self._reset_at = now
        if self._reset_tokens >= 1:
            self._reset_tokens -= 1
        elif not self._calmed:
            self._calmed = True
            _log.debug("HTTP/2 connection from %s: too many streams reset", self._peer)
            nghttp2_submit_goaway(self._session, NGHTTP2_FLAG_NONE,
                                  nghttp2_session_get_last_proc_stream_id(self._session),
                                  NGHTTP2_ENHANCE_YOUR_CALM, NULL, 0)
        return 0

    def eof_received(self):
        return False

    def connection_lost(self, exc):
        if self._linger is not None:
            self._linger.cancel()
        self._drop_streams()
        self._transport = None
        if self._session is not NULL:
            nghttp2_session_del(self._session)
            self._session = NULL

    def pause_writing(self):
        self._paused = True

    def resume_writing(self):
        self._paused = False
        self._flush()

    cdef int _schedule_flush(self) except -1:
        # data_received flushes once at its end; only work done outside it needs a turn.
        if not self._flush_scheduled and not self._receiving and self._loop is not None:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush_cb)
        return 0

    def _flush(self):
        """Everything nghttp2 has ready, every stream's frames, in one transport.write."""
        cdef const uint8_t *data
        cdef nghttp2_ssize n
        self._flush_scheduled = False
        # Lingering, the streams are gone: nghttp2 must not call back into them.
        if self._session is NULL or self._transport is None or self._paused:
            return
        if self._linger is not None:
            return
        chunks = []
        while True:
            n = nghttp2_session_mem_send2(self._session, &data)
            if n < 0:
                self._closing = True
                break
            if n == 0:
                break
            chunks.append(PyBytes_FromStringAndSize(<const char *>data, n))
        if chunks:
            self._transport.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        if self._closing or (
            not nghttp2_session_want_read(self._session)
            and not nghttp2_session_want_write(self._session)
        ):
            self._close_after_goaway()

    cdef int _drop_streams(self) except -1:
        """The connection is over: every call on it cancelled and released."""
        cdef Stream stream
        streams = list(self._streams.values())
        self._streams.clear()
        for stream in streams:
            stream._on_close(NGHTTP2_CANCEL)
        return 0

    cdef int _close_after_goaway(self) except -1:
        """Close once the GOAWAY is out: closing a socket with unread input makes the kernel
        send RST, and the client may then lose the GOAWAY still in its buffers. So the write
        side is shut (FIN after what is queued), what the client still sends is read and
        dropped, and the socket closes when the client closes or after LINGER seconds."""
        if self._linger is not None or self._transport is None:
            return 0
        self._drop_streams()
        if not self._transport.can_write_eof():
            self._transport.close()
            return 0
        self._transport.write_eof()
        self._linger = self._loop.call_later(LINGER, self._transport.close)
        return 0

    def goaway(self):
        """Refuse new streams (GOAWAY with the last stream taken); calls in flight go on."""
        if self._session is NULL:
            return
        nghttp2_submit_goaway(self._session, NGHTTP2_FLAG_NONE,
                              nghttp2_session_get_last_proc_stream_id(self._session),
                              NGHTTP2_NO_ERROR, NULL, 0)
        self._flush()

    def close(self):
        """Cancel every call in flight and close the connection."""
        cdef Stream stream
        for stream in list(self._streams.values()):
            if stream._task is not None:
                stream._task.cancel()
        if self._transport is not None:
            self._transport.close()


class H2Protocol(_Connection, asyncio.BufferedProtocol):
    """An asyncio protocol for one HTTP/2 (h2c, prior knowledge) connection serving gRPC.

    ``router.routes`` (``dict[bytes, Route]``) is read first, then ``router.route(path)``;
    a Route has ``request_streaming`` and ``call(stream, message)``.
    """

    __slots__ = ()
