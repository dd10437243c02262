/* Integers as JSON text: digit helpers shared by every
 * writer (the float writers and their vector paths take their digits from here), the decimal
 * writers of each integer type, the row writers of the integer types and BOOL.
 *
 * Methods and where they come from:
 * - digit counts from the bit length times 1233 / 4096 (an approximation of log10(2)) and one
 *   table comparison: Sean Eron Anderson, "Bit Twiddling Hacks", "Find integer log base 10 of
 *   an integer" (https://graphics.stanford.edu/~seander/bithacks.html#IntegerLog10, public
 *   domain).
 * - two digits per table lookup (oipcodec_digit_pairs), as in {fmt} and Andrei Alexandrescu,
 *   "Three Optimization Tips for C++" (2012).
 * - oipcodec_digits8, the eight digits of v < 10**8 computed in parallel lanes of one 64-bit
 *   word (halves by 10**4, then 100 and 10 by multiply-shift reciprocals): Paul Khuong, "How to
 *   print integers really fast (with open source AppNexus code!)" (2017,
 *   https://pvk.ca/Blog/2017/12/22/appnexus-common-framework-its-out-also-how-to-print-integers-faster/);
 *   on x86-64 the same in SSE2's 16-bit lanes (oipcodec_digits8_sse2): Wojciech Mula's
 *   conversion, from Milo Yip's itoa-benchmark (https://github.com/miloyip/itoa-benchmark).
 * - the integer rows' vector paths: write/x86/int.h (x86-64, chosen at run time) and
 *   write/arm64/int.h (AArch64), both subject to common/cpu.h's caps. */
#ifndef OIPCODEC_WRITE_INT_H
#define OIPCODEC_WRITE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/endian.h"
#include "oipcodec/common/sse2.h"
#include "oipcodec/common/target.h"
#include "oipcodec/write/arm64/int.h"
#include "oipcodec/write/x86/int.h"

static const char oipcodec_digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of v, from its bit length: log10(2) ~ 1233/4096 gives the count or one too
 * many, and one comparison settles it. No data-dependent branch: digit counts of real data
 * vary from element to element and would be mispredicted. */
static const uint32_t oipcodec_pow10_u32[10] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u};

static inline int oipcodec_count_digits_u32(uint32_t v) {
    int t = (oipcodec_bit_length_u32(v) * 1233) >> 12;
    return t + 1 - ((v | 1u) < oipcodec_pow10_u32[t]); /* v | 1: zero has one digit */
}

#define OIPCODEC_ASCII8 0x3030303030303030ull

#if OIPCODEC_SSE2
/* oipcodec_digits8 in the eight 16-bit lanes of an SSE2 register: the halves by a 32-bit
 * reciprocal multiply, then each half divided by 1000, 100, 10 and 1 at once with 16-bit
 * multiply-high reciprocals, and each lane's quotient less ten times its left neighbour's.
 * Wojciech Mula's SSE2 integer-to-text conversion (itoa-benchmark's sse2.cpp; see the top of
 * this file). */
static inline __m128i oipcodec_digits8_sse2(uint32_t v) {
    const __m128i abcdefgh = _mm_cvtsi32_si128((int)v);
    const __m128i abcd =
        _mm_srli_epi64(_mm_mul_epu32(abcdefgh, _mm_set1_epi32((int)0xD1B71759)), 45);
    const __m128i efgh = _mm_sub_epi32(abcdefgh, _mm_mul_epu32(abcd, _mm_set1_epi32(10000)));
    const __m128i v1 = _mm_slli_epi64(_mm_unpacklo_epi16(abcd, efgh), 2);
    const __m128i v2 = _mm_unpacklo_epi32(_mm_unpacklo_epi16(v1, v1), _mm_unpacklo_epi16(v1, v1));
    const __m128i div = _mm_setr_epi16(8389, 5243, 13108, (short)32768, 8389, 5243, 13108,
                                       (short)32768);
    const __m128i shift = _mm_setr_epi16(1 << 7, 1 << 11, 1 << 13, (short)(1 << 15), 1 << 7,
                                         1 << 11, 1 << 13, (short)(1 << 15));
    const __m128i v4 = _mm_mulhi_epu16(_mm_mulhi_epu16(v2, div), shift);
    const __m128i v6 = _mm_slli_epi64(_mm_mullo_epi16(v4, _mm_set1_epi16(10)), 16);
    return _mm_sub_epi16(v4, v6);
}
#endif

