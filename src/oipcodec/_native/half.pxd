# Declarations of csrc/oipcodec/common/half.h: FP16 and BF16 to and from float32/float64, rounding to
# nearest even once from the source; NaN as numpy (FP16) and ml_dtypes (BF16) do. The header
# comment documents the exact rules.
from libc.stdint cimport uint16_t, uint32_t, uint64_t

cdef extern from "oipcodec/common/half.h" nogil:
    uint16_t oipcodec_f32_to_fp16(float f)
    uint16_t oipcodec_f64_to_fp16(double d)
    uint16_t oipcodec_f32_to_bf16(float f)
    uint16_t oipcodec_f64_to_bf16(double d)
    float oipcodec_fp16_to_f32(uint16_t h)
    float oipcodec_bf16_to_f32(uint16_t h)
    # The same conversions on bit patterns (what the packing loops load from the wire).
    uint16_t oipcodec_f32bits_to_fp16(uint32_t u)
    uint16_t oipcodec_f64bits_to_fp16(uint64_t u)
    uint16_t oipcodec_f32bits_to_bf16(uint32_t u)
    uint16_t oipcodec_f64bits_to_bf16(uint64_t u)
    uint32_t oipcodec_fp16_to_f32bits(uint16_t h)
    uint32_t oipcodec_bf16_to_f32bits(uint16_t h)
