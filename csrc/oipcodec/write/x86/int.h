/* Integer rows to JSON text eight elements at a time with AVX-512 (four with AVX2): the fast
 * path of the integer row writers in write/int.h (OIPCODEC_INT_ROW), for blocks whose
 * magnitudes are all below 10**8 (token ids, labels, counts, every 8- and 16-bit element); how,
 * above oipcodec_int8_block_avx512. No branch depends on a digit count or a sign.
 *
 * Methods and where they come from: the digits by Paul Khuong's parallel-lane method (see the
 * top of write/int.h), in vector lanes as in Wojciech Mula's SSE2 conversion; packing bytes
 * by a mask with AVX-512 VBMI2's compress to drop what is not wanted, as in Robert Clausecker
 * and Daniel Lemire, "Transcoding Unicode Characters with AVX-512 Instructions", Software:
 * Practice and Experience 53(12), 2023 (https://doi.org/10.1002/spe.3261; simdutf).
 *
 * The instructions (AVX-512 F/BW/DQ/VBMI/VBMI2 with BMI2 and POPCNT: Ice Lake, Zen 4 and
 * later; or AVX2 with BMI2) are chosen at run time: the kernels carry a target attribute and
 * are called only when __builtin_cpu_supports says the processor and the operating system
 * have them (oipcodec_simd_features in common/cpu.h, whose caps also apply). Elsewhere (other
 * processors, MSVC, old compilers) OIPCODEC_SIMD_X86 is 0 and the scalar writers do all the
 * work (AArch64 has write/arm64/int.h): they are the portable definition, and the text is the
 * same either way. */
#ifndef OIPCODEC_WRITE_X86_INT_H
#define OIPCODEC_WRITE_X86_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/cpu.h"
#include "oipcodec/write/x86/digits.h"

#if OIPCODEC_SIMD_X86

/* Which kernels this process runs (oipcodec_simd_features): 2 the AVX-512 ones, 1 the AVX2
 * ones, 0 neither. */
static inline int oipcodec_int_simd_level(void) {
    int features = oipcodec_simd_features();
    return features & OIPCODEC_SIMD_AVX512_VBMI ? 2 : features & OIPCODEC_SIMD_AVX2 ? 1 : 0;
}

/* Slot layout (see below): which mask bits are a slot's digits, sign and comma, and which
 * byte of the digit lanes each slot byte takes (the first 4 elements' lanes; +32 for the next
 * 4); the bytes outside 1..8 come from the template. */
static const uint8_t oipcodec_slot_digit_index[64] = {
    0, 0,  1,  2,  3,  4,  5,  6,  7,  0, 0, 0, 0, 0, 0, 0, /* element 0 */
    0, 8,  9,  10, 11, 12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, /* element 1 */
    0, 16, 17, 18, 19, 20, 21, 22, 23, 0, 0, 0, 0, 0, 0, 0, /* element 2 */
    0, 24, 25, 26, 27, 28, 29, 30, 31, 0, 0, 0, 0, 0, 0, 0, /* element 3 */
};
#define OIPCODEC_SLOT_DIGITS 0x01FE01FE01FE01FEull
#define OIPCODEC_SLOT_SIGN 0x0001000100010001ull
#define OIPCODEC_SLOT_COMMA 0x0200020002000200ull

