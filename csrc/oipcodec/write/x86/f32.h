/* The FP32 JSON writer in SIMD lanes: oipcodec_row_f32's path on x86-64 processors with
 * AVX-512 (F, CD, BW, DQ, VL) or else AVX2, chosen once at run time by write/json.h. It includes
 * the scalar writer (write/f32.h), whose tables, exact path and text it shares.
 *
 * The scalar writer spends its time on two long chains of dependent integer operations per
 * element (the digits, then their layout) and on branches between layouts that real data
 * mispredicts. Here both chains run in eight 64-bit lanes (four with AVX2) and no element
 * takes a branch, which makes it about 2.6 times as fast (AVX-512;
 * docs/measurements.md#kernel-design-decisions). How: above oipcodec_row_f32_avx512.
 * Converting many numbers at once in SIMD lanes, each to its own variable-length text, is
 * described for integers by Petr Kobalicek, "64-bit Integers to Strings with AVX-512" (Sneller,
 * 2023, https://sneller.ai/blog/avx512-itoa/), and Daniel Lemire, "Converting integers to
 * decimal strings faster with AVX-512" (2022, https://lemire.me/blog/2022/03/28/); the float
 * layout by a table of shuffle patterns is this project's. The text is byte for byte the
 * scalar writer's: tools/check_f32_writer.sh compares both SIMD writers with the exact path on
 * all 2**32 bit patterns.
 *
 * Built with GCC or clang for x86-64 only (a target attribute, not a compiler flag, so the
 * rest of the extension stays baseline x86-64); elsewhere OIPCODEC_SIMD_X86 is 0 and the scalar
 * writer is the only one. */
#ifndef OIPCODEC_WRITE_X86_F32_H
#define OIPCODEC_WRITE_X86_F32_H

#include "oipcodec/common/cpu.h"
#include "oipcodec/write/f32.h"
#include "oipcodec/write/x86/digits.h"

#if OIPCODEC_SIMD_X86

#include "oipcodec/write/f32_tokens.h"

#if defined(_MSC_VER)
#define OIPCODEC_F32_SSSE3 /* MSVC takes no target attributes (common/cpu.h) */
#else
#define OIPCODEC_F32_SSSE3 __attribute__((target("ssse3")))
#endif

/* Shorter rows go to the scalar writer (oipcodec_row_f32): a row's three passes over 8 lanes
 * cost more than the scalar writer for 1 to 3 elements (docs/measurements.md#kernel-design-decisions). */
#ifndef OIPCODEC_F32_SIMD_MIN_N
#define OIPCODEC_F32_SIMD_MIN_N 4
#endif
/* Which SIMD writer this process runs (oipcodec_simd_features): 2 AVX-512, 1 AVX2, 0 none. */
static inline int oipcodec_f32_simd_level(void) {
    int features = oipcodec_simd_features();
    return features & OIPCODEC_SIMD_AVX512 ? 2 : features & OIPCODEC_SIMD_AVX2 ? 1 : 0;
}

/* The digits of 8 elements (lanes beyond `live` read as 0): d and k as oipcodec_row_f32's fast
 * path computes them, 0 and 0 for zeros; returns the lanes the exact path must decide. */
