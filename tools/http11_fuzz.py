"""Differential fuzzing of the fast path's HTTP/1.1 head parser (``oipcodec.kernels.parse_head``,
csrc/oipcodec/http/head.h) against llhttp (httptools), the parser whose framing the server keeps.

Each input is a byte stream of one connection: real request heads mutated (letter case,
spaces and tabs, duplicated and odd fields, Content-Length / Transfer-Encoding combinations,
obs-fold, bare CR and LF, NUL, long lines, versions), alone or pipelined. Whenever the parser
calls a head "fast", llhttp, fed the same stream, must take exactly the same bytes as the head
(its headers end at the same byte, not one before), with the same method, target, version and
keep-alive, and end the message after exactly Content-Length body bytes; the next head is then
read after it, as the native protocol would. "partial" and "other" heads go to the Python
protocol, which fuzz/fuzz_http_framing.py compares with llhttp; they are counted here.

Run: ``python tools/http11_fuzz.py --count 1000000 [--seed 1] [--impl native|pure]``; prints
the counts and every disagreement (exit status 1 if there is one). tests/kernels/test_http11.py
runs a seeded 20,000 against both twins.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import httptools

from oipcodec import kernels
from oipcodec._shared.http11 import HEAD_FAST, HEAD_PARTIAL

#: A body longer than this is not fed to llhttp: only that it has not ended by then is checked.
_BODY_FED = 1 << 16


class _Events:
    def __init__(self) -> None:
        self.heads = 0
        self.messages = 0
        self.url = b""
        self.parser: Any = None
        self.keep_alive = False

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_headers_complete(self) -> None:
        self.heads += 1

    def on_message_complete(self) -> None:
        self.messages += 1
        self.keep_alive = self.parser.should_keep_alive()  # (reset once this returns)


def _feed(parser: Any, data: bytes) -> str:
    """'' when llhttp took ``data``, else why not."""
    try:
        parser.feed_data(data)
    except httptools.HttpParserUpgrade:
        return "llhttp: upgrade"
    except httptools.HttpParserError as exc:
        return f"llhttp refused: {exc}"
    return ""


def compare(stream: bytes, parse_head: Callable[[bytes], tuple[Any, ...]]) -> str:
    """How many fast heads ``stream`` begins with, as ``"fast N"`` (``"other"``/``"partial"``
    for none); raises AssertionError where llhttp disagrees."""
    events = _Events()
    parser = events.parser = httptools.HttpRequestParser(events)
    offset = fast = 0
    while True:
        kind, head_length, line_length, length, _, keep_alive, v10 = parse_head(stream[offset:])
        if kind != HEAD_FAST:
            break
        fast += 1
        head = stream[offset : offset + head_length]
        where = f"head {fast} at byte {offset}: {head[:200]!r}"
        events.url = b""
        if why := _feed(parser, head[:-1]):
            raise AssertionError(f"{where}: fast, but {why}")
        if events.heads != fast - 1:
            raise AssertionError(f"{where}: llhttp's head ended before byte {head_length}")
        if why := _feed(parser, head[-1:]):
            raise AssertionError(f"{where}: fast, but {why}")
        if events.heads != fast:
            raise AssertionError(f"{where}: llhttp's head did not end at byte {head_length}")
        method, _, target = head[:line_length].partition(b" ")
        theirs = (parser.get_method(), events.url, parser.get_http_version())
        ours = (method, target, "1.0" if v10 else "1.1")
        if theirs != ours:
            raise AssertionError(f"{where}: llhttp read {theirs}, we {ours}")
        body = max(length, 0)
        offset += head_length
        available = stream[offset : offset + min(body, _BODY_FED)]
        fed = len(available)
        padding = b"" if fed == min(body, _BODY_FED) else b"\0" * (min(body, _BODY_FED) - fed)
        if body and (why := _feed(parser, (available + padding)[:-1])):
            raise AssertionError(f"{where}: body refused, {why}")
        if body and events.messages != fast - 1:
            raise AssertionError(f"{where}: llhttp's message ended before {body} body bytes")
        if body > _BODY_FED:
            break
        if body and (why := _feed(parser, (available + padding)[-1:])):
            raise AssertionError(f"{where}: body refused, {why}")
        if events.messages != fast:
            raise AssertionError(f"{where}: llhttp's message did not end after {body} bytes")
        if events.keep_alive != keep_alive:
            raise AssertionError(f"{where}: keep-alive {keep_alive}, llhttp's the other")
        if padding or not keep_alive:
            break
        offset += body
    if fast:
        return f"fast {min(fast, 3)}" + ("+" if fast > 3 else "")
    return "partial" if kind == HEAD_PARTIAL else "other"


# --------------------------------------------------------------------------- inputs

#: Real request heads: what tritonclient, curl, wrk, Kubernetes' probes and KServe's client send.
SEEDS = [
    b"GET /v2/health/ready HTTP/1.1\r\nHost: localhost:8000\r\n\r\n",
    b"GET /v2/health/live HTTP/1.1\r\nHost: 10.0.0.7:8000\r\nUser-Agent: kube-probe/1.29\r\n"
    b"Accept: */*\r\nConnection: close\r\n\r\n",
    b"GET /v2 HTTP/1.1\r\nHost: x\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n",
    b"GET /v2/models/simple HTTP/1.0\r\nHost: x\r\n\r\n",
    b"GET /v2/models/simple/ready HTTP/1.1\r\nhost: x\r\nconnection: keep-alive\r\n\r\n",
    b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: localhost:8000\r\nUser-Agent: "
    b"Python-urllib3\r\nAccept-Encoding: identity\r\nContent-Type: application/json\r\n"
    b'Content-Length: 57\r\n\r\n{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}',
    b"POST /v2/models/simple/versions/1/infer HTTP/1.1\r\nHost: x\r\n"
    b"Inference-Header-Content-Length: 5\r\nContent-Type: application/octet-stream\r\n"
    b"Content-Length: 9\r\n\r\n{}{}abcde",
    b"POST /v2/models/simple/infer HTTP/1.0\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\nGET /v2/health/live HTTP/1.1\r\nHost: x"
    b"\r\n\r\nPOST /v2/models/m/infer HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
]
_NAMES = [
    b"Content-Length", b"Transfer-Encoding", b"Connection", b"Expect", b"Content-Encoding",
    b"Upgrade", b"Accept-Encoding", b"Inference-Header-Content-Length", b"Host", b"X-A",
    b"Proxy-Connection", b"Keep-Alive", b"Trailer", b"TE", b"Content-Type",
]  # fmt: skip
_VALUES = [
    b"0", b"3", b"12", b"007", b"-1", b"+3", b"3 ", b" 3", b"\t3\t", b"3,3", b"3 3", b"0x10",
    b"1" * 19, b"18446744073709551616", b"chunked", b"gzip, chunked", b"close", b"keep-alive",
    b"Keep-Alive", b"CLOSE", b"close, keep-alive", b"upgrade", b"Upgrade", b"100-continue",
    b"identity", b"gzip", b"h2c", b"", b" ", b"x\x00y", b"a\rb", b"a\nb", b"\x80", b"\x7f",
]  # fmt: skip
_ODD = [
    b"\r", b"\n", b"\r\n", b"\x00", b" ", b"\t", b"\x7f", b"\x80", b"\xff", b":", b"?", b"%",
    b"#", b"\r\n ", b"\r\n\t", b"HTTP/1.0", b"HTTP/1.1", b"HTTP/2.0", b"HTTP/1.2", b"HTTP/1.",
    b"  ", b"GET ", b"POST ", b"HEAD ", b"get ", b"/", b"//", b"http://x", b"*",
]  # fmt: skip


def mutate(rng: random.Random, seeds: list[bytes]) -> bytes:
    """A seed (or two pipelined) with 1-4 edits, by line or by byte."""
    data = rng.choice(seeds)
    if rng.random() < 0.2:
        data += rng.choice(seeds)
    head, sep, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(10)
        i = rng.randrange(len(lines))
        line = lines[i]
        if op == 0:  # a field inserted
            name = rng.choice(_NAMES)
            if rng.random() < 0.3:
                name = bytes(c ^ 32 if 65 <= c <= 122 and rng.random() < 0.5 else c for c in name)
            lines.insert(
                1 + rng.randrange(len(lines)),
                name + b":" + b" " * rng.randrange(3) + rng.choice(_VALUES),
            )
        elif op == 1 and len(lines) > 1:  # a field line repeated
            lines.insert(rng.randrange(1, len(lines) + 1), lines[rng.randrange(1, len(lines))])
        elif op == 2 and len(lines) > 1:  # a field line dropped
            del lines[rng.randrange(1, len(lines))]
        elif op == 3:  # letter case flipped
            lines[i] = bytes(c ^ 32 if 65 <= c <= 122 and rng.random() < 0.2 else c for c in line)
        elif op in (4, 5):  # an odd byte or fragment inserted
            pos = rng.randint(0, len(line))
            lines[i] = line[:pos] + rng.choice(_ODD) + line[pos:]
        elif op == 6 and line:  # bytes deleted
            pos = rng.randrange(len(line))
            lines[i] = line[:pos] + line[pos + rng.randint(1, 4) :]
        elif op == 7:  # a long line
            lines[i] = line + b"a" * rng.choice((100, 1000, 9000))
        elif op == 8 and line:  # a bit flipped
            pos = rng.randrange(len(line))
            lines[i] = line[:pos] + bytes([line[pos] ^ (1 << rng.randrange(8))]) + line[pos + 1 :]
        elif op == 9:  # the head cut, or its end changed
            sep = rng.choice(
                (b"", b"\r\n", b"\n\n", b"\r\n\n", b"\r\n\r\n", b"\n\r\n", b"\r\n\r\n\r\n")
            )
    data = b"\r\n".join(lines) + sep + rest
    if rng.random() < 0.05:
        data = data[: rng.randint(0, len(data))]
    return data


def streams(count: int, seed: int) -> Iterator[bytes]:
    """The seeds, then ``count`` mutations of them, the same for the same ``seed``."""
    yield from SEEDS
    rng = random.Random(seed)
    for _ in range(count):
        yield mutate(rng, SEEDS)


def run(
    count: int, seed: int, parse_head: Callable[[bytes], tuple[Any, ...]]
) -> tuple[Counter[str], list[str]]:
    """:func:`compare` on :func:`streams`: how many of each verdict, and the disagreements."""
    tally: Counter[str] = Counter()
    failures = []
    for stream in streams(count, seed):
        try:
            tally[compare(stream, parse_head)] += 1
        except AssertionError as exc:
            tally["disagreement"] += 1
            failures.append(str(exc))
    return tally, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--impl", choices=("native", "pure"), default="native")
    args = parser.parse_args()
    parse_head = kernels.load(args.impl).parse_head
    began = time.perf_counter()
    tally, failures = run(args.count, args.seed, parse_head)
    for failure in failures[:20]:
        print(failure)
    total = sum(tally.values())
    print(
        f"{total} inputs ({args.impl}, seed {args.seed}) in {time.perf_counter() - began:.0f} s: "
        + ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))
    )
    print(f"httptools {httptools.__version__}; disagreements: {tally['disagreement']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
