"""Row-major layout (flatten, unflatten, little_endian_view), twin of ``oipcodec._native.layout``.

The protocol's tensor data is "row-major, no stride or padding": a nested list ``[[1, 2], [4, 5]]``
of shape ``[2, 2]`` is the flat buffer ``1, 2, 4, 5``; binary data is little-endian with the
datatype's element size. The rules (what each datatype accepts, the error classes and messages)
live in :mod:`oipcodec._shared.layout`, shared with the native kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.layout import (
    BOOL,
    BYTES,
    CONTRACTS,
    INT_BOUNDS,
    Rejected,
    array_mismatch,
    array_path,
    check_buffer_size,
    convert_array,
    datatype_code,
    element_error,
    finish,
    floats_to_raw,
    infer_shape,
    little_endian_view,
    raw_dtype,
    scalar_value,
    shape_mismatch,
    unflatten_reference,
)
from oipcodec.limits import DEFAULT_LIMITS, Limits

__all__ = ["flatten", "little_endian_view", "unflatten", "uninitialized_bytearray"]


class _Walk:
    """Depth-first walk in row-major order: the first problem met is the one reported."""

    def __init__(self, code: int, shape: tuple[int, ...]) -> None:
        self.code = code
        self.shape = shape
        self.ndim = len(shape)
        self.path: list[int] = []
        self.index = 0  # flat index of the next element
        self.values: list[Any] = []  # scalars not yet turned into a raw array
        self.parts: list[np.ndarray[Any, Any]] = []

    def node(self, obj: Any, depth: int) -> None:
        if isinstance(obj, np.ndarray):
            self.array(obj, depth)
        elif depth == self.ndim:
            if isinstance(obj, (list, tuple)):
                raise shape_mismatch(tuple(self.path), (), obj)
            self.scalar(obj, None)
        elif not isinstance(obj, (list, tuple)):
            raise shape_mismatch(tuple(self.path), self.shape[depth:], obj)
        else:
            # The storage is read as the native kernel reads it (subclasses' __len__ and
            # __getitem__ are not consulted), and a list shortened under the walk by Python code
            # an element ran is refused, not half-read.
            size: Any = list.__len__ if isinstance(obj, list) else tuple.__len__
            item: Any = list.__getitem__ if isinstance(obj, list) else tuple.__getitem__
            n = self.shape[depth]
            if size(obj) != n:
                raise shape_mismatch(tuple(self.path), self.shape[depth:], obj)
            for i in range(n):
                if i >= size(obj):
                    raise shape_mismatch(tuple(self.path), self.shape[depth:], obj)
                self.path.append(i)
                self.node(item(obj, i), depth + 1)
                self.path.pop()

    def scalar(self, obj: Any, path: tuple[int, ...] | None) -> None:
        try:
            self.values.append(scalar_value(self.code, obj))
        except Rejected as exc:
            where = tuple(self.path) if path is None else path
            raise element_error(self.index, where, exc.reason) from None
        self.index += 1

    def array(self, arr: np.ndarray[Any, Any], depth: int) -> None:
        sub = self.shape[depth:]
        here = tuple(self.path)
        if arr.shape != sub:
            raise array_mismatch(here, sub, arr)
        if arr.dtype.kind in "OSU":
            # Object and string arrays hold scalars: each is checked like a list element.
            for i, item in enumerate(arr.ravel().tolist()):
                if isinstance(item, (list, tuple, np.ndarray)):
                    raise shape_mismatch(array_path(here, arr.shape, i), (), item)
                self.scalar(item, array_path(here, arr.shape, i))
            return
        self.flush()
        self.parts.append(convert_array(arr, self.code, self.index, here))
        self.index += arr.size

    def flush(self) -> None:
        if not self.values:
            return
        code = self.code
        if code == BYTES:
            raw = np.empty(len(self.values), dtype=object)
            raw[:] = self.values
        elif code == BOOL or code in INT_BOUNDS:
            raw = np.array(self.values, dtype=raw_dtype(code))
        else:
            raw = floats_to_raw(code, np.array(self.values, dtype=np.float64))
        self.parts.append(raw)
        self.values = []

    def result(self) -> np.ndarray[Any, Any]:
        self.flush()
        if not self.parts:
            return finish(self.code, np.empty(0, raw_dtype(self.code)))
        raw = self.parts[0] if len(self.parts) == 1 else np.concatenate(self.parts)
        return finish(self.code, raw)


@contract(CONTRACTS)
def flatten(
    nested: Any, datatype: str, *, limits: Limits = DEFAULT_LIMITS
) -> tuple[np.ndarray[Any, Any], tuple[int, ...]]:
    code = datatype_code(datatype)
    shape = infer_shape(nested, limits)
    walk = _Walk(code, shape)
    walk.node(nested, 0)
    return walk.result(), shape


@contract(CONTRACTS)
def unflatten(array: Any, shape: Any) -> Any:
    return unflatten_reference(array, shape)


@contract(CONTRACTS)
def uninitialized_bytearray(size: int) -> bytearray:
    check_buffer_size(size)
    return bytearray(size)
