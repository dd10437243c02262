"""What the FP16/BF16 kernels and their pure twins share: input normalisation, buffer checks,
the zero-copy views, and the error messages.

The OIP wire carries FP16 and BF16 tensors as 2-byte little-endian elements in row-major order
(binary tensor data and gRPC raw contents). numpy has a float16 type; BF16 has one only with
ml_dtypes (an optional dependency), so its plain decoded form is float32.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from oipcodec._shared.buffers import byte_view, check_count
from oipcodec.errors import DecodeError, EncodeError

C_CONSTANTS = ("SOURCE_F16", "SOURCE_F32", "SOURCE_F64", "SOURCE_BF16")

__all__ = [
    "SOURCE_BF16",
    "SOURCE_F16",
    "SOURCE_F32",
    "SOURCE_F64",
    "bfloat16_dtype",
    "half_elements",
    "half_source",
    "is_bfloat16",
    "le_uint16_view",
    "wire_view",
]

# What pack_fp16/pack_bf16 convert from. The native kernel switches on these codes.
SOURCE_F16 = 0
SOURCE_F32 = 1
SOURCE_F64 = 2
SOURCE_BF16 = 3

_HOST_LITTLE = sys.byteorder == "little"


def bfloat16_dtype() -> np.dtype[Any]:
    """ml_dtypes' bfloat16 dtype; :class:`ImportError` with the remedy when it is missing."""
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError(
            "a bfloat16 array needs ml_dtypes: pip install 'oipcodec[bf16]' "
            "(or use unpack_bf16, which returns float32)"
        ) from None
    return np.dtype(ml_dtypes.bfloat16)


def is_bfloat16(dtype: np.dtype[Any]) -> bool:
    """Whether ``dtype`` is ml_dtypes' bfloat16, told by its scalar type, so that the kernels
    never import ml_dtypes themselves."""
    return (
        dtype.itemsize == 2
        and getattr(dtype.type, "__name__", "") == "bfloat16"
        and getattr(dtype.type, "__module__", "").startswith("ml_dtypes")
    )


def half_source(values: Any, target: str) -> tuple[np.ndarray[Any, Any], int, bool]:
    """Normalise the input of ``pack_fp16``/``pack_bf16`` (``target`` is "FP16" or "BF16").

    Returns ``(array, source, little)``: the values flattened row-major into a C-contiguous
    array with their dtype unchanged (float16, float32, float64 or ml_dtypes.bfloat16, in any
    byte order; at most one copy, only when the input is not C-contiguous), the SOURCE_* code,
    and whether the elements are stored little-endian. Sequences are converted with
    ``numpy.asarray(values, dtype=float64)``; numpy arrays of any other dtype raise
    :class:`EncodeError` rather than being converted silently.
    """
    if isinstance(values, np.ndarray):
        array = values
    else:
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise EncodeError(f"{target} values must be floats: {exc}") from None
    dtype = array.dtype
    if dtype.kind == "f" and dtype.itemsize in (2, 4, 8):
        source = {2: SOURCE_F16, 4: SOURCE_F32, 8: SOURCE_F64}[dtype.itemsize]
    elif is_bfloat16(dtype):
        source = SOURCE_BF16
    else:
        raise EncodeError(
            f"{target} values must be a float16, float32, float64 or bfloat16 array, got "
            f"{dtype} (convert it with .astype(numpy.float64) first)"
        )
    little = _HOST_LITTLE if dtype.byteorder in ("=", "|") else dtype.byteorder == "<"
    flat = np.ascontiguousarray(array).reshape(-1)
    return flat, source, little


def half_elements(view: memoryview, count: int | None, what: str) -> int:
    """The number of 2-byte elements in ``view`` (what: "FP16" or "BF16"), checked.

    An odd length, or one that is not ``2 * count`` bytes when ``count`` is given, raises
    :class:`DecodeError` at the offset where the buffer stops making sense: the odd last byte,
    the end of a short buffer, or the first byte after the expected elements.
    """
    expected = check_count(count)
    size = len(view)
    if expected >= 0 and size != 2 * expected:
        if size > 2 * expected:
            raise DecodeError(
                f"unexpected additional data: {size - 2 * expected} bytes after the "
                f"{expected} expected {what} elements",
                offset=2 * expected,
            )
        raise DecodeError(
            f"expected {expected} {what} elements ({2 * expected} bytes), the buffer has "
            f"only {size} bytes",
            offset=size,
        )
    if size % 2:
        raise DecodeError(
            f"{what} buffer of {size} bytes is not a whole number of 2-byte elements",
            offset=size - 1,
        )
    return size // 2


def wire_view(buffer: Any, count: int | None, what: str) -> tuple[memoryview, int]:
    """The buffer as bytes and its checked element count."""
    view = byte_view(buffer)
    return view, half_elements(view, count, what)


def le_uint16_view(view: memoryview, n: int, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The ``n`` little-endian 2-byte elements of ``view`` as a read-only array of ``dtype``
    (a native 2-byte dtype: float16 or bfloat16).

    A view of the buffer when its address is 2-byte aligned on a little-endian host; otherwise
    one copy (aligned, native byte order). The result is read-only either way, so callers see
    the same behaviour whatever the buffer's alignment.
    """
    raw = np.frombuffer(view, dtype="<u2", count=n)
    if not (_HOST_LITTLE and raw.flags.aligned):
        raw = raw.astype(np.uint16)
    out = raw.view(dtype)
    out.flags.writeable = False
    return out


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "pack_fp16": """Pack float values as FP16: 2 bytes each, little-endian, row-major.

    Rounding is to nearest, ties to even, once from the source value; values beyond the FP16
    range become infinity; NaN keeps its sign and the top 10 payload bits (0x7C01 if none is
    left), bit for bit as numpy's float16 conversion.

    Parameters
    ----------
    array
        A float16, float32, float64 or ml_dtypes.bfloat16 array of any shape, layout and byte
        order (or a sequence of numbers).
    """,
    "pack_bf16": """Pack float values as BF16: 2 bytes each, little-endian, row-major.

    Rounding is to nearest, ties to even, once from the source value (float64 is not rounded to
    float32 first); overflow becomes infinity; NaN becomes the quiet NaN 0x7FC0 with its sign.
    Bit-identical to ``astype(ml_dtypes.bfloat16)`` for float32 and float16 input; for float64
    ml_dtypes rounds twice (via float32) and can differ by one unit where this rounds correctly.

    Parameters
    ----------
    array
        As in :func:`pack_fp16`.
    """,
    "unpack_fp16": """FP16 wire bytes as a 1-D read-only float16 array.

    A zero-copy view of ``buffer`` when it is 2-byte aligned (on a little-endian host), else one
    copy.

    Parameters
    ----------
    buffer
        The wire bytes (any buffer).
    count
        The element count the buffer must hold.

    Raises
    ------
    DecodeError
        An odd length, or one other than ``2 * count`` bytes, with the offset.
    """,
    "unpack_bf16": """BF16 wire bytes widened (exactly) to a new 1-D float32 array.

    Parameters
    ----------
    buffer, count
        As in :func:`unpack_fp16`, with the same length checks.
    """,
    "view_bf16": """BF16 wire bytes as a 1-D read-only ``ml_dtypes.bfloat16`` array.

    A zero-copy view when aligned, as :func:`unpack_fp16`.

    Parameters
    ----------
    buffer, count
        As in :func:`unpack_fp16`, with the same length checks.

    Raises
    ------
    ImportError
        ml_dtypes is not installed.
    """,
}
