/* Writing JSON arrays of tensor elements: the C side of oipcodec._native.jsonencode.
 *
 * The text layout is defined once, by the pure twin (oipcodec/_pure/jsonencode.py) and
 * docs/kernels.md; this header reproduces it byte for byte:
 * - integers in decimal, BOOL as true/false;
 * - a float is its shortest round-trip digits d1 d2 ... dn with decimal exponent E (value =
 *   d1.d2...dn * 10**E), written positionally when E is within the type's positional range
 *   ("0.00012", "123.5", integral values end in ".0") and as d1[.d2...dn]e[+-]E otherwise
 *   ("1e-7", "1.5e+16");
 * - NaN, Infinity, -Infinity tokens for non-finite floats;
 * - BYTES as JSON strings: valid UTF-8 copied as is, only '"', '\\' and control characters
 *   escaped.
 *
 * Every writer is given a buffer the caller sized with the bounds below; none allocates, none
 * needs the GIL. Plain C99 and MSVC-compatible (compiler helpers in common.h).
 *
 * Methods and where they come from:
 * - float32 shortest digits, exact path (oipcodec_f32_shortest): Schubfach. Raffaello
 *   Giulietti, "The Schubfach way to render doubles" (2020, https://fmt.dev/papers/Schubfach4.pdf):
 *   a power of ten 10**k chosen from the rounding interval's width, the interval's ends and the
 *   value scaled by one table entry each with the products rounded to odd, then the one multiple
 *   of 10 * 10**k in the interval if there is one, else the closer of the value's two unit
 *   neighbours. The tables below were computed for float32 here (exact rational arithmetic).
 * - float32 fast path (oipcodec_row_f32): the value scaled by one multiply, the interval's half
 *   width a shift of the same table entry instead of two more products, the few values that
 *   choice cannot settle sent to the exact path: the idea of Zmij, Victor Zverovich's
 *   Schubfach-based writer ("1 instead of 3 multiplications by a power of 10 in the common
 *   case", https://github.com/vitaut/zmij, MIT licence). The code is this project's own; its
 *   text equals the exact path's on all 2**32 bit patterns (tools/check_f32_writer.sh).
 * - digit counts from the bit length times 1233 / 4096 (an approximation of log10(2)) and one
 *   table comparison: Sean Eron Anderson, "Bit Twiddling Hacks", "Find integer log base 10 of
 *   an integer" (https://graphics.stanford.edu/~seander/bithacks.html#IntegerLog10, public
 *   domain).
 * - two digits per table lookup (oipcodec_digit_pairs), as in {fmt} and Andrei Alexandrescu,
 *   "Three Optimization Tips for C++" (2012).
 * - float64 shortest digits (oipcodec_f64_shortest): Schubfach as above, on the JSON parser's
 *   128-bit powers of five (pow5_table.h, with a tail to 10**324 for the smallest subnormals),
 *   rounded up where inexact as Schubfach requires. Its text equals the pure twin's, i.e.
 *   repr()'s digits, on 10**8 values and the hard classes (tools/check_f64_writer.py).
 * - oipcodec_digits8, the eight digits of v < 10**8 computed in parallel lanes of one 64-bit
 *   word (halves by 10**4, then 100 and 10 by multiply-shift reciprocals): Paul Khuong, "How to
 *   print integers really fast (with open source AppNexus code!)" (2017,
 *   https://pvk.ca/Blog/2017/12/22/appnexus-common-framework-its-out-also-how-to-print-integers-faster/);
 *   on x86-64 the same in SSE2's 16-bit lanes (oipcodec_digits8_sse2): Wojciech Mula's
 *   conversion, from Milo Yip's itoa-benchmark (https://github.com/miloyip/itoa-benchmark).
 * - vector paths, chosen at run time (cpu.h): FP32 (json_f32_simd.h), FP64's text
 *   (json_f64.h) and integers (json_int_simd.h) several elements at a time in AVX-512 or AVX2
 *   lanes, their digits by digits_simd.h; each header says where its method comes from. The
 *   scalar code here is the portable fallback and the definition: the text is the same.
 * - FP16 and BF16 text: a table of all 65,536 values built once, each by a search over digit
 *   counts with snprintf/strtod (oipcodec_shortest_small).
 * - UTF-8 validity: the well-formed byte sequences of the Unicode Standard (Table 3-7). */
#ifndef OIPCODEC_JSONWRITE_H
#define OIPCODEC_JSONWRITE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/common.h"
#include "oipcodec/endian.h"
#include "oipcodec/half.h"
#include "oipcodec/json_int_simd.h"
#include "oipcodec/pow5_table.h"
#include "oipcodec/swar.h"
#include "oipcodec/target.h"

/* Slot width of a 16-bit float's text in the lookup tables; the longest text is 16 bytes
 * ("-1234000000000.0" for BF16), and a slot is always copied whole, so buffers written from
 * a table need OIPCODEC_HALF_SLOT bytes of slack. */
#define OIPCODEC_HALF_SLOT 16

static const char oipcodec_digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* ---------------------------------------------------------------- integers */

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

/* One writer per element type: n elements separated by commas, no brackets. The row writers
 * share one signature so the nested driver below can take any of them. */
typedef char *(*oipcodec_row_fn)(const void *data, ptrdiff_t n, char *out, const void *ctx);

/* FAST: the AVX-512 kernel of json_int_simd.h, used when the processor has the instructions;
 * it writes from element i and returns where it stopped: 16 elements before the end or, for
 * 32-bit types, at a block with a magnitude of 10**8 or more. The scalar WRITE takes the tail
 * and, after such a block, a run of elements that starts at 64 and doubles (to 4096) each
 * time the kernel stops again at once: full-range data then rarely calls the kernel, whose
 * call and constants cost about 5% there at one call per 64 elements. */
#if OIPCODEC_SIMD_X86
#define OIPCODEC_INT_SIMD_LEVEL() oipcodec_int_simd_level()
#define OIPCODEC_INT_FAST_KERNEL(FAST) FAST
#define OIPCODEC_INT_FAST2_KERNEL(FAST) FAST##_avx2
#define OIPCODEC_INT_SIMD_KERNEL(...) OIPCODEC_INT_SIMD_ROW(__VA_ARGS__)
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
    OIPCODEC_MAYBE_UNUSED OIPCODEC_HOT static char *NAME(const void *data, ptrdiff_t n,     \
                                                         char *out, const void *ctx) {     \
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

/* 16-bit floats: ctx is a table of OIPCODEC_HALF_SLOT-byte texts followed by one length byte
 * per bit pattern (see oipcodec_build_half_table). */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_half(const void *data, ptrdiff_t n, char *out, const void *ctx) {
    const uint16_t *v = (const uint16_t *)data;
    const char *text = (const char *)ctx;
    const uint8_t *lens = (const uint8_t *)ctx + 65536 * OIPCODEC_HALF_SLOT;
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        uint16_t b = v[i];
        memcpy(out, text + (size_t)b * OIPCODEC_HALF_SLOT, OIPCODEC_HALF_SLOT);
        out += lens[b];
        *out++ = ',';
    }
    return n ? out - 1 : out;
}

