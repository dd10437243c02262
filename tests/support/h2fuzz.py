"""A seeded generator of hostile HTTP/2 client byte streams for the native gRPC server (issue 47),
and the driver that feeds them to ``H2Protocol`` in-process and checks what it answers.

Each case is the bytes a client sends after the connection preface, its class, and the error
RFC 9113 / RFC 7541 (or the gRPC protocol) names for it, if any: the GOAWAY code, or a stream's
RST_STREAM code, or the grpc-status in its trailers. The frames and HPACK blocks are built
here (our own encoder, so it can lie about lengths, indices and Huffman codes); the server's
answer is read back frame by frame and its header blocks decoded with the ``hpack`` package
(the test extra). ``tools/h2_fuzz.py`` runs it for long; tests/server/h2/test_h2_fuzz.py runs a
bounded, seeded sample. The in-process driver needs a running event loop (it is async).
"""

from __future__ import annotations

import asyncio
import logging
import random
import struct
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY = range(8)
WINDOW_UPDATE, CONTINUATION = 8, 9
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 1, 1, 4, 8, 32
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0, 1, 2, 3
STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL = 5, 6, 7, 8
COMPRESSION_ERROR, ENHANCE_YOUR_CALM = 9, 11
#: The frame types a server sends (RFC 9113 6): never PUSH_PROMISE here, nor CONTINUATION
#: (nghttp2 writes a header block in one frame up to the client's max frame size).
SERVER_TYPES = {DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE}
INFER = b"/inference.GRPCInferenceService/ModelInfer"
STREAMING = b"/t.S/NeverReads"
CHAT = b"/t.S/Chat"
#: The largest request message the fuzzed connections take (small, so "past the limit" is cheap).
MAX_RECEIVE = 1 << 16
#: The recorded exchange: grpcio's channel sending one ModelInfer (tools/h2_fuzz.py --record).
RECORDED = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "h2" / "grpcio_modelinfer.bin"


# ---------------------------------------------------------------------------- encoding


def frame(
    kind: int, flags: int, stream: int, payload: bytes = b"", length: int | None = None
) -> bytes:
    """One frame; ``length`` lies about the payload's length when given."""
    size = len(payload) if length is None else length
    return struct.pack(">I", size)[1:] + bytes((kind, flags)) + struct.pack(">I", stream) + payload


def hpack_int(value: int, prefix: int, first: int = 0) -> bytes:
    """RFC 7541 5.1: ``value`` on a ``prefix``-bit prefix, ``first`` the bits above it."""
    top = (1 << prefix) - 1
    if value < top:
        return bytes((first | value,))
    out = bytearray((first | top,))
    value -= top
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def literal(name: bytes, value: bytes, indexing: bool = False) -> bytes:
    """A literal field with a new name, no Huffman: with incremental indexing (6.2.1) or
    without indexing (6.2.2)."""
    head = b"\x40" if indexing else b"\x00"
    return head + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value


def request_fields(path: bytes = INFER) -> list[tuple[bytes, bytes]]:
    """A gRPC request's fields but ``te``."""
    return [
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":path", path),
        (b":authority", b"fuzz"),
        (b"content-type", b"application/grpc"),
    ]


def request_block(path: bytes = INFER, *extra: tuple[bytes, bytes]) -> bytes:
    fields = [
        *request_fields(path),
        (b"te", b"trailers"),
        *extra,
    ]
    return b"".join(literal(n, v) for n, v in fields)


def message(body: bytes, flag: int = 0, length: int | None = None) -> bytes:
    """A gRPC length-prefixed message; ``length`` lies when given."""
    return bytes((flag,)) + struct.pack(">I", len(body) if length is None else length) + body


def call(sid: int, body: bytes = b"hi", path: bytes = INFER, *extra: tuple[bytes, bytes]) -> bytes:
    """A whole unary call on stream ``sid``: HEADERS, one DATA with END_STREAM."""
    return frame(HEADERS, END_HEADERS, sid, request_block(path, *extra)) + frame(
        DATA, END_STREAM, sid, message(body)
    )


# ---------------------------------------------------------------------------- cases


@dataclass
class Case:
    """A client byte stream (after the preface and an empty SETTINGS) and what it must draw:
    ``goaway`` the codes a GOAWAY may carry (empty: any or none), ``reset`` stream -> the
    RST_STREAM codes allowed, ``status`` stream -> the grpc-status its trailers must carry."""

    kind: str
    data: bytes
    goaway: frozenset[int | None] = frozenset()
    reset: dict[int, frozenset[int | None]] | None = None
    status: dict[int, int] | None = None
    #: stream -> the DATA its answer must carry (an echo of the request's messages).
    echo: dict[int, bytes] | None = None
    #: Ignored by nghttp2 where the RFC names an error (EXCEPTIONS): no error GOAWAY, no reset.
    ignored: bool = False


