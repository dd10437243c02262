"""oipcodec's HTTP/1.1 protocol (server/http11/) over real sockets on 127.0.0.1: raw bytes
in, the answers read by h11 (``Conn``, tests/support/http1.py), so that framing, timing and
connection handling are seen as a client sees them.

Two servers for the module: oipcodec's (``background``, in a thread, demo models, a 1 MB body
limit and a 1 s body timeout, uvicorn's 5 s keep-alive timeout) for the request side, and a
tiny ASGI app of our own (``tiny_app``) under uvicorn with the same protocol, for what an app
can make the protocol do: streamed answers, HEAD, failures, bad headers, ``receive()``.
Graceful shutdown gets a server of its own, as it stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from oipcodec import Limits
from oipcodec.testing import RunningServer, background
from tests.support.http1 import read_response

pytest.importorskip("uvicorn", reason="the server extra is not installed")

import uvicorn

from oipcodec.server.http11 import BODY_TIMEOUT_EXTENSION, BUFFERS_EXTENSION, HttpProtocol

LIMIT = 1 << 20
BODY_TIMEOUT = 1.0
KEEP_ALIVE = 5.0  # uvicorn's default timeout_keep_alive, which oipcodec's server keeps
TIMEOUT = 10  # every socket read; a test that hits it has failed

IDENTITY = "/v2/models/identity/infer"
CHUNKED_HEAD = (
    b"POST %s HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n" % IDENTITY.encode()
)


# ------------------------------------------------------------------------------ the client


class Answer:
    """One HTTP answer as it came off the wire."""

    def __init__(
        self, status: int, headers: list[tuple[str, str]], body: bytes, chunked: bool
    ) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.chunked = chunked

    def get(self, name: str) -> str | None:
        values = [v for n, v in self.headers if n == name]
        return ", ".join(values) if values else None

    def has(self, name: str) -> bool:
        return any(n == name for n, _ in self.headers)

    @property
    def closes(self) -> bool:
        return "close" in (self.get("connection") or "").lower()

    def json(self) -> Any:
        return orjson.loads(self.body)

    @property
    def error(self) -> str:
        assert self.get("content-type") == "application/json"
        document = self.json()
        assert list(document) == ["error"]
        return str(document["error"])


class Conn:
    """A raw HTTP/1.1 client connection with its own read buffer. Every read is bounded by
    ``timeout`` (socket.timeout fails the test)."""

    def __init__(self, port: int, timeout: float = TIMEOUT) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = b""

    def __enter__(self) -> Conn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_slowly(self, data: bytes, size: int, pause: float = 0.002) -> None:
        """``data`` in sends of ``size`` bytes, with a pause after each."""
        for i in range(0, len(data), size):
            self.sock.sendall(data[i : i + size])
            time.sleep(pause)

    def read_to_close(self) -> bytes:
        data, self.pending = self.pending, b""
        while chunk := self.sock.recv(1 << 16):
            data += chunk
        return data

    def read_answer(self, head_only: bool = False) -> Answer:
        """The next answer, read by h11: status line, headers, and a body by Content-Length,
        chunked coding or to the close (none for ``head_only``, 1xx, 204 and 304)."""
        got, self.pending = read_response(
            self.sock, self.pending, method="HEAD" if head_only else "GET"
        )
        assert got.http_version == "1.1", got
        headers = got.headers
        answer = Answer(got.status, headers, got.body, False)
        if head_only or answer.status < 200 or answer.status in (204, 304):
            return answer
        coding = answer.get("transfer-encoding")
        length = answer.get("content-length")
        if coding is not None:
            assert coding == "chunked" and length is None, headers
            answer.chunked = True
        return answer

    def closed_by_server(self) -> bool:
        """True if the server closed the connection (after everything read so far): a read
        gives end-of-file, with no byte more."""
        if self.pending:
            return False
        try:
            return self.sock.recv(1 << 16) == b""
        except ConnectionResetError:
            return False


def exchange(port: int, data: bytes, **read: Any) -> Answer:
    """``data`` sent on a new connection, and its one answer."""
    with Conn(port) as conn:
        conn.send(data)
        return conn.read_answer(**read)


def get(path: str, *headers: str, version: str = "1.1") -> bytes:
    lines = [f"GET {path} HTTP/{version}", "Host: test", *headers, "", ""]
    return "\r\n".join(lines).encode()


def post(path: str, body: bytes, *headers: str, version: str = "1.1") -> bytes:
    lines = [f"POST {path} HTTP/{version}", "Host: test", *headers]
    lines += [f"Content-Length: {len(body)}", "", ""]
    return "\r\n".join(lines).encode() + body


def chunked(body: bytes, size: int) -> bytes:
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


def identity_json(data: list[int]) -> bytes:
    return orjson.dumps(
        {"inputs": [{"name": "X", "shape": [len(data)], "datatype": "INT32", "data": data}]}
    )


def echoed(answer: Answer) -> list[int]:
    assert answer.status == 200, answer.body[:300]
    output = answer.json()["outputs"][0]
    assert output["name"] == "X"
    return list(output["data"])


# ------------------------------------------------------------------------------ servers


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    limits = Limits(
        max_body_bytes=LIMIT, max_decompressed_bytes=LIMIT, body_timeout_seconds=BODY_TIMEOUT
    )
    with background(limits=limits, grpc_port=None, process=False) as running:
        yield running


@pytest.fixture
def port(server: RunningServer) -> Iterator[int]:
    """The port of oipcodec's server; after the test, a new connection is still served."""
    assert server.http_port is not None
    yield server.http_port
    answer = exchange(server.http_port, get("/v2/health/live"))
    assert answer.status == 200