/* Writes the elements as nested arrays of the given shape (ndim >= 1, every dimension > 0,
 * ndim <= 64): each innermost row by `row`, brackets and commas between rows by counting how
 * many dimensions roll over. A flat array is the shape [n]. */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_write_nested(const char *data, ptrdiff_t itemsize, const ptrdiff_t *shape,
                                   int ndim, char *out, oipcodec_row_fn row, const void *ctx) {
    ptrdiff_t idx[64];
    ptrdiff_t rowlen = shape[ndim - 1], nrows = 1, r;
    int k;
    for (k = 0; k < ndim - 1; k++) {
        nrows *= shape[k];
        idx[k] = 0;
    }
    memset(out, '[', (size_t)ndim);
    out += ndim;
    for (r = 0; r < nrows; r++) {
        if (r > 0) {
            int closes = 1;
            k = ndim - 2;
            while (k >= 0) {
                if (++idx[k] < shape[k]) {
                    break;
                }
                idx[k] = 0;
                k--;
                closes++;
            }
            memset(out, ']', (size_t)closes);
            out += closes;
            *out++ = ',';
            memset(out, '[', (size_t)closes);
            out += closes;
        }
        out = row(data + r * rowlen * itemsize, rowlen, out, ctx);
    }
    memset(out, ']', (size_t)ndim);
    return out + ndim;
}

/* ---------------------------------------------------------------- float layout */

/* Writes sign, the significant digits (n >= 1, no trailing zeros unless the value is 0) and
 * the decimal exponent E in the layout described at the top; lo_e..hi_e is the positional
 * range. Returns the end. At most 2 + n + max(hi_e, -lo_e) + 2 bytes, or n + 8. */
static inline char *oipcodec_write_float_layout(char *out, int negative, const char *digits,
                                                int n, int e, int lo_e, int hi_e) {
    if (negative) {
        *out++ = '-';
    }
    if (e >= lo_e && e <= hi_e) {
        if (e >= 0) {
            if (n <= e + 1) {
                memcpy(out, digits, (size_t)n);
                out += n;
                memset(out, '0', (size_t)(e + 1 - n));
                out += e + 1 - n;
                memcpy(out, ".0", 2);
                return out + 2;
            }
            memcpy(out, digits, (size_t)(e + 1));
            out += e + 1;
            *out++ = '.';
            memcpy(out, digits + e + 1, (size_t)(n - e - 1));
            return out + n - e - 1;
        }
        memcpy(out, "0.", 2);
        out += 2;
        memset(out, '0', (size_t)(-e - 1));
        out += -e - 1;
        memcpy(out, digits, (size_t)n);
        return out + n;
    }
    *out++ = digits[0];
    if (n > 1) {
        *out++ = '.';
        memcpy(out, digits + 1, (size_t)(n - 1));
        out += n - 1;
    }
    *out++ = 'e';
    *out++ = e < 0 ? '-' : '+';
    return oipcodec_write_exponent(out, (uint32_t)(e < 0 ? -e : e));
}

/* Positional ranges of the decimal exponent: FP64, and FP32 (also used for FP16 and BF16). */
#define OIPCODEC_F64_LO_E (-5)
#define OIPCODEC_F64_HI_E 15
#define OIPCODEC_F32_LO_E (-6)
#define OIPCODEC_F32_HI_E 12

/* ---------------------------------------------------------------- float32: shortest digits */

/* A float32 v = c * 2**q (c < 2**24) reads back from any decimal inside its rounding interval:
 * halfway to each neighbour, [c - 1/2, c + 1/2] * 2**q, or [c - 1/4, c + 1/2] * 2**q when c is
 * a power of two above the smallest normal (the float below is half as far); the ends are
 * included when c is even (ties round to even). The decimals in that interval with the fewest
 * significant digits, and of those the closest to v (ties: even), are the reference's digits.
 *
 * Method (Schubfach's idea, in integers): take 10**k, the largest power of ten not above the
 * interval's width, so the width is 1 to 10 units of 10**k. Then the interval holds at most one
 * multiple of 10 * 10**k, and when it holds one, that is the shortest (with s >= 10 below, all
 * other candidates have more digits); when it holds none, every unit of 10**k inside has the
 * same number of digits and the one closest to v is one of v's two unit neighbours s and s + 1,
 * at least one of which is inside.
 *
 * The interval's ends and v are scaled to quarter units of 10**k by one 64x64-bit multiply
 * with the table value g = ceil(10**-k * 2**-r) (64 significant bits) and truncated to odd:
 * the integer part, with the lowest bit set when any fraction is left. Comparing these with
 * multiples of 4 then decides "inside" and "closer" exactly, provided the rounding up of g never
 * shows in the 32 fraction bits kept. That was not proven here but checked: the writer's output
 * for every finite float32 (2**32 - 2**24 values) was compared with orjson's when this code was
 * written (0 differences); tests/kernels/test_jsonencode.py checks the hard classes against an
 * exact rational reference. */

/* Generated with exact rational arithmetic: for each biased exponent field f (0..254, q = max(f,
 * 1) - 150) the decimal exponent k = floor(log10(2**q)) and the shift h = q + r + 96, where 2**r
 * scales 10**-k to 64 bits; the _irr tables use k = floor(log10(3/4 * 2**q)) for the narrower
 * interval below a power of two. oipcodec_f32_pow10[31 - k] = ceil(10**-k * 2**-r). */
