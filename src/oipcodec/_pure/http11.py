"""The HTTP/1.1 head parser, pure twin of ``oipcodec._native.http11`` (csrc/oipcodec/http/head.h):
the same strict subset, step for step, with regular expressions for the character classes."""

from __future__ import annotations

import re
from typing import Any

from oipcodec._shared import contract
from oipcodec._shared.http11 import CONTRACTS, HEAD_FAST, HEAD_OTHER, HEAD_PARTIAL

__all__ = ["parse_head"]

_SAFE = re.compile(rb"[-A-Za-z0-9._~/!$&'()*+,;=:@]*")
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]*")
_OWS = re.compile(rb"[ \t]*")
_VALUE = re.compile(rb"[\x21-\x7e \t]*")
_DIGITS = re.compile(rb"[0-9]{1,18}")
_NOTHING = (0, 0, -1, -1, False, False)
_VERSION = b"HTTP/1."
_REFUSED = (b"transfer-encoding", b"expect", b"content-encoding", b"upgrade", b"proxy-connection")


def _end_of_line(data: bytes, i: int) -> int:
    """HEAD_PARTIAL, HEAD_OTHER, or -1 when data[i:i+2] is CRLF."""
    if i + 1 >= len(data):
        return HEAD_OTHER if i < len(data) and data[i] != 13 else HEAD_PARTIAL
    return -1 if data[i : i + 2] == b"\r\n" else HEAD_OTHER


def _digits(value: bytes) -> int:
    return int(value) if _DIGITS.fullmatch(value) else -1


def _parse(data: bytes) -> tuple[int, ...]:
    n = len(data)
    if data.startswith(b"GET "):
        i = 4
    elif data.startswith(b"POST "):
        i = 5
    else:
        return (
            (HEAD_PARTIAL,)
            if n < 5 and (b"GET ".startswith(data) or b"POST ".startswith(data))
            else (HEAD_OTHER,)
        )
    if i >= n:
        return (HEAD_PARTIAL,)
    if data[i] != 0x2F:  # "/"
        return (HEAD_OTHER,)
    i = _SAFE.match(data, i).end()  # type: ignore[union-attr]
    if i >= n:
        return (HEAD_PARTIAL,)
    if data[i] != 0x20:
        return (HEAD_OTHER,)
    line_length = i
    i += 1
    for k in range(7):
        if i >= n:
            return (HEAD_PARTIAL,)
        if data[i] != _VERSION[k]:
            return (HEAD_OTHER,)
        i += 1
    if i >= n:
        return (HEAD_PARTIAL,)
    if data[i] not in b"01":
        return (HEAD_OTHER,)
    v10 = data[i] == 0x30
    i += 1
    if (stop := _end_of_line(data, i)) >= 0:
        return (stop,)
    i += 2
    content_length = header_length = -1
    connection = b""
    while True:
        if i >= n:
            return (HEAD_PARTIAL,)
        if data[i] == 13:
            if i + 1 >= n:
                return (HEAD_PARTIAL,)
            if data[i + 1] != 10:
                return (HEAD_OTHER,)
            i += 2
            break
        name_start = i
        i = _TOKEN.match(data, i).end()  # type: ignore[union-attr]
        if i >= n:
            return (HEAD_PARTIAL,)
        if data[i] != 0x3A or i == name_start:
            return (HEAD_OTHER,)
        name = data[name_start:i].lower()
        i = _OWS.match(data, i + 1).end()  # type: ignore[union-attr]
        value_start = i
        i = _VALUE.match(data, i).end()  # type: ignore[union-attr]
        if (stop := _end_of_line(data, i)) >= 0:
            return (stop,)
        value = data[value_start:i].rstrip(b" \t")
        i += 2
        if name == b"content-length":
            if content_length >= 0 or (content_length := _digits(value)) < 0:
                return (HEAD_OTHER,)
        elif name == b"inference-header-content-length":
            if header_length >= 0 or (header_length := _digits(value)) < 0:
                return (HEAD_OTHER,)
        elif name == b"connection":
            value = value.lower()
            if connection or not (value == b"close" or (value == b"keep-alive" and not v10)):
                return (HEAD_OTHER,)
            connection = value
        elif name == b"accept-encoding":
            if value.lower() != b"identity":
                return (HEAD_OTHER,)
        elif name in _REFUSED:
            return (HEAD_OTHER,)
    keep_alive = not v10 and connection != b"close"
    return (HEAD_FAST, i, line_length, content_length, header_length, keep_alive, v10)


@contract(CONTRACTS)
def parse_head(data: Any) -> tuple[int, int, int, int, int, bool, bool]:
    result = _parse(bytes(memoryview(data).cast("B")))
    if result[0] != HEAD_FAST:
        return (result[0], *_NOTHING)
    return result  # type: ignore[return-value]
