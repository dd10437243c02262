"""The v1 header text reader, pure twin of ``oipcodec._native.v1text``.

The text is checked whole against the plain form with one regular expression, then split
into tokens with another, so Python only walks the token list. A name or number must end
where its characters do, so a text splits into tokens one way only and a text that does not
match fails in linear time (without that, ``batch_b`` could also be ``b`` ``atch_b``..., and a
long name followed by a stray byte took exponential time: found by fuzz/fuzz_v1_request.py).
The classes are ASCII (``re.ASCII``), as the native scanner's.
"""

from __future__ import annotations

import re
from typing import Any

from oipcodec._shared import contract
from oipcodec._shared.v1text import (
    CONTRACTS,
    COUNT,
    DIMS,
    INT64,
    INT64_MAX,
    MANY,
    MESSAGES,
    STRING,
    UINT32_MAX,
)

__all__ = ["scan_request_header", "scan_response_header"]

_TOKEN = r'\s*(?:([A-Za-z_]\w*)(?!\w)|(-?(?:0|[1-9]\d*))(?![\w.])|"([^"\\\n]*)"|([:{}]))'
_PLAIN = re.compile(f"(?:{_TOKEN})*\\s*", re.ASCII)
_TOKENS = re.compile(_TOKEN, re.ASCII)


class _Stop(Exception):
    """Not the plain form."""


class _Reader:
    __slots__ = ("at", "tokens")

    def __init__(self, tokens: list[tuple[str, str, str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def take(self) -> tuple[str, str, str, str]:
        if self.at >= len(self.tokens):
            raise _Stop
        token = self.tokens[self.at]
        self.at += 1
        return token

    def number(self, low: int, high: int) -> int:
        """``: <integer>`` within [low, high]."""
        if self.take()[3] != ":":
            raise _Stop
        text = self.take()[1]
        if not text:
            raise _Stop
        value = int(text)
        if not low <= value <= high:
            raise _Stop
        return value

    def string(self) -> str:
        if self.take()[3] != ":":
            raise _Stop
        name, number, text, mark = self.take()
        if name or number or mark:
            raise _Stop
        return text

    def open(self) -> None:
        """An optional ``:`` and ``{``."""
        mark = self.take()[3]
        if mark == ":":
            mark = self.take()[3]
        if mark != "{":
            raise _Stop


# MESSAGES with each kind as (code, argument), decided once here rather than per token:
# _UNSIGNED's argument is the bound, _ONE's and _MANY's the nested message.
_UNSIGNED, _INT64, _STRING, _DIMS, _COUNT, _ONE, _MANY = range(7)


def _code(kind: Any) -> tuple[int, Any]:
    if isinstance(kind, tuple):
        return (_MANY if kind[0] == MANY else _ONE), kind[1]
    if isinstance(kind, int):
        return _UNSIGNED, kind
    return {INT64: _INT64, STRING: _STRING, DIMS: _DIMS, COUNT: _COUNT}[kind], None


_KINDS = {
    message: {name: _code(kind) for name, kind in fields.items()}
    for message, fields in MESSAGES.items()
}
_REPEATED = {
    message: [name for name, (code, _) in kinds.items() if code in (_DIMS, _MANY)]
    for message, kinds in _KINDS.items()
}
_UNKNOWN = (-1, None)


def _message(reader: _Reader, message: str, top: bool = False) -> dict[str, Any]:
    """The fields of one message (MESSAGES[message]) up to its ``}``, or the text's end."""
    kinds = _KINDS[message]
    fields: dict[str, Any] = {name: [] for name in _REPEATED[message]}
    tokens = reader.tokens
    while True:
        if top and reader.at == len(tokens):
            return fields
        name, _, _, mark = reader.take()
        if mark == "}" and not top:
            return fields
        code, argument = kinds.get(name, _UNKNOWN)
        if code == _DIMS:
            fields[name].append(reader.number(-INT64_MAX - 1, INT64_MAX))
        elif code == _MANY:
            reader.open()
            fields[name].append(_message(reader, argument))
        elif code < 0 or name in fields:
            raise _Stop
        elif code == _UNSIGNED:
            fields[name] = reader.number(0, argument)
        elif code == _STRING:
            fields[name] = reader.string()
        elif code == _INT64:
            fields[name] = reader.number(-INT64_MAX - 1, INT64_MAX)
        elif code == _COUNT:
            reader.open()
            if reader.take()[0] != "count":
                raise _Stop
            fields[name] = reader.number(0, UINT32_MAX)
            if reader.take()[3] != "}":
                raise _Stop
        else:
            reader.open()
            fields[name] = _message(reader, argument)


def _read(text: str, message: str) -> dict[str, Any] | None:
    if _PLAIN.fullmatch(text) is None:
        return None
    try:
        return _message(_Reader(_TOKENS.findall(text)), message, top=True)
    except _Stop:
        return None


@contract(CONTRACTS)
def scan_request_header(
    text: str,
) -> tuple[dict[str, int], list[dict[str, Any]], list[dict[str, Any]]] | None:
    fields = _read(text, "request")
    if fields is None:
        return None
    inputs, outputs = fields.pop("input"), fields.pop("output")
    return fields, inputs, outputs


@contract(CONTRACTS)
def scan_response_header(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    fields = _read(text, "response")
    if fields is None:
        return None
    outputs = fields.pop("output")
    return fields, outputs
