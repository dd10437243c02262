"""The fused REST kernels in Python: the twin and reference of ``oipcodec._native.fusedrest``.

See :mod:`oipcodec._shared.fusedrest`. A strict scanner over the body's
bytes: whatever it does not expect ends the scan with None (``_Miss``), never an error.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from typing import Any

import numpy as np

from oipcodec._pure.jsondecode import json_to_array
from oipcodec._pure.jsonencode import array_to_json
from oipcodec._shared import contract
from oipcodec._shared.buffers import byte_view
from oipcodec._shared.fusedrest import (
    ANY_INPUT,
    ANY_OUTPUT,
    CONTRACTS,
    FusedPlan,
    Pending,
    binary_entry,
    binary_inputs,
    fused_plan,
)
from oipcodec.errors import OIPError

__all__ = ["FusedPlan", "decode_inputs", "encode_outputs", "fused_plan"]

_WS = b" \t\n\r"
_DIGITS = b"0123456789"
_MAX_DIMS = 64
_MAX_DIGITS = 18  # an int64 dim; longer ones are the general decoder's to refuse


class _Miss(Exception):
    """The body is not one the fused path takes."""


class _Scan:
    __slots__ = ("pos", "text")

    def __init__(self, text: bytes) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> int:
        """The next byte after white space, or -1 at the end."""
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _WS:
            pos += 1
        self.pos = pos
        return text[pos] if pos < len(text) else -1

    def expect(self, char: bytes) -> None:
        if self.peek() != char[0]:
            raise _Miss
        self.pos += 1

    def string(self) -> bytes:
        """A string with no escapes and no control characters; its bytes."""
        self.expect(b'"')
        start = self.pos
        end = self.text.find(b'"', start)
        if end < 0:
            raise _Miss
        value = self.text[start:end]
        if b"\\" in value or any(c < 0x20 for c in value):
            raise _Miss
        self.pos = end + 1
        return value

    def dim(self) -> int:
        """A non-negative integer as JSON writes it (no leading zero, sign or fraction)."""
        self.peek()
        text, start = self.text, self.pos
        pos = start
        while pos < len(text) and text[pos] in _DIGITS:
            pos += 1
        if pos == start or pos - start > _MAX_DIGITS or (text[start] == 0x30 and pos - start > 1):
            raise _Miss
        if pos < len(text) and text[pos] in b".eE":
            raise _Miss
        self.pos = pos
        return int(text[start:pos])

    def array_span(self) -> tuple[int, int]:
        """Move past an array of numbers, booleans and arrays; its start and end."""
        if self.peek() != 0x5B:  # [
            raise _Miss
        text, start = self.text, self.pos
        depth = 0
        for pos in range(start, len(text)):
            c = text[pos]
            if c == 0x5B:
                depth += 1
            elif c == 0x5D:  # ]
                depth -= 1
                if depth == 0:
                    self.pos = pos + 1
                    return start, pos + 1
            elif c == 0x22 or c == 0x7B:  # a string or an object: not numbers
                raise _Miss
        raise _Miss

    def members(self) -> Iterator[bytes]:
        """The keys of the object at the scan, each read up to its ':' (the caller reads the
        value); a key twice misses, as orjson would keep the last one."""
        self.expect(b"{")
        seen: set[bytes] = set()
        while True:
            key = self.string()
            self.expect(b":")
            if key in seen:
                raise _Miss
            seen.add(key)
            yield key
            if not self.more(b"}"):
                return

    def more(self, close: bytes) -> bool:
        """After a member or an entry: True on ',', False on ``close``."""
        c = self.peek()
        self.pos += 1
        if c == 0x2C:
            return True
        if c != close[0]:
            raise _Miss
        return False


def _shape(scan: _Scan) -> list[int]:
    scan.expect(b"[")
    dims: list[int] = []
    if scan.peek() == 0x5D:
        scan.pos += 1
        return dims
    while True:
        dims.append(scan.dim())
        if len(dims) > _MAX_DIMS:
            raise _Miss
        if not scan.more(b"]"):
            return dims


def _declared(
    plan: FusedPlan, name: bytes, datatype: bytes
) -> tuple[str, str, tuple[int, ...] | None]:
    """The input's name, datatype and declared dims (None: any), or a miss."""
    if plan.inputs is None:  # the model declares none: any name and fixed-width datatype
        facts = ANY_INPUT.get(datatype)
        if facts is None:
            raise _Miss
        try:
            return name.decode("utf-8"), facts[0], None
        except UnicodeDecodeError:
            raise _Miss from None
    declared = plan.inputs.get(name)
    if declared is None or datatype != declared[2]:
        raise _Miss
    return declared[0], declared[1], declared[3]


