"""Triton's Python backend on oipcodec's kernels: one :func:`install` call at the top of a model.py.

The backend's stub (the process running a model.py) turns every BYTES tensor into numpy and
back through two functions of ``triton_python_backend_utils``, looked up by name on each call:
``deserialize_bytes_tensor`` (framed buffer to object array, for inputs and ``as_numpy``) and
``serialize_byte_tensor`` (object array to framed bytes, for ``pb_utils.Tensor`` outputs), each
a per-element Python loop. :func:`install` replaces both with :func:`deserialize_bytes_tensor`
and :func:`serialize_byte_tensor` here, which give the stub exactly what the originals give
(the framed ``bytes`` themselves, not an array holding them); :func:`uninstall` restores them.

:func:`framed_to_bytes_array` and :func:`bytes_array_to_framed` are the same conversions for a
model to call on buffers of its own, with the shape checked. BF16 has no numpy form in the
stub (only DLPack): :func:`bf16_to_numpy` reads a BF16 ``pb_utils.Tensor`` and
:func:`bf16_tensor` makes one. Recipe and quirks: docs/compat.md, "Triton's Python backend".
"""

from __future__ import annotations

import ctypes
import importlib
import math
import threading
from types import ModuleType
from typing import Any

import numpy as np

from oipcodec import datatypes, kernels
from oipcodec.errors import BytesTensorError, DatatypeError, DecodeError, OIPError, ShapeError

__all__ = [
    "bf16_bits",
    "bf16_tensor",
    "bf16_to_numpy",
    "bytes_array_to_framed",
    "deserialize_bytes_tensor",
    "framed_to_bytes_array",
    "install",
    "installed",
    "serialize_byte_tensor",
    "uninstall",
]

#: The name the stub imports the backend's utilities under.
UTILS_MODULE = "triton_python_backend_utils"

_NAMES = ("serialize_byte_tensor", "deserialize_bytes_tensor")
# The originals, kept on the utilities module itself so that uninstall() finds them even when
# this module was reloaded in between.
_SAVED = "_oipcodec_originals"
# install() and uninstall() read, then change the module: one at a time, or two installs at once
# both save the first one's replacements as "the originals" and the stub's own are lost.
_lock = threading.RLock()

# Element types the kernel frames as the stock loop does (bytes as they are, str as UTF-8); a
# bytearray, numpy.bytes_ or number is framed by the stock rule, str(element) in UTF-8.
_PLAIN = frozenset((bytes, str))


def serialize_byte_tensor(input_tensor: np.ndarray[Any, Any]) -> bytes | tuple[()] | None:
    """``triton_python_backend_utils.serialize_byte_tensor``: a BYTES tensor's elements framed
    (each preceded by its 4-byte little-endian length, row-major), as the ``bytes`` the stub
    copies into the response; ``()`` for an empty tensor and ``None`` for a dtype other than
    object or ``S``, as the original returns.

    Object elements of type ``bytes`` are sent as they are, any other as ``str(element)`` in
    UTF-8; ``S`` elements lose their trailing NULs (numpy's rule for ``S``).

    Parameters
    ----------
    input_tensor
        The BYTES tensor's array.
    """
    if input_tensor.size == 0:
        return ()
    if input_tensor.dtype == np.object_:
        elements = input_tensor.ravel().tolist()
        if not set(map(type, elements)) <= _PLAIN:
            elements = [e if type(e) is bytes else str(e).encode("utf-8") for e in elements]
        try:
            return kernels.serialize_bytes(elements)
        except OIPError:
            # A str UTF-8 cannot encode: raise the UnicodeEncodeError the original raises.
            for element in elements:
                str(element).encode("utf-8")
            raise
    if input_tensor.dtype.type == np.bytes_:
        return kernels.serialize_bytes(input_tensor)
    return None


def deserialize_bytes_tensor(encoded_tensor: Any) -> np.ndarray[Any, Any]:
    """``triton_python_backend_utils.deserialize_bytes_tensor``: a framed buffer (the stub
    passes a 1-D uint8 array; any bytes-like object will do) to a 1-D object array of
    ``bytes``. A malformed buffer raises :class:`BytesTensorError`, which is also the
    ``struct.error`` the original raises.

    Parameters
    ----------
    encoded_tensor
        The framed buffer.
    """
    try:
        return kernels.deserialize_bytes(encoded_tensor)
    except DecodeError as exc:
        raise BytesTensorError(exc.reason, index=exc.index, offset=exc.offset) from None