OIPCODEC_TARGET_AVX512
static inline __mmask8 oipcodec_f32_digits_x8(const uint32_t *v, __mmask8 live, uint32_t *digits,
                                              int *exps) {
    const __m256i bits = _mm256_maskz_loadu_epi32(live, v);
    const __m256i mag = _mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF));
    const __m256i field = _mm256_srli_epi32(mag, 23);
    const __m256i m = _mm256_and_si256(mag, _mm256_set1_epi32(0x7FFFFF));
    /* normal (field 1..254) and not a power of two */
    const __mmask8 fast =
        _mm256_cmplt_epu32_mask(_mm256_sub_epi32(field, _mm256_set1_epi32(1)),
                                _mm256_set1_epi32(0xFE)) &
        _mm256_test_epi32_mask(m, m);
    const __mmask8 nonzero = _mm256_test_epi32_mask(mag, mag);
    /* k = floor(log10(2**q)) and h = q + 33 + floor(log2(10**-k)) by multiply and shift, as
     * oipcodec_flog10_pow2 and oipcodec_flog2_pow10: equal to oipcodec_f32_k and
     * oipcodec_f32_h for every field (q of field 0 is field 1's). */
    const __m256i q = _mm256_sub_epi32(_mm256_max_epi32(field, _mm256_set1_epi32(1)),
                                       _mm256_set1_epi32(150));
    const __m256i k = _mm256_srai_epi32(_mm256_mullo_epi32(q, _mm256_set1_epi32(1262611)), 22);
    const __m256i h = _mm256_add_epi32(
        _mm256_add_epi32(q, _mm256_set1_epi32(33)),
        _mm256_srai_epi32(
            _mm256_mullo_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), k),
                               _mm256_set1_epi32(1741647)),
            19));
    const __m512i g = _mm512_i32gather_epi64(_mm256_sub_epi32(_mm256_set1_epi32(31), k),
                                             (const void *)oipcodec_f32_pow10, 8);
    const __m512i c = _mm512_cvtepu32_epi64(_mm256_or_si256(m, _mm256_set1_epi32(0x800000)));
    const __m512i h64 = _mm512_cvtepi32_epi64(h);
    const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
    /* V * 2**32 = (c << h) * g / 2**64 = c * g / 2**(64 - h), h in 33..36: with g's halves,
     * c * g_hi * 2**(h - 32) + (c * g_lo >> (64 - h)), exact (the low product's dropped bits
     * are below the high product's). */
    const __m512i lo = _mm512_mul_epu32(c, g);
    const __m512i hi = _mm512_mul_epu32(c, _mm512_srli_epi64(g, 32));
    const __m512i mid = _mm512_add_epi64(
        _mm512_sllv_epi64(hi, _mm512_sub_epi64(h64, _mm512_set1_epi64(32))),
        _mm512_srlv_epi64(lo, _mm512_sub_epi64(_mm512_set1_epi64(64), h64)));
    const __m512i delta = _mm512_srlv_epi64(g, _mm512_sub_epi64(_mm512_set1_epi64(65), h64));
    const __m512i top = _mm512_add_epi64(mid, delta), bottom = _mm512_sub_epi64(mid, delta);
    /* (top >> 32) / 10 * 10 by the reciprocal 0xCCCCCCCD / 2**35 (exact for 32-bit values) */
    const __m512i tens = _mm512_srli_epi64(
        _mm512_mul_epu32(_mm512_srli_epi64(top, 32), _mm512_set1_epi64(0xCCCCCCCD)), 35);
    const __m512i s10 = _mm512_mul_epu32(tens, _mm512_set1_epi64(10));
    const __m512i at10 = _mm512_slli_epi64(s10, 32);
    const __m512i mid_frac = _mm512_and_si512(mid, low32);
    const __mmask8 in10 = _mm512_cmpgt_epu64_mask(at10, bottom);
    const __mmask8 up = _mm512_cmpgt_epu64_mask(mid_frac, _mm512_set1_epi64(0x80000000));
    const __m512i rounded = _mm512_mask_add_epi64(_mm512_srli_epi64(mid, 32), up,
                                                  _mm512_srli_epi64(mid, 32),
                                                  _mm512_set1_epi64(1));
    const __m512i d = _mm512_mask_blend_epi64(in10, rounded, s10);
    /* the scalar fast path's doubts: an end within 1 of the multiple of 10, top's integer part
     * uncertain, V's fraction exactly 1/2 */
    const __mmask8 doubt =
        _mm512_cmple_epu64_mask(
            _mm512_add_epi64(_mm512_sub_epi64(bottom, at10), _mm512_set1_epi64(1)),
            _mm512_set1_epi64(2)) |
        _mm512_cmpeq_epu64_mask(at10, top) |
        _mm512_cmpeq_epu64_mask(_mm512_and_si512(top, low32), low32) |
        _mm512_cmpeq_epu64_mask(mid_frac, _mm512_set1_epi64(0x80000000));
    _mm256_storeu_si256((__m256i *)digits, _mm512_cvtepi64_epi32(_mm512_maskz_mov_epi64(fast, d)));
    _mm256_storeu_si256((__m256i *)exps, _mm256_maskz_mov_epi32(fast, k));
    return (__mmask8)(((fast & doubt) | (~fast & nonzero)) & live);
}

