"""The native front end (server/http11/native.py, the Connection of _native/http11.pyx) under
a real uvicorn on 127.0.0.1, with raw sockets: probes from bytes, slots called once per
request, pipelined answers in order and in one write, hand-over to oipcodec's Python protocol
mid-connection (answered byte for byte as that protocol alone answers), partial heads and
bodies, a client leaving while an answer is pending, the keep-alive timeout. The FastPath is a
stand-in here (``Routes``): the real one's answers are checked in test_server_fastpath.py."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from oipcodec import kernels
from tests.server.http11.test_server_protocol import BODY_TIMEOUT, Conn, get, post, run_app

pytest.importorskip("uvicorn", reason="the server extra is not installed")

import uvicorn

from oipcodec.server.http11 import HttpProtocol
from oipcodec.server.http11.native import NativeProtocol, native_protocol_available

pytestmark = pytest.mark.skipif(
    not native_protocol_available(), reason="the native front end is not built"
)

TIMEOUT = 10
READY = (200, b"content-type: application/json\r\ncontent-length: 14\r\n", b'{"ready":true}')
CANCELLED = threading.Event()
#: Set when a stand-in's later answer is ready (its wait not cancelled).
FINISHED = threading.Event()


def _answer(body: bytes) -> tuple[int, bytes, bytes]:
    return 200, b"content-type: text/plain\r\ncontent-length: %d\r\n" % len(body), body


class Slot:
    """A stand-in of fastpath.Slot: answers at once, declines (None), or answers later."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.calls = 0

    def infer(self, body: Any, header_length: int) -> Any:
        self.calls += 1
        assert isinstance(body, memoryview)
        text = b"%s %d %s" % (self.how.encode(), header_length, bytes(body))
        if self.how == "none":
            return None
        if self.how == "sync":
            return _answer(text)
        if self.how == "task":  # a task of its own: left to finish if the client goes away
            return asyncio.get_running_loop().create_task(self._later(text))
        return self._later(text)

    async def _later(self, text: bytes) -> tuple[int, bytes, bytes]:
        try:
            await asyncio.sleep({"hang": 3600, "slow": 0.5, "task": 0.3}.get(self.how, 0.01))
        except asyncio.CancelledError:
            CANCELLED.set()
            raise
        FINISHED.set()
        return _answer(text)


class Routes:
    """A stand-in of fastpath.FastPath: ``generation`` and ``routes``."""

    def __init__(self) -> None:
        self.generation = 1
        self.slots = {how: Slot(how) for how in ("sync", "none", "async", "hang", "slow", "task")}
        self.routes: dict[bytes, Any] = {b"GET /v2/health/ready": READY}
        self.routes.update({b"POST /" + how.encode(): s for how, s in self.slots.items()})


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """What the Python protocol serves after a hand-over: the probe and the slots' paths as
    the stand-in answers them, else an echo of the request."""
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"] == "/v2/health/ready":
        status, lines, text = READY
    elif scope["path"] in ("/sync", "/async", "/none"):
        length = dict(scope["headers"]).get(b"inference-header-content-length", b"-1")
        status, lines, text = _answer(b"%s %s %s" % (scope["path"][1:].encode(), length, body))
    else:
        echo = b"%s %s %s %s" % (
            scope["method"].encode(),
            scope["raw_path"],
            scope["query_string"],
            body,
        )
        status, lines, text = _answer(echo)
    headers = [tuple(line.split(b": ", 1)) for line in lines.split(b"\r\n") if line]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})


def serving(fast_path: Any = None, protocol_options: Any = None, **config: Any) -> Any:
    """``app`` under uvicorn with NativeProtocol (``fast_path`` given) or HttpProtocol."""
    options = dict(protocol_options or {})
    if fast_path is not None:
        options["fast_path"] = fast_path
    http = HttpProtocol if fast_path is None else NativeProtocol
    return run_app(app, options, http, server_header=False, access_log=False, **config)


ROUTES = Routes()


@pytest.fixture(scope="module")
def native() -> Iterator[tuple[uvicorn.Server, int]]:
    with serving(ROUTES, timeout_keep_alive=1) as running:
        yield running


@pytest.fixture(scope="module")
def python() -> Iterator[tuple[uvicorn.Server, int]]:
    with serving(timeout_keep_alive=1) as running:
        yield running


