"""Locate tensor ``data`` arrays in an OIP JSON body, pure twin of ``oipcodec._native.jsonscan``.

An inference body is a small envelope (names, shapes, parameters) around potentially huge
``data`` arrays. The REST codec parses the envelope with orjson but must hand each ``data``
array's *text* to :func:`oipcodec.kernels.json_to_array`, which parses it straight into a
typed buffer.
This scanner finds those spans without building any value: it walks the top-level object and,
inside its ``inputs`` and ``outputs`` arrays, records where each tensor's ``data`` value starts
and ends. Everything else is only skipped over; orjson validates the envelope afterwards and
json_to_array the data text.
"""

from __future__ import annotations

import re
from typing import Any

from oipcodec._shared import contract
from oipcodec._shared.buffers import byte_view
from oipcodec._shared.jsonscan import (
    CONTRACTS,
    SECTION_INPUTS,
    SECTION_OUTPUTS,
    scan_error,
    unbalanced,
    unterminated_string,
)
from oipcodec.errors import DecodeError

__all__ = ["locate_data"]

_WS = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
# Inside an array (object) only strings and the brackets (braces) of its own kind matter for
# finding its end; runs without them are skipped in one step. The other kind is left for the
# real parsers to judge, as the native scanner does.
_PLAIN = {ord("["): re.compile(rb'[^"\[\]]*'), ord("{"): re.compile(rb'[^"{}]*')}
_CLOSE = {ord("["): ord("]"), ord("{"): ord("}")}
_SECTIONS = {b"inputs": SECTION_INPUTS, b"outputs": SECTION_OUTPUTS}

#: Byte that ends an unquoted scalar (number, true, false, null).
_SCALAR_END = b",]} \t\n\r"


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def fail(self, expected: str) -> DecodeError:
        return scan_error(self.data, self.pos, expected)

    def ws(self) -> int:
        match = _WS.match(self.data, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()
        return self.data[self.pos] if self.pos < len(self.data) else -1

    def expect(self, char: bytes, expected: str) -> None:
        if self.ws() != char[0]:
            raise self.fail(expected)
        self.pos += 1

    def string(self) -> bytes:
        """The raw text between the quotes of the string at the cursor (escapes left as is)."""
        if self.ws() != ord('"'):
            raise self.fail("a string")
        match = _STRING.match(self.data, self.pos)
        if match is None:
            raise unterminated_string(self.pos)
        self.pos = match.end()
        return match.group()[1:-1]

    def skip_value(self) -> None:
        """Move past one JSON value of any kind, nested to any depth."""
        first = self.ws()
        if first == ord('"'):
            self.string()
            return
        if first not in _CLOSE:
            start = self.pos
            while self.pos < len(self.data) and self.data[self.pos] not in _SCALAR_END:
                self.pos += 1
            if self.pos == start:
                raise self.fail("a JSON value")
            return
        plain, close = _PLAIN[first], _CLOSE[first]
        depth = 0
        while True:
            self.pos = plain.match(self.data, self.pos).end()  # type: ignore[union-attr]
            if self.pos >= len(self.data):
                raise unbalanced(self.pos)
            char = self.data[self.pos]
            if char == ord('"'):
                self.string()
                continue
            depth += -1 if char == close else 1
            self.pos += 1
            if depth == 0:
                return

    def members(self) -> Any:
        """Iterate over an object's members: yields each key, cursor at its value."""
        self.expect(b"{", "'{'")
        if self.ws() == ord("}"):
            self.pos += 1
            return
        while True:
            key = self.string()
            self.expect(b":", "':'")
            yield key
            if self.ws() == ord(","):
                self.pos += 1
                continue
            self.expect(b"}", "',' or '}'")
            return

    def elements(self) -> Any:
        """Iterate over an array's elements: yields each index, cursor at the element."""
        self.expect(b"[", "'['")
        if self.ws() == ord("]"):
            self.pos += 1
            return
        index = 0
        while True:
            yield index
            index += 1
            if self.ws() == ord(","):
                self.pos += 1
                continue
            self.expect(b"]", "',' or ']'")
            return


@contract(CONTRACTS)
def locate_data(buffer: Any) -> list[tuple[int, int, int, int]]:
    cursor = _Cursor(bytes(byte_view(buffer, "body")))
    found: list[tuple[int, int, int, int]] = []
    if cursor.ws() != ord("{"):
        raise cursor.fail("a JSON object")
    for key in cursor.members():
        section = _SECTIONS.get(key)
        if section is None or cursor.ws() != ord("["):
            cursor.skip_value()
            continue
        for index in cursor.elements():
            if cursor.ws() != ord("{"):
                cursor.skip_value()
                continue
            for member in cursor.members():
                cursor.ws()
                start = cursor.pos
                cursor.skip_value()
                if member == b"data":
                    found.append((section, index, start, cursor.pos))
    if cursor.ws() != -1:
        raise cursor.fail("the end of the JSON text")
    return found