def _input(
    scan: _Scan,
    plan: FusedPlan,
    text: bytes,
    arrays: dict[str, Any],
    total: int,
    pending: list[Pending] | None,
) -> int:
    """One input object; the request's element count so far, this input's added. An input
    sent in binary (``pending`` not None: the body has a binary part) is added to
    ``pending`` and holds its place in ``arrays`` with None."""
    fields: dict[bytes, Any] = {}
    for key in scan.members():
        if key == b"name" or key == b"datatype":
            fields[key] = scan.string()
        elif key == b"shape":
            fields[key] = _shape(scan)
        elif key == b"data":
            fields[key] = scan.array_span()
        elif key == b"parameters" and pending is not None:
            # {"binary_data_size": N} alone: any other parameter is the general decoder's
            scan.expect(b"{")
            if scan.string() != b"binary_data_size":
                raise _Miss
            scan.expect(b":")
            fields[key] = scan.dim()
            scan.expect(b"}")
        else:
            raise _Miss
    if len(fields) != 4 or (b"data" in fields) == (b"parameters" in fields):
        raise _Miss
    name, datatype, dims = _declared(plan, fields[b"name"], fields[b"datatype"])
    shape = fields[b"shape"]
    if name in arrays or (dims is not None and len(shape) != len(dims)):
        raise _Miss
    count = 1
    for size, want in zip(shape, dims or [-1] * len(shape), strict=True):
        # (no zero dimension: the count then grows at each step and is checked as it does)
        if size == 0 or (want != -1 and size != want):
            raise _Miss
        count *= size
        if count > plan.max_tensor_elements:
            raise _Miss
    total += count
    if total > plan.max_request_elements:
        raise _Miss
    if b"parameters" in fields:
        assert pending is not None
        dtype = ANY_INPUT[datatype.encode()][2]
        if fields[b"parameters"] != count * dtype.itemsize:
            raise _Miss
        pending.append((name, dtype, tuple(shape), count))
        arrays[name] = None
        return total
    start, end = fields[b"data"]
    try:
        arrays[name] = json_to_array(
            memoryview(text)[start:end], datatype, shape, max_depth=plan.max_depth
        )
    except OIPError:
        raise _Miss from None
    return total


def _flag(scan: _Scan, name: bytes) -> bool:
    """An object with no member or only ``name``: its value, ``true`` or ``false``
    (False when absent)."""
    scan.expect(b"{")
    if scan.peek() == 0x7D:  # }
        scan.pos += 1
        return False
    if scan.string() != name:
        raise _Miss
    scan.expect(b":")
    scan.peek()
    for word, value in ((b"true", True), (b"false", False)):
        if scan.text.startswith(word, scan.pos):
            scan.pos += len(word)
            scan.expect(b"}")
            return value
    raise _Miss


def _outputs(scan: _Scan, plan: FusedPlan) -> tuple[list[str], set[str]]:
    """The requested outputs' names in the body's order, and those asked in binary."""
    requested: list[str] = []
    binary: set[str] = set()
    scan.expect(b"[")
    while True:
        name = None
        asked = False
        for key in scan.members():
            if key == b"name":
                try:
                    name = scan.string().decode("utf-8")
                except UnicodeDecodeError:
                    raise _Miss from None
            elif key == b"parameters":
                asked = _flag(scan, b"binary_data")
            else:
                raise _Miss
        if name is None or name in requested:
            raise _Miss
        if plan.outputs is not None and name not in plan.outputs:
            raise _Miss  # the general step refuses it before predict
        requested.append(name)
        if asked:
            binary.add(name)
        if not scan.more(b"]"):
            return requested, binary


