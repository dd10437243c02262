/* The float64 JSON writer eight elements at a time with AVX-512 VBMI, chosen at run time
 * (oipcodec_row_f64 in write/json.h): oipcodec_row_f64_scalar (write/f64.h, which this
 * header includes) is the portable fallback and defines what this computes.
 *
 * Per element: the shortest digits scaled to exactly 17 (d < 10**17) and their exponent, in
 * scalar code; then, in vector registers, the whole text (up to 23 bytes) and its length,
 * which the writer's last pass copies. The vector part replaces per-element 128-bit
 * divisions, the digit count, and above all the branches between "0.000ddd", "ddd.ddd" and
 * "d.ddde-XX", which real data (|x| below and above 1, or of many scales) mispredicts.
 *
 * Built only on x86-64 with GCC or clang, with a target attribute, and run where
 * oipcodec_simd_features (common/cpu.h) has OIPCODEC_SIMD_AVX512_VBMI (Intel Ice Lake and later,
 * AMD Zen 4 and later); elsewhere only the scalar loops exist or run. */
#ifndef OIPCODEC_WRITE_X86_F64_H
#define OIPCODEC_WRITE_X86_F64_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/cpu.h"
#include "oipcodec/common/target.h"
#include "oipcodec/write/f64.h"
#include "oipcodec/write/nonfinite.h"
#include "oipcodec/write/x86/digits.h"

#if OIPCODEC_SIMD_X86

#include "oipcodec/write/f64_layouts.h"

/* Method: the division by 10**8 in double precision (d converted to a double is within 16 of
 * d, so the truncated quotient is within 1 of the true one) corrected by the sign and size of
 * the remainder; the first digit by a multiply-shift reciprocal; each 8-digit number by the
 * same lane-parallel halving as oipcodec_digits8 (by 10**4, then 100, then 10, with
 * multiply-shift reciprocals exact for each lane's range: Paul Khuong's method, see
 * write/int.h), here on 32- and 16-bit vector lanes; the trailing zeros by counting leading
 * zero bits (the last digits are the high bytes); the layout by one byte permutation (VBMI's
 * vpermb) of the digits, '.', '0', 'e', the exponent's sign and digits per pair of elements,
 * from a table of the 72 layouts (21 positional, 51 exponent forms). */

/* The text of elements j to j + 7 (those below count) from their digits d17 (< 10**17,
 * trailing zeros included) and exponents e10 (E = e10 + 16 that of the first digit): text the
 * element's text (padded to 32 bytes), len its length. Reads nothing at or past count; text is
 * written in pairs, so it has room for count rounded up to even. */
