"""Keep-alive HTTP/1.1 connections to one server, shared by threads: :class:`HttpClient`'s
transport, on the standard library's ``http.client``.

Why not urllib3 (what :class:`HttpClient` used first): with 8 threads sharing one client, the
load of ``benchmarks/client_overhead.py --threads 8`` (small binary requests to the embedded
server, both on the 2-core development machine) cost the client process 531-616 us of CPU per
request through urllib3's pool, 198-207 us through tritonclient (one client per thread), and
94-99 us through bare ``http.client`` connections, one per thread. urllib3's layers (its pool's
queue and conditions, retries, header containers, timeouts objects) are per-request Python work
that every thread holds the GIL for. This pool is what it needs to be for that and no more:
idle connections on a list under a lock, a semaphore bounding how many are in use, a check that
an idle connection was not closed by the server before it is reused, TCP_NODELAY (a request is
written in two sends, its head and its body), and a deadline for the whole call.
"""

from __future__ import annotations

import http.client
import select
import socket
import ssl
import threading
from collections.abc import Mapping
from typing import Any

from oipcodec.client.errors import RequestTimeoutError, ServerConnectionError

__all__ = ["ConnectionPool", "connect_message"]


def connect_message(where: str, exc: BaseException) -> str:
    """The message of a failed connection: where to, and the system's reason."""
    reason = getattr(exc, "reason", None) or exc
    return f"cannot connect to {where}: {type(reason).__name__}: {reason}"


class _Connection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _TLSConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _closed_by_peer(sock: socket.socket | None) -> bool:
    """Whether an idle keep-alive connection can no longer be used: readable while no request
    is out means the server closed it (EOF) or sent something unasked for."""
    if sock is None:
        return True
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


class ConnectionPool:
    """Up to ``size`` keep-alive connections to ``scheme://host:port``; a caller beyond that
    waits for one (within its timeout). ``request`` is thread-safe. For https, ``ssl_context``
    (default: the system's trusted certificates, host names checked).

    One lock guards the idle list and the count in use; the condition on it is waited on only
    when every connection is in use (a Python-level semaphore cost each request several lock
    operations, and futex waits between 8 threads)."""

    def __init__(
        self,
        scheme: str,
        host: str,
        port: int | None,
        size: int,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"pool_size must be >= 1, got {size}")
        self._tls = scheme == "https"
        self._host = host
        self._port = port
        self._size = size
        if self._tls and ssl_context is None:
            ssl_context = ssl.create_default_context()
        self._context = ssl_context
        self._idle: list[http.client.HTTPConnection] = []
        self._in_use = 0
        self._waiting = 0
        self._lock = threading.Lock()
        self._free = threading.Condition(self._lock)
        self._closed = False

    def _take(self, timeout: float | None, what: str, where: str) -> http.client.HTTPConnection:
        """A connection to use (idle, or new and connected); counts it in use."""
        with self._lock:
            if self._in_use >= self._size and not self._closed:
                self._waiting += 1
                try:
                    if not self._free.wait_for(
                        lambda: self._in_use < self._size or self._closed, timeout
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
        if conn is not None and not _closed_by_peer(conn.sock):
            conn.sock.settimeout(timeout)
            return conn
        try:
            if conn is not None:
                conn.close()
            conn = self._tls_connection() if self._tls else _Connection(self._host, self._port)
            conn.timeout = timeout
            conn.connect()
            return conn
        except BaseException as exc:
            self._give(None, False)
            if isinstance(exc, TimeoutError):
                raise RequestTimeoutError(
                    f"{what} {where}: could not connect within {timeout} s", url=where
                ) from None
            if isinstance(exc, OSError):
                raise ServerConnectionError(connect_message(where, exc), url=where) from None
            raise

    def _tls_connection(self) -> http.client.HTTPConnection:
        return _TLSConnection(self._host, self._port, context=self._context)

    def _give(self, conn: http.client.HTTPConnection | None, reusable: bool) -> None:
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
    ) -> tuple[int, bytes, Any]:
        """Send one request and read the whole answer: ``(status, body, headers)``, the
        headers an ``http.client.HTTPMessage`` (``get`` ignores case). ``timeout`` bounds
        the wait for a free connection, the connect, and then each send and each wait for
        the answer's bytes; ``where`` names the URL in errors."""
        conn = self._take(timeout, method, where)
        reusable = False
        try:
            conn.request(method, target, body=body, headers=dict(headers))
            response = conn.getresponse()
            data = response.read()
            reusable = not response.will_close
            return response.status, data, response.headers
        except TimeoutError:
            raise RequestTimeoutError(
                f"{method} {where}: no answer within {timeout} s", url=where
            ) from None
        except (OSError, http.client.HTTPException) as exc:
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