static const uint64_t oipcodec_f32_pow10[77] = {
    0x81CEB32C4B43FCF5u, 0xA2425FF75E14FC32u, 0xCAD2F7F5359A3B3Fu,
    0xFD87B5F28300CA0Eu, 0x9E74D1B791E07E49u, 0xC612062576589DDBu,
    0xF79687AED3EEC552u, 0x9ABE14CD44753B53u, 0xC16D9A0095928A28u,
    0xF1C90080BAF72CB2u, 0x971DA05074DA7BEFu, 0xBCE5086492111AEBu,
    0xEC1E4A7DB69561A6u, 0x9392EE8E921D5D08u, 0xB877AA3236A4B44Au,
    0xE69594BEC44DE15Cu, 0x901D7CF73AB0ACDAu, 0xB424DC35095CD810u,
    0xE12E13424BB40E14u, 0x8CBCCC096F5088CCu, 0xAFEBFF0BCB24AAFFu,
    0xDBE6FECEBDEDD5BFu, 0x89705F4136B4A598u, 0xABCC77118461CEFDu,
    0xD6BF94D5E57A42BDu, 0x8637BD05AF6C69B6u, 0xA7C5AC471B478424u,
    0xD1B71758E219652Cu, 0x83126E978D4FDF3Cu, 0xA3D70A3D70A3D70Bu,
    0xCCCCCCCCCCCCCCCDu, 0x8000000000000000u, 0xA000000000000000u,
    0xC800000000000000u, 0xFA00000000000000u, 0x9C40000000000000u,
    0xC350000000000000u, 0xF424000000000000u, 0x9896800000000000u,
    0xBEBC200000000000u, 0xEE6B280000000000u, 0x9502F90000000000u,
    0xBA43B74000000000u, 0xE8D4A51000000000u, 0x9184E72A00000000u,
    0xB5E620F480000000u, 0xE35FA931A0000000u, 0x8E1BC9BF04000000u,
    0xB1A2BC2EC5000000u, 0xDE0B6B3A76400000u, 0x8AC7230489E80000u,
    0xAD78EBC5AC620000u, 0xD8D726B7177A8000u, 0x878678326EAC9000u,
    0xA968163F0A57B400u, 0xD3C21BCECCEDA100u, 0x84595161401484A0u,
    0xA56FA5B99019A5C8u, 0xCECB8F27F4200F3Au, 0x813F3978F8940985u,
    0xA18F07D736B90BE6u, 0xC9F2C9CD04674EDFu, 0xFC6F7C4045812297u,
    0x9DC5ADA82B70B59Eu, 0xC5371912364CE306u, 0xF684DF56C3E01BC7u,
    0x9A130B963A6C115Du, 0xC097CE7BC90715B4u, 0xF0BDC21ABB48DB21u,
    0x96769950B50D88F5u, 0xBC143FA4E250EB32u, 0xEB194F8E1AE525FEu,
    0x92EFD1B8D0CF37BFu, 0xB7ABC627050305AEu, 0xE596B7B0C643C71Au,
    0x8F7E32CE7BEA5C70u, 0xB35DBF821AE4F38Cu,
};
static const int8_t oipcodec_f32_k[255] = {
    -45, -45, -45, -45, -44, -44, -44, -44, -43, -43, -43, -42, -42, -42, -41, -41,
    -41, -41, -40, -40, -40, -39, -39, -39, -38, -38, -38, -38, -37, -37, -37, -36,
    -36, -36, -35, -35, -35, -35, -34, -34, -34, -33, -33, -33, -32, -32, -32, -32,
    -31, -31, -31, -30, -30, -30, -29, -29, -29, -28, -28, -28, -28, -27, -27, -27,
    -26, -26, -26, -25, -25, -25, -25, -24, -24, -24, -23, -23, -23, -22, -22, -22,
    -22, -21, -21, -21, -20, -20, -20, -19, -19, -19, -19, -18, -18, -18, -17, -17,
    -17, -16, -16, -16, -16, -15, -15, -15, -14, -14, -14, -13, -13, -13, -13, -12,
    -12, -12, -11, -11, -11, -10, -10, -10, -10, -9, -9, -9, -8, -8, -8, -7,
    -7, -7, -7, -6, -6, -6, -5, -5, -5, -4, -4, -4, -4, -3, -3, -3,
    -2, -2, -2, -1, -1, -1, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2,
    3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7,
    7, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12,
    12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 17,
    17, 17, 18, 18, 18, 18, 19, 19, 19, 20, 20, 20, 21, 21, 21, 21,
    22, 22, 22, 23, 23, 23, 24, 24, 24, 24, 25, 25, 25, 26, 26, 26,
    27, 27, 27, 27, 28, 28, 28, 29, 29, 29, 30, 30, 30, 31, 31,
};
static const uint8_t oipcodec_f32_h[255] = {
    33, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34,
    35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33,
    34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36,
    33, 34, 35, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35,
    33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35,
    36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34,
    35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33,
    34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33,
    34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35,
    33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35,
    33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34,
    35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34,
    35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33,
    34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36,
    33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35,
    33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 33, 34,
};
static const int8_t oipcodec_f32_k_irr[255] = {
    -45, -45, -45, -45, -45, -44, -44, -44, -43, -43, -43, -42, -42, -42, -42, -41,
    -41, -41, -40, -40, -40, -39, -39, -39, -39, -38, -38, -38, -37, -37, -37, -36,
    -36, -36, -36, -35, -35, -35, -34, -34, -34, -33, -33, -33, -33, -32, -32, -32,
    -31, -31, -31, -30, -30, -30, -30, -29, -29, -29, -28, -28, -28, -27, -27, -27,
    -27, -26, -26, -26, -25, -25, -25, -24, -24, -24, -24, -23, -23, -23, -22, -22,
    -22, -21, -21, -21, -20, -20, -20, -20, -19, -19, -19, -18, -18, -18, -17, -17,
    -17, -17, -16, -16, -16, -15, -15, -15, -14, -14, -14, -14, -13, -13, -13, -12,
    -12, -12, -11, -11, -11, -11, -10, -10, -10, -9, -9, -9, -8, -8, -8, -8,
    -7, -7, -7, -6, -6, -6, -5, -5, -5, -5, -4, -4, -4, -3, -3, -3,
    -2, -2, -2, -2, -1, -1, -1, 0, 0, 0, 1, 1, 1, 1, 2, 2,
    2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7,
    7, 8, 8, 8, 8, 9, 9, 9, 10, 10, 10, 11, 11, 11, 11, 12,
    12, 12, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 16, 16, 16, 17,
    17, 17, 17, 18, 18, 18, 19, 19, 19, 20, 20, 20, 20, 21, 21, 21,
    22, 22, 22, 23, 23, 23, 23, 24, 24, 24, 25, 25, 25, 26, 26, 26,
    26, 27, 27, 27, 28, 28, 28, 29, 29, 29, 29, 30, 30, 30, 31,
};
static const uint8_t oipcodec_f32_h_irr[255] = {
    33, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34,
    35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33,
    34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36,
    33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 34, 35, 36, 33, 34, 35,
    36, 34, 35, 36, 34, 35, 36, 33, 34, 35, 36, 34, 35, 36, 34, 35,
    36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34,
    35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33,
    34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36,
    34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35,
    33, 34, 35, 36, 34, 35, 36, 34, 35, 36, 33, 34, 35, 36, 34, 35,
    36, 34, 35, 36, 33, 34, 35, 36, 34, 35, 36, 34, 35, 36, 33, 34,
    35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34,
    35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33,
    34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36,
    33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35,
    36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 34,
};

/* x * g / 2**96 truncated to odd (x < 2**63). */
static inline uint32_t oipcodec_f32_scale(uint64_t g, uint64_t x) {
    uint64_t p = oipcodec_mulhi64(g, x);
    return (uint32_t)(p >> 32) | ((uint32_t)p != 0);
}

/* The shortest digits of a positive finite float32 given by its bits without the sign: returns
 * d (1 to 9 digits, possibly with trailing zeros) with the value's decimal being d * 10**(*e10).
 * Any float32; the row writer below uses it for what its fast path leaves (subnormals, powers
 * of two, values too close to a decision to settle with truncated products). */
static OIPCODEC_NOINLINE uint32_t oipcodec_f32_shortest(uint32_t bits, int *e10) {
    uint32_t field = bits >> 23, m = bits & 0x7FFFFFu;
    uint32_t c = field ? m | 0x800000u : m;
    uint32_t open = c & 1; /* odd: the ends are excluded */
    int irregular = m == 0 && field > 1;
    int k = irregular ? oipcodec_f32_k_irr[field] : oipcodec_f32_k[field];
    int h = irregular ? oipcodec_f32_h_irr[field] : oipcodec_f32_h[field];
    uint64_t g = oipcodec_f32_pow10[31 - k];
    uint64_t c4 = (uint64_t)c << 2;
    uint32_t vb = oipcodec_f32_scale(g, c4 << h);
    uint32_t lo = oipcodec_f32_scale(g, (c4 - 2 + (uint64_t)irregular) << h);
    uint32_t hi = oipcodec_f32_scale(g, (c4 + 2) << h);
    uint32_t s = vb >> 2, s10 = s / 10 * 10, d;
    /* Every test is computed and the choice made by selects: which candidate wins varies from
     * element to element, so branches on it would be mispredicted half the time. */
    uint32_t grid10 = s >= 10;
    uint32_t s10_in = grid10 & (lo + open <= s10 << 2);
    uint32_t t10_in = grid10 & (((s10 + 10) << 2) + open <= hi);
    uint32_t s_in = lo + open <= s << 2;
    uint32_t t_in = ((s + 1) << 2) + open <= hi;
    /* v exactly halfway (vb == 4s + 2) goes to the even one */
    uint32_t s_closer = (vb < (s << 2) + 2) | ((vb == (s << 2) + 2) & ~s & 1);
    uint32_t pick10 = 0 - (s10_in | t10_in); /* all ones when a multiple of 10 is inside */
    d = s + 1 - (s_in & ((t_in ^ 1) | s_closer));
    d = (d & ~pick10) | ((s10 + 10 * t10_in) & pick10);
    *e10 = k;
    return d;
}