/* The text sources and pattern indexes of 8 elements whose digits and exponents are known
 * (zero: 0 and 0): src gets 16 bytes per element, meta the pattern index | sign << 16. */
OIPCODEC_TARGET_AVX512
static inline void oipcodec_f32_layout_x8(const uint32_t *v, __mmask8 live, const uint32_t *digits,
                                          const int *exps, unsigned char *src, uint32_t *meta) {
    const __m512i d = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)digits));
    const __m512i k = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)exps));
    const __m512i neg = _mm512_cvtepu32_epi64(
        _mm256_srli_epi32(_mm256_maskz_loadu_epi32(live, v), 31));
    const __m512i one = _mm512_set1_epi64(1);
    /* digit count of d (1 for 0), as oipcodec_count_digits_u32 */
    const __m512i pow10_lo = _mm512_setr_epi64(1, 10, 100, 1000, 10000, 100000, 1000000, 10000000);
    const __m512i pow10_hi = _mm512_setr_epi64(100000000, 1000000000, 0, 0, 0, 0, 0, 0);
    const __m512i scale_lo = _mm512_setr_epi64(0, 100000000, 10000000, 1000000, 100000, 10000,
                                               1000, 100);
    const __m512i scale_hi = _mm512_setr_epi64(10, 1, 0, 0, 0, 0, 0, 0);
    const __m512i d1 = _mm512_or_si512(d, one);
    const __m512i bl = _mm512_sub_epi64(_mm512_set1_epi64(64), _mm512_lzcnt_epi64(d1));
    const __m512i t = _mm512_srli_epi64(_mm512_mul_epu32(bl, _mm512_set1_epi64(1233)), 12);
    const __mmask8 below = _mm512_cmplt_epu64_mask(
        d1, _mm512_permutex2var_epi64(pow10_lo, t, pow10_hi));
    const __m512i count = _mm512_mask_sub_epi64(_mm512_add_epi64(t, one), below,
                                                _mm512_add_epi64(t, one), one);
    /* d scaled to 9 digits, its first digit and the other 8 as bytes (first in the lowest) */
    const __m512i d9 = _mm512_mul_epu32(d, _mm512_permutex2var_epi64(scale_lo, count, scale_hi));
    const __m512i first =
        _mm512_srli_epi64(_mm512_mul_epu32(d9, _mm512_set1_epi64(0x55E63B89)), 57);
    const __m512i rest =
        _mm512_sub_epi64(d9, _mm512_mul_epu32(first, _mm512_set1_epi64(100000000)));
    const __m512i w = oipcodec_digits8_avx512(rest);
    {
        /* significant digits: trailing zero digits are high zero bytes of w */
        const __m512i nd =
            _mm512_sub_epi64(_mm512_set1_epi64(9), _mm512_srli_epi64(_mm512_lzcnt_epi64(w), 3));
        const __m512i e = _mm512_sub_epi64(_mm512_add_epi64(k, count), one);
        const __m512i ae = _mm512_abs_epi64(e);
        const __m512i et = _mm512_srli_epi64(_mm512_mul_epu32(ae, _mm512_set1_epi64(205)), 11);
        const __m512i eo = _mm512_sub_epi64(ae, _mm512_mul_epu32(et, _mm512_set1_epi64(10)));
        const __mmask8 minus = _mm512_cmplt_epi64_mask(e, _mm512_setzero_si512());
        const __mmask8 positional =
            _mm512_cmpge_epi64_mask(e, _mm512_set1_epi64(OIPCODEC_F32_LO_E)) &
            _mm512_cmple_epi64_mask(e, _mm512_set1_epi64(OIPCODEC_F32_HI_E));
        const __m512i ascii = _mm512_set1_epi64((long long)OIPCODEC_ASCII8);
        /* bytes 0..8 the digits, 9 '.', 10 'e', 11 the exponent's sign, 12 and 13 its digits,
         * 14 and 15 '0' (write/f32_patterns.h) */
        const __m512i a =
            _mm512_or_si512(_mm512_or_si512(first, _mm512_slli_epi64(w, 8)), ascii);
        const __m512i sign = _mm512_mask_mov_epi64(_mm512_set1_epi64('+'), minus,
                                                   _mm512_set1_epi64('-'));
        const __m512i b = _mm512_or_si512(
            _mm512_or_si512(_mm512_srli_epi64(w, 56),
                            _mm512_set1_epi64(0x3030303000652E30ll)),
            _mm512_or_si512(_mm512_slli_epi64(sign, 24),
                            _mm512_or_si512(_mm512_slli_epi64(et, 32), _mm512_slli_epi64(eo, 40))));
        /* row: E + 6 when positional, else 19 (one exponent digit) or 20 (two) */
        const __m512i row = _mm512_mask_add_epi64(
            _mm512_mask_blend_epi64(_mm512_cmpge_epu64_mask(ae, _mm512_set1_epi64(10)),
                                    _mm512_set1_epi64(OIPCODEC_F32_ROWS - 3),
                                    _mm512_set1_epi64(OIPCODEC_F32_ROWS - 2)),
            positional, e, _mm512_set1_epi64(-OIPCODEC_F32_LO_E));
        const __m512i index = _mm512_add_epi64(
            _mm512_mul_epu32(row, _mm512_set1_epi64(9)), _mm512_sub_epi64(nd, one));
        const __m512i first4 = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
        const __m512i last4 = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
        _mm512_storeu_si512((void *)src, _mm512_permutex2var_epi64(a, first4, b));
        _mm512_storeu_si512((void *)(src + 64), _mm512_permutex2var_epi64(a, last4, b));
        _mm256_storeu_si256(
            (__m256i *)meta,
            _mm512_cvtepi64_epi32(_mm512_or_si512(index, _mm512_slli_epi64(neg, 16))));
    }
}

