"""Memory a request leaves behind on oipcodec's HTTP server, over real sockets on 127.0.0.1.

A request that ends badly (the client goes away mid-body, 408, 400, 413, the app raises, a
gzip bomb) must give its memory back when it ends, by reference counting alone: every test
here runs with the cycle collector off (``gc.disable()``) and follows the server's memory
with tracemalloc, which sees the body buffers (``uninitialized_bytearray`` allocates with
PyObject_Malloc) and zlib's output. A buffer kept by a reference cycle shows as traced
memory that never comes back. The servers run in threads of this process, so tracemalloc
sees them. Waits are polls with a deadline (never timing assertions).

Also: the budget of body buffers reserved by connections whose bodies are still arriving
(:class:`~oipcodec.server.http11.BodyBudget`), and large compressed bodies inflated off
the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import select
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from oipcodec import Limits
from oipcodec.testing import background
from tests.support.http1 import read_response

pytest.importorskip("uvicorn", reason="the server extra is not installed")

import uvicorn

from oipcodec.server.http11 import BodyBudget, HttpProtocol

SIZE = 24 << 20  # an upload's Content-Length (the size of the aborted uploads)
TIMEOUT = 20.0  # every socket read and every wait; a test that hits it has failed
BODY_TIMEOUT = 1.0
IDENTITY = "/v2/models/identity/infer"


# ------------------------------------------------------------------------------ helpers


@contextlib.contextmanager
def no_cycle_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def traced_now() -> int:
    return tracemalloc.get_traced_memory()[0]


def wait_until(condition: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)


def head(path: str, length: int, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: test", *headers, f"Content-Length: {length}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer_of(sock: socket.socket) -> tuple[int, bytes]:
    got, _ = read_response(sock)
    return got.status, got.body


LISTENERS: set[asyncio.Future[Any]] = set()


async def echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Reads the whole body, answers its length and how many messages it came in;
    ``/raise`` raises once it has the body."""
    assert scope["type"] == "http"
    if scope["path"] == "/answer-early":
        # Asks for the body in a task of its own, and answers before it has come.
        LISTENERS.add(listener := asyncio.ensure_future(receive()))
        listener.add_done_callback(LISTENERS.discard)
        await asyncio.sleep(0.05)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"early"})
        return
    messages = [await receive()]
    while messages[-1].get("more_body", False):
        messages.append(await receive())
    if messages[-1]["type"] == "http.disconnect":
        return
    body = b"".join(bytes(m.get("body", b"")) for m in messages)
    if scope["path"] == "/raise":
        raise RuntimeError(f"the app broke with a body of {len(body)} bytes")
    text = b"%d %d %d" % (len(body), len(messages), body.count(b"x"))
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", b"%d" % len(text))],
        }
    )
    await send({"type": "http.response.body", "body": text})


@contextlib.contextmanager
def serving(app: Any = echo_app, **protocol: Any) -> Iterator[int]:
    """``app`` under uvicorn with oipcodec's protocol (keyword arguments ``protocol``), in
    a thread; its port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    protocol.setdefault("body_timeout", BODY_TIMEOUT)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            http=functools.partial(HttpProtocol, **protocol),
            lifespan="off",
            log_config=None,
        )
    )
    loop = asyncio.new_event_loop()
    thread = threading.Thread(
        target=lambda: loop.run_until_complete(server.serve(sockets=[sock])), daemon=True
    )
    thread.start()
    try:
        assert wait_until(lambda: server.started)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)
        loop.close()
        sock.close()
    assert not thread.is_alive()


@pytest.fixture
def quiet_server_log() -> Iterator[None]:
    """The server's error log off: pytest keeps each record it captures, and a record of an
    exception keeps the exception's traceback, with the request's frames, to the test's end."""
    logger = logging.getLogger("oipcodec.server")
    disabled, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = disabled


# ------------------------------------------------------------------------------ item 5