def framed_to_bytes_array(
    buffer: Any, shape: tuple[int, ...] | list[int] | None = None
) -> np.ndarray[Any, Any]:
    """A framed BYTES buffer to an object array of ``bytes`` of ``shape`` (1-D when ``None``).
    Unlike the stub's conversion, the element count is checked while the buffer is scanned,
    before any element is built: a malformed buffer, or one holding another count of elements,
    raises :class:`BytesTensorError`; a negative dimension :class:`ShapeError`.

    Parameters
    ----------
    buffer
        The framed buffer (any bytes-like object).
    shape
        The array's shape; 1-D when ``None``.
    """
    if shape is None:
        return deserialize_bytes_tensor(buffer)
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ShapeError(f"BYTES tensor: shape {list(dims)} has a negative dimension")
    count = math.prod(dims)
    try:
        flat = kernels.deserialize_bytes(buffer, count)
    except DecodeError as exc:
        raise BytesTensorError(exc.reason, index=exc.index, offset=exc.offset) from None
    return flat.reshape(dims)


def bytes_array_to_framed(array: np.ndarray[Any, Any]) -> bytes:
    """An object or ``S`` array to its framed bytes (``b""`` when empty), the BYTES wire layout
    the stub and every Triton client use. Any other dtype raises :class:`DatatypeError`: only
    object and ``S`` arrays are BYTES tensors.

    Parameters
    ----------
    array
        An object or ``S`` array.
    """
    if array.dtype != np.object_ and array.dtype.type != np.bytes_:
        raise DatatypeError(f"a BYTES tensor must be an object or S array, not {array.dtype}")
    framed = serialize_byte_tensor(array)
    return framed if isinstance(framed, bytes) else b""


# ----------------------------------------------------------------------------- BF16 over DLPack

# The stub hands BF16 out and takes it in only as DLPack (dtype code kDLBfloat); numpy 1.x
# knows no such code. The helpers relabel the capsule between kDLBfloat and kDLUInt, same 16
# bits, before the other side reads it: a zero-copy view each way, the memory owned as DLPack
# says (the stub's tensor, or the numpy array, kept alive by the capsule's deleter).
_KDL_UINT, _KDL_BFLOAT = 1, 4
# DLManagedTensor starts with its DLTensor: void *data, DLDevice {int32, int32}, int32 ndim,
# then DLDataType {uint8 code, uint8 bits, uint16 lanes}.
_DTYPE_OFFSET = 20

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]
_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.restype = ctypes.c_int
_set_name.argtypes = [ctypes.py_object, ctypes.c_void_p]
# A capsule keeps a pointer to its name: this buffer lives as long as the module.
_USED_NAME = ctypes.create_string_buffer(b"used_dltensor")


def _relabel(capsule: Any, code_from: int, code_to: int, what: str) -> None:
    """Turns the 16-bit dtype code of an unconsumed DLPack capsule from ``code_from`` into
    ``code_to``; any other dtype raises :class:`DatatypeError` naming ``what``."""
    address = _get_pointer(capsule, b"dltensor")
    dtype = (ctypes.c_uint8 * 4).from_address(address + _DTYPE_OFFSET)
    code, bits, lanes = dtype[0], dtype[1], dtype[2] | dtype[3] << 8
    if (code, bits, lanes) != (code_from, 16, 1):
        raise DatatypeError(f"{what}: DLPack dtype (code {code}, {bits} bits, {lanes} lanes)")
    dtype[0] = code_to


