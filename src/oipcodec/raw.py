"""The raw byte form of a tensor, shared by the HTTP binary extension and gRPC raw contents.

Both protocols carry a tensor's data the same way (the REST protocol's binary tensor data
extension, and gRPC's raw contents): little-endian, row-major, no padding; BOOL as one byte per
element; FP16 as IEEE half; BF16 as the upper half of a float32 (rounded to nearest even); BYTES
as length-prefixed elements (:func:`oipcodec.kernels.serialize_bytes`).

Decoding checks the byte count against the shape before anything is made and returns a
read-only view of the buffer: no copy, whatever the tensor's size. The view may be unaligned
(a tensor starts wherever the JSON header or the protobuf field before it ends); numpy reads
unaligned data correctly, and ``array.flags.aligned`` tells. A library that needs aligned
memory can ask for one copy with ``np.require(array, requirements="A")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec import kernels as _facade
from oipcodec._shared.buffers import byte_view
from oipcodec.errors import DecodeError, LimitError
from oipcodec.kernels import Kernels
from oipcodec.limits import DEFAULT_LIMITS, Limits, element_count

__all__ = ["LITTLE_ENDIAN", "Kernels", "array_to_raw", "raw_to_array", "view_to_array"]


def _little_endian_dtypes() -> dict[str, np.dtype[Any]]:
    """Each fixed-size datatype's little-endian numpy dtype: the row's own object where that is
    already little-endian, so that a decoded array's dtype is met by identity in
    :meth:`~oipcodec.datatypes.Datatype.carries` (no byte-order work per tensor)."""
    out = {}
    for name, row in datatypes.DATATYPES.items():
        if row.numpy_dtype is not None and not row.is_bytes:
            wire = row.numpy_dtype.newbyteorder("<")
            out[name] = row.numpy_dtype if wire == row.numpy_dtype else wire
    return out


#: The little-endian numpy dtype of each fixed-size datatype, by name.
LITTLE_ENDIAN = _little_endian_dtypes()
_BOOL_WIRE = np.dtype(np.uint8)


def raw_to_array(
    buffer: Any,
    datatype: str,
    shape: Any,
    *,
    limits: Limits = DEFAULT_LIMITS,
    kernels: Kernels | None = None,
) -> np.ndarray[Any, Any]:
    """The array of ``shape`` and ``datatype`` whose raw bytes are exactly ``buffer``.

    BYTES framing is validated against the element count; BOOL bytes must be 0 or 1. BF16
    decodes to ``ml_dtypes.bfloat16`` when installed, else to float32.

    Parameters
    ----------
    buffer
        The tensor's raw bytes (any buffer).
    datatype
        The OIP datatype (``"FP32"``, ``"BYTES"``...).
    shape
        The tensor's shape.
    limits
        No BYTES element may be longer than ``limits.max_bytes_element``.
    kernels
        The kernel implementation (e.g. ``oipcodec.kernels.load("pure")``); the default is the
        facade's, as in every codec.

    Raises
    ------
    DecodeError
        A size that disagrees with ``shape`` (naming both), bad BYTES framing, a BOOL byte not 0
        or 1; :class:`LimitError` for a BYTES element over the limit.
    """
    row = datatypes.get(datatype)
    count = element_count(shape, limits)
    return view_to_array(byte_view(buffer), row, count, tuple(shape), limits, kernels or _facade)


def view_to_array(
    view: memoryview,
    row: datatypes.Datatype,
    count: int,
    shape: tuple[int, ...],
    limits: Limits,
    k: Kernels,
) -> np.ndarray[Any, Any]:
    """:func:`raw_to_array` once its arguments are known good (a decoder that has them
    already skips finding them again, a part of every tensor's cost).

    Parameters
    ----------
    view
        The tensor's raw bytes as a one-dimensional byte view.
    row
        The datatype's row (:func:`oipcodec.datatypes.get`).
    count
        The element count of ``shape``, checked against ``limits``.
    shape
        The tensor's shape, a tuple.
    limits
        As in :func:`raw_to_array`.
    k
        The kernel implementation.
    """
    if row.is_bytes:
        _check_bytes_lengths(view, count, limits, k)
        return k.deserialize_bytes(view, count).reshape(shape)
    expected = count * row.itemsize
    if len(view) != expected:
        raise DecodeError(
            f"expected {expected} bytes for {count} {row.name} elements of shape "
            f"{list(shape)}, got {len(view)}"
        )
    if row.name == "BF16" and datatypes.BF16_DTYPE is None:
        return k.unpack_bf16(view, count).reshape(shape)
    wire_dtype = _BOOL_WIRE if row.name == "BOOL" else LITTLE_ENDIAN[row.name]
    array = np.frombuffer(view, dtype=wire_dtype, count=count)
    if row.name == "BOOL":
        if count and int(array.max()) > 1:
            bad = int(np.argmax(array > 1))
            raise DecodeError(f"BOOL bytes must be 0 or 1, got {array[bad]}", index=bad, offset=bad)
        array = array.view(np.bool_)
    if not view.readonly:  # a view of read-only bytes (a message's) is read-only already
        array.flags.writeable = False
    return array.reshape(shape)


def array_to_raw(
    array: np.ndarray[Any, Any], datatype: str, *, kernels: Kernels | None = None
) -> bytes | memoryview:
    """The raw bytes of ``array`` as a tensor of ``datatype``.

    Fixed-size types come back as a view of the array when it is already C-contiguous and
    little-endian, else as one copy. FP16/BF16 from wider floats are rounded to nearest even.

    Parameters
    ----------
    array
        The tensor's elements.
    datatype
        The OIP datatype to write them as.
    kernels
        As in :func:`raw_to_array`.
    """
    k = kernels or _facade
    row = datatypes.get(datatype)
    if row.is_bytes:
        return k.serialize_bytes(array)
    if row.name == "FP16":
        return k.pack_fp16(array)
    if row.name == "BF16":
        return k.pack_bf16(array)
    return k.little_endian_view(array)


def _check_bytes_lengths(view: memoryview, count: int, limits: Limits, k: Kernels) -> None:
    """Refuse a BYTES element longer than ``limits.max_bytes_element`` before any is made.

    Only a buffer longer than the limit can hold such an element, so the zero-copy scan runs
    only then (never with the default limit, which is the prefix's own maximum).
    """
    limit = limits.max_bytes_element
    if len(view) - 4 <= limit:
        return
    offsets, lengths = k.bytes_offsets(view, count)
    over = np.flatnonzero(lengths > limit)
    if len(over):
        first = int(over[0])
        raise LimitError(
            f"BYTES element of {int(lengths[first])} bytes exceeds the limit of {limit}",
            index=first,
            offset=int(offsets[first]) - 4,
        )