/* The 8 decimal digits of v < 10**8 as byte values 0..9, the first digit in the lowest byte:
 * split in halves, quarters and eighths in parallel lanes, dividing by 10**4, 100 and 10 with
 * multiply-shift reciprocals that are exact for the lane's range (x < 10**4: x * 10486 >> 20;
 * x < 100: x * 103 >> 10); with SSE2, the same in 16-bit lanes (oipcodec_digits8_sse2). */
static inline uint64_t oipcodec_digits8(uint32_t v) {
#if OIPCODEC_SSE2
    __m128i lanes = oipcodec_digits8_sse2(v);
    return (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(lanes, lanes));
#else
    uint64_t w, q;
    uint32_t hi = v / 10000;
    w = hi | (uint64_t)(v - hi * 10000) << 32;
    q = (w * 10486 >> 20) & 0x0000007F0000007Full;
    w = q | (w - q * 100) << 16;
    q = (w * 103 >> 10) & 0x000F000F000F000Full;
    return q | (w - q * 10) << 8;
#endif
}

/* The 16 decimal digits of v < 10**16 as byte values, leading zeros included: the first 8 in
 * *w1, the last 8 in *w2, each as oipcodec_digits8 (first digit in the lowest byte). */
static inline void oipcodec_digits16_bytes(uint64_t v, uint64_t *w1, uint64_t *w2) {
    uint32_t high = (uint32_t)(v / 100000000u), low = (uint32_t)(v - high * 100000000ull);
#if OIPCODEC_SSE2
    __m128i both = _mm_packus_epi16(oipcodec_digits8_sse2(high), oipcodec_digits8_sse2(low));
    *w1 = (uint64_t)_mm_cvtsi128_si64(both);
    *w2 = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(both, both));
#else
    *w1 = oipcodec_digits8(high);
    *w2 = oipcodec_digits8(low);
#endif
}


/* Exactly 8 digits of v < 10**8, leading zeros included, stored 8 bytes wide. */
static inline char *oipcodec_write_8digits(char *out, uint32_t v) {
    oipcodec_store_le64(out, oipcodec_digits8(v) | OIPCODEC_ASCII8);
    return out + 8;
}

/* v < 10**8 without its leading zeros (one digit for 0): the 8 digits of oipcodec_digits8,
 * whose leading zeros are its low zero bytes, shifted out and stored 8 bytes wide (the
 * caller's buffer has slack; later writes overwrite the spare bytes). No table, no stored
 * byte read back, and no branch on the digit count, which varies from element to element in
 * real data and would be mispredicted. */
static inline char *oipcodec_write_small(char *out, uint32_t v) {
    uint64_t w = oipcodec_digits8(v);
    /* the bit at 56 stops the count at 7 zero bytes: v = 0 keeps its last digit */
    int zeros = oipcodec_ctz64(w | 1ull << 56) >> 3;
    oipcodec_store_le64(out, (w | OIPCODEC_ASCII8) >> (8 * zeros));
    return out + 8 - zeros;
}

/* v < 100: one or two digits from the pair table (two bytes stored). */
static inline char *oipcodec_write_2(char *out, uint32_t v) {
    int two = v >= 10;
    memcpy(out, oipcodec_digit_pairs + 2 * v + 1 - two, 2);
    return out + 1 + two;
}

/* v < 1000 (8-bit elements): the hundreds digit and a pair, assembled in a word with the
 * leading zeros shifted out and stored 4 bytes wide, without a branch. */
static inline char *oipcodec_write_3(char *out, uint32_t v) {
    uint32_t hundreds = v * 41 >> 12; /* v / 100 for v < 1000 */
    uint16_t pair;
    uint32_t word, drop = (v < 100) + (v < 10);
    memcpy(&pair, oipcodec_digit_pairs + 2 * (v - hundreds * 100), 2);
#if OIPCODEC_BIG_ENDIAN
    word = ('0' + hundreds) << 24 | (uint32_t)pair << 8;
    word <<= 8 * drop;
#else
    word = ('0' + hundreds) | (uint32_t)pair << 8;
    word >>= 8 * drop;
#endif
    memcpy(out, &word, 4);
    return out + 3 - drop;
}