#: What the tiny app tells the tests from inside the server (its thread).
EVENTS: queue.Queue[Any] = queue.Queue()
STREAM = [b"first part, ", b"", b"second " * 1000, b"x" * 70000, b"last"]


async def tiny_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app for the protocol's answer side; the path says what it does."""
    assert scope["type"] == "http"
    path = scope["path"]

    async def start(status: int = 200, *headers: tuple[bytes, bytes]) -> None:
        await send({"type": "http.response.start", "status": status, "headers": list(headers)})

    if path == "/stream":  # no Content-Length: chunked, or to the close
        await start(200, (b"content-type", b"text/plain"))
        for part in STREAM:
            await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    elif path == "/slow-stream":
        # Starlette's StreamingResponse under ASGI spec 2.3: the answer is streamed while a
        # second task waits in receive() for the client to go away.
        async def listen() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        listener = asyncio.ensure_future(listen())
        await start(200)
        for i in range(4):
            await asyncio.sleep(BODY_TIMEOUT / 2)
            await send({"type": "http.response.body", "body": b"part %d;" % i, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        await listener
    elif path == "/raise":
        raise RuntimeError("the app broke before answering")
    elif path == "/inject":
        await start(200, (b"x-value", b"1\r\ninjected: yes"), (b"content-length", b"2"))
        await send({"type": "http.response.body", "body": b"ok"})
    elif path == "/echo":  # the body's messages, described in a header; the body echoed
        messages = [await receive()]
        while messages[-1].get("more_body", False):
            messages.append(await receive())
        info = {
            "messages": [
                {
                    "type": m["type"],
                    "more_body": m.get("more_body", False),
                    "length": len(m.get("body", b"")),
                }
                for m in messages
            ],
            "extensions": scope.get("extensions"),
        }
        body = b"".join(bytes(m.get("body", b"")) for m in messages)
        await start(200, (b"x-info", orjson.dumps(info)), (b"content-length", b"%d" % len(body)))
        await send({"type": "http.response.body", "body": body})
    elif path == "/wait-disconnect":  # the body, then receive() again: until the client goes
        first = await receive()
        EVENTS.put(("body", bytes(first["body"]), first.get("more_body", False)))
        EVENTS.put(("then", (await receive())["type"]))
    elif path == "/no-content":  # a 204 with body bytes: the protocol must not send them on
        await start(204)
        await send({"type": "http.response.body", "body": b"not for the wire"})
    elif path == "/close":  # the app says Connection: close itself
        await start(200, (b"connection", b"close"), (b"content-length", b"2"))
        await send({"type": "http.response.body", "body": b"ok"})
    elif path == "/slow":  # answers after a while (for the graceful shutdown)
        await asyncio.sleep(1.0)
        await start(200, (b"content-length", b"4"))
        await send({"type": "http.response.body", "body": b"done"})
    else:
        await start(200, (b"content-length", b"2"))
        await send({"type": "http.response.body", "body": b"ok"})


@contextlib.contextmanager
def run_app(
    app: Any = tiny_app,
    protocol: dict[str, Any] | None = None,
    http: Any = HttpProtocol,
    **config: Any,
) -> Iterator[tuple[uvicorn.Server, int]]:
    """``app`` under uvicorn with oipcodec's protocol (``http``: its class, HttpProtocol or
    NativeProtocol; ``protocol``: more of its options), on a new event loop (asyncio's own,
    where oipcodec's server has uvloop if installed) in a thread; stopped on exit."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            http=functools.partial(http, body_timeout=BODY_TIMEOUT, **(protocol or {})),
            host="127.0.0.1",
            port=port,
            lifespan="off",
            log_config=None,
            **config,
        )
    )
    failure: list[BaseException] = []

    def serve() -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(server.serve(sockets=[sock]))
        except BaseException as exc:
            failure.append(exc)
        finally:
            loop.close()

    thread = threading.Thread(target=serve, name="tiny-app-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + TIMEOUT
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started, failure
    try:
        yield server, port
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)
        sock.close()
    assert not thread.is_alive(), "the server did not stop"
    assert not failure, failure


@pytest.fixture(scope="module")
def app_port() -> Iterator[int]:
    with run_app() as (_, port):
        yield port


# ------------------------------------------------------------------------------ requests


def test_pipelined_requests_are_answered_in_order(port: int) -> None:
    body = identity_json([1, 2, 3])
    with Conn(port) as conn:
        conn.send(get("/v2/health/live") + post(IDENTITY, body) + get("/v2/models/identity"))
        first, second, third = (conn.read_answer() for _ in range(3))
        assert (first.status, first.body) == (200, b'{"live":true}')
        assert echoed(second) == [1, 2, 3]
        assert third.status == 200 and third.json()["name"] == "identity"
        # Then pipelined POSTs, bodies and heads run together, on the same connection, with
        # the empty line some clients add after a body (ignored: RFC 9112 2.2).
        bodies = [identity_json([i] * (i + 1)) for i in range(3)]
        conn.send(b"\r\n".join(post(IDENTITY, b) for b in bodies))
        for i in range(3):
            assert echoed(conn.read_answer()) == [i] * (i + 1)
        assert not any(answer.closes for answer in (first, second, third))


def test_a_head_and_a_body_in_tiny_pieces(port: int) -> None:
    with Conn(port) as conn:
        conn.send_slowly(get("/v2/health/live"), 1)  # byte by byte, within the 1 s head limit
        assert conn.read_answer().status == 200
        data = list(range(20000))
        body = identity_json(data)
        request = post(IDENTITY, body)
        conn.send_slowly(request[: -len(body)], 3)  # the head in pieces of 3 bytes...
        conn.send_slowly(body, len(body) // 40 + 1, pause=0.01)  # ... the body in 40
        assert echoed(conn.read_answer()) == data
        # The head with the body's first bytes, then the rest in pieces.
        request = post(IDENTITY, body)
        conn.send_slowly(request, len(request) - len(body) + 100, pause=0.01)
        assert echoed(conn.read_answer()) == data


MALFORMED = [
    ("request line", b"GET /v2/health/live\r\nHost: x\r\n\r\n", 400, "malformed HTTP request line"),
    ("target with a space", b"GET /v2/health live HTTP/1.1\r\n\r\n", 400, "malformed HTTP request line"),
    ("space before the colon", b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, "malformed HTTP header line"),
    ("obs-fold", b"GET / HTTP/1.1\r\nHost: x\r\nX-A: b\r\n c\r\n\r\n", 400, "malformed HTTP header line"),
    ("bare LF", b"GET / HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n", 400, "malformed HTTP header line"),
    ("LF-only head", b"GET / HTTP/1.1\nHost: x\n\n", 400, "must end with CRLF"),
    ("HTTP/2.0", b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "only HTTP/1.0 and HTTP/1.1"),
    ("HTTP/1.2", b"GET / HTTP/1.2\r\nHost: x\r\n\r\n", 505, "only HTTP/1.0 and HTTP/1.1"),
    ("Content-Length and Transfer-Encoding", b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"),
    ("two Content-Lengths", b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400, "two different Content-Length"),
    ("non-numeric Content-Length", b"POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400, "invalid Content-Length 'abc'"),
    ("negative Content-Length", b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "invalid Content-Length"),
    ("gzip transfer coding", b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "the only transfer coding served is chunked"),
    ("gzip, chunked", b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "the only transfer coding served is chunked"),
    ("chunked in HTTP/1.0", b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "Transfer-Encoding in an HTTP/1.0 request"),
    ("bad target", b"GET ftp://x/ HTTP/1.1\r\n\r\n", 400, "malformed request target"),
    # issue 20, item 3: a method that is no token, a control byte in the target: 400, not 505
    ("invalid method token", b"G(T /v2 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed HTTP request line"),
    ("NUL in the target", b"GET /v2\x00/health/live HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed HTTP request line"),
    ("control byte in the target", b"GET /v2\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed HTTP request line"),
    ("DEL in the target", b"GET /v2\x7f HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed HTTP request line"),
    ("tab in the target", b"GET /v2\tx HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed HTTP request line"),
    ("byte over 0x7e in the target", b"GET /v2\x80 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed HTTP request line"),
    ("bad authority", b'GET http://a"b/ HTTP/1.1\r\nHost: x\r\n\r\n', 400, "malformed HTTP request line"),
    ("unknown method", b"FOO /v2 HTTP/1.1\r\nHost: x\r\n\r\n", 501, "unknown method 'FOO'"),
    ("lower-case method", b"get /v2 HTTP/1.1\r\nHost: x\r\n\r\n", 501, "unknown method 'get'"),
    # issue 20, item 1: no coding at all in Transfer-Encoding
    ("empty Transfer-Encoding", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\n", 400, "an empty Transfer-Encoding"),
    ("comma-only Transfer-Encoding", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,\r\n\r\n", 400, "an empty Transfer-Encoding"),
    ("chunked twice", b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "chunked is not the final transfer coding"),
    ("tab after chunked", b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\t\r\n\r\n0\r\n\r\n", 501, "the only transfer coding served is chunked"),
    ("chunked, then an empty element", b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked,\r\n\r\n0\r\n\r\n", 400, "chunked is not the final transfer coding"),
    # issue 20, item 4: a duplicate Content-Length, even an identical one (as llhttp)
    ("two identical Content-Lengths", b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400, "two identical Content-Length"),
    ("Content-Length of 5000 digits", b"POST / HTTP/1.1\r\nContent-Length: " + b"1" * 5000 + b"\r\n\r\n", 400, "invalid Content-Length"),
    ("Content-Length over 64 bits", b"POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", 400, "invalid Content-Length"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("request_bytes", "status", "message"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_a_malformed_head_is_refused_and_closed(
    port: int, request_bytes: bytes, status: int, message: str
) -> None:
    with Conn(port) as conn:
        conn.send(request_bytes)
        answer = conn.read_answer()
        assert answer.status == status, answer.body
        assert message in answer.error
        assert answer.closes
        assert conn.closed_by_server()


#: issue 20, items 1 and 2, byte for byte: each smuggled a second request past the first
#: (an empty Transfer-Encoding ignored, a request line or a bare-LF line taken for a trailer).
SMUGGLING = [
    ("empty Transfer-Encoding", b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\nGET /v2/models/SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("comma-only Transfer-Encoding", b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,\r\n\r\nGET /v2/models/SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("bare-LF line after the last chunk", b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\nGET /v2/models/SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("request line after the last chunk", b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nGET /v2/models/SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n"),
]  # fmt: skip


@pytest.mark.parametrize("request_bytes", [c[1] for c in SMUGGLING], ids=[c[0] for c in SMUGGLING])
def test_no_request_is_smuggled_past_the_first(port: int, request_bytes: bytes) -> None:
    """One 400 and the close: the bytes after the first head are never answered as a request
    of their own, nor swallowed as part of the first (what llhttp does too)."""
    with Conn(port) as conn:
        conn.send(request_bytes)
        answer = conn.read_answer()
        assert answer.status == 400, answer.body
        assert answer.closes
        assert conn.closed_by_server()  # no second answer


def test_request_line_leniencies_shared_with_llhttp(port: int) -> None:
    """What llhttp accepts and RFC 9112 allows (2.2, 3): any CR and LF before a request line,
    and runs of spaces between its parts."""
    with Conn(port) as conn:
        conn.send(b"\r\n\n\rGET  /v2/health/live   HTTP/1.1\r\nHost: test\r\n\r\n")
        assert conn.read_answer().status == 200
        conn.send(b"\n" + get("/v2/health/live"))
        assert conn.read_answer().status == 200


def test_a_head_over_the_limit_is_431(port: int) -> None:
    # With its end (found too far), and without (refused before the rest arrives).
    big = b"GET / HTTP/1.1\r\nX-Big: " + b"a" * (70 * 1024)
    for request_bytes in (big + b"\r\n\r\n", big):
        with Conn(port) as conn:
            conn.send(request_bytes)
            answer = conn.read_answer()
            assert answer.status == 431
            assert "the request head is over 65536 bytes" in answer.error
            assert answer.closes and conn.closed_by_server()


def test_a_head_just_under_the_limit_is_served(port: int) -> None:
    request_bytes = get("/v2/health/live", "X-Big: " + "a" * 60000)
    assert exchange(port, request_bytes).status == 200


def test_keep_alive_and_connection_close(port: int) -> None:
    with Conn(port) as conn:
        for i in range(5):
            conn.send(get("/v2/health/live") if i % 2 else post(IDENTITY, identity_json([i])))
            answer = conn.read_answer()
            assert answer.status == 200 and not answer.closes
        conn.send(get("/v2/health/live", "Connection: close"))
        answer = conn.read_answer()
        assert answer.status == 200
        assert answer.get("connection") == "close"
        assert conn.closed_by_server()
    with Conn(port) as conn:  # a token among others, any case
        conn.send(get("/v2/health/live", "Connection: Upgrade, CLOSE"))
        assert conn.read_answer().closes
        assert conn.closed_by_server()


def test_http_1_0_is_closed_after_the_answer(port: int) -> None:
    for request_bytes in (
        get("/v2/health/live", version="1.0"),
        get("/v2/health/live", "Connection: keep-alive", version="1.0"),  # not served
        post(IDENTITY, identity_json([7]), version="1.0"),
    ):
        with Conn(port) as conn:
            conn.send(request_bytes)
            answer = conn.read_answer()
            assert answer.status == 200 and answer.closes
            if b"POST" in request_bytes:
                assert echoed(answer) == [7]
            assert conn.closed_by_server()


def expect_head(path: str, length: int) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def test_expect_100_continue(port: int) -> None:
    body = identity_json([4, 5, 6])
    with Conn(port) as conn:
        conn.send(expect_head(IDENTITY, len(body)))
        interim = conn.read_answer()  # before any byte of the body was sent
        assert (interim.status, interim.headers, interim.body) == (100, [], b"")
        conn.send(body)
        assert echoed(conn.read_answer()) == [4, 5, 6]
        # The connection goes on.
        conn.send(get("/v2/health/live"))
        assert conn.read_answer().status == 200


def test_expect_100_continue_refused_before_the_body(port: int) -> None:
    """A body never asked for: the client may send it or not (RFC 9110 10.1.1), so where the
    next request starts is not known, and the connection is closed after the answer."""
    with Conn(port) as conn:
        conn.send(expect_head("/v2/models/nope/infer", 1000))
        answer = conn.read_answer()
        assert answer.status == 404 and "unknown model" in answer.error
        assert answer.closes
        assert conn.closed_by_server()


def test_unread_body_is_skipped_and_the_connection_kept(port: int) -> None:
    body = identity_json(list(range(5000)))  # larger than the server's 32 kB read buffer
    with Conn(port) as conn:
        # All at once: the 404 is decided from the head, the body is dropped, then the GET.
        conn.send(post("/v2/models/nope/infer", body) + get("/v2/health/live"))
        answer = conn.read_answer()
        assert answer.status == 404 and not answer.closes
        assert conn.read_answer().status == 200
        # The body still arriving after the answer, in pieces.
        conn.send(post("/v2/models/nope/infer", body)[: -len(body)])
        answer = conn.read_answer()
        assert answer.status == 404 and not answer.closes
        conn.send_slowly(body, len(body) // 5 + 1, pause=0.02)
        conn.send(post(IDENTITY, identity_json([9, 9])))
        assert echoed(conn.read_answer()) == [9, 9]
        # Over the body limit by its Content-Length: 413 without reading it, then skipped.
        big = bytes(LIMIT + 1)
        conn.send(post(IDENTITY, big)[: -len(big)])
        answer = conn.read_answer()
        assert answer.status == 413 and not answer.closes
        conn.send(big + get("/v2/health/live"))
        assert conn.read_answer().status == 200


def test_lingering_close_after_a_chunked_body_too_large(port: int) -> None:
    """The server answers 413 while the client is still sending; the client, which reads
    only when it is done sending, still gets the whole answer, then the end of the stream."""
    with Conn(port) as conn:
        conn.send(CHUNKED_HEAD)
        piece = chunked(bytes(64 * 1024), 64 * 1024)[:-5]  # one chunk, no last-chunk
        for _ in range(4 * LIMIT // len(piece)):  # 4 MB: long past the 413
            conn.send(piece)
        time.sleep(0.2)
        conn.send(piece)
        answer = conn.read_answer()
        assert answer.status == 413, answer.body
        assert f"is larger than the limit of {LIMIT} bytes" in answer.error
        assert answer.closes
        assert conn.closed_by_server()


def test_chunked_request_bodies(port: int) -> None:
    body = identity_json(list(range(100)))
    pieces = [body[:5], body[5:40], body[40:]]
    coded = b"".join(b'%x;foo=bar;q="a b"\r\n%s\r\n' % (len(p), p) for p in pieces)
    coded += b"0;last=yes\r\nX-Trailer: 1\r\nX-Other: two\r\n\r\n"
    head = CHUNKED_HEAD
    with Conn(port) as conn:
        conn.send(head + coded)
        assert echoed(conn.read_answer()) == list(range(100))
        # Upper-case hex, leading zeros, extensions as llhttp reads them (a name alone, an
        # empty value, an empty name, a quoted-pair), in tiny sends, then pipelined on.
        coded = b"".join(
            b'00%X;a;b=;=c;d="e \\"f\\"";g=h"i"\r\n%s\r\n' % (len(p), p) for p in pieces
        )
        coded += b"0\r\n\r\n"
        conn.send_slowly(head + coded, 7, pause=0.001)
        assert echoed(conn.read_answer()) == list(range(100))
        conn.send(head + chunked(body, 1000) + get("/v2/health/live"))
        assert echoed(conn.read_answer()) == list(range(100))
        assert conn.read_answer().status == 200


@pytest.mark.parametrize(
    ("coded", "message"),
    [
        (b"zz\r\nhello\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"0x5\r\nhello\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"-5\r\nhello\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"5\r\nhello!!\r\n0\r\n\r\n", "chunk data longer than its size"),
        (b"1" * 5000, "a chunk-size or trailer line is too long"),
        # issue 20, item 4 (as llhttp): no whitespace after the size or around extensions,
        # no control bytes in them, sizes that fit in 64 bits
        (b"2 \r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"2 ;a\r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"2\t\r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"2; a\r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"2;a =b\r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"2;\r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"2;a\x01\r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"2;a=\x00\r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b'2;a="\x7f"\r\n{}\r\n0\r\n\r\n', "malformed chunk-size line"),
        (b"2;a\rb\r\n{}\r\n0\r\n\r\n", "malformed chunk-size line"),
        (b"10000000000000000\r\n", "malformed chunk-size line"),
        # issue 20, item 2: the trailer section is header lines, checked as such
        (b"2\r\n{}\r\n0\r\nX-A: b\x00c\r\n\r\n", "malformed trailer line"),
        (b"2\r\n{}\r\n0\r\nX-A: b\rc\r\n\r\n", "malformed trailer line"),
        (b"2\r\n{}\r\n0\r\nX-A: b\r\n c\r\n\r\n", "malformed trailer line"),
        (b"2\r\n{}\r\n0\r\nX-A b\r\n\r\n", "malformed trailer line"),
        (b"2\r\n{}\r\n0\r\nX-A: b\nX-C: d\r\n\r\n", "malformed trailer line"),
        # framing fields in the trailer section (llhttp refuses them; found by the fuzzing)
        (b"0\r\nTransfer-Encoding: chunked\r\n\r\n", "transfer-encoding in the trailer"),
        (b"0\r\nContent-Length: 3\r\n\r\nabc", "content-length in the trailer"),
    ],
    ids=[
        "not hex", "0x prefix", "negative", "data over its size", "size line too long",
        "space after the size", "space before an extension", "tab after the size",
        "space after the semicolon", "space before the equals sign", "no extension name",
        "control byte in an extension name", "NUL in an extension value",
        "DEL in a quoted extension value", "bare CR in an extension", "size over 64 bits",
        "NUL in a trailer", "bare CR in a trailer", "obs-fold in a trailer",
        "trailer without a colon", "bare LF in a trailer", "Transfer-Encoding trailer",
        "Content-Length trailer",
    ],
)  # fmt: skip
def test_a_malformed_chunked_body_is_400(port: int, coded: bytes, message: str) -> None:
    head = CHUNKED_HEAD
    with Conn(port) as conn:
        conn.send(head)
        time.sleep(0.05)  # the app is waiting for the body when it comes
        conn.send(coded)
        answer = conn.read_answer()
        assert answer.status == 400
        assert message in answer.error
        assert answer.closes and conn.closed_by_server()


def test_connection_close_in_the_trailer_section_closes(port: int) -> None:
    """As llhttp does: the answer says close, and the request after it is never read."""
    with Conn(port) as conn:
        conn.send(CHUNKED_HEAD + chunked(identity_json([3]), 5)[:-2])
        conn.send(b"Connection: close\r\n\r\n" + get("/v2/health/live"))
        answer = conn.read_answer()
        assert echoed(answer) == [3] and answer.closes
        assert conn.closed_by_server()


# ------------------------------------------------------------------------------ timeouts


def test_a_stalled_head_gets_408(port: int) -> None:
    with Conn(port) as conn:
        conn.send(b"GET /v2/health/live HTTP/1.1\r\nHost: te")
        started = time.monotonic()
        answer = conn.read_answer()
        waited = time.monotonic() - started
        assert answer.status == 408
        assert "the request head stopped arriving" in answer.error
        assert answer.closes and conn.closed_by_server()
    assert BODY_TIMEOUT * 0.8 < waited < BODY_TIMEOUT + 2


def test_a_head_trickled_a_byte_at_a_time_gets_408(port: int) -> None:
    """The head has the body timeout in all: bytes now and then do not hold the connection."""
    with Conn(port) as conn:
        started = time.monotonic()
        for byte in b"GET /v2/health/live HTTP/1.1\r\nHost: " + b"x" * 100:
            conn.send(bytes([byte]))
            time.sleep(BODY_TIMEOUT / 10)
            if select.select([conn.sock], [], [], 0)[0]:
                break  # the answer is there
        assert conn.read_answer().status == 408
        assert time.monotonic() - started < BODY_TIMEOUT + 2


def test_idle_connections_are_closed_after_the_keep_alive_timeout(port: int) -> None:
    """Silently (no 408: nothing was asked), after the keep-alive timeout, not the head's."""
    timeout = KEEP_ALIVE + TIMEOUT
    with Conn(port, timeout) as fresh, Conn(port, timeout) as used:
        started = time.monotonic()
        used.send(get("/v2/health/live"))
        assert used.read_answer().status == 200
        answered = time.monotonic()
        assert fresh.read_to_close() == b""
        assert used.read_to_close() == b""
        ended = time.monotonic()
    assert ended - started > KEEP_ALIVE - 1
    assert ended - answered < KEEP_ALIVE + 3


# ------------------------------------------------------------------------------ the app side


def test_a_streamed_answer_is_chunked_over_http_1_1(app_port: int) -> None:
    with Conn(app_port) as conn:
        for _ in range(2):
            conn.send(get("/stream"))
            answer = conn.read_answer()
            assert answer.status == 200 and answer.chunked
            assert not answer.has("content-length") and not answer.closes
            assert answer.body == b"".join(STREAM)


def test_a_streamed_answer_over_http_1_0_goes_to_the_close(app_port: int) -> None:
    with Conn(app_port) as conn:
        conn.send(get("/stream", version="1.0"))
        answer = conn.read_answer()  # the body: to the end of the stream
        assert answer.status == 200 and not answer.chunked
        assert not answer.has("transfer-encoding") and not answer.has("content-length")
        assert answer.closes
        assert answer.body == b"".join(STREAM)


def test_head_gets_the_headers_without_a_body(app_port: int) -> None:
    with Conn(app_port) as conn:
        conn.send(b"HEAD /stream HTTP/1.1\r\nHost: test\r\n\r\n")
        answer = conn.read_answer(head_only=True)
        assert answer.status == 200 and answer.get("content-type") == "text/plain"
        assert not answer.has("transfer-encoding")
        # No byte of a body follows: the next answer on the connection is read cleanly.
        conn.send(get("/stream"))
        answer = conn.read_answer()
        assert answer.body == b"".join(STREAM)


def test_a_204_carries_no_body_whatever_the_app_sends(app_port: int) -> None:
    with Conn(app_port) as conn:
        conn.send(get("/no-content"))
        answer = conn.read_answer(head_only=True)
        assert answer.status == 204
        # The body bytes the app sent did not reach the wire: the next answer reads cleanly.
        conn.send(get("/"))
        answer = conn.read_answer()
        assert answer.status == 200 and answer.body == b"ok"


def test_the_apps_connection_close_is_not_repeated(app_port: int) -> None:
    with Conn(app_port) as conn:
        conn.send(get("/close"))
        answer = conn.read_answer()
        assert [v for n, v in answer.headers if n == "connection"] == ["close"], answer.headers
        assert answer.body == b"ok" and conn.closed_by_server()


def test_an_app_that_raises_before_answering_gives_500(app_port: int) -> None:
    with Conn(app_port) as conn:
        conn.send(get("/raise"))
        answer = conn.read_answer()
        assert answer.status == 500
        assert answer.body == b"Internal Server Error"
        assert answer.closes and conn.closed_by_server()


def test_a_header_with_crlf_from_the_app_is_refused(app_port: int) -> None:
    with Conn(app_port) as conn:
        conn.send(get("/inject"))
        received = conn.read_to_close()
    assert b"injected" not in received.lower()
    assert received == b""  # the connection was closed without an answer


def test_a_content_length_body_reaches_the_app_in_one_message(app_port: int) -> None:
    body = bytes(range(256)) * 1000  # 256 kB: eight times the server's read buffer
    with Conn(app_port) as conn:
        request = post("/echo", body)
        conn.send_slowly(request, len(request) // 20 + 1, pause=0.01)
        answer = conn.read_answer()
        assert answer.status == 200
        assert answer.body == body
        info = orjson.loads(answer.get("x-info") or "")
        assert info["messages"] == [
            {"type": "http.request", "more_body": False, "length": len(body)}
        ]
        assert info["extensions"] == {
            BODY_TIMEOUT_EXTENSION: {"seconds": BODY_TIMEOUT},
            BUFFERS_EXTENSION: {},
        }
        # A chunked body: in as many messages as it takes, the last one saying so.
        conn.send(b"POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        conn.send_slowly(chunked(body, 50000), 60000, pause=0.01)
        answer = conn.read_answer()
        assert answer.body == body
        messages = orjson.loads(answer.get("x-info") or "")["messages"]
        assert [m["more_body"] for m in messages] == [True] * (len(messages) - 1) + [False]
        # No body at all: one empty message.
        conn.send(get("/echo"))
        info = orjson.loads(conn.read_answer().get("x-info") or "")
        assert info["messages"] == [{"type": "http.request", "more_body": False, "length": 0}]


def test_a_body_over_the_buffer_limit_in_small_pieces_arrives_whole() -> None:
    """A Content-Length body over ``max_body_buffer`` comes in pieces; once what is left fits
    the buffer, the pieces taken already went first (found by fuzz/fuzz_http_framing.py: they
    were dropped, and the app got the body with bytes missing)."""
    body = bytes(range(256)) * 4
    with run_app(protocol={"max_body_buffer": 100}) as (_, port), Conn(port) as conn:
        for size in (3, 7, 64, len(body) + 200):
            conn.send_slowly(post("/echo", body), size, pause=0.0005)
            answer = conn.read_answer()
            assert answer.status == 200 and answer.body == body, size


def test_receive_after_the_body_waits_for_the_client_to_go(app_port: int) -> None:
    while not EVENTS.empty():
        EVENTS.get_nowait()
    with Conn(app_port) as conn:
        conn.send(post("/wait-disconnect", b"payload"))
        assert EVENTS.get(timeout=TIMEOUT) == ("body", b"payload", False)
        # Longer than the body timeout: waiting for a disconnect is no stalled body.
        time.sleep(BODY_TIMEOUT * 1.5)
        assert EVENTS.empty()
        conn.sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            conn.sock.recv(1 << 16)  # nothing was sent to the client meanwhile
        conn.sock.setblocking(True)
    assert EVENTS.get(timeout=TIMEOUT) == ("then", "http.disconnect")


def test_a_slow_stream_with_a_disconnect_listener_is_not_cut(app_port: int) -> None:
    """An answer streamed for longer than the body timeout, while the app waits for a
    disconnect in receive() (what Starlette does under ASGI 2.3), arrives whole."""
    with Conn(app_port) as conn:
        conn.send(get("/slow-stream"))
        answer = conn.read_answer()
        assert answer.status == 200 and answer.chunked
        assert answer.body == b"part 0;part 1;part 2;part 3;"
        conn.send(get("/"))
        assert conn.read_answer().body == b"ok"


# ------------------------------------------------------------------------------ shutdown


def test_graceful_shutdown_closes_idle_connections() -> None:
    with run_app(timeout_keep_alive=60) as (server, port), Conn(port) as idle, Conn(port) as busy:
        idle.send(get("/"))
        assert idle.read_answer().body == b"ok"
        busy.send(get("/slow"))
        time.sleep(0.2)  # the request is in the app
        started = time.monotonic()
        server.should_exit = True
        assert idle.read_to_close() == b""  # closed at once, not after the keep-alive timeout
        assert time.monotonic() - started < 3
        # The request in progress is answered, with connection: close, and then closed.
        answer = busy.read_answer()
        assert (answer.status, answer.body) == (200, b"done")
        assert answer.closes and busy.closed_by_server()


def test_the_transport_and_the_front_ends_name_the_same_scope_extensions() -> None:
    # http11 imports nothing of the server, so each side states the names; they must agree.
    from oipcodec.server import metadata

    assert metadata.BODY_TIMEOUT_EXTENSION == BODY_TIMEOUT_EXTENSION
    assert metadata.BUFFERS_EXTENSION == BUFFERS_EXTENSION
