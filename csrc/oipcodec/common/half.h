/* Half floats: IEEE binary16 (FP16) and bfloat16 (BF16), to and from float32/float64.
 *
 * Narrowing rounds to nearest, ties to even, ONCE from the source value: float64 sources are
 * first rounded to float32 with round-to-odd (truncate, then set the last bit when anything
 * was dropped), which keeps enough information for the final round-to-nearest-even to be the
 * correctly rounded result (float32 carries 13+ more significand bits than FP16 and 16 more
 * than BF16, and round-to-odd is exact when at least 2 extra bits remain). Overflow goes to
 * infinity, underflow to a signed zero or a subnormal, like IEEE 754 conversions.
 *
 * NaN, chosen to match the reference libraries bit for bit (measured with numpy 2.4 and
 * ml_dtypes 0.5; tests/kernels/test_halffloat.py checks it):
 * - FP16, as numpy's software conversion (npy_floatbits_to_halfbits/npy_doublebits_to_halfbits):
 *   sign kept, the payload truncated to its top 10 bits (quiet bit included, so a quiet NaN
 *   stays quiet and a signalling one is not quietened); if that leaves no payload bit set, the
 *   result is 0x7C01 (with the sign) so it stays a NaN.
 * - BF16, as ml_dtypes (Eigen's float_to_bfloat16_rtne): the canonical quiet NaN 0x7FC0 with the
 *   source's sign; the payload is dropped.
 * Widening is exact and keeps NaN payloads (shifted into the top bits of the float32 payload).
 *
 * Everything is integer arithmetic on the bit patterns: the results depend on no floating-point
 * environment (rounding mode, flush-to-zero/denormals-are-zero, x87 excess precision, fast-math),
 * which is why no float arithmetic or conversion appears below. Plain C99, MSVC-compatible.
 *
 * Methods and where they come from:
 * - round to nearest even on the bit pattern by adding 0x7FFF (or 0x0FFF, ...) plus the lowest
 *   kept bit, then truncating: the bias trick of Eigen's float_to_bfloat16_rtne (used by
 *   TensorFlow and ml_dtypes), applied here to FP16 and to float64 sources as well;
 * - round-to-odd as an intermediate rounding that makes a second rounding correct: Sylvie Boldo
 *   and Guillaume Melquiond, "Emulation of FMA and Correctly Rounded Sums: Proved Algorithms
 *   Using Rounding to Odd", IEEE Transactions on Computers 57(4), 2008. */
#ifndef OIPCODEC_COMMON_HALF_H
#define OIPCODEC_COMMON_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t oipcodec_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float oipcodec_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint64_t oipcodec_f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* float32 bits -> BF16 bits. */
static inline uint16_t oipcodec_f32bits_to_bf16(uint32_t u) {
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
        return (uint16_t)(((u >> 16) & 0x8000u) | 0x7FC0u);
    }
    /* Adding 0x7FFF plus the bit that survives makes exact halves round to even; a carry out
     * of the significand bumps the exponent, and out of the largest exponent gives infinity. */
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* float32 bits -> FP16 bits. */
static inline uint16_t oipcodec_f32bits_to_fp16(uint32_t u) {
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a >= 0x47800000u) { /* |x| >= 65536: infinity or NaN (smaller overflow carries below) */
        if (a > 0x7F800000u) {
            uint16_t h = (uint16_t)(0x7C00u | ((a & 0x007FFFFFu) >> 13));
            return (uint16_t)(sign | (h == 0x7C00u ? 0x7C01u : h));
        }
        return (uint16_t)(sign | 0x7C00u);
    }
    if (a >= 0x38800000u) { /* normal in FP16: rebias the exponent, round off 13 bits */
        a -= (uint32_t)(127 - 15) << 23;
        return (uint16_t)(sign | ((a + 0x0FFFu + ((a >> 13) & 1u)) >> 13));
    }
    if (a < 0x33000000u) { /* below half the smallest subnormal (2**-25): signed zero */
        return sign;
    }
    {
        /* FP16 subnormal: the value is sig * 2**(e - 150) and the FP16 unit is 2**-24, so the
         * result is sig >> (126 - e), rounded to nearest even; e is 102..112, the shift 14..24.
         * Rounding up from the largest subnormal gives 0x0400, the smallest normal. */
        uint32_t e = a >> 23;
        uint32_t sig = (a & 0x007FFFFFu) | 0x00800000u;
        uint32_t shift = 126u - e;
        uint32_t h = sig >> shift;
        uint32_t rest = sig & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        h += (rest > halfway) | ((rest == halfway) & h);
        return (uint16_t)(sign | h);
    }
}

/* float64 bits -> float32 bits rounded to odd (see the header comment). NaN is not expected
 * here (the callers handle it first); infinity gives infinity; values beyond the float32 range
 * give the largest finite float32, which is odd and so still rounds to infinity in FP16/BF16. */
