"""GraphPipe's tables built and read with the ``flatbuffers`` runtime: the reference the tests
check oipcodec's flatbuffer kernel against.

Written by hand with the runtime's Builder and Table, as flatc's generated Python code does
(field slot ``i`` is vtable offset ``4 + 2 * i``; a union takes two slots, its type first).
Tables are the tuples ``oipcodec.kernels.read_flatbuffer`` returns, so the two compare with ``==``
(after :func:`plain`).
"""

from __future__ import annotations

from typing import Any

import flatbuffers
import numpy as np
from flatbuffers import number_types as N
from flatbuffers.table import Table

# The kinds of oipcodec._shared.flatbuf, repeated here so the reference does not read the schema
# it checks: each table's fields in id order.
FIELDS: dict[str, tuple[tuple[str, str, Any], ...]] = {
    "Tensor": (("type", "u8", None), ("shape", "i64s", None), ("data", "u8s", None),
               ("string_val", "strs", None)),
    "Request": (("req_type", "u8", None),
                ("req", "union", (None, "InferRequest", "MetadataRequest"))),
    "InferRequest": (("config", "str", None), ("input_names", "strs", None),
                     ("input_tensors", "tables", "Tensor"), ("output_names", "strs", None)),
    "Error": (("code", "i64", None), ("message", "str", None)),
    "InferResponse": (("output_tensors", "tables", "Tensor"), ("errors", "tables", "Error")),
    "MetadataRequest": (),
    "IOMetadata": (("name", "str", None), ("description", "str", None),
                   ("shape", "i64s", None), ("type", "u8", None)),
    "MetadataResponse": (("name", "str", None), ("version", "str", None),
                         ("server", "str", None), ("description", "str", None),
                         ("inputs", "tables", "IOMetadata"), ("outputs", "tables", "IOMetadata")),
}  # fmt: skip


def build(root: str, value: tuple[Any, ...]) -> bytes:
    """``value`` as a flatbuffer built by the runtime's Builder, rooted on ``root``."""
    builder = flatbuffers.Builder(1024)
    builder.Finish(table(builder, root, value))
    return bytes(builder.Output())


def table(builder: flatbuffers.Builder, name: str, value: tuple[Any, ...]) -> int:
    fields = FIELDS[name]
    refs: dict[int, int] = {}
    # Children first: the runtime builds back to front.
    for slot, (_, kind, arg) in enumerate(fields):
        item = value[slot]
        if item is None or kind in ("u8", "i64"):
            continue
        if kind == "str":
            refs[slot] = builder.CreateString(item)
        elif kind == "u8s":
            refs[slot] = builder.CreateByteVector(bytes(item))
        elif kind == "i64s":
            refs[slot] = builder.CreateNumpyVector(np.asarray(item, dtype="<i8"))
        elif kind == "strs":
            strings = [builder.CreateString(bytes(s)) for s in item]
            builder.StartVector(4, len(strings), 4)
            for ref in reversed(strings):
                builder.PrependUOffsetTRelative(ref)
            refs[slot] = builder.EndVector()
        elif kind == "tables":
            tables = [table(builder, arg, t) for t in item]
            builder.StartVector(4, len(tables), 4)
            for ref in reversed(tables):
                builder.PrependUOffsetTRelative(ref)
            refs[slot] = builder.EndVector()
        else:  # union
            refs[slot] = table(builder, arg[value[slot - 1]], item)
    builder.StartObject(len(fields))
    for slot, (_, kind, _arg) in enumerate(fields):
        if kind == "u8":
            builder.PrependUint8Slot(slot, value[slot], 0)
        elif kind == "i64":
            builder.PrependInt64Slot(slot, value[slot], 0)
        elif slot in refs:
            builder.PrependUOffsetTRelativeSlot(slot, refs[slot], 0)
    return int(builder.EndObject())


def read(root: str, buffer: bytes) -> tuple[Any, ...]:
    """The table a buffer is rooted on, read with the runtime's Table (no verification)."""
    buf = bytearray(buffer)
    position = flatbuffers.encode.Get(N.UOffsetTFlags.packer_type, buf, 0)
    return _read(Table(buf, position), root)


def _read(table: Table, name: str) -> tuple[Any, ...]:
    values: list[Any] = []
    for slot, (_, kind, arg) in enumerate(FIELDS[name]):
        off = table.Offset(4 + 2 * slot)
        if kind == "u8":
            values.append(table.Get(N.Uint8Flags, table.Pos + off) if off else 0)
        elif kind == "i64":
            values.append(table.Get(N.Int64Flags, table.Pos + off) if off else 0)
        elif not off:
            values.append(None)
        elif kind == "str":
            values.append(bytes(table.String(table.Pos + off)))
        elif kind == "u8s":
            values.append(bytes(table.GetVectorAsNumpy(N.Uint8Flags, off)))
        elif kind == "i64s":
            values.append(tuple(table.GetVectorAsNumpy(N.Int64Flags, off).tolist()))
        elif kind == "strs":
            start, count = table.Vector(off), table.VectorLen(off)
            values.append([bytes(table.String(start + 4 * i)) for i in range(count)])
        elif kind == "tables":
            start, count = table.Vector(off), table.VectorLen(off)
            values.append(
                [
                    _read(Table(table.Bytes, table.Indirect(start + 4 * i)), arg)
                    for i in range(count)
                ]
            )
        else:
            member = Table(bytearray(), 0)
            table.Union(member, off)
            values.append(_read(member, arg[values[-1]]))
    return tuple(values)


def plain(value: Any) -> Any:
    """A table as the kernel returns it, with views and arrays made bytes and lists."""
    if isinstance(value, tuple | list):
        return type(value)(plain(v) for v in value)
    if isinstance(value, np.ndarray):
        return [bytes(v) for v in value]
    if isinstance(value, memoryview):
        return bytes(value)
    return value
