"""What the top-k kernels and their pure twins share: argument checks, the widening of the
values to the few types the loops handle, the label table, and the error messages.

Ranking rule (both twins): in each row, larger values first; equal values by the lower index;
NaN below every number, NaNs among themselves by index. ``-0.0`` equals ``0.0``.

Formatting rule (both twins), Triton's classification strings: ``value:index`` or
``value:index:label``, the value as C++ ``std::to_string`` prints it for the output's type:
integers in decimal (BOOL as 0 or 1), floating point as ``printf("%f")`` of the value widened
to double (six decimals, every integer digit: ``1e30`` in FP32 is
``1000000015047466219876688855040.000000``), NaN as ``nan`` or ``-nan`` by its sign bit and
infinities as ``inf`` / ``-inf``, as glibc prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from oipcodec._shared.halffloat import is_bfloat16
from oipcodec.errors import EncodeError

C_CONSTANTS = ("FORMAT_SIGNED", "FORMAT_UNSIGNED", "FORMAT_FLOAT")

__all__ = [
    "CONTRACTS",
    "FORMAT_FLOAT",
    "FORMAT_SIGNED",
    "FORMAT_UNSIGNED",
    "format_source",
    "label_table",
    "rank_source",
]

# How classification_strings prints a value; the native loop switches on these codes.
FORMAT_SIGNED = 0
FORMAT_UNSIGNED = 1
FORMAT_FLOAT = 2


def _numeric(values: Any, what: str) -> np.ndarray[Any, Any]:
    """``values`` as a numpy array of an OIP numeric type, unchanged (no copy)."""
    if not isinstance(values, np.ndarray):
        raise EncodeError(f"{what} must be a numpy array, got {type(values).__name__}")
    kind = values.dtype.kind
    if not (kind in "biu" or (kind == "f" and values.dtype.itemsize in (2, 4, 8))) and not (
        is_bfloat16(values.dtype)
    ):
        raise EncodeError(
            f"{what} must hold numbers (BOOL, INT8..INT64, UINT8..UINT64, FP16, BF16, FP32, "
            f"FP64), got {values.dtype}"
        )
    return values


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise EncodeError(f"k must be a positive integer, got {k!r}")
    return int(k)


def rank_source(values: Any, k: Any) -> tuple[np.ndarray[Any, Any], int]:
    """Check the arguments of ``top_k`` and give ``(array, count)``: the values as a C-contiguous
    2-D array in native byte order in one of the types the loops rank (bool as uint8, the
    integer types, float32, float64; FP16 and BF16 widened exactly to float32, which keeps
    their order), and the number of indices each row answers, ``min(k, classes)``.
    """
    array = _numeric(values, "top_k values")
    if array.ndim != 2:
        raise EncodeError(
            f"top_k values must be a 2-D array [rows, classes], got {array.ndim} dimension(s)"
        )
    count = min(_check_k(k), array.shape[1])
    dtype = array.dtype
    if dtype.kind == "b":
        array = array.view(np.uint8)
    elif (dtype.kind == "f" and dtype.itemsize == 2) or is_bfloat16(dtype):
        array = array.astype(np.float32)
    elif not dtype.isnative:
        array = array.astype(dtype.newbyteorder("="))
    array = np.ascontiguousarray(array)
    if not array.flags.aligned:  # a view of a received body: the loops load whole elements
        array = array.copy()
    return array, count


def format_source(
    values: Any, indices: Any
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], int]:
    """Check the arguments of ``classification_strings`` and give ``(values, indices, code)``:
    the values as a C-contiguous int64, uint64 or float64 array (exact widening: what
    ``std::to_string`` prints does not change), the indices as C-contiguous int64, both 1-D,
    and the FORMAT_* code of the values.
    """
    array = _numeric(values, "classification values")
    if not isinstance(indices, np.ndarray) or indices.dtype.kind not in "iu":
        raise EncodeError("classification indices must be an integer numpy array")
    if indices.shape != array.shape:
        raise EncodeError(
            f"classification indices have shape {list(indices.shape)}, the values "
            f"{list(array.shape)}"
        )
    index = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
    if index.size and int(index.min()) < 0:
        raise EncodeError(f"classification index {int(index.min())} is negative")
    kind = array.dtype.kind
    if kind == "u":
        return np.ascontiguousarray(array, dtype=np.uint64).reshape(-1), index, FORMAT_UNSIGNED
    if kind in "bi":
        return np.ascontiguousarray(array, dtype=np.int64).reshape(-1), index, FORMAT_SIGNED
    return np.ascontiguousarray(array, dtype=np.float64).reshape(-1), index, FORMAT_FLOAT


def label_table(labels: Sequence[Any] | None) -> tuple[bytes, ...]:
    """``labels`` (a sequence of str or bytes, or None) as a tuple of UTF-8 bytes; an empty
    label is no label, as in Triton."""
    if labels is None:
        return ()
    if isinstance(labels, (str, bytes)):
        raise EncodeError("labels must be a sequence of labels, not one string")
    table = []
    for i, label in enumerate(labels):
        if isinstance(label, str):
            table.append(label.encode("utf-8", "surrogatepass"))
        elif isinstance(label, (bytes, bytearray, memoryview)):
            table.append(bytes(label))
        else:
            raise EncodeError(f"label {i} must be str or bytes, got {type(label).__name__}")
    return tuple(table)


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "top_k": """The indices and values of the ``k`` largest values of each row.

    ``values`` is a 2-D numpy array [rows, classes] of BOOL, INT8..INT64, UINT8..UINT64, FP16,
    BF16 (ml_dtypes.bfloat16, or float32), FP32 or FP64 values, in any layout and byte order;
    ``k`` a positive integer, which may exceed the class count. Returns ``(indices, values)``,
    each of shape [rows, min(k, classes)]: the int64 class indices, best first, and the values
    at them in the input's dtype. Larger values rank first; equal values by the lower index;
    NaN ranks below every number, NaNs among themselves by index. Nothing larger than the
    answer is allocated. :class:`EncodeError` for anything else (``k < 1``, not 2-D, BYTES).
    """,
    "classification_strings": """Triton's classification strings for ranked values, as a
    numpy object array of bytes of the shape of ``values``.

    ``values`` and ``indices`` are arrays of one shape (what :func:`top_k` returns, any shape);
    element ``i`` is ``b"<value>:<index>"``, or ``b"<value>:<index>:<label>"`` when
    ``labels`` (a sequence of str or bytes) has a non-empty label at that index. The value is
    printed as C++ ``std::to_string`` prints it for its type: integers in decimal (BOOL as 0
    or 1), floats (FP16, BF16, FP32, FP64) as ``%f`` of the value widened to double, NaN as
    ``nan``/``-nan`` by its sign, ``inf``/``-inf``.
    """,
}
