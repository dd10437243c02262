"""A sender that is never the limit: HTTP/1.1 load from pre-encoded requests, for measuring a
server rather than a client.

:func:`run` drives ``connections`` keep-alive connections from one thread: the native generator
(C, ``oipcodec.bench._sender``, compiled on POSIX) runs with the GIL released; without it the
pure-Python twin does the same over non-blocking sockets at several times the CPU per request
(docs/measurements.md), so it can be the limit itself (:attr:`SenderResult.implementation`
says which ran). Closed loop (``rate=None``): a connection sends its next request when its answer is
complete. Open loop: request *i* is due *i / rate* seconds after the start and its latency
counts from then, so a server that falls behind shows as latency (no coordinated omission).
Answers are parsed as RFC 9112 says and bounded; a malformed answer, a close mid-answer or a
timeout is counted as an error, never raised. :func:`run_grpc` sends gRPC unary calls over
HTTP/2 (h2c) the same way, ``streams`` calls in flight on each connection: natively on the
vendored nghttp2, or, as its twin, through grpcio's channel. docs/benchmarks.md ("The native
sender") has the details and the cross-checks against wrk and perf_analyzer::

    request = encode_request("POST", "/v2/models/m/infer", body, host="127.0.0.1:8000")
    result = run("127.0.0.1", 8000, request, connections=8, duration=2.0)
    print(result.requests_per_second, result.percentile(99), result.cpu_per_request)
"""

from __future__ import annotations

import errno
import math
import os
import selectors
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["GRPC_INFER", "SenderResult", "encode_request", "native_available", "run", "run_grpc"]

try:
    from oipcodec.bench import _sender as _native
except ImportError:  # not compiled (OIPCODEC_NO_EXTENSIONS, Windows): the Python twin runs
    _native = None  # type: ignore[assignment]

ERROR_KINDS = ("connect", "send", "closed", "malformed", "too_large", "timeout", "status")
#: The ModelInfer method's HTTP/2 path.
GRPC_INFER = "/inference.GRPCInferenceService/ModelInfer"
#: An answer's header may take this many bytes (the C generator's bound too).
MAX_HEADER = 16384
#: A chunk-size or trailer line may take this many bytes.
MAX_LINE = 1024
#: A connection that fails to connect this many times in a row is given up.
CONNECT_TRIES = 3


def native_available() -> bool:
    """Whether the native generator is compiled into this installation."""
    return _native is not None


@dataclass
class SenderResult:
    """What a run measured. Latencies and completion times are per complete answer (any
    status), in seconds; only the first ``capacity`` answers are recorded, all are counted."""

    #: ``"native"`` or ``"python"`` (:func:`run_grpc`'s twin: ``"grpcio"``).
    implementation: str
    #: Requests begun, and complete answers.
    sent: int
    completed: int
    #: Open loop: requests due before the end that no connection was free to send.
    unsent: int
    #: Completion time of each recorded answer, seconds from the start.
    done: np.ndarray[Any, Any]
    #: Latency of each recorded answer, seconds (open loop: from its due time).
    latency: np.ndarray[Any, Any]
    #: Status code of each recorded answer (gRPC: only calls ending with grpc-status 0).
    status: np.ndarray[Any, Any]
    #: Complete answers by status code (gRPC: calls by grpc-status, the non-zero ones errors).
    status_counts: dict[int, int]
    #: Errors by kind: connect, send, closed, malformed, too_large, timeout, status (gRPC: a
    #: call ending with a grpc-status other than 0).
    errors: dict[str, int] = field(default_factory=dict)
    #: The first error's message (which connection, what was expected), or None.
    first_error: str | None = None
    #: Seconds from the start to the last answer.
    elapsed: float = 0.0
    #: CPU seconds the sending thread used (grpcio's twin: the whole process's).
    cpu: float = 0.0
    #: The status of a good answer: 200 (HTTP/1.1) or 0 (gRPC).
    ok_status: int = 200

    @property
    def error_count(self) -> int:
        """All errors, of every kind."""
        return sum(self.errors.values())

    @property
    def requests_per_second(self) -> float:
        """Complete answers per second of the run."""
        return self.completed / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def cpu_per_request(self) -> float:
        """The sender's CPU seconds per complete answer (NaN without answers)."""
        return self.cpu / self.completed if self.completed else float("nan")

    def percentile(self, q: float) -> float:
        """The q-th percentile of the recorded latencies, seconds (NaN without answers)."""
        return float(np.percentile(self.latency, q)) if self.latency.size else float("nan")


