"""HttpClient (and, where the same question applies, AsyncHttpClient and the gRPC clients)
against servers that do not play by the rules: a chunk size that is not hex digits, a second
answer nobody asked for, a head trickled a line at a time, endless interim answers, a kept-alive
connection closed after an error answer, an answer over the client's size limit. Each server
is real (a raw socket on 127.0.0.1, tests/support/hostile.py, or a grpc server) and stops by
itself within a few seconds."""

from __future__ import annotations

import asyncio
import itertools
import socket
import time
from collections.abc import Iterable

import pytest

from oipcodec.client import (
    AsyncHttpClient,
    HttpClient,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
)
from oipcodec.errors import LimitError
from oipcodec.limits import Limits
from tests.support.hostile import (
    HostileServer,
    Script,
    json_answer,
    read_request,
    target,
    trickle,
)

pytest.importorskip("aiohttp", reason="the client extra is not installed")

_CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
)


# ------------------------------------------------------------------------------ chunk sizes


def _chunk_size_script(size: bytes) -> Script:
    def script(conn: socket.socket, index: int) -> None:
        read_request(conn)
        # a chunk of that "size", then a megabyte the client must not read to its end
        conn.sendall(_CHUNKED + size + b"\r\n{}\r\n" + b"a" * (1 << 20))

    return script


# int(x, 16) takes each of these (read(-1) would read to the end of the connection).
_NOT_HEX = [b"-1", b"+1", b" 1", b"0x1", b"1_0", b"", b"1 ", b"\xd9\xa1"]


@pytest.mark.parametrize("size", _NOT_HEX)
def test_a_chunk_size_that_is_not_hex_digits_is_refused(size: bytes) -> None:
    with (
        HostileServer(_chunk_size_script(size)) as server,
        HttpClient(server.url, timeout=5, limits=Limits(max_body_bytes=1000)) as c,
        pytest.raises(ServerConnectionError, match="not a chunk size line") as info,
    ):
        c.server_metadata()
    assert repr(size + b"\r\n") in str(info.value)  # the line, named


@pytest.mark.parametrize("size", [b"-1", b"+1", b"0x1", b"1_0", b""])
def test_the_async_client_refuses_them_too(size: bytes) -> None:
    # aiohttp's parser (llhttp, or its Python twin without the extensions) refuses these;
    # its Python parser takes " 1" (it strips the size), llhttp refuses it.
    async def main(url: str) -> None:
        async with AsyncHttpClient(url, timeout=5, limits=Limits(max_body_bytes=1000)) as c:
            with pytest.raises(ServerConnectionError, match=r"chunk size|400"):
                await c.server_metadata()

    with HostileServer(_chunk_size_script(size)) as server:
        asyncio.run(main(server.url))


def test_sizes_in_hex_with_extensions_are_read() -> None:
    def script(conn: socket.socket, index: int) -> None:
        read_request(conn)
        conn.sendall(_CHUNKED + b"1 ;a=b\r\n{\r\n1;c\r\n}\r\n00\r\n\r\n")

    with HostileServer(script) as server, HttpClient(server.url, timeout=5) as c:
        assert c.server_metadata() == {}


def test_max_body_bytes_bounds_an_endless_chunked_answer() -> None:
    def script(conn: socket.socket, index: int) -> None:
        read_request(conn)
        conn.settimeout(2)
        trickle(conn, itertools.chain([_CHUNKED], itertools.repeat(b"400\r\n" + b" " * 1024 + b"\r\n")),
                0, until=3)  # fmt: skip

    limit = Limits(max_body_bytes=100_000)
    with HostileServer(script) as server:
        with (
            HttpClient(server.url, timeout=5, limits=limit) as c,
            pytest.raises(LimitError, match="over the client's limit of 100000 bytes"),
        ):
            c.server_metadata()

        async def main() -> None:
            async with AsyncHttpClient(server.url, timeout=5, limits=limit) as c:
                with pytest.raises(LimitError, match="over the client's limit of 100000 bytes"):
                    await c.server_metadata()

        asyncio.run(main())


# ------------------------------------------------------------------------------ desync


@pytest.mark.parametrize("when", ["same-send", "later"])
def test_bytes_after_an_answer_never_become_the_next_answer(when: str) -> None:
    # The first connection answers its first request, then sends a second 200 nobody asked
    # for (in the same send, or a moment later); the client must not take it for the answer
    # to its next request, and must not reuse that connection.
    def script(conn: socket.socket, index: int) -> None:
        pending = bytearray()
        while head := read_request(conn, pending):
            name = target(head).rsplit("/", 1)[-1]
            answer = json_answer(b'{"name": "%s"}' % name.encode())
            if index == 0:
                smuggled = json_answer(b'{"name": "SMUGGLED"}')
                if when == "same-send":
                    conn.sendall(answer + smuggled)
                else:
                    conn.sendall(answer)
                    time.sleep(0.2)
                    conn.sendall(smuggled)
            else:
                conn.sendall(answer)

    with HostileServer(script) as server, HttpClient(server.url, timeout=5) as c:
        assert c.model_metadata("a") == {"name": "a"}
        if when == "later":
            time.sleep(0.5)  # the unasked answer has arrived
        assert c.model_metadata("b") == {"name": "b"}
        assert c.model_metadata("c") == {"name": "c"}
    assert server.accepted == 2


