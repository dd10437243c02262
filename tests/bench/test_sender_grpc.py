"""The load generator's HTTP/2 half (oipcodec.bench.sender.run_grpc), native and grpcio twin
alike: counts and grpc-status against a real grpcio server on 127.0.0.1 and against
oipcodec's own, then the failures a sender must count rather than raise (a bad status, an
answer past its bound, a call past its timeout, a server that closes the connection). Every
run is bounded by a count or a short duration."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any, ClassVar

import numpy as np
import pytest

from oipcodec.bench import sender
from tests.conftest import EXPECT_NATIVE
from tests.support.hostile import HostileServer

grpc = pytest.importorskip("grpc")


@pytest.fixture(params=["native", "grpcio"])
def implementation(request: pytest.FixtureRequest) -> str:
    if request.param == "native" and not sender.native_available():
        message = "the native sender (oipcodec.bench._sender) is not built"
        if EXPECT_NATIVE:
            pytest.fail(message)
        pytest.skip(message)
    return str(request.param)


def _echo(request: bytes, context: Any) -> bytes:
    return request


def _fail(request: bytes, context: Any) -> bytes:
    context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")
    return b""  # pragma: no cover - abort raises


def _big(request: bytes, context: Any) -> bytes:
    return b"x" * 100_000


def _slow(request: bytes, context: Any) -> bytes:
    time.sleep(1.0)
    return request


def _nap(request: bytes, context: Any) -> bytes:
    time.sleep(0.05)
    return request


class _Handler(grpc.GenericRpcHandler):
    methods: ClassVar[dict[str, Any]] = {
        "/t.T/Echo": _echo,
        "/t.T/Fail": _fail,
        "/t.T/Big": _big,
        "/t.T/Slow": _slow,
        "/t.T/Nap": _nap,
    }

    def service(self, details: Any) -> Any:
        method = self.methods.get(details.method)
        return grpc.unary_unary_rpc_method_handler(method) if method else None


@contextlib.contextmanager
def grpc_server() -> Iterator[int]:
    """A grpcio server on a free 127.0.0.1 port with the methods above; its port."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((_Handler(),))
    bound = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield bound
    finally:
        server.stop(None)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with grpc_server() as bound:
        yield bound


def test_counts_and_a_bad_status(port: int, implementation: str) -> None:
    result = sender.run_grpc("127.0.0.1", port, b"hello", connections=2, streams=4, count=40,
                             method="/t.T/Echo", implementation=implementation)  # fmt: skip
    assert result.implementation == implementation
    assert (result.sent, result.completed, result.errors) == (40, 40, {})
    assert result.status_counts == {0: 40} and result.ok_status == 0
    assert result.latency.size == 40 and (result.latency > 0).all()
    assert np.all(result.done <= result.elapsed) and result.cpu_per_request > 0
    failed = sender.run_grpc("127.0.0.1", port, b"hello", connections=1, streams=2, count=6,
                             method="/t.T/Fail", implementation=implementation)  # fmt: skip
    assert (failed.sent, failed.completed, failed.errors) == (6, 0, {"status": 6})
    assert failed.status_counts == {grpc.StatusCode.NOT_FOUND.value[0]: 6}
    assert "grpc-status 5: no such thing" in (failed.first_error or "")


def test_bounds_and_timeouts_are_counted(port: int, implementation: str) -> None:
    big = sender.run_grpc("127.0.0.1", port, b"x", connections=1, streams=2, count=4,
                          method="/t.T/Big", max_answer=1000, implementation=implementation)  # fmt: skip
    assert big.completed == 0 and big.errors == {"too_large": 4}
    started = time.monotonic()
    slow = sender.run_grpc("127.0.0.1", port, b"x", connections=1, streams=2, count=2,
                           method="/t.T/Slow", timeout=0.2, implementation=implementation)  # fmt: skip
    assert slow.completed == 0 and slow.errors == {"timeout": 2}
    assert time.monotonic() - started < 3


def test_a_run_longer_than_the_timeout_waits_for_every_call(port: int, implementation: str) -> None:
    # 12 calls of 50 ms one after another: the run outlasts the 0.2 s timeout of each call.
    result = sender.run_grpc("127.0.0.1", port, b"x", connections=1, streams=1, count=12,
                             timeout=0.2, method="/t.T/Nap", implementation=implementation)  # fmt: skip
    assert (result.completed, result.errors) == (12, {})


def test_duration_and_open_loop(port: int, implementation: str) -> None:
    closed = sender.run_grpc("127.0.0.1", port, [b"a", b"bb"], connections=2, streams=2,
                             duration=0.3, capacity=5, method="/t.T/Echo",
                             implementation=implementation)  # fmt: skip
    assert closed.completed > 10 and closed.error_count == 0 and closed.latency.size == 5
    opened = sender.run_grpc("127.0.0.1", port, b"a", connections=1, streams=4, duration=0.5,
                             rate=100, method="/t.T/Echo", implementation=implementation)  # fmt: skip
    assert 40 <= opened.sent <= 51 and opened.completed == opened.sent and opened.unsent == 0


def test_a_closed_connection_is_counted(implementation: str) -> None:
    def script(conn: socket.socket, index: int) -> None:
        conn.recv(1 << 16)  # the preface and the first call, then gone
        conn.close()

    with HostileServer(script) as server:
        result = sender.run_grpc("127.0.0.1", server.port, b"x", connections=1, streams=1,
                                 count=3, timeout=2, method="/t.T/Echo",
                                 implementation=implementation)  # fmt: skip
    assert result.completed == 0 and result.error_count >= 1
    # A write racing the close may fail too (EPIPE): counted as a send error, also not raised.
    assert set(result.errors) <= {"closed", "connect", "send"} and "closed" in result.errors


def test_an_http1_server_is_counted_not_raised(implementation: str) -> None:
    def script(conn: socket.socket, index: int) -> None:
        conn.recv(1 << 16)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" * 4)
        time.sleep(0.2)

    with HostileServer(script) as server:
        result = sender.run_grpc("127.0.0.1", server.port, b"x", connections=1, streams=1,
                                 count=3, timeout=2, method="/t.T/Echo",
                                 implementation=implementation)  # fmt: skip
    assert result.completed == 0 and result.error_count >= 1
    if implementation == "native":
        assert "malformed" in result.errors
        assert "not HTTP/2" in (result.first_error or "")


def test_against_oipcodec_modelinfer(implementation: str) -> None:
    from oipcodec import pb
    from oipcodec.testing import background
    from oipcodec.types import InferRequest, Tensor

    x = np.ones((1, 16), np.float32)
    ok = pb.encode_request(
        InferRequest([Tensor("INPUT0", "FP32", (1, 16), x)], model_name="identity")
    )
    with background(process=False, http_port=None) as server:
        result = sender.run_grpc("127.0.0.1", server.grpc_port, ok, connections=1, streams=4,
                                 count=20, implementation=implementation)  # fmt: skip
    assert (result.completed, result.errors) == (20, {})


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="streams"):
        sender.run_grpc("127.0.0.1", 1, b"x", streams=0, count=1)
    with pytest.raises(ValueError, match="implementation"):
        sender.run_grpc("127.0.0.1", 1, b"x", count=1, implementation="python")
    assert threading.active_count() >= 1