def _talk(port: int, data: bytes, pieces: int = 0) -> bytes:
    """``data`` sent (at once, or in sends of ``pieces`` bytes), then everything the server
    writes until it closes; uvicorn's date header blanked."""
    with Conn(port) as conn:
        if pieces:
            conn.send_slowly(data, pieces)
        else:
            conn.send(data)
        return re.sub(rb"date: [^\r]*\r\n", b"date: -\r\n", conn.read_to_close())


CLOSE = get("/v2/health/ready", "Connection: close")


def test_a_probe_is_answered_from_its_bytes(native: Any) -> None:
    server, port = native
    before = server.server_state.total_requests
    got = _talk(port, get("/v2/health/ready") + CLOSE)
    one = b"HTTP/1.1 200 OK\r\ndate: -\r\n" + READY[1] + b"\r\n" + READY[2]
    last = b"HTTP/1.1 200 OK\r\ndate: -\r\n" + READY[1] + b"connection: close\r\n\r\n" + READY[2]
    assert got == one + last
    assert server.server_state.total_requests == before + 2


def test_fast_answers_are_the_python_protocols_bytes(native: Any, python: Any) -> None:
    """The same bytes to both servers (the stand-in answers as the app does): the same
    answers, with the slots called once per request."""
    slots = ROUTES.slots
    calls = slots["sync"].calls, slots["async"].calls
    requests = [
        get("/v2/health/ready"),
        get("/v2/health/ready", version="1.0"),
        post("/sync", b"abc", "Inference-Header-Content-Length: 2"),
        post("/async", b"abc") + post("/sync", b"de", "Connection: close"),
    ]
    for data in requests:
        assert _talk(native[1], data + CLOSE) == _talk(python[1], data + CLOSE)
    assert (slots["sync"].calls, slots["async"].calls) == (calls[0] + 2, calls[1] + 1)


HAND_OVERS = {
    "chunked after a fast one": get("/v2/health/ready")
    + b"POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    "Expect: 100-continue": get("/v2/health/ready") + post("/x", b"hello", "Expect: 100-continue"),
    "a query string": get("/v2/health/ready") + get("/v2/health/ready?x=1"),
    "a route not in the table": get("/v2/health/ready") + get("/v2/health/live"),
    "HEAD": get("/v2/health/ready") + b"HEAD /v2/health/ready HTTP/1.1\r\nHost: t\r\n\r\n",
    "a slot that declines": get("/v2/health/ready") + post("/none", b"xyz"),
    "a malformed head": get("/v2/health/ready") + b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
    "a body over the fast limit": post("/x", b"y" * (65 << 10)),
    "a head over the fast limit": get("/v2/health/ready", "X-Big: " + "z" * 9000),
}


@pytest.mark.parametrize("data", HAND_OVERS.values(), ids=HAND_OVERS.keys())
def test_a_hand_over_answers_as_the_python_protocol(native: Any, python: Any, data: bytes) -> None:
    assert _talk(native[1], data + CLOSE) == _talk(python[1], data + CLOSE)


def test_heads_and_bodies_in_pieces(native: Any, python: Any) -> None:
    """Byte by byte (the fast requests kept, then handed over at the route not in the
    table), the same answers. A body whose rest comes within PIECE_WAIT of its head (a
    client that writes the head and the body apart) stays on the fast path; one that comes
    later goes to the Python protocol."""
    calls = ROUTES.slots["sync"].calls
    data = get("/v2/health/ready") + post("/sync", b"01234") + post("/x", b"0123456789")
    assert _talk(native[1], data + CLOSE, pieces=1) == _talk(python[1], data + CLOSE, pieces=1)
    assert ROUTES.slots["sync"].calls == calls + 1
    data = post("/sync", b"0123456789")  # the head whole, the body in two reads
    for pause, fast in ((0.02, 2), (0.8, 0)):
        calls = ROUTES.slots["sync"].calls
        with Conn(native[1]) as conn:
            for _ in range(2):  # the second request on the connection as well
                conn.send(data[:-4])
                time.sleep(pause)
                conn.send(data[-4:])
                assert conn.read_answer().body == b"sync -1 0123456789"
        assert ROUTES.slots["sync"].calls == calls + fast, pause


