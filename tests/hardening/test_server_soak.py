"""The REST server under bad traffic: a bounded soak on 127.0.0.1.

A fixed number of requests (``OIPCODEC_SOAK_REQUESTS``, default 2,000) from 4 client threads,
over raw sockets so the clients can lie: valid requests (JSON, binary extension, gzip, BYTES,
slow clients sending the body in pieces) mixed with malformed ones (truncated bodies, lying
Content-Length and Inference-Header-Content-Length, gzip bombs, deep nesting, huge shapes,
lying binary sizes, bodies over the limit) and clients that give up (stop mid-body and close,
also a quarter into an upload of the largest body, reset the connection, half-close with a
body shorter than announced). Checks:

- every valid request is answered 200 with the right result;
- every malformed one is answered 4xx (never 5xx, never a hang: every socket has a timeout);
- a client that gives up gets no 5xx (usually no answer: it is gone);
- the server process's RSS after the soak is within RSS_BOUND of its RSS after warm-up;
- the server still answers health and inference at the end.

The figures are printed (``pytest -s`` shows them).
"""

from __future__ import annotations

import contextlib
import gzip
import multiprocessing
import os
import random
import socket
import struct
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import orjson
import pytest

from oipcodec import InferRequest, Limits, Tensor, rest

pytest.importorskip("uvicorn", reason="the server extra is not installed")
from oipcodec.server.demo import demo_models
from oipcodec.testing import RunningServer, background
from tests.support.http1 import read_response

REQUESTS = int(os.environ.get("OIPCODEC_SOAK_REQUESTS", "2000"))
CLIENTS = 4
TIMEOUT = 20.0  # seconds for any socket operation: a hang fails the test
LIMIT = 1 << 20  # body limit; inflated bodies may reach 4 MB
RSS_BOUND = 40 << 20  # allowed RSS growth of the server over the soak, after warm-up
WARMUP = 200


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[RunningServer, int]]:
    before = {p.pid for p in multiprocessing.active_children()}
    limits = Limits(max_body_bytes=LIMIT, max_decompressed_bytes=4 * LIMIT)
    with background(demo_models(), limits=limits, grpc_port=None, log_level="critical") as srv:
        pids = [p.pid for p in multiprocessing.active_children() if p.pid not in before]
        assert len(pids) == 1, pids
        yield srv, pids[0]


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


# ------------------------------------------------------------------ a client that can lie