#: Where nghttp2 (csrc/third_party/nghttp2) departs from RFC 9113 on purpose, each harmless: the
#: frame is dropped, no state is kept for it, the connection goes on.
EXCEPTIONS = {
    "decreasing_stream": "HEADERS on a stream id below the last one is ignored, not a "
    "PROTOCOL_ERROR (nghttp2 cannot tell it from a late trailer of a stream it reset)",
    "priority_on_stream_0": "PRIORITY is not parsed past its length (RFC 9113 deprecates it), "
    "so stream 0 is not checked",
    "bad_value": "a regular field whose value holds NUL, CR or LF is dropped and the request "
    "served without it, not reset as malformed",
}


#: Classes of costly cases (megabytes each), picked one time in twenty of the others.
RARE = {"data_past_window"}


def _conn_error(kind: str, data: bytes, *codes: int | None) -> Case:
    return Case(kind, data, goaway=frozenset(codes))


def _stream_error(kind: str, data: bytes, sid: int, *codes: int) -> Case:
    # A stream error may always be raised to a connection error (RFC 9113 5.4).
    return Case(kind, data, goaway=frozenset(codes), reset={sid: frozenset(codes)})


def _grpc(kind: str, data: bytes, sid: int, status: int) -> Case:
    return Case(kind, data, status={sid: status})


