"""What the twins of ``array_to_json`` share: input checks, normalisation and error messages.

Both ``oipcodec._native.jsonencode`` and ``oipcodec._pure.jsonencode`` start from
:func:`prepare`, so they accept the same inputs, see the same element values (BF16 rounded the
same way) and raise the same errors with the same messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec.errors import DatatypeError, EncodeError

__all__ = [
    "NONFINITE_MODES",
    "Prepared",
    "bf16_bits",
    "empty_nested",
    "nonfinite_error",
    "not_utf8_error",
    "prepare",
]

#: What ``array_to_json`` does with NaN and infinities: write the tokens ``NaN``,
#: ``Infinity`` and ``-Infinity`` (the default), or raise :class:`EncodeError`.
NONFINITE_MODES = ("tokens", "error")


# Not frozen: a frozen dataclass's __init__ sets each field through object.__setattr__,
# several times the cost of a plain one, and one is made per call of the kernel.
@dataclass(slots=True)
class Prepared:
    """An array ready to be written.

    ``values`` is C-contiguous in native byte order with the shape to write (a 0-d array
    becomes shape ``(1,)``, flat output shape ``(size,)``): the datatype's numpy dtype for
    integers, BOOL, FP32 and FP64; the ``uint16`` bit patterns for FP16 and BF16 (BF16 from
    float32/float64 already rounded to nearest even); for BYTES the original array.
    """

    datatype: str
    values: np.ndarray[Any, Any]
    shape: tuple[int, ...]


def prepare(array: Any, datatype: str, nested: bool, nonfinite: str) -> Prepared:
    """Check the arguments of ``array_to_json`` and normalise the array (at most one copy)."""
    row = datatypes.get(datatype)
    if nonfinite not in NONFINITE_MODES:
        raise EncodeError(f"nonfinite must be 'tokens' or 'error', got {nonfinite!r}")
    if isinstance(array, np.generic):
        array = np.asarray(array)
    if not isinstance(array, np.ndarray):
        raise EncodeError(f"array must be a numpy array, got {type(array).__name__}")
    if not row.carries(array.dtype):
        raise DatatypeError(f"numpy dtype {array.dtype} cannot carry datatype {datatype}")
    shape: tuple[int, ...] = tuple(array.shape) if nested and array.ndim else (array.size,)
    if row.is_bytes:
        return Prepared(datatype, array, shape)
    native = array.dtype.newbyteorder("=")
    if datatype == "BF16" and native != row.numpy_dtype:
        bits = bf16_bits(np.ascontiguousarray(array, dtype=native))
    else:
        values = np.ascontiguousarray(array, dtype=native)
        if not values.flags.aligned:  # the row writers load whole elements (aligned, in C)
            values = values.copy()
        bits = values.view(np.uint16) if datatype in ("FP16", "BF16") else values
    return Prepared(datatype, bits.reshape(shape), shape)


def bf16_bits(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """float32 or float64 values rounded to BF16 (nearest, ties to even), as uint16 patterns.

    float64 is rounded once, from the float64 value: it is first narrowed to float32 with
    round-to-odd, which keeps the final rounding exact (ml_dtypes' float64 cast rounds twice).
    NaN becomes the quiet NaN 0x7FC0 with its sign; overflow gives infinity.
    """
    if values.dtype == np.float64:
        with np.errstate(over="ignore", invalid="ignore"):
            nearest = values.astype(np.float32)
        bits = nearest.view(np.uint32).copy()
        inexact = (nearest.astype(np.float64) != values) & ~np.isnan(values)
        # Round-to-odd: of the two float32 neighbours of an inexact value, the odd one.
        even = (bits & 1) == 0
        away = np.abs(nearest.astype(np.float64)) > np.abs(values)
        fix = inexact & even
        bits[fix & away] -= np.uint32(1)
        bits[fix & ~away] += np.uint32(1)
    else:
        bits = values.view(np.uint32)
    sign = ((bits >> np.uint32(16)) & np.uint32(0x8000)).astype(np.uint16)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    out = rounded.astype(np.uint16)
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    out[nan] = sign[nan] | np.uint16(0x7FC0)
    return out


def empty_nested(shape: tuple[int, ...]) -> bytes:
    """The nested JSON of an array with no elements: lists down to the first zero dimension."""
    text = b"[]"
    first_zero = shape.index(0)
    for dim in reversed(shape[:first_zero]):
        text = b"[" + b",".join([text] * dim) + b"]"
    return text


def nonfinite_error(index: int, token: str) -> EncodeError:
    return EncodeError(
        f"element is {token}, which strict JSON cannot carry "
        "(nonfinite='error'; the default writes the tokens NaN, Infinity, -Infinity)",
        index=index,
    )


def not_utf8_error(index: int, position: int) -> EncodeError:
    return EncodeError(
        f"BYTES element is not valid UTF-8 (at byte {position} of the element), so JSON cannot "
        "carry it; send this tensor with the binary tensor data extension instead",
        index=index,
    )


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "array_to_json": """The JSON array text of ``array``'s elements, row-major, as UTF-8 bytes.

    The OIP rule: "data: row-major, no stride or padding, flat [1,2,4,5] or nested
    [[1,2],[4,5]]". The text of each element type is described in docs/kernels.md.

    Parameters
    ----------
    array
        The elements, in any layout and byte order; its dtype must carry ``datatype``.
    datatype
        The OIP name.
    nested
        Nest by the array's shape (flat by default).
    nonfinite
        ``"tokens"`` writes NaN and infinities as ``NaN``, ``Infinity``, ``-Infinity``;
        ``"error"`` raises :class:`EncodeError` for them.

    Raises
    ------
    DatatypeError
        The array's dtype does not carry ``datatype``.
    """,
}
