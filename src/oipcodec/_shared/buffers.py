"""What the native kernels and their pure twins share: input normalisation and error messages.

Keeping these in one module is what makes the twins behave the same: both accept the same
inputs and raise the same error, with the same message, for the same problem.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oipcodec.errors import DecodeError, EncodeError

__all__ = [
    "byte_view",
    "bytes_array",
    "bytes_elements",
    "check_count",
    "element_too_long_error",
    "element_type_error",
    "utf8_error",
]


def byte_view(obj: Any, what: str = "buffer") -> memoryview:
    """A one-dimensional, C-contiguous, unsigned-byte view of any buffer-protocol object.

    bytes, bytearray, memoryview, mmap and numpy arrays of any dtype are accepted; only a
    non-contiguous buffer is copied. Anything else raises :class:`DecodeError`.
    """
    if isinstance(obj, np.ndarray):
        obj = np.ascontiguousarray(obj).reshape(-1).view(np.uint8)
    try:
        view = memoryview(obj)
    except TypeError:
        raise DecodeError(f"{what} must be a bytes-like object, got {type(obj).__name__}") from None
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    if view.ndim != 1 or view.format != "B":
        view = view.cast("B")
    return view


def bytes_elements(values: Any) -> list[Any]:
    """The elements of a BYTES tensor, flattened row-major, as a new list.

    ``values`` is a numpy object, ``S`` or ``U`` array (``S`` elements lose trailing NULs, as
    numpy does), or a (nested) sequence; a lone bytes or str is a one-element scalar. The
    elements are not checked here; the kernels check them while they write.
    """
    elements: list[Any] = bytes_array(values).tolist()
    return elements


def bytes_array(values: Any) -> np.ndarray[Any, Any]:
    """The elements of a BYTES tensor as a 1-D C-contiguous numpy array, flattened row-major:
    an ``S`` array as it is, anything else as an object array (``U`` cells become ``str``
    without their trailing NULs, as numpy reads them). Copies only what is not already a
    contiguous object or ``S`` array. Input accepted and refused as :func:`bytes_elements`.
    """
    if isinstance(values, np.ndarray):
        array = values
    else:
        try:
            array = np.asarray(values, dtype=object)
        except ValueError as exc:
            raise EncodeError(f"BYTES elements are not a regular nested sequence: {exc}") from None
    if array.dtype.kind not in "OSU":
        raise EncodeError(
            f"BYTES elements must be bytes or str; got a numpy {array.dtype} array "
            "(convert it with .astype(bytes) or encode it as a numeric datatype)"
        )
    if array.dtype.kind == "U":
        array = array.astype(object)
    return np.ascontiguousarray(array).reshape(-1)


def element_type_error(index: int, element: object) -> EncodeError:
    return EncodeError(
        f"BYTES elements must be bytes or str, got {type(element).__name__}", index=index
    )


def element_too_long_error(index: int, length: int) -> EncodeError:
    return EncodeError(
        f"BYTES element of {length} bytes does not fit the 4-byte length prefix (max 2**32-1)",
        index=index,
    )


def utf8_error(index: int, exc: UnicodeError) -> EncodeError:
    return EncodeError(f"str element is not encodable as UTF-8 ({exc})", index=index)


def check_count(count: int | None) -> int:
    """``count`` as given to a decoder: ``None`` (any, returned as -1) or a non-negative int."""
    if count is None:
        return -1
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise DecodeError(f"count must be None or a non-negative integer, got {count!r}")
    return count