class Generator:
    """Hostile client streams from ``random.Random(seed)``: ``next()`` picks a class, builds
    one case of it, and often prefixes valid calls or appends random frames."""

    def __init__(self, seed: int, recorded: bytes | None = None) -> None:
        self.rng = random.Random(seed)
        self.recorded = recorded if recorded is not None else load_recorded()
        self.classes: list[tuple[str, Callable[[], Case]]] = [
            (name[5:], getattr(self, name))
            for name in sorted(dir(self))
            if name.startswith("case_")
        ]

    def next(self) -> Case:
        r = self.rng
        if r.random() < 0.25:
            return self.mutated()
        name, make = r.choice(self.classes)
        while name in RARE and r.random() > 0.05:
            name, make = r.choice(self.classes)
        return make()

    # -- helpers

    def sid(self) -> int:
        return self.rng.choice((1, 3, 5, 101, 2**31 - 1))

    def random_frame(self) -> bytes:
        r = self.rng
        payload = r.randbytes(r.choice((0, 1, 4, 5, 6, 8, 9, 16, r.randrange(64))))
        kind = r.choice((*range(10), r.randrange(10, 256)))
        stream = r.choice((0, 1, 2, 3, 2**31 - 1, r.getrandbits(32)))
        return frame(kind, r.getrandbits(8), stream, payload)

    def mutated(self) -> Case:
        """A recorded or generated stream, bit-flipped, truncated, spliced or with frames
        repeated or dropped: no code expected, the general properties still hold."""
        r = self.rng
        base = bytearray(self.recorded if r.random() < 0.6 else r.choice(self.classes)[1]().data)
        how = r.randrange(5)
        if how == 0:
            for _ in range(r.randrange(1, 9)):
                if base:
                    base[r.randrange(len(base))] ^= 1 << r.randrange(8)
        elif how == 1:
            del base[r.randrange(len(base) + 1) :]
        elif how == 2:
            other = r.choice(self.classes)[1]().data
            at = r.randrange(len(base) + 1)
            base[at:at] = other[r.randrange(len(other) + 1) :]
        elif how == 3:
            at, end = sorted(r.randrange(len(base) + 1) for _ in range(2))
            base[at:at] = base[at:end] * r.randrange(1, 4)
        else:
            at = r.randrange(len(base) + 1)
            base[at : at + r.randrange(16)] = r.randbytes(r.randrange(16))
        return Case("mutated", bytes(base))

    # -- frames (RFC 9113)

    def case_random_frames(self) -> Case:
        return Case(
            "random_frames", b"".join(self.random_frame() for _ in range(self.rng.randrange(1, 8)))
        )

    def case_unknown_type(self) -> Case:
        # Unknown types are ignored (RFC 9113 4.1): the call after it is answered.
        r = self.rng
        data = frame(
            r.randrange(10, 256), r.getrandbits(8), r.choice((0, 1)), r.randbytes(r.randrange(32))
        )
        return _grpc("unknown_type", data + call(1), 1, 0)

    def case_data_on_stream_0(self) -> Case:
        return _conn_error("data_on_stream_0", frame(DATA, 0, 0, b"x"), PROTOCOL_ERROR)

    def case_headers_on_stream_0(self) -> Case:
        return _conn_error(
            "headers_on_stream_0", frame(HEADERS, END_HEADERS, 0, request_block()), PROTOCOL_ERROR
        )

    def case_even_stream(self) -> Case:
        sid = 2 * self.rng.randrange(1, 1000)
        return _conn_error(
            "even_stream", frame(HEADERS, END_HEADERS, sid, request_block()), PROTOCOL_ERROR
        )

    def case_decreasing_stream(self) -> Case:
        data = frame(HEADERS, END_HEADERS, 7, request_block()) + frame(
            HEADERS, END_HEADERS, 5, request_block()
        )
        return Case("decreasing_stream", data + call(9), status={9: 0}, ignored=True)

    def case_reused_stream(self) -> Case:
        # HEADERS again on a stream the client half-closed: STREAM_CLOSED (RFC 9113 5.1); once
        # the server has answered and closed it too, nghttp2 drops it (None: no GOAWAY).
        return _conn_error("reused_stream", call(1) + call(1), STREAM_CLOSED, PROTOCOL_ERROR, None)

    def case_data_on_idle(self) -> Case:
        return _conn_error("data_on_idle", frame(DATA, 0, self.sid(), b"x"), PROTOCOL_ERROR)

    def case_frame_too_large(self) -> Case:
        # Past the default SETTINGS_MAX_FRAME_SIZE (16384): FRAME_SIZE_ERROR (RFC 9113 4.2).
        kind = self.rng.choice((DATA, HEADERS))
        return _conn_error("frame_too_large", frame(kind, 0, 1, bytes(16385)), FRAME_SIZE_ERROR)

    def case_length_lies(self) -> Case:
        # A header saying more than follows: the server waits for the rest (no answer needed);
        # saying less leaves the tail read as the next frame's header.
        r = self.rng
        payload = request_block()
        return Case(
            "length_lies",
            frame(HEADERS, END_HEADERS, 1, payload, len(payload) + r.choice((-9, -1, 1, 100))),
        )

    def case_padding_past_end(self) -> Case:
        r = self.rng
        body = message(b"hi")
        if r.random() < 0.5:
            data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(
                DATA, PADDED | END_STREAM, 1, bytes((len(body) + 1 + r.randrange(200),)) + body
            )
        else:
            block = request_block()
            data = frame(
                HEADERS,
                END_HEADERS | PADDED,
                1,
                bytes((min(255, len(block) + 1 + r.randrange(50)),)) + block,
            )
        return _conn_error("padding_past_end", data, PROTOCOL_ERROR)

    def case_priority(self) -> Case:
        # PRIORITY is deprecated (RFC 9113 5.3.2) but still parsed: 5 octets, else
        # FRAME_SIZE_ERROR; depending on itself is a stream error PROTOCOL_ERROR (5.3.1).
        r = self.rng
        sid = self.sid()
        if r.random() < 0.5:
            data = frame(PRIORITY, 0, sid, bytes(r.choice((0, 4, 6))))
            return Case(
                "priority_size",
                data,
                goaway=frozenset({FRAME_SIZE_ERROR}),
                reset={sid: frozenset({FRAME_SIZE_ERROR})},
            )
        # RFC 9113 dropped RFC 7540's self-dependency error with the priority scheme.
        data = frame(PRIORITY, 0, sid, struct.pack(">IB", sid | r.choice((0, 1 << 31)), 16))
        return Case("priority_self", data)

    def case_priority_on_stream_0(self) -> Case:
        return Case(
            "priority_on_stream_0",
            frame(PRIORITY, 0, 0, bytes(5)) + call(1),
            status={1: 0},
            ignored=True,
        )

    def case_settings_bad(self) -> Case:
        r = self.rng
        pick = r.randrange(6)
        if pick == 0:
            return _conn_error(
                "settings_push",
                frame(SETTINGS, 0, 0, struct.pack(">HI", 2, r.randrange(2, 2**32))),
                PROTOCOL_ERROR,
            )
        if pick == 1:
            return _conn_error(
                "settings_window",
                frame(SETTINGS, 0, 0, struct.pack(">HI", 4, r.randrange(2**31, 2**32))),
                FLOW_CONTROL_ERROR,
            )
        if pick == 2:
            size = r.choice((0, 1, 16383, 2**24, 2**32 - 1))
            return _conn_error(
                "settings_frame_size",
                frame(SETTINGS, 0, 0, struct.pack(">HI", 5, size)),
                PROTOCOL_ERROR,
            )
        if pick == 3:
            return _conn_error(
                "settings_length",
                frame(SETTINGS, 0, 0, bytes(r.choice((1, 5, 7, 11)))),
                FRAME_SIZE_ERROR,
            )
        if pick == 4:
            return _conn_error(
                "settings_ack_payload", frame(SETTINGS, ACK, 0, bytes(6)), FRAME_SIZE_ERROR
            )
        return _conn_error("settings_on_stream", frame(SETTINGS, 0, 1, b""), PROTOCOL_ERROR)

    def case_settings_unknown(self) -> Case:
        # Unknown settings are ignored (RFC 9113 6.5.2); extreme known values are taken.
        r = self.rng
        entries = b"".join(
            struct.pack(
                ">HI",
                r.choice((1, 3, 6, 8, 9, r.randrange(10, 2**16))),
                r.getrandbits(32) if r.random() < 0.5 else 0,
            )
            for _ in range(r.randrange(1, 20))
        )
        return Case("settings_unknown", frame(SETTINGS, 0, 0, entries))

    def case_ping_bad(self) -> Case:
        if self.rng.random() < 0.5:
            return _conn_error(
                "ping_size", frame(PING, 0, 0, bytes(self.rng.choice((0, 7, 9)))), FRAME_SIZE_ERROR
            )
        return _conn_error("ping_on_stream", frame(PING, 0, 1, bytes(8)), PROTOCOL_ERROR)

    def case_window_update_zero(self) -> Case:
        if self.rng.random() < 0.5:
            return _conn_error(
                "window_zero_conn", frame(WINDOW_UPDATE, 0, 0, bytes(4)), PROTOCOL_ERROR
            )
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(
            WINDOW_UPDATE, 0, 1, bytes(4)
        )
        return Case(
            "window_zero_stream",
            data,
            reset={1: frozenset({PROTOCOL_ERROR})},
            goaway=frozenset({PROTOCOL_ERROR}),
        )

    def case_window_update_overflow(self) -> Case:
        inc = struct.pack(">I", 2**31 - 1)
        if self.rng.random() < 0.5:
            return _conn_error(
                "window_overflow_conn", frame(WINDOW_UPDATE, 0, 0, inc) * 2, FLOW_CONTROL_ERROR
            )
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(WINDOW_UPDATE, 0, 1, inc)
        return _stream_error("window_overflow_stream", data, 1, FLOW_CONTROL_ERROR)

    def case_window_update_size(self) -> Case:
        return _conn_error(
            "window_size",
            frame(WINDOW_UPDATE, 0, 0, bytes(self.rng.choice((0, 3, 5)))),
            FRAME_SIZE_ERROR,
        )

    def case_data_past_window(self) -> Case:
        # A streaming call that never reads gives back one window (1 MiB) as messages queue,
        # then holds the next: past two windows is FLOW_CONTROL_ERROR. (2 MiB a case: rare.)
        chunk = frame(DATA, 0, 1, message(bytes(16379)))
        data = frame(HEADERS, END_HEADERS, 1, request_block(STREAMING)) + chunk * 130
        return Case(
            "data_past_window",
            data,
            goaway=frozenset({FLOW_CONTROL_ERROR}),
            reset={1: frozenset({FLOW_CONTROL_ERROR})},
        )

    def case_rst_storm(self) -> Case:
        r = self.rng
        n = r.randrange(1, 300)
        data = b"".join(
            frame(HEADERS, END_HEADERS, sid, request_block(STREAMING))
            + frame(RST_STREAM, 0, sid, struct.pack(">I", r.choice((0, 8, 2**32 - 1))))
            for sid in range(1, 2 * n, 2)
        )
        return Case("rst_storm", data)

    def case_rst_bad(self) -> Case:
        pick = self.rng.randrange(3)
        if pick == 0:
            return _conn_error("rst_on_stream_0", frame(RST_STREAM, 0, 0, bytes(4)), PROTOCOL_ERROR)
        if pick == 1:
            return _conn_error(
                "rst_on_idle", frame(RST_STREAM, 0, self.sid(), bytes(4)), PROTOCOL_ERROR
            )
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(
            RST_STREAM, 0, 1, bytes(self.rng.choice((0, 3, 5)))
        )
        return _conn_error("rst_size", data, FRAME_SIZE_ERROR)

    def case_push_promise(self) -> Case:
        # A client must not send PUSH_PROMISE (RFC 9113 8.4).
        return _conn_error(
            "push_promise",
            frame(PUSH_PROMISE, END_HEADERS, 1, struct.pack(">I", 2) + request_block()),
            PROTOCOL_ERROR,
        )

    def case_continuation_alone(self) -> Case:
        return _conn_error(
            "continuation_alone",
            frame(CONTINUATION, END_HEADERS, self.sid(), request_block()),
            PROTOCOL_ERROR,
        )

    def case_continuation_interrupted(self) -> Case:
        block = request_block()
        data = (
            frame(HEADERS, 0, 1, block[:10])
            + frame(self.rng.choice((DATA, PING, HEADERS)), 0, 1, bytes(8))
            + frame(CONTINUATION, END_HEADERS, 1, block[10:])
        )
        return _conn_error("continuation_interrupted", data, PROTOCOL_ERROR)

    def case_continuation_flood(self) -> Case:
        n = self.rng.randrange(9, 200)
        piece = literal(b"x-a", b"b")
        data = frame(HEADERS, 0, 1, request_block()) + frame(CONTINUATION, 0, 1, piece) * n
        return _conn_error("continuation_flood", data, ENHANCE_YOUR_CALM)

    def case_past_concurrency(self) -> Case:
        # Past an acknowledged SETTINGS_MAX_CONCURRENT_STREAMS: REFUSED_STREAM per stream or
        # the connection's PROTOCOL_ERROR (RFC 9113 5.1.2); the driver's limit is 8.
        n = self.rng.randrange(9, 60)
        data = frame(SETTINGS, ACK, 0) + b"".join(
            frame(HEADERS, END_HEADERS, sid, request_block(STREAMING)) for sid in range(1, 2 * n, 2)
        )
        return Case(
            "past_concurrency",
            data,
            goaway=frozenset({PROTOCOL_ERROR}),
            reset={2 * n - 1: frozenset({REFUSED_STREAM, PROTOCOL_ERROR})},
        )

    def case_bad_fields(self) -> Case:
        # Malformed requests (RFC 9113 8.1.1, 8.2, 8.3): a stream error PROTOCOL_ERROR.
        r = self.rng
        fields = request_fields()
        pick = r.randrange(6)
        if pick == 0:
            fields.append((b"X-Upper", b"v"))
        elif pick == 1:
            fields.append((b":status", b"200"))
        elif pick == 2:
            fields.insert(0, (b"te", b"trailers"))
            fields.append((b":path", b"/late"))
        elif pick == 3:
            fields.append(
                (r.choice((b"connection", b"keep-alive", b"upgrade", b"transfer-encoding")), b"x")
            )
        elif pick == 4:
            fields.append((b"te", b"gzip"))
        else:
            del fields[r.randrange(3)]
        block = b"".join(literal(n, v) for n, v in fields)
        return _stream_error(
            "bad_fields",
            frame(HEADERS, END_HEADERS, 1, block) + frame(DATA, END_STREAM, 1, message(b"hi")),
            1,
            PROTOCOL_ERROR,
        )

    def case_bad_value(self) -> Case:
        # A regular field whose value holds NUL, CR or LF (RFC 9113 8.2.1: malformed).
        value = self.rng.choice((b"v\x00", b"v\r\n", b"\nv"))
        return Case(
            "bad_value", call(1, b"hi", INFER, (b"x-a", value)), status={1: 0}, ignored=True
        )

    def case_data_after_end(self) -> Case:
        # DATA on a stream the client half-closed: STREAM_CLOSED (RFC 9113 5.1); once the
        # server has answered and closed the stream too, nghttp2 drops it (None: no reset).
        data = frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block()) + frame(
            DATA, 0, 1, b"x"
        )
        return Case(
            "data_after_end",
            data,
            goaway=frozenset({STREAM_CLOSED}),
            reset={1: frozenset({STREAM_CLOSED, None})},
        )

    def case_request_trailers(self) -> Case:
        # Trailers end the request: read as the end of the stream, the call answered.
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(DATA, 0, 1, message(b"hi"))
        data += frame(HEADERS, END_HEADERS | END_STREAM, 1, literal(b"x-trailer", b"t"))
        return _grpc("request_trailers", data, 1, 0)

    def case_client_window_zero(self) -> Case:
        # The client's windows at 0: the answer waits (its HEADERS may go, no DATA), then the
        # connection is dropped with the call in flight.
        data = frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 0)) + call(1) + call(3, bytes(5000))
        return Case("client_window_zero", data)

    def case_client_goaway(self) -> Case:
        r = self.rng
        data = (
            call(1)
            + frame(
                GOAWAY,
                0,
                0,
                struct.pack(">II", r.getrandbits(31), r.randrange(14))
                + r.randbytes(r.randrange(20)),
            )
            + call(3)
        )
        return Case("client_goaway", data)

    def case_open_streams_dropped(self) -> Case:
        # Calls in flight (streaming, never reading) when the connection is lost: each
        # cancelled and released (the driver checks that no stream or task is left).
        data = frame(SETTINGS, ACK, 0) + b"".join(
            frame(HEADERS, END_HEADERS, sid, request_block(STREAMING))
            + frame(DATA, 0, sid, message(b"x"))
            for sid in range(1, 17, 2)
        )
        return Case("open_streams_dropped", data)

    def case_streaming(self) -> Case:
        # Request-streaming calls echoed message by message, their messages split anywhere
        # across DATA frames, some reset or windows updated on the way.
        r = self.rng
        out, status, echo = b"", {}, {}
        for sid in range(1, 2 * r.randrange(1, 5), 2):
            body = b"".join(
                message(r.randbytes(r.randrange(0, 2000))) for _ in range(r.randrange(0, 6))
            )
            out += frame(HEADERS, END_HEADERS, sid, request_block(CHAT))
            at = 0
            while at < len(body):
                step = r.randrange(1, 3000)
                out += frame(DATA, 0, sid, body[at : at + step])
                at += step
                if r.random() < 0.1:
                    out += frame(
                        WINDOW_UPDATE,
                        0,
                        r.choice((0, sid)),
                        struct.pack(">I", r.randrange(1, 1 << 20)),
                    )
            if r.random() < 0.2:
                out += frame(RST_STREAM, 0, sid, struct.pack(">I", CANCEL))
            elif r.random() < 0.9:
                out += frame(DATA, END_STREAM, sid, b"")
                status[sid], echo[sid] = 0, body
        return Case("streaming", out, status=status, echo=echo)

    # -- HPACK (RFC 7541): each ends the connection with COMPRESSION_ERROR

    def _block(self, kind: str, block: bytes) -> Case:
        return _conn_error(
            kind, frame(HEADERS, END_HEADERS | END_STREAM, 1, block), COMPRESSION_ERROR
        )

    def case_hpack_random(self) -> Case:
        return Case(
            "hpack_random",
            frame(HEADERS, END_HEADERS, 1, self.rng.randbytes(self.rng.randrange(1, 64))),
        )

    def case_hpack_index_past(self) -> Case:
        return self._block(
            "hpack_index_past",
            request_block() + hpack_int(self.rng.choice((0, 62, 63, 200, 2**20)), 7, 0x80),
        )

    def case_hpack_name_index_past(self) -> Case:
        return self._block(
            "hpack_name_index_past",
            request_block() + hpack_int(self.rng.randrange(62, 500), 4) + b"\x01x",
        )

    def case_hpack_size_update_past(self) -> Case:
        return self._block(
            "hpack_size_update_past",
            hpack_int(self.rng.choice((4097, 65536, 2**31)), 5, 0x20) + request_block(),
        )

    def case_hpack_size_update_late(self) -> Case:
        block = (
            literal(b":method", b"POST")
            + hpack_int(self.rng.randrange(0, 4096), 5, 0x20)
            + request_block()[len(literal(b":method", b"POST")) :]
        )
        return self._block("hpack_size_update_late", block)

    def case_hpack_bad_huffman(self) -> Case:
        # A Huffman string of all-ones past 7 bits of padding (EOS, 5.2) or padding of zeros.
        r = self.rng
        coded = r.choice((b"\xff\xff\xff\xff", b"\x00", b"\xfe"))
        return self._block(
            "hpack_bad_huffman",
            request_block() + b"\x00" + hpack_int(len(coded), 7, 0x80) + coded + b"\x01v",
        )

    def case_hpack_int_overflow(self) -> Case:
        n = self.rng.randrange(6, 40)
        return self._block("hpack_int_overflow", request_block() + b"\xff" + b"\xff" * n + b"\x7f")

    def case_hpack_literal_past(self) -> Case:
        return self._block(
            "hpack_literal_past",
            request_block() + b"\x00\x03x-a" + hpack_int(self.rng.randrange(2, 5000), 7) + b"v",
        )

    def case_hpack_bomb(self) -> Case:
        # One 4 KB entry in the dynamic table, then named by index over and over: the decoded
        # list passes the 16 KiB SETTINGS_MAX_HEADER_LIST_SIZE, only this stream is reset.
        r = self.rng
        block = (
            request_block()
            + literal(b"x-b", b"a" * 4000, indexing=True)
            + b"\xbe" * r.randrange(8, 3000)
        )
        pieces = [block[i : i + 16384] for i in range(0, len(block), 16384)]
        data = frame(HEADERS, END_STREAM | (END_HEADERS if len(pieces) == 1 else 0), 1, pieces[0])
        for i, piece in enumerate(pieces[1:], 1):
            data += frame(CONTINUATION, END_HEADERS if i == len(pieces) - 1 else 0, 1, piece)
        return Case(
            "hpack_bomb",
            data,
            reset={1: frozenset({INTERNAL_ERROR, PROTOCOL_ERROR, REFUSED_STREAM})},
        )

    # -- gRPC (the gRPC over HTTP/2 protocol): the call ends with a grpc-status

    def case_grpc_bad_flag(self) -> Case:
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(
            DATA, END_STREAM, 1, message(b"hi", self.rng.randrange(2, 256))
        )
        return _grpc("grpc_bad_flag", data, 1, 13)

    def case_grpc_past_limit(self) -> Case:
        length = self.rng.choice((MAX_RECEIVE + 1, 2**32 - 1))
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(
            DATA, END_STREAM, 1, message(b"hi", 0, length)
        )
        return _grpc("grpc_past_limit", data, 1, 8)

    def case_grpc_compressed_identity(self) -> Case:
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(
            DATA, END_STREAM, 1, message(zlib.compress(b"hi"), 1)
        )
        return _grpc("grpc_compressed_identity", data, 1, 13)

    def case_grpc_bad_deflate(self) -> Case:
        r = self.rng
        extra = (b"grpc-encoding", r.choice((b"gzip", b"deflate")))
        data = frame(HEADERS, END_HEADERS, 1, request_block(INFER, extra)) + frame(
            DATA, END_STREAM, 1, message(r.randbytes(r.randrange(1, 40)), 1)
        )
        return _grpc("grpc_bad_deflate", data, 1, 13)

    def case_grpc_truncated(self) -> Case:
        body = message(b"hello")
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(
            DATA, END_STREAM, 1, body[: self.rng.randrange(1, len(body))]
        )
        return _grpc("grpc_truncated", data, 1, 13)

    def case_grpc_two_messages(self) -> Case:
        data = frame(HEADERS, END_HEADERS, 1, request_block()) + frame(
            DATA, END_STREAM, 1, message(b"a") + message(b"b")
        )
        return _grpc("grpc_two_messages", data, 1, 13)

    def case_grpc_bad_timeout(self) -> Case:
        value = self.rng.choice((b"", b"1", b"123456789S", b"10x", b"-1S", b"S"))
        return _grpc("grpc_bad_timeout", call(1, b"hi", INFER, (b"grpc-timeout", value)), 1, 13)

    def case_valid_calls(self) -> Case:
        # Valid calls, some split in several DATA frames: each is echoed, status 0.
        r = self.rng
        out, status, echo = b"", {}, {}
        for sid in range(1, 2 * r.randrange(1, 8), 2):
            body = message(r.randbytes(r.randrange(0, 3000)))
            cut = r.randrange(len(body) + 1)
            out += (
                frame(HEADERS, END_HEADERS, sid, request_block())
                + frame(DATA, 0, sid, body[:cut])
                + frame(DATA, END_STREAM, sid, body[cut:])
            )
            status[sid], echo[sid] = 0, body
        return Case("valid_calls", out, status=status, echo=echo)


