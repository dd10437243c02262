"""oipcodec's HTTP/1.1 protocol for uvicorn: a request body is received straight into one buffer.

uvicorn's own protocols hand an ASGI app its request body in pieces of about 64 kB. Each piece
is copied from the event loop's read buffer into a bytes object, from there into the request's
bytearray, and from that into the bytes of an ``http.request`` message, and the app joins the
pieces (a fifth copy); reading is paused and resumed for each piece, a wake-up of the app's
task each time. On a 3 MB image sent as JSON that was 13.7% of the server's CPU (perf, one
process under ``benchmarks/load/load_server.py``).

:class:`HttpProtocol` is an :class:`asyncio.BufferedProtocol`. When the app first asks for a
body of ``Content-Length`` bytes (at most ``max_body_buffer``), it allocates one ``bytearray``
of that size, and the event loop receives the rest of the body into it: the kernel's copy is
the only one. The app gets the whole body in a single ``http.request`` message; its ``body`` is
that ``bytearray`` (ASGI asks for ``bytes``; every oipcodec decoder takes any buffer). The
buffer is allocated only when the app calls ``receive()``, so an app that refuses a body by
its ``Content-Length`` (413) first never makes the server allocate it. Chunked bodies, and
bodies over ``max_body_buffer``, are handed over in pieces as they arrive, like uvicorn does.

It plugs into uvicorn as ``uvicorn.Config(app, http=HttpProtocol)`` (what ``oipcodec serve``
does; ``http_protocol="httptools"`` there selects uvicorn's own instead), so uvicorn still
owns the sockets, the lifespan, signals, graceful shutdown and the Date header.

What it does, per RFC 9112:
- request heads parsed strictly: a malformed request line or header line is answered 400, a
  head over ``max_head_bytes`` 431, an HTTP version other than 1.0/1.1 505, ``Content-Length``
  with ``Transfer-Encoding`` 400, a transfer coding other than ``chunked`` 501, each with
  ``Connection: close``;
- where a request ends, and whether it is accepted or refused, is decided as llhttp (the
  parser of uvicorn's httptools protocol) decides it, wherever RFC 9112 leaves a choice, so
  that a proxy in front parsing with llhttp and this server never disagree on framing
  (request smuggling). ``fuzz/fuzz_http_framing.py`` checks it differentially against
  httptools and lists the few deliberate exceptions, all cases where llhttp accepts what RFC
  9112 refuses and this server answers 4xx/5xx and closes. The choices:

  - request line: method, target and version separated by one or more spaces (RFC 9112 3
    allows it; llhttp does it); any CR and LF before it are skipped (RFC 9112 2.2). The method
    must be one llhttp knows (``_METHODS``): a token it does not know is 501 (RFC 9110 9.1), a
    method that is no token 400. The target is visible ASCII only: a control byte (NUL...),
    tab, DEL or a byte over 0x7e is 400, never 505;
  - ``Transfer-Encoding`` with no coding in it (empty, or commas only) is 400 (RFC 9112 6.1:
    faulty framing); ``chunked`` anywhere but last (``chunked, chunked``, ``chunked,``) 400;
  - two ``Content-Length`` header fields are 400 even when their values are the same (RFC
    9110 8.6 allows accepting identical ones; llhttp refuses them); a length (or chunk size)
    must fit in 64 bits;
  - chunk-size line: hex digits, then extensions ``;name[=value]`` with a token or
    quoted-string value, no whitespace anywhere: ``2 ``, ``2 ;a``, ``2; a`` are 400 (RFC 9112
    7.1.1 allows BWS before ``;``, llhttp does not), and so is any control byte in an
    extension;
  - trailer section: each line must be a header line (token, colon, value without controls);
    a request line, a bare LF, a bare CR, NUL, obs-fold or a line without a colon there is
    400, so no request can hide in (or be swallowed by) a trailer section;
- keep-alive (HTTP/1.1 unless ``Connection: close``; HTTP/1.0 closes after the answer), with
  uvicorn's ``timeout_keep_alive`` between requests; pipelined requests are answered in order;
- ``Expect: 100-continue``: the interim answer goes out when the app first asks for the body;
- a body the app did not read: the rest of a ``Content-Length`` body is read and dropped to
  keep the connection (as uvicorn does; a client that stops sending it is closed by the
  keep-alive timeout); after an unread chunked body, or one never asked for with
  ``Expect: 100-continue``, and after an answer the protocol gives
  itself (400, 408, 431...), the connection is closed the lingering way (RFC 9112 9.6): the
  write side is shut, what still arrives is dropped until the client closes or for
  ``timeout_keep_alive`` seconds, then the socket is closed (closing it with unread bytes would
  make the kernel reset the connection, and the client could lose the answer);
- a head or body that stops arriving for ``body_timeout`` seconds is answered 408 and the
  connection closed (uvicorn has no head timeout). Apps see the ASGI scope extension
  ``"oipcodec.body_timeout"`` and can leave that wait to the server: a whole body arrives as
  one message here, so a timer around each ``receive()`` would bound the total time instead of
  the time without progress;
- memory (what a request leaves behind): a body's buffer is dropped as soon as no more bytes
  will be received into it: when the connection is lost, when the protocol closes it (an
  answer of its own: 400, 408, 431; an app that failed or did not finish its answer) and when
  the request's task ends; the request and its connection then forget each other, so a
  request that ends badly frees its memory by reference counting, never waiting for the cycle
  collector (a 64 MiB buffer kept that way by each aborted upload added up to gigabytes);
- the body budget (:class:`BodyBudget`, one per server; ``oipcodec serve`` makes it
  ``--body-budget``, by default 4 times ``--max-body-bytes``): a buffer for a body that has
  not all arrived is reserved whole against it until its last byte arrives or it is dropped.
  A body that would take the reserved bytes past the budget is neither refused (503) nor kept
  waiting: it is received in pieces as they arrive (as uvicorn does) and costs the bytes the
  client has sent. So heads announcing large bodies reserve at most the budget, whatever
  their number, while ordinary loads keep the single buffer. Refusing would fail honest
  clients in a burst; waiting would let slow clients that hold the budget stall the others;
- answers: ``Content-Length`` as the app sends it, else chunked (HTTP/1.1) or to the close
  (HTTP/1.0); header names and values checked against response splitting; a response head is
  written together with the first part of its body (one ``writelines``, no join of a large
  body); a body part may be any bytes-like object, which the scope extension
  ``"oipcodec.buffers"`` tells apps (oipcodec's REST app then sends the tensors of a large
  answer as they are, views of the arrays and the writer's texts, without joining them).
"""