def http_bytes(path: str, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if not any(k.lower() == "content-length" for k in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes] | None:
    """Status, headers and body of one answer (read by h11); None when the server closed
    without one."""
    try:
        got, _ = read_response(sock)
    except EOFError:
        return None
    return got.status, dict(got.headers), got.body


def exchange(raw: bytes, *, abort: str | None = None) -> tuple[int, dict[str, str], bytes] | None:
    sock = socket.create_connection(("127.0.0.1", PORT[0]), timeout=TIMEOUT)
    try:
        if abort == "stop":  # send part of the body, pause, go away
            sock.sendall(raw[: len(raw) // 2])
            time.sleep(0.05)
            return None
        if abort == "reset":  # part of the body, then RST
            sock.sendall(raw[: len(raw) // 2])
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return None
        if abort == "slow":  # a slow but honest client: the body in pieces, with pauses
            for start in range(0, len(raw), len(raw) // 3 + 1):
                sock.sendall(raw[start : start + len(raw) // 3 + 1])
                time.sleep(0.02)
        # The server may answer 413 and close before the whole body is sent.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if abort != "slow":
                sock.sendall(raw)
        if abort == "halfclose":
            sock.shutdown(socket.SHUT_WR)
        try:
            return read_answer(sock)
        except ConnectionResetError:
            return None
    finally:
        sock.close()


PORT = [0]


# ------------------------------------------------------------------ the traffic


def simple_request(rng: random.Random) -> tuple[InferRequest, np.ndarray, np.ndarray]:
    rows = rng.randint(1, 3)
    a = np.array([rng.randint(-1000, 1000) for _ in range(16 * rows)], np.int32).reshape(rows, 16)
    b = np.array([rng.randint(-1000, 1000) for _ in range(16 * rows)], np.int32).reshape(rows, 16)
    request = InferRequest(
        [Tensor("INPUT0", "INT32", a.shape, a), Tensor("INPUT1", "INT32", b.shape, b)]
    )
    return request, a, b


BOMB = gzip.compress(bytes(64 << 20), compresslevel=9)  # 64 MB of zeros in about 64 KB
DEEP = orjson.dumps({"inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [1, 16]}]})


def case(index: int) -> tuple[str, str, bytes, dict[str, str], object]:
    """(kind, path, body, headers, check) for request ``index``; ``check`` is the expected
    result of a valid request (or the name of the abort for a client that gives up)."""
    rng = random.Random(index)
    kind = KINDS[index % len(KINDS)]
    path = "/v2/models/simple/infer"
    request, a, b = simple_request(rng)
    body, header = rest.encode_request(request, binary=False)
    headers: dict[str, str] = {"Content-Type": "application/json"}
    expected: object = (a + b, a - b)
    if kind in ("json", "slow"):
        pass
    elif kind == "binary":
        body, header = rest.encode_request(request, binary=True)
        headers["Inference-Header-Content-Length"] = str(header)
    elif kind == "gzip":
        body = gzip.compress(body)
        headers.update({"Content-Encoding": "gzip", "Accept-Encoding": "gzip"})
    elif kind == "bytes":
        path = "/v2/models/identity/infer"
        values = np.array([rng.randbytes(rng.randint(0, 40)) for _ in range(8)], dtype=object)
        body, header = rest.encode_request(
            InferRequest([Tensor("S", "BYTES", (8,), values)]), binary=True
        )
        headers["Inference-Header-Content-Length"] = str(header)
        expected = values
    elif kind == "truncated":
        body = body[: rng.randint(1, len(body) - 1)]
    elif kind == "header-too-long":
        headers["Inference-Header-Content-Length"] = str(len(body) + rng.randint(1, 100))
    elif kind == "header-too-short":
        headers["Inference-Header-Content-Length"] = str(rng.randint(1, len(body) - 2))
    elif kind == "gzip-bomb":
        body = BOMB
        headers["Content-Encoding"] = "gzip"
    elif kind == "bad-gzip":
        body = gzip.compress(body)[:-12]
        headers["Content-Encoding"] = "gzip"
    elif kind == "deep":
        depth = rng.choice([101, 1000, 100_000])
        body = DEEP[:-3] + b',"data":' + b"[" * depth + b"1" + b"]" * depth + b"}]}"
    elif kind == "huge-shape":
        body = body.replace(b'"shape":[', b'"shape":[1099511627776,', 1)
    elif kind == "binary-size-lie":
        body, header = rest.encode_request(request, binary=True)
        body = body.replace(b'"binary_data_size":64', b'"binary_data_size":6400', 1)
        headers["Inference-Header-Content-Length"] = str(header + 2)
    elif kind == "over-limit":
        body = b"x" * 100
        headers["Content-Length"] = str(2 * LIMIT)
    elif kind == "wrong-shape":
        body = body.replace(b'"shape":[', b'"shape":[17,', 1)
    elif kind == "not-json":
        body = rng.randbytes(rng.randint(1, 200))
    elif kind == "content-length-short":
        headers["Content-Length"] = str(len(body) // 2)
    elif kind in GIVE_UP:
        if kind == "halfclose":
            headers["Content-Length"] = str(len(body) + 100)
        expected = kind
        if kind == "stop-large":  # an upload of the largest body, stopped halfway
            headers["Content-Length"] = str(LIMIT)
            body = b"x" * (LIMIT // 2)
            expected = "stop"
    else:
        raise AssertionError(kind)
    return kind, path, body, headers, expected


VALID = ("json", "binary", "gzip", "bytes", "slow")
GIVE_UP = ("stop", "reset", "halfclose", "stop-large")
BAD = (
    "truncated", "header-too-long", "header-too-short", "gzip-bomb", "bad-gzip", "deep",
    "huge-shape", "binary-size-lie", "over-limit", "wrong-shape", "not-json",
    "content-length-short",
)  # fmt: skip
KINDS = VALID[:4] * 3 + VALID[4:] + BAD + GIVE_UP


def run_one(index: int) -> tuple[str, str]:
    """Send request ``index``; returns (kind, outcome) where outcome is "ok", "4xx",
    "no answer" or a description of what went wrong."""
    kind, path, body, headers, expected = case(index)
    abort = expected if kind in GIVE_UP else "slow" if kind == "slow" else None
    answer = exchange(http_bytes(path, body, headers), abort=abort)  # type: ignore[arg-type]
    if kind in GIVE_UP:
        if answer is None:
            return kind, "no answer"
        return kind, "4xx" if 400 <= answer[0] < 500 else f"status {answer[0]}"
    if answer is None:
        return kind, "closed without an answer"
    status, answer_headers, answer_body = answer
    if kind in BAD:
        if 400 <= status < 500 and orjson.loads(answer_body).get("error"):
            return kind, "4xx"
        return kind, f"status {status}: {answer_body[:200]!r}"
    if status != 200:
        return kind, f"status {status}: {answer_body[:200]!r}"
    response = rest.decode_response(
        answer_body,
        answer_headers.get("inference-header-content-length"),
        answer_headers.get("content-encoding"),
    )
    outputs = {t.name: t.data for t in response.outputs}
    if kind == "bytes":
        good = outputs["S"].tolist() == expected.tolist()  # type: ignore[attr-defined]
    else:
        sum_, diff = expected  # type: ignore[misc]
        good = np.array_equal(outputs["OUTPUT0"], sum_) and np.array_equal(outputs["OUTPUT1"], diff)
    return kind, "ok" if good else "wrong result"


def health() -> int:
    sock = socket.create_connection(("127.0.0.1", PORT[0]), timeout=TIMEOUT)
    try:
        sock.sendall(b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = read_answer(sock)
        assert answer is not None
        return answer[0]
    finally:
        sock.close()


def test_server_survives_bad_traffic(server: tuple[RunningServer, int]) -> None:
    running, pid = server
    PORT[0] = running.http_port
    assert health() == 200
    rss_start = rss(pid)
    started = time.monotonic()
    with ThreadPoolExecutor(CLIENTS) as pool:
        warm = list(pool.map(run_one, range(WARMUP)))
        rss_warm = rss(pid)
        rest_ = list(pool.map(run_one, range(WARMUP, REQUESTS)))
    elapsed = time.monotonic() - started
    rss_end = rss(pid)
    outcomes = warm + rest_
    tally = Counter(outcome for _, outcome in outcomes)
    by_group = Counter(
        ("valid" if k in VALID else "bad" if k in BAD else "gave up", o) for k, o in outcomes
    )
    print(
        f"\nsoak: {len(outcomes)} requests in {elapsed:.1f} s from {CLIENTS} clients; "
        f"{dict(by_group)}; server RSS start {rss_start >> 20} MB, after warm-up "
        f"{rss_warm >> 20} MB, end {rss_end >> 20} MB"
    )
    assert len(outcomes) == REQUESTS
    problems = [
        (i, k, o) for i, (k, o) in enumerate(outcomes) if o not in ("ok", "4xx", "no answer")
    ]
    assert problems == [], problems[:10]
    for kind, outcome in outcomes:
        if kind in VALID:
            assert outcome == "ok", (kind, outcome)
        elif kind in BAD:
            assert outcome == "4xx", (kind, outcome)
    assert tally["ok"] == sum(1 for k, _ in outcomes if k in VALID)
    if "asan" not in os.environ.get("LD_PRELOAD", ""):  # ASan's quarantine keeps freed memory
        assert rss_end - rss_warm < RSS_BOUND, (rss_warm, rss_end)
    # Still healthy, and still right.
    assert health() == 200
    assert run_one(0) == ("json", "ok")
    assert run_one(1) == ("binary", "ok")
