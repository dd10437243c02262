"""Differential fuzzing of HTTP/1.1 request framing: oipcodec's protocol against llhttp.

The input is a byte stream as a client would send it on one connection. It goes to
httptools' ``HttpRequestParser`` (llhttp, the parser of uvicorn's httptools protocol) and to
oipcodec's :class:`~oipcodec.server.http11.HttpProtocol`, driven in-process: a stand-in
transport, the bytes delivered through ``get_buffer``/``buffer_updated`` as the event loop
would (whole, or in pieces of sizes picked from the input's CRC, with a Content-Length body
received straight into its buffer or, for some inputs, handed over in pieces), and an ASGI
app that reads every body to its end and answers 200. Both must agree on:

- the requests, in order: method, target, header fields (names in lower case, values without
  surrounding whitespace, as both hand them on) and body;
- accept vs refuse: llhttp raising an error where oipcodec answers 400/501/505 (and closes).

Where oipcodec closes the connection after an answer (``Connection: close``, HTTP/1.0) the
bytes after it are never read, so the comparison ends there; llhttp closing (``Connection:
close``) where oipcodec would go on is a disagreement. oipcodec decides on a head when its
empty line has arrived, llhttp at the first bad byte (or, for an HTTP/0.9 line, at its end):
when llhttp refused or took a request more and oipcodec is still waiting for the end of a
head, oipcodec gets a CRLF CRLF more and must then agree.

The documented exceptions (``EXCEPTIONS``): where llhttp accepts a request that RFC 9112
refuses or does not define, oipcodec answers 4xx/5xx and closes; no byte after it is read, so
there is no framing to disagree on. An input that meets one is counted, not failed.

Input layout: the whole input is the stream. Options as for every harness (fuzz/README.md).
"""

# ruff: noqa: E402  (oipcodec is imported after atheris may have instrumented it)
from __future__ import annotations

import asyncio
import contextlib
import random
import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httptools

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus" / "http_framing"

with contextlib.suppress(ImportError):
    import atheris

    if "oipcodec" not in sys.modules and Path(sys.argv[0]).name.startswith("fuzz_"):
        with atheris.instrument_imports(include=["oipcodec.server"]):
            import oipcodec.server.http11  # noqa: F401

from oipcodec.server.http11 import HttpProtocol


class Mismatch(AssertionError):
    """oipcodec and llhttp frame a stream differently."""


@dataclass(frozen=True)
class Request:
    method: bytes
    target: bytes
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes


def _fields(pairs: Iterable[tuple[bytes, bytes]]) -> tuple[tuple[bytes, bytes], ...]:
    return tuple((name.lower(), value.strip(b" \t")) for name, value in pairs)


@dataclass
class Outcome:
    """What one side made of a stream."""

    requests: list[Request] = field(default_factory=list)  # complete ones, in order
    heads: list[Any] = field(default_factory=list)  # every head parsed (the last may be partial)
    refused: str = ""  # why, if the stream was refused
    closed: bool = False  # the connection ends after the last request (not refused)
    pending: bool = False  # a request was begun and not finished
    upgrade: bool = False  # llhttp: the rest of the stream is another protocol


# --------------------------------------------------------------------------- llhttp


class _Llhttp:
    """httptools' callbacks, collecting requests."""

    def __init__(self) -> None:
        self.out = Outcome()
        self.parser = httptools.HttpRequestParser(self)
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.in_head = False
        self.keep_alive = True

    def on_message_begin(self) -> None:
        self.url, self.headers, self.body, self.in_head = b"", [], [], True
        self.out.pending = True

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.in_head:  # (trailer fields are checked by llhttp, not handed on by oipcodec)
            self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.in_head = False
        parser = self.parser
        self.out.heads.append(
            SimpleNamespace(
                method=parser.get_method(),
                version=parser.get_http_version(),
                target=self.url,
                headers=_fields(self.headers),
            )
        )

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        head = self.out.heads[-1]
        self.out.requests.append(
            Request(head.method, head.target, head.headers, b"".join(self.body))
        )
        self.out.pending = False
        self.keep_alive = self.parser.should_keep_alive()


def llhttp(stream: bytes) -> Outcome:
    ref = _Llhttp()
    try:
        ref.parser.feed_data(stream)
    except httptools.HttpParserUpgrade:
        ref.out.upgrade = True
    except httptools.HttpParserError as exc:
        if "Data after `Connection: close`" in str(exc):
            ref.out.closed = True
        else:
            ref.out.refused = f"{type(exc).__name__}: {exc}"
    if not ref.keep_alive and not ref.out.pending:
        ref.out.closed = True
    return ref.out