from __future__ import annotations

import asyncio
import http
import logging
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

import orjson

from oipcodec.kernels import uninitialized_bytearray

__all__ = ["BODY_TIMEOUT_EXTENSION", "BUFFERS_EXTENSION", "BodyBudget", "HttpProtocol"]

log = logging.getLogger("oipcodec.server")
access_log = logging.getLogger("uvicorn.access")

#: The ASGI scope extension that says this server times out a stalled request body itself;
#: its value is ``{"seconds": <the timeout>}``.
BODY_TIMEOUT_EXTENSION = "oipcodec.body_timeout"
#: The ASGI scope extension that says this server writes any bytes-like ``http.response.body``
#: (bytes, bytearray, memoryview) as it is, so an app can send views instead of copies.
BUFFERS_EXTENSION = "oipcodec.buffers"

_TCHAR = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]"
_TOKEN = _TCHAR + rb"+"
#: The request methods llhttp (uvicorn's httptools parser) knows for HTTP/1.x; any other
#: token is answered 501, as RFC 9110 9.1 says for a method the server does not recognise.
_METHODS = frozenset(
    b"DELETE GET HEAD POST PUT CONNECT OPTIONS TRACE COPY LOCK MKCOL MOVE PROPFIND PROPPATCH "
    b"SEARCH UNLOCK BIND REBIND UNBIND ACL REPORT MKACTIVITY CHECKOUT MERGE M-SEARCH NOTIFY "
    b"SUBSCRIBE UNSUBSCRIBE PATCH PURGE MKCALENDAR LINK UNLINK SOURCE PRI QUERY".split()
)
#: A request target as llhttp reads one: origin-form (and anything after ``*``) of visible
#: ASCII, or a scheme of letters, ``://``, an authority of llhttp's server characters and a
#: path or query of visible ASCII (no bytes over 0x7e, no controls, no space).
_TARGET = rb"(?:[/*][!-~]*|[A-Za-z]+://[-!$%&'()*+,.0-9:;=@A-Z\[\]_a-z~]*(?:[/?][!-~]*)?)"
_REQUEST_LINE = re.compile(rb"(" + _TOKEN + rb") +(" + _TARGET + rb") +HTTP/1\.([01])")
_ANY_VERSION = re.compile(rb"(" + _TOKEN + rb") +" + _TARGET + rb" +HTTP/\d+(\.\d+)?")
#: Header lines, each ending in CRLF: a token, a colon, a value of visible characters, spaces
#: and tabs (obs-fold continuation lines do not match: RFC 9112 5.2 lets a server reject them).
_HEADER_LINES = re.compile(rb"(?:" + _TOKEN + rb":[\t\x20-\x7e\x80-\xff]*\r\n)*")
#: One trailer field line (without its CRLF): the same grammar as a header line.
_TRAILER_LINE = re.compile(_TOKEN + rb":[\t\x20-\x7e\x80-\xff]*")
_BAD_NAME = re.compile(rb"[^!#$%&'*+.^_`|~0-9A-Za-z-]")
_BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
#: A chunk-size line as llhttp reads it: hex digits, then extensions ``;name[=value]``, the
#: value a token, a quoted-string or (llhttp) token characters then a quoted-string, with no
#: whitespace anywhere (RFC 9112 7.1.1 allows BWS around ``;`` and ``=``; llhttp does not,
#: and neither do we). A name may be empty only before ``=`` or another ``;``.
_CHUNK_EXT = (
    rb";(?:" + _TCHAR + rb"+|(?=[=;]))"
    rb"(?:=" + _TCHAR + rb"*(?:\"(?:[\t !#-\[\]-~\x80-\xff]|\\[\t -~\x80-\xff])*\")?)?"
)
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]+)(?:" + _CHUNK_EXT + rb")*")
_AUTHORITY = b"-!$%&'()*+,.0123456789:;=@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~"
_CRLF = frozenset(b"\r\n")
#: Content-Length must fit in 64 bits, as chunk sizes (16 hex digits); llhttp refuses larger.
_MAX_LENGTH = 1 << 64