OIPCODEC_TARGET_AVX512_VBMI static inline void
oipcodec_f64_text8_avx512(const uint64_t *d17, const int *e10, ptrdiff_t j, ptrdiff_t count,
                          uint8_t (*text)[32], uint64_t *len) {
    const __m512i e8 = _mm512_set1_epi64(100000000), one = _mm512_set1_epi64(1);
    const __m512i zero = _mm512_setzero_si512();
    const __m512i ascii = _mm512_set1_epi64(0x3030303030303030LL);
    /* for a pair of elements in one register, the second's layout indexes 32 bytes further */
    const __m512i second = _mm512_set_epi64(0x2020202020202020LL, 0x2020202020202020LL,
                                            0x2020202020202020LL, 0x2020202020202020LL, 0, 0,
                                            0, 0);
    __mmask8 k = count - j >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (count - j)) - 1);
    __mmask8 positional;
    __m512i d, q, r, f, a, b, n, E, lpos, lneg, row, A, B, C, D;
    uint64_t rows[8];
    int p;
    d = _mm512_maskz_loadu_epi64(k, d17 + j);
    q = oipcodec_divmod_1e8_avx512(d, &r);
    /* q < 10**9: its first digit q / 10**8 = q * ceil(2**57 / 10**8) >> 57 */
    f = _mm512_srli_epi64(_mm512_mul_epu32(q, _mm512_set1_epi64(1441151881)), 57);
    a = oipcodec_digits8_avx512(_mm512_sub_epi64(q, _mm512_mul_epu32(f, e8)));
    b = oipcodec_digits8_avx512(r);
    /* trailing zero digits are high zero bytes: 17 - (leading zero bytes of b), or 9 -
     * (those of a) when b is 0 */
    n = _mm512_mask_blend_epi64(
        _mm512_testn_epi64_mask(b, b),
        _mm512_sub_epi64(_mm512_set1_epi64(17), _mm512_srli_epi64(_mm512_lzcnt_epi64(b), 3)),
        _mm512_sub_epi64(_mm512_set1_epi64(9), _mm512_srli_epi64(_mm512_lzcnt_epi64(a), 3)));
    f = _mm512_add_epi64(f, _mm512_set1_epi64('0'));
    a = _mm512_or_si512(a, ascii);
    b = _mm512_or_si512(b, ascii);
    E = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, e10 + j)),
                         _mm512_set1_epi64(16));
    positional = _mm512_cmpge_epi64_mask(E, _mm512_set1_epi64(OIPCODEC_F64_LO_E)) &
                 _mm512_cmple_epi64_mask(E, _mm512_set1_epi64(OIPCODEC_F64_HI_E));
    /* positional lengths: E >= 0, E + 2 + max(nd - 1 - E, 1); E < 0, 1 - E + nd */
    lpos = _mm512_add_epi64(
        _mm512_add_epi64(E, _mm512_set1_epi64(2)),
        _mm512_max_epi64(_mm512_sub_epi64(_mm512_sub_epi64(n, one), E), one));
    lneg = _mm512_add_epi64(_mm512_sub_epi64(one, E), n);
    lpos = _mm512_mask_blend_epi64(_mm512_cmplt_epi64_mask(E, zero), lpos, lneg);
    row = _mm512_sub_epi64(E, _mm512_set1_epi64(OIPCODEC_F64_LO_E));
    D = zero;
    if ((positional & k) != k) {
        /* some in exponent form (a branch per eight elements, which data of one scale
         * predicts): the exponent's digits (|E| < 1000: / 100 as * 41 >> 12, / 10 as * 103 >>
         * 10), left aligned after 'e' and the sign; the length, nd + 3 + ne (nd > 1) or 3 +
         * ne for ne exponent digits; the row, 21 + 3 (nd - 1) + ne - 1 */
        __mmask8 neg = _mm512_cmplt_epi64_mask(E, zero);
        __m512i ae = _mm512_abs_epi64(E), h, t, o, ne, lexp;
        h = _mm512_srli_epi64(_mm512_mul_epu32(ae, _mm512_set1_epi64(41)), 12);
        o = _mm512_sub_epi64(ae, _mm512_mul_epu32(h, _mm512_set1_epi64(100)));
        t = _mm512_srli_epi64(_mm512_mul_epu32(o, _mm512_set1_epi64(103)), 10);
        o = _mm512_sub_epi64(o, _mm512_mul_epu32(t, _mm512_set1_epi64(10)));
        ne = _mm512_add_epi64(
            _mm512_sub_epi64(one, _mm512_movm_epi64(
                                      _mm512_cmpge_epi64_mask(ae, _mm512_set1_epi64(10)))),
            _mm512_srli_epi64(
                _mm512_movm_epi64(_mm512_cmpge_epi64_mask(ae, _mm512_set1_epi64(100))), 63));
        D = _mm512_or_si512(h, _mm512_or_si512(_mm512_slli_epi64(t, 8), _mm512_slli_epi64(o, 16)));
        D = _mm512_srlv_epi64(_mm512_or_si512(D, _mm512_set1_epi64(0x303030)),
                              _mm512_slli_epi64(_mm512_sub_epi64(_mm512_set1_epi64(3), ne), 3));
        D = _mm512_or_si512(_mm512_slli_epi64(D, 16),
                            _mm512_mask_blend_epi64(neg, _mm512_set1_epi64('+' << 8 | 'e'),
                                                    _mm512_set1_epi64('-' << 8 | 'e')));
        lexp = _mm512_add_epi64(
            _mm512_add_epi64(_mm512_mask_blend_epi64(_mm512_cmpgt_epi64_mask(n, one), zero, n),
                             ne),
            _mm512_set1_epi64(3));
        lpos = _mm512_mask_blend_epi64(positional, lexp, lpos);
        row = _mm512_mask_blend_epi64(
            positional,
            _mm512_add_epi64(_mm512_mullo_epi64(n, _mm512_set1_epi64(3)),
                             _mm512_add_epi64(ne, _mm512_set1_epi64(17))),
            row);
    }
    _mm512_mask_storeu_epi64(len + j, k, lpos);
    _mm512_storeu_si512(rows, _mm512_min_epu64(row, _mm512_set1_epi64(71)));
    /* the text, two elements per register: their digits gathered (A: digits 1-8, B: 9-16,
     * C: 17, '.', '0'; D: 'e', the sign, the exponent), then laid out by one byte permutation */
    A = _mm512_or_si512(f, _mm512_slli_epi64(a, 8));
    B = _mm512_or_si512(_mm512_srli_epi64(a, 56), _mm512_slli_epi64(b, 8));
    C = _mm512_or_si512(_mm512_srli_epi64(b, 56), _mm512_set1_epi64(0x302E00));
    for (p = 0; p < 8 && j + p < count; p += 2) {
        __m512i ab = _mm512_permutex2var_epi64(
            A, _mm512_set_epi64(0, 0, 9 + p, 1 + p, 0, 0, 8 + p, p), B);
        __m512i cd = _mm512_permutex2var_epi64(
            C, _mm512_set_epi64(9 + p, 1 + p, 0, 0, 8 + p, p, 0, 0), D);
        __m512i idx = _mm512_inserti64x4(
            _mm512_castsi256_si512(
                _mm256_loadu_si256((const __m256i *)oipcodec_f64_layout[rows[p]])),
            _mm256_loadu_si256((const __m256i *)oipcodec_f64_layout[rows[p + 1]]), 1);
        _mm512_storeu_si512(text[j + p],
                            _mm512_permutexvar_epi8(_mm512_or_si512(idx, second),
                                                    _mm512_mask_blend_epi64(0xCC, ab, cd)));
    }
}

