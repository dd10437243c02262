"""Keep-alive HTTP/1.1 connections to one server, shared by threads: :class:`HttpClient`'s
transport, on the standard library's sockets.

Decision: neither urllib3 nor ``http.client``, whose per-request Python work (held under the
GIL) made the client process's CPU per request the bottleneck with threads sharing a client
(docs/measurements.md#http-clients). A request is one ``sendall`` of head and body (two for
large bodies, not copied); an answer is read from one buffered reader per connection.

Invariants: a call has one deadline, ``timeout`` seconds from its start, shared by every wait
(a free connection, connect, each send and receive), so a trickling server cannot hold it
longer. A connection is reused only when its answer ended exactly where its framing says; a
request that failed on a reused connection before any byte of its answer arrived is sent once
more on a new connection (as urllib3 does), never after.
"""

from __future__ import annotations

import io
import re
import select
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from typing import Any

from oipcodec.errors import LimitError, RequestTimeoutError, ServerConnectionError
from oipcodec.limits import DEFAULT_LIMITS

__all__ = ["ConnectionPool", "Headers", "answer_too_large", "connect_message"]

#: Request bodies up to this size go out in one send with the head (a copy of the body).
_JOIN_BODY = 1 << 16
#: Bounds on an answer's head: the status line and each header line, and the header count.
_MAX_LINE = 1 << 16
_MAX_HEADERS = 200
#: Bounds on one answer head in bytes, and on the interim (1xx) answers before the final one.
_MAX_HEAD = 1 << 18
_MAX_INTERIM = 32
#: How far (seconds) a wait may end from the call's deadline, either side.
_SLACK = 0.002
#: A chunk size line (RFC 9112 7.1): hex digits only (no sign, prefix, underscore or space;
#: at most 16 of them), then optional extensions after ";" (whitespace allowed before it),
#: then the line end.
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})(?:[ \t]*;[^\x00-\x08\x0a-\x1f\x7f]*)?\r?\n")


def _left(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (a ``time.monotonic()`` time; None: no deadline);
    TimeoutError when it has passed."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the call's deadline has passed")
    return left


def connect_message(where: str, exc: BaseException) -> str:
    """The message of a failed connection: where to, and the system's reason."""
    reason = getattr(exc, "reason", None) or exc
    return f"cannot connect to {where}: {type(reason).__name__}: {reason}"


def answer_too_large(method: str, where: str, size: str, limit: int) -> LimitError:
    """The error for an answer whose body (``size``: its byte count, or "more than N") is over
    the client's ``Limits.max_body_bytes``."""
    return LimitError(
        f"{method} {where}: the answer's body of {size} bytes is over the client's limit "
        f"of {limit} bytes (Limits.max_body_bytes)"
    )


class Headers(dict[str, str]):
    """An answer's headers: names in lower case; ``get`` takes any case."""

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


class _BadAnswer(Exception):
    """The server's answer is not HTTP/1.1 as this client reads it."""


class _TooLarge(Exception):
    """The answer's body is larger than the client's limit (no more of it is read)."""