def encode_request(
    method: str,
    path: str,
    body: bytes = b"",
    *,
    host: str = "127.0.0.1",
    content_type: str = "application/json",
    headers: Sequence[tuple[str, str]] = (),
) -> bytes:
    """One HTTP/1.1 request as bytes, with ``Content-Length``, ready for :func:`run`."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    if body or method not in ("GET", "HEAD"):
        lines += [f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def run(
    host: str,
    port: int,
    requests: bytes | Sequence[bytes],
    connections: int = 8,
    duration: float | None = None,
    count: int | None = None,
    rate: float | None = None,
    *,
    timeout: float = 10.0,
    max_answer: int = 64 << 20,
    capacity: int = 1_000_000,
    implementation: str = "auto",
) -> SenderResult:
    """Send ``requests`` (one pre-encoded request, or several cycled) over ``connections``
    keep-alive connections to ``host:port`` until ``duration`` seconds passed or ``count``
    requests were sent (whichever comes first; one of them is required), then wait at most
    ``timeout`` for the answers in flight.

    ``rate`` (requests/s) makes it open loop; None is closed loop. ``implementation`` is
    ``"native"``, ``"python"`` or ``"auto"`` (native when compiled). Raises ValueError for bad
    arguments and OSError when the host does not resolve; connection and answer failures are
    counted in the result, not raised."""
    items = _check(requests, connections, duration, count, rate, timeout, max_answer, capacity)
    if implementation not in ("auto", "native", "python"):
        raise ValueError(f"implementation: expected auto, native or python, got {implementation}")
    if implementation == "native" and _native is None:
        raise ValueError("implementation='native': the native sender is not compiled here")
    family, _, _, _, sockaddr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    args = (
        int(family),
        str(sockaddr[0]),
        int(port),
        [bytes(r) for r in items],
        connections,
        duration or 0.0,
        count or 0,
        rate or 0.0,
        timeout,
        max_answer,
        capacity,
    )
    native = _native is not None and implementation != "python"
    raw = _native.run_load(*args) if native else _run_python(*args)
    return _result(raw, "native" if native else "python", 200)


def run_grpc(
    host: str,
    port: int,
    messages: bytes | Sequence[bytes],
    connections: int = 1,
    streams: int = 8,
    duration: float | None = None,
    count: int | None = None,
    rate: float | None = None,
    *,
    method: str = GRPC_INFER,
    timeout: float = 10.0,
    max_answer: int = 64 << 20,
    capacity: int = 1_000_000,
    implementation: str = "auto",
) -> SenderResult:
    """Call ``method`` (unary gRPC over HTTP/2 without TLS) with ``messages`` (serialized
    request messages, e.g. ModelInferRequest bytes; several are cycled), keeping ``streams``
    calls in flight on each of ``connections`` connections, until ``duration`` or ``count``
    as :func:`run`. A call is complete when its trailers say grpc-status 0; another status is
    counted in ``status_counts`` and as a ``status`` error. ``implementation`` is ``"native"``
    (nghttp2, one thread, the GIL released), ``"grpcio"`` (the twin: grpcio's channel, one a
    connection, its CPU the whole process's) or ``"auto"``."""
    items = _check(messages, connections, duration, count, rate, timeout, max_answer, capacity)
    if streams < 1:
        raise ValueError(f"streams: expected 1 or more, got {streams}")
    if not method.startswith("/"):
        raise ValueError(f"method: expected a path such as {GRPC_INFER}, got {method!r}")
    if implementation not in ("auto", "native", "grpcio"):
        raise ValueError(f"implementation: expected auto, native or grpcio, got {implementation}")
    if implementation == "native" and _native is None:
        raise ValueError("implementation='native': the native sender is not compiled here")
    native = _native is not None and implementation != "grpcio"
    bodies = [bytes(m) for m in items]
    if not native:
        from oipcodec.bench._grpc_twin import run_grpcio

        raw = run_grpcio(host, port, bodies, connections, streams, duration or 0.0, count or 0,
                         rate or 0.0, method, timeout, max_answer, capacity)  # fmt: skip
        return _result(raw, "grpcio", 0)
    family, _, _, _, sockaddr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    framed = [b"\x00" + len(m).to_bytes(4, "big") + m for m in bodies]
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    raw = _native.run_load(int(family), str(sockaddr[0]), int(port), framed, connections,
                           duration or 0.0, count or 0, rate or 0.0, timeout, max_answer,
                           capacity, (authority, method, streams))  # fmt: skip
    return _result(raw, "native", 0)


def _check(
    requests: bytes | Sequence[bytes],
    connections: int,
    duration: float | None,
    count: int | None,
    rate: float | None,
    timeout: float,
    max_answer: int,
    capacity: int,
) -> list[bytes]:
    """The arguments :func:`run` and :func:`run_grpc` share, checked; the requests as a list."""
    items = [requests] if isinstance(requests, bytes | bytearray) else list(requests)
    if not items or not all(isinstance(r, bytes | bytearray) and r for r in items):
        raise ValueError("requests: expected one non-empty bytes request or a list of them")
    if connections < 1:
        raise ValueError(f"connections: expected 1 or more, got {connections}")
    if duration is None and count is None:
        raise ValueError("expected a duration or a count (the run must end by itself)")
    if duration is not None and not duration > 0:
        raise ValueError(f"duration: expected a positive number of seconds, got {duration}")
    if count is not None and count < 1:
        raise ValueError(f"count: expected 1 or more, got {count}")
    if rate is not None and not rate > 0:
        raise ValueError(f"rate: expected a positive number of requests/s, got {rate}")
    if not timeout > 0 or max_answer < 0 or capacity < 1:
        raise ValueError("timeout, max_answer and capacity: expected positive values")
    return [bytes(r) for r in items]


def _result(raw: dict[str, Any], implementation: str, ok_status: int) -> SenderResult:
    if raw["setup_failed"]:
        raise ValueError(raw["first_error"])
    return SenderResult(
        implementation=implementation,
        sent=int(raw["sent"]),
        completed=int(raw["completed"]),
        unsent=int(raw["unsent"]),
        done=raw["done_ns"] / 1e9,
        latency=raw["latency_ns"] / 1e9,
        status=raw["status"],
        status_counts={int(k): int(v) for k, v in raw["status_counts"].items()},
        errors={str(k): int(v) for k, v in raw["errors"].items()},
        first_error=raw["first_error"] or None,
        elapsed=float(raw["elapsed"]),
        cpu=float(raw["cpu"]),
        ok_status=ok_status,
    )


class _AnswerError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Answer:
    """The streaming parser of one answer: the Python twin of oip_feed in
    csrc/oipcodec/load/sender.h, with the same bounds and error kinds."""

    def __init__(self, max_answer: int) -> None:
        self.max_answer = max_answer
        self.phase = "header"
        self.line = bytearray()
        self.remaining = 0
        self.body = 0
        self.received = 0
        self.status = 0
        self.chunked = False
        self.close_after = False

    def feed(self, data: bytes) -> int | None:
        """Consume bytes; the count used once the answer is complete, else None."""
        i, n = 0, len(data)
        while i < n:
            if self.phase in ("body", "chunk_data"):
                take = min(n - i, self.remaining)
                i += take
                self.remaining -= take
                if self.remaining == 0:
                    if self.phase == "body":
                        return self._done(i)
                    self.phase = "chunk_crlf"
                continue
            if self.phase == "header":
                start = max(0, len(self.line) - 3)  # the empty line may straddle two reads
                kept = len(self.line)
                self.line += data[i:]
                end = self.line.find(b"\r\n\r\n", start)
                if (end + 4 if end >= 0 else len(self.line)) > MAX_HEADER:
                    raise _AnswerError(
                        "too_large", f"answer header past {MAX_HEADER} bytes without an empty line"
                    )
                if end < 0:
                    i = n
                    continue
                i += end + 4 - kept
                del self.line[end + 4 :]
                if end >= 0:
                    self._header(bytes(self.line))
                    self.line.clear()
                    if self.status < 200:
                        continue
                    if self.chunked:
                        self.phase = "chunk_size"
                    elif self.remaining:
                        self.phase = "body"
                    else:
                        return self._done(i)
                continue
            end = data.find(b"\n", i)
            stop = n if end < 0 else end + 1
            if len(self.line) + stop - i > MAX_LINE:
                raise _AnswerError("too_large", f"chunked answer: a line past {MAX_LINE} bytes")
            self.line += data[i:stop]
            i = stop
            if end < 0:
                continue
            if not self.line.endswith(b"\r\n"):
                raise _AnswerError("malformed", "chunked answer: expected CRLF, got a bare LF")
            text = bytes(self.line[:-2])
            self.line.clear()
            if self.phase == "chunk_crlf":
                if text:
                    raise _AnswerError(
                        "malformed", "chunked answer: expected CRLF after the chunk's data"
                    )
                self.phase = "chunk_size"
            elif self.phase == "trailer":
                if not text:
                    return self._done(i)
            else:
                digits = text.split(b";", 1)[0].strip(b" \t")
                if not digits:
                    raise _AnswerError(
                        "malformed", "chunked answer: expected a chunk size, got an empty line"
                    )
                if any(c not in b"0123456789abcdefABCDEF" for c in digits):
                    raise _AnswerError(
                        "malformed",
                        f"chunked answer: expected a hexadecimal chunk size, got {digits[:20]!r}",
                    )
                size = int(digits, 16)
                if size > self.max_answer - self.body:
                    raise _AnswerError(
                        "too_large", f"chunked answer past the bound of {self.max_answer} bytes"
                    )
                self.body += size
                self.remaining = size
                self.phase = "chunk_data" if size else "trailer"
        self.received += n
        return None

    def _done(self, used: int) -> int:
        self.received += used
        return used

    def _header(self, head: bytes) -> None:
        status_line, _, rest = head.partition(b"\r\n")
        if len(head) < 17 or not status_line.startswith((b"HTTP/1.0 ", b"HTTP/1.1 ")):
            raise _AnswerError(
                "malformed",
                f"answer byte 0: expected a status line 'HTTP/1.x NNN', got {status_line[:12]!r}",
            )
        for i in range(9, 12):
            if not 48 <= status_line[i] <= 57:
                raise _AnswerError(
                    "malformed",
                    f"answer byte {i}: expected a digit of the status code, got "
                    f"0x{status_line[i]:02x}",
                )
        if not 100 <= int(status_line[9:12]) <= 599 or status_line[12:13] not in (b" ", b""):
            raise _AnswerError(
                "malformed",
                f"answer byte 9: expected a status code 100-599 and a space, got "
                f"{status_line[9:13]!r}",
            )
        status = self.status = int(status_line[9:12])
        self.chunked = False
        self.close_after = status_line.startswith(b"HTTP/1.0")
        length: int | None = None
        at = len(status_line) + 2  # each line's offset in the answer, for the messages
        for line in rest[:-4].split(b"\r\n") if rest[:-4] else []:
            where, at = at, at + len(line) + 2
            name, colon, value = line.partition(b":")
            if not colon or not name or b"\n" in line:
                raise _AnswerError(
                    "malformed",
                    f"answer byte {where}: expected a header 'name: value', got {line[:40]!r}",
                )
            key, value = name.lower(), value.strip(b" \t")
            if key == b"content-length":
                if not value.isdigit() or len(value) > 19:
                    raise _AnswerError(
                        "malformed",
                        f"answer byte {where}: expected 1 to 19 digits of Content-Length, got "
                        f"{value[:20]!r}",
                    )
                if length is not None and int(value) != length:
                    raise _AnswerError(
                        "malformed",
                        f"answer byte {where}: a second Content-Length differs from the first",
                    )
                length = int(value)
            elif key == b"transfer-encoding":
                if value.lower() != b"chunked":
                    raise _AnswerError(
                        "malformed",
                        f"answer byte {where}: expected Transfer-Encoding 'chunked', got "
                        f"{value[:40]!r}",
                    )
                self.chunked = True
            elif key == b"connection":
                self.close_after = {b"close": True, b"keep-alive": False}.get(
                    value.lower(), self.close_after
                )
        if length is not None and self.chunked:
            raise _AnswerError(
                "malformed", "answer has both Content-Length and Transfer-Encoding (RFC 9112 6.3)"
            )
        bodiless = status < 200 or status in (204, 304)
        if not bodiless and length is None and not self.chunked:
            raise _AnswerError(
                "malformed",
                f"status {status} answer has neither Content-Length nor chunked coding: its end "
                "is the connection's close, which a keep-alive sender cannot use",
            )
        if length is not None and length > self.max_answer:
            raise _AnswerError(
                "too_large", f"Content-Length {length} is past the bound of {self.max_answer} bytes"
            )
        self.remaining = 0 if bodiless else (length or 0)


class _Conn:
    def __init__(self, index: int) -> None:
        self.index = index
        self.sock: socket.socket | None = None
        self.tries = 0
        self.connecting = False
        self.busy = False
        self.out = memoryview(b"")
        self.start = 0
        self.answer: _Answer | None = None
        self.dead = False


def _run_python(
    family: int,
    address: str,
    port: int,
    requests: list[bytes],
    connections: int,
    duration: float,
    count: int,
    rate: float,
    timeout: float,
    max_answer: int,
    capacity: int,
) -> dict[str, Any]:
    """The pure-Python twin of oip_sender_run_load: the same loop over selectors."""
    raw: dict[str, Any] = {"setup_failed": False, "first_error": "", "sent": 0, "completed": 0}
    errors: dict[str, int] = {}
    status_counts: dict[int, int] = {}
    done: list[int] = []
    latency: list[int] = []
    statuses: list[int] = []
    selector = selectors.DefaultSelector()

    def fail(conn: int, kind: str, message: str) -> None:
        errors[kind] = errors.get(kind, 0) + 1
        if not raw["first_error"]:
            raw["first_error"] = f"connection {conn}: {message}"

    def close(c: _Conn) -> None:
        if c.sock is not None:
            selector.unregister(c.sock)
            c.sock.close()
        c.sock, c.busy, c.connecting, c.answer = None, False, False, None

    def connect(c: _Conn) -> None:
        close(c)
        if c.tries >= CONNECT_TRIES:
            c.dead = True
            return
        c.tries += 1
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        code = sock.connect_ex((address, port))
        if code not in (0, *_IN_PROGRESS):
            sock.close()
            fail(c.index, "connect", f"connect to {address} port {port}: {os.strerror(code)}")
            c.dead = c.tries >= CONNECT_TRIES
            return
        c.sock, c.connecting = sock, code != 0
        if not c.connecting:
            c.tries = 0
        selector.register(sock, selectors.EVENT_WRITE if c.connecting else selectors.EVENT_READ, c)

    cpu0 = time.thread_time()
    origin = time.monotonic_ns()
    timeout_ns = int(timeout * 1e9)
    end_ns = origin + int(duration * 1e9) if duration > 0 else None
    interval_ns = 1e9 / rate if rate > 0 else 0.0
    sent = 0
    last = origin
    conns = [_Conn(i) for i in range(connections)]
    for c in conns:
        connect(c)
    while True:
        now = time.monotonic_ns()
        issuing = (end_ns is None or now < end_ns) and (not count or sent < count)
        alive = busy = 0
        for c in conns:
            if c.dead:
                continue
            if c.busy and now - c.start > timeout_ns:
                fail(c.index, "timeout", f"no complete answer within {timeout:.3f} s")
                connect(c)
                if c.dead:
                    continue
            alive += 1
            if c.sock is not None and not c.connecting and not c.busy and issuing:
                due = origin + int(sent * interval_ns) if rate > 0 else now
                if due <= now and (rate <= 0 or end_ns is None or due < end_ns):
                    c.out = memoryview(requests[sent % len(requests)])
                    c.start, c.busy, c.answer = due, True, _Answer(max_answer)
                    sent += 1
                    issuing = (end_ns is None or now < end_ns) and (not count or sent < count)
            if c.busy and c.out and c.sock is not None:
                try:
                    c.out = c.out[c.sock.send(c.out) :]
                except BlockingIOError:
                    pass
                except OSError as exc:
                    fail(c.index, "send", f"send: {exc.strerror}")
                    connect(c)
                if c.sock is not None:
                    selector.modify(
                        c.sock, selectors.EVENT_WRITE if c.out else selectors.EVENT_READ, c
                    )
            busy += c.busy
        if alive == 0 or (not issuing and busy == 0):
            break
        if not issuing and end_ns is not None and now > end_ns + timeout_ns:
            break
        wake = now + 100_000_000
        if issuing and rate > 0:
            wake = min(wake, origin + int(sent * interval_ns))
        if issuing and end_ns is not None:
            wake = min(wake, end_ns)
        for key, _ in selector.select(max(0, wake - now) / 1e9):
            c = key.data
            if c.sock is None:
                continue
            if c.connecting:
                code = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    fail(
                        c.index, "connect", f"connect to {address} port {port}: {os.strerror(code)}"
                    )
                    connect(c)
                else:
                    c.connecting, c.tries = False, 0
                    selector.modify(c.sock, selectors.EVENT_READ, c)
                continue
            if c.busy and c.out:
                continue
            try:
                data = c.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError as exc:
                data, reason = b"", exc.strerror
            else:
                reason = "end of stream"
            if not data:
                if c.busy and c.answer is not None:
                    fail(
                        c.index,
                        "closed",
                        f"the server closed the connection after {c.answer.received} bytes "
                        f"of the answer ({reason})",
                    )
                connect(c)
                continue
            if not c.busy or c.answer is None:
                fail(
                    c.index,
                    "malformed",
                    f"{len(data)} bytes arrived with no request awaiting an answer",
                )
                connect(c)
                continue
            try:
                used = c.answer.feed(data)
            except _AnswerError as exc:
                fail(c.index, exc.kind, str(exc))
                connect(c)
                continue
            if used is None:
                continue
            t = last = time.monotonic_ns()
            answer = c.answer
            raw["completed"] += 1
            status_counts[answer.status] = status_counts.get(answer.status, 0) + 1
            if len(done) < capacity:
                done.append(t - origin)
                latency.append(t - c.start)
                statuses.append(answer.status)
            c.busy, c.tries, c.answer = False, 0, None
            if used != len(data):
                fail(c.index, "malformed", f"{len(data) - used} bytes past the end of the answer")
                connect(c)
            elif answer.close_after:
                connect(c)
    stop = time.monotonic_ns()
    unsent = 0
    if rate > 0 and end_ns is not None:
        due_total = math.ceil((end_ns - origin) / interval_ns)
        unsent = max(0, (min(due_total, count) if count else due_total) - sent)
    for c in conns:
        if c.busy:
            fail(c.index, "timeout", "no complete answer by the end of the run")
        close(c)
    selector.close()
    raw.update(
        sent=sent,
        unsent=unsent,
        done_ns=np.array(done, dtype=np.int64),
        latency_ns=np.array(latency, dtype=np.int64),
        status=np.array(statuses, dtype=np.uint16),
        status_counts=status_counts,
        errors=errors,
        elapsed=((last if last > origin else stop) - origin) / 1e9,
        cpu=time.thread_time() - cpu0,
    )
    return raw


_IN_PROGRESS = (errno.EINPROGRESS, errno.EWOULDBLOCK, 10035)  # 10035: Windows' WSAEWOULDBLOCK