#: First size of a connection's read buffer (heads and pipelined requests land there).
_READ_BUFFER = 1 << 15
#: Longest chunk-size line or trailer section of a chunked body.
_MAX_CHUNK_LINE = 1 << 12
#: Response bodies up to this size are joined with their head into one write.
_JOIN_ANSWER = 1 << 14
#: A request's body buffer before it is allocated (never written to).
_NO_BODY = bytearray()


#: The default budget of a server's body buffers, in units of its ``max_body_buffer``.
BUDGET_BODIES = 4


class BodyBudget:
    """The bytes of Content-Length body buffers that a server's connections may hold while
    their bodies are still arriving, all connections together (``limit``).

    A buffer is reserved, whole, when the app asks for a body that has not all arrived yet,
    and given back when its last byte arrives (from then on it holds bytes the client sent,
    not a claim) or when it is released unfilled (the client went away, 408, 400, the
    server closed the connection). A body that would take the reserved bytes past ``limit``
    is not refused and does not wait: it is handed to the app in pieces as they arrive, as
    uvicorn does, so its memory is what the client has sent. ``reserved`` is what is held
    now, ``peak`` the most ever held, ``overflows`` how many bodies came in pieces because
    of the limit.
    """

    __slots__ = ("limit", "overflows", "peak", "reserved")

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"a body budget must be >= 0 bytes, got {limit}")
        self.limit = limit
        self.reserved = 0
        self.peak = 0
        self.overflows = 0

    def take(self, size: int) -> bool:
        """Reserve ``size`` bytes if the limit allows; False (and nothing reserved) if not."""
        if self.reserved + size > self.limit:
            self.overflows += 1
            return False
        self.reserved += size
        self.peak = max(self.peak, self.reserved)
        return True

    def give(self, size: int) -> None:
        """Give back ``size`` bytes reserved by :meth:`take`."""
        self.reserved -= size


def _status_line(status: int) -> bytes:
    try:
        phrase = http.HTTPStatus(status).phrase.encode()
    except ValueError:
        phrase = b""
    return b"HTTP/1.1 %d %s\r\n" % (status, phrase)


_STATUS_LINES = {status: _status_line(status) for status in range(100, 600)}


def _tokens(value: bytes) -> set[bytes]:
    """The elements of a comma-separated header value, in lower case."""
    return {t.strip(b" \t") for t in value.lower().split(b",")}


class _BadRequest(Exception):
    """A request the protocol answers itself (and then closes the connection)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Head:
    """A parsed request head."""

    __slots__ = ("chunked", "close", "continue_", "headers", "length", "method", "target", "v10")

    def __init__(self, head: bytes) -> None:
        line_end = head.find(b"\r\n")
        request_line = head if line_end < 0 else head[:line_end]
        match = _REQUEST_LINE.fullmatch(request_line) or _ANY_VERSION.fullmatch(request_line)
        if match is None:
            raise _BadRequest(400, "malformed HTTP request line")
        if match.group(1) not in _METHODS:
            raise _BadRequest(501, f"unknown method {match.group(1).decode('ascii')!r}")
        if match.re is _ANY_VERSION:
            raise _BadRequest(505, "only HTTP/1.0 and HTTP/1.1 are served")
        self.method = match.group(1).decode("ascii")
        self.target = match.group(2)
        self.v10 = match.group(3) == b"0"
        lines = b"" if line_end < 0 else head[line_end + 2 :] + b"\r\n"
        if _HEADER_LINES.fullmatch(lines) is None:
            raise _BadRequest(400, "malformed HTTP header line")
        headers = []
        length: int | None = None
        codings: list[bytes] | None = None  # each Transfer-Encoding element, empty ones too
        connection = b""
        self.continue_ = False
        for line in lines.split(b"\r\n")[:-1]:
            name, _, raw = line.partition(b":")
            name = name.lower()
            value = raw.strip(b" \t")
            headers.append((name, value))
            if name == b"content-length":
                if not value.isdigit() or len(value.lstrip(b"0")) > 20 or int(value) >= _MAX_LENGTH:
                    shown = value[:40].decode("latin-1")
                    raise _BadRequest(400, f"invalid Content-Length {shown!r}")
                if length is not None:  # RFC 9110 8.6 allows either; llhttp refuses both
                    same = "different" if int(value) != length else "identical"
                    raise _BadRequest(400, f"two {same} Content-Length headers")
                length = int(value)
            elif name == b"transfer-encoding":
                # (a tab after a coding makes it another coding for llhttp: only spaces go)
                codings = (codings or []) + [
                    c.lstrip(b" \t").rstrip(b" ").lower() for c in raw.split(b",")
                ]
            elif name == b"connection":
                connection += b"," + value.lower()
            elif name == b"expect" and value.lower() == b"100-continue":
                self.continue_ = True
        self.headers = headers
        self.chunked = codings is not None
        if codings is not None:
            if length is not None:
                raise _BadRequest(400, "a request with both Content-Length and Transfer-Encoding")
            if self.v10:
                raise _BadRequest(400, "Transfer-Encoding in an HTTP/1.0 request")
            named = [c for c in codings if c]
            if not named:
                raise _BadRequest(400, "an empty Transfer-Encoding")
            if b"chunked" in codings and codings.index(b"chunked") != len(codings) - 1:
                raise _BadRequest(400, "chunked is not the final transfer coding")
            if named != [b"chunked"]:
                raise _BadRequest(501, "the only transfer coding served is chunked")
        self.length = 0 if length is None and codings is None else length
        self.close = self.v10 or b"close" in _tokens(connection)

    def path(self) -> tuple[str, bytes, bytes]:
        """The target's path (percent-decoded), raw path and query string."""
        target = self.target
        if not target.startswith(b"/"):
            scheme, sep, rest = target.partition(b"://")  # absolute-form (from a proxy)
            if target == b"*":
                return "*", b"*", b""
            if not sep or scheme.lower() not in (b"http", b"https"):
                raise _BadRequest(400, "malformed request target")
            end = len(rest) - len(rest.lstrip(_AUTHORITY))  # the path or query after it
            target = rest[end:] if rest[end:].startswith(b"/") else b"/" + rest[end:]
        raw, _, query = target.partition(b"?")
        raw = raw.partition(b"#")[0]
        path = raw.decode("latin-1")
        if "%" in path:
            path = urllib.parse.unquote(path, encoding="latin-1")
        return path, raw, query