/* How the AVX-512 kernels write a block.
 *
 * A block of 8 elements, widened to 64-bit lanes:
 * - each magnitude's 8 decimal digits (leading zeros included) in its lane, split in halves by
 *   10**4, quarters by 100 and digits by 10 with multiply-shift reciprocals, all lanes at once
 *   (Khuong's method, see the top);
 * - the digits moved into 16-byte slots, one per element: '-' in byte 0, the 8 digits in bytes
 *   1..8, ',' in byte 9 (one vpermb per 4 elements, the '-' and ',' from a template);
 * - a 16-bit mask per slot that keeps the sign if the element is negative, the digits from the
 *   first non-zero one (always the last one, so 0 is "0") and the comma; vpcompressb packs the
 *   kept bytes to the front and one 64-byte store writes them, the pointer advancing by the
 *   mask's population count (the compress as in Clausecker and Lemire, see the top).
 * A 64-bit block with a magnitude of 10**8 or more is split by 10**8 twice (the quotient from
 * double precision, corrected by the remainder's range) and packed the same way from 32-byte
 * slots (oipcodec_int20_block_avx512); a 32-bit one goes to the scalar writer, which is faster
 * for 10 digits.
 *
 * Processors with AVX2 but not these AVX-512 subsets (Zen 3 and older, Intel client parts)
 * get the same digits for 4 elements per step in 256-bit registers, each element then stored
 * by scalar code with its leading zero bytes shifted out (oipcodec_int4_block_avx2); their
 * blocks of 10**8 or more go to the scalar writer. */

/* Writes 8 elements, each with its comma: magnitudes `mag` (every lane < 10**8) and the
 * negative ones' bits in `negative`. Stores 128 bytes from out; returns the end. */
OIPCODEC_TARGET_AVX512_VBMI static inline char *oipcodec_int8_block_avx512(__m512i mag,
                                                                      uint64_t negative,
                                                                      char *out) {
    const __m512i byte_of_digit_lo = _mm512_loadu_si512((const void *)oipcodec_slot_digit_index);
    const __m512i byte_of_digit_hi = _mm512_add_epi8(byte_of_digit_lo, _mm512_set1_epi8(32));
    const __m512i template_ = _mm512_set4_epi64(0x2C00, '-', 0x2C00, '-'); /* '-' at 0, ',' at 9 */
    const __m512i w = oipcodec_digits8_avx512(mag);
    const __m512i ascii = _mm512_or_si512(w, _mm512_set1_epi8('0'));
    uint64_t keep, mask_lo, mask_hi;
    /* per element (8 mask bits each, first digit lowest): the digits from the first non-zero
     * one on, the last always; a prefix OR inside each byte of the mask */
    keep = (uint64_t)_mm512_test_epi8_mask(w, w) | 0x8080808080808080ull;
    keep |= (keep << 1) & 0xFEFEFEFEFEFEFEFEull;
    keep |= (keep << 2) & 0xFCFCFCFCFCFCFCFCull;
    keep |= (keep << 4) & 0xF0F0F0F0F0F0F0F0ull;
    mask_lo = _pdep_u64(keep, OIPCODEC_SLOT_DIGITS) | OIPCODEC_SLOT_COMMA |
              _pdep_u64(negative, OIPCODEC_SLOT_SIGN);
    mask_hi = _pdep_u64(keep >> 32, OIPCODEC_SLOT_DIGITS) | OIPCODEC_SLOT_COMMA |
              _pdep_u64(negative >> 4, OIPCODEC_SLOT_SIGN);
    _mm512_storeu_si512(
        out, _mm512_maskz_compress_epi8(
                 mask_lo, _mm512_mask_permutexvar_epi8(template_, OIPCODEC_SLOT_DIGITS,
                                                       byte_of_digit_lo, ascii)));
    out += _mm_popcnt_u64(mask_lo);
    _mm512_storeu_si512(
        out, _mm512_maskz_compress_epi8(
                 mask_hi, _mm512_mask_permutexvar_epi8(template_, OIPCODEC_SLOT_DIGITS,
                                                       byte_of_digit_hi, ascii)));
    return out + _mm_popcnt_u64(mask_hi);
}

/* Slots of 32 bytes for elements of up to 24 digits (a 64-bit magnitude has at most 20):
 * '-' in byte 0, the digits of v / 10**16, of (v / 10**8) % 10**8 and of v % 10**8 in bytes
 * 1..8, 9..16 and 17..24, ',' in byte 25; two elements per register. The index gives each
 * digit byte its byte in the three digit registers (the first two as one 128-byte table,
 * the third by itself), for elements 0 and 1 (+16 per further pair). */