# --------------------------------------------------------------------------- oipcodec


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.shut = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000)}.get(
            name, default
        )

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def writelines(self, parts: Iterable[Any]) -> None:
        for part in parts:
            self.write(part)

    def close(self) -> None:
        self.shut = True

    def is_closing(self) -> bool:
        return self.shut

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class _Probe(HttpProtocol):
    """The protocol, telling which heads it parsed and what it refused."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.heads: list[Any] = []
        self.bodies: list[bytes] = []
        self.refusal = ""

    def _start_cycle(self, head: Any, path: str, raw_path: bytes, query: bytes) -> None:
        self.heads.append(head)
        super()._start_cycle(head, path, raw_path, query)

    def _refuse(self, status: int, message: str) -> None:
        self.refusal = self.refusal or f"{status} {message}"
        super()._refuse(status, message)


#: The protocol under test reads bodies through this app: every byte, then a 200.
_PROTOCOLS: list[_Probe] = []


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    proto = _PROTOCOLS[-1]
    parts = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return  # the connection went away
        parts.append(bytes(message["body"]))
        if not message.get("more_body", False):
            break
    proto.bodies.append(b"".join(parts))
    headers = [(b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


_LOOP = asyncio.new_event_loop()
_CONFIG = SimpleNamespace(
    loaded=True,
    loaded_app=_app,
    root_path="",
    timeout_keep_alive=3600,
    access_log=False,
    asgi_version="3.0",
)


async def _spin() -> None:
    for _ in range(4):
        await asyncio.sleep(0)


def _settle(proto: _Probe) -> None:
    """Run the loop until nothing moves (the app waits for bytes, or all is answered)."""
    for _ in range(10_000):
        state = (len(proto.heads), len(proto.bodies), proto.start, proto.end, proto.closed)
        _LOOP.run_until_complete(_spin())
        if state == (len(proto.heads), len(proto.bodies), proto.start, proto.end, proto.closed):
            return
    raise Mismatch("oipcodec's protocol never settled")


def ours(stream: bytes, sizes: list[int], max_body_buffer: int = 64 << 20) -> Outcome:
    state = SimpleNamespace(connections=set(), tasks=set(), default_headers=[], total_requests=0)
    proto = _Probe(_CONFIG, state, _loop=_LOOP, body_timeout=None, max_body_buffer=max_body_buffer)
    _PROTOCOLS.append(proto)
    transport = _Transport()
    try:
        proto.connection_made(transport)
        pos = 0
        pieces = iter(sizes) if sizes else iter(())
        while pos < len(stream) and not proto.closed:
            size = next(pieces, len(stream))
            view = memoryview(stream)[pos : pos + size]
            pos += len(view)
            while len(view) and not proto.closed:
                if not proto.reading:
                    _settle(proto)
                    if not proto.reading:
                        raise Mismatch("reading stays paused while the app reads the body")
                buf = proto.get_buffer(len(view))
                n = min(len(buf), len(view))
                buf[:n] = view[:n]
                proto.buffer_updated(n)
                view = view[n:]
            _settle(proto)
        out = Outcome(refused=proto.refusal)
        out.requests = [
            Request(head.method.encode(), head.target, _fields(head.headers), body)
            for head, body in zip(proto.heads, proto.bodies, strict=False)
        ]
        out.heads = list(proto.heads)
        out.closed = proto.closed and not proto.refusal
        left = bytes(proto.buf[proto.start : proto.end]).strip(b"\r\n")
        out.pending = proto.cycle is not None or bool(left and not proto.closed)
        return out
    finally:
        proto.connection_lost(None)
        _settle(proto)
        _PROTOCOLS.remove(proto)


# --------------------------------------------------------------------------- comparison

#: Where llhttp accepts a request and oipcodec refuses it (and closes), deliberately. Each
#: entry: a name, why, and the test on llhttp's head of the request oipcodec refused and
#: oipcodec's reason.
EXCEPTIONS: list[tuple[str, str, Any]] = [
    (
        "version",
        "llhttp parses HTTP/0.9 (a request line without a version) and HTTP/2.0 request lines "
        "as HTTP/1; RFC 9112 defines neither, and oipcodec answers 505 (or 400 for a request "
        "line without a version)",
        lambda head, why: head.version not in ("1.0", "1.1"),
    ),
    (
        "http/1.0 transfer-encoding",
        "RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing; llhttp "
        "decodes it as chunked, oipcodec answers 400",
        lambda head, why: (
            head.version == "1.0" and any(name == b"transfer-encoding" for name, _ in head.headers)
        ),
    ),
    (
        "transfer coding",
        "a transfer coding other than chunked before chunked (`gzip, chunked`): llhttp frames "
        "the body by its chunks and hands on the still-coded body; oipcodec cannot decode it "
        "and answers 501 (RFC 9112 6.1, RFC 9110 15.6.2)",
        lambda head, why: why.startswith("501 the only transfer coding"),
    ),
    (
        "target form",
        "llhttp's target grammar is looser than RFC 9112 3.2 (`*` followed by anything, an "
        "absolute-form of any scheme); oipcodec answers 400 to a target it cannot route",
        lambda head, why: why.startswith("400 malformed request target"),
    ),
]


def _exception(ref: Outcome, our: Outcome, index: int) -> str | None:
    if not our.refused or len(ref.heads) <= index:
        return None
    for name, _, applies in EXCEPTIONS:
        if applies(ref.heads[index], our.refused):
            return name
    return None


def _describe(ref: Outcome, our: Outcome) -> str:
    def side(out: Outcome) -> str:
        lines = [f"    {r!r}" for r in out.requests]
        flags = [f"refused={out.refused!r}" if out.refused else "", "closed" * out.closed]
        flags += ["pending" * out.pending, "upgrade" * out.upgrade]
        return "\n".join([*lines, "    " + " ".join(f for f in flags if f)])

    return f"\n llhttp:\n{side(ref)}\n oipcodec:\n{side(our)}"


def plan(data: bytes) -> tuple[list[int], int]:
    """How oipcodec gets the stream: piece sizes (none: all at once) and max_body_buffer."""
    rng = random.Random(zlib.crc32(data))
    sizes = [] if rng.random() < 0.5 else [rng.choice((1, 2, 3, 7, 16, 64)) for _ in range(64)]
    return sizes, rng.choice((64 << 20, 64 << 20, 3))


def compare(stream: bytes) -> str:
    """Frame ``stream`` both ways; raise :class:`Mismatch` on a disagreement. Returns
    ``"agree"`` or the name of the documented exception that explains the difference."""
    sizes, max_body_buffer = plan(stream)
    ref = llhttp(stream)
    our = ours(stream, sizes, max_body_buffer)
    if our.pending and not our.refused and (ref.refused or len(ref.requests) > len(our.requests)):
        our = ours(stream + b"\r\n\r\n", sizes, max_body_buffer)

    def fail(what: str) -> Mismatch:
        return Mismatch(f"{what}\ninput: {stream!r}{_describe(ref, our)}")

    if ref.upgrade:  # (CONNECT, Upgrade): llhttp hands the rest over; compare up to there
        k = len(ref.requests) - 1
        if our.requests[:k] != ref.requests[:k]:
            raise fail("the requests before an upgrade differ")
        return "upgrade"
    if our.closed:  # oipcodec read nothing after its last answer
        k = len(our.requests)
        if ref.requests[:k] != our.requests:
            raise fail("the requests differ")
        return "agree"
    if ref.closed and not our.closed and len(our.requests) > len(ref.requests):
        raise fail("llhttp closes the connection where oipcodec reads on")
    k = len(our.requests)
    if our.refused and (len(ref.requests) > k or not ref.refused):
        # llhttp accepted (or is still reading) the request oipcodec refused
        if ref.requests[:k] != our.requests:
            raise fail("the requests differ")
        name = _exception(ref, our, k)
        if name is None:
            raise fail("oipcodec refuses what llhttp accepts")
        return name
    if ref.requests != our.requests:
        raise fail("the requests differ")
    if bool(ref.refused) != bool(our.refused):
        raise fail("one side refuses, the other accepts")
    return "agree"


def one_input(data: bytes) -> None:
    compare(data)


# --------------------------------------------------------------------------- inputs

_H = b"Host: x\r\n"
#: Valid streams: one request, pipelined ones, chunked with extensions and trailers.
VALID = [
    b"GET /v2/health/live HTTP/1.1\r\n" + _H + b"\r\n",
    b"GET /v2/models/m?x=1&y=%20 HTTP/1.1\r\n" + _H + b"Accept: */*\r\nX-Empty:\r\n\r\n",
    b"POST /v2/models/m/infer HTTP/1.1\r\n" + _H + b'Content-Length: 11\r\n\r\n{"inputs":1}',
    b"POST /v2/models/m/infer HTTP/1.1\r\n" + _H + b"Content-Type: application/json\r\n"
    b'Transfer-Encoding: chunked\r\n\r\n5;a=b;c="d \\" e"\r\n{"in"\r\n3;x\r\n:1}\r\n'
    b"0;last\r\nX-Trailer: 1\r\nX-Other: two\r\n\r\n",
    b"GET / HTTP/1.1\r\n" + _H + b"\r\nPOST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
    b"\r\nPOST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\n"
    b"GET /c HTTP/1.1\r\nConnection: close\r\n\r\nGET /d HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.0\r\n\r\nGET /after HTTP/1.1\r\n\r\n",
    b"POST /x HTTP/1.0\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi"
    b"GET / HTTP/1.0\r\n\r\n",
    b"HEAD / HTTP/1.1\r\n" + _H + b"Expect: 100-continue\r\nContent-Length: 0\r\n\r\n",
    b"OPTIONS * HTTP/1.1\r\n" + _H + b"\r\nGET http://x:8000/v2?q HTTP/1.1\r\n\r\n",
    b"\r\n\r\nGET  /lenient   HTTP/1.1\r\n" + _H + b"\r\n",
]
#: Every vector of issue 20 (items 1-4), and the cases decided with them.
VECTORS = [
    # item 1
    b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\n"
    b"GET /v2/models/SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,\r\n\r\n"
    b"GET /v2/models/SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n",
    # item 2
    b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"2\r\n{}\r\n0\r\n\nGET /v2/models/SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"2\r\n{}\r\n0\r\nGET /v2/models/SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n",
    *(
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
        + trailer
        + b"\r\n\r\nGET / HTTP/1.1\r\n\r\n"
        for trailer in (b"A: b\x00c", b"A: b\rc", b"A: b\r\n c", b"Ab", b"A: b\nC: d")
    ),
    # item 3
    b"G(T /v2 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /v2\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"FOO /v2 HTTP/1.1\r\nHost: x\r\n\r\n",
    # item 4
    b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab",
    b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
    *(
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + size + b"\r\nab\r\n0\r\n\r\n"
        for size in (b"2 ", b"2 ;a", b"2;a\x01", b"2;a=\x7f", b"2; a", b"2;a =b", b"0002;=b;c=")
    ),
]
#: Framing the issue found sound, kept sound; an example of each documented exception.
OTHERS = [
    b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX-A: b\r\n c\r\n\r\n",
    b"GET / HTTP/1.1\nHost: x\n\n",
    b"GET / HTTP/2.0\r\n\r\n",
    b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"GET ftp://x/ HTTP/1.1\r\n\r\nGET *x HTTP/1.1\r\n\r\n",
]
#: The seed corpus (fuzz/corpus/http_framing/, written by make_corpus.py).
SEEDS = VALID + VECTORS + OTHERS

#: What the mutator inserts: the bytes framing turns on, and fragments of heads.
_BYTES = b'\r\n\x00 \t,;:="\\\x7f\x80\xff0f'
_FRAGMENTS = [
    b"\r\n", b"\r\n\r\n", b"\n", b"\r", b"Transfer-Encoding: chunked\r\n", b"Content-Length: 3\r\n",
    b"Connection: close\r\n", b"chunked", b"HTTP/1.0", b"HTTP/1.1", b"0\r\n\r\n", b";a=b",
    b"GET / HTTP/1.1\r\n\r\n", b"POST ", b" ", b", ", b"Transfer-Encoding:", b"Content-Length:",
]  # fmt: skip


def mutate(rng: random.Random, seeds: list[bytes]) -> bytes:
    """A seed with 1-4 edits: bit flips, cuts, inserted framing bytes or fragments, splices,
    duplicated or deleted slices."""
    data = bytearray(rng.choice(seeds))
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        pos = rng.randint(0, len(data))
        if op == 0 and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif op == 1:
            data = data[:pos]
        elif op in (2, 3):
            data[pos:pos] = bytes([rng.choice(_BYTES)])
        elif op == 4:
            data[pos:pos] = rng.choice(_FRAGMENTS)
        elif op == 5:
            other = rng.choice(seeds)
            data = data[:pos] + other[rng.randint(0, len(other)) :]
        elif op == 6 and data:
            a = rng.randrange(len(data))
            data[pos:pos] = data[a : a + rng.randint(1, 32)]
        elif op == 7 and data:
            del data[pos : pos + rng.randint(1, 8)]
    return bytes(data)


def corpus() -> list[bytes]:
    return [p.read_bytes() for p in sorted(CORPUS.iterdir())] if CORPUS.is_dir() else SEEDS


def streams(count: int, seed: int) -> Iterator[bytes]:
    """The corpus, then ``count`` mutations of it, the same for the same ``seed``."""
    seeds = corpus()
    yield from seeds
    rng = random.Random(seed)
    for _ in range(count):
        yield mutate(rng, seeds)


def run(count: int, seed: int) -> Counter[str]:
    """:func:`compare` on :func:`streams`; how many agreed or met each exception."""
    tally: Counter[str] = Counter()
    for stream in streams(count, seed):
        tally[compare(stream)] += 1
    return tally


if __name__ == "__main__":
    from _harness import main

    main(one_input, mutate=mutate)
