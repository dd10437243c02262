# Row-major layout: flatten / unflatten / little_endian_view, the native kernel. Its twin and
# reference is oipcodec/_pure/layout.py; what is accepted and what an error says lives in
# oipcodec/_shared/layout.py, shared by both.
#
# flatten reads the shape from the first path of the nesting (O(depth)), checks it against the
# limits, allocates the output once at its exact size, then walks the nesting once, checking
# every list's length against the shape while it writes each element in place. There is no
# growing buffer and no second pass: a ragged input is caught when the walk reaches it, and the
# output, never handed out, is dropped. The walk reads Python objects, so it holds the GIL.

cimport cython
from cpython.bytearray cimport PyByteArray_FromStringAndSize
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_AsUTF8String
from libc.math cimport isinf
from libc.stdint cimport (
    int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
)
from libc.string cimport memcpy

from oipcodec._native.half cimport (
    oipcodec_f64_to_bf16,
    oipcodec_f64_to_fp16,
)

import math

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared import layout as common
from oipcodec._shared.layout import (
    CONTRACTS,
    Rejected,
    array_mismatch,
    array_path,
    convert_array,
    datatype_code,
    element_error,
    finish,
    infer_shape,
    little_endian_view,
    range_reason,
    raw_dtype,
    scalar_value,
    shape_mismatch,
    unflatten_reference,
)
from oipcodec.limits import DEFAULT_LIMITS

__all__ = ["flatten", "little_endian_view", "unflatten", "uninitialized_bytearray"]

# Borrowed-reference versions of the CPython calls the hot loops make: an element is looked at
# through a borrowed pointer, and only the slow path (which may run Python code) takes a
# reference to it.
cdef extern from "Python.h":
    bint _is_float "PyFloat_CheckExact"(PyObject *o)
    double _float_value "PyFloat_AS_DOUBLE"(PyObject *o)
    bint _is_int "PyLong_CheckExact"(PyObject *o)
    long long _int_value "PyLong_AsLongLongAndOverflow"(PyObject *o, int *overflow)
    bint _is_bytes "PyBytes_CheckExact"(PyObject *o)
    bint _is_str "PyUnicode_CheckExact"(PyObject *o)
    bint _is_list "PyList_Check"(PyObject *o)
    bint _is_tuple "PyTuple_Check"(PyObject *o)
    Py_ssize_t _size "Py_SIZE"(PyObject *o)
    Py_ssize_t _list_size "PyList_GET_SIZE"(PyObject *o)
    PyObject *_list_item "PyList_GET_ITEM"(PyObject *o, Py_ssize_t i)
    PyObject *_tuple_item "PyTuple_GET_ITEM"(PyObject *o, Py_ssize_t i)
    PyObject *_true "Py_True"
    PyObject *_false "Py_False"

# The datatype codes (BOOL ... BYTES) are C constants from layout.pxd.

# numpy's limit, and element_count's (infer_shape refuses more dimensions before we get here).
cdef enum:
    MAX_NDIM = 64
# Integers up to 2**53 are exact in a float64; larger ones take the shared slow path, which
# rounds them to odd so the narrowing to FP32/FP16/BF16 stays correctly rounded.
cdef long long EXACT_INT = 9007199254740992

cdef object _ndarray = np.ndarray