class _Receiver(io.RawIOBase):
    """The socket as the buffered reader's raw stream: each receive waits only until the
    call's ``deadline`` (TimeoutError after it); counts the bytes received."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self.sock = sock
        self.deadline: float | None = None
        self.received = 0
        self.timeout = sock.gettimeout()

    def until(self, deadline: float | None) -> None:
        """Make the socket's next wait end by ``deadline`` (within _SLACK): its timeout is
        changed only when it is further than that from what is left (each change is a
        system call, and most calls of a client with one timeout need none)."""
        if deadline is None:
            if self.timeout is not None:
                self.sock.settimeout(None)
                self.timeout = None
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the call's deadline has passed")
        if self.timeout is None or abs(self.timeout - left) > _SLACK:
            self.sock.settimeout(left)
            self.timeout = left

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        deadline = self.deadline
        while True:
            if deadline is not None:
                self.until(deadline)
            try:
                count = self.sock.recv_into(buffer)
            except TimeoutError:
                if deadline is None or deadline <= time.monotonic():
                    raise
                continue  # the socket's timeout ended a little before the deadline
            self.received += count
            return count

    def tell(self) -> int:
        return self.received


class _Connection:
    """One HTTP/1.1 connection: a socket (TLS-wrapped for https) and a buffered reader."""

    def __init__(
        self, host: str, port: int, deadline: float | None, context: ssl.SSLContext | None
    ) -> None:
        sock = socket.create_connection((host, port), _left(deadline))
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if context is not None:
                sock.settimeout(_left(deadline))
                sock = context.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self.receiver = _Receiver(sock)
        self.reader = io.BufferedReader(self.receiver, _JOIN_BODY)
        #: Bytes received when the current request was sent (more: its answer has begun).
        self.sent_at = 0

    def answered(self) -> bool:
        """Whether any byte of the current request's answer has arrived."""
        return self.receiver.received > self.sent_at

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def exchange(
        self, head: bytes, body: bytes | None, method: str, limit: int, deadline: float | None
    ) -> tuple[int, bytes, Headers, bool]:
        """Send a request, read its answer by ``deadline``: (status, body, headers, whether
        the connection can carry another request). A body over ``limit`` bytes is refused
        (_TooLarge) as soon as that is known, before memory is taken for it."""
        sock = self.sock
        receiver = self.receiver
        self.sent_at = receiver.received
        receiver.deadline = deadline
        receiver.until(deadline)
        if body is None:
            sock.sendall(head)
        elif len(body) <= _JOIN_BODY:
            sock.sendall(head + body)
        else:
            sock.sendall(head)
            receiver.until(deadline)
            sock.sendall(body)
        reader = self.reader
        interim = 0
        while True:
            version, status = _status_line(reader.readline(_MAX_LINE + 1))
            headers = _header_lines(reader)
            if not 100 <= status < 200:
                break  # 1xx: an interim answer (100 Continue...); the real one follows
            interim += 1
            if interim >= _MAX_INTERIM:
                raise _BadAnswer(f"{interim} interim (1xx) answers and no final one")
        connection = headers.get("connection", "").lower()
        keep = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
        if method == "HEAD" or status in (204, 304):
            return status, b"", headers, keep and self._drained()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            data = _chunked(reader, limit)
            return status, data, headers, keep and self._drained()
        length = headers.get("content-length")
        if length is None:  # the body ends with the connection
            data = reader.read(limit + 1)
            if len(data) > limit:
                raise _TooLarge(f"more than {limit}")
            return status, data, headers, False
        try:
            size = int(length)
        except ValueError:
            raise _BadAnswer(f"Content-Length {length!r} is not a number") from None
        if size > limit:
            raise _TooLarge(str(size))
        data = reader.read(size) if size > 0 else b""
        if len(data) != size:
            raise _BadAnswer(f"the answer ended after {len(data)} of its {size} body bytes")
        return status, data, headers, keep and self._drained()

    def _drained(self) -> bool:
        """Whether every byte received so far belonged to the answers read (none left over
        in the reader's buffer, which would be taken for the next request's answer)."""
        return self.reader.tell() == self.receiver.received


def _status_line(line: bytes) -> tuple[str, int]:
    if not line:
        raise _BadAnswer("the server closed the connection without answering")
    if len(line) > _MAX_LINE:
        raise _BadAnswer("the status line is too long")
    parts = line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise _BadAnswer(f"not an HTTP/1.x status line: {line[:80]!r}")
    return parts[0].decode("latin-1"), int(parts[1])