def abort_mid_body(port: int, path: str = "/") -> None:
    with connect(port) as sock:
        sock.sendall(head(path, SIZE) + b"x" * (1 << 16))
        # The server allocated the body's buffer: the app asked for the body.
        assert wait_until(lambda: traced_now() > BASE[0] + SIZE // 2)


BASE = [0]


def test_an_aborted_upload_frees_its_buffer_without_the_cycle_collector() -> None:
    budget = BodyBudget(4 * SIZE)
    with serving(max_body_buffer=SIZE, body_budget=budget) as port, no_cycle_collector():
        with traced():
            BASE[0] = traced_now()
            for _ in range(3):
                abort_mid_body(port)
                assert wait_until(lambda: traced_now() < BASE[0] + SIZE // 4), (
                    f"{(traced_now() - BASE[0]) >> 20} MiB still held after the client left"
                )
        assert wait_until(lambda: budget.reserved == 0), budget.reserved
        with connect(port) as sock:  # still served, and into one buffer
            sock.sendall(head("/", 100) + b"x" * 100)
            assert answer_of(sock) == (200, b"100 1 100")


def test_a_stalled_upload_gets_408_and_frees_its_buffer() -> None:
    budget = BodyBudget(4 * SIZE)
    serve = serving(max_body_buffer=SIZE, body_budget=budget)
    with serve as port, no_cycle_collector(), traced(), connect(port) as sock:
        BASE[0] = traced_now()
        sock.sendall(head("/", SIZE) + b"x" * (1 << 16))
        assert wait_until(lambda: traced_now() > BASE[0] + SIZE // 2)
        status, _ = answer_of(sock)  # after BODY_TIMEOUT without a byte
        assert status == 408
        # The connection lingers (the client has not closed): the buffer goes at once.
        assert wait_until(lambda: traced_now() < BASE[0] + SIZE // 4), (
            f"{(traced_now() - BASE[0]) >> 20} MiB still held after the 408"
        )
        assert budget.reserved == 0


def test_an_app_that_raises_with_the_body_frees_it(quiet_server_log: None) -> None:
    with serving(max_body_buffer=SIZE) as port, no_cycle_collector(), traced():
        BASE[0] = traced_now()
        for _ in range(2):
            with connect(port) as sock:
                sock.sendall(head("/raise", SIZE))
                sock.sendall(b"x" * SIZE)
                assert answer_of(sock)[0] == 500
            assert wait_until(lambda: traced_now() < BASE[0] + SIZE // 4), (
                f"{(traced_now() - BASE[0]) >> 20} MiB still held after the 500"
            )


def test_an_answer_before_the_body_frees_its_buffer_and_keeps_the_framing() -> None:
    """The app answers while its body is still being received into the buffer: the buffer
    and its budget go with the answer, and the rest of the body is dropped as it comes, up
    to the next request on the connection."""
    budget = BodyBudget(4 * SIZE)
    serve = serving(max_body_buffer=SIZE, body_budget=budget)
    with serve as port, no_cycle_collector(), traced(), connect(port) as sock:
        BASE[0] = traced_now()
        sock.sendall(head("/answer-early", SIZE) + b"x" * (1 << 16))
        assert answer_of(sock) == (200, b"early")
        assert wait_until(lambda: traced_now() < BASE[0] + SIZE // 4), (
            f"{(traced_now() - BASE[0]) >> 20} MiB still held after the answer"
        )
        assert budget.reserved == 0
        sock.sendall(b"x" * (SIZE - (1 << 16)) + head("/", 3) + b"xxx")
        assert answer_of(sock) == (200, b"3 1 3")


@pytest.fixture(scope="module")
def rest_port() -> Iterator[int]:
    """oipcodec's REST app in a thread: bodies up to 32 MiB, inflated ones up to 64 MiB, one
    codec thread."""
    limits = Limits(
        max_body_bytes=32 << 20,
        max_decompressed_bytes=64 << 20,
        body_timeout_seconds=BODY_TIMEOUT,
    )
    with background(
        limits=limits, grpc_port=None, process=False, codec_threads=1, log_level="critical"
    ) as running:
        assert running.http_port is not None
        yield running.http_port


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        (IDENTITY, ()),  # not JSON: a DecodeError, answered 400
        # Triton's raw binary request to a model of two inputs: an InvalidArgumentError, a
        # RequestError answered as it is (it was kept in a cycle with the frames that had
        # the body)
        ("/v2/models/simple/infer", ("Inference-Header-Content-Length: 0",)),
    ],
)
def test_a_refused_request_body_is_freed_by_the_rest_app(
    rest_port: int, path: str, headers: tuple[str, ...]
) -> None:
    """A 24 MiB body refused with 400: the body is gone with the request (the error's
    traceback holds the frames that had it; nothing may keep the error)."""
    with no_cycle_collector(), traced():
        BASE[0] = traced_now()
        for _ in range(2):
            with connect(rest_port) as sock:
                sock.sendall(head(path, SIZE, *headers) + b"x" * SIZE)
                assert answer_of(sock)[0] == 400
            assert wait_until(lambda: traced_now() < BASE[0] + SIZE // 4), (
                f"{(traced_now() - BASE[0]) >> 20} MiB still held after the 400"
            )