static const uint32_t oipcodec_scale_to_9[10] = {0,      100000000, 10000000, 1000000, 100000,
                                                 10000,  1000,      100,      10,      1};

/* Longest float32 text: "-0.000001" and 8 more digits. The writer stores 16 bytes at up to 10
 * bytes past the element's start, so the buffer needs OIPCODEC_F32_SLACK bytes at its end. */
#define OIPCODEC_F32_MAX 17
#define OIPCODEC_F32_SLACK 32
/* Elements per block of oipcodec_row_f32's two passes (a few hundred bytes of stack). */
#define OIPCODEC_F32_BLOCK 64
/* 0 sends every element to oipcodec_f32_shortest: only tools/check_f32_writer.sh builds it so,
 * to compare the fast path with the exact one on every bit pattern. */
#ifndef OIPCODEC_F32_FAST_PATH
#define OIPCODEC_F32_FAST_PATH 1
#endif

/* float32 elements (native byte order) in the reference layout, each followed by a comma.
 *
 * Fast path (normal floats that are not a power of two): with V = v / 10**k and D the half
 * interval width in units of 10**k (D in [0.5, 5), V >= 2**23), the shortest decimal is the
 * multiple of 10 inside [V - D, V + D] if there is one (at most one fits), else V rounded to
 * the nearest integer (always inside, as D >= 0.5). V is one 64x64-bit product with 32
 * fraction bits kept; the table's g is rounded up, which makes it too large by less than 1/16
 * of its last bit. The ends are V + D and V - D with D's product a shift of g (one multiply
 * instead of three), which puts each within one unit of the last bit of its own product. So
 * any decision an end's product could sit on or cross (an end equal to the multiple of 10 or
 * one unit from it, top's integer part in doubt) and V's fraction exactly 1/2 could be an exact
 * tie or an error, and go to oipcodec_f32_shortest; all others are exact. The text this
 * writes was compared with the three-product version's for all 2**32 bit patterns (0
 * differences); tools/check_f32_writer.sh compares it with the exact path on every pattern.
 *
 * The text is written with fixed-width overlapping stores of words assembled in registers:
 * nothing stored is read back (stores then wider loads of the same bytes stall), and no branch
 * depends on the digit count or on which candidate wins (they vary from element to element and
 * would be mispredicted).
 *
 * Two passes per block of OIPCODEC_F32_BLOCK elements: the digits of all, then the text of all.
 * Each element's digits and their layout are a long chain of dependent multiplies; with both in
 * one loop body the processor could overlap the chains of only about two elements, and the
 * split loops ran 13% faster on 150,528 values (2.24 to 1.96 ms), the text unchanged. */
OIPCODEC_MAYBE_UNUSED
OIPCODEC_HOT static char *oipcodec_row_f32_scalar(const void *data, ptrdiff_t n, char *out,
                                                 const void *ctx) {
    const uint64_t ascii = 0x3030303030303030ull;
    const uint32_t *v = (const uint32_t *)data;
    uint32_t digits[OIPCODEC_F32_BLOCK];
    int exps[OIPCODEC_F32_BLOCK];
    ptrdiff_t base;
    (void)ctx;
    for (base = 0; base < n; base += OIPCODEC_F32_BLOCK) {
        ptrdiff_t count = n - base < OIPCODEC_F32_BLOCK ? n - base : OIPCODEC_F32_BLOCK, j;
        /* The digits: the fast path's, or 0 where oipcodec_f32_shortest must decide. */
        for (j = 0; j < count; j++) {
            uint32_t mag = v[base + j] & 0x7FFFFFFFu, field = mag >> 23, m = mag & 0x7FFFFFu;
            uint32_t d = 0;
            int e10 = 0;
            if (OIPCODEC_F32_FAST_PATH && field - 1u < 0xFEu && m != 0) {
                /* normal, not a power of two */
                int k = oipcodec_f32_k[field], h = oipcodec_f32_h[field];
                uint64_t g = oipcodec_f32_pow10[31 - k];
                uint64_t x = (uint64_t)(m | 0x800000u) << h;
                uint64_t mid = oipcodec_mulhi64(x, g); /* V * 2**32 */
                /* D * 2**32: g * 2**(h-1) / 2**64, exact as a shift. The ends are then one
                 * add and one subtract away, each at most 1 below its own truncated product
                 * (top in [top', top' + 1], bottom in [bottom' - 1, bottom']). */
                uint64_t delta = g >> (65 - h);
                uint64_t top = mid + delta, bottom = mid - delta;
                uint32_t s10 = (uint32_t)(top >> 32) / 10 * 10, in10, up, sel;
                uint64_t at10 = (uint64_t)s10 << 32;
                in10 = at10 > bottom;
                up = (uint32_t)mid > 0x80000000u;
                sel = 0 - in10;
                d = (s10 & sel) | (((uint32_t)(mid >> 32) + up) & ~sel);
                e10 = k;
                /* To the exact path: an end within 1 of the multiple of 10 (a tie, or a
                 * decision the ends' error could flip), top's integer part uncertain (its
                 * fraction all ones), or V's fraction exactly 1/2. */
                if (bottom - at10 + 1 <= 2 || at10 == top || (uint32_t)~top == 0 ||
                    (uint32_t)mid == 0x80000000u) {
                    d = 0;
                }
            }
            digits[j] = d;
            exps[j] = e10;
        }
        /* The text. */
        for (j = 0; j < count; j++) {
            uint32_t bits = v[base + j], mag = bits & 0x7FFFFFFFu, m = mag & 0x7FFFFFu;
            uint32_t field = mag >> 23, d, d9, first;
            uint64_t w;
            int e10, nd, E;
            if (field == 0xFF) {
                if (m) {
                    memcpy(out, "NaN,", 4);
                    out += 4;
                } else if (bits >> 31) {
                    memcpy(out, "-Infinity,", 10);
                    out += 10;
                } else {
                    memcpy(out, "Infinity,", 9);
                    out += 9;
                }
                continue;
            }
            *out = '-';
            out += bits >> 31;
            if (mag == 0) {
                memcpy(out, "0.0,", 4);
                out += 4;
                continue;
            }
            d = digits[j];
            e10 = exps[j];
            if (d == 0) {
                d = oipcodec_f32_shortest(mag, &e10);
            }
            nd = oipcodec_count_digits_u32(d);
            E = e10 + nd - 1; /* value = d1.d2... * 10**E */
            d9 = d * oipcodec_scale_to_9[nd];
            first = d9 / 100000000;
            w = oipcodec_digits8(d9 - first * 100000000);
            /* trailing zero digits are high zero bytes */
            nd = w ? 9 - (oipcodec_clz64(w) >> 3) : 1;
            if (E >= 0 && E <= OIPCODEC_F32_HI_E) {
                /* Overlapping stores, later ones overwriting earlier ones: the digits (padded
                 * with '0's, which gives integral values their zeros), the point after digit E,
                 * and the digits after it (just "0" for integral values). */
                int frac = nd - 1 - E;
                oipcodec_store_le64(out, (first | w << 8) | ascii);
                oipcodec_store_le64(out + 8, w >> 56 | ascii);
                out[E + 1] = '.';
                /* 8E may be 64 */
                oipcodec_store_le64(out + E + 2, (w >> 4 * E >> 4 * E) | ascii);
                out += E + 2 + (frac > 1 ? frac : 1);
            } else if (E < 0 && E >= OIPCODEC_F32_LO_E) {
                oipcodec_store_le64(out, 0x3030303030302E30ull); /* "0.000000" */
                oipcodec_store_le64(out + 1 - E, (first | w << 8) | ascii);
                oipcodec_store_le64(out + 9 - E, w >> 56 | ascii);
                out += 1 - E + nd;
            } else {
                uint32_t ae = (uint32_t)(E < 0 ? -E : E);
                out[0] = (char)('0' + first);
                out[1] = '.';
                oipcodec_store_le64(out + 2, w | ascii);
                out += nd > 1 ? nd + 1 : 1;
                memcpy(out, E < 0 ? "e-" : "e+", 2);
                out += 2;
                out = oipcodec_write_exponent(out, ae);
            }
            *out++ = ',';
        }
    }
    return n ? out - 1 : out;
}

