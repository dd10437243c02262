"""Triton's Python backend on oipcodec's kernels: one :func:`install` call at the top of a model.py.

The backend's stub (the process running a model.py) turns every BYTES tensor into numpy and
back through two functions of ``triton_python_backend_utils``, looked up by name on each call:
``deserialize_bytes_tensor`` (framed buffer to object array, for inputs and ``as_numpy``) and
``serialize_byte_tensor`` (object array to framed bytes, for ``pb_utils.Tensor`` outputs), each
a per-element Python loop. :func:`install` replaces both with :func:`deserialize_bytes_tensor`
and :func:`serialize_byte_tensor` here, which give the stub exactly what the originals give
(the framed ``bytes`` themselves, not an array holding them); :func:`uninstall` restores them.

:func:`framed_to_bytes_array` and :func:`bytes_array_to_framed` are the same conversions for a
model to call on buffers of its own, with the shape checked. Recipe and the stub's quirks:
docs/compat.md, "Triton's Python backend".
"""

from __future__ import annotations

import importlib
import math
from types import ModuleType
from typing import Any

import numpy as np

from oipcodec import kernels
from oipcodec.errors import BytesTensorError, DatatypeError, DecodeError, OIPError, ShapeError

__all__ = [
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
    ``struct.error`` the original raises."""
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
    raises :class:`BytesTensorError`; a negative dimension :class:`ShapeError`."""
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
    object and ``S`` arrays are BYTES tensors."""
    if array.dtype != np.object_ and array.dtype.type != np.bytes_:
        raise DatatypeError(f"a BYTES tensor must be an object or S array, not {array.dtype}")
    framed = serialize_byte_tensor(array)
    return framed if isinstance(framed, bytes) else b""


def _utils(utils: ModuleType | None) -> ModuleType:
    return utils if utils is not None else importlib.import_module(UTILS_MODULE)


def install(utils: ModuleType | None = None) -> None:
    """Puts the kernels under the Python backend's BYTES conversions: call it at the top of a
    model.py (it runs in the stub, where ``triton_python_backend_utils`` is importable), or pass
    the utilities module. Idempotent. It holds for the whole stub process (each model instance
    has its own), since the stub looks the functions up on that one module."""
    module = _utils(utils)
    if installed(module):
        return
    setattr(module, _SAVED, {name: getattr(module, name) for name in _NAMES})
    module.serialize_byte_tensor = serialize_byte_tensor  # type: ignore[attr-defined]
    module.deserialize_bytes_tensor = deserialize_bytes_tensor  # type: ignore[attr-defined]


def uninstall(utils: ModuleType | None = None) -> None:
    """Restores the backend's own conversions; nothing happens when :func:`install` was not
    called."""
    module = _utils(utils)
    saved = getattr(module, _SAVED, None)
    if saved is None:
        return
    for name, original in saved.items():
        setattr(module, name, original)
    delattr(module, _SAVED)


def installed(utils: ModuleType | None = None) -> bool:
    """Whether :func:`install` is in effect on the backend's utilities module."""
    return getattr(_utils(utils), _SAVED, None) is not None