/* 0 < v < 10**4: two pairs from the table in one word, the leading zeros shifted out, stored
 * 4 bytes wide without a branch. */
static inline char *oipcodec_write_4(char *out, uint32_t v) {
    uint32_t hundreds = v / 100, word, drop = (v < 1000) + (v < 100) + (v < 10);
    uint16_t high, low;
    memcpy(&high, oipcodec_digit_pairs + 2 * hundreds, 2);
    memcpy(&low, oipcodec_digit_pairs + 2 * (v - hundreds * 100), 2);
#if OIPCODEC_BIG_ENDIAN
    word = (uint32_t)high << 16 | low;
    word <<= 8 * drop;
#else
    word = high | (uint32_t)low << 16;
    word >>= 8 * drop;
#endif
    memcpy(out, &word, 4);
    return out + 4 - drop;
}

static inline char *oipcodec_write_u32(char *out, uint32_t v) {
    uint32_t top;
    if (v < 100000000u) {
        return oipcodec_write_small(out, v);
    }
    top = v / 100000000u; /* < 43 */
    out = oipcodec_write_2(out, top);
    return oipcodec_write_8digits(out, v - top * 100000000u);
}

static inline char *oipcodec_write_u8(char *out, uint32_t v) { return oipcodec_write_3(out, v); }

static inline char *oipcodec_write_i8(char *out, int32_t v) {
    uint32_t negative = v < 0;
    *out = '-';
    out += negative;
    return oipcodec_write_3(out, negative ? 0 - (uint32_t)v : (uint32_t)v);
}

/* Blocks of 8 digits from the low end: the magnitude branches predict well, as an array's
 * values mostly share a magnitude class (below 10**8, below 10**16, or above). */
static inline char *oipcodec_write_u64(char *out, uint64_t v) {
    uint64_t high;
    uint32_t low;
    if (v < 100000000u) {
        return oipcodec_write_small(out, (uint32_t)v);
    }
    high = v / 100000000u;
    low = (uint32_t)(v - high * 100000000u);
    if (high < 100000000u) {
        out = oipcodec_write_small(out, (uint32_t)high);
    } else {
        uint64_t top = high / 100000000u; /* < 1845 */
        out = oipcodec_write_4(out, (uint32_t)top);
        out = oipcodec_write_8digits(out, (uint32_t)(high - top * 100000000u));
    }
    return oipcodec_write_8digits(out, low);
}

/* The minus sign is always stored and only kept for negative values (branch-free, as above);
 * the magnitude is negated in unsigned arithmetic, where -INT64_MIN does not overflow. */
static inline char *oipcodec_write_i64(char *out, int64_t v) {
    uint64_t negative = v < 0;
    *out = '-';
    out += negative;
    return oipcodec_write_u64(out, negative ? 0 - (uint64_t)v : (uint64_t)v);
}

static inline char *oipcodec_write_i32(char *out, int32_t v) {
    uint32_t negative = v < 0;
    *out = '-';
    out += negative;
    return oipcodec_write_u32(out, negative ? 0 - (uint32_t)v : (uint32_t)v);
}

/* A decimal exponent's digits (ae < 1000), exactly: nothing stored past them, as the 16-bit
 * float tables write into fixed slots. */
static inline char *oipcodec_write_exponent(char *out, uint32_t ae) {
    if (ae >= 100) {
        *out++ = (char)('0' + ae / 100);
        ae %= 100;
        memcpy(out, oipcodec_digit_pairs + 2 * ae, 2);
        return out + 2;
    }
    if (ae >= 10) {
        memcpy(out, oipcodec_digit_pairs + 2 * ae, 2);
        return out + 2;
    }
    *out = (char)('0' + ae);
    return out + 1;
}

