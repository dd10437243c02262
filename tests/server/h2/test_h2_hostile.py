"""Hostile HTTP/2 input on a raw socket: malformed frames, a HEADERS flood past the concurrency
limit, a huge HPACK header, rapid RST_STREAM, a CONTINUATION flood. The server must not crash,
must hold bounded state, must answer with the right GOAWAY or RST_STREAM, and must go on
serving other connections. Frames are built by hand (HPACK literals without indexing, with
tests/support/h2fuzz.py's encoder)."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import pytest

from tests.server.h2.conftest import Route, run, serve
from tests.support.h2fuzz import (
    COMPRESSION_ERROR,
    CONTINUATION,
    DATA,
    END_HEADERS,
    END_STREAM,
    ENHANCE_YOUR_CALM,
    GOAWAY,
    HEADERS,
    PREFACE,
    PROTOCOL_ERROR,
    RST_STREAM,
    SETTINGS,
    literal,
)
from tests.support.h2fuzz import frame as full
from tests.support.h2fuzz import request_block as request

STARTED: list[int] = []


async def _slow(stream: Any, message: bytes) -> bytes:
    STARTED.append(stream.stream_id)
    await asyncio.sleep(30)
    return b""


WRITTEN: list[int] = []


def _flood(stream: Any, message: bytes) -> Any:
    async def body() -> None:
        for _ in range(64):
            await stream.write(bytes(1 << 20))
            WRITTEN.append(1)

    return body()


async def _never_reads(stream: Any, message: None) -> None:
    await asyncio.sleep(30)


async def _chat(stream: Any, message: None) -> None:
    while (request := await stream.read()) is not None:
        await stream.write(request)


ROUTES = {
    b"/t.S/Chat": Route(_chat, request_streaming=True),
    b"/t.S/NeverReads": Route(_never_reads, request_streaming=True),
    b"/t.S/Slow": Route(_slow),
    b"/t.S/Echo": Route(lambda stream, message: message),
    b"/t.S/Flood": Route(_flood),
}


async def exchange(port: int, data: bytes, wait: float = 1.0) -> list[tuple[int, int, int, bytes]]:
    """Send ``data`` after the preface; the frames read back until the server closes or
    ``wait`` seconds of silence, as (type, flags, stream, payload)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(PREFACE + full(SETTINGS, 0, 0) + data)
    got = bytearray()
    try:
        while True:
            chunk = await asyncio.wait_for(reader.read(1 << 16), wait)
            if not chunk:
                break
            got += chunk
            if len(got) > 16 << 20:
                raise AssertionError("the server wrote more than 16 MiB")
    except (asyncio.TimeoutError, ConnectionResetError):
        pass
    writer.close()
    frames = []
    at = 0
    while at + 9 <= len(got):
        length = int.from_bytes(got[at : at + 3], "big")
        kind, flags = got[at + 3], got[at + 4]
        stream = int.from_bytes(got[at + 5 : at + 9], "big") & 0x7FFFFFFF
        frames.append((kind, flags, stream, bytes(got[at + 9 : at + 9 + length])))
        at += 9 + length
    return frames


def goaway_code(frames: list[tuple[int, int, int, bytes]]) -> int | None:
    codes = [struct.unpack(">II", f[3][:8])[1] for f in frames if f[0] == GOAWAY]
    return codes[-1] if codes else None


def resets(frames: list[tuple[int, int, int, bytes]]) -> dict[int, int]:
    return {f[2]: struct.unpack(">I", f[3])[0] for f in frames if f[0] == RST_STREAM}


async def _still_serves(port: int) -> None:
    message = b"\x00\x00\x00\x00\x02hi"
    frames = await exchange(
        port,
        full(HEADERS, END_HEADERS, 1, request(b"/t.S/Echo")) + full(DATA, END_STREAM, 1, message),
        wait=0.5,
    )
    assert (DATA, 0, 1, message) in frames


@pytest.mark.parametrize(
    "garbage",
    [
        b"\xff" * 64,  # not a frame at all
        full(DATA, 0, 1, b"x"),  # DATA on an idle stream
        full(HEADERS, END_HEADERS, 2, request(b"/t.S/Echo")),  # an even (server) stream id
        full(SETTINGS, 0, 0, b"\x00\x04\xff\xff\xff\xff"),  # initial window past 2^31-1
        full(HEADERS, END_HEADERS, 1, b"\xff\xff\xff\xff\xff\xff"),  # an HPACK index overflow
    ],
)
def test_malformed_frames_end_the_connection_with_goaway(garbage: bytes) -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, made):
            frames = await exchange(port, garbage)
            assert goaway_code(frames) is not None
            assert made[0].active_streams == 0
            await _still_serves(port)

    run(main())