/* The lanes the fast path left (bit i: element i): their digits by the exact path, and the
 * non-finite ones added to *nonfinite. */
static inline void oipcodec_f32_settle(const uint32_t *block, ptrdiff_t j, unsigned exact,
                                       uint32_t *digits, int *exps, uint64_t *nonfinite) {
    while (exact) {
        ptrdiff_t i = j + oipcodec_ctz64(exact);
        uint32_t mag = block[i] & 0x7FFFFFFFu;
        exact &= exact - 1;
        if (mag >> 23 == 0xFF) {
            *nonfinite |= 1ull << i;
        } else {
            digits[i] = oipcodec_f32_shortest(mag, &exps[i]);
        }
    }
}

/* The text of count elements from their sources and patterns: '-' always stored and kept for
 * negative values, the shuffled source stored 16 bytes wide after it, then the comma. */
OIPCODEC_F32_SSSE3
static inline char *oipcodec_f32_text(const unsigned char *src, const uint32_t *meta,
                                      ptrdiff_t count, char *out) {
    ptrdiff_t j;
    for (j = 0; j < count; j++) {
        uint32_t index = meta[j] & 0xFFFF, negative = meta[j] >> 16;
        uint32_t len = negative + oipcodec_f32_pattern_len[index];
        __m128i text = _mm_shuffle_epi8(
            _mm_loadu_si128((const __m128i *)(src + 16 * j)),
            _mm_loadu_si128((const __m128i *)oipcodec_f32_patterns[index]));
        *out = '-';
        _mm_storeu_si128((__m128i *)(out + negative), text);
        out[len] = ',';
        out += len + 1;
    }
    return out;
}