class HttpProtocol(asyncio.BufferedProtocol):
    """One HTTP/1.1 connection: requests read, parsed and handed to the ASGI app one at a
    time. Created by uvicorn (``uvicorn.Config(app, http=HttpProtocol)``); the keyword
    arguments are bound with :func:`functools.partial`:

    ``body_timeout``: seconds a request head or body may stop arriving before 408 (None: no
    limit); ``max_head_bytes``: the largest request head (431 above); ``max_body_buffer``: the
    largest Content-Length body received into one buffer (larger ones come in pieces);
    ``body_budget``: the :class:`BodyBudget` shared by the server's connections (None: one
    per uvicorn server, of ``BUDGET_BODIES * max_body_buffer`` bytes, made by its first
    connection).
    """

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any] | None = None,
        _loop: asyncio.AbstractEventLoop | None = None,
        *,
        body_timeout: float | None = 30.0,
        max_head_bytes: int = 1 << 16,
        max_body_buffer: int = 64 << 20,
        body_budget: BodyBudget | None = None,
    ) -> None:
        if not config.loaded:
            config.load()
        self.config = config
        self.app = config.loaded_app
        self.loop = _loop or asyncio.get_event_loop()
        self.server_state = server_state
        self.app_state = app_state if app_state is not None else {}
        self.root_path: str = config.root_path
        self.keep_alive_timeout: float = config.timeout_keep_alive
        self.access_log = bool(config.access_log) and access_log.hasHandlers()
        self.body_timeout = body_timeout
        self.max_head_bytes = max_head_bytes
        self.max_body_buffer = max_body_buffer
        if body_budget is None:
            # One per server: uvicorn's ServerState is shared by all its connections.
            body_budget = getattr(server_state, "oipcodec_body_budget", None)
            if body_budget is None:
                body_budget = BodyBudget(BUDGET_BODIES * max_body_buffer)
                server_state.oipcodec_body_budget = body_budget
        self.body_budget: BodyBudget = body_budget
        self.extensions: dict[str, Any] = {BUFFERS_EXTENSION: {}}
        if body_timeout:
            self.extensions[BODY_TIMEOUT_EXTENSION] = {"seconds": body_timeout}
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.server: Any = None
        self.client: Any = None
        self.scheme = "http"
        # Bytes received and not consumed yet are buf[start:end].
        self.buf = bytearray(_READ_BUFFER)
        self.start = 0
        self.end = 0
        self.cycle: _Cycle | None = None
        self.skip = 0  # bytes of an unread body still to drop before the next head
        self.reading = True
        self.closed = False
        self.write_paused = False
        self.drained: asyncio.Future[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.timer_kind = ""  # "keep-alive", "head", "body" or "linger"
        self.activity = 0.0

    # ------------------------------------------------------------------ asyncio protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.server_state.connections.add(self)
        self.server = _address(transport.get_extra_info("sockname"))
        self.client = _address(transport.get_extra_info("peername"))
        if transport.get_extra_info("sslcontext") is not None:
            self.scheme = "https"
        self._arm("keep-alive")

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server_state.connections.discard(self)
        self._disarm()
        if self.cycle is not None:
            self.cycle.release()
            self.cycle.wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def get_buffer(self, sizehint: int) -> memoryview:
        cycle = self.cycle
        if cycle is not None and cycle.direct and not self.closed:
            return memoryview(cycle.body)[cycle.filled :]
        buf = self.buf
        if self.end == len(buf):
            live = self.end - self.start
            if self.start:  # move what is left to the front
                buf[:live] = buf[self.start : self.end]
                self.start, self.end = 0, live
            else:  # full of one head or chunk line: twice the room
                buf.extend(bytes(len(buf)))
        return memoryview(buf)[self.end :]

    def buffer_updated(self, nbytes: int) -> None:
        self.activity = self.loop.time()
        if self.closed:  # lingering: dropped
            self.start = self.end = 0
            return
        cycle = self.cycle
        if cycle is not None and cycle.direct:
            cycle.filled += nbytes
            if cycle.filled == len(cycle.body):
                cycle.direct = False
                cycle.remaining = 0
                cycle.unreserve()
                cycle.wake()
            return
        self.end += nbytes
        self._process()

    def eof_received(self) -> bool | None:
        return None  # close the transport (a half-closed client gets no answer)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: close when idle, else after the answer in progress."""
        if self.cycle is None:
            self.transport.close()
        else:
            self.cycle.keep_alive = False

    # ------------------------------------------------------------------ reading requests

    def _process(self) -> None:
        """Go on with what is in the buffer: the body the current request is waiting for,
        or the next request's head."""
        while not self.closed:
            cycle = self.cycle
            if cycle is not None:
                if cycle.waiting:
                    cycle.feed()
                if self.end == len(self.buf) and self.start == 0 and not cycle.direct:
                    self._pause_reading()  # full: the rest waits for the app
                return
            if self.skip:
                dropped = min(self.skip, self.end - self.start)
                self.start += dropped
                self.skip -= dropped
                if self.skip:
                    return
            while self.start < self.end and self.buf[self.start] in _CRLF:
                # RFC 9112 2.2: empty lines before a request are ignored (llhttp skips any CR
                # and LF there)
                self.start += 1
            head_end = self.buf.find(b"\r\n\r\n", self.start, self.end)
            if head_end < 0:
                if self.buf.find(b"\n\n", self.start, self.end) >= 0:
                    # A head ended by bare line feeds (no CRLF head has two in a row).
                    self._refuse(400, "HTTP header lines must end with CRLF")
                elif self.end - self.start > self.max_head_bytes:
                    self._refuse(431, f"the request head is over {self.max_head_bytes} bytes")
                elif self.start < self.end:
                    self._arm("head")
                if self.start == self.end:
                    self.start = self.end = 0
                return
            if head_end - self.start > self.max_head_bytes:
                self._refuse(431, f"the request head is over {self.max_head_bytes} bytes")
                return
            head_bytes = bytes(self.buf[self.start : head_end])
            self.start = head_end + 4
            try:
                head = _Head(head_bytes)
                path, raw_path, query = head.path()
            except _BadRequest as exc:
                self._refuse(exc.status, exc.message)
                return
            if self.timer_kind == "head":
                self._disarm()
            # A keep-alive timer is left running through the request (it re-arms itself when
            # it finds one in progress): no timer to cancel and set again per request.
            self._start_cycle(head, path, raw_path, query)

    def _start_cycle(self, head: _Head, path: str, raw_path: bytes, query: bytes) -> None:
        scope = {
            "type": "http",
            "asgi": {"version": self.config.asgi_version, "spec_version": "2.3"},
            "http_version": "1.0" if head.v10 else "1.1",
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "method": head.method,
            "root_path": self.root_path,
            "path": self.root_path + path,
            "raw_path": self.root_path.encode("latin-1") + raw_path,
            "query_string": query,
            "headers": head.headers,
            "state": self.app_state.copy(),
            "extensions": dict(self.extensions),
        }
        cycle = self.cycle = _Cycle(self, scope, head)
        task = self.loop.create_task(cycle.run(self.app))
        tasks = self.server_state.tasks
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _cycle_done(self, cycle: _Cycle) -> None:
        """The answer to ``cycle`` is out: go on with the next request, or close."""
        self.server_state.total_requests += 1
        self.cycle = None
        if cycle.direct:
            cycle.release()  # answered before its body came: the rest is dropped below
        if self.closed:
            return
        if not cycle.keep_alive:
            self._close(linger=not cycle.given)
            return
        # The answer kept the connection only for a body read to its end, or for the unread
        # rest of a Content-Length body, dropped as it comes (_Cycle._start_answer).
        self.skip = 0 if cycle.given else cycle.remaining or 0
        self._resume_reading()
        self.activity = self.loop.time()  # idle from now
        self._arm("keep-alive")
        self._process()

    def _refuse(self, status: int, message: str) -> None:
        """Answer a request the app never saw, and close."""
        log.info("HTTP request refused with %d: %s", status, message)
        body = orjson.dumps({"error": message})
        self.transport.write(
            _STATUS_LINES[status]
            + b"content-type: application/json\r\nconnection: close\r\n"
            + b"content-length: %d\r\n\r\n" % len(body)
            + body
        )
        self._close(linger=True)

    def _close(self, linger: bool) -> None:
        """Close after the last answer; with ``linger``, the lingering way (see the module's
        docstring), as the client may still be sending a body."""
        self.closed = True
        self._disarm()
        if self.cycle is not None:
            self.cycle.release()  # nothing more is received into it
            self.cycle.wake()
        if linger and self.transport.can_write_eof():
            self.transport.write_eof()
            self._resume_reading()
            self.timer_kind = "linger"
            self.timer = self.loop.call_later(self.keep_alive_timeout, self.transport.close)
        else:
            self.transport.close()

    def _pause_reading(self) -> None:
        if self.reading:
            self.reading = False
            self.transport.pause_reading()

    def _resume_reading(self) -> None:
        if not self.reading:
            self.reading = True
            self.transport.resume_reading()

    # ------------------------------------------------------------------ timers

    def _arm(self, kind: str) -> None:
        """Start the keep-alive wait, or the head's (if not already running)."""
        if kind == self.timer_kind and self.timer is not None:
            return
        self._disarm()
        seconds = self.keep_alive_timeout if kind == "keep-alive" else self.body_timeout
        if seconds is None:
            return
        self.timer_kind = kind
        self.activity = self.loop.time()
        self.timer = self.loop.call_later(seconds, self._expire, seconds)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.timer_kind = ""

    def _expire(self, seconds: float) -> None:
        """A timer ran out: the keep-alive wait closes the connection; a stalled head or body
        (no byte for ``seconds`` since the last one) is answered 408 and closed."""
        idle = self.loop.time() - self.activity
        if self.closed:
            return
        if self.timer_kind == "keep-alive" and self.cycle is not None:
            # A request is in progress: not idle. Look again a whole wait later.
            self.timer = self.loop.call_later(seconds, self._expire, seconds)
            return
        if idle < seconds and self.timer_kind != "head":
            # Bytes came meanwhile: wait for the rest of the time. A head has `seconds` in
            # all, or a client sending a byte now and then would hold the connection forever.
            self.timer = self.loop.call_later(seconds - idle, self._expire, seconds)
            return
        self.timer = None
        kind, self.timer_kind = self.timer_kind, ""
        if kind == "keep-alive":
            self._close(linger=False)
            return
        what = "head" if self.cycle is None else "body"
        self._refuse(408, f"the request {what} stopped arriving: nothing for {seconds:g} s")
        if self.cycle is not None:
            self.cycle.wake()


class _Cycle:
    """One request and its answer: the ``receive`` and ``send`` of its ASGI call."""

    __slots__ = (
        "bodiless",
        "body",
        "chunk_left",
        "chunk_state",
        "chunked_answer",
        "chunks",
        "complete",
        "continue_",
        "delivered",
        "direct",
        "filled",
        "given",
        "head_out",
        "keep_alive",
        "left_to_send",
        "pieces",
        "proto",
        "remaining",
        "reserved",
        "scope",
        "started",
        "waiter",
        "waiting",
    )

    def __init__(self, proto: HttpProtocol, scope: dict[str, Any], head: _Head) -> None:
        self.proto = proto
        self.scope = scope
        self.keep_alive = not head.close
        self.continue_ = head.continue_
        # The request body: `remaining` bytes of a Content-Length body not taken from the
        # connection yet (None: chunked, see chunk_state).
        self.remaining: int | None = head.length
        self.chunk_state = "size" if head.chunked else ""
        self.chunk_left = 0  # bytes of the current chunk's data still to come
        self.chunks: list[bytes] = []
        self.body = _NO_BODY  # the buffer of a Content-Length body, once the app asks
        self.filled = 0
        self.reserved = 0  # bytes of proto.body_budget this request holds
        self.pieces = False  # the body comes in pieces (over max_body_buffer or the budget)
        self.direct = False  # the event loop receives straight into `body`
        self.given = False  # every byte of the body was taken from the connection
        self.delivered = False  # ... and handed to the app, the last message sent
        self.waiting = False
        self.waiter: asyncio.Future[None] | None = None
        # The answer.
        self.started = False
        self.complete = False
        self.head_out: bytes | None = None
        self.left_to_send: int | None = None
        self.chunked_answer = False
        self.bodiless = False

    # ------------------------------------------------------------------ the app

    async def run(self, app: Callable[..., Any]) -> None:
        try:
            await self._run(app)
        finally:
            proto = self.proto
            if proto.closed and proto.cycle is self:
                # No answer will complete it: let the connection forget it, or the two
                # would keep each other (and the body) until the cycle collector runs.
                self.release()
                proto.cycle = None
            self.body = _NO_BODY

    async def _run(self, app: Callable[..., Any]) -> None:
        try:
            await app(self.scope, self.receive, self.send)
        except BaseException as exc:
            log.error("Exception in ASGI application", exc_info=exc)
            if not self.started and not self.proto.closed:
                await self.send_500()
            elif not self.complete:
                self.proto._close(linger=False)
            if not isinstance(exc, Exception):
                raise
        else:
            if not self.complete and not self.proto.closed:
                log.error("ASGI callable returned without completing its response")
                if not self.started:
                    await self.send_500()
                else:
                    self.proto._close(linger=False)

    async def send_500(self) -> None:
        body = b"Internal Server Error"
        await self.send(
            {
                "type": "http.response.start",
                "status": 500,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", b"%d" % len(body)),
                    (b"connection", b"close"),
                ],
            }
        )
        await self.send({"type": "http.response.body", "body": body})

    def unreserve(self) -> None:
        """Give back to the budget what the body's buffer holds of it."""
        if self.reserved:
            self.proto.body_budget.give(self.reserved)
            self.reserved = 0

    def release(self) -> None:
        """No more bytes come into this body's buffer (the connection is closing, or the
        answer went out first): drop its pieces, and its buffer unless the whole body is in
        it (then the app is about to get it)."""
        self.unreserve()
        self.direct = False
        self.chunks.clear()
        if self.remaining and self.body is not _NO_BODY:
            self.remaining = len(self.body) - self.filled  # still to come from the client
        if self.remaining:
            self.body = _NO_BODY

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self) -> None:
        proto = self.proto
        self.waiter = proto.loop.create_future()
        self.waiting = True
        proto._resume_reading()
        # The body timer only while body bytes are awaited: after the body, receive() waits
        # for the client to go away, which may rightly take as long as the answer does.
        if proto.body_timeout is not None and proto.timer_kind != "body" and not self.delivered:
            proto._disarm()  # the keep-alive timer: the body's own takes over
            proto.timer_kind = "body"
            proto.activity = proto.loop.time()
            proto.timer = proto.loop.call_later(
                proto.body_timeout, proto._expire, proto.body_timeout
            )
        try:
            await self.waiter
        finally:
            self.waiting = False
            self.waiter = None
            if proto.timer_kind == "body":
                proto._disarm()

    async def receive(self) -> dict[str, Any]:
        proto = self.proto
        if self.continue_ and not self.started and not proto.closed:
            proto.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.continue_ = False
        while not proto.closed and not self.complete:
            if self.delivered:
                # ASGI: after the body, receive() waits for the client to go away (or, here,
                # for the answer to be complete).
                await self._wait()
                continue
            remaining = self.remaining
            if remaining is not None and remaining > 0 and not self.pieces:
                if remaining <= proto.max_body_buffer:
                    have = proto.end - proto.start
                    # A body all in the read buffer holds nothing back; one still to come
                    # reserves its buffer, if the budget allows.
                    if have >= remaining or proto.body_budget.take(remaining):
                        self.reserved = remaining if have < remaining else 0
                        return await self._whole_body(remaining)
                self.pieces = True
            self.feed()
            if self.chunks or self.given:
                body = b"".join(self.chunks)
                self.chunks.clear()
                self.delivered = self.given
                return {"type": "http.request", "body": body, "more_body": not self.given}
            await self._wait()
        return {"type": "http.disconnect"}

    async def _whole_body(self, length: int) -> dict[str, Any]:
        proto = self.proto
        # Every byte is written (below and by the event loop) before the app sees the buffer:
        # no zeroing pass first.
        body = self.body = uninitialized_bytearray(length)
        have = min(length, proto.end - proto.start)
        body[:have] = memoryview(proto.buf)[proto.start : proto.start + have]
        proto.start += have
        self.filled = have
        if have < length:
            del body  # only self.body holds it while it fills: release() drops it
            self.direct = True
            while self.direct and not proto.closed:
                await self._wait()
            if self.remaining:  # the connection was lost or timed out before the last byte
                self.release()
                return {"type": "http.disconnect"}
            body = self.body
        self.unreserve()
        self.remaining = 0
        self.given = self.delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    def feed(self) -> None:
        """Take the body's next bytes from the connection's buffer into ``chunks`` (a
        Content-Length body over ``max_body_buffer``, or a chunked one)."""
        if self.given:
            return  # what is left in the buffer is the next request's
        proto = self.proto
        buf = proto.buf
        if self.remaining is not None:
            take = min(self.remaining, proto.end - proto.start)
            if take:
                self.chunks.append(bytes(buf[proto.start : proto.start + take]))
                proto.start += take
                self.remaining -= take
            if self.remaining == 0:
                self.given = True
        else:
            try:
                self._feed_chunked()
            except _BadRequest as exc:
                proto._refuse(exc.status, exc.message)
        if self.given or self.chunks:
            self.wake()

    def _feed_chunked(self) -> None:
        """RFC 9112 7.1: size line (hex, extensions checked and ignored), data, CRLF; a zero
        size, then trailer lines (checked as header lines, ignored) up to an empty line."""
        proto = self.proto
        buf = proto.buf
        while proto.start < proto.end:
            state = self.chunk_state
            if state == "data":
                take = min(self.chunk_left, proto.end - proto.start)
                self.chunks.append(bytes(buf[proto.start : proto.start + take]))
                proto.start += take
                self.chunk_left -= take
                if self.chunk_left == 0:
                    self.chunk_state = "data-end"
                continue
            line_end = buf.find(b"\r\n", proto.start, proto.end)
            if line_end < 0:
                if proto.end - proto.start > _MAX_CHUNK_LINE:
                    raise _BadRequest(400, "a chunk-size or trailer line is too long")
                return
            line = bytes(buf[proto.start : line_end])
            proto.start = line_end + 2
            if state == "data-end":
                if line:
                    raise _BadRequest(400, "chunk data longer than its size")
                self.chunk_state = "size"
            elif state == "size":
                match = _CHUNK_SIZE.fullmatch(line)
                if match is None or len(match.group(1).lstrip(b"0")) > 16:
                    raise _BadRequest(400, "malformed chunk-size line")
                self.chunk_left = int(match.group(1), 16)
                self.chunk_state = "data" if self.chunk_left else "trailer"
            elif line:  # a trailer field: checked as a header line, then ignored
                if _TRAILER_LINE.fullmatch(line) is None:
                    raise _BadRequest(400, "malformed trailer line")
                name, _, value = line.partition(b":")
                name = name.lower()
                if name in (b"content-length", b"transfer-encoding"):
                    raise _BadRequest(400, f"{name.decode()} in the trailer section")
                if name == b"connection" and b"close" in _tokens(value):
                    self.keep_alive = False  # (llhttp honours it there too)
                continue
            else:
                self.chunk_state = ""
                self.remaining = 0
                self.given = True
                return

    # ------------------------------------------------------------------ the answer

    async def send(self, message: dict[str, Any]) -> None:
        proto = self.proto
        if proto.write_paused and not proto.closed:
            proto.drained = proto.loop.create_future()
            await proto.drained
            proto.drained = None
        if proto.closed:
            return
        kind = message["type"]
        if not self.started:
            if kind != "http.response.start":
                raise RuntimeError(f"expected 'http.response.start', got {kind!r}")
            self.started = True
            # continue_ is left as it is: still set, it tells _start_answer that the body was
            # never asked for (receive() sends no 100 Continue once the answer has started).
            self._start_answer(message["status"], message.get("headers", ()))
            return
        if self.complete:
            raise RuntimeError(f"{kind!r} sent after the response was complete")
        if kind != "http.response.body":
            raise RuntimeError(f"expected 'http.response.body', got {kind!r}")
        body = message.get("body", b"")
        more = message.get("more_body", False)
        if self.bodiless:
            body = b""  # HEAD, 1xx, 204, 304: whatever the app sends is not sent on
        elif self.chunked_answer:
            body = (b"%x\r\n" % len(body) + body + b"\r\n" if body else b"") + (
                b"" if more else b"0\r\n\r\n"
            )
        elif self.left_to_send is not None:
            self.left_to_send -= len(body)
            if self.left_to_send < 0:
                raise RuntimeError("response body longer than its Content-Length")
            if not more and self.left_to_send:
                raise RuntimeError("response body shorter than its Content-Length")
        head, self.head_out = self.head_out, None
        if head is None:
            proto.transport.write(body)
        elif len(body) <= _JOIN_ANSWER:
            proto.transport.write(head + body)
        else:
            proto.transport.writelines((head, body))
        if not more:
            self.complete = True
            self.wake()
            proto._cycle_done(self)

    def _start_answer(self, status: int, headers: Any) -> None:
        proto = self.proto
        if proto.access_log:
            access_log.info(
                '%s - "%s %s HTTP/%s" %d',
                "{}:{}".format(*self.scope["client"]) if self.scope["client"] else "-",
                self.scope["method"],
                self.scope["path"],
                self.scope["http_version"],
                status,
            )
        if (self.remaining or self.chunk_state) and not self.given:
            unread = self.remaining if self.remaining is not None else -1
            if unread < 0 or self.continue_:
                self.keep_alive = False  # where the unread body ends is not known
        parts = [_STATUS_LINES[status] if 100 <= status < 600 else _status_line(status)]
        said_close = False
        for name, value in (*proto.server_state.default_headers, *headers):
            if _BAD_NAME.search(name) or _BAD_VALUE.search(value):
                raise RuntimeError(f"invalid response header {name!r}: {value!r}")
            name = name.lower()
            if name == b"content-length":
                self.left_to_send = int(value)
            elif name == b"connection" and b"close" in value.lower():
                self.keep_alive = False
                said_close = True
            elif name == b"transfer-encoding":
                raise RuntimeError("the app may not set Transfer-Encoding")
            parts += (name, b": ", value, b"\r\n")
        self.bodiless = self.scope["method"] == "HEAD" or status in (204, 304) or status < 200
        if self.left_to_send is None and not self.bodiless:
            if self.scope["http_version"] == "1.0":
                self.keep_alive = False  # the body ends with the connection
            else:
                self.chunked_answer = True
                parts.append(b"transfer-encoding: chunked\r\n")
        if not self.keep_alive and not said_close:
            parts.append(b"connection: close\r\n")
        parts.append(b"\r\n")
        self.head_out = b"".join(parts)


def _address(address: Any) -> tuple[str, int] | None:
    if isinstance(address, (tuple, list)) and len(address) >= 2:
        return str(address[0]), int(address[1])
    return None