def load_recorded() -> bytes:
    return RECORDED.read_bytes() if RECORDED.exists() else call(1)


# ---------------------------------------------------------------------------- checking


def parse_frames(data: bytes) -> list[tuple[int, int, int, bytes]]:
    """The server's bytes as (type, flags, stream, payload); AssertionError if they are not
    whole frames of the types a server sends."""
    frames = []
    at = 0
    while at < len(data):
        assert at + 9 <= len(data), f"a partial frame header at byte {at}"
        length = int.from_bytes(data[at : at + 3], "big")
        kind, flags = data[at + 3], data[at + 4]
        stream = int.from_bytes(data[at + 5 : at + 9], "big")
        assert stream < 2**31, f"the reserved bit set at byte {at + 5}"
        assert at + 9 + length <= len(data), (
            f"frame at byte {at} claims {length} bytes past the end"
        )
        assert kind in SERVER_TYPES, f"frame type {kind} at byte {at}"
        assert length <= 16384, f"a {length}-byte frame at byte {at}, past the client's 16384"
        frames.append((kind, flags, stream, data[at + 9 : at + 9 + length]))
        at += 9 + length
    return frames


@dataclass
class Answer:
    goaway: list[tuple[int, int]]  # (last stream, code)
    resets: dict[int, int]
    statuses: dict[int, int]
    data: dict[int, bytes]