def _header_lines(reader: Any) -> Headers:
    headers = Headers()
    size = 0
    for _ in range(_MAX_HEADERS + 1):
        line = reader.readline(_MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):
            return headers
        if not line:
            raise _BadAnswer("the connection ended inside the answer's headers")
        if len(line) > _MAX_LINE:
            raise _BadAnswer("a header line is too long")
        size += len(line)
        if size > _MAX_HEAD:
            raise _BadAnswer(f"the answer's head is over {_MAX_HEAD} bytes")
        name, colon, value = line.partition(b":")
        if not colon:
            raise _BadAnswer(f"not a header line: {line[:80]!r}")
        key = name.strip().lower().decode("latin-1")
        text = value.strip().decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    raise _BadAnswer(f"more than {_MAX_HEADERS} header lines")


def _chunked(reader: Any, limit: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = reader.readline(_MAX_LINE + 1)
        match = _CHUNK_SIZE.fullmatch(line)
        if match is None:
            if not line:
                raise _BadAnswer("the answer ended before its last chunk")
            raise _BadAnswer(f"not a chunk size line (hex digits): {line[:80]!r}")
        size = int(match[1], 16)
        if size == 0:
            _header_lines(reader)  # trailers, up to the blank line
            return b"".join(parts)
        total += size
        if total > limit:
            raise _TooLarge(f"more than {limit}")
        chunk = reader.read(size)
        if len(chunk) != size or reader.read(2) != b"\r\n":
            raise _BadAnswer("the answer ended inside a chunk")
        parts.append(chunk)


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether an idle keep-alive connection can no longer be used: readable while no request
    is out means the server closed it (EOF) or sent something unasked for."""
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _check_header(name: str, value: str) -> None:
    """Header names and values cannot carry a line break (it would start another header or
    end the head: request smuggling)."""
    if any(c in name for c in "\r\n:") or "\r" in value or "\n" in value:
        raise ValueError(f"invalid HTTP header {name!r}: {value!r}")


class ConnectionPool:
    """Up to ``size`` keep-alive connections to ``scheme://host:port``; a caller beyond that
    waits for one (within its timeout). ``request`` is thread-safe. For https, ``ssl_context``
    (default: the system's trusted certificates, host names checked). An answer whose body is
    over ``max_body_bytes`` is refused with :class:`LimitError` before it is read.

    Idle connections sit on a list and a count of those in use beside it, both under one lock
    (its condition is waited on only when every connection is taken); an idle connection is
    checked for a close by the server before it is reused; sockets get TCP_NODELAY."""

    def __init__(
        self,
        scheme: str,
        host: str,
        port: int | None,
        size: int,
        ssl_context: ssl.SSLContext | None = None,
        max_body_bytes: int = DEFAULT_LIMITS.max_body_bytes,
    ) -> None:
        if size < 1:
            raise ValueError(f"pool_size must be >= 1, got {size}")
        tls = scheme == "https"
        self._host = host
        self._port = port or (443 if tls else 80)
        default_port = self._port == (443 if tls else 80)
        name = f"[{host}]" if ":" in host else host
        self._host_header = name if default_port else f"{name}:{self._port}"
        self._size = size
        self._max_body = max_body_bytes
        self._context = (ssl_context or ssl.create_default_context()) if tls else None
        self._idle: list[_Connection] = []
        self._in_use = 0
        self._waiting = 0
        self._lock = threading.Lock()
        self._free = threading.Condition(self._lock)
        self._closed = False

    def _take(
        self, deadline: float | None, timeout: float | None, what: str, where: str
    ) -> tuple[_Connection, bool]:
        """A connection to use, counted in use: ``(connection, whether it was idle, kept
        alive from an earlier request)``."""
        with self._lock:
            if self._in_use >= self._size and not self._closed:
                self._waiting += 1
                try:
                    left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                    if not self._free.wait_for(
                        lambda: self._in_use < self._size or self._closed, left
                    ):
                        raise RequestTimeoutError(
                            f"{what} {where}: no free connection within {timeout} s", url=where
                        )
                finally:
                    self._waiting -= 1
            if self._closed:
                raise ServerConnectionError(f"{what} {where}: the client is closed", url=where)
            self._in_use += 1
            conn = self._idle.pop() if self._idle else None
        if conn is not None:
            if not _closed_by_peer(conn.sock):
                return conn, True
            conn.close()
        try:
            return self._connect(deadline, timeout, what, where), False
        except BaseException:
            self._give(None, False)
            raise

    def _connect(
        self, deadline: float | None, timeout: float | None, what: str, where: str
    ) -> _Connection:
        """A new connection (not counted: the caller holds a place in the pool for it)."""
        try:
            return _Connection(self._host, self._port, deadline, self._context)
        except TimeoutError:
            raise RequestTimeoutError(
                f"{what} {where}: could not connect within {timeout} s", url=where
            ) from None
        except OSError as exc:
            raise ServerConnectionError(connect_message(where, exc), url=where) from None

    def _give(self, conn: _Connection | None, reusable: bool) -> None:
        with self._lock:
            self._in_use -= 1
            if conn is not None and reusable and not self._closed:
                self._idle.append(conn)
                conn = None
            if self._waiting:
                self._free.notify()
        if conn is not None:
            conn.close()

    def request(
        self,
        method: str,
        target: str,
        body: bytes | None,
        headers: Mapping[str, str],
        timeout: float | None,
        where: str,
    ) -> tuple[int, bytes, Headers]:
        """Send one request and read the whole answer: ``(status, body, headers)``.
        ``target`` is the path (and query) as sent; ``timeout`` bounds the whole call: the
        wait for a free connection, the connect, the sends and the whole answer (None: no
        bound); ``where`` names the URL in errors. No redirect is followed, nothing is
        decompressed. A request that fails on a reused connection before any byte of its
        answer arrived is sent once more, on a new connection."""
        if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in target):
            raise ValueError(f"invalid request target {target!r}: it holds spaces or controls")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._host_header}"]
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {0 if body is None else len(body)}")
        for name, value in headers.items():
            _check_header(name, value)
            lines.append(f"{name}: {value}")
        if not any(name.lower() == "accept-encoding" for name in headers):
            lines.append("Accept-Encoding: identity")  # as http.client: no compressed answers
        lines += ["", ""]
        head = "\r\n".join(lines).encode("latin-1")
        deadline = None if timeout is None else time.monotonic() + timeout
        conn: _Connection | None
        conn, reused = self._take(deadline, timeout, method, where)
        reusable = False
        try:
            try:
                status, data, answer, reusable = conn.exchange(
                    head, body, method, self._max_body, deadline
                )
                return status, data, answer
            except (_BadAnswer, OSError) as exc:
                if not reused or isinstance(exc, TimeoutError) or conn.answered():
                    raise
            # The kept-alive connection was closed by the server (after its last answer)
            # before this request reached it or was answered: once more, on a new connection.
            conn.close()
            conn = None
            conn = self._connect(deadline, timeout, method, where)
            status, data, answer, reusable = conn.exchange(
                head, body, method, self._max_body, deadline
            )
            return status, data, answer
        except (RequestTimeoutError, ServerConnectionError):
            raise  # the retry's own connect failed: already said (and a Timeout/OSError)
        except _TooLarge as exc:
            raise answer_too_large(method, where, str(exc), self._max_body) from None
        except TimeoutError:
            raise RequestTimeoutError(
                f"{method} {where}: no answer within {timeout} s", url=where
            ) from None
        except _BadAnswer as exc:
            raise ServerConnectionError(f"{method} {where}: {exc}", url=where) from None
        except OSError as exc:
            raise ServerConnectionError(
                f"{method} {where}: {type(exc).__name__}: {exc}", url=where
            ) from None
        finally:
            self._give(conn, reusable)

    def close(self) -> None:
        """Close the idle connections; those in use are closed when their call ends, and
        callers waiting for one are told the client is closed."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._free.notify_all()
        for conn in idle:
            conn.close()
