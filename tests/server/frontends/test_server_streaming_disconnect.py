"""A client that leaves a stream mid-way stops the model: its generator is closed (the model
sees GeneratorExit at its yield, or CancelledError at an await) within a response or two of
the server seeing the client go, over gRPC ModelStreamInfer and REST generate_stream; and
1,000 such departures each stop their model and leave the process's memory where it was."""

from __future__ import annotations

import resource
import socket
import time
from collections.abc import Iterator

import numpy as np
import orjson
import pytest

from oipcodec import pb
from oipcodec.testing import RunningServer, background
from oipcodec.types import InferRequest, Tensor
from tests.support import streaming_models as models

grpc = pytest.importorskip("grpc")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

#: A token every 10 ms: the server sees the client go long before the next one.
PAUSE = 0.01
LEAVES = 1000


@pytest.fixture(scope="module", params=["oipcodec", "httptools"])
def server(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    with background(
        models.streaming_models(),
        process=False,
        http_protocol=request.param,
        log_level="critical",
    ) as running:
        yield running


def _grpc_request(key: str, n: int, pause: float, model: str = "tokens") -> bytes:
    tensor = Tensor("N", "INT32", [1], np.array([n], dtype=np.int32))
    request = InferRequest([tensor], model_name=model, parameters={"key": key, "sleep": pause})
    return pb.encode_request(request, raw=True)


def _grpc_leave(target: str, key: str, n: int, pause: float, read: int) -> None:
    channel = grpc.insecure_channel(target)
    call = channel.stream_stream("/inference.GRPCInferenceService/ModelStreamInfer")(
        iter([_grpc_request(key, n, pause)]), timeout=30
    )
    for _ in range(read):
        next(call)
    call.cancel()
    channel.close()


def _sse_leave(address: str, key: str, n: int, pause: float, read: int) -> None:
    host, port = address.rsplit(":", 1)
    body = orjson.dumps({"N": n, "key": key, "sleep": pause})
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(
            b"POST /v2/models/tokens/generate_stream HTTP/1.1\r\nhost: x\r\n"
            b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
        )
        seen = b""
        while seen.count(b"data: ") < read:
            seen += sock.recv(65536)


def _closed(key: str) -> str:
    deadline = time.monotonic() + 10
    while key not in models.CLOSED and time.monotonic() < deadline:
        time.sleep(0.005)
    return models.CLOSED.get(key, "not closed")


@pytest.mark.parametrize("transport", ["grpc", "sse"])
def test_a_client_leaving_stops_the_model(server: RunningServer, transport: str) -> None:
    key = f"{transport}-{server.http_address}"
    if transport == "grpc":
        _grpc_leave(server.grpc_address, key, 10_000, PAUSE, read=3)
    else:
        _sse_leave(server.http_address, key, 10_000, PAUSE, read=3)
    closed = _closed(key)
    kind, sent = closed.rsplit(" after ", 1)
    assert kind in ("GeneratorExit", "CancelledError")
    assert 3 <= int(sent) <= 5, closed  # the three read, and at most two more


@pytest.mark.parametrize("transport", ["grpc", "sse"])
def test_a_slow_reader_pauses_the_model(server: RunningServer, transport: str) -> None:
    """A client that reads nothing: the model runs until the transport's buffers are full,
    then waits at its yield (nothing queues in the server)."""
    key = f"slow-{transport}-{server.http_address}"
    n = 10_000_000
    if transport == "grpc":
        # No BDP probing: the client's HTTP/2 window stays at its first size instead of
        # growing while the model fills it, so the model pauses sooner.
        channel = grpc.insecure_channel(server.grpc_address, [("grpc.http2.bdp_probe", 0)])
        call = channel.stream_stream("/inference.GRPCInferenceService/ModelStreamInfer")(
            iter([_grpc_request(key, n, 0.0)]), timeout=30
        )
        next(call)  # the stream is open; then nothing more is read
    else:
        host, port = server.http_address.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)), timeout=30)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        body = orjson.dumps({"N": n, "key": key})
        sock.sendall(
            b"POST /v2/models/tokens/generate_stream HTTP/1.1\r\nhost: x\r\n"
            b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
        )
    try:
        deadline = time.monotonic() + 15
        before, now = -1, 0
        while before != now:  # until half a second passes with no response pulled
            assert time.monotonic() < deadline, f"the model never paused: {now} responses"
            time.sleep(0.5)
            before, now = now, models.PROGRESS.get(key, 0)
        assert 0 < now < n // 10
    finally:
        if transport == "grpc":
            call.cancel()
            channel.close()
        else:
            sock.close()
    assert _closed(key).startswith(("GeneratorExit", "CancelledError"))


def test_a_generator_in_a_worker_thread_is_closed_after_its_step(server: RunningServer) -> None:
    """The stream ends while the thread runs a step: the generator is closed when the step
    is over (closing it while it runs would fail), and the model sees GeneratorExit."""
    key = f"thread-{server.http_address}"
    channel = grpc.insecure_channel(server.grpc_address)
    call = channel.stream_stream("/inference.GRPCInferenceService/ModelStreamInfer")(
        iter([_grpc_request(key, 1000, 0.2, "sync_tokens")]), timeout=30
    )
    next(call)
    time.sleep(0.05)  # the next step is running in its thread
    call.cancel()
    channel.close()
    assert _closed(key) in ("GeneratorExit after 1", "GeneratorExit after 2")


def test_a_client_leaving_generate_stops_the_model(server: RunningServer) -> None:
    """/generate answers once, at the end: a client that leaves before stops the model."""
    key = f"generate-{server.http_address}"
    host, port = server.http_address.rsplit(":", 1)
    body = orjson.dumps({"N": 1, "key": key, "sleep": 5})
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(
            b"POST /v2/models/tokens/generate HTTP/1.1\r\nhost: x\r\n"
            b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
        )
        time.sleep(0.2)
    started = time.monotonic()
    assert _closed(key) == "CancelledError after 0"
    assert time.monotonic() - started < 2


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.parametrize("transport", ["grpc", "sse"])
def test_a_thousand_departures_leave_memory_where_it_was(
    server: RunningServer, transport: str
) -> None:
    leave = _grpc_leave if transport == "grpc" else _sse_leave
    address = server.grpc_address if transport == "grpc" else server.http_address

    def round_of(count: int, tag: str) -> None:
        for i in range(count):
            leave(address, f"{tag}{i}", 1_000_000, 0.0, read=1)

    round_of(100, f"warm-{transport}-")  # warm up: pools, caches, grpc's channel machinery
    before = _rss_kb()
    round_of(LEAVES, f"{transport}-")
    deadline = time.monotonic() + 10
    while sum(1 for k in models.CLOSED if k.startswith(f"{transport}-")) < LEAVES:
        assert time.monotonic() < deadline, "not every model was stopped"
        time.sleep(0.01)
    grown = _rss_kb() - before
    assert grown < 16 * 1024, f"RSS grew {grown} kB over {LEAVES} departures"