def read_answer(written: bytes) -> Answer:
    import hpack  # (the test extra's; the encoding helpers above do without it)

    frames = parse_frames(written)
    assert frames and frames[0][0] == SETTINGS and not frames[0][1] & ACK, "no SETTINGS first"
    decoder = hpack.Decoder()
    decoder.max_allowed_table_size = 4096
    answer = Answer([], {}, {}, {})
    for kind, flags, stream, payload in frames:
        if kind == GOAWAY:
            assert stream == 0 and len(payload) >= 8
            answer.goaway.append(struct.unpack(">II", payload[:8]))
        elif kind == RST_STREAM:
            assert stream and len(payload) == 4
            answer.resets[stream] = struct.unpack(">I", payload)[0]
        elif kind == HEADERS:
            assert stream % 2 == 1 and flags & END_HEADERS
            for name, value in decoder.decode(payload, raw=True):
                if name == b"grpc-status":
                    answer.statuses[stream] = int(value)
        elif kind == DATA:
            assert stream % 2 == 1
            answer.data[stream] = answer.data.get(stream, b"") + payload
    return answer


def check(case: Case, answer: Answer) -> None:
    """The codes ``case`` names: its GOAWAY's, its streams' RST_STREAM's, its grpc-status."""
    codes = [code for _, code in answer.goaway]
    assert all(code == codes[0] for code in codes if code), f"GOAWAY codes {codes}"
    error = next((code for code in codes if code), None)
    if case.goaway and (error is not None or not case.reset):
        assert error in case.goaway, (
            f"GOAWAY {codes}, expected one of {sorted(case.goaway, key=str)}"
        )
    if case.reset:
        for sid, allowed in case.reset.items():
            got = answer.resets.get(sid)
            assert got in allowed or (error is not None and error in case.goaway), (
                f"stream {sid}: RST_STREAM {got}, GOAWAY {codes}; expected RST_STREAM "
                f"{sorted(allowed, key=str)} or GOAWAY {sorted(case.goaway, key=str)}"
            )
    if case.ignored:
        assert not error and not answer.resets, f"GOAWAY {codes}, RST_STREAM {answer.resets}"
    if case.status:
        assert not error, f"GOAWAY {codes} for a case with only call errors"
        for sid, status in case.status.items():
            assert answer.statuses.get(sid) == status, (
                f"stream {sid}: grpc-status {answer.statuses.get(sid)}, expected {status}"
            )
    for sid, body in (case.echo or {}).items():
        assert answer.data.get(sid, b"") == body, (
            f"stream {sid}: {answer.data.get(sid)!r}, expected {body!r}"
        )