/* oipcodec_row_f32 on an AVX-512 processor: the same text, in blocks of OIPCODEC_F32_BLOCK
 * elements, three passes each (digits, text sources, text):
 * - the digits: the scalar fast path's arithmetic lane by lane (the power of ten by a gather,
 *   its 64-bit product with the 24-bit significand as two 32x32-bit products, vpmuludq, and
 *   the decisions as mask compares); the lanes it cannot settle (subnormals, powers of two, the
 *   rare near-ties) go one by one to oipcodec_f32_shortest, exactly as in the scalar writer;
 * - the numbers of the text: the digit count (vplzcnt and the bit-length estimate of
 *   oipcodec_count_digits_u32), the nine digits as ASCII bytes (Paul Khuong's SWAR split, as in
 *   oipcodec_digits8, here in 32- and 16-bit lanes), the decimal exponent's sign and digits,
 *   and a layout row: a 16-byte source per element and the index of its pattern;
 * - the text: one byte shuffle (pshufb) of the source by a pattern from a table of 198
 *   (write/f32_patterns.h, written by tools/gen_f32_text_patterns.py), stored 16 bytes wide at
 *   the element's start, then the comma; the start advances by the pattern's length. */
OIPCODEC_MAYBE_UNUSED OIPCODEC_TARGET_AVX512
static char *oipcodec_row_f32_avx512(const void *data, ptrdiff_t n, char *out) {
    const uint32_t *v = (const uint32_t *)data;
    uint32_t digits[OIPCODEC_F32_BLOCK], meta[OIPCODEC_F32_BLOCK];
    int exps[OIPCODEC_F32_BLOCK];
    unsigned char src[OIPCODEC_F32_BLOCK * 16];
    ptrdiff_t base;
    for (base = 0; base < n; base += OIPCODEC_F32_BLOCK) {
        const uint32_t *block = v + base;
        ptrdiff_t count = n - base < OIPCODEC_F32_BLOCK ? n - base : OIPCODEC_F32_BLOCK, j;
        uint64_t nonfinite = 0;
        for (j = 0; j < count; j += 8) {
            __mmask8 live = (__mmask8)(count - j >= 8 ? 0xFF : (1u << (count - j)) - 1);
            oipcodec_f32_settle(block, j,
                                oipcodec_f32_digits_x8(block + j, live, digits + j, exps + j),
                                digits, exps, &nonfinite);
        }
        for (j = 0; j < count; j += 8) {
            __mmask8 live = (__mmask8)(count - j >= 8 ? 0xFF : (1u << (count - j)) - 1);
            oipcodec_f32_layout_x8(block + j, live, digits + j, exps + j, src + 16 * j, meta + j);
        }
        oipcodec_f32_tokens(block, nonfinite, src, meta);
        out = oipcodec_f32_text(src, meta, count, out);
    }
    return n ? out - 1 : out;
}

/* The AVX2 writer: the AVX-512 one's steps in four 64-bit lanes, with what AVX2 lacks built
 * from what it has: unsigned 64-bit compares as signed ones (every value compared is below
 * 2**62), the digit count by comparisons with 10**1..10**8, the significant digits by
 * counting nonzero digit bytes (psadbw) after smearing them downwards. */