@cython.final
cdef class _Flattener:
    """The state of one walk: the shape, the index path, and where the next element goes."""

    cdef int code
    cdef int ndim
    cdef Py_ssize_t shape[MAX_NDIM]
    cdef Py_ssize_t idx[MAX_NDIM]
    cdef Py_ssize_t pos           # flat index of the next element
    cdef long long low, high      # integer datatypes: the range (UINT64: up to INT64_MAX here)
    cdef char *base               # the raw output (NULL when empty or BYTES)
    cdef Py_ssize_t itemsize
    cdef object[::1] cells        # BYTES: the output's object cells
    cdef tuple py_shape

    cdef tuple path(self, int depth):
        return tuple([self.idx[i] for i in range(depth)])

    cdef int node(self, object obj, int depth) except -1:
        cdef PyObject *seq = <PyObject *>obj
        cdef PyObject *item
        cdef Py_ssize_t i, n
        cdef bint is_list
        if depth == self.ndim:
            return self.leaf(seq, depth)
        is_list = _is_list(seq)
        if not is_list and not _is_tuple(seq):
            if isinstance(obj, _ndarray):
                return self.array(obj, depth)
            raise shape_mismatch(self.path(depth), self.py_shape[depth:], obj)
        n = _size(seq)
        if n != self.shape[depth]:
            raise shape_mismatch(self.path(depth), self.py_shape[depth:], obj)
        for i in range(n):
            self.idx[depth] = i
            if is_list:
                # Python code run by a slow path may have shortened the list under us.
                if i >= _list_size(seq):
                    raise shape_mismatch(self.path(depth), self.py_shape[depth:], obj)
                item = _list_item(seq, i)
            else:
                item = _tuple_item(seq, i)
            if depth + 1 == self.ndim:
                self.leaf(item, depth + 1)
            else:
                self.node(<object>item, depth + 1)
        return 0

    cdef inline int leaf(self, PyObject *item, int depth) except -1:
        # Fast paths for the exact builtin types run no Python code, so the borrowed pointer
        # stays valid; everything else goes to slow(), which holds a reference.
        cdef int code = self.code, overflow = 0
        cdef long long v
        if code >= FP16 and code <= BF16:
            if _is_float(item):
                return self.store_double(_float_value(item), item)
            if _is_int(item):
                v = _int_value(item, &overflow)
                if overflow == 0 and -EXACT_INT <= v <= EXACT_INT:
                    return self.store_double(<double>v, item)
            return self.slow(<object>item, depth)
        if code == BOOL:
            if item == _true:
                (<uint8_t *>self.base)[self.pos] = 1
            elif item == _false:
                (<uint8_t *>self.base)[self.pos] = 0
            else:
                return self.slow(<object>item, depth)
            self.pos += 1
            return 0
        if code == BYTES:
            if _is_bytes(item):
                self.cells[self.pos] = <object>item
            elif _is_str(item):
                try:
                    self.cells[self.pos] = PyUnicode_AsUTF8String(<object>item)
                except UnicodeEncodeError:
                    return self.slow(<object>item, depth)  # it owns the message
            else:
                return self.slow(<object>item, depth)
            self.pos += 1
            return 0
        if _is_int(item):
            v = _int_value(item, &overflow)
            if overflow == 0 and self.low <= v <= self.high:
                self.store_int(v)
                return 0
        return self.slow(<object>item, depth)

    cdef inline void store_int(self, long long v) noexcept:
        cdef int code = self.code
        if code == INT64:
            (<int64_t *>self.base)[self.pos] = <int64_t>v
        elif code == INT32:
            (<int32_t *>self.base)[self.pos] = <int32_t>v
        elif code == INT16:
            (<int16_t *>self.base)[self.pos] = <int16_t>v
        elif code == INT8:
            (<int8_t *>self.base)[self.pos] = <int8_t>v
        elif code == UINT8:
            (<uint8_t *>self.base)[self.pos] = <uint8_t>v
        elif code == UINT16:
            (<uint16_t *>self.base)[self.pos] = <uint16_t>v
        elif code == UINT32:
            (<uint32_t *>self.base)[self.pos] = <uint32_t>v
        else:
            (<uint64_t *>self.base)[self.pos] = <uint64_t>v
        self.pos += 1

    cdef inline int store_double(self, double d, PyObject *item) except -1:
        # Round to nearest even (C's conversion for FP32, common/half.h for FP16/BF16); a finite value
        # that becomes infinite is refused, as scalar_value refuses it in the pure twin.
        cdef int code = self.code
        cdef float f
        cdef uint16_t h
        cdef bint overflow = False
        if code == FP64:
            (<double *>self.base)[self.pos] = d
        elif code == FP32:
            f = <float>d
            overflow = isinf(f) and not isinf(d)
            (<float *>self.base)[self.pos] = f
        else:
            if code == FP16:
                h = oipcodec_f64_to_fp16(d)
                overflow = (h & 0x7FFF) == 0x7C00 and not isinf(d)
            else:
                h = oipcodec_f64_to_bf16(d)
                overflow = (h & 0x7FFF) == 0x7F80 and not isinf(d)
            (<uint16_t *>self.base)[self.pos] = h
        if overflow:
            raise element_error(self.pos, self.path(self.ndim), range_reason(code, <object>item))
        self.pos += 1
        return 0

    cdef int slow(self, object obj, int depth) except -1:
        cdef int code = self.code
        cdef double d
        if isinstance(obj, (list, tuple)):
            raise shape_mismatch(self.path(depth), (), obj)
        if isinstance(obj, _ndarray):
            return self.array(obj, depth)
        try:
            value = scalar_value(code, obj)
        except Rejected as exc:
            raise element_error(self.pos, self.path(depth), exc.reason) from None
        if code >= FP16 and code <= BF16:
            d = value
            return self.store_double(d, <PyObject *>value)
        if code == BYTES:
            self.cells[self.pos] = value
        elif code == BOOL:
            (<uint8_t *>self.base)[self.pos] = 1 if value else 0
        elif code == UINT64:
            (<uint64_t *>self.base)[self.pos] = <unsigned long long>value
        else:
            self.store_int(<long long>value)
            return 0
        self.pos += 1
        return 0

    cdef int array(self, object arr, int depth) except -1:
        cdef tuple sub = self.py_shape[depth:]
        cdef tuple here = self.path(depth)
        cdef Py_ssize_t i, n, d
        cdef const unsigned char[::1] src
        if arr.shape != sub:
            raise array_mismatch(here, sub, arr)
        if arr.dtype.kind in "OSU":
            # Object and string arrays hold scalars, each checked like a list element; the
            # index path below this level is kept as an odometer for the messages.
            items = arr.ravel().tolist()
            n = len(items)
            for d in range(depth, self.ndim):
                self.idx[d] = 0
            for i in range(n):
                item = items[i]
                if isinstance(item, (list, tuple, _ndarray)):
                    raise shape_mismatch(array_path(here, arr.shape, i), (), item)
                self.leaf(<PyObject *>item, self.ndim)
                d = self.ndim - 1
                while d >= depth:
                    self.idx[d] += 1
                    if self.idx[d] < self.shape[d]:
                        break
                    self.idx[d] = 0
                    d -= 1
            return 0
        raw = convert_array(arr, self.code, self.pos, here)
        n = raw.size
        if n and self.code != BYTES:
            src = raw.view(np.uint8)
            memcpy(self.base + self.pos * self.itemsize, &src[0], n * self.itemsize)
        self.pos += n
        return 0