# ------------------------------------------------------------------------------ item 6


def test_head_only_connections_reserve_at_most_the_budget() -> None:
    """40 connections each announce a 4 MiB body and send 10 bytes of it: the buffers
    reserved stay within the budget (4 bodies); the other bodies come in pieces, and every
    body, once sent, is answered right."""
    size, count = 4 << 20, 40
    budget = BodyBudget(4 * size)
    # A body timeout longer than it takes to send the 40 bodies one after the other.
    serve = serving(max_body_buffer=size, body_budget=budget, body_timeout=TIMEOUT)
    with serve as port, no_cycle_collector():
        socks = [connect(port) for _ in range(count)]
        try:
            with traced():
                base = traced_now()
                for sock in socks:
                    sock.sendall(head("/", size) + b"x" * 10)
                # Every request is in the app, waiting for its body.
                assert wait_until(
                    lambda: budget.reserved == budget.limit and budget.overflows == count - 4
                ), (budget.reserved, budget.overflows)
                held = traced_now() - base
            assert held < budget.limit + (2 << 20), f"{held >> 20} MiB held"
            for sock in socks:
                sock.sendall(b"x" * (size - 10))
            answers = [answer_of(sock) for sock in socks]
        finally:
            for sock in socks:
                sock.close()
    assert all(status == 200 for status, _ in answers), answers
    lengths = [body.split() for _, body in answers]
    assert all(n == b"%d" % size and xs == b"%d" % size for n, _, xs in lengths), lengths
    one_buffer = sum(1 for _, messages, _ in lengths if messages == b"1")
    assert one_buffer >= 4  # the reserved ones came whole
    assert budget.peak <= budget.limit
    assert wait_until(lambda: budget.reserved == 0)


def test_the_budget_default_and_configuration() -> None:
    from oipcodec.server.config import ServerConfig

    assert ServerConfig().body_budget_bytes() == 4 * (64 << 20)
    assert ServerConfig(limits=Limits(max_body_bytes=1 << 20)).body_budget_bytes() == 4 << 20
    assert ServerConfig(body_budget=5).body_budget_bytes() == 5
    with pytest.raises(ValueError, match="body_budget must be >= 0 bytes, got -1"):
        ServerConfig(body_budget=-1)
    with pytest.raises(ValueError, match="a body budget must be >= 0 bytes"):
        BodyBudget(-1)


# ------------------------------------------------------------------------------ item 7


def bomb(inflated: int) -> bytes:
    """gzip of ``inflated`` zero bytes (about 1000 times smaller), made in pieces."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    parts = [deflater.compress(zeros) for _ in range(inflated >> 20)]
    return b"".join(parts) + deflater.flush()


BOMB = bomb(1 << 30)  # 1 GiB of zeros in about 1 MB


def send_bomb(port: int) -> socket.socket:
    sock = connect(port)
    sock.sendall(head(IDENTITY, len(BOMB), "Content-Encoding: gzip") + BOMB)
    return sock


def test_a_gzip_bomb_is_413_and_its_inflated_bytes_are_freed(rest_port: int) -> None:
    assert len(BOMB) < 2 << 20
    with no_cycle_collector(), traced():
        BASE[0] = traced_now()
        for _ in range(2):
            with send_bomb(rest_port) as sock:
                status, body = answer_of(sock)
            assert status == 413, body
            assert b"inflates past the limit" in body
            assert wait_until(lambda: traced_now() < BASE[0] + (8 << 20)), (
                f"{(traced_now() - BASE[0]) >> 20} MiB still held after the bomb"
            )


def test_a_health_probe_is_answered_while_bombs_are_inflated(rest_port: int) -> None:
    """8 bombs in flight on a server with one codec thread: they are inflated there, one
    after the other, and a health probe sent after them is answered before any of them (on
    the event loop, the probe waited for the first bomb at least: a bomb takes tenths of a
    second to inflate to the 64 MiB limit)."""
    with connect(rest_port) as probe:
        bombs = [send_bomb(rest_port) for _ in range(8)]
        try:
            probe.sendall(b"GET /v2/health/ready HTTP/1.1\r\nHost: test\r\n\r\n")
            assert answer_of(probe)[0] == 200
            # How many bombs were answered by then: the loop was not held by them.
            answered, _, _ = select.select(bombs, [], [], 0)
            assert not answered, f"{len(answered)} of the bombs were answered before the probe"
            statuses = [answer_of(sock)[0] for sock in bombs]
        finally:
            for sock in bombs:
                sock.close()
    assert statuses == [413] * 8
