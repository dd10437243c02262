"""oipcodec's HTTP/1.1 protocol for uvicorn: a request body is received straight into one buffer.

:class:`HttpProtocol` is an :class:`asyncio.BufferedProtocol` plugged in as
``uvicorn.Config(app, http=HttpProtocol)``; uvicorn still owns the sockets, the lifespan,
signals and graceful shutdown. When the app first asks for a body of ``Content-Length`` bytes
(at most ``max_body_buffer``) the event loop receives the rest into one ``bytearray``, the
kernel's copy being the only one, and the app gets it in one ``http.request`` message (uvicorn's
protocols copy each 64 kB piece five times: docs/measurements.md#http11-transport). Chunked
bodies and larger ones come in pieces, as uvicorn hands them over.

Invariants: framing is decided as llhttp decides it wherever RFC 9112 leaves a choice (no
request smuggling behind an llhttp proxy); a body buffer is dropped as soon as no byte will be
received into it. The rules, per RFC 9112, are listed in docs/serving.md#the-http11-transport.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson

from oipcodec.server.http11.budget import BUDGET_BODIES, BodyBudget
from oipcodec.server.http11.cycle import Cycle
from oipcodec.server.http11.grammar import CRLF, STATUS_LINES, BadRequest, Head

__all__ = ["BODY_TIMEOUT_EXTENSION", "BUFFERS_EXTENSION", "HttpProtocol"]

log = logging.getLogger("oipcodec.server")
access_log = logging.getLogger("uvicorn.access")

#: The ASGI scope extension that says this server times out a stalled request body itself;
#: its value is ``{"seconds": <the timeout>}``.
BODY_TIMEOUT_EXTENSION = "oipcodec.body_timeout"
#: The ASGI scope extension that says this server writes any bytes-like ``http.response.body``
#: (bytes, bytearray, memoryview) as it is, so an app can send views instead of copies.
BUFFERS_EXTENSION = "oipcodec.buffers"

#: First size of a connection's read buffer (heads and pipelined requests land there).
_READ_BUFFER = 1 << 15


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
        self.cycle: Cycle | None = None
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
            while self.start < self.end and self.buf[self.start] in CRLF:
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
                head = Head(head_bytes)
                path, raw_path, query = head.path()
            except BadRequest as exc:
                self._refuse(exc.status, exc.message)
                return
            if self.timer_kind == "head":
                self._disarm()
            # A keep-alive timer is left running through the request (it re-arms itself when
            # it finds one in progress): no timer to cancel and set again per request.
            self._start_cycle(head, path, raw_path, query)

    def _start_cycle(self, head: Head, path: str, raw_path: bytes, query: bytes) -> None:
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
        cycle = self.cycle = Cycle(self, scope, head)
        task = self.loop.create_task(cycle.run(self.app))
        tasks = self.server_state.tasks
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _cycle_done(self, cycle: Cycle) -> None:
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
        # rest of a Content-Length body, dropped as it comes (Cycle._start_answer).
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
            STATUS_LINES[status]
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


def _address(address: Any) -> tuple[str, int] | None:
    if isinstance(address, (tuple, list)) and len(address) >= 2:
        return str(address[0]), int(address[1])
    return None
