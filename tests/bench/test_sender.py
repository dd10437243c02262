"""The load generator (oipcodec.bench.sender), native and Python twins alike: counts and
statuses against a real oipcodec server, and against scripted servers on 127.0.0.1 the answers
a sender meets in the wild (keep-alive, chunked, split reads, a close mid-answer, garbage, no
answer at all), then the shape of open-loop timing. Every run is bounded by a count or a short
duration, and every scripted answer must end as a count, never a hang or a crash."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.bench import sender
from tests.conftest import EXPECT_NATIVE
from tests.support.hostile import HostileServer, read_request

BODY = json.dumps(
    {"inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "FP32", "data": [1.0] * 16}]}
).encode()


@pytest.fixture(params=["native", "python"])
def implementation(request: pytest.FixtureRequest) -> str:
    if request.param == "native" and not sender.native_available():
        message = "the native sender (oipcodec.bench._sender) is not built"
        if EXPECT_NATIVE:
            pytest.fail(message)
        pytest.skip(message)
    return str(request.param)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from oipcodec.testing import background

    with background(process=True) as running:
        yield running


def _request(path: str, port: int, body: bytes = BODY) -> bytes:
    return sender.encode_request("POST", path, body, host=f"127.0.0.1:{port}")


def test_counts_and_statuses_against_oipcodec(server: Any, implementation: str) -> None:
    port = server.http_port
    ok = _request("/v2/models/identity/infer", port)
    missing = _request("/v2/models/nope/infer", port)
    result = sender.run(
        "127.0.0.1", port, [ok, missing], connections=4, count=60, implementation=implementation
    )
    assert result.implementation == implementation
    assert (result.sent, result.completed, result.errors) == (60, 60, {})
    assert result.status_counts == {200: 30, 404: 30}
    assert sorted(np.unique(result.status).tolist()) == [200, 404]
    assert result.latency.size == 60 and (result.latency > 0).all()
    assert np.all(np.diff(np.sort(result.done)) >= 0) and result.done.max() <= result.elapsed
    assert result.cpu > 0 and result.cpu_per_request > 0 and result.requests_per_second > 0


def test_duration_ends_the_run(server: Any, implementation: str) -> None:
    started = time.monotonic()
    result = sender.run(
        "127.0.0.1",
        server.http_port,
        _request("/v2/models/identity/infer", server.http_port),
        connections=2,
        duration=0.5,
        capacity=5,
        implementation=implementation,
    )
    assert result.completed > 10 and result.error_count == 0
    assert result.latency.size == result.done.size == result.status.size == 5  # bounded records
    assert time.monotonic() - started < 5


def scripted_server(
    answer: Callable[[int], bytes | None], piece: int = 0, close: bool = False
) -> HostileServer:
    """A server on 127.0.0.1 that reads each request and answers with ``answer(n)`` for the
    connection's n-th request, written in pieces of ``piece`` bytes (0: at once); None closes
    the connection, and so does every answer when ``close``."""

    def script(conn: socket.socket, index: int) -> None:
        pending = bytearray()
        n = 0
        while read_request(conn, pending):
            reply = answer(n)
            n += 1
            if reply is None:
                return
            step = piece or max(1, len(reply))
            for i in range(0, len(reply), step):
                conn.sendall(reply[i : i + step])
            if close:
                return

    return HostileServer(script)


@pytest.fixture
def scripted() -> Iterator[Callable[..., HostileServer]]:
    made: list[HostileServer] = []

    def make(
        answer: Callable[[int], bytes | None], piece: int = 0, close: bool = False
    ) -> HostileServer:
        made.append(scripted_server(answer, piece, close))
        return made[-1]

    yield make
    for server in made:
        server.close()


def _go(port: int, implementation: str, **kwargs: Any) -> sender.SenderResult:
    options: dict[str, Any] = {"connections": 2, "count": 20, "timeout": 2.0, **kwargs}
    return sender.run(
        "127.0.0.1",
        port,
        b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
        implementation=implementation,
        **options,
    )


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;name=value\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n"
)


@pytest.mark.parametrize("piece", [0, 1, 7])
@pytest.mark.parametrize("answer", [OK, CHUNKED], ids=["content-length", "chunked"])
def test_keep_alive_answers_in_any_pieces(
    scripted: Any, implementation: str, answer: bytes, piece: int
) -> None:
    server = scripted(lambda n: answer, piece)
    result = _go(server.port, implementation)
    assert (result.completed, result.errors, result.status_counts) == (20, {}, {200: 20})
    assert server.accepted == 2  # one connection each, kept alive for all ten requests


def test_connection_close_is_followed_by_a_new_connection(
    scripted: Any, implementation: str
) -> None:
    server = scripted(lambda n: OK.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1))
    result = _go(server.port, implementation, count=6)
    assert (result.completed, result.errors) == (6, {})
    assert server.accepted >= 6


def test_interim_and_bodiless_answers(scripted: Any, implementation: str) -> None:
    answers = [b"HTTP/1.1 100 Continue\r\n\r\n" + OK, b"HTTP/1.1 204 No Content\r\n\r\n"]
    server = scripted(lambda n: answers[n % 2])
    result = _go(server.port, implementation, connections=1, count=4)
    assert (result.completed, result.errors) == (4, {})
    assert result.status_counts == {200: 2, 204: 2}


@pytest.mark.parametrize(
    ("answer", "kind", "words"),
    [
        (b"HELLO THERE\r\n\r\n", "malformed", "status line"),
        (b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", "malformed", "status code"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello", "malformed", "Content-Length"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
            "malformed",
            "second Content-Length",
        ),
        (b"HTTP/1.1 200 OK\r\n\r\nhello", "malformed", "neither Content-Length nor chunked"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "malformed", "Transfer-Encoding"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "malformed",
            "hexadecimal chunk size",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiX\r\n",
            "malformed",
            "CRLF after the chunk",
        ),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", "too_large", "past the bound"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n",
            "too_large",
            "",
        ),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 20000 + b"\r\n\r\n", "too_large", "header past"),
        (OK + b"extra", "malformed", "past the end of the answer"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "closed", "closed the connection"),
    ],
)
def test_bad_answers_are_counted_errors(
    scripted: Any, implementation: str, answer: bytes, kind: str, words: str
) -> None:
    # "closed": a partial answer, then the server closes the connection.
    server = scripted(lambda n: answer, close=kind == "closed")
    started = time.monotonic()
    result = _go(server.port, implementation, count=4, max_answer=1 << 20)
    assert time.monotonic() - started < 10
    if b"extra" not in answer:  # there the answer is complete, and what follows an error
        assert result.completed == 0, result
    assert result.errors.get(kind, 0) >= 1, (result.errors, result.first_error)
    assert result.first_error is not None and words in result.first_error


def test_a_silent_server_times_out(scripted: Any, implementation: str) -> None:
    server = scripted(lambda n: b"")  # reads the request, never answers
    started = time.monotonic()
    result = _go(server.port, implementation, count=2, timeout=0.3)
    assert result.completed == 0 and result.errors == {"timeout": 2}
    assert time.monotonic() - started < 5


def test_a_refused_port_gives_up(implementation: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening: refused
        started = time.monotonic()
        result = _go(port, implementation, duration=5.0, count=None)
    assert result.completed == 0 and result.errors.get("connect", 0) >= 1
    assert "connect" in (result.first_error or "")
    assert time.monotonic() - started < 3  # every connection gave up; the duration is not waited


def test_open_loop_keeps_its_schedule(scripted: Any, implementation: str) -> None:
    server = scripted(lambda n: OK)
    result = _go(server.port, implementation, connections=4, count=None, duration=1.0, rate=100)
    assert result.errors == {} and result.unsent == 0
    assert 95 <= result.completed <= 101
    gaps = np.diff(np.sort(result.done))
    assert 0.005 < float(np.median(gaps)) < 0.015  # sent every 10 ms, not in a burst


def test_open_loop_shows_the_queue_a_slow_server_builds(scripted: Any, implementation: str) -> None:
    # One connection, a server taking 20 ms an answer, 100 requests/s due: each request waits
    # for the one before, and the latency from its due time grows (coordinated omission shown).
    def slow(n: int) -> bytes:
        time.sleep(0.02)
        return OK

    server = scripted(slow)
    result = _go(server.port, implementation, connections=1, count=None, duration=0.6, rate=100)
    order = np.argsort(result.done)
    latency = result.latency[order]
    assert latency[-1] > 0.1 and latency[-1] > 3 * latency[0]
    assert result.completed + result.unsent + result.error_count >= 55


def test_bad_arguments_are_refused() -> None:
    request = b"GET / HTTP/1.1\r\n\r\n"
    for kwargs in (
        {},
        {"count": 0},
        {"duration": -1.0},
        {"count": 1, "connections": 0},
        {"count": 1, "rate": 0.0},
    ):
        with pytest.raises(ValueError):
            sender.run("127.0.0.1", 1, request, **kwargs)
    with pytest.raises(ValueError, match="requests"):
        sender.run("127.0.0.1", 1, [], count=1)


def test_bench_rows_loaded_by_the_sender(tmp_path: Any, implementation: str) -> None:
    # `oipcodec bench --sender`: the REST and gRPC rows of native and pure are sent by the
    # generator (gRPC: its HTTP/2 half; the Python twin's is grpcio), tritonclient's and v1's
    # rows keep their clients.
    import contextlib
    import io

    from oipcodec import cli

    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = cli.main(
            ["bench", "--payload", "small", "--path",
             "rest-json,rest-binary-gzip,grpc-raw,grpc-typed,v1-grpc",
             "--implementation", "native", "--concurrency", "2", "--measurement-interval", "100",
             "--max-trials", "3", "--no-chart", "--output-dir", str(out),
             "--sender", implementation]
        )  # fmt: skip
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    senders = {r["path"]: [e["sender"] for e in r["load"]] for r in results["results"]}
    assert senders == {
        "rest-json": [implementation],
        "rest-binary-gzip": [implementation],
        "grpc-raw": [implementation],
        "grpc-typed": [implementation],
        "v1-grpc": ["client"],
    }
    for record in results["results"]:
        (entry,) = record["load"]
        assert record["error"] is None and entry["errors"] == 0 and entry["requests"] > 0, entry


def test_which_rows_the_sender_takes() -> None:
    from oipcodec.bench.encoding import PATHS
    from oipcodec.bench.sending import sent_by

    url = "http://127.0.0.1:8000"
    assert sent_by("native", "pure", PATHS["rest-binary"], url, {}) == "native"
    assert sent_by("client", "native", PATHS["rest-json"], url, {}) is None
    assert sent_by("native", "tritonclient", PATHS["rest-json"], url, {}) is None
    assert sent_by("native", "native", PATHS["grpc-raw"], url, {}) is None  # no target
    assert sent_by("native", "pure", PATHS["grpc-typed"], None, {}, "127.0.0.1:8001") == "native"
    assert sent_by("python", "native", PATHS["grpc-raw"], None, {}, "localhost:8001") == "python"
    assert sent_by("native", "native", PATHS["v1-grpc"], None, {}, "127.0.0.1:8001") is None
    assert sent_by("native", "native", PATHS["grpc-raw"], None, {}, "dns:///h:8001") is None
    tls = {"grpc_use_ssl": True}
    assert sent_by("native", "native", PATHS["grpc-raw"], None, tls, "127.0.0.1:8001") is None
    assert sent_by("native", "native", PATHS["v1-http-raw"], url, {}) is None
    assert sent_by("native", "native", PATHS["rest-json"], "https://127.0.0.1:8000", {}) is None
    headers = {"headers": {"Authorization": "Bearer x"}}
    assert sent_by("native", "native", PATHS["rest-json"], url, headers) is None
