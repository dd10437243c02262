# FP16/BF16 raw packing: the native kernel. Its twin and reference is
# oipcodec/_pure/halffloat.py; both share input handling, views and messages in
# oipcodec/_shared/halffloat.py. The conversions themselves are csrc/oipcodec/common/half.h, whose
# header comment documents the rounding and NaN rules.
#
# The wire form of an FP16 or BF16 tensor is its elements in row-major order, 2 bytes each,
# little-endian.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from oipcodec._native.endian cimport (
    oipcodec_load_le16,
    oipcodec_load_le32,
    oipcodec_load_le64,
    oipcodec_store_le16,
)
from oipcodec._native.half cimport (
    oipcodec_bf16_to_f32bits,
    oipcodec_f32bits_to_bf16,
    oipcodec_f32bits_to_fp16,
    oipcodec_f64bits_to_bf16,
    oipcodec_f64bits_to_fp16,
    oipcodec_fp16_to_f32bits,
)

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.halffloat import (
    CONTRACTS,
    bfloat16_dtype,
    half_source,
    le_uint16_view,
    wire_view,
)

__all__ = ["pack_bf16", "pack_fp16", "unpack_bf16", "unpack_fp16", "view_bf16"]

cdef extern from "oipcodec/common/endian.h" nogil:
    uint16_t OIPCODEC_BSWAP16(uint16_t x)
    uint32_t OIPCODEC_BSWAP32(uint32_t x)
    uint64_t OIPCODEC_BSWAP64(uint64_t x)

# The source codes (SOURCE_*) are C constants for the nogil loops, from halffloat.pxd.


# Loads of source elements stored little- or big-endian, on any host. The byte order is
# a compile-time constant in each loop below, so the compiler drops the swap it does not need.
cdef inline uint16_t _load16(const unsigned char *p, bint little) noexcept nogil:
    cdef uint16_t v = oipcodec_load_le16(p)
    return v if little else OIPCODEC_BSWAP16(v)

cdef inline uint32_t _load32(const unsigned char *p, bint little) noexcept nogil:
    cdef uint32_t v = oipcodec_load_le32(p)
    return v if little else OIPCODEC_BSWAP32(v)

cdef inline uint64_t _load64(const unsigned char *p, bint little) noexcept nogil:
    cdef uint64_t v = oipcodec_load_le64(p)
    return v if little else OIPCODEC_BSWAP64(v)


cdef inline uint16_t _convert(
    const unsigned char *p, int source, bint to_fp16, bint little
) noexcept nogil:
    # One element of the source to the target's bits. Half sources are widened exactly to
    # float32 first, so converting between FP16 and BF16 rounds once as well.
    cdef uint32_t widened
    if source == SOURCE_F32:
        return oipcodec_f32bits_to_fp16(_load32(p, little)) if to_fp16 \
            else oipcodec_f32bits_to_bf16(_load32(p, little))
    if source == SOURCE_F64:
        return oipcodec_f64bits_to_fp16(_load64(p, little)) if to_fp16 \
            else oipcodec_f64bits_to_bf16(_load64(p, little))
    if (source == SOURCE_F16) == to_fp16:
        return _load16(p, little)
    if source == SOURCE_F16:
        return oipcodec_f32bits_to_bf16(oipcodec_fp16_to_f32bits(_load16(p, little)))
    return oipcodec_f32bits_to_fp16(oipcodec_bf16_to_f32bits(_load16(p, little)))


cdef void _pack_loop(
    const unsigned char *src, unsigned char *dst, Py_ssize_t n, Py_ssize_t itemsize,
    int source, bint to_fp16, bint little,
) noexcept nogil:
    cdef Py_ssize_t i
    # Every (source, target, byte order) pair gets its own loop, with the choice made once:
    # _convert is inlined with constant arguments, which leaves a branch-free body the
    # compiler can unroll (and, for BF16, vectorise).
    if source == SOURCE_F32 and to_fp16 and little:
        for i in range(n):
            oipcodec_store_le16(dst + 2 * i, _convert(src + 4 * i, SOURCE_F32, True, True))
    elif source == SOURCE_F32 and not to_fp16 and little:
        for i in range(n):
            oipcodec_store_le16(dst + 2 * i, _convert(src + 4 * i, SOURCE_F32, False, True))
    elif source == SOURCE_F64 and to_fp16 and little:
        for i in range(n):
            oipcodec_store_le16(dst + 2 * i, _convert(src + 8 * i, SOURCE_F64, True, True))
    elif source == SOURCE_F64 and not to_fp16 and little:
        for i in range(n):
            oipcodec_store_le16(dst + 2 * i, _convert(src + 8 * i, SOURCE_F64, False, True))
    elif (source == SOURCE_F16) == to_fp16 and little:
        # Already the target type, already little-endian: the wire form is the memory.
        memcpy(dst, src, 2 * n)
    else:
        # Big-endian sources and the FP16 <-> BF16 conversions: not worth a loop each.
        for i in range(n):
            oipcodec_store_le16(dst + 2 * i, _convert(src + itemsize * i, source, to_fp16, little))


cdef bytes _pack(values, str target):
    array, source, little = half_source(values, target)
    cdef Py_ssize_t n = array.size, itemsize = array.dtype.itemsize
    cdef const unsigned char[::1] src = array.view(np.uint8)
    cdef int c_source = source
    cdef bint to_fp16 = target == "FP16", c_little = little
    out = PyBytes_FromStringAndSize(NULL, 2 * n)
    cdef unsigned char *dst = <unsigned char *>PyBytes_AS_STRING(out)
    if n:
        with nogil:
            _pack_loop(&src[0], dst, n, itemsize, c_source, to_fp16, c_little)
    return out


@contract(CONTRACTS)
def pack_fp16(array):
    return _pack(array, "FP16")


@contract(CONTRACTS)
def pack_bf16(array):
    return _pack(array, "BF16")


@contract(CONTRACTS)
def unpack_fp16(buffer, count=None):
    view, n = wire_view(buffer, count, "FP16")
    return le_uint16_view(view, n, np.dtype(np.float16))


@contract(CONTRACTS)
def unpack_bf16(buffer, count=None):
    view, n_elements = wire_view(buffer, count, "BF16")
    cdef const unsigned char[::1] src = view
    cdef Py_ssize_t n = n_elements, i
    out = np.empty(n, dtype=np.float32)
    cdef uint32_t[::1] dst = out.view(np.uint32)
    if n:
        with nogil:
            for i in range(n):
                # Native order: the result is a numpy array in host byte order.
                dst[i] = oipcodec_bf16_to_f32bits(oipcodec_load_le16(&src[0] + 2 * i))
    return out


@contract(CONTRACTS)
def view_bf16(buffer, count=None):
    dtype = bfloat16_dtype()
    view, n = wire_view(buffer, count, "BF16")
    return le_uint16_view(view, n, dtype)
