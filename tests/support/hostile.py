"""A hostile (or broken) HTTP server for the client tests: a raw TCP listener on 127.0.0.1
that runs a test's script on each connection it accepts, each in a thread of its own, so a
test sends exactly the bytes it wants, when it wants (a second answer nobody asked for, a
head trickled a line at a time, a close right after an error answer).

Everything is bounded: sockets time out after ``timeout`` seconds, a script is expected to
stop by itself within a few seconds, and ``close`` waits for the threads at most that long.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterable
from types import TracebackType

#: ``script(connection, index)``: what the server does on its ``index``-th connection (0-based).
Script = Callable[[socket.socket, int], None]


def read_request(conn: socket.socket, pending: bytearray | None = None) -> bytes:
    """The next request's head (its body, by Content-Length, is read and dropped); b"" when
    the client closed the connection first. ``pending`` carries bytes read past a request to
    the next call (for pipelined requests)."""
    buffer = pending if pending is not None else bytearray()
    while b"\r\n\r\n" not in buffer:
        data = conn.recv(1 << 16)
        if not data:
            return b""
        buffer += data
    end = buffer.index(b"\r\n\r\n") + 4
    head = bytes(buffer[:end])
    del buffer[:end]
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(buffer) < length:
        data = conn.recv(1 << 16)
        if not data:
            return b""
        buffer += data
    del buffer[:length]
    return head


def target(head: bytes) -> str:
    """The request target of a request head."""
    return head.split(b" ", 2)[1].decode("latin-1")


def json_answer(document: bytes, status: str = "200 OK", extra: bytes = b"") -> bytes:
    """A complete HTTP/1.1 answer with a JSON body (kept alive: no Connection header)."""
    return (
        b"HTTP/1.1 " + status.encode() + b"\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(document)).encode() + b"\r\n" + extra + b"\r\n" + document
    )


def trickle(conn: socket.socket, pieces: Iterable[bytes], pause: float, until: float) -> None:
    """Send ``pieces`` one at a time, ``pause`` seconds apart, for at most ``until`` seconds
    (then stops sending); stops quietly when the client has gone."""
    end = time.monotonic() + until
    with contextlib.suppress(OSError):
        for piece in pieces:
            if time.monotonic() > end:
                return
            conn.sendall(piece)
            time.sleep(pause)


class HostileServer:
    """Runs ``script`` on each accepted connection (a thread per connection), then closes it.
    ``accepted``: how many connections it accepted. Use as a context manager."""

    def __init__(self, script: Script, timeout: float = 5.0) -> None:
        self.script = script
        self.timeout = timeout
        self.accepted = 0
        self.errors: list[BaseException] = []
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            index = self.accepted
            self.accepted += 1
            thread = threading.Thread(target=self._run, args=(conn, index), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _run(self, conn: socket.socket, index: int) -> None:
        conn.settimeout(self.timeout)
        try:
            self.script(conn, index)
        except OSError:
            pass  # the client went away, or the socket timed out: the script ends
        except BaseException as exc:  # a broken script: the test reports it
            self.errors.append(exc)
        finally:
            conn.close()

    def close(self) -> None:
        self._stopping.set()
        self._accepting.join(self.timeout)
        self._listener.close()
        for thread in self._threads:
            thread.join(self.timeout)
        if self.errors:
            raise self.errors[0]

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