def test_pipelined_answers_come_in_order(native: Any) -> None:
    requests = [
        get("/v2/health/ready"),
        post("/sync", b"a"),
        post("/async", b"b"),
        post("/sync", b"c"),
    ]
    got = _talk(native[1], b"".join(requests * 25) + CLOSE)
    bodies = re.findall(rb"\r\n\r\n(\{\"ready\":true\}|sync -1 .|async -1 .)", got)
    assert bodies == [b'{"ready":true}', b"sync -1 a", b"async -1 b", b"sync -1 c"] * 25 + [
        b'{"ready":true}'
    ]


#: Requests cut at every byte (test_a_request_cut_anywhere_stays_on_the_fast_path).
CUT = {
    "a probe": get("/v2/health/ready"),
    "a binary inference": post("/sync", b"0123456789", "Inference-Header-Content-Length: 4"),
    "pipelined": get("/v2/health/ready")
    + post("/async", b"ab")
    + post("/sync", b"cd", "Connection: keep-alive")
    + get("/v2/health/ready", "Connection: close"),
}


@pytest.mark.parametrize("data", CUT.values(), ids=CUT.keys())
def test_a_request_cut_anywhere_stays_on_the_fast_path(data: bytes) -> None:
    """Fed in two reads, cut at every byte (heads split anywhere, the next of pipelined
    requests begun): the same bytes written as for one read, every request answered on the
    fast path (the stand-in transport cannot be handed over: set_protocol raises)."""
    loop = asyncio.new_event_loop()

    def written(*reads: bytes) -> bytes:
        proto, transport, state = _connection(ROUTES, loop)
        try:
            for read in reads:
                _feed(proto, read)
            for _ in range(100):  # the async slot's answer, then what was read meanwhile
                if state.total_requests == data.count(b" HTTP/1."):
                    break
                loop.run_until_complete(asyncio.sleep(0.001))
            assert state.total_requests == data.count(b" HTTP/1.")
            return b"".join(transport.written)
        finally:
            proto.connection_lost(None)

    try:
        whole = written(data)
        assert whole.count(b"HTTP/1.1 200 OK\r\n") == data.count(b" HTTP/1.")
        for cut in range(1, len(data)):
            assert written(data[:cut], data[cut:]) == whole, cut
    finally:
        loop.close()


def test_a_head_in_pieces_over_the_head_limit_is_handed_over_at_once() -> None:
    """Waited for only up to the head limit: past it (no end yet), handed over to the Python
    protocol (which answers 431) with no wait (the stand-in transport's set_protocol
    raises)."""
    loop = asyncio.new_event_loop()
    try:
        proto, _, _ = _connection(ROUTES, loop)
        head = get("/v2/health/ready", "X-Pad: " + "p" * (8 << 10))
        _feed(proto, head[: 8 << 10])
        with pytest.raises(NotImplementedError):
            _feed(proto, head[8 << 10 : (8 << 10) + 2])
        proto.connection_lost(None)
    finally:
        loop.close()


def test_heads_cut_on_the_wire_answer_as_the_python_protocol(native: Any, python: Any) -> None:
    """Pipelined requests sent in two pieces, cut inside a head (a few places, each side of
    the request line's end and the empty line): the Python protocol's bytes, none handed."""
    server, port = native
    data = CUT["pipelined"]
    second = len(get("/v2/health/ready"))
    cuts = [3, 20, data.index(b"\r\n") + 1, second - 2, second + 9, len(data) - 3]
    before = server.server_state.total_requests
    for cut in cuts:
        got = []
        for port_ in (port, python[1]):
            with Conn(port_) as conn:
                conn.send(data[:cut])
                time.sleep(0.02)
                conn.send(data[cut:])
                got.append(re.sub(rb"date: [^\r]*\r\n", b"", conn.read_to_close()))
        assert got[0] == got[1], cut
    assert server.server_state.total_requests == before + 4 * len(cuts)


