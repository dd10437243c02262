"""The OIP datatype table and the mappings between OIP names and numpy dtypes.

Datatype names are case-sensitive, as in the protocol. The wire layout of every fixed-size type
is little-endian with the item size given here; BOOL is one byte; BF16 is the upper half of an
IEEE float32 (rounded to nearest even); BYTES elements are each framed by a 4-byte little-endian
length (see :func:`oipcodec.kernels.serialize_bytes`).

BF16 has no numpy type of its own. When the ``ml_dtypes`` package is installed (the ecosystem's
choice: tritonclient and JAX use it) its ``bfloat16`` is BF16's numpy dtype; without it
:attr:`Datatype.numpy_dtype` is ``None`` for BF16, and decoders return BF16 data as float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec.errors import DatatypeError, EncodeError

__all__ = [
    "fit_datatype",
    "BF16_DTYPE",
    "DATATYPES",
    "Datatype",
    "datatype_of",
    "from_numpy",
    "get",
    "to_numpy",
]

try:  # optional: the numpy dtype of BF16
    import ml_dtypes

    BF16_DTYPE: np.dtype[Any] | None = np.dtype(ml_dtypes.bfloat16)
    """``ml_dtypes.bfloat16`` as a numpy dtype, or ``None`` when ml_dtypes is not installed."""
except ImportError:  # pragma: no cover - depends on the environment
    BF16_DTYPE = None


# What holds BF16 values when ml_dtypes is not installed.
_BF16_FALLBACK = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True, slots=True)
class Datatype:
    """One row of the OIP datatype table."""

    name: str
    """The OIP name, e.g. ``"FP32"``."""
    itemsize: int
    """Bytes per element on the wire; 0 for BYTES (variable, length-prefixed)."""
    numpy_dtype: np.dtype[Any] | None
    """The numpy dtype holding decoded data (native byte order); ``None`` for BF16 when ml_dtypes
    is not installed.
    """
    contents_field: str | None
    """The ``InferTensorContents`` field carrying this type in gRPC typed contents; ``None`` for
    FP16 and BF16, which the protocol only allows in raw contents.
    """

    @property
    def is_bytes(self) -> bool:
        return self.name == "BYTES"

    @property
    def is_float(self) -> bool:
        return self.name in ("FP16", "BF16", "FP32", "FP64")

    @property
    def is_integer(self) -> bool:
        return self.name.startswith(("INT", "UINT"))

    def carries(self, dtype: np.dtype[Any]) -> bool:
        """Whether an array of ``dtype`` holds this datatype's elements as they are.

        BYTES in an object, ``S`` or ``U`` array; BF16 in ``ml_dtypes.bfloat16`` or, without
        ml_dtypes, float32/float64; any other the datatype's own numpy dtype.

        Parameters
        ----------
        dtype
            A numpy dtype, in any byte order.
        """
        if dtype is self.numpy_dtype:  # the common case, before the byte-order work
            return True
        if self.is_bytes:
            return dtype.kind in "OSU"
        native = dtype.newbyteorder("=")
        if self.name == "BF16":
            return native == self.numpy_dtype or native in _BF16_FALLBACK
        return native == self.numpy_dtype


def _row(name: str, itemsize: int, dtype: Any, field: str | None) -> Datatype:
    return Datatype(name, itemsize, None if dtype is None else np.dtype(dtype), field)


#: Every OIP datatype by name, in the order of the protocol's table.
DATATYPES: dict[str, Datatype] = {
    row.name: row
    for row in (
        _row("BOOL", 1, np.bool_, "bool_contents"),
        _row("UINT8", 1, np.uint8, "uint_contents"),
        _row("UINT16", 2, np.uint16, "uint_contents"),
        _row("UINT32", 4, np.uint32, "uint_contents"),
        _row("UINT64", 8, np.uint64, "uint64_contents"),
        _row("INT8", 1, np.int8, "int_contents"),
        _row("INT16", 2, np.int16, "int_contents"),
        _row("INT32", 4, np.int32, "int_contents"),
        _row("INT64", 8, np.int64, "int64_contents"),
        _row("FP16", 2, np.float16, None),
        _row("FP32", 4, np.float32, "fp32_contents"),
        _row("FP64", 8, np.float64, "fp64_contents"),
        _row("BF16", 2, BF16_DTYPE, None),
        _row("BYTES", 0, np.object_, "bytes_contents"),
    )
}

_BY_DTYPE: dict[np.dtype[Any], str] = {
    row.numpy_dtype: row.name for row in DATATYPES.values() if row.numpy_dtype is not None
}


def get(name: str) -> Datatype:
    """The table row of an OIP datatype name.

    Parameters
    ----------
    name
        The OIP name, e.g. ``"FP32"``.

    Raises
    ------
    DatatypeError
        An unknown name, listing the valid ones.
    """
    try:
        return DATATYPES[name]
    except (KeyError, TypeError):
        raise DatatypeError(
            f"unknown datatype {name!r}; expected one of {', '.join(DATATYPES)}"
        ) from None


def from_numpy(dtype: Any) -> str:
    """The OIP datatype name for a numpy dtype.

    Byte order is ignored (``>f4`` is FP32); numpy ``S``, ``U`` and ``object`` dtypes map to
    BYTES; ``ml_dtypes.bfloat16`` maps to BF16.

    Parameters
    ----------
    dtype
        A numpy dtype, or anything ``np.dtype()`` accepts.

    Raises
    ------
    DatatypeError
        A dtype no OIP datatype carries.
    """
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DatatypeError(f"not a numpy dtype: {dtype!r}") from None
    if dt.kind in "SUO":
        return "BYTES"
    name = _BY_DTYPE.get(dt) or _BY_DTYPE.get(dt.newbyteorder("="))
    if name is None:
        supported = ", ".join(str(d) for d in _BY_DTYPE) + ", S, U"
        raise DatatypeError(f"numpy dtype {dt} has no OIP datatype; supported dtypes: {supported}")
    return name


def to_numpy(name: str) -> np.dtype[Any]:
    """The numpy dtype that holds decoded data of OIP datatype ``name``.

    Parameters
    ----------
    name
        The OIP name, e.g. ``"FP32"``.

    Raises
    ------
    DatatypeError
        BF16 without ml_dtypes installed, saying how to get it.
    """
    row = get(name)
    if row.numpy_dtype is None:
        raise DatatypeError(
            "BF16 has no numpy dtype without ml_dtypes: pip install 'oipcodec[bf16]'"
        )
    return row.numpy_dtype


def datatype_of(array: np.ndarray[Any, Any]) -> str:
    """The OIP datatype name for a numpy array's dtype (shorthand for ``from_numpy(a.dtype)``).

    Parameters
    ----------
    array
        The array.
    """
    # An array of a row's own dtype (nearly every output) is one lookup.
    return _BY_DTYPE.get(array.dtype) or from_numpy(array.dtype)


def fit_datatype(value: Any, datatype: str) -> np.ndarray[Any, Any]:
    """A value as an array holding an OIP datatype: as it is when its dtype already carries
    the datatype, else converted when every value fits exactly:

    - integer datatypes and BOOL: every value is integral and in the datatype's range (a
      float ``2.0`` fits INT32; ``2.5``, ``nan`` and ``300`` for INT8 do not; BOOL holds
      ``False``/``True``, ``0``/``1``);
    - floating-point datatypes (FP16, BF16, FP32, FP64): an integer must be exactly
      representable (``2**24 + 1`` is not in FP32); a float is rounded to the nearest value of
      the datatype, as ``numpy.astype`` does (``0.1`` answers as FP32's nearest to 0.1), but
      a finite value must stay finite (``70000.0`` overflows FP16);
    - BYTES: ``bytes`` or ``str`` values (a list of them, or a ``numpy`` ``S``/``U``/object
      array), as any BYTES output.

    Parameters
    ----------
    value
        An array, a list, a Python scalar: anything ``numpy.asarray`` takes.
    datatype
        The OIP datatype (``"FP32"``).

    Raises
    ------
    EncodeError
        For anything else, naming the value's type, the datatype and the first element that
        does not fit.
    """
    row = get(datatype)
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if row.carries(array.dtype):
        return array
    if isinstance(value, np.ndarray):
        what = f"a {array.dtype} array"
    else:
        what = f"a {type(value).__name__}" + (
            f" (numpy makes it {array.dtype})" if not np.isscalar(value) else ""
        )
    if row.is_bytes or array.dtype.kind not in "biuf" or row.numpy_dtype is None:
        raise EncodeError(f"{what} cannot hold datatype {datatype}")
    source = array.dtype
    with np.errstate(all="ignore"):
        converted = array.astype(row.numpy_dtype)
        if row.is_float and source.kind == "f":
            # rounded to the datatype's precision: only a finite value turned infinite is lost
            wrong = np.isfinite(array) & ~np.isfinite(converted.astype(np.float64))
            rule = "a finite value must stay finite"
        else:
            wrong = converted.astype(source) != array
            rule = (
                "integers must be exactly representable"
                if row.is_float
                else "values must be integral and in its range"
            )
    if wrong.any():
        index = int(np.flatnonzero(wrong)[0])
        element = array.reshape(-1)[index].item()
        raise EncodeError(
            f"{what} does not fit datatype {datatype} exactly: element {index} is {element!r} "
            f"({rule})"
        )
    return converted