static const uint8_t oipcodec_slot24_index[64] = {
    0, 0,  1,  2,  3,  4,  5,  6,  7,  64, 65, 66, 67, 68, 69, 70, /* element 0 */
    71, 0, 1,  2,  3,  4,  5,  6,  7,  0,  0,  0,  0,  0,  0,  0,
    0, 8,  9,  10, 11, 12, 13, 14, 15, 72, 73, 74, 75, 76, 77, 78, /* element 1 */
    79, 8, 9,  10, 11, 12, 13, 14, 15, 0,  0,  0,  0,  0,  0,  0,
};
#define OIPCODEC_SLOT24_HIGH 0x0001FFFE0001FFFEull /* bytes 1..16 of each slot */
#define OIPCODEC_SLOT24_LOW 0x01FE000001FE0000ull  /* bytes 17..24 */
#define OIPCODEC_SLOT24_DIGITS 0x01FFFFFEu
#define OIPCODEC_SLOT24_COMMA 0x0200000002000000ull

/* Writes 8 elements of any 64-bit magnitude, each with its comma, as
 * oipcodec_int8_block_avx512 does, in 32-byte slots. Stores 64 bytes at 4 points, the last
 * where the text of the first 6 elements ends. */
OIPCODEC_TARGET_AVX512_VBMI static inline char *oipcodec_int20_block_avx512(__m512i mag,
                                                                       uint64_t negative,
                                                                       char *out) {
    const __m512i index = _mm512_loadu_si512((const void *)oipcodec_slot24_index);
    /* '-' at 0, '0' in bytes 1..24 (ORed with the digit values), ',' at 25 */
    const __m512i template_ = _mm512_set4_epi64(0x2C30ll, 0x3030303030303030ll,
                                                0x3030303030303030ll, 0x303030303030302Dll);
    __m512i low, middle, high, d_high, d_middle, d_low;
    int pair;
    high = oipcodec_divmod_1e8_avx512(oipcodec_divmod_1e8_avx512(mag, &low), &middle);
    d_high = oipcodec_digits8_avx512(high);
    d_middle = oipcodec_digits8_avx512(middle);
    d_low = oipcodec_digits8_avx512(low);
    for (pair = 0; pair < 4; pair++) {
        const __m512i idx = _mm512_add_epi8(index, _mm512_set1_epi8((char)(16 * pair)));
        __m512i d = _mm512_maskz_permutex2var_epi8(OIPCODEC_SLOT24_HIGH, d_high, idx, d_middle);
        uint64_t nz, mask;
        uint32_t first, second;
        d = _mm512_mask_permutexvar_epi8(d, OIPCODEC_SLOT24_LOW, idx, d_low);
        /* the digits from the first non-zero one on (the last always): x | -x keeps the
         * lowest set bit of x and every bit above it */
        nz = (uint64_t)_mm512_test_epi8_mask(d, d);
        first = (uint32_t)nz | 1u << 24;
        second = (uint32_t)(nz >> 32) | 1u << 24;
        mask = (uint64_t)((first | (0u - first)) & OIPCODEC_SLOT24_DIGITS) |
               (uint64_t)((second | (0u - second)) & OIPCODEC_SLOT24_DIGITS) << 32 |
               OIPCODEC_SLOT24_COMMA | (negative >> (2 * pair) & 1) |
               (negative >> (2 * pair + 1) & 1) << 32;
        _mm512_storeu_si512(out, _mm512_maskz_compress_epi8(mask, _mm512_or_si512(d, template_)));
        out += _mm_popcnt_u64(mask);
    }
    return out;
}

