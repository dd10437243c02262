"""What the layout kernels (flatten, unflatten, little_endian_view) share between the twins.

``oipcodec._native.layout`` and ``oipcodec._pure.layout`` walk nested data differently (one in
C, one in Python), but everything that decides *what* is accepted and *what an error says* lives
here, written once: the per-datatype element rules, the shape inference, the conversion of numpy
arrays met inside the nesting, the float narrowing, the error messages, and the functions that
have no per-element work at all (:func:`little_endian_view`, :func:`unflatten_reference`). The
first problem in row-major order is the one reported, by both twins; the error classes of
flatten: docs/kernels.md#the-twins-shared-rules-in-full ("layout").
"""

from __future__ import annotations

import math
import operator
import sys
from typing import Any, SupportsFloat, cast

import numpy as np

from oipcodec import datatypes
from oipcodec.datatypes import BF16_DTYPE
from oipcodec.errors import DatatypeError, EncodeError, LimitError, ShapeError
from oipcodec.limits import Limits, element_count

__all__ = [
    "BF16",
    "BOOL",
    "BYTES",
    "FP16",
    "FP32",
    "FP64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "INT_BOUNDS",
    "Rejected",
    "array_mismatch",
    "array_path",
    "convert_array",
    "datatype_code",
    "element_error",
    "finish",
    "floats_to_raw",
    "infer_shape",
    "int_to_double_odd",
    "little_endian_view",
    "raw_dtype",
    "range_reason",
    "scalar_value",
    "shape_mismatch",
    "type_reason",
    "unflatten_reference",
    "unflatten_shape",
    "utf8_reason",
]

# Datatype codes, in the order of the protocol's table (oipcodec.datatypes.DATATYPES); the
# native kernel takes them as C constants (C_CONSTANTS, written to _native/layout.pxd).
(BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BF16, BYTES) = (
    range(14)
)
C_CONSTANTS = (
    "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
    "FP16", "FP32", "FP64", "BF16", "BYTES",
)  # fmt: skip
_NAMES: tuple[str, ...] = tuple(datatypes.DATATYPES)
if _NAMES.index("BF16") != BF16 or _NAMES.index("BYTES") != BYTES:  # pragma: no cover
    raise ImportError("oipcodec._shared.layout is out of step with oipcodec.datatypes")

#: Inclusive value range of each integer datatype.
INT_BOUNDS: dict[int, tuple[int, int]] = {
    code: (int(np.iinfo(datatypes.DATATYPES[_NAMES[code]].numpy_dtype).min),
           int(np.iinfo(datatypes.DATATYPES[_NAMES[code]].numpy_dtype).max))
    for code in (UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64)
}  # fmt: skip

# Smallest magnitude that rounds to infinity (round to nearest even: the halfway point between
# the largest finite value, whose significand is odd, and the next power of two).
_OVERFLOW: dict[int, float] = {FP16: 65520.0, FP32: 2.0**128 - 2.0**103, BF16: 2.0**128 - 2.0**119}

_WHAT = {BOOL: "a bool", BYTES: "bytes or str"}
_FLOAT_CODES = (FP16, FP32, FP64, BF16)
# numpy dtype kinds converted as whole arrays, per target; O/S/U arrays are walked instead.
_ARRAY_KINDS = {BOOL: "b", BYTES: ""}
_FLOAT_SCALARS: tuple[type, ...] = (float, np.floating)
if BF16_DTYPE is not None:
    _FLOAT_SCALARS += (BF16_DTYPE.type,)


def datatype_code(datatype: str) -> int:
    """The code of an OIP datatype name; an unknown name raises :class:`DatatypeError`."""
    datatypes.get(datatype)
    return _NAMES.index(datatype)


def raw_dtype(code: int) -> np.dtype[Any]:
    """The dtype the kernels fill: the datatype's numpy dtype, except BF16 as uint16 bits."""
    if code == BF16:
        return np.dtype(np.uint16)
    dtype = datatypes.DATATYPES[_NAMES[code]].numpy_dtype
    assert dtype is not None
    return dtype