OIPCODEC_TARGET_AVX2
static inline unsigned oipcodec_f32_digits_x4(const uint32_t *v, __m128i live, uint32_t *digits,
                                              int *exps) {
    const __m128i bits = _mm_maskload_epi32((const int *)v, live);
    const __m128i mag = _mm_and_si128(bits, _mm_set1_epi32(0x7FFFFFFF));
    const __m128i field = _mm_srli_epi32(mag, 23);
    const __m128i m = _mm_and_si128(mag, _mm_set1_epi32(0x7FFFFF));
    const __m128i fast32 = _mm_andnot_si128(
        _mm_cmpeq_epi32(m, _mm_setzero_si128()),
        _mm_and_si128(_mm_cmpgt_epi32(field, _mm_setzero_si128()),
                      _mm_cmpgt_epi32(_mm_set1_epi32(255), field)));
    const unsigned fast = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(fast32));
    const __m128i zero = _mm_cmpeq_epi32(mag, _mm_setzero_si128());
    const unsigned nonzero = 0xFu & ~(unsigned)_mm_movemask_ps(_mm_castsi128_ps(zero));
    const __m128i q = _mm_sub_epi32(_mm_max_epi32(field, _mm_set1_epi32(1)), _mm_set1_epi32(150));
    const __m128i k = _mm_srai_epi32(_mm_mullo_epi32(q, _mm_set1_epi32(1262611)), 22);
    const __m128i h = _mm_add_epi32(
        _mm_add_epi32(q, _mm_set1_epi32(33)),
        _mm_srai_epi32(_mm_mullo_epi32(_mm_sub_epi32(_mm_setzero_si128(), k),
                                       _mm_set1_epi32(1741647)),
                       19));
    const __m256i g = _mm256_i32gather_epi64((const long long *)oipcodec_f32_pow10,
                                             _mm_sub_epi32(_mm_set1_epi32(31), k), 8);
    const __m256i c = _mm256_cvtepu32_epi64(_mm_or_si128(m, _mm_set1_epi32(0x800000)));
    const __m256i h64 = _mm256_cvtepi32_epi64(h);
    const __m256i low32 = _mm256_set1_epi64x(0xFFFFFFFF);
    const __m256i lo = _mm256_mul_epu32(c, g);
    const __m256i hi = _mm256_mul_epu32(c, _mm256_srli_epi64(g, 32));
    const __m256i mid = _mm256_add_epi64(
        _mm256_sllv_epi64(hi, _mm256_sub_epi64(h64, _mm256_set1_epi64x(32))),
        _mm256_srlv_epi64(lo, _mm256_sub_epi64(_mm256_set1_epi64x(64), h64)));
    const __m256i delta = _mm256_srlv_epi64(g, _mm256_sub_epi64(_mm256_set1_epi64x(65), h64));
    const __m256i top = _mm256_add_epi64(mid, delta), bottom = _mm256_sub_epi64(mid, delta);
    const __m256i tens = _mm256_srli_epi64(
        _mm256_mul_epu32(_mm256_srli_epi64(top, 32), _mm256_set1_epi64x(0xCCCCCCCD)), 35);
    const __m256i s10 = _mm256_mul_epu32(tens, _mm256_set1_epi64x(10));
    const __m256i at10 = _mm256_slli_epi64(s10, 32);
    const __m256i mid_frac = _mm256_and_si256(mid, low32);
    const __m256i in10 = _mm256_cmpgt_epi64(at10, bottom);
    const __m256i up = _mm256_cmpgt_epi64(mid_frac, _mm256_set1_epi64x(0x80000000));
    const __m256i rounded = _mm256_sub_epi64(_mm256_srli_epi64(mid, 32), up);
    const __m256i d = _mm256_blendv_epi8(rounded, s10, in10);
    const __m256i near = _mm256_add_epi64(_mm256_sub_epi64(bottom, at10), _mm256_set1_epi64x(1));
    const __m256i doubt = _mm256_or_si256(
        _mm256_or_si256(
            _mm256_andnot_si256(
                _mm256_or_si256(_mm256_cmpgt_epi64(near, _mm256_set1_epi64x(2)),
                                _mm256_cmpgt_epi64(_mm256_setzero_si256(), near)),
                _mm256_set1_epi64x(-1)),
            _mm256_cmpeq_epi64(at10, top)),
        _mm256_or_si256(_mm256_cmpeq_epi64(_mm256_and_si256(top, low32), low32),
                        _mm256_cmpeq_epi64(mid_frac, _mm256_set1_epi64x(0x80000000))));
    const unsigned doubtful = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(doubt));
    const unsigned in = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(live));
    const __m256i pack = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    _mm_storeu_si128((__m128i *)digits,
                     _mm_and_si128(fast32, _mm256_castsi256_si128(
                                               _mm256_permutevar8x32_epi32(d, pack))));
    _mm_storeu_si128((__m128i *)exps, _mm_and_si128(fast32, k));
    return ((fast & doubtful) | (~fast & nonzero)) & in;
}