/* One kernel per element type: writes v[i..] with their commas through *end, 8 at a time,
 * while at least 16 elements are left (so each 64-byte store ends inside the room the caller
 * gave the elements not yet written: at least 3 bytes each, their comma included, plus the
 * buffer's 32 bytes of slack; the second store of a block starts at most 4 elements' text in,
 * which leaves it 12 x 3 + 32 = 68 bytes); returns
 * the index of the first element not written, which the caller writes with the scalar
 * writer. LOAD widens 8 elements to 64-bit lanes; SIGNED says whether a lane can be negative.
 * WIDE_VALUES says what a block with a magnitude of 10**8 or more does: 0, there is none
 * (8- and 16-bit elements); 1, the kernel stops there (32-bit elements: the scalar writer,
 * 7 cycles per 10-digit value here, beats the 20-digit block, 11); 2, it goes through
 * oipcodec_int20_block_avx512 (64-bit elements: 11 cycles per value against the scalar 12.5
 * to 13). */
/* The AVX2 kernels, for processors without AVX-512: 4 elements per step, their digits as in
 * oipcodec_digits8_avx512 in 256-bit registers; each element's word is then taken out, its
 * leading zero bytes (their count from a byte-compare mask) shifted out and stored 8 bytes
 * wide after an always-stored, conditionally kept '-', then the comma, as the scalar writer
 * does (oipcodec_write_small). */
OIPCODEC_TARGET_AVX2 static inline char *oipcodec_int4_block_avx2(__m256i mag, unsigned negative,
                                                                 char *out) {
    __m256i w, ascii;
    __m128i low_half, high_half;
    uint64_t words[4];
    unsigned nonzero;
    int k;
    w = oipcodec_digits8_avx2(mag);
    nonzero = ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(w, _mm256_setzero_si256()));
    ascii = _mm256_or_si256(w, _mm256_set1_epi8('0'));
    low_half = _mm256_castsi256_si128(ascii);
    high_half = _mm256_extracti128_si256(ascii, 1);
    words[0] = (uint64_t)_mm_cvtsi128_si64(low_half);
    words[1] = (uint64_t)_mm_extract_epi64(low_half, 1);
    words[2] = (uint64_t)_mm_cvtsi128_si64(high_half);
    words[3] = (uint64_t)_mm_extract_epi64(high_half, 1);
    for (k = 0; k < 4; k++) {
        /* leading zero digits: 0..7, the last digit always kept; every store is placed from
         * out, which then advances once (one add per element on the dependency chain) */
        int zeros = oipcodec_ctz64((uint64_t)((nonzero >> (8 * k)) | 0x80u));
        ptrdiff_t sign = negative >> k & 1, digits_end = sign + 8 - zeros;
        uint64_t word = words[k] >> (8 * zeros);
        *out = '-';
        memcpy(out + sign, &word, 8);
        out[digits_end] = ',';
        out += digits_end + 1;
    }
    return out;
}