def finish(code: int, raw: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The flat array flatten returns, from the raw one the kernels filled.

    BF16 bits become an ``ml_dtypes.bfloat16`` array (a view) when ml_dtypes is installed,
    else float32 holding the BF16 values exactly.
    """
    if code != BF16:
        return raw
    if BF16_DTYPE is not None:
        return raw.view(BF16_DTYPE)
    return (raw.astype(np.uint32) << 16).view(np.float32)


# --- messages -----------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A short text for a value in a message (numpy scalars as their str, others as repr)."""
    if isinstance(value, int) and value.bit_length() > 128:
        return f"<{value.bit_length()}-bit integer>"
    try:
        text = str(value) if isinstance(value, np.generic) else repr(value)
    except Exception:  # an exotic object whose repr fails still gets a message
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 40 else text[:37] + "..."


def _describe(obj: Any) -> str:
    if isinstance(obj, list):
        return f"a list of {len(obj)}"
    if isinstance(obj, tuple):
        return f"a tuple of {len(obj)}"
    if isinstance(obj, np.ndarray):
        return f"an array of shape {obj.shape}"
    return f"{type(obj).__name__} {_show(obj)}"


def _where(path: tuple[int, ...]) -> str:
    return "".join(f"[{i}]" for i in path) + ": " if path else ""


def shape_mismatch(path: tuple[int, ...], sub_shape: tuple[int, ...], obj: Any) -> ShapeError:
    """The nesting at ``path`` should have shape ``sub_shape`` (``()``: a scalar) but is ``obj``."""
    if isinstance(obj, np.ndarray) and sub_shape:
        expected = f"shape {sub_shape}"
    elif sub_shape:
        n = sub_shape[0]
        expected = f"a list of {n} element{'' if n == 1 else 's'}"
    else:
        expected = "a scalar"
    return ShapeError(f"{_where(path)}expected {expected}, got {_describe(obj)}")


def array_mismatch(path: tuple[int, ...], sub_shape: tuple[int, ...], arr: Any) -> ShapeError:
    return shape_mismatch(path, sub_shape, arr)


def element_error(index: int, path: tuple[int, ...], reason: str) -> EncodeError:
    """Element ``index`` (flat, row-major), at ``path``, cannot be written: ``reason``."""
    return EncodeError(f"{_where(path)}{reason}", index=index)


def type_reason(code: int, obj: Any) -> str:
    if code in _WHAT:
        what = _WHAT[code]
    elif code in _FLOAT_CODES:
        what = "a number (int or float)"
    else:
        what = "an integer"
    return f"expected {what} for {_NAMES[code]}, got {type(obj).__name__} {_show(obj)}"


def range_reason(code: int, value: int | float) -> str:
    """``value`` (a Python int or float) does not fit datatype ``code``."""
    if code in INT_BOUNDS:
        low, high = INT_BOUNDS[code]
        return f"{_show(value)} is out of range for {_NAMES[code]} [{low}, {high}]"
    return f"{_show(value)} is out of range for {_NAMES[code]} (it rounds to infinity)"


def utf8_reason(exc: UnicodeError) -> str:
    return f"str is not encodable as UTF-8 ({exc})"


class Rejected(Exception):
    """Raised by :func:`scalar_value`; the caller adds the element's index and path."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- scalars ------------------------------------------------------------------------------


def int_to_double_odd(value: int) -> float:
    """``value`` as a float64 rounded to odd: truncated, the last bit set if anything was cut.

    A float64 rounded to odd keeps enough information for one more round-to-nearest-even to a
    type with at least 2 fewer significand bits (FP32, FP16, BF16) to be the correctly rounded
    result of the exact integer; rounding to nearest twice would not be. Raises
    :class:`OverflowError` beyond the float64 range.
    """
    magnitude = abs(value)
    bits = magnitude.bit_length()
    if bits <= 53:
        return float(value)
    shift = bits - 53
    mantissa = magnitude >> shift
    if magnitude & ((1 << shift) - 1):
        mantissa |= 1
    result = math.ldexp(mantissa, shift)  # exact: 53 bits; OverflowError past float64
    return -result if value < 0 else result


def scalar_value(code: int, obj: Any) -> Any:
    """One scalar element checked against datatype ``code``, as the Python value to store.

    Integers (``int``, numpy integers; never ``bool``) are range-checked and returned as ``int``.
    BOOL takes ``bool`` and ``numpy.bool_`` only. Floats take ints and floats (numpy ones
    included; not bool) and return a float64: exact for FP64 (Python's float(), nearest even),
    rounded to odd for the narrower types so that their final rounding is correct; a finite
    value that rounds to infinity is refused. BYTES takes bytes, bytearray, memoryview and str
    (UTF-8 encoded) and returns bytes. Anything else raises :class:`Rejected`.
    """
    if code == BYTES:
        if isinstance(obj, str):
            try:
                return obj.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise Rejected(utf8_reason(exc)) from None
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return bytes(obj)
        raise Rejected(type_reason(code, obj))
    if code == BOOL:
        if isinstance(obj, (bool, np.bool_)):
            return bool(obj)
        raise Rejected(type_reason(code, obj))
    if isinstance(obj, bool) or not isinstance(obj, (int, np.integer, *_FLOAT_SCALARS)):
        raise Rejected(type_reason(code, obj))
    if code in INT_BOUNDS:
        if not isinstance(obj, (int, np.integer)):
            raise Rejected(type_reason(code, obj))
        value = operator.index(obj)
        low, high = INT_BOUNDS[code]
        if not low <= value <= high:
            raise Rejected(range_reason(code, value))
        return value
    if isinstance(obj, (int, np.integer)):
        number = operator.index(obj)
        try:
            result = float(number) if code == FP64 else int_to_double_odd(number)
        except OverflowError:
            raise Rejected(range_reason(code, number)) from None
        if code != FP64 and abs(result) >= _OVERFLOW[code]:
            raise Rejected(range_reason(code, number))
        return result
    result = float(cast(SupportsFloat, obj))  # a float, numpy floating or bfloat16
    if code != FP64 and _OVERFLOW[code] <= abs(result) < math.inf:
        raise Rejected(range_reason(code, result))
    return result


# --- floats -------------------------------------------------------------------------------


def _bf16_from_f32_bits(bits: np.ndarray[Any, Any], nan: np.ndarray[Any, Any]) -> Any:
    """BF16 bits from float32 bits: round to nearest even; NaN -> 0x7FC0 with the sign
    (ml_dtypes' rule, and csrc/oipcodec/common/half.h's)."""
    bits = bits.astype(np.uint32)
    out = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    if nan.any():
        out[nan] = ((bits[nan] >> 16) & np.uint32(0x8000)).astype(np.uint16) | np.uint16(0x7FC0)
    return out


def _bf16_from_f64(values: np.ndarray[Any, Any]) -> Any:
    """BF16 bits from float64, rounded to nearest even once from the float64 value.

    The float64 is first rounded to float32 *to odd* (truncated toward zero, the last bit set
    when inexact), which makes the final round-to-nearest-even correct; the plain double
    rounding of ml_dtypes' float64 cast is not (it turns 1 + 2**-8 + 2**-30 into 1.0).
    """
    with np.errstate(all="ignore"):
        narrow = values.astype(np.float32)
        too_far = np.abs(narrow.astype(np.float64)) > np.abs(values)
        if too_far.any():
            narrow[too_far] = np.nextafter(narrow[too_far], np.float32(0))
        inexact = narrow.astype(np.float64) != values
    bits = narrow.view(np.uint32) | inexact.astype(np.uint32)
    return _bf16_from_f32_bits(bits, np.isnan(values))


def floats_to_raw(code: int, values: np.ndarray[Any, Any]) -> Any:
    """float64 ``values`` (exact, or rounded to odd for ints) to the raw array of ``code``."""
    if code == FP64:
        return values
    if code == BF16:
        return _bf16_from_f64(values)
    with np.errstate(all="ignore"):
        return values.astype(np.float16 if code == FP16 else np.float32)


def _ints_to_f64_odd(flat: np.ndarray[Any, Any]) -> Any:
    values = flat.astype(np.float64)
    if flat.dtype.itemsize == 8:  # only 64-bit integers can exceed float64's 53 bits
        for i in np.flatnonzero(np.abs(values) > 2.0**53):
            values[i] = int_to_double_odd(int(flat[i]))
    return values


def _float_array(code: int, flat: np.ndarray[Any, Any], kind: str) -> Any:
    with np.errstate(all="ignore"):
        if code == FP64:
            return flat.astype(np.float64, copy=False)
        if code == FP32:
            return flat.astype(np.float32, copy=False)  # numpy rounds ints to float32 directly
        if code == FP16:
            return (flat.astype(np.float64) if kind in "iu" else flat).astype(np.float16)
        if kind in "iu":
            return _bf16_from_f64(_ints_to_f64_odd(flat))
        if flat.dtype.itemsize <= 4:  # float16/float32: exact in float32, one rounding
            narrow = flat.astype(np.float32, copy=False)
            return _bf16_from_f32_bits(narrow.view(np.uint32), np.isnan(narrow))
        return _bf16_from_f64(flat.astype(np.float64, copy=False))


def _is_inf(code: int, raw: np.ndarray[Any, Any]) -> Any:
    if code == BF16:
        return (raw & np.uint16(0x7FFF)) == np.uint16(0x7F80)
    return np.isinf(raw)


def array_path(path: tuple[int, ...], shape: tuple[int, ...], i: int) -> tuple[int, ...]:
    """The index path of element ``i`` (flat, row-major) of an array of ``shape`` at ``path``."""
    return path + tuple(int(j) for j in np.unravel_index(i, shape))


def convert_array(arr: np.ndarray[Any, Any], code: int, index: int, path: tuple[int, ...]) -> Any:
    """A numeric numpy array met in the nesting, as a flat C-contiguous raw array of ``code``.

    ``index`` and ``path`` locate the array's first element (for messages). Integer datatypes
    take integer arrays, range-checked; BOOL takes bool arrays; float datatypes take integer
    and float arrays (and ml_dtypes.bfloat16), rounded to nearest even, a finite value that
    rounds to infinity refused. Any other dtype is refused at its first element. An array
    already of the raw dtype, native order and contiguous is returned as a view, not copied.
    """
    flat = arr.reshape(-1)
    kind = flat.dtype.kind
    if BF16_DTYPE is not None and flat.dtype == BF16_DTYPE:
        flat, kind = flat.astype(np.float32), "f"  # exact
    accepted = _ARRAY_KINDS.get(code, "iuf" if code in _FLOAT_CODES else "iu")
    if kind not in accepted:
        if flat.size == 0:
            return np.empty(0, raw_dtype(code))
        first = arr.reshape(-1)[0]
        raise element_error(index, array_path(path, arr.shape, 0), type_reason(code, first))
    if code in INT_BOUNDS:
        low, high = INT_BOUNDS[code]
        info = np.iinfo(flat.dtype)
        bad = None
        if low > info.min:
            bad = flat < low
        if high < info.max:
            bad = flat > high if bad is None else bad | (flat > high)
        if bad is not None and bad.any():
            i = int(np.argmax(bad))
            where = array_path(path, arr.shape, i)
            raise element_error(index + i, where, range_reason(code, int(flat[i])))
        out = flat.astype(raw_dtype(code), copy=False)
    elif code == BOOL:
        out = flat.astype(np.bool_, copy=False)
    else:
        out = _float_array(code, flat, kind)
        overflow = _is_inf(code, out)
        if kind == "f":  # infinity in, infinity out is no overflow
            overflow &= np.isfinite(flat)
        if overflow.any():
            i = int(np.argmax(overflow))
            value = int(flat[i]) if kind in "iu" else float(flat[i])
            raise element_error(
                index + i, array_path(path, arr.shape, i), range_reason(code, value)
            )
    return np.ascontiguousarray(out)


# --- shapes -------------------------------------------------------------------------------


def infer_shape(nested: Any, limits: Limits) -> tuple[int, ...]:
    """The shape of ``nested``, read from its first path (the first element of every level).

    Lists and tuples are levels; a numpy array contributes its whole shape; anything else is a
    scalar. The rest of the nesting is checked against this shape while it is walked. Nesting
    deeper than ``limits.max_depth`` raises :class:`LimitError` (also the guard against a list
    that contains itself), and so do a shape of more than 64 dimensions or more elements than
    ``limits.max_tensor_elements``.
    """
    shape: list[int] = []
    node = nested
    while True:
        # The storage of list and tuple subclasses is read directly, as the walk reads it.
        base = list if isinstance(node, list) else tuple if isinstance(node, tuple) else None
        if base is not None:
            shape.append(base.__len__(node))
        elif isinstance(node, np.ndarray):
            shape.extend(node.shape)
        if len(shape) > limits.max_depth:
            raise LimitError(f"data is nested more than {limits.max_depth} levels deep")
        if base is None or not shape[-1]:
            break
        node = base.__getitem__(node, 0)
    result = tuple(shape)
    element_count(result, limits)
    return result


_ANY_COUNT = Limits(max_tensor_elements=2**63 - 1)


def unflatten_shape(array: Any, shape: Any) -> tuple[np.ndarray[Any, Any], tuple[int, ...]]:
    """``array`` as an ndarray and ``shape`` as a tuple, after checking they agree."""
    arr = array if isinstance(array, np.ndarray) else np.asarray(array)
    try:
        given = tuple(shape)
    except TypeError:
        raise ShapeError(f"shape must be a sequence of integers, got {_describe(shape)}") from None
    # The array exists already: only its own size bounds the count.
    count = element_count(given, _ANY_COUNT)
    dims = tuple(operator.index(d) for d in given)
    if count != arr.size:
        raise ShapeError(f"shape {list(dims)} holds {count} elements, the array has {arr.size}")
    return arr, dims


def unflatten_reference(array: Any, shape: Any) -> Any:
    """Nested lists of Python scalars (a bare scalar for shape ``[]``), numpy's tolist()."""
    arr, dims = unflatten_shape(array, shape)
    if BF16_DTYPE is not None and arr.dtype == BF16_DTYPE:
        arr = arr.astype(np.float32)  # exact; ml_dtypes' tolist() would give bfloat16 objects
    return arr.reshape(dims).tolist()


# --- wire bytes ---------------------------------------------------------------------------

_LITTLE = ("<", "|", "=") if sys.byteorder == "little" else ("<", "|")
_FIXED: frozenset[np.dtype[Any]] = frozenset(
    dt
    for row in datatypes.DATATYPES.values()
    if row.numpy_dtype is not None and not row.is_bytes
    for dt in (
        row.numpy_dtype,
        row.numpy_dtype.newbyteorder("<"),
        row.numpy_dtype.newbyteorder(">"),
    )
)


def little_endian_view(array: Any) -> memoryview:
    """A read-only, C-contiguous, little-endian byte view of a numpy array's elements.

    The binary tensor data extension and gRPC raw contents carry a tensor as "little-endian,
    row-major, native element size". An array already C-contiguous and little-endian (numpy's
    default on x86 and ARM) is viewed without copying; one in Fortran order, with negative or
    other strides, or in big-endian byte order is copied once, swapped and laid out in the same
    pass. The view is one-dimensional, format ``"B"``, ``nbytes`` long, and keeps the array
    alive. BOOL is one byte per element.

    Parameters
    ----------
    array
        A numpy array whose dtype carries a fixed-size OIP datatype.

    Raises
    ------
    DatatypeError
        BYTES' object/S/U arrays, complex, and any other dtype without a fixed-size OIP
        datatype.
    """
    if not isinstance(array, np.ndarray):
        raise DatatypeError(f"expected a numpy array, got {type(array).__name__}")
    dtype = array.dtype
    if dtype not in _FIXED:
        if dtype.kind in "OSU":
            raise DatatypeError(
                f"a numpy {dtype} array (BYTES) has no fixed-size layout: "
                "frame its elements with serialize_bytes"
            )
        datatypes.from_numpy(dtype)  # raises DatatypeError naming the supported dtypes
        raise DatatypeError(f"numpy dtype {dtype} has no fixed-size OIP layout")
    if dtype.kind == "V":  # ml_dtypes.bfloat16 exports no buffer format memoryview can take
        array = array.view(np.uint16)
    if dtype.byteorder in _LITTLE:
        # The common case, kept to a handful of attribute reads: no copy at all.
        view = memoryview(array)
        if view.c_contiguous and view.nbytes:
            return (view if view.readonly else view.toreadonly()).cast("B")
    if array.size == 0:  # memoryview refuses to cast a shape with a zero in it
        return memoryview(b"")
    copy = array.astype(array.dtype.newbyteorder("<"), order="C")  # swap and lay out at once
    return memoryview(copy).toreadonly().cast("B")


def check_buffer_size(size: int) -> None:
    """uninitialized_bytearray's argument: a size in bytes, not negative."""
    if size < 0:
        raise ValueError(f"a buffer size cannot be negative, got {size}")


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "flatten": """Nested lists/tuples of scalars (numpy arrays at any level) to a flat typed array.

    Element rules (Triton's strictness for JSON data, applied to Python values): integer
    datatypes take ``int`` and numpy integers, range-checked (INT8 300 is an error, never a
    wrap; ``bool`` and floats, even 1.0, are refused); BOOL takes ``bool`` and ``numpy.bool_``;
    FP16/FP32/FP64/BF16 take ints and floats (not bool), rounded to nearest even once from the
    exact value, a finite value that rounds to infinity refused (NaN and +-inf are kept); BYTES
    takes bytes, bytearray, memoryview and str (UTF-8) into an object array of bytes. BF16 gives
    ``ml_dtypes.bfloat16`` when installed, else float32 holding the BF16-rounded values. A numpy
    array input of the datatype's dtype (native order, contiguous) is returned as a view, not
    copied.

    Parameters
    ----------
    nested
        The elements: a scalar, or nested lists/tuples (numpy arrays allowed at any level).
    datatype
        The OIP datatype of the result.
    limits
        Depth, dimensions and element count, checked before allocating.

    Returns
    -------
    tuple
        ``(flat, shape)``: ``flat`` is a 1-D C-contiguous array of the datatype's numpy dtype,
        in row-major order ("data: row-major, no stride or padding"), and ``shape`` the tuple of
        dimensions, read from the first element of every level and required of every other
        path. A scalar has shape ``()`` and one element; ``[]`` has shape ``(0,)``.

    Raises
    ------
    ShapeError
        Ragged nesting, naming the index path of the first mismatch.
    EncodeError
        An element that does not fit (flat index and path).
    LimitError
        Past ``limits``.
    DatatypeError
        An unknown datatype.
    """,
    "unflatten": """A flat (or any-shaped) array back to nested lists of Python scalars, row-major.

    Elements come back as ``int``, ``float``, ``bool`` or the object array's own objects
    (``bytes`` for BYTES); BF16 (``ml_dtypes.bfloat16``) as ``float``. The inverse of
    :func:`flatten`.

    Parameters
    ----------
    array
        The elements.
    shape
        Must describe exactly ``array.size`` elements (else :class:`ShapeError`). Shape ``()``
        gives a bare scalar; a zero in the shape gives empty lists.
    """,
    "uninitialized_bytearray": """A bytearray of ``size`` bytes for the caller to fill completely
    before anything reads it. The native kernel leaves the bytes as the allocator gave them,
    without the zeroing pass ``bytearray(size)`` makes; the pure twin's are zeros.""",
}