def test_a_head_that_stops_arriving_goes_to_the_python_protocol() -> None:
    """Waited for PIECE_WAIT, then handed over with what came, whose head timeout
    (body_timeout, BODY_TIMEOUT here) answers 408 as the Python protocol alone does."""
    from oipcodec._native.http11 import PIECE_WAIT

    with serving(ROUTES) as (server, port), Conn(port) as conn:
        conn.send(get("/v2/health/ready")[:20])
        time.sleep(PIECE_WAIT / 2)
        assert _protocols(server) == ["NativeProtocol"]
        started = time.monotonic()
        answer = conn.read_to_close()
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert PIECE_WAIT / 2 + BODY_TIMEOUT - 0.1 < waited < PIECE_WAIT + BODY_TIMEOUT + 2


def _protocols(server: uvicorn.Server) -> list[str]:
    return sorted(type(p).__name__ for p in server.server_state.connections)


def test_reads_that_cut_a_request_are_waited_for(native: Any) -> None:
    """Pipelined requests over many reads (the buffer filled each time) and a body larger
    than the first buffer stay on the fast path."""
    server, port = native
    calls = ROUTES.slots["sync"].calls
    before = server.server_state.total_requests
    body = b"b" * (40 << 10)
    with Conn(port) as conn:
        conn.send(get("/v2/health/ready") * 2000 + post("/sync", body))
        for _ in range(2000):
            assert conn.read_answer().body == READY[2]
        assert conn.read_answer().body == b"sync -1 " + body
        assert _protocols(server) == ["NativeProtocol"]
    assert ROUTES.slots["sync"].calls == calls + 1
    assert server.server_state.total_requests == before + 2001


def test_a_stalled_head_gets_the_python_protocols_408(native: Any, python: Any) -> None:
    """Waited for (it filled the buffer) until the keep-alive timeout, then handed over: the
    Python protocol's head timeout answers it."""
    one = get("/v2/health/ready")
    whole = (1 << 15) // len(one)  # requests, then the start of one more fill 32 KiB
    data = one * whole + one[: (1 << 15) - whole * len(one)]
    assert _talk(native[1], data) == _talk(python[1], data)


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.closed = False
        self.reading = True

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def test_pipelined_answers_go_in_one_write_per_read() -> None:
    loop = asyncio.new_event_loop()
    try:
        proto, transport, state = _connection(ROUTES, loop)
        _feed(proto, (get("/v2/health/ready") + post("/sync", b"x")) * 50)
        assert len(transport.written) == 1
        assert transport.written[0].count(b"HTTP/1.1 200 OK\r\ndate: now\r\n") == 100
        assert state.total_requests == 100 and proto in state.connections
        proto.connection_lost(None)
        assert not state.connections
    finally:
        loop.close()


def _connection(routes: Any, loop: asyncio.AbstractEventLoop) -> tuple[Any, _Transport, Any]:
    config = uvicorn.Config(app, lifespan="off", log_config=None, access_log=False)
    state = type("State", (), {})()
    state.connections, state.tasks, state.total_requests = set(), set(), 0
    state.default_headers = [(b"date", b"now")]
    proto = NativeProtocol(config, state, None, loop, fast_path=routes)
    transport = _Transport()
    proto.connection_made(transport)
    return proto, transport, state


def _feed(proto: Any, data: bytes) -> None:
    proto.get_buffer(-1)[: len(data)] = data
    proto.buffer_updated(len(data))


def test_many_routes_and_a_new_generation() -> None:
    """Every one of 600 routes is found (the hash table of the request lines); a new
    generation of the routes is what the next read answers from, on every connection."""
    loop = asyncio.new_event_loop()
    try:
        routes = Routes()
        routes.routes = {b"GET /m%d" % i: _answer(b"%d" % i) for i in range(600)}
        first, written, _ = _connection(routes, loop)
        second, written_too, _ = _connection(routes, loop)
        for i in range(0, 600, 7):
            _feed(first, get(f"/m{i}"))
            assert written.written[-1].endswith(b"\r\n\r\n%d" % i)
        routes.routes = {b"GET /m1": _answer(b"new")}
        routes.generation += 1
        for proto, transport in ((first, written), (second, written_too)):
            _feed(proto, get("/m1"))
            assert transport.written[-1].endswith(b"\r\n\r\nnew")
    finally:
        loop.close()