#define OIPCODEC_INT_SIMD_ROW(NAME, CTYPE, LOAD, SIGNED, WIDE_VALUES, LOAD4)                   \
    OIPCODEC_MAYBE_UNUSED OIPCODEC_TARGET_AVX512_VBMI OIPCODEC_NOINLINE static ptrdiff_t NAME(     \
        const void *data, ptrdiff_t i, ptrdiff_t n, char **end) {                             \
        const CTYPE *v = (const CTYPE *)data;                                                 \
        const __m512i limit = _mm512_set1_epi64(100000000);                                   \
        char *out = *end;                                                                     \
        for (; i + 16 <= n; i += 8) {                                                         \
            __m512i lanes = LOAD(v + i), mag = lanes;                                         \
            uint64_t negative = 0;                                                            \
            if (SIGNED) {                                                                     \
                negative = OIPCODEC_NEGATIVE_LANES(lanes);                                    \
                mag = _mm512_abs_epi64(lanes);                                                \
            }                                                                                 \
            /* unsigned compare: INT64_MIN's magnitude (2**63) is large too */                \
            if (WIDE_VALUES && _mm512_cmpge_epu64_mask(mag, limit)) {                         \
                if (WIDE_VALUES == 1) {                                                       \
                    break;                                                                    \
                }                                                                             \
                out = oipcodec_int20_block_avx512(mag, negative, out);                        \
            } else {                                                                          \
                out = oipcodec_int8_block_avx512(mag, negative, out);                         \
            }                                                                                 \
        }                                                                                     \
        *end = out;                                                                           \
        return i;                                                                             \
    }                                                                                         \
    /* the AVX2 kernel: stops at any block with a magnitude of 10**8 or more */               \
    OIPCODEC_MAYBE_UNUSED OIPCODEC_TARGET_AVX2 OIPCODEC_NOINLINE static ptrdiff_t NAME##_avx2( \
        const void *data, ptrdiff_t i, ptrdiff_t n, char **end) {                             \
        const CTYPE *v = (const CTYPE *)data;                                                 \
        const __m256i below = _mm256_set1_epi64x(99999999);                                   \
        char *out = *end;                                                                     \
        for (; i + 16 <= n; i += 4) {                                                         \
            __m256i lanes = LOAD4(v + i), mag = lanes, negative = _mm256_setzero_si256();    \
            if (SIGNED) {                                                                     \
                negative = _mm256_cmpgt_epi64(negative, lanes);                               \
                mag = _mm256_sub_epi64(_mm256_xor_si256(lanes, negative), negative);          \
            }                                                                                 \
            /* signed compares: a magnitude of 2**63 or more reads as negative */            \
            if (WIDE_VALUES &&                                                                \
                !_mm256_testz_si256(_mm256_or_si256(_mm256_cmpgt_epi64(mag, below),          \
                                                    _mm256_cmpgt_epi64(_mm256_setzero_si256(), \
                                                                       mag)),                 \
                                    _mm256_set1_epi64x(-1))) {                                \
                break;                                                                        \
            }                                                                                 \
            out = oipcodec_int4_block_avx2(                                                   \
                mag, (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(negative)), out);       \
        }                                                                                     \
        *end = out;                                                                           \
        return i;                                                                             \
    }

/* The sign bits of 8 64-bit lanes (AVX-512 F only; DQ's vpmovq2m would do it in one). */
#define OIPCODEC_NEGATIVE_LANES(x) _mm512_cmplt_epi64_mask((x), _mm512_setzero_si512())

#define OIPCODEC_LOAD_I64(p) _mm512_loadu_si512((const void *)(p))
#define OIPCODEC_LOAD_I32(p) _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(p)))
#define OIPCODEC_LOAD_U32(p) _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(p)))
#define OIPCODEC_LOAD_I16(p) _mm512_cvtepi16_epi64(_mm_loadu_si128((const __m128i *)(p)))
#define OIPCODEC_LOAD_U16(p) _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(p)))
#define OIPCODEC_LOAD_I8(p) _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i *)(p)))
#define OIPCODEC_LOAD_U8(p) _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(p)))

/* 4 elements widened to the 64-bit lanes of an AVX2 register. */
#define OIPCODEC_LOAD4_I64(p) _mm256_loadu_si256((const __m256i *)(p))
#define OIPCODEC_LOAD4_I32(p) _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(p)))
#define OIPCODEC_LOAD4_U32(p) _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(p)))
#define OIPCODEC_LOAD4_I16(p) _mm256_cvtepi16_epi64(_mm_loadl_epi64((const __m128i *)(p)))
#define OIPCODEC_LOAD4_U16(p) _mm256_cvtepu16_epi64(_mm_loadl_epi64((const __m128i *)(p)))
#define OIPCODEC_LOAD4_I8(p) _mm256_cvtepi8_epi64(_mm_cvtsi32_si128(oipcodec_load_u32le(p)))
#define OIPCODEC_LOAD4_U8(p) _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(oipcodec_load_u32le(p)))

/* 4 bytes from p as an int (x86: little-endian), without an alignment assumption. */
static inline int oipcodec_load_u32le(const void *p) {
    int32_t x;
    memcpy(&x, p, 4);
    return x;
}

#endif /* OIPCODEC_SIMD_X86 */

#endif
