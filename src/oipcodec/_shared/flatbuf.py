"""What the two flatbuffer kernels (``oipcodec._native.flatbuf`` and ``oipcodec._pure.flatbuf``)
share: the GraphPipe schema as field tables, the writer (a forward layout planner) and every
error message.

The reader checks what the flatbuffers verifier checks, and two things more (int64 vectors
8-aligned, no field the schema lacks); the structure it builds is bounded by the buffer's size,
so shared offsets cannot expand a small body. The format as GraphPipe uses it and the checks
in full: docs/kernels.md#the-twins-shared-rules-in-full ("flatbuf").
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from oipcodec.errors import DecodeError, EncodeError, LimitError

__all__: list[str] = []

# Field kinds; the native kernel takes them as C constants (written to _native/flatbuf.pxd).
U8 = 0
I64 = 1
STR = 2
VEC_I64 = 3
VEC_U8 = 4
VEC_STR = 5
VEC_TABLE = 6
UNION = 7

C_CONSTANTS = ("U8", "I64", "STR", "VEC_I64", "VEC_U8", "VEC_STR", "VEC_TABLE", "UNION")

#: Field = (name, kind, argument): the table of a VEC_TABLE, the member tables of a UNION
#: (index = union type; the union's type is the field before it, a U8).
Field = tuple[str, int, Any]

#: GraphPipe's schema (namespace ``graphpipe``), each table's fields in id order.
SCHEMA: dict[str, tuple[Field, ...]] = {
    "Tensor": (
        ("type", U8, None),
        ("shape", VEC_I64, None),
        ("data", VEC_U8, None),
        ("string_val", VEC_STR, None),
    ),
    "Request": (
        ("req_type", U8, None),
        ("req", UNION, (None, "InferRequest", "MetadataRequest")),
    ),
    "InferRequest": (
        ("config", STR, None),
        ("input_names", VEC_STR, None),
        ("input_tensors", VEC_TABLE, "Tensor"),
        ("output_names", VEC_STR, None),
    ),
    "Error": (("code", I64, None), ("message", STR, None)),
    "InferResponse": (
        ("output_tensors", VEC_TABLE, "Tensor"),
        ("errors", VEC_TABLE, "Error"),
    ),
    "MetadataRequest": (),
    "IOMetadata": (
        ("name", STR, None),
        ("description", STR, None),
        ("shape", VEC_I64, None),
        ("type", U8, None),
    ),
    "MetadataResponse": (
        ("name", STR, None),
        ("version", STR, None),
        ("server", STR, None),
        ("description", STR, None),
        ("inputs", VEC_TABLE, "IOMetadata"),
        ("outputs", VEC_TABLE, "IOMetadata"),
    ),
}

#: The tables a buffer may be rooted on.
ROOTS = ("Request", "InferResponse", "MetadataResponse")

#: Largest flatbuffer: offsets are 32-bit and signed offsets must reach across it.
MAX_BUFFER = 2**31 - 1
#: Data vectors at least this long are not copied by the writer: they become parts of their own.
INLINE_LIMIT = 64 * 1024

# ------------------------------------------------------------------------------- reader errors


def check_root(root: str) -> tuple[Field, ...]:
    if root not in ROOTS:
        raise ValueError(f"root must be one of {', '.join(ROOTS)}, got {root!r}")
    return SCHEMA[root]


def too_large(size: int) -> LimitError:
    return LimitError(f"a flatbuffer is at most {MAX_BUFFER} bytes, got {size}")


def too_short(size: int) -> DecodeError:
    return DecodeError(f"a flatbuffer needs at least 8 bytes (root offset and a table), got {size}")


def bad_offset(pos: int, what: str, value: int, size: int) -> DecodeError:
    if value == 0:
        reason = "is 0 (it would point at itself)"
    elif value >= 2**31:
        reason = f"is {value}, 2**31 or more"
    else:
        reason = f"points to byte {pos + value}, past the end of the {size}-byte buffer"
    return DecodeError(f"{what}: offset {reason}", offset=pos)


def misaligned(pos: int, what: str, alignment: int) -> DecodeError:
    return DecodeError(f"{what} is not {alignment}-byte aligned", offset=pos)


def past_end(pos: int, what: str, need: int, size: int) -> DecodeError:
    return DecodeError(
        f"{what} needs {need} bytes, past the end of the {size}-byte buffer", offset=pos
    )


def bad_vtable(pos: int, table: str, reason: str) -> DecodeError:
    return DecodeError(f"{table}: vtable {reason}", offset=pos)


def unknown_field(pos: int, table: str, slot: int) -> DecodeError:
    count = len(SCHEMA[table])
    return DecodeError(
        f"{table}: vtable lists field {slot}, but {table} has {count} field"
        f"{'' if count == 1 else 's'} (a union type that disagrees with its table?)",
        offset=pos,
    )


def no_terminator(pos: int, what: str) -> DecodeError:
    return DecodeError(f"{what}: string does not end with a NUL byte", offset=pos)


def bad_union(pos: int, what: str, utype: int, members: Sequence[str | None]) -> DecodeError:
    names = ", ".join(f"{i} ({name})" for i, name in enumerate(members) if name)
    return DecodeError(f"{what}: union type {utype} is not 0 (none) or one of {names}", offset=pos)


def union_without_value(pos: int, what: str, member: str) -> DecodeError:
    return DecodeError(f"{what}: union type says {member} but the table is absent", offset=pos)


def too_many_items(pos: int, size: int) -> LimitError:
    return LimitError(
        f"the buffer references more tables and vector elements than one per 4 of its {size} "
        "bytes (offsets shared to expand a small buffer)",
        offset=pos,
    )


def too_many_string_bytes(pos: int, size: int) -> LimitError:
    return LimitError(
        f"the strings read would hold more bytes than the {size}-byte buffer "
        "(offsets shared to expand a small buffer)",
        offset=pos,
    )


def string_too_long(pos: int, what: str, length: int, limit: int) -> LimitError:
    return LimitError(
        f"{what}: string of {length} bytes, more than the limit of {limit}", offset=pos
    )


# ------------------------------------------------------------------------------------- writer

_I64 = struct.Struct("<q")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")


def _pad(out: bytearray, modulus: int, remainder: int = 0) -> None:
    out += bytes((remainder - len(out)) % modulus)


def write_flatbuffer(
    root: str,
    value: tuple[Any, ...],
    pack_strings: Callable[[Any], bytes],
    inline_limit: int = INLINE_LIMIT,
) -> list[Any]:
    """``value`` (a table as the reader returns it) as a flatbuffer rooted on ``root``, in parts.

    Tables are laid out forward (a table, then what it references), which is what lets every
    uoffset be written as soon as its target's position is known. Data vectors of at least
    ``inline_limit`` bytes are not copied: each becomes a part of its own (the buffer given),
    8-aligned in the whole; the parts' concatenation is the flatbuffer.
    """
    check_root(root)
    writer = _Writer(pack_strings, inline_limit)
    writer.out += bytes(4)
    writer.table(root, value, 0, root)
    return writer.finish()


#: A field's path in messages, built only when an error is raised: the root's name, or
#: (the parent's path, a field name or an ``[index]``).
_Path = Any


def _label(path: _Path) -> str:
    if isinstance(path, str):
        return path
    parent, part = path
    return f"{_label(parent)}{part}" if part.startswith("[") else f"{_label(parent)}.{part}"


#: Table layouts by (table, which fields are present): each present field's offset in the
#: table, the table's size, its vtable's bytes and whether it holds an int64 (8-aligned).
_LAYOUTS: dict[tuple[str, tuple[int, ...]], tuple[tuple[int, ...], int, bytes, bool]] = {}


def _layout(name: str, widths: tuple[int, ...]) -> tuple[tuple[int, ...], int, bytes, bool]:
    """Int64 fields first (8-aligned), then uoffsets, then bytes; 0 for an absent field."""
    slots = [0] * len(widths)
    size = 4
    for width in (8, 4, 1):
        for slot, given in enumerate(widths):
            if given == width:
                slots[slot] = size
                size += width
    size += -size % 4
    last = max((slot + 1 for slot, off in enumerate(slots) if off), default=0)
    vtable = _U16.pack(4 + 2 * last) + _U16.pack(size)
    vtable += b"".join(_U16.pack(off) for off in slots[:last])
    layout = (tuple(slots), size, vtable, 8 in widths)
    _LAYOUTS[name, widths] = layout
    return layout


_WIDTH = {U8: 1, I64: 8}


class _Writer:
    def __init__(self, pack_strings: Callable[[Any], bytes], inline_limit: int) -> None:
        self.out = bytearray()
        self.pack_strings = pack_strings
        self.inline_limit = inline_limit
        # (position of the uoffset to patch, the data) of the data vectors written last.
        self.deferred: list[tuple[int, Any]] = []

    def patch(self, at: int, target: int) -> None:
        self.out[at : at + 4] = _U32.pack(target - at)

    def table(self, name: str, value: Sequence[Any], ref: int, what: _Path) -> None:
        fields = SCHEMA[name]
        if len(value) != len(fields):
            raise EncodeError(
                f"{_label(what)}: {name} has {len(fields)} fields, got {len(value)} values"
            )
        widths = tuple(
            0
            if value[slot] is None or (kind in _WIDTH and value[slot] == 0)
            else _WIDTH.get(kind, 4)
            for slot, (_, kind, _arg) in enumerate(fields)
        )
        layout = _LAYOUTS.get((name, widths))
        slots, size, vtable, has_i64 = layout or _layout(name, widths)
        out = self.out
        if len(out) & 1:
            out.append(0)
        vt_pos = len(out)
        out += vtable
        out += bytes((4 - len(out)) % 8 if has_i64 else -len(out) % 4)
        pos = len(out)
        self.patch(ref, pos)
        body = bytearray(size)
        body[0:4] = _I32.pack(pos - vt_pos)
        for slot, (field_name, kind, _arg) in enumerate(fields):
            off = slots[slot]
            if off and kind == U8:
                body[off] = _byte(value[slot], (what, field_name))
            elif off and kind == I64:
                body[off : off + 8] = _I64.pack(value[slot])
        out += body
        for slot, (field_name, kind, arg) in enumerate(fields):
            off = slots[slot]
            if not off or kind in _WIDTH:
                continue
            if kind == UNION:
                utype = value[slot - 1]
                if not 0 < utype < len(arg):
                    raise EncodeError(
                        f"{_label((what, field_name))}: union type {utype} names no table"
                    )
                self.table(arg[utype], value[slot], pos + off, (what, field_name))
            else:
                self.reference(kind, arg, value[slot], pos + off, (what, field_name))

    def reference(self, kind: int, arg: Any, item: Any, ref: int, what: _Path) -> None:
        out = self.out
        if kind == STR:
            text = item.encode() if isinstance(item, str) else bytes(item)
            _pad(out, 4)
            self.patch(ref, len(out))
            out += _U32.pack(len(text)) + text + b"\0"
        elif kind == VEC_I64:
            count = len(item)
            try:
                packed = struct.pack(f"<{count}q", *item)
            except (struct.error, TypeError) as exc:
                raise EncodeError(f"{_label(what)}: int64 values expected ({exc})") from None
            _pad(out, 8, 4)
            self.patch(ref, len(out))
            out += _U32.pack(count) + packed
        elif kind == VEC_U8:
            data: Any = item if isinstance(item, bytes) else memoryview(item).cast("B")
            if len(data) >= self.inline_limit:
                self.deferred.append((ref, data))
                return
            _pad(out, 8, 4)
            self.patch(ref, len(out))
            out += _U32.pack(len(data))
            out += data
        elif kind == VEC_STR:
            _pad(out, 4)
            self.patch(ref, len(out))
            try:
                out += self.pack_strings(item)
            except EncodeError as exc:
                raise exc.for_tensor(_label(what), "field") from None
        else:  # VEC_TABLE
            _pad(out, 4)
            self.patch(ref, len(out))
            start = len(out)
            out += _U32.pack(len(item)) + bytes(4 * len(item))
            for index, element in enumerate(item):
                self.table(arg, element, start + 4 + 4 * index, (what, f"[{index}]"))

    def finish(self) -> list[Any]:
        # Every uoffset to a deferred data vector is in the head: tables all come first.
        head = self.out
        parts: list[Any] = [head]
        tail = head
        total = len(head)
        for ref, data in self.deferred:
            pad = (4 - total) % 8
            self.patch(ref, total + pad)
            tail += bytes(pad) + _U32.pack(len(data))
            parts.append(data)
            total += pad + 4 + len(data)
            tail = bytearray()
            parts.append(tail)
        return [bytes(p) if isinstance(p, bytearray) else p for p in parts if len(p) or p is head]


def _byte(value: Any, what: _Path) -> int:
    if not isinstance(value, int) or not 0 <= value <= 255:
        raise EncodeError(f"{_label(what)}: a uint8 must be an int in 0..255, got {value!r}")
    return value


CONTRACTS: dict[str, str] = {
    "read_flatbuffer": """Read and verify a GraphPipe flatbuffer rooted on ``root``
    (``"Request"``, ``"InferResponse"`` or ``"MetadataResponse"``).

    Returns the root table as a tuple of its fields in schema order (``SCHEMA`` in
    ``oipcodec._shared.flatbuf``): uint8 and int64 fields as ints (0 when absent), a string as
    ``bytes``, an int64 vector as a tuple of ints, a uint8 vector as a read-only memoryview of
    ``data`` (no copy), a string vector as a 1-D object array of ``bytes``, a table vector as a
    list of tuples, a union as its table (its type is the field before it); an absent string,
    vector or union is ``None``. Every offset, vtable, vector and string is checked to lie in
    the buffer, with the alignment flatbuffers requires, before it is read; anything else raises
    :class:`DecodeError` (or :class:`LimitError`) with the byte offset.""",
    "pack_strings": """A flatbuffers vector of strings, as bytes: the element count, one
    uoffset per element, then each string (uint32 length, the bytes, a NUL, padding to 4).

    It must be placed 4-aligned in the buffer (its offsets are relative, so anywhere else).
    ``values`` is a sequence or numpy object/``S``/``U`` array of ``bytes`` or ``str`` (UTF-8
    encoded); anything else raises :class:`EncodeError` naming the element.""",
    "write_flatbuffer": """``value`` (a table as :func:`read_flatbuffer` returns it) written as
    a flatbuffer rooted on ``root``; returns a list of parts (bytes, and the data buffers of
    at least ``inline_limit`` bytes, not copied) whose concatenation is the buffer.""",
}
