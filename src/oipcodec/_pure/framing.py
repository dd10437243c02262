"""BYTES length-prefix framing, pure twin of ``oipcodec._native.framing``.

The wire form of a BYTES tensor (HTTP binary data and gRPC raw contents) is its elements in
row-major order, each preceded by its length as a 4-byte little-endian unsigned integer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.buffers import (
    byte_view,
    bytes_elements,
    check_count,
    element_too_long_error,
    element_type_error,
    utf8_error,
)
from oipcodec._shared.framing import (
    CONTRACTS,
    FRAMING_OK,
    FRAMING_PAST_END,
    FRAMING_TOO_FEW,
    FRAMING_TRAILING,
    FRAMING_TRUNCATED_PREFIX,
    framing_error,
    out_cells,
)

__all__ = ["bytes_offsets", "deserialize_bytes", "serialize_bytes"]

_MAX_ELEMENT = 0xFFFFFFFF


@contract(CONTRACTS)
def serialize_bytes(values: Any) -> bytes:
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


@contract(CONTRACTS)
def deserialize_bytes(
    buffer: Any, count: int | None = None, *, out: np.ndarray[Any, Any] | None = None
) -> np.ndarray[Any, Any]:
    view = byte_view(buffer)
    if out is not None:
        cells, count = out_cells(out, count)
        starts, lengths = _scan(view, count)
    else:
        starts, lengths = _scan(view, count)
        out = cells = np.empty(len(starts), dtype=object)
    cells[:] = [bytes(view[s : s + n]) for s, n in zip(starts, lengths, strict=True)]
    return out


@contract(CONTRACTS)
def bytes_offsets(
    buffer: Any, count: int | None = None
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
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