#include "oipcodec/json_f32_simd.h"

/* float32 elements (native byte order) in the reference layout, each followed by a comma:
 * the AVX-512 or AVX2 writer (json_f32_simd.h) where the processor has it, else the scalar
 * one above; the same text either way. */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_f32(const void *data, ptrdiff_t n, char *out, const void *ctx) {
#if OIPCODEC_SIMD_X86 && OIPCODEC_F32_FAST_PATH
    /* rows of a few elements (nested arrays such as [N, 1]): the scalar writer, cheaper there */
    int level = n >= OIPCODEC_F32_SIMD_MIN_N ? oipcodec_f32_simd_level() : 0;
    if (level == 2) {
        return oipcodec_row_f32_avx512(data, n, out);
    }
    if (level == 1) {
        return oipcodec_row_f32_avx2(data, n, out);
    }
#endif
    return oipcodec_row_f32_scalar(data, n, out, ctx);
}

/* ---------------------------------------------------------------- float64: shortest digits */

/* floor(log10(2**e)), floor(log10(3/4 * 2**e)) and floor(log2(10**e)) by multiply and shift,
 * exact over the float64 exponent range (as in Schubfach and Ryu). */
static inline int oipcodec_flog10_pow2(int e) { return (e * 1262611) >> 22; }
static inline int oipcodec_flog10_3q_pow2(int e) { return (e * 1262611 - 524031) >> 22; }
static inline int oipcodec_flog2_pow10(int e) { return (e * 1741647) >> 19; }

/* x * g / 2**128 truncated to odd: the integer part, with the lowest bit set when the fraction
 * is above 2**-63 (Schubfach's rounding to odd; g = {hi, lo}). */
static inline uint64_t oipcodec_f64_scale(uint64_t g_hi, uint64_t g_lo, uint64_t x) {
    uint64_t x1 = oipcodec_mulhi64(g_lo, x);
    uint64_t y1, y0 = oipcodec_mul128(g_hi, x, &y1);
    uint64_t z = y0 + x1;
    y1 += z < y0;
    return y1 | (z > 1);
}

/* The shortest digits of a positive finite nonzero float64 given by its bits without the
 * sign: returns d (up to 17 digits, possibly with trailing zeros), the value's decimal being
 * d * 10**(*e10). Schubfach (Giulietti, see the top of this file) on float64: v = c * 2**q,
 * the rounding interval's ends and v scaled by g ~ 10**-k (the parser's table of 128-bit
 * powers of five, rounded up where inexact) and truncated to odd; the one multiple of
 * 10 * 10**k inside if there is one, else the closer of v's unit neighbours (ties: even). */
static inline uint64_t oipcodec_f64_shortest(uint64_t mag, int *e10) {
    uint64_t field = mag >> 52, m = mag & 0xFFFFFFFFFFFFFull;
    uint64_t c = field ? m | 1ull << 52 : m;
    int q = field ? (int)field - 1075 : -1074;
    uint64_t open = c & 1; /* odd: the interval's ends are excluded */
    int closer = m == 0 && field > 1; /* the float below is half as far */
    int k = closer ? oipcodec_flog10_3q_pow2(q) : oipcodec_flog10_pow2(q);
    int h = q + oipcodec_flog2_pow10(-k) + 1; /* 1..4 */
    int p = -k;
    const uint64_t *t = p <= OIPCODEC_POW5_MAX ? oipcodec_pow5_128[p - OIPCODEC_POW5_MIN]
                                               : oipcodec_pow5_128_tail[p - OIPCODEC_POW5_MAX - 1];
    /* The table is floored; Schubfach wants floor + 1 unless 10**p scales exactly (5**p has
     * at most 128 bits for 0 <= p <= 55). */
    uint64_t g_lo = t[1] + (uint64_t)(p < 0 || p > 55);
    uint64_t g_hi = t[0] + (g_lo < t[1]);
    uint64_t cb = c << 2;
    uint64_t vbl = oipcodec_f64_scale(g_hi, g_lo, (cb - 2 + (uint64_t)closer) << h);
    uint64_t vb = oipcodec_f64_scale(g_hi, g_lo, cb << h);
    uint64_t vbr = oipcodec_f64_scale(g_hi, g_lo, (cb + 2) << h);
    uint64_t lower = vbl + open, upper = vbr - open;
    uint64_t s = vb >> 2, sp = s / 10;
    /* Every test computed and the choice made by masks, as in oipcodec_f32_shortest: which
     * candidate wins varies from element to element and would be mispredicted. */
    uint64_t up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
    uint64_t use10 = (uint64_t)(s >= 10) & (up_in ^ wp_in); /* one multiple of 10 inside */
    uint64_t u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
    uint64_t round_up = (vb > 4 * s + 2) | ((vb == 4 * s + 2) & s & 1);
    uint64_t one = u_in ^ w_in; /* exactly one of s and s + 1 inside */
    uint64_t unit = s + ((one & w_in) | (~one & round_up & 1));
    uint64_t mask = 0 - use10;
    *e10 = k + (int)use10;
    return ((sp + wp_in) & mask) | (unit & ~mask);
}

/* The fast path of the float64 writer: the shortest digits of a normal float64 that is not a
 * power of two (mag: its bits without the sign), scaled to exactly 17 digits, from one
 * 64x128-bit product; or 0 for the exact path (oipcodec_f64_shortest) to settle: zero,
 * subnormals, powers of two, infinities and NaNs, and the rare values too close to a decision
 * for the truncated product (none of 10**7 standard normal samples). Zmij's idea, as in the
 * FP32 fast path (Victor Zverovich's Schubfach-based writer, https://github.com/vitaut/zmij,
 * MIT licence; the code here is this project's own): v scaled once, the interval's half width
 * a shift of the same table entry instead of two more products.
 *
 * In units of 10**k (k and h as in oipcodec_f64_shortest, g the parser's table entry for
 * 10**-k as it is, floored), with 64 fraction bits: V * 2**64 = (c << h) * g / 2**64, the
 * 128-bit fixed-point number {vh, vl}, and the half width D * 2**64 = g / 2**(65 - h), {dh,
 * dl}. g is less than 1 below the exact scale and c << h < 2**57, so vh:vl is at most 1 + 2**-7
 * below the exact V * 2**64 and never above, and the same holds for delta: the computed ends
 * are within 2.02 units of 2**-64 of the exact ones. Every decision below is sent to the exact
 * path when its margin is not above that: the multiple of 10 within 2 of the lower end, the
 * upper end's fraction within 4 of an integer (its integer part uncertain), V's fraction
 * within 4 of 1/2. Since 2**q >= 10**k, D >= 1/2 and V >= 2**52: the nearest unit to V is
 * inside the interval, and the interval holds at most one multiple of 10 (2D < 10), which,
 * when it holds one, is the shortest. Checked against the exact path on 2 * 10**9 values
 * (random bit patterns, normal samples, short decimals and their neighbours, mantissas with
 * few bits set) as well as through repr() (tools/check_f64_writer.py). */