OIPCODEC_TARGET_AVX2
static inline void oipcodec_f32_layout_x4(const uint32_t *v, __m128i live, const uint32_t *digits,
                                          const int *exps, unsigned char *src, uint32_t *meta) {
    const __m128i d32 = _mm_loadu_si128((const __m128i *)digits);
    const __m128i k32 = _mm_loadu_si128((const __m128i *)exps);
    const __m128i neg = _mm_srli_epi32(_mm_maskload_epi32((const int *)v, live), 31);
    const __m256i pack = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m128i count = _mm_set1_epi32(1);
    int i;
    for (i = 1; i <= 8; i++) {
        count = _mm_sub_epi32(count, _mm_cmpgt_epi32(d32, _mm_set1_epi32(
                                                             (int)oipcodec_pow10_u32[i] - 1)));
    }
    {
        /* 10**(9 - count) */
        const __m256i scales =
            _mm256_setr_epi32(100000000, 10000000, 1000000, 100000, 10000, 1000, 100, 10);
        const __m128i nine = _mm_cmpeq_epi32(count, _mm_set1_epi32(9));
        const __m128i scale = _mm_blendv_epi8(
            _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                scales, _mm256_castsi128_si256(_mm_sub_epi32(count, _mm_set1_epi32(1))))),
            _mm_set1_epi32(1), nine);
        const __m256i d9 = _mm256_cvtepu32_epi64(_mm_mullo_epi32(d32, scale));
        const __m256i first =
            _mm256_srli_epi64(_mm256_mul_epu32(d9, _mm256_set1_epi64x(0x55E63B89)), 57);
        const __m256i rest =
            _mm256_sub_epi64(d9, _mm256_mul_epu32(first, _mm256_set1_epi64x(100000000)));
        const __m256i w = oipcodec_digits8_avx2(rest);
        __m256i nz;
        /* significant digits: 1 + the nonzero digit bytes once each is smeared downwards */
        nz = _mm256_andnot_si256(_mm256_cmpeq_epi8(w, _mm256_setzero_si256()),
                                 _mm256_set1_epi8(1));
        nz = _mm256_or_si256(nz, _mm256_srli_epi64(nz, 8));
        nz = _mm256_or_si256(nz, _mm256_srli_epi64(nz, 16));
        nz = _mm256_or_si256(nz, _mm256_srli_epi64(nz, 32));
        {
            const __m128i nd = _mm_add_epi32(
                _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                    _mm256_sad_epu8(nz, _mm256_setzero_si256()), pack)),
                _mm_set1_epi32(1));
            const __m128i e = _mm_sub_epi32(_mm_add_epi32(k32, count), _mm_set1_epi32(1));
            const __m128i ae = _mm_abs_epi32(e);
            const __m128i et = _mm_srli_epi32(_mm_mullo_epi32(ae, _mm_set1_epi32(205)), 11);
            const __m128i eo = _mm_sub_epi32(ae, _mm_mullo_epi32(et, _mm_set1_epi32(10)));
            const __m128i minus = _mm_cmpgt_epi32(_mm_setzero_si128(), e); /* -1 or 0 */
            const __m128i sign = _mm_sub_epi32(_mm_set1_epi32('+'), _mm_add_epi32(minus, minus));
            const __m128i positional =
                _mm_and_si128(_mm_cmpgt_epi32(e, _mm_set1_epi32(OIPCODEC_F32_LO_E - 1)),
                              _mm_cmpgt_epi32(_mm_set1_epi32(OIPCODEC_F32_HI_E + 1), e));
            const __m128i row = _mm_blendv_epi8(
                _mm_sub_epi32(_mm_set1_epi32(OIPCODEC_F32_ROWS - 3),
                              _mm_cmpgt_epi32(ae, _mm_set1_epi32(9))),
                _mm_add_epi32(e, _mm_set1_epi32(-OIPCODEC_F32_LO_E)), positional);
            const __m128i index = _mm_add_epi32(_mm_mullo_epi32(row, _mm_set1_epi32(9)),
                                                _mm_sub_epi32(nd, _mm_set1_epi32(1)));
            const __m256i a = _mm256_or_si256(
                _mm256_or_si256(first, _mm256_slli_epi64(w, 8)),
                _mm256_set1_epi64x((long long)OIPCODEC_ASCII8));
            const __m256i b = _mm256_or_si256(
                _mm256_or_si256(_mm256_srli_epi64(w, 56),
                                _mm256_set1_epi64x(0x3030303000652E30ll)),
                _mm256_or_si256(
                    _mm256_slli_epi64(_mm256_cvtepu32_epi64(sign), 24),
                    _mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(et), 32),
                                    _mm256_slli_epi64(_mm256_cvtepu32_epi64(eo), 40))));
            const __m256i ab02 = _mm256_unpacklo_epi64(a, b), ab13 = _mm256_unpackhi_epi64(a, b);
            _mm256_storeu_si256((__m256i *)src, _mm256_permute2x128_si256(ab02, ab13, 0x20));
            _mm256_storeu_si256((__m256i *)(src + 32),
                                _mm256_permute2x128_si256(ab02, ab13, 0x31));
            _mm_storeu_si128((__m128i *)meta, _mm_or_si128(index, _mm_slli_epi32(neg, 16)));
        }
    }
}