# ---------------------------------------------------------------------------- in-process driver


class _Transport:
    """What H2Protocol calls of an asyncio transport, keeping what it writes."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.eof = False
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.eof and not self.closed, "a write after the write side was shut"
        self.out += data

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof = True

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


class _Route:
    def __init__(self, call: Callable[[Any, Any], Any], request_streaming: bool = False) -> None:
        self.call = call
        self.request_streaming = request_streaming


async def _never_reads(stream: Any, message: None) -> None:
    await asyncio.sleep(3600)


async def _chat(stream: Any, message: None) -> None:
    while (request := await stream.read()) is not None:
        await stream.write(request)


class _Router:
    def __init__(self) -> None:
        self.routes = {
            CHAT: _Route(_chat, request_streaming=True),
            INFER: _Route(lambda stream, message: message),
            STREAMING: _Route(_never_reads, request_streaming=True),
        }

    def route(self, path: bytes) -> None:
        return None


async def feed(data: bytes, rng: random.Random | None = None) -> tuple[bytes, Any]:
    """One connection: the preface, an empty SETTINGS, ``data`` (in pieces when ``rng`` is
    given), a few loop turns; returns what the server wrote and the protocol, then drops it."""
    from oipcodec.server.h2._session import H2Protocol

    protocol = H2Protocol(
        _Router(), max_receive_message_length=MAX_RECEIVE, max_concurrent_streams=8
    )
    transport = _Transport()
    protocol.connection_made(transport)  # type: ignore[arg-type]  # (the stand-in)
    stream = PREFACE + frame(SETTINGS, 0, 0) + data
    if rng is None or rng.random() < 0.5:
        protocol.data_received(stream)
    else:
        at = 0
        while at < len(stream):
            step = rng.randrange(1, 4096)
            protocol.data_received(stream[at : at + step])
            at += step
    for _ in range(8):
        await asyncio.sleep(0)
    written = bytes(transport.out)
    protocol.connection_lost(None)
    assert protocol.active_streams == 0, "streams left after the connection was lost"
    return written, protocol


def rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4


async def still_serves() -> None:
    """A valid call on a new connection is answered, status 0, with its message."""
    written, _ = await feed(call(1, b"alive"))
    answer = read_answer(written)
    assert answer.statuses.get(1) == 0 and answer.data.get(1) == message(b"alive"), answer


class _Errors(logging.Handler):
    """The ERROR records of the connection's logger while installed."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def run(
    cases: int,
    seed: int,
    batch: int = 2000,
    report: Callable[[str], None] | None = None,
    rss_mib: int = 64,
) -> Counter[str]:
    """``cases`` generated cases, each on a fresh in-process connection, checked; after each
    batch a valid call on a new connection, no task left, and the RSS within ``rss_mib`` MiB
    of the first batch's. Returns the count per class; raises AssertionError naming the case's seed
    and index."""
    gen = Generator(seed)
    split = random.Random(seed + 1)
    tally: Counter[str] = Counter()
    around = asyncio.all_tasks()  # the caller's own (this one, a wait_for around it)
    # The driver's handlers never fail: an error the connection logs is hostile input
    # reaching a handler's error path.
    errors = _Errors()
    logger = logging.getLogger("oipcodec.server.h2")
    logger.addHandler(errors)
    base = None
    started = time.perf_counter()
    try:
        for index in range(cases):
            case = gen.next()
            began = time.perf_counter()
            try:
                written, _ = await feed(case.data, split)
                check(case, read_answer(written))
                assert not errors.records, f"logged: {errors.records[0].getMessage()}"
            except Exception as exc:
                raise AssertionError(
                    f"seed {seed} case {index} ({case.kind}, {len(case.data)} bytes {case.data[:120]!r}): {exc}"
                ) from exc
            elapsed = time.perf_counter() - began
            assert elapsed < 2.0, f"seed {seed} case {index} ({case.kind}) took {elapsed:.2f} s"
            tally[case.kind] += 1
            if (index + 1) % batch == 0 or index + 1 == cases:
                await still_serves()
                for _ in range(3):
                    await asyncio.sleep(0)
                left = list(asyncio.all_tasks() - around)
                assert not left, f"{len(left)} tasks left after {index + 1} cases: {left[:3]}"
                rss = rss_kib()
                base = rss if base is None else base
                assert rss - base < rss_mib << 10, (
                    f"RSS grew {rss - base} KiB after {index + 1} cases"
                )
                if report is not None:
                    rate = (index + 1) / (time.perf_counter() - started)
                    report(f"{index + 1} cases, {rate:.0f}/s, RSS {rss >> 10} MiB")
    finally:
        logger.removeHandler(errors)
    return tally