/* FAST: the AVX-512 kernel of write/x86/int.h, used when the processor has the instructions;
 * it writes from element i and returns where it stopped: 16 elements before the end or, for
 * 32-bit types, at a block with a magnitude of 10**8 or more. The scalar WRITE takes the tail
 * and, after such a block, a run of elements that starts at 64 and doubles (to 4096) each
 * time the kernel stops again at once: full-range data then rarely calls the kernel, whose
 * call and constants would cost there (docs/measurements.md#kernel-design-decisions). */
#if OIPCODEC_SIMD_X86
#define OIPCODEC_INT_SIMD_LEVEL() oipcodec_int_simd_level()
#define OIPCODEC_INT_FAST_KERNEL(FAST) FAST
#define OIPCODEC_INT_FAST2_KERNEL(FAST) FAST##_avx2
#define OIPCODEC_INT_SIMD_KERNEL(...) OIPCODEC_INT_SIMD_ROW(__VA_ARGS__)
#elif OIPCODEC_SIMD_ARM
/* AArch64: the NEON kernels of write/arm64/int.h at either level */
#define OIPCODEC_INT_SIMD_LEVEL() (oipcodec_simd_features() & OIPCODEC_SIMD_NEON ? 1 : 0)
#define OIPCODEC_INT_FAST_KERNEL(FAST) FAST##_neon
#define OIPCODEC_INT_FAST2_KERNEL(FAST) FAST##_neon
#define OIPCODEC_INT_SIMD_KERNEL(NAME, CTYPE, LOAD, SIGNED, WIDE_VALUES, LOAD4)                \
    OIPCODEC_INT_NEON_ROW(NAME, CTYPE, WIDE_VALUES)
#else
#define OIPCODEC_INT_SIMD_LEVEL() 0
#define OIPCODEC_INT_FAST_KERNEL(FAST) oipcodec_int_no_kernel
#define OIPCODEC_INT_FAST2_KERNEL(FAST) oipcodec_int_no_kernel
#define OIPCODEC_INT_SIMD_KERNEL(...)
static inline ptrdiff_t oipcodec_int_no_kernel(const void *data, ptrdiff_t i, ptrdiff_t n,
                                               char **end) {
    (void)data;
    (void)n;
    (void)end;
    return i;
}
#endif

#define OIPCODEC_INT_ROW(NAME, CTYPE, WRITE, WIDE, FAST)                                    \
    OIPCODEC_HOT static char *NAME(const void *data, ptrdiff_t n, char *out,                \
                                   const void *ctx) {                                       \
        const CTYPE *v = (const CTYPE *)data;                                               \
        const int level = OIPCODEC_INT_SIMD_LEVEL();                                        \
        ptrdiff_t i = 0, stop, run = 64;                                                    \
        (void)ctx;                                                                          \
        while (i < n) {                                                                     \
            stop = n;                                                                       \
            if (level) {                                                                    \
                /* a copy of out: out's address taken would keep it in memory */           \
                char *end = out;                                                            \
                ptrdiff_t from = level == 2                                                 \
                                     ? OIPCODEC_INT_FAST_KERNEL(FAST)(data, i, n, &end)     \
                                     : OIPCODEC_INT_FAST2_KERNEL(FAST)(data, i, n, &end);   \
                run = from == i && run < 4096 ? 2 * run : 64;                               \
                out = end;                                                                  \
                i = from;                                                                   \
                stop = n - i > run ? i + run : n;                                           \
            }                                                                               \
            for (; i < stop; i++) {                                                         \
                out = WRITE(out, (WIDE)v[i]);                                               \
                *out++ = ',';                                                               \
            }                                                                               \
        }                                                                                   \
        return n ? out - 1 : out;                                                           \
    }

