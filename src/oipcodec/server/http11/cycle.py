"""One request and its answer on an HTTP/1.1 connection: the ``receive`` and ``send`` of its
ASGI call.

A Content-Length body is received straight into one buffer the app gets whole; a chunked body,
or one over the buffer limit or the body budget, comes in pieces. The cycle and its connection
forget each other when the request ends, so its memory is freed by reference counting.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from oipcodec.kernels import uninitialized_bytearray
from oipcodec.server.http11.grammar import (
    BAD_NAME,
    BAD_VALUE,
    CHUNK_SIZE,
    MAX_CHUNK_LINE,
    STATUS_LINES,
    TRAILER_LINE,
    BadRequest,
    Head,
    status_line,
    tokens,
)

if TYPE_CHECKING:
    from oipcodec.server.http11.protocol import HttpProtocol

__all__ = ["Cycle"]

log = logging.getLogger("oipcodec.server")
access_log = logging.getLogger("uvicorn.access")

#: Response bodies up to this size are joined with their head into one write.
_JOIN_ANSWER = 1 << 14
#: A request's body buffer before it is allocated (never written to).
_NO_BODY = bytearray()


class Cycle:
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

    def __init__(self, proto: HttpProtocol, scope: dict[str, Any], head: Head) -> None:
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
            except BadRequest as exc:
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
                if proto.end - proto.start > MAX_CHUNK_LINE:
                    raise BadRequest(400, "a chunk-size or trailer line is too long")
                return
            line = bytes(buf[proto.start : line_end])
            proto.start = line_end + 2
            if state == "data-end":
                if line:
                    raise BadRequest(400, "chunk data longer than its size")
                self.chunk_state = "size"
            elif state == "size":
                match = CHUNK_SIZE.fullmatch(line)
                if match is None or len(match.group(1).lstrip(b"0")) > 16:
                    raise BadRequest(400, "malformed chunk-size line")
                self.chunk_left = int(match.group(1), 16)
                self.chunk_state = "data" if self.chunk_left else "trailer"
            elif line:  # a trailer field: checked as a header line, then ignored
                if TRAILER_LINE.fullmatch(line) is None:
                    raise BadRequest(400, "malformed trailer line")
                name, _, value = line.partition(b":")
                name = name.lower()
                if name in (b"content-length", b"transfer-encoding"):
                    raise BadRequest(400, f"{name.decode()} in the trailer section")
                if name == b"connection" and b"close" in tokens(value):
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
        parts = [STATUS_LINES[status] if 100 <= status < 600 else status_line(status)]
        said_close = False
        for name, value in (*proto.server_state.default_headers, *headers):
            if BAD_NAME.search(name) or BAD_VALUE.search(value):
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