def classes() -> list[str]:
    return [name for name, _ in Generator(0, b"").classes]


# ---------------------------------------------------------------------------- over a socket


def for_any_server(case: Case) -> bool:
    """Whether ``case`` expects nothing of the driver's router (its echo, its streaming
    routes, its small receive limit, its concurrency limit of 8), so a real server's answer can
    be checked against it."""
    return (
        not case.status
        and not case.echo
        and not case.ignored
        and case.kind not in ("past_concurrency", "data_past_window")
        and STREAMING not in case.data
        and CHAT not in case.data
    )


async def over_socket(
    port: int, data: bytes, quiet: float = 0.3, bound: float = 5.0
) -> tuple[bytes, bool]:
    """Send the preface, an empty SETTINGS and ``data`` to 127.0.0.1:``port``; what the server
    wrote until it closed (True) or was quiet ``quiet`` seconds (False). AssertionError if it
    is still writing after ``bound`` seconds."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    got = bytearray()
    closed = False
    deadline = time.monotonic() + bound
    try:
        writer.write(PREFACE + frame(SETTINGS, 0, 0) + data)
        while True:
            assert time.monotonic() < deadline, f"still writing after {bound} s ({len(got)} bytes)"
            chunk = await asyncio.wait_for(reader.read(1 << 16), quiet)
            if not chunk:
                closed = True
                break
            got += chunk
    except (asyncio.TimeoutError, ConnectionResetError, BrokenPipeError):
        pass
    finally:
        writer.close()
    return bytes(got), closed
