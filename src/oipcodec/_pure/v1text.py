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
    HEADER_FIELDS,
    INT64_MAX,
    RESPONSE_FIELDS,
    UINT32_MAX,
    UINT64_MAX,
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


def _input(reader: _Reader) -> dict[str, Any]:
    fields: dict[str, Any] = {"dims": []}
    while True:
        name, _, _, mark = reader.take()
        if mark == "}":
            return fields
        if name == "dims":
            fields["dims"].append(reader.number(-INT64_MAX - 1, INT64_MAX))
        elif name in fields:
            raise _Stop
        elif name == "name":
            fields[name] = reader.string()
        elif name == "batch_byte_size":
            fields[name] = reader.number(0, UINT64_MAX)
        else:
            raise _Stop


def _output(reader: _Reader) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    while True:
        name, _, _, mark = reader.take()
        if mark == "}":
            return fields
        if name in fields:
            raise _Stop
        if name == "name":
            fields[name] = reader.string()
        elif name == "cls":
            reader.open()
            if reader.take()[0] != "count":
                raise _Stop
            fields[name] = reader.number(0, UINT32_MAX)
            if reader.take()[3] != "}":
                raise _Stop
        else:
            raise _Stop


@contract(CONTRACTS)
def scan_request_header(
    text: str,
) -> tuple[dict[str, int], list[dict[str, Any]], list[dict[str, Any]]] | None:
    if _PLAIN.fullmatch(text) is None:
        return None
    reader = _Reader(_TOKENS.findall(text))
    fields: dict[str, int] = {}
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    try:
        while reader.at < len(reader.tokens):
            name = reader.take()[0]
            if name == "input":
                reader.open()
                inputs.append(_input(reader))
            elif name == "output":
                reader.open()
                outputs.append(_output(reader))
            elif name in HEADER_FIELDS and name not in fields:
                fields[name] = reader.number(0, HEADER_FIELDS[name])
            else:
                raise _Stop
    except _Stop:
        return None
    return fields, inputs, outputs


def _raw(reader: _Reader) -> dict[str, Any]:
    fields: dict[str, Any] = {"dims": []}
    while True:
        name, _, _, mark = reader.take()
        if mark == "}":
            return fields
        if name == "dims":
            fields["dims"].append(reader.number(-INT64_MAX - 1, INT64_MAX))
        elif name == "batch_byte_size" and name not in fields:
            fields[name] = reader.number(0, UINT64_MAX)
        else:
            raise _Stop


def _response_output(reader: _Reader) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    while True:
        name, _, _, mark = reader.take()
        if mark == "}":
            return fields
        if name in fields:
            raise _Stop
        if name == "name":
            fields[name] = reader.string()
        elif name == "raw":
            reader.open()
            fields[name] = _raw(reader)
        else:
            raise _Stop


@contract(CONTRACTS)
def scan_response_header(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    if _PLAIN.fullmatch(text) is None:
        return None
    reader = _Reader(_TOKENS.findall(text))
    fields: dict[str, Any] = {}
    outputs: list[dict[str, Any]] = []
    try:
        while reader.at < len(reader.tokens):
            name = reader.take()[0]
            if name == "output":
                reader.open()
                outputs.append(_response_output(reader))
            elif name in fields:
                raise _Stop
            elif name == "model_name":
                fields[name] = reader.string()
            elif name in RESPONSE_FIELDS:
                fields[name] = reader.number(*RESPONSE_FIELDS[name])
            else:
                raise _Stop
    except _Stop:
        return None
    return fields, outputs