static inline uint64_t oipcodec_f64_fast(uint64_t mag, int *e10) {
    uint64_t field = mag >> 52, m = mag & 0xFFFFFFFFFFFFFull;
    int q = (int)field - 1075;
    int k = oipcodec_flog10_pow2(q);
    int h = q + oipcodec_flog2_pow10(-k) + 1; /* 1..4 */
    int p = -k;
    const uint64_t *t;
    uint64_t g_lo, g_hi, x, vh, vl, x1, dh, dl, th, tl, bh, bl, s10, ah, d, up, in10, sel, lt;
    *e10 = k;
    if (field - 1 >= 0x7FE || m == 0) {
        return 0; /* zero, subnormal, power of two, infinity, NaN */
    }
    t = p <= OIPCODEC_POW5_MAX ? oipcodec_pow5_128[p - OIPCODEC_POW5_MIN]
                               : oipcodec_pow5_128_tail[p - OIPCODEC_POW5_MAX - 1];
    g_hi = t[0];
    g_lo = t[1];
    x = (m | 1ull << 52) << h;
    x1 = oipcodec_mulhi64(g_lo, x);
    vl = oipcodec_mul128(g_hi, x, &vh);
    vl += x1;
    vh += vl < x1;
    /* D * 2**64 = g >> (65 - h), the shifts split so that none is by 64 */
    dh = g_hi >> 1 >> (64 - h);
    dl = g_hi << (h - 1) | g_lo >> 1 >> (64 - h);
    tl = vl + dl;
    th = vh + dh + (tl < dl);
    bl = vl - dl;
    bh = vh - dh - (vl < dl);
    /* the multiple of 10 at or below top's integer part, inside when above bottom */
    s10 = th / 10 * 10;
    ah = s10 - bh; /* at10 - bottom, 128 bits: {ah, -bl} */
    ah -= bl != 0;
    in10 = (uint64_t)((int64_t)ah >= 0);
    up = vl > 0x8000000000000000ull;
    sel = 0 - in10;
    d = (s10 & sel) | ((vh + up) & ~sel);
    /* To the exact path when a margin is too small: at10 - bottom within [-2, 2] (units of
     * 2**-64), top's fraction within 4 of an integer (its integer part uncertain), V's
     * fraction within 4 of 1/2. */
    if (((ah == 0) & (0 - bl <= 2)) | ((ah == UINT64_MAX) & (bl <= 2)) | (tl + 4 <= 8) |
        (vl - 0x8000000000000000ull + 4 <= 8)) {
        return 0; /* one branch, rarely taken: ah is 0 or all ones often */
    }
    /* V >= 2**52: d has 16 or 17 digits; scaled to 17 by a multiply, not a branch (which
     * of the two varies from element to element) */
    lt = d < 10000000000000000ull;
    *e10 = k - (int)lt;
    return d * (1 + 9 * lt);
}

/* Decimal digits of v (1 for 0), as oipcodec_count_digits_u32. */
static inline int oipcodec_count_digits_u64(uint64_t v) {
    int t = ((64 - oipcodec_clz64(v | 1)) * 1233) >> 12;
    return t + 1 - ((v | 1) < oipcodec_pow10_u64[t]);
}

/* oipcodec_f64_shortest's digits scaled to 17 (the fast path's form), kept out of line: the
 * row writer calls it rarely, and inlined it would crowd the loop's registers. */
static OIPCODEC_NOINLINE uint64_t oipcodec_f64_exact17(uint64_t mag, int *e10) {
    uint64_t d = oipcodec_f64_shortest(mag, e10);
    int nd = oipcodec_count_digits_u64(d);
    *e10 -= 17 - nd;
    return d * oipcodec_pow10_u64[17 - nd];
}

/* Longest float64 text: "-0.00001" and 16 more digits, or "-d.dddddddddddddddde-308". The
 * writer stores at most 33 bytes from the element's start (a 32-byte text after the sign),
 * so the buffer needs OIPCODEC_F64_SLACK bytes at its end (33 <= 24 + 32). */
#define OIPCODEC_F64_MAX 24
#define OIPCODEC_F64_SLACK 32
#define OIPCODEC_F64_BLOCK 64

#include "oipcodec/json_f64.h"

/* The text words of 17-digit numbers: for i < count (d17[i] < 10**17), first[i] the first
 * digit as a character, w1[i] and w2[i] digits 2-9 and 10-17 as ASCII (first in the lowest
 * byte), nd[i] the number of digits without trailing zeros. oipcodec_f64_words_avx512
 * (json_f64.h) computes the same eight elements at a time. */
static inline void oipcodec_f64_words(const uint64_t *d17, ptrdiff_t count, uint64_t *first,
                                      uint64_t *w1, uint64_t *w2, uint64_t *nd) {
    ptrdiff_t j;
    for (j = 0; j < count; j++) {
        uint64_t f = d17[j] / 10000000000000000ull, a, b;
        int n;
        oipcodec_digits16_bytes(d17[j] - f * 10000000000000000ull, &a, &b);
        /* trailing zero digits are high zero bytes */
        n = b ? 17 - (oipcodec_clz64(b) >> 3) : a ? 9 - (oipcodec_clz64(a) >> 3) : 1;
        nd[j] = (uint64_t)n;
        first[j] = '0' + f;
        w1[j] = a | OIPCODEC_ASCII8;
        w2[j] = b | OIPCODEC_ASCII8;
    }
}

/* float64 elements (native byte order) in the reference layout, each followed by a comma.
 * Three passes per block: the digits of all (the fast path, the exact path for what it
 * leaves), their text words, then the layout. Where the processor has AVX-512 (and the row
 * has 8 elements or more), oipcodec_f64_block_avx512 (json_f64.h) does the first two and
 * lays out the texts too, which the last pass then copies. Otherwise the 17 digit positions
 * (first digit, then two 8-digit words, padded with '0's) are laid out with fixed-width
 * overlapping stores of words assembled in registers. */