class _Exported:
    """A DLPack capsule behind the protocol numpy's ``from_dlpack`` and the stub call."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, *, stream: Any = None, **_options: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU: the helpers take CPU tensors only


def bf16_bits(tensor: Any) -> np.ndarray[Any, Any]:
    """The bits of a BF16 ``pb_utils.Tensor`` (a request input in CPU memory) as a uint16
    array of its shape, without a copy: each value is the upper half of a float32.

    Parameters
    ----------
    tensor
        The ``pb_utils.Tensor``.
    """
    name = tensor.name()
    # The datatype is checked on the DLPack capsule: the stub's triton_dtype() returns an enum
    # its bindings cannot convert to Python.
    if not tensor.is_cpu():
        raise DatatypeError(f"tensor {name!r}: the BF16 helpers read CPU tensors only")
    capsule = tensor.to_dlpack()
    _relabel(capsule, _KDL_BFLOAT, _KDL_UINT, f"tensor {name!r}: expected BF16")
    bits: np.ndarray[Any, Any] = np.from_dlpack(_Exported(capsule))
    return bits


def bf16_to_numpy(tensor: Any) -> np.ndarray[Any, Any]:
    """A BF16 ``pb_utils.Tensor`` as numpy, what ``as_numpy()`` gives other datatypes: an
    ``ml_dtypes.bfloat16`` view when ml_dtypes is installed (tritonclient installs it), else
    the values widened exactly to float32 (a copy).

    Parameters
    ----------
    tensor
        The ``pb_utils.Tensor``.
    """
    bits = bf16_bits(tensor)
    if datatypes.BF16_DTYPE is not None:
        return bits.view(datatypes.BF16_DTYPE)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def bf16_tensor(name: str, array: Any) -> Any:
    """A BF16 ``pb_utils.Tensor`` named ``name`` for a response: ``array`` of
    ``ml_dtypes.bfloat16`` is sent as it is, float32 / float64 values are rounded to nearest
    even (as the codecs round). Other dtypes raise :class:`DatatypeError`.

    Parameters
    ----------
    name
        The tensor's name.
    array
        ``ml_dtypes.bfloat16``, float32 or float64 values.
    """
    data = np.asarray(array)
    if datatypes.BF16_DTYPE is not None and data.dtype == datatypes.BF16_DTYPE:
        bits = np.array(data.view(np.uint16), order="C")
    elif data.dtype in (np.float32, np.float64):
        bits = np.frombuffer(bytearray(kernels.pack_bf16(data)), dtype="<u2").reshape(data.shape)
    else:
        raise DatatypeError(
            f"tensor {name!r}: BF16 from {data.dtype}; give bfloat16, float32 or float64"
        )
    # numpy exports writable native-order arrays only: both branches made one of their own.
    capsule = bits.__dlpack__()
    _relabel(capsule, _KDL_UINT, _KDL_BFLOAT, f"tensor {name!r}")
    tensor = _utils(None).Tensor.from_dlpack(name, capsule)
    # The stub names a capsule it consumed "used_dlpack", not DLPack's "used_dltensor", and
    # numpy's capsule destructor then takes it for unconsumed and fails (in a loop, in the
    # stub's log). The stub calls the tensor's deleter itself: give the capsule the name that
    # tells numpy so.
    if _get_name(capsule) == b"used_dlpack":
        _set_name(capsule, ctypes.addressof(_USED_NAME))
    return tensor


def _utils(utils: ModuleType | None) -> ModuleType:
    return utils if utils is not None else importlib.import_module(UTILS_MODULE)


def install(utils: ModuleType | None = None) -> None:
    """Puts the kernels under the Python backend's BYTES conversions: call it at the top of a
    model.py (it runs in the stub, where ``triton_python_backend_utils`` is importable), or pass
    the utilities module. Idempotent. It holds for the whole stub process (each model instance
    has its own), since the stub looks the functions up on that one module.

    Parameters
    ----------
    utils
        The backend's utilities module; default ``triton_python_backend_utils``.
    """
    module = _utils(utils)
    with _lock:
        if installed(module):
            return
        setattr(module, _SAVED, {name: getattr(module, name) for name in _NAMES})
        module.serialize_byte_tensor = serialize_byte_tensor  # type: ignore[attr-defined]
        module.deserialize_bytes_tensor = deserialize_bytes_tensor  # type: ignore[attr-defined]


def uninstall(utils: ModuleType | None = None) -> None:
    """Restores the backend's own conversions; nothing happens when :func:`install` was not
    called.

    Parameters
    ----------
    utils
        As in :func:`install`.
    """
    module = _utils(utils)
    with _lock:
        saved = getattr(module, _SAVED, None)
        if saved is None:
            return
        for name, original in saved.items():
            setattr(module, name, original)
        delattr(module, _SAVED)


def installed(utils: ModuleType | None = None) -> bool:
    """Whether :func:`install` is in effect on the backend's utilities module.

    Parameters
    ----------
    utils
        As in :func:`install`.
    """
    return getattr(_utils(utils), _SAVED, None) is not None