/* The first two passes of oipcodec_row_f64 over one block: for i < count, d17[i] and e10[i]
 * the shortest digits of element v[i] scaled to 17 and their exponent (oipcodec_f64_fast, or
 * the exact path where it leaves the element; 0 for zero, infinities and NaN), then their
 * text as oipcodec_f64_text8_avx512 describes. Eight elements at a time, their digits in
 * scalar code and the text of the eight before in vector registers: the processor overlaps
 * the two (they use different execution units), and the vector loads of the digits come
 * long after the scalar stores, which they would otherwise wait for. */
OIPCODEC_MAYBE_UNUSED OIPCODEC_TARGET_AVX512_VBMI OIPCODEC_NOINLINE static void
oipcodec_f64_block_avx512(const uint64_t *v, ptrdiff_t count, uint64_t *d17, int *e10,
                          uint8_t (*text)[32], uint64_t *len) {
    ptrdiff_t j, i;
    for (j = 0; j < count; j += 8) {
        for (i = j; i < j + 8 && i < count; i++) {
            uint64_t mag = v[i] & 0x7FFFFFFFFFFFFFFFull, d = oipcodec_f64_fast(mag, &e10[i]);
            if (d == 0 && mag - 1 < 0x7FEFFFFFFFFFFFFFull) {
                d = oipcodec_f64_exact17(mag, &e10[i]);
            }
            d17[i] = d;
        }
        if (j > 0) {
            oipcodec_f64_text8_avx512(d17, e10, j - 8, count, text, len);
        }
    }
    if (count > 0) {
        oipcodec_f64_text8_avx512(d17, e10, (count - 1) / 8 * 8, count, text, len);
    }
}

/* oipcodec_row_f64 where the processor has AVX-512 VBMI: each block's digits and texts by
 * oipcodec_f64_block_avx512, then the texts copied 32 bytes wide (each length kept); the same
 * text as oipcodec_row_f64_scalar. */
OIPCODEC_HOT static char *oipcodec_row_f64_avx512(const void *data, ptrdiff_t n, char *out) {
    const uint64_t *v = (const uint64_t *)data;
    uint64_t digits[OIPCODEC_F64_BLOCK], lens[OIPCODEC_F64_BLOCK];
    uint8_t text[OIPCODEC_F64_BLOCK][32];
    int exps[OIPCODEC_F64_BLOCK];
    ptrdiff_t base;
    for (base = 0; base < n; base += OIPCODEC_F64_BLOCK) {
        ptrdiff_t count = n - base < OIPCODEC_F64_BLOCK ? n - base : OIPCODEC_F64_BLOCK;
        oipcodec_f64_block_avx512(v + base, count, digits, exps, text, lens);
        out = oipcodec_f64_put_texts(v + base, count, text, lens, out);
    }
    return n ? out - 1 : out;
}

#endif /* OIPCODEC_SIMD_X86 */

#endif