OIPCODEC_MAYBE_UNUSED
OIPCODEC_HOT static char *oipcodec_row_f64(const void *data, ptrdiff_t n, char *out,
                                          const void *ctx) {
    const uint64_t *v = (const uint64_t *)data;
    uint64_t digits[OIPCODEC_F64_BLOCK], firsts[OIPCODEC_F64_BLOCK], w1s[OIPCODEC_F64_BLOCK];
    uint64_t w2s[OIPCODEC_F64_BLOCK], nds[OIPCODEC_F64_BLOCK];
    int exps[OIPCODEC_F64_BLOCK];
    ptrdiff_t base;
#if OIPCODEC_SIMD_X86
    uint8_t text[OIPCODEC_F64_BLOCK][32];
    uint64_t lens[OIPCODEC_F64_BLOCK];
    int simd = n >= 8 && (oipcodec_simd_features() & OIPCODEC_SIMD_AVX512_VBMI);
#endif
    (void)ctx;
    for (base = 0; base < n; base += OIPCODEC_F64_BLOCK) {
        ptrdiff_t count = n - base < OIPCODEC_F64_BLOCK ? n - base : OIPCODEC_F64_BLOCK, j;
#if OIPCODEC_SIMD_X86
        if (simd) {
            oipcodec_f64_block_avx512(v + base, count, digits, exps, text, lens);
        } else
#endif
        {
            for (j = 0; j < count; j++) {
                uint64_t mag = v[base + j] & 0x7FFFFFFFFFFFFFFFull;
                uint64_t d = oipcodec_f64_fast(mag, &exps[j]);
                if (d == 0 && mag - 1 < 0x7FEFFFFFFFFFFFFFull) {
                    d = oipcodec_f64_exact17(mag, &exps[j]);
                }
                digits[j] = d;
            }
            oipcodec_f64_words(digits, count, firsts, w1s, w2s, nds);
        }
        for (j = 0; j < count; j++) {
            uint64_t bits = v[base + j], mag = bits & 0x7FFFFFFFFFFFFFFFull, first, w1, w2;
            int nd, E = exps[j] + 16; /* value = d1.d2... * 10**E */
            if (mag >= 0x7FF0000000000000ull) {
                if (mag != 0x7FF0000000000000ull) {
                    memcpy(out, "NaN,", 4);
                    out += 4;
                } else if (bits >> 63) {
                    memcpy(out, "-Infinity,", 10);
                    out += 10;
                } else {
                    memcpy(out, "Infinity,", 9);
                    out += 9;
                }
                continue;
            }
            *out = '-';
            out += bits >> 63;
            if (mag == 0) {
                memcpy(out, "0.0,", 4);
                out += 4;
                continue;
            }
            /* digit i of the 17 is byte i of (first, w1, w2): stored from registers, never
             * read back (a wide load of narrower stores stalls) */
#if OIPCODEC_SIMD_X86
            if (simd) {
                memcpy(out, text[j], 32);
                out += lens[j];
                *out++ = ',';
                continue;
            }
#endif
            first = firsts[j];
            w1 = w1s[j];
            w2 = w2s[j];
            nd = (int)nds[j];
            if (E >= 0 && E <= OIPCODEC_F64_HI_E) {
                /* the digits padded with '0's, the point after digit E, then the digits after
                 * it (just "0" for integral values): digits E + 1.. are (w1, w2) shifted right
                 * by E bytes */
                int frac = nd - 1 - E, sh = 8 * E;
                uint64_t lo, hi;
                oipcodec_store_le64(out, first | w1 << 8);
                oipcodec_store_le64(out + 8, w1 >> 56 | w2 << 8);
                out[E + 1] = '.';
                if (sh < 64) {
                    lo = w1 >> sh | w2 << (63 - sh) << 1;
                    hi = w2 >> sh;
                } else {
                    lo = w2 >> (sh - 64);
                    hi = 0;
                }
                oipcodec_store_le64(out + E + 2, lo);
                oipcodec_store_le64(out + E + 10, hi);
                out += E + 2 + (frac > 1 ? frac : 1);
            } else if (E < 0 && E >= OIPCODEC_F64_LO_E) {
                oipcodec_store_le64(out, 0x3030303030302E30ull); /* "0.000000" */
                oipcodec_store_le64(out + 1 - E, first | w1 << 8);
                oipcodec_store_le64(out + 9 - E, w1 >> 56 | w2 << 8);
                oipcodec_store_le64(out + 17 - E, w2 >> 56);
                out += 1 - E + nd;
            } else {
                out[0] = (char)first;
                out[1] = '.';
                oipcodec_store_le64(out + 2, w1);
                oipcodec_store_le64(out + 10, w2);
                out += nd > 1 ? nd + 1 : 1;
                *out++ = 'e';
                *out++ = E < 0 ? '-' : '+';
                out = oipcodec_write_exponent(out, (uint32_t)(E < 0 ? -E : E));
            }
            *out++ = ',';
        }
    }
    return n ? out - 1 : out;
}

/* ---------------------------------------------------------------- 16-bit float tables */

/* The shortest decimal c in the rounding interval of v (v > 0 finite, exactly a value of the
 * 16-bit type; lo/hi the interval's ends, included when `inclusive`), and among those of that
 * length the one closest to v: for each length p, the correctly rounded p-digit decimal of v
 * is the closest one; when it falls outside the interval, the interval being on one side can
 * still hold its neighbour. Writes the digits (trailing zeros removed) and returns their
 * count, with the decimal exponent in *e10; 0 if none up to 17 digits (cannot happen).
 *
 * Checking c against the interval goes through strtod: c has at most 5 digits and the ends
 * have at most 12 significant bits, so c and an end are either equal or farther apart than
 * double precision can blur (tests compare every bit pattern with the exact reference). */
OIPCODEC_MAYBE_UNUSED
static int oipcodec_shortest_small(double v, double lo, double hi, int inclusive, char *digits,
                                   int *e10) {
    char buf[64];
    int p;
    for (p = 1; p <= 17; p++) {
        uint64_t d = 0, cands[3];
        int exp10, k, i, nd = 0;
        const char *s;
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        /* Parse d[.ddd]e[+-]XX; any non-digit before 'e' is the (locale's) decimal point. */
        for (s = buf; *s && *s != 'e' && *s != 'E'; s++) {
            if (*s >= '0' && *s <= '9') {
                d = d * 10 + (uint64_t)(*s - '0');
                nd++;
            }
        }
        if (!*s) {
            return 0;
        }
        exp10 = atoi(s + 1);
        k = exp10 - (nd - 1);
        cands[0] = d;
        cands[1] = d + 1;
        cands[2] = d - 1;
        for (i = 0; i < 3; i++) {
            uint64_t c = cands[i];
            double x;
            int n;
            char tmp[40];
            if (c == 0) {
                continue;
            }
            snprintf(tmp, sizeof tmp, "%llue%d", (unsigned long long)c, k);
            x = strtod(tmp, NULL);
            if ((x > lo && x < hi) || (inclusive && (x == lo || x == hi))) {
                int kk = k;
                while (c % 10 == 0) {
                    c /= 10;
                    kk++;
                }
                n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)c);
                memcpy(digits, tmp, (size_t)n);
                *e10 = kk + n - 1;
                return n;
            }
        }
    }
    return 0;
}

/* Fills the text table of a 16-bit float type: bf16 = 0 for FP16 (1 sign, 5 exponent, 10
 * significand bits), 1 for BF16 (1, 8, 7). `table` holds 65536 * OIPCODEC_HALF_SLOT bytes of
 * text followed by 65536 length bytes. Returns 0, or -1 if a value found no digits. */