static inline uint32_t oipcodec_f64bits_to_f32bits_odd(uint64_t u) {
    uint32_t sign = (uint32_t)(u >> 32) & 0x80000000u;
    int32_t e = (int32_t)((u >> 52) & 0x7FFu);
    uint64_t m = u & 0x000FFFFFFFFFFFFFull;
    int32_t e32;
    if (e == 0x7FF) {
        return sign | 0x7F800000u;
    }
    if (e == 0 && m == 0) {
        return sign;
    }
    e32 = e - 1023 + 127;
    if (e32 >= 0xFF) {
        return sign | 0x7F7FFFFFu;
    }
    if (e32 >= 1) {
        return sign | ((uint32_t)e32 << 23) | (uint32_t)(m >> 29) |
               (uint32_t)((m & 0x1FFFFFFFull) != 0);
    }
    {
        /* float32 subnormal (or less): the significand with its implicit bit, shifted into the
         * 2**-149 grid; everything shifted out is the sticky bit. */
        uint64_t sig = m | 0x0010000000000000ull;
        int32_t shift = 30 - e32; /* sig * 2**(e - 1075) counted in units of 2**-149 */
        uint32_t kept;
        if (e == 0 || shift >= 64) { /* float64 subnormals are far below 2**-149 */
            return sign | 1u;
        }
        kept = (uint32_t)(sig >> shift);
        return sign | kept | (uint32_t)((sig & ((1ull << shift) - 1u)) != 0);
    }
}

static inline uint16_t oipcodec_f32_to_bf16(float f) {
    return oipcodec_f32bits_to_bf16(oipcodec_f32_bits(f));
}

static inline uint16_t oipcodec_f32_to_fp16(float f) {
    return oipcodec_f32bits_to_fp16(oipcodec_f32_bits(f));
}

/* float64 bits -> BF16 bits. */
static inline uint16_t oipcodec_f64bits_to_bf16(uint64_t u) {
    uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
    /* The common case, 2**-126 <= |x| < 2**128 (a normal float32 exponent), in one rounding
     * straight from the float64 bits: rebias the exponent and round off 45 bits, as for float32
     * sources. One unsigned compare checks the range; a carry out of the top gives infinity. */
    if (a - 0x3810000000000000ull < 0x0FE0000000000000ull) {
        uint64_t t = a - 0x3800000000000000ull;
        return (uint16_t)(((u >> 48) & 0x8000u) |
                          ((t + 0x00000FFFFFFFFFFFull + ((t >> 45) & 1u)) >> 45));
    }
    if (a > 0x7FF0000000000000ull) {
        return (uint16_t)(((u >> 48) & 0x8000u) | 0x7FC0u);
    }
    return oipcodec_f32bits_to_bf16(oipcodec_f64bits_to_f32bits_odd(u));
}

/* float64 bits -> FP16 bits. */
static inline uint16_t oipcodec_f64bits_to_fp16(uint64_t u) {
    uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
    /* The common case, 2**-14 <= |x| < 2**16 (a normal FP16 exponent), rounded directly as for
     * BF16 above: rebias, round off 42 bits; a carry out of the top gives infinity. */
    if (a - 0x3F10000000000000ull < 0x01E0000000000000ull) {
        uint64_t t = a - 0x3F00000000000000ull;
        return (uint16_t)(((u >> 48) & 0x8000u) |
                          ((t + 0x000001FFFFFFFFFFull + ((t >> 42) & 1u)) >> 42));
    }
    if (a > 0x7FF0000000000000ull) {
        uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
        uint16_t h = (uint16_t)(0x7C00u | ((u & 0x000FFFFFFFFFFFFFull) >> 42));
        return (uint16_t)(sign | (h == 0x7C00u ? 0x7C01u : h));
    }
    return oipcodec_f32bits_to_fp16(oipcodec_f64bits_to_f32bits_odd(u));
}

static inline uint16_t oipcodec_f64_to_bf16(double d) {
    return oipcodec_f64bits_to_bf16(oipcodec_f64_bits(d));
}

static inline uint16_t oipcodec_f64_to_fp16(double d) {
    return oipcodec_f64bits_to_fp16(oipcodec_f64_bits(d));
}

/* BF16 bits -> float32 bits: BF16 is the top half of a float32. */
static inline uint32_t oipcodec_bf16_to_f32bits(uint16_t h) {
    return (uint32_t)h << 16;
}

/* FP16 bits -> float32 bits, exactly. */
static inline uint32_t oipcodec_fp16_to_f32bits(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x03FFu;
    if (e == 0x1F) {
        return sign | 0x7F800000u | (m << 13);
    }
    if (e != 0) {
        return sign | ((e + (127 - 15)) << 23) | (m << 13);
    }
    if (m == 0) {
        return sign;
    }
    /* Subnormal: normalise so the leading 1 becomes the implicit bit. */
    e = 127 - 15 + 1;
    while ((m & 0x0400u) == 0) {
        m <<= 1;
        e -= 1;
    }
    return sign | (e << 23) | ((m & 0x03FFu) << 13);
}

static inline float oipcodec_bf16_to_f32(uint16_t h) {
    return oipcodec_bits_f32(oipcodec_bf16_to_f32bits(h));
}

static inline float oipcodec_fp16_to_f32(uint16_t h) {
    return oipcodec_bits_f32(oipcodec_fp16_to_f32bits(h));
}

#endif