# ------------------------------------------------------------------------------ the deadline


def _endless_head(pieces: Iterable[bytes], pause: float) -> Script:
    def script(conn: socket.socket, index: int) -> None:
        read_request(conn)
        trickle(conn, pieces, pause, until=4)
        # then a complete answer: without a deadline the call would succeed, late
        conn.sendall(b"\r\n" + json_answer(b"{}"))

    return script


@pytest.mark.parametrize(
    "script",
    [
        # a header line every 0.2 s
        _endless_head(itertools.chain([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"],
                                      (b"X-%d: 1\r\n" % i for i in range(100))), 0.2),
        # a byte of the status line every 0.2 s
        _endless_head((bytes([b]) for b in b"HTTP/1.1 200 OK" * 10), 0.2),
        # an interim 100 Continue every 0.2 s
        _endless_head(itertools.repeat(b"HTTP/1.1 100 Continue\r\n\r\n", 30), 0.2),
        # the body a byte at a time
        _endless_head(itertools.chain([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"],
                                      itertools.repeat(b" ", 100)), 0.2),
    ],
    ids=["header-lines", "status-bytes", "100-continue", "body-bytes"],
)  # fmt: skip
def test_the_timeout_bounds_the_whole_call(script: Script) -> None:
    with (
        HostileServer(script) as server,
        HttpClient(server.url, timeout=1) as c,
        pytest.raises(RequestTimeoutError, match="no answer within 1 s"),
    ):
        c.server_metadata()


def test_endless_interim_answers_are_refused() -> None:
    def script(conn: socket.socket, index: int) -> None:
        read_request(conn)
        with_final = b"HTTP/1.1 100 Continue\r\n\r\n" * 1000 + json_answer(b"{}")
        conn.sendall(with_final)

    with (
        HostileServer(script) as server,
        HttpClient(server.url, timeout=5) as c,
        pytest.raises(ServerConnectionError, match=r"interim \(1xx\) answers and no final one"),
    ):
        c.server_metadata()


# ------------------------------------------------------------------------------ reused connections


@pytest.mark.parametrize("close", ["at-the-next-request", "right-after"])
def test_a_kept_alive_connection_closed_after_an_error_answer_is_retried_once(close: str) -> None:
    # A 500 without "Connection: close", then the server closes the connection: as soon as
    # the next request arrives on it, unanswered (the worst case: the client cannot see the
    # close before it sends), or right after the answer (a race with the client's next
    # request). The next call goes once more on a new connection.
    def script(conn: socket.socket, index: int) -> None:
        pending = bytearray()
        while head := read_request(conn, pending):
            if target(head).endswith("/error"):
                conn.sendall(json_answer(b'{"error": "broken"}', "500 Internal Server Error"))
                if close == "at-the-next-request":
                    read_request(conn, pending)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                return  # closed with a reset, the request unanswered
            conn.sendall(json_answer(b'{"name": "ok"}'))

    failures = []
    with HostileServer(script) as server, HttpClient(server.url, timeout=5) as c:
        for _ in range(20):
            with pytest.raises(ServerError, match="broken"):
                c.model_metadata("error")
            try:
                assert c.model_metadata("ok") == {"name": "ok"}
            except ServerConnectionError as exc:
                failures.append(exc)
    assert failures == []
    assert server.accepted == 21  # the first, and one for each retry


@pytest.mark.parametrize("answer", [b"HTTP/1.1 2", b"HTTP/1.1 200 OK\r\n"])
def test_no_retry_once_a_byte_of_the_answer_arrived(answer: bytes) -> None:
    def script(conn: socket.socket, index: int) -> None:
        read_request(conn)
        conn.sendall(json_answer(b"{}"))
        read_request(conn)
        conn.sendall(answer)  # part of an answer, then the close

    with HostileServer(script) as server, HttpClient(server.url, timeout=5) as c:
        assert c.server_metadata() == {}
        with pytest.raises(ServerConnectionError):
            c.server_metadata()
    assert server.accepted == 1


def test_a_retry_that_cannot_connect_says_so() -> None:
    # The first connection answers once, then the server goes away at the next request: the
    # retry's connect is refused, and that is the error (not re-wrapped: a
    # ServerConnectionError is also an OSError).
    servers: list[HostileServer] = []

    def script(conn: socket.socket, index: int) -> None:
        read_request(conn)
        conn.sendall(json_answer(b"{}"))
        read_request(conn)
        servers[0]._listener.shutdown(socket.SHUT_RDWR)  # stops listening: connects refused

    with HostileServer(script) as server, HttpClient(server.url, timeout=5) as c:
        servers.append(server)
        assert c.server_metadata() == {}
        with pytest.raises(ServerConnectionError, match=r"^cannot connect to"):
            c.server_metadata()


def test_a_retry_is_made_once_only() -> None:
    # The first connection answers once, then closes on the next request; every later
    # connection closes on its first request: the call fails after one retry.
    def script(conn: socket.socket, index: int) -> None:
        read_request(conn)
        if index == 0:
            conn.sendall(json_answer(b"{}"))
            read_request(conn)

    with HostileServer(script) as server, HttpClient(server.url, timeout=5) as c:
        assert c.server_metadata() == {}
        with pytest.raises(ServerConnectionError, match="closed the connection without answering"):
            c.server_metadata()
    assert server.accepted == 2
