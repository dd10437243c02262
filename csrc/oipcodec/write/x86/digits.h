/* Decimal digits in vector lanes, for the JSON writers' vector paths (write/x86/f32.h,
 * write/x86/f64.h, write/x86/int.h): eight 64-bit values at a time with AVX-512, four with AVX2,
 * each compiled with a target attribute and called only where oipcodec_simd_features (common/cpu.h)
 * has the instructions. */
#ifndef OIPCODEC_WRITE_X86_DIGITS_H
#define OIPCODEC_WRITE_X86_DIGITS_H

#include "oipcodec/common/cpu.h"

#if OIPCODEC_SIMD_X86

/* The 8 decimal digits of each lane's v < 10**8 as byte values 0..9, the first digit in the
 * lane's lowest byte (oipcodec_digits8 of write/int.h, in 8 lanes at once). */
OIPCODEC_TARGET_AVX512 static inline __m512i oipcodec_digits8_avx512(__m512i v) {
    __m512i hi, w, q;
    /* halves: v / 10**4 as (v * ceil(2**45 / 10**4)) >> 45, exact for v < 10**8 */
    hi = _mm512_srli_epi64(_mm512_mul_epu32(v, _mm512_set1_epi64(0xD1B71759)), 45);
    w = _mm512_sub_epi64(v, _mm512_mul_epu32(hi, _mm512_set1_epi64(10000)));
    w = _mm512_or_si512(hi, _mm512_slli_epi64(w, 32));
    /* quarters in 16-bit lanes: x / 100 = (x * 5243) >> 19 for x < 10**4 */
    q = _mm512_srli_epi32(_mm512_mulhi_epu16(w, _mm512_set1_epi32(5243)), 3);
    w = _mm512_sub_epi16(w, _mm512_mullo_epi16(q, _mm512_set1_epi32(100)));
    w = _mm512_or_si512(q, _mm512_slli_epi32(w, 16));
    /* digits in bytes: y / 10 = (y * 6554) >> 16 for y < 100 */
    q = _mm512_mulhi_epu16(w, _mm512_set1_epi16(6554));
    w = _mm512_sub_epi16(w, _mm512_mullo_epi16(q, _mm512_set1_epi16(10)));
    return _mm512_or_si512(q, _mm512_slli_epi16(w, 8));
}

/* oipcodec_digits8_avx512 in four lanes. */
OIPCODEC_TARGET_AVX2 static inline __m256i oipcodec_digits8_avx2(__m256i v) {
    __m256i hi, w, q;
    hi = _mm256_srli_epi64(_mm256_mul_epu32(v, _mm256_set1_epi64x(0xD1B71759)), 45);
    w = _mm256_sub_epi64(v, _mm256_mul_epu32(hi, _mm256_set1_epi64x(10000)));
    w = _mm256_or_si256(hi, _mm256_slli_epi64(w, 32));
    q = _mm256_srli_epi32(_mm256_mulhi_epu16(w, _mm256_set1_epi32(5243)), 3);
    w = _mm256_sub_epi16(w, _mm256_mullo_epi16(q, _mm256_set1_epi32(100)));
    w = _mm256_or_si256(q, _mm256_slli_epi32(w, 16));
    q = _mm256_mulhi_epu16(w, _mm256_set1_epi16(6554));
    w = _mm256_sub_epi16(w, _mm256_mullo_epi16(q, _mm256_set1_epi16(10)));
    return _mm256_or_si256(q, _mm256_slli_epi16(w, 8));
}

/* v / 10**8 of 8 lanes of any 64-bit v, the remainder in *rem: the quotient from double
 * precision (v rounded to 53 bits, times 10**-8: within 10**-4 of the true quotient, so the
 * truncation is exact or one off), then corrected by the remainder's range, in integers. */
OIPCODEC_TARGET_AVX512 static inline __m512i oipcodec_divmod_1e8_avx512(__m512i v, __m512i *rem) {
    const __m512i e8 = _mm512_set1_epi64(100000000), one = _mm512_set1_epi64(1);
    __m512i q = _mm512_cvttpd_epu64(_mm512_mul_pd(_mm512_cvtepu64_pd(v), _mm512_set1_pd(1e-8)));
    __m512i r = _mm512_sub_epi64(v, _mm512_mullo_epi64(q, e8));
    __mmask8 over = _mm512_cmplt_epi64_mask(r, _mm512_setzero_si512()), under;
    q = _mm512_mask_sub_epi64(q, over, q, one);
    r = _mm512_mask_add_epi64(r, over, r, e8);
    under = _mm512_cmpge_epi64_mask(r, e8);
    *rem = _mm512_mask_sub_epi64(r, under, r, e8);
    return _mm512_mask_add_epi64(q, under, q, one);
}

#endif

#endif
