"""Streaming calls, deadlines, cancellation, compression and size limits through H2Protocol,
made by grpcio's own aio channel."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.server.h2.conftest import Route, run, serve

grpc = pytest.importorskip("grpc")

EVENTS: list[str] = []


async def _sum(stream: Any, message: None) -> bytes:
    parts = []
    while (part := await stream.read()) is not None:
        parts.append(part)
    return b"+".join(parts)


async def _echo_each(stream: Any, message: None) -> None:
    while (part := await stream.read()) is not None:
        await stream.write(b"<" + part + b">")


def _count(stream: Any, message: bytes) -> Any:
    async def body() -> None:
        for i in range(int(message)):
            await stream.write(b"%d" % i)

    return body()


def _size(stream: Any, message: bytes) -> bytes:
    return b"%d" % len(message)


async def _sleep(stream: Any, message: bytes) -> bytes:
    EVENTS.append(f"deadline {stream.deadline is not None}")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        EVENTS.append("cancelled")
        raise
    return b"late"


async def _wait_read(stream: Any, message: None) -> None:
    try:
        await stream.read()
        await stream.read()
    except asyncio.CancelledError:
        EVENTS.append(f"read cancelled {stream.cancelled}")
        raise


def _until_gone(stream: Any, message: bytes) -> Any:
    async def body() -> None:
        try:
            while True:
                await stream.write(b"tick")
                await asyncio.sleep(0.005)
        except ConnectionResetError:
            EVENTS.append(f"write gone {stream.cancelled}")
        except asyncio.CancelledError:
            EVENTS.append("cancelled")
            raise

    return body()


def _big(stream: Any, message: bytes) -> Any:
    async def body() -> None:
        chunk = b"z" * (1 << 20)
        for _ in range(int(message)):
            await stream.write(chunk)

    return body()


ROUTES = {
    b"/t.S/Sum": Route(_sum, request_streaming=True),
    b"/t.S/EchoEach": Route(_echo_each, request_streaming=True),
    b"/t.S/Count": Route(_count),
    b"/t.S/Size": Route(_size),
    b"/t.S/Sleep": Route(_sleep),
    b"/t.S/WaitRead": Route(_wait_read, request_streaming=True),
    b"/t.S/Big": Route(_big),
    b"/t.S/UntilGone": Route(_until_gone),
}


async def _parts(n: int) -> AsyncIterator[bytes]:
    for i in range(n):
        yield b"%d" % i


def test_client_streaming_and_bidi() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, made):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                total = await channel.stream_unary("/t.S/Sum")(_parts(5))
                assert total == b"0+1+2+3+4"
                assert await channel.stream_unary("/t.S/Sum")(_parts(0)) == b""
                got = [m async for m in channel.stream_stream("/t.S/EchoEach")(_parts(50))]
                assert got == [b"<%d>" % i for i in range(50)]
                counted = [m async for m in channel.unary_stream("/t.S/Count")(b"100")]
                assert counted == [b"%d" % i for i in range(100)]
                assert [m async for m in channel.unary_stream("/t.S/Count")(b"0")] == []
            assert made[0].active_streams == 0

    run(main())


def test_streamed_request_messages_larger_than_the_window() -> None:
    async def main() -> None:
        async with (
            serve(ROUTES) as (port, _, _),
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        ):
            big = [bytes([i]) * (3 << 20) for i in range(3)]  # 3 MiB each; the window is 1 MiB

            async def parts() -> AsyncIterator[bytes]:
                for part in big:
                    yield part

            got = [m async for m in channel.stream_stream("/t.S/EchoEach")(parts())]
            assert got == [b"<" + part + b">" for part in big]

    run(main(), timeout=20)


def test_a_large_streamed_response_under_flow_control() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, _):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                n = 0
                async for message in channel.unary_stream("/t.S/Big")(b"24"):
                    n += len(message)
            assert n == 24 << 20

    run(main())


@pytest.mark.parametrize("compression", ["Gzip", "Deflate"])
def test_compressed_requests_are_inflated(compression: str) -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, _):
            algorithm = getattr(grpc.Compression, compression)
            async with grpc.aio.insecure_channel(
                f"127.0.0.1:{port}", compression=algorithm
            ) as channel:
                assert await channel.unary_unary("/t.S/Size")(b"a" * 100_000) == b"100000"
                total = await channel.stream_unary("/t.S/Sum")(_parts(3))
                assert total == b"0+1+2"

    run(main())


def test_size_limits_and_a_compression_bomb() -> None:
    async def main() -> None:
        async with serve(ROUTES, max_receive_message_length=50_000) as (port, _, made):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                size = channel.unary_unary("/t.S/Size")
                assert await size(b"a" * 50_000) == b"50000"
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await size(b"a" * 50_001)
                assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "50001 vs. 50000" in caught.value.details()
            # 64 MiB of zeros is 64 KiB gzipped: refused after 50 KB inflated, never allocated.
            async with grpc.aio.insecure_channel(
                f"127.0.0.1:{port}", compression=grpc.Compression.Gzip
            ) as channel:
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await channel.unary_unary("/t.S/Size")(bytes(64 << 20))
                assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert made[-1].active_streams == 0

    assert len(gzip.compress(bytes(64 << 20))) < 100_000
    run(main(), timeout=60)


def test_the_deadline_cancels_the_call() -> None:
    async def main() -> None:
        EVENTS.clear()
        async with serve(ROUTES) as (port, _, made):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await channel.unary_unary("/t.S/Sleep")(b"", timeout=0.3)
                assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            for _ in range(100):
                if "cancelled" in EVENTS and not made[0].active_streams:
                    break
                await asyncio.sleep(0.01)
        assert EVENTS == ["deadline True", "cancelled"]

    run(main())


def test_a_client_cancel_cancels_the_call() -> None:
    async def main() -> None:
        EVENTS.clear()
        async with (
            serve(ROUTES) as (port, _, made),
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        ):
            call = channel.unary_unary("/t.S/Sleep")(b"")
            bidi = channel.stream_stream("/t.S/WaitRead")()
            await bidi.write(b"one")
            for _ in range(100):
                if EVENTS and made[0].active_streams == 2:
                    break
                await asyncio.sleep(0.01)
            call.cancel()
            bidi.cancel()
            for _ in range(200):
                if len(EVENTS) == 3 and not made[0].active_streams:
                    break
                await asyncio.sleep(0.01)
        assert sorted(EVENTS) == ["cancelled", "deadline False", "read cancelled True"]

    run(main())


def test_goaway_lets_calls_in_flight_finish_then_closes() -> None:
    async def main() -> None:
        async with (
            serve(ROUTES) as (port, _, made),
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        ):
            bidi = channel.stream_stream("/t.S/EchoEach")()
            await bidi.write(b"a")
            assert await bidi.read() == b"<a>"
            made[0].goaway()
            await bidi.write(b"b")  # the call in flight goes on after the GOAWAY
            assert await bidi.read() == b"<b>"
            await bidi.done_writing()
            assert await bidi.code() == grpc.StatusCode.OK
            # The next call takes a new connection; the first one closed once idle.
            assert await channel.unary_unary("/t.S/Size")(b"abc") == b"3"
            assert len(made) == 2 and made[0].active_streams == 0

    run(main())


def test_a_client_leaving_a_server_stream_cancels_its_writer() -> None:
    async def main() -> None:
        EVENTS.clear()
        async with (
            serve(ROUTES) as (port, _, made),
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        ):
            call = channel.unary_stream("/t.S/UntilGone")(b"")
            assert await call.read() == b"tick"
            call.cancel()
            for _ in range(200):
                if EVENTS and not made[0].active_streams:
                    break
                await asyncio.sleep(0.01)
        # The task is cancelled with the stream (or, between two writes, write raises).
        assert EVENTS in (["cancelled"], ["write gone True"])

    run(main())