def test_resets_of_answered_streams_are_not_rapid_reset() -> None:
    # Issue 47: a client cancelling calls it was answered on (grpcio's cancel, a closed
    # channel on a shared connection) drew nghttp2's GOAWAY INTERNAL_ERROR after 1000.
    async def main() -> None:
        message = b"\x00\x00\x00\x00\x02hi"
        async with serve(ROUTES) as (port, _, made):
            data = b"".join(
                full(HEADERS, END_HEADERS, sid, request(b"/t.S/Echo"))
                + full(DATA, END_STREAM, sid, message)
                + full(RST_STREAM, 0, sid, struct.pack(">I", 8))
                for sid in range(1, 2 * 1500, 2)
            )
            frames = await exchange(port, data, wait=1.0)
            assert goaway_code(frames) is None
            await asyncio.sleep(0.05)
            assert made[0].active_streams == 0

    run(main())


def test_headers_past_max_concurrent_streams_are_refused() -> None:
    async def main() -> None:
        STARTED.clear()
        async with serve(ROUTES, max_concurrent_streams=4) as (port, _, made):
            # The client acknowledges the server's SETTINGS first, so the limit is in force.
            flood = full(SETTINGS, 1, 0) + b"".join(
                full(HEADERS, END_HEADERS | END_STREAM, sid, request(b"/t.S/Slow"))
                for sid in range(1, 2 * 50, 2)
            )
            frames = await exchange(port, flood, wait=0.5)
            assert len(STARTED) <= 4 and made[0].active_streams == 0
            # Past an acknowledged limit nghttp2 ends the connection (RFC 9113 5.1.2 allows
            # that or REFUSED_STREAM per stream).
            assert goaway_code(frames) == PROTOCOL_ERROR and not resets(frames)

    run(main())


def test_a_huge_header_resets_the_stream_or_the_connection() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, made):
            block = request(b"/t.S/Echo", (b"x-huge", b"a" * 200_000))
            # HEADERS then CONTINUATIONs of 16 KiB (the default max frame size).
            pieces = [block[i : i + 16384] for i in range(0, len(block), 16384)]
            data = full(HEADERS, 0, 1, pieces[0])
            for i, piece in enumerate(pieces[1:], 1):
                data += full(CONTINUATION, END_HEADERS if i == len(pieces) - 1 else 0, 1, piece)
            frames = await exchange(port, data)
            # A 200 KB field is past what nghttp2's HPACK decoder takes (64 KiB).
            assert goaway_code(frames) == COMPRESSION_ERROR
            assert made[0].active_streams == 0
            await _still_serves(port)

    run(main())


def test_a_header_list_over_the_limit_resets_only_that_stream() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, made):
            many = [(b"x-%d" % i, b"v" * 100) for i in range(200)]  # ~26 KiB
            block = request(b"/t.S/Echo", *many)
            frames = await exchange(
                port,
                full(HEADERS, END_STREAM, 1, block[:16384])
                + full(CONTINUATION, END_HEADERS, 1, block[16384:])
                + full(HEADERS, END_HEADERS, 3, request(b"/t.S/Echo"))
                + full(DATA, END_STREAM, 3, b"\x00\x00\x00\x00\x01k"),
                wait=0.5,
            )
            assert 1 in resets(frames) and goaway_code(frames) is None
            assert (DATA, 0, 3, b"\x00\x00\x00\x00\x01k") in frames
            assert made[0].active_streams == 0

    run(main())


def test_rapid_reset_is_cut_off_with_goaway() -> None:
    async def main() -> None:
        STARTED.clear()
        async with serve(ROUTES) as (port, _, made):
            # Each call started (a whole request), then reset before its answer.
            data = b"".join(
                full(HEADERS, END_HEADERS, sid, request(b"/t.S/Slow"))
                + full(DATA, END_STREAM, sid, b"\x00\x00\x00\x00\x00")
                + full(RST_STREAM, 0, sid, struct.pack(">I", 8))
                for sid in range(1, 2 * 3000, 2)
            )
            frames = await exchange(port, data, wait=2.0)
            # 1000 resets of unanswered streams at once, then GOAWAY.
            assert goaway_code(frames) == ENHANCE_YOUR_CALM
            (last,) = [struct.unpack(">I", f[3][:4])[0] for f in frames if f[0] == GOAWAY]
            assert last < 2 * 1100
            # Every call started was cancelled and released with its stream.
            await asyncio.sleep(0.05)
            assert made[0].active_streams == 0 and len(STARTED) < 3000
            await _still_serves(port)

    run(main())


def test_a_continuation_flood_is_cut_off() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, made):
            block = request(b"/t.S/Echo")
            data = full(HEADERS, 0, 1, block) + b"".join(
                full(CONTINUATION, 0, 1, literal(b"x-a", b"b")) for _ in range(100)
            )
            frames = await exchange(port, data)
            assert goaway_code(frames) == ENHANCE_YOUR_CALM
            assert made[0].active_streams == 0
            await _still_serves(port)

    run(main())