/* oipcodec_row_f32 on an AVX2 processor, as oipcodec_row_f32_avx512. */
OIPCODEC_MAYBE_UNUSED OIPCODEC_TARGET_AVX2
static char *oipcodec_row_f32_avx2(const void *data, ptrdiff_t n, char *out) {
    const uint32_t *v = (const uint32_t *)data;
    const __m128i lane = _mm_setr_epi32(0, 1, 2, 3);
    uint32_t digits[OIPCODEC_F32_BLOCK], meta[OIPCODEC_F32_BLOCK];
    int exps[OIPCODEC_F32_BLOCK];
    unsigned char src[OIPCODEC_F32_BLOCK * 16];
    ptrdiff_t base;
    for (base = 0; base < n; base += OIPCODEC_F32_BLOCK) {
        const uint32_t *block = v + base;
        ptrdiff_t count = n - base < OIPCODEC_F32_BLOCK ? n - base : OIPCODEC_F32_BLOCK, j;
        uint64_t nonfinite = 0;
        for (j = 0; j < count; j += 4) {
            __m128i live = _mm_cmpgt_epi32(_mm_set1_epi32((int)(count - j)), lane);
            oipcodec_f32_settle(block, j,
                                oipcodec_f32_digits_x4(block + j, live, digits + j, exps + j),
                                digits, exps, &nonfinite);
        }
        for (j = 0; j < count; j += 4) {
            __m128i live = _mm_cmpgt_epi32(_mm_set1_epi32((int)(count - j)), lane);
            oipcodec_f32_layout_x4(block + j, live, digits + j, exps + j, src + 16 * j, meta + j);
        }
        oipcodec_f32_tokens(block, nonfinite, src, meta);
        out = oipcodec_f32_text(src, meta, count, out);
    }
    return n ? out - 1 : out;
}
#endif

#endif