@contract(CONTRACTS)
def decode_inputs(
    body: Any, plan: FusedPlan, header_length: int = -1
) -> tuple[dict[str, Any], str | None, list[str] | None, bool | set[str]] | None:
    view = byte_view(body, "body")
    if header_length == 0 or header_length > len(view):
        return None
    pending: list[Pending] | None = None
    if header_length > 0:
        pending = []
    scan = _Scan(bytes(view if pending is None else view[:header_length]))
    arrays: dict[str, Any] = {}
    request_id = None
    inputs = False
    requested: list[str] | None = None
    binary: bool | set[str] = False
    binary_output = False
    try:
        for key in scan.members():
            if key == b"id":
                value = scan.string()
                if any(c > 0x7E for c in value):
                    raise _Miss
                request_id = value.decode("ascii")
            elif key == b"parameters":
                binary_output = _flag(scan, b"binary_data_output")
            elif key == b"inputs":
                inputs = True
                scan.expect(b"[")
                total = count = 0
                while True:
                    count += 1
                    if count > plan.max_tensors:  # (rest.decode_request's limit)
                        raise _Miss
                    total = _input(scan, plan, scan.text, arrays, total, pending)
                    if not scan.more(b"]"):
                        break
            elif key == b"outputs":
                requested, binary = _outputs(scan, plan)
                if len(requested) > plan.max_tensors:
                    raise _Miss
            else:
                raise _Miss
        if scan.peek() != -1 or not inputs:
            raise _Miss
        if plan.inputs is not None and len(arrays) != len(plan.inputs):
            raise _Miss
    except _Miss:
        return None
    if pending is not None and not binary_inputs(view, header_length, pending, arrays):
        return None
    if requested is None:
        binary = binary_output
    return arrays, request_id, requested, binary


def _id_as_written(request_id: str) -> bool:
    """Whether orjson writes ``request_id`` as its characters between quotes."""
    return request_id.isascii() and all(
        0x20 <= ord(c) <= 0x7E and c not in '"\\' for c in request_id
    )


def _undeclared(name: Any, array: np.ndarray[Any, Any]) -> tuple[str, bytes, bytes] | None:
    """An undeclared output's datatype and entry bytes (as the plan's), or None when its
    dtype is not in ANY_OUTPUT or orjson would escape its name."""
    datatype = ANY_OUTPUT.get(array.dtype)
    if datatype is None or type(name) is not str:
        return None
    try:
        raw = name.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    if any(c < 0x20 or c == 0x22 or c == 0x5C for c in raw):
        return None
    return datatype, b'{"name":"%s","shape":' % raw, b',"datatype":"%s","data":' % datatype.encode()


@contract(CONTRACTS)
def encode_outputs(
    plan: FusedPlan,
    request_id: str | None,
    outputs: dict[str, Any],
    binary: bool | Container[str] = False,
) -> bytes | tuple[bytes, int] | None:
    if type(outputs) is not dict:
        return None
    parts = [plan.head]
    if request_id is not None:
        if not isinstance(request_id, str) or not _id_as_written(request_id):
            return None
        parts += (b',"id":"', request_id.encode("ascii"), b'"')
    parts.append(b',"outputs":[')
    first = True
    required = nbytes = 0
    raws: list[bytes] = []
    for name, array in outputs.items():
        if type(array) is not np.ndarray or type(name) is not str:
            return None
        nbytes += array.nbytes
        if nbytes > plan.max_output_bytes:
            return None
        if plan.outputs is None:
            entry = _undeclared(name, array)
            if entry is None:
                return None
            datatype, before, between = entry
        else:
            declared = plan.outputs.get(name)
            if declared is None or array.dtype != declared[1]:
                return None
            datatype, _, before, between, dims, optional = declared
            if len(dims) != array.ndim or any(
                d != -1 and d != n for d, n in zip(dims, array.shape, strict=True)
            ):
                return None
            required += not optional
        shape = b"[%s]" % b",".join([b"%d" % d for d in array.shape])
        if binary is True or (binary is not False and name in binary):
            tail, raw = binary_entry(between, array)
            raws.append(raw)
        else:
            tail = between + array_to_json(array, datatype) + b"}"
        parts += (b"" if first else b",", before, shape, tail)
        first = False
    if plan.outputs is not None and required != plan.required:
        return None
    parts.append(b"]}")
    head = b"".join(parts)
    if not raws:
        return head
    return head + b"".join(raws), len(head)