OIPCODEC_MAYBE_UNUSED
static int oipcodec_build_half_table(char *table, int bf16) {
    uint8_t *lens = (uint8_t *)table + 65536 * OIPCODEC_HALF_SLOT;
    int mbits = bf16 ? 7 : 10, ebits = bf16 ? 8 : 5;
    int emax = (1 << ebits) - 1, bias = (1 << (ebits - 1)) - 1;
    uint32_t b;
    for (b = 0; b < 65536; b++) {
        char *slot = table + (size_t)b * OIPCODEC_HALF_SLOT;
        char *end = slot;
        int negative = (b >> 15) & 1;
        int efield = (int)((b >> mbits) & (uint32_t)emax);
        uint32_t m = b & ((1u << mbits) - 1);
        memset(slot, ' ', OIPCODEC_HALF_SLOT);
        if (efield == emax) {
            if (m) {
                memcpy(slot, "NaN", 3);
                end = slot + 3;
            } else if (negative) {
                memcpy(slot, "-Infinity", 9);
                end = slot + 9;
            } else {
                memcpy(slot, "Infinity", 8);
                end = slot + 8;
            }
        } else if (efield == 0 && m == 0) {
            end = oipcodec_write_float_layout(slot, negative, "0", 1, 0, 0, 0);
        } else {
            /* value = sig * 2**q exactly; the neighbours are one unit of 2**q away, except
             * below a power of two (not the smallest normal), where the gap halves. */
            uint32_t sig = efield ? (m | (1u << mbits)) : m;
            int q = (efield ? efield : 1) - bias - mbits;
            double v = ldexp((double)sig, q);
            double ulp = ldexp(1.0, q);
            double hi = v + ulp / 2;
            double lo = (m == 0 && efield > 1) ? v - ulp / 4 : v - ulp / 2;
            char digits[24];
            int e10 = 0;
            int n = oipcodec_shortest_small(v, lo, hi, (sig & 1) == 0, digits, &e10);
            if (n == 0) {
                return -1;
            }
            end = oipcodec_write_float_layout(slot, negative, digits, n, e10, OIPCODEC_F32_LO_E,
                                              OIPCODEC_F32_HI_E);
        }
        if (end - slot > OIPCODEC_HALF_SLOT) {
            return -1; /* a text longer than its slot would overrun the next one */
        }
        lens[b] = (uint8_t)(end - slot);
    }
    return 0;
}

/* ---------------------------------------------------------------- non-finite floats */

static inline int oipcodec_f32_nonfinite(uint32_t u) { return (u & 0x7F800000u) == 0x7F800000u; }

static inline int oipcodec_f64_nonfinite(uint64_t u) {
    return (u & 0x7FF0000000000000ull) == 0x7FF0000000000000ull;
}

/* Number of non-finite elements of a float32 (wide = 0) or float64 (wide = 1) array, and the
 * index of the first one in *first (-1 if none). */
OIPCODEC_MAYBE_UNUSED
static ptrdiff_t oipcodec_count_nonfinite(const void *data, ptrdiff_t n, int wide,
                                          ptrdiff_t *first) {
    ptrdiff_t i, count = 0;
    *first = -1;
    if (wide) {
        const uint64_t *v = (const uint64_t *)data;
        for (i = 0; i < n; i++) {
            count += oipcodec_f64_nonfinite(v[i]);
        }
    } else {
        const uint32_t *v = (const uint32_t *)data;
        for (i = 0; i < n; i++) {
            count += oipcodec_f32_nonfinite(v[i]);
        }
    }
    if (count) {
        for (i = 0; i < n; i++) {
            int bad = wide ? oipcodec_f64_nonfinite(((const uint64_t *)data)[i])
                           : oipcodec_f32_nonfinite(((const uint32_t *)data)[i]);
            if (bad) {
                *first = i;
                break;
            }
        }
    }
    return count;
}

/* The token of a non-finite element. */
static inline const char *oipcodec_nonfinite_token(const void *data, ptrdiff_t i, int wide,
                                                   size_t *len) {
    int nan, negative;
    if (wide) {
        uint64_t u = ((const uint64_t *)data)[i];
        nan = (u & 0x000FFFFFFFFFFFFFull) != 0;
        negative = (int)(u >> 63);
    } else {
        uint32_t u = ((const uint32_t *)data)[i];
        nan = (u & 0x007FFFFFu) != 0;
        negative = (int)(u >> 31);
    }
    if (nan) {
        *len = 3;
        return "NaN";
    }
    *len = negative ? 9 : 8;
    return negative ? "-Infinity" : "Infinity";
}

/* ---------------------------------------------------------------- BYTES as JSON strings */

/* Length of the longest valid UTF-8 prefix of s[0:n] (n if all of it is valid). Rejects what
 * Python's strict UTF-8 codec rejects: overlong forms, surrogates, code points above
 * U+10FFFF, truncated sequences. */
OIPCODEC_MAYBE_UNUSED
static ptrdiff_t oipcodec_utf8_valid_prefix(const unsigned char *s, ptrdiff_t n) {
    ptrdiff_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) {
                return i;
            }
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
            if (i + 2 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xC0) != 0x80) {
                return i;
            }
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
            if (i + 3 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xC0) != 0x80 ||
                (s[i + 3] & 0xC0) != 0x80) {
                return i;
            }
            i += 4;
        } else {
            return i;
        }
    }
    return n;
}

/* Bytes each input byte takes inside a JSON string: 1, 2 for the short escapes, 6 for
 * \u00XX. */
static const unsigned char oipcodec_escape_len[256] = {
    6, 6, 6, 6, 6, 6, 6, 6, 2, 2, 2, 6, 2, 2, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* Size of s[0:n] as the contents of a JSON string (quotes not counted). */
OIPCODEC_MAYBE_UNUSED
static size_t oipcodec_escaped_size(const unsigned char *s, ptrdiff_t n) {
    size_t size = 0;
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        size += oipcodec_escape_len[s[i]];
    }
    return size;
}

/* Writes s[0:n] as a JSON string, quotes included. */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_write_string(char *out, const unsigned char *s, ptrdiff_t n) {
    static const char hex[] = "0123456789abcdef";
    ptrdiff_t i = 0, run = 0;
    *out++ = '"';
    while (i < n) {
        unsigned char c;
        /* Copy the run of bytes that need no escape in one go. */
        run = i;
        while (i < n && oipcodec_escape_len[s[i]] == 1) {
            i++;
        }
        memcpy(out, s + run, (size_t)(i - run));
        out += i - run;
        if (i >= n) {
            break;
        }
        c = s[i++];
        *out++ = '\\';
        switch (c) {
        case '"': *out++ = '"'; break;
        case '\\': *out++ = '\\'; break;
        case '\b': *out++ = 'b'; break;
        case '\f': *out++ = 'f'; break;
        case '\n': *out++ = 'n'; break;
        case '\r': *out++ = 'r'; break;
        case '\t': *out++ = 't'; break;
        default:
            memcpy(out, "u00", 3);
            out[3] = hex[c >> 4];
            out[4] = hex[c & 15];
            out += 5;
        }
    }
    *out++ = '"';
    return out;
}

/* A BYTES element: its bytes (valid UTF-8, checked by the caller) and their count. */
typedef struct {
    const unsigned char *data;
    ptrdiff_t size;
} oipcodec_piece;

OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_strings(const void *data, ptrdiff_t n, char *out, const void *ctx) {
    const oipcodec_piece *pieces = (const oipcodec_piece *)data;
    ptrdiff_t i;
    (void)ctx;
    for (i = 0; i < n; i++) {
        if (i) {
            *out++ = ',';
        }
        out = oipcodec_write_string(out, pieces[i].data, pieces[i].size);
    }
    return out;
}

#endif