def test_a_client_that_never_reads_holds_a_bounded_response() -> None:
    async def main() -> None:
        WRITTEN.clear()
        async with serve(ROUTES) as (port, _, made):
            # No WINDOW_UPDATE ever: the client's 64 KiB windows fill, then the handler waits.
            frames = await exchange(
                port,
                full(HEADERS, END_HEADERS, 1, request(b"/t.S/Flood"))
                + full(DATA, END_STREAM, 1, b"\x00\x00\x00\x00\x00"),
                wait=0.5,
            )
            sent = sum(len(f[3]) for f in frames if f[0] == DATA)
            assert sent <= 65535
            # Write's bound (1 MiB unsent) plus the message that crossed it.
            assert len(WRITTEN) <= 2
            for _ in range(100):  # the close reaches the server: the call is cancelled
                if not made[0].active_streams:
                    break
                await asyncio.sleep(0.01)
            assert made[0].active_streams == 0 and len(WRITTEN) <= 2

    run(main())


def test_a_streaming_call_that_never_reads_holds_a_bounded_request() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, _):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(PREFACE + full(SETTINGS, 0, 0) + full(SETTINGS, 1, 0))
            writer.write(full(HEADERS, END_HEADERS, 1, request(b"/t.S/NeverReads")))
            message = b"\x00" + struct.pack(">I", 16379) + bytes(16379)  # 16 KiB frames
            window, sent = 65535, 0  # the stream's window, until the server's SETTINGS say
            got = bytearray()
            for _ in range(400):  # as much as the server's windows allow, up to 6.4 MiB
                while window >= len(message):
                    writer.write(full(DATA, 0, 1, message))
                    window -= len(message)
                    sent += len(message)
                await writer.drain()
                try:
                    got += await asyncio.wait_for(reader.read(1 << 16), 0.2)
                except asyncio.TimeoutError:
                    break
                while len(got) >= 9 and len(got) >= 9 + int.from_bytes(got[:3], "big"):
                    length = int.from_bytes(got[:3], "big")
                    kind, stream, payload = got[3], got[5:9], bytes(got[9 : 9 + length])
                    del got[: 9 + length]
                    if kind == SETTINGS and length:
                        for at in range(0, length, 6):
                            ident, value = struct.unpack(">HI", payload[at : at + 6])
                            window += value - 65535 if ident == 4 else 0
                    elif kind == 8 and stream == b"\x00\x00\x00\x01":  # WINDOW_UPDATE
                        window += struct.unpack(">I", payload)[0]
            writer.close()
            # Two stream windows (1 MiB each) at most: the rest waits for read().
            assert 1 << 20 <= sent <= 2 << 20

    run(main())


@pytest.mark.parametrize("value", [b"", b"S", b"123456789S", b"10x"])
def test_a_malformed_grpc_timeout_ends_the_call_with_internal(value: bytes) -> None:
    # Found by tools/h2_fuzz.py: an empty grpc-timeout was taken as no timeout at all.
    hpack = pytest.importorskip("hpack", reason="the test extra's HPACK decoder")

    async def main() -> None:
        async with serve(ROUTES) as (port, _, _):
            frames = await exchange(
                port,
                full(HEADERS, END_HEADERS, 1, request(b"/t.S/Echo", (b"grpc-timeout", value)))
                + full(DATA, END_STREAM, 1, b"\x00\x00\x00\x00\x02hi"),
                wait=0.5,
            )
            decoder = hpack.Decoder()
            fields = [
                dict(decoder.decode(f[3], raw=True))
                for f in frames
                if f[0] == HEADERS and f[2] == 1
            ]
            assert [f.get(b"grpc-status") for f in fields] == [b"13"]
            assert b"grpc-timeout" in fields[0][b"grpc-message"]

    run(main())


def test_a_bad_message_mid_stream_cancels_the_handler_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Found by tools/h2_fuzz.py: the call ended with INTERNAL but its handler ran on, and its
    # next write (on the ended call) was logged as the handler's error, with a traceback.
    hpack = pytest.importorskip("hpack", reason="the test extra's HPACK decoder")

    async def main() -> None:
        async with serve(ROUTES) as (port, _, _):
            frames = await exchange(
                port,
                full(HEADERS, END_HEADERS, 1, request(b"/t.S/Chat"))
                + full(DATA, 0, 1, b"\x00\x00\x00\x00\x02hi" + b"\x07\x00\x00\x00\x02hi"),
                wait=0.5,
            )
            decoder = hpack.Decoder()
            fields = [dict(decoder.decode(f[3], raw=True)) for f in frames if f[0] == HEADERS]
            assert [f.get(b"grpc-status") for f in fields] == [b"13"]
            assert not [f for f in frames if f[0] == DATA]

    with caplog.at_level("ERROR", logger="oipcodec.server.h2"):
        run(main())
    assert not caplog.records, caplog.records
