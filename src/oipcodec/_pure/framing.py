"""BYTES length-prefix framing, pure twin of ``oipcodec._native.framing``.

The wire form of a BYTES tensor (HTTP binary data and gRPC raw contents) is its elements in
row-major order, each preceded by its length as a 4-byte little-endian unsigned integer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oipcodec._common import (
    FRAMING_OK,
    FRAMING_PAST_END,
    FRAMING_TOO_FEW,
    FRAMING_TRAILING,
    FRAMING_TRUNCATED_PREFIX,
    byte_view,
    bytes_elements,
    check_count,
    element_too_long_error,
    element_type_error,
    framing_error,
    utf8_error,
)

__all__ = ["bytes_offsets", "deserialize_bytes", "serialize_bytes"]

_MAX_ELEMENT = 0xFFFFFFFF


def serialize_bytes(values: Any) -> bytes:
    """Frame BYTES elements: each as a 4-byte little-endian length followed by its bytes.

    ``values`` is a numpy object/``S``/``U`` array or a (nested) sequence of any shape,
    flattened row-major. ``str`` elements are UTF-8 encoded (``U`` arrays too); ``S`` elements
    lose trailing NULs as numpy does; bytes, bytearray and memoryview are taken as they are.
    Any other element, or one of 2**32 bytes or more, raises :class:`EncodeError`.
    """
    parts: list[bytes] = []
    for index, element in enumerate(bytes_elements(values)):
        if isinstance(element, str):
            try:
                data = element.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise utf8_error(index, exc) from None
        elif isinstance(element, (bytes, bytearray, memoryview)):
            data = bytes(element)
        else:
            raise element_type_error(index, element)
        if len(data) > _MAX_ELEMENT:
            raise element_too_long_error(index, len(data))
        parts.append(len(data).to_bytes(4, "little"))
        parts.append(data)
    return b"".join(parts)


def deserialize_bytes(buffer: Any, count: int | None = None) -> np.ndarray[Any, Any]:
    """Split a framed BYTES buffer into a 1-D object array of ``bytes``.

    Every length prefix is checked against what is left of the buffer. With ``count``, the
    buffer must hold exactly ``count`` elements and nothing after them. Problems raise
    :class:`DecodeError` naming the element index and byte offset.
    """
    view = byte_view(buffer)
    starts, lengths = _scan(view, count)
    out = np.empty(len(starts), dtype=object)
    out[:] = [bytes(view[s : s + n]) for s, n in zip(starts, lengths, strict=True)]
    return out


def bytes_offsets(
    buffer: Any, count: int | None = None
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Where each element of a framed BYTES buffer is, without copying it: two 1-D int64 arrays,
    so that element ``i`` is ``buffer[offsets[i] : offsets[i] + lengths[i]]`` (the offsets
    point past each 4-byte length prefix).

    The zero-copy form of :func:`deserialize_bytes`, for callers that slice the buffer
    themselves: the same checks, the same :class:`DecodeError` for the same input.
    """
    starts, lengths = _scan(byte_view(buffer), count)
    return np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64)


def _scan(view: memoryview, count: int | None) -> tuple[list[int], list[int]]:
    """Validate the framing; the elements' start offsets (past their prefixes) and lengths."""
    expected = check_count(count)
    size = len(view)
    starts: list[int] = []
    lengths: list[int] = []
    offset = 0
    code = FRAMING_OK
    length = 0
    while offset < size and len(starts) != expected:
        if size - offset < 4:
            code = FRAMING_TRUNCATED_PREFIX
            break
        length = int.from_bytes(view[offset : offset + 4], "little")
        if length > size - offset - 4:
            code = FRAMING_PAST_END
            break
        starts.append(offset + 4)
        lengths.append(length)
        offset += 4 + length
    if code == FRAMING_OK and expected >= 0:
        if len(starts) < expected:
            code = FRAMING_TOO_FEW
        elif offset < size:
            code = FRAMING_TRAILING
    if code != FRAMING_OK:
        raise framing_error(code, len(starts), offset, size, length, count)
    return starts, lengths