def test_nothing_is_answered_while_the_transport_is_full() -> None:
    """pause_writing: requests wait in the buffer, reading stops when it is full (it does not
    grow for them); resume_writing answers them, in one write, and reads again."""
    loop = asyncio.new_event_loop()
    try:
        proto, transport, state = _connection(ROUTES, loop)
        proto.pause_writing()
        one = get("/v2/health/ready")
        while transport.reading:
            room = len(proto.get_buffer(-1))
            assert room, "an empty buffer given to the event loop"
            whole = min(room // len(one), 100)
            _feed(proto, one * whole if whole else one[:room])
        assert transport.written == [] and state.total_requests == 0
        proto.resume_writing()
        assert transport.reading and len(transport.written) == 1
        assert state.total_requests == (1 << 15) // len(one)
    finally:
        loop.close()


def test_a_head_over_the_python_protocols_limit_gets_its_431() -> None:
    with serving(ROUTES, protocol_options={"max_head_bytes": 100}) as (_, port):
        data = get("/v2/health/ready", "X-Pad: " + "p" * 100)
        assert b"HTTP/1.1 431 " in _talk(port, data)
        assert b'{"ready":true}' in _talk(port, get("/v2/health/ready", "Connection: close"))


def test_without_a_fast_path_the_connection_is_handed_over_at_once() -> None:
    """An app with no FastPath (not a RestApp) or uvicorn's access log on: every
    connection is the Python protocol's from its first byte."""
    loop = asyncio.new_event_loop()
    handed: list[Any] = []
    try:
        for routes, logged in ((None, False), (ROUTES, True)):
            config = uvicorn.Config(app, lifespan="off", log_config=None, access_log=logged)
            state = type("State", (), {})()
            state.connections, state.tasks, state.total_requests = set(), set(), 0
            state.default_headers = []
            transport = _Transport()
            transport.set_protocol = handed.append  # type: ignore[method-assign]
            logger = logging.getLogger("uvicorn.access")
            handler = logging.NullHandler()
            logger.addHandler(handler)
            try:
                NativeProtocol(config, state, None, loop, fast_path=routes).connection_made(
                    transport
                )
            finally:
                logger.removeHandler(handler)
            assert isinstance(handed[-1], HttpProtocol) and state.connections == {handed[-1]}
    finally:
        loop.close()


def test_a_client_leaving_while_an_answer_is_pending(native: Any) -> None:
    server, port = native
    CANCELLED.clear()
    with Conn(port) as conn:
        conn.send(post("/hang", b"x"))
        time.sleep(0.1)
    assert CANCELLED.wait(TIMEOUT), "the pending answer's task was not cancelled"
    deadline = time.monotonic() + TIMEOUT
    while server.server_state.connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not server.server_state.connections


def test_a_task_of_its_own_runs_to_its_end_when_the_client_leaves(native: Any) -> None:
    """A slot's task (not a coroutine) is answered when the client stays, and left to finish,
    not cancelled, when it goes away (the Python protocol lets the app finish too)."""
    port = native[1]
    with Conn(port) as conn:
        conn.send(post("/task", b"y"))
        assert conn.read_answer().body == b"task -1 y"
    CANCELLED.clear()
    FINISHED.clear()
    with Conn(port) as conn:
        conn.send(post("/task", b"x"))
        time.sleep(0.1)
    assert FINISHED.wait(TIMEOUT), "the task did not finish"
    assert not CANCELLED.is_set()


def test_an_idle_connection_is_closed_after_the_keep_alive_timeout(native: Any) -> None:
    with Conn(native[1]) as conn:
        conn.send(get("/v2/health/ready"))
        assert conn.read_answer().status == 200
        began = time.monotonic()
        assert conn.closed_by_server()
        assert 0.5 < time.monotonic() - began < 3


def test_graceful_shutdown_waits_for_the_pending_answer() -> None:
    with serving(ROUTES) as (server, port), Conn(port) as conn:
        conn.send(post("/slow", b"x") + get("/v2/health/ready"))
        time.sleep(0.1)
        server.should_exit = True
        answer = conn.read_answer()
        assert answer.body == b"slow -1 x" and answer.closes
        assert conn.closed_by_server()  # the probe after it never answered


def test_with_pure_kernels_the_python_protocol_serves() -> None:
    assert native_protocol_available() == (kernels.IMPLEMENTATION == "native")