@contract(CONTRACTS)
def flatten(nested, datatype, *, limits=DEFAULT_LIMITS):
    cdef int code = datatype_code(datatype)
    cdef tuple shape = infer_shape(nested, limits)
    cdef Py_ssize_t count, i
    cdef unsigned char[::1] buf
    if isinstance(nested, _ndarray) and nested.dtype.kind not in "OSU":
        return finish(code, convert_array(nested, code, 0, ())), shape
    raw = np.empty(math.prod(shape), raw_dtype(code))  # the count is within limits already
    count = raw.size
    cdef _Flattener walk = _Flattener.__new__(_Flattener)
    walk.code = code
    walk.ndim = len(shape)
    walk.py_shape = shape
    for i in range(walk.ndim):
        walk.shape[i] = shape[i]
        walk.idx[i] = 0
    walk.pos = 0
    walk.base = NULL
    walk.itemsize = raw.itemsize
    if code == BYTES:
        walk.cells = raw
    elif count:
        buf = raw.view(np.uint8)
        walk.base = <char *>&buf[0]
    if code in common.INT_BOUNDS:
        low, high = common.INT_BOUNDS[code]
        walk.low = low
        walk.high = min(high, 0x7FFFFFFFFFFFFFFF)  # UINT64 above that takes the slow path
    walk.node(nested, 0)
    if walk.pos != count:  # pragma: no cover - the walk checks every length against shape
        raise AssertionError(f"flatten wrote {walk.pos} elements for shape {shape}")
    return finish(code, raw), shape


# unflatten is numpy's tolist(), a C loop already bounded by creating one Python object per
# element: a Cython loop filling preallocated lists measured no faster (docs/measurements.md#kernel-design-decisions),
# so both twins share oipcodec._shared.layout.unflatten_reference.
@contract(CONTRACTS)
def unflatten(array, shape):
    return unflatten_reference(array, shape)


@contract(CONTRACTS)
def uninitialized_bytearray(Py_ssize_t size):
    common.check_buffer_size(size)
    return PyByteArray_FromStringAndSize(NULL, size)
