"""What the BYTES framing twins (``oipcodec._native.framing``, ``oipcodec._pure.framing``)
share: the codes a framing scan stops with and the error each one becomes.

The wire form of a BYTES tensor (binary tensor data, gRPC raw contents): each element as a
4-byte little-endian unsigned length, then that many bytes, elements in row-major order, with
nothing before, between or after them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oipcodec.errors import DatatypeError, DecodeError, ShapeError

__all__ = [
    "FRAMING_OK",
    "FRAMING_PAST_END",
    "FRAMING_TOO_FEW",
    "FRAMING_TRAILING",
    "FRAMING_TRUNCATED_PREFIX",
    "framing_error",
    "out_cells",
]

# Codes a framing scan stops with; the native kernel returns them from its nogil loop.
C_CONSTANTS = (
    "FRAMING_OK",
    "FRAMING_TRUNCATED_PREFIX",
    "FRAMING_PAST_END",
    "FRAMING_TRAILING",
    "FRAMING_TOO_FEW",
)
FRAMING_OK = 0
FRAMING_TRUNCATED_PREFIX = 1
FRAMING_PAST_END = 2
FRAMING_TRAILING = 3
FRAMING_TOO_FEW = 4


def out_cells(out: Any, count: int | None) -> tuple[np.ndarray[Any, Any], int]:
    """``deserialize_bytes``'s ``out=`` checked: its cells as a flat view, and the element
    count the buffer must hold (``out.size``; a ``count`` given as well must agree)."""
    if not isinstance(out, np.ndarray):
        raise DecodeError(f"out must be a numpy array, got {type(out).__name__}")
    if out.dtype != object:
        raise DatatypeError(f"out has dtype {out.dtype}; BYTES elements go into object")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise DecodeError("out must be a writable, C-contiguous numpy array")
    if count is not None and count != out.size:
        raise ShapeError(f"out holds {out.size} elements; count is {count}")
    return out.reshape(-1), out.size


def framing_error(
    code: int, index: int, offset: int, size: int, length: int, count: int | None
) -> DecodeError:
    """The error for a BYTES framing scan that stopped at element ``index``, byte ``offset``.

    ``size`` is the buffer's length, ``length`` the prefix just read (PAST_END only).
    """
    left = size - offset
    if code == FRAMING_TRUNCATED_PREFIX:
        return DecodeError(
            f"BYTES length prefix needs 4 bytes, only {left} left", index=index, offset=offset
        )
    if code == FRAMING_PAST_END:
        return DecodeError(
            f"BYTES length prefix says {length} bytes, only {left - 4} left after it",
            index=index,
            offset=offset,
        )
    if code == FRAMING_TRAILING:
        return DecodeError(
            f"unexpected additional data: {left} bytes after the {count} expected BYTES elements",
            offset=offset,
        )
    return DecodeError(
        f"expected {count} BYTES elements, the buffer holds only {index}", offset=offset
    )


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "serialize_bytes": """Frame BYTES elements: each a 4-byte little-endian length, then its bytes.

    Parameters
    ----------
    values
        A numpy object/``S``/``U`` array or a (nested) sequence of any shape, flattened
        row-major. ``str`` elements are UTF-8 encoded (``U`` arrays too); ``S`` elements lose
        trailing NULs as numpy does; bytes, bytearray and memoryview are taken as they are.

    Raises
    ------
    EncodeError
        Any other element, or one of 2**32 bytes or more.
    """,
    "deserialize_bytes": """Split a framed BYTES buffer into a 1-D object array of ``bytes``.

    Every length prefix is checked against what is left of the buffer.

    Parameters
    ----------
    buffer
        The framed elements (any buffer).
    count
        The buffer must hold exactly ``count`` elements and nothing after them.
    out
        A writable, C-contiguous object array (any shape: a batch buffer's rows) the elements
        are stored into instead of a new array, and returned; the buffer must hold exactly
        ``out.size`` elements (``count``, if given too, must be that). The buffer is checked in
        full before any cell is written.

    Raises
    ------
    DecodeError
        Naming the element index and byte offset.
    """,
    "bytes_offsets": """Where each element of a framed BYTES buffer is, without copying it.

    The zero-copy form of :func:`deserialize_bytes`, for callers that slice the buffer
    themselves: the same checks, the same :class:`DecodeError` for the same input.

    Parameters
    ----------
    buffer, count
        As in :func:`deserialize_bytes`.

    Returns
    -------
    tuple
        ``(offsets, lengths)``, two 1-D int64 arrays: element ``i`` is
        ``buffer[offsets[i] : offsets[i] + lengths[i]]`` (the offsets point past each 4-byte
        length prefix).
    """,
}