OIPCODEC_INT_SIMD_KERNEL(oipcodec_fast_u8, uint8_t, OIPCODEC_LOAD_U8, 0, 0, OIPCODEC_LOAD4_U8)
OIPCODEC_INT_SIMD_KERNEL(oipcodec_fast_u16, uint16_t, OIPCODEC_LOAD_U16, 0, 0, OIPCODEC_LOAD4_U16)
OIPCODEC_INT_SIMD_KERNEL(oipcodec_fast_u32, uint32_t, OIPCODEC_LOAD_U32, 0, 1, OIPCODEC_LOAD4_U32)
OIPCODEC_INT_SIMD_KERNEL(oipcodec_fast_u64, uint64_t, OIPCODEC_LOAD_I64, 0, 2, OIPCODEC_LOAD4_I64)
OIPCODEC_INT_SIMD_KERNEL(oipcodec_fast_i8, int8_t, OIPCODEC_LOAD_I8, 1, 0, OIPCODEC_LOAD4_I8)
OIPCODEC_INT_SIMD_KERNEL(oipcodec_fast_i16, int16_t, OIPCODEC_LOAD_I16, 1, 0, OIPCODEC_LOAD4_I16)
OIPCODEC_INT_SIMD_KERNEL(oipcodec_fast_i32, int32_t, OIPCODEC_LOAD_I32, 1, 1, OIPCODEC_LOAD4_I32)
OIPCODEC_INT_SIMD_KERNEL(oipcodec_fast_i64, int64_t, OIPCODEC_LOAD_I64, 1, 2, OIPCODEC_LOAD4_I64)

OIPCODEC_INT_ROW(oipcodec_row_u8, uint8_t, oipcodec_write_u8, uint32_t, oipcodec_fast_u8)
OIPCODEC_INT_ROW(oipcodec_row_u16, uint16_t, oipcodec_write_u32, uint32_t, oipcodec_fast_u16)
OIPCODEC_INT_ROW(oipcodec_row_u32, uint32_t, oipcodec_write_u32, uint32_t, oipcodec_fast_u32)
OIPCODEC_INT_ROW(oipcodec_row_u64, uint64_t, oipcodec_write_u64, uint64_t, oipcodec_fast_u64)
OIPCODEC_INT_ROW(oipcodec_row_i8, int8_t, oipcodec_write_i8, int32_t, oipcodec_fast_i8)
OIPCODEC_INT_ROW(oipcodec_row_i16, int16_t, oipcodec_write_i32, int32_t, oipcodec_fast_i16)
OIPCODEC_INT_ROW(oipcodec_row_i32, int32_t, oipcodec_write_i32, int32_t, oipcodec_fast_i32)
OIPCODEC_INT_ROW(oipcodec_row_i64, int64_t, oipcodec_write_i64, int64_t, oipcodec_fast_i64)

/* The text of 4 elements with their commas, by their bits (element k at bit k), padded to 32
 * bytes, and its length. */
static const char oipcodec_bool4_text[16][33] = {
    "false,false,false,false,        ",
    "true,false,false,false,         ",
    "false,true,false,false,         ",
    "true,true,false,false,          ",
    "false,false,true,false,         ",
    "true,false,true,false,          ",
    "false,true,true,false,          ",
    "true,true,true,false,           ",
    "false,false,false,true,         ",
    "true,false,false,true,          ",
    "false,true,false,true,          ",
    "true,true,false,true,           ",
    "false,false,true,true,          ",
    "true,false,true,true,           ",
    "false,true,true,true,           ",
    "true,true,true,true,            ",
};
static const uint8_t oipcodec_bool4_len[16] = {24, 23, 23, 22, 23, 22, 22, 21, 23, 22, 22, 21, 22, 21, 21, 20};

OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_bool(const void *data, ptrdiff_t n, char *out, const void *ctx) {
    /* Four elements per step: their text copied 32 bytes wide from the table (the spare bytes
     * are overwritten by what follows), so the loop has no data-dependent branch (random
     * bools predict badly) and a quarter of the stores and pointer updates. */
    const uint8_t *v = (const uint8_t *)data;
    ptrdiff_t i = 0;
    (void)ctx;
    for (; i + 4 <= n; i += 4) {
        unsigned idx = (unsigned)(v[i] != 0) | (unsigned)(v[i + 1] != 0) << 1 |
                       (unsigned)(v[i + 2] != 0) << 2 | (unsigned)(v[i + 3] != 0) << 3;
        memcpy(out, oipcodec_bool4_text[idx], 32);
        out += oipcodec_bool4_len[idx];
    }
    for (; i < n; i++) {
        unsigned idx = v[i] != 0;
        memcpy(out, oipcodec_bool4_text[idx], 8); /* "true," or "false," first */
        out += 6 - idx;
    }
    return n ? out - 1 : out;
}

#endif
