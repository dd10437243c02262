"""GraphPipe flatbuffer kernel, pure twin of ``oipcodec._native.flatbuf``.

The reader verifies a buffer the way the flatbuffers verifier does while it reads it, and gives
uint8 vectors (tensor data) as read-only views of the buffer. The schema, the writer and every
error message are shared with the native kernel through :mod:`oipcodec._shared.flatbuf`; the
reader below checks in the same order as the native one, so both stop at the same byte with the
same error.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared import flatbuf as fc
from oipcodec._shared.buffers import byte_view, element_type_error, utf8_error
from oipcodec._shared.flatbuf import CONTRACTS, I64, STR, U8, UNION, VEC_I64, VEC_STR, VEC_U8
from oipcodec.limits import DEFAULT_LIMITS, Limits

__all__ = ["pack_strings", "read_flatbuffer", "write_flatbuffer"]

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")


@contract(CONTRACTS)
def read_flatbuffer(data: Any, root: str = "Request", limits: Limits = DEFAULT_LIMITS) -> Any:
    fc.check_root(root)
    view = byte_view(data).toreadonly()
    size = len(view)
    if size > fc.MAX_BUFFER:
        raise fc.too_large(size)
    if size < 8:
        raise fc.too_short(size)
    reader = _Reader(view, limits)
    return reader.table(root, reader.offset(0, root))


class _Reader:
    def __init__(self, view: memoryview, limits: Limits) -> None:
        self.view = view
        self.size = len(view)
        self.items = 0
        self.budget = self.size // 4
        self.string_bytes = 0
        self.max_element = limits.max_bytes_element

    def count(self, pos: int, items: int) -> None:
        self.items += items
        if self.items > self.budget:
            raise fc.too_many_items(pos, self.size)

    def offset(self, at: int, what: str) -> int:
        """The position a uoffset stored at ``at`` points to."""
        if at & 3:
            raise fc.misaligned(at, what, 4)
        if at + 4 > self.size:
            raise fc.past_end(at, what, 4, self.size)
        value = _U32.unpack_from(self.view, at)[0]
        if value == 0 or value >= 2**31 or at + value >= self.size:
            raise fc.bad_offset(at, what, value, self.size)
        return at + value

    def vector(self, at: int, what: str, width: int) -> int:
        """The element count of the vector at ``at``, its elements checked to be inside."""
        if at & 3:
            raise fc.misaligned(at, what, 4)
        if at + 4 > self.size:
            raise fc.past_end(at, what, 4, self.size)
        count = _U32.unpack_from(self.view, at)[0]
        if count * width > self.size - at - 4:
            raise fc.past_end(at, what, 4 + count * width, self.size)
        return count

    def string(self, at: int, what: str) -> bytes:
        length = self.vector(at, what, 1)
        end = at + 4 + length
        if end >= self.size:
            raise fc.past_end(at, what, length + 5, self.size)
        if self.view[end] != 0:
            raise fc.no_terminator(end, what)
        if length > self.max_element:
            raise fc.string_too_long(at, what, length, self.max_element)
        self.string_bytes += length
        if self.string_bytes > self.size:
            raise fc.too_many_string_bytes(at, self.size)
        return bytes(self.view[at + 4 : end])

    def table(self, name: str, at: int) -> tuple[Any, ...]:
        view, size = self.view, self.size
        fields = fc.SCHEMA[name]
        self.count(at, 1)
        if at & 3:
            raise fc.misaligned(at, name, 4)
        if at + 4 > size:
            raise fc.past_end(at, name, 4, size)
        vt = at - _I32.unpack_from(view, at)[0]
        if vt < 0 or vt + 4 > size:
            raise fc.bad_vtable(at, name, f"at byte {vt} is outside the buffer")
        if vt & 1:
            raise fc.misaligned(vt, f"{name} vtable", 2)
        vt_size, table_size = _U16.unpack_from(view, vt)[0], _U16.unpack_from(view, vt + 2)[0]
        if vt_size < 4 or vt_size & 1:
            raise fc.bad_vtable(vt, name, f"size {vt_size} is not an even number of at least 4")
        if vt + vt_size > size:
            raise fc.past_end(vt, f"{name} vtable", vt_size, size)
        if table_size < 4:
            raise fc.bad_vtable(vt, name, f"gives the table {table_size} bytes, fewer than 4")
        if at + table_size > size:
            raise fc.past_end(at, name, table_size, size)
        slots = (vt_size - 4) >> 1
        for slot in range(len(fields), slots):
            if _U16.unpack_from(view, vt + 4 + 2 * slot)[0]:
                raise fc.unknown_field(vt, name, slot)
        values: list[Any] = []
        for slot, (field_name, kind, arg) in enumerate(fields):
            voff = _U16.unpack_from(view, vt + 4 + 2 * slot)[0] if slot < slots else 0
            if voff == 0:
                if kind == UNION and values[slot - 1] != 0:
                    utype = values[slot - 1]
                    if utype < len(arg):
                        raise fc.union_without_value(at, f"{name}.{field_name}", arg[utype])
                    raise fc.bad_union(at, f"{name}.{field_name}", utype, arg)
                values.append(0 if kind in (U8, I64) else None)
                continue
            width = 1 if kind == U8 else 8 if kind == I64 else 4
            if voff < 4 or voff + width > table_size:
                raise fc.bad_vtable(
                    vt, name, f"puts {field_name} at {voff}, outside the table's {table_size} bytes"
                )
            pos = at + voff
            if pos & (width - 1):
                raise fc.misaligned(pos, f"{name}.{field_name}", width)
            if kind == U8:
                values.append(view[pos])
            elif kind == I64:
                values.append(_I64.unpack_from(view, pos)[0])
            elif kind == UNION:
                utype = values[slot - 1]
                if utype == 0:
                    values.append(None)
                elif utype >= len(arg):
                    raise fc.bad_union(at, f"{name}.{field_name}", utype, arg)
                else:
                    values.append(self.table(arg[utype], self.offset(pos, f"{name}.{field_name}")))
            else:
                values.append(
                    self.reference(
                        kind, arg, self.offset(pos, f"{name}.{field_name}"), f"{name}.{field_name}"
                    )
                )
        return tuple(values)

    def reference(self, kind: int, arg: Any, at: int, what: str) -> Any:
        if kind == STR:
            self.count(at, 1)
            return self.string(at, what)
        if kind == VEC_U8:
            count = self.vector(at, what, 1)
            self.count(at, 1)
            return self.view[at + 4 : at + 4 + count]
        if kind == VEC_I64:
            count = self.vector(at, what, 8)
            if (at + 4) & 7:
                raise fc.misaligned(at + 4, f"{what} elements", 8)
            self.count(at, 1 + count)
            return tuple(np.frombuffer(self.view, "<i8", count, at + 4).tolist())
        count = self.vector(at, what, 4)
        self.count(at, 1 + count)
        if kind == VEC_STR:
            strings = np.empty(count, dtype=object)
            for index in range(count):
                strings[index] = self.string(self.offset(at + 4 + 4 * index, what), what)
            return strings
        return [self.table(arg, self.offset(at + 4 + 4 * index, what)) for index in range(count)]


@contract(CONTRACTS)
def pack_strings(values: Any) -> bytes:
    elements = values.tolist() if isinstance(values, np.ndarray) else list(values)
    count = len(elements)
    head = bytearray(_U32.pack(count))
    body = bytearray()
    start = 4 + 4 * count
    for index, element in enumerate(elements):
        if isinstance(element, str):
            try:
                element = element.encode()
            except UnicodeError as exc:
                raise utf8_error(index, exc) from None
        elif not isinstance(element, bytes):
            raise element_type_error(index, element)
        head += _U32.pack(start + len(body) - 4 - 4 * index)
        body += _U32.pack(len(element))
        body += element
        body += bytes(4 - len(element) % 4)  # the NUL, then padding to 4
    return bytes(head + body)


@contract(CONTRACTS)
def write_flatbuffer(
    root: str, value: tuple[Any, ...], inline_limit: int = fc.INLINE_LIMIT
) -> list[Any]:
    return fc.write_flatbuffer(root, value, pack_strings, inline_limit)
