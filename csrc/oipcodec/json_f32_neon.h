/* The FP32 JSON writer with AArch64's NEON (Advanced SIMD): oipcodec_row_f32's path on every
 * AArch64 processor unless OIPCODEC_SIMD=0 caps it (cpu.h), chosen by jsonwrite.h. The text is
 * byte for byte the scalar writer's (jsonwrite_f32.h, whose tables, fast and exact paths it
 * shares): tools/check_neon_writers.sh compares the two under qemu-aarch64.
 *
 * Designed for a 128-bit NEON pipeline (Neoverse V1/V2, Apple M): three passes per block of
 * OIPCODEC_F32_BLOCK elements, as the x86 writers (json_f32_simd.h):
 * - the shortest digits in scalar code (oipcodec_f32_fast, oipcodec_f32_shortest for what it
 *   leaves): each needs a 64x64-bit high product by a table entry, one umulh on AArch64, where
 *   NEON has neither a gather nor a 64-bit multiply;
 * - the numbers of the text, four elements per register: the digit count by compares, the
 *   digits scaled to 9 by a tbl lookup of 10**(9 - count), the nine decimal digits as bytes
 *   (Paul Khuong's halving by 10**4, 100 and 10 with multiply-shift reciprocals, as
 *   oipcodec_digits8, here in 32-, 16- and 8-bit lanes), the significant digits by pairwise
 *   byte maxima, the exponent's sign and digits, and a 16-byte source and pattern index per
 *   element;
 * - the text: one tbl of the source by a pattern of json_f32_patterns.h (pshufb's role on x86,
 *   out-of-range indexes giving 0 alike), stored 16 bytes wide, then the comma.
 * Converting many numbers at once in SIMD lanes is described for integers by Daniel Lemire,
 * "Converting integers to decimal strings faster with AVX-512" (2022,
 * https://lemire.me/blog/2022/03/28/); the NEON code here is this project's own.
 *
 * Compiled only where OIPCODEC_SIMD_ARM is 1 (AArch64 with GCC 9+ or clang 11+). */
#ifndef OIPCODEC_JSON_F32_NEON_H
#define OIPCODEC_JSON_F32_NEON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/cpu.h"
#include "oipcodec/digits_neon.h"
#include "oipcodec/jsonwrite_f32.h"
#include "oipcodec/jsonwrite_layout.h"
#include "oipcodec/jsonwrite_nonfinite.h"

#if OIPCODEC_SIMD_ARM

#include "oipcodec/json_f32_tokens.h"

/* Shorter rows go to the scalar writer, as on x86 (json_f32_simd.h): three passes over four
 * lanes cost more than the scalar loop for one to three elements. */
#ifndef OIPCODEC_F32_NEON_MIN_N
#define OIPCODEC_F32_NEON_MIN_N 4
#endif

/* The text sources and pattern indexes of 4 elements (v their bits) whose digits and exponents
 * are known (zero: 0 and 0): src gets 16 bytes per element (bytes 0..8 the digits, 9 '.', 10
 * 'e', 11 the exponent's sign, 12 and 13 its digits, 14 and 15 '0'), meta the pattern index |
 * sign << 16, as oipcodec_f32_layout_x8 (json_f32_simd.h). */
static inline void oipcodec_f32_layout_x4_neon(const uint32_t *v, const uint32_t *digits,
                                               const int *exps, unsigned char *src,
                                               uint32_t *meta) {
    /* 10**(9 - count) for count 1..9, as 32-bit words for tbl */
    static const uint32_t scales[12] = {100000000, 10000000, 1000000, 100000, 10000, 1000,
                                        100,       10,       1,       0,      0,     0};
    const uint32x4_t d = vld1q_u32(digits);
    const int32x4_t k = vld1q_s32(exps);
    const uint32x4_t neg = vshrq_n_u32(vld1q_u32(v), 31);
    const uint8x16x3_t scale_table = {{vld1q_u8((const uint8_t *)scales),
                                       vld1q_u8((const uint8_t *)scales + 16),
                                       vld1q_u8((const uint8_t *)scales + 32)}};
    uint32x4_t count = vdupq_n_u32(1), scale, d9, first, rest;
    uint8x16_t w01, w23;
    int i;
    for (i = 1; i <= 8; i++) {
        count = vsubq_u32(count, vcgtq_u32(d, vdupq_n_u32(oipcodec_pow10_u32[i] - 1)));
    }
    /* byte indexes 4 (count - 1) + 0..3 of the scale table */
    scale = vreinterpretq_u32_u8(vqtbl3q_u8(
        scale_table, vreinterpretq_u8_u32(vmlaq_n_u32(vdupq_n_u32(0x03020100u - 0x04040404u),
                                                      count, 0x04040404u))));
    d9 = vmulq_u32(d, scale);
    /* d9 < 10**9: its first digit d9 / 10**8 = (d9 * 0x55E63B89) >> 57 */
    first = vshrq_n_u32(
        vuzp2q_u32(vreinterpretq_u32_u64(vmull_n_u32(vget_low_u32(d9), 0x55E63B89u)),
                   vreinterpretq_u32_u64(vmull_high_n_u32(d9, 0x55E63B89u))),
        25);
    rest = vmlsq_n_u32(d9, first, 100000000);
    oipcodec_digits8_neon(rest, &w01, &w23);
    {
        /* significant digits: 1 + the position of the last nonzero one of the other eight */
        const int32x4_t nd =
            vreinterpretq_s32_u32(vaddq_u32(oipcodec_last_nonzero8_neon(w01, w23), vdupq_n_u32(1)));
        const int32x4_t e = vsubq_s32(vaddq_s32(k, vreinterpretq_s32_u32(count)), vdupq_n_s32(1));
        const int32x4_t ae = vabsq_s32(e);
        const int32x4_t et = vshrq_n_s32(vmulq_n_s32(ae, 205), 11);
        const int32x4_t eo = vmlsq_n_s32(ae, et, 10);
        const uint32x4_t minus = vcltzq_s32(e);
        const uint32x4_t positional = vandq_u32(vcgeq_s32(e, vdupq_n_s32(OIPCODEC_F32_LO_E)),
                                                vcleq_s32(e, vdupq_n_s32(OIPCODEC_F32_HI_E)));
        /* row: E + 6 when positional, else ROWS - 3 (one exponent digit) or ROWS - 2 (two) */
        const int32x4_t row = vbslq_s32(
            positional, vsubq_s32(e, vdupq_n_s32(OIPCODEC_F32_LO_E)),
            vsubq_s32(vdupq_n_s32(OIPCODEC_F32_ROWS - 3),
                      vreinterpretq_s32_u32(vcgtq_s32(ae, vdupq_n_s32(9)))));
        const uint32x4_t index = vreinterpretq_u32_s32(vaddq_s32(
            vmulq_n_s32(row, 9), vsubq_s32(nd, vdupq_n_s32(1))));
        /* source bytes 8..11: the last digit, '.', 'e', the sign; 12..15: the exponent's
         * digits and '0's */
        const uint32x4_t sign = vbslq_u32(minus, vdupq_n_u32('-'), vdupq_n_u32('+'));
        const uint32x4_t low = vorrq_u32(vdupq_n_u32(0x00652E30u), vshlq_n_u32(sign, 24));
        const uint32x4_t high = vorrq_u32(
            vdupq_n_u32(0x30303030u),
            vreinterpretq_u32_s32(vorrq_s32(et, vshlq_n_s32(eo, 8))));
        const uint64x2_t ascii = vdupq_n_u64(OIPCODEC_ASCII8);
        const uint64x2_t w01q = vreinterpretq_u64_u8(w01), w23q = vreinterpretq_u64_u8(w23);
        const uint64x2_t a01 = vorrq_u64(vorrq_u64(vshlq_n_u64(w01q, 8), ascii),
                                         vmovl_u32(vget_low_u32(first)));
        const uint64x2_t a23 = vorrq_u64(vorrq_u64(vshlq_n_u64(w23q, 8), ascii),
                                         vmovl_high_u32(first));
        const uint64x2_t b01 = vorrq_u64(vreinterpretq_u64_u32(vzip1q_u32(low, high)),
                                         vshrq_n_u64(w01q, 56));
        const uint64x2_t b23 = vorrq_u64(vreinterpretq_u64_u32(vzip2q_u32(low, high)),
                                         vshrq_n_u64(w23q, 56));
        vst1q_u8(src, vreinterpretq_u8_u64(vzip1q_u64(a01, b01)));
        vst1q_u8(src + 16, vreinterpretq_u8_u64(vzip2q_u64(a01, b01)));
        vst1q_u8(src + 32, vreinterpretq_u8_u64(vzip1q_u64(a23, b23)));
        vst1q_u8(src + 48, vreinterpretq_u8_u64(vzip2q_u64(a23, b23)));
        vst1q_u32(meta, vorrq_u32(index, vshlq_n_u32(neg, 16)));
    }
}

/* oipcodec_row_f32 with NEON: the same text as oipcodec_row_f32_scalar, in blocks of
 * OIPCODEC_F32_BLOCK elements, three passes each (above). Each block is copied to a buffer
 * rounded up to 4 elements, so the lanes past the row's end read zeros, not past its end. */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_f32_neon(const void *data, ptrdiff_t n, char *out) {
    const uint32_t *v = (const uint32_t *)data;
    uint32_t block[OIPCODEC_F32_BLOCK], digits[OIPCODEC_F32_BLOCK], meta[OIPCODEC_F32_BLOCK];
    int exps[OIPCODEC_F32_BLOCK];
    unsigned char src[OIPCODEC_F32_BLOCK * 16];
    ptrdiff_t base;
    for (base = 0; base < n; base += OIPCODEC_F32_BLOCK) {
        ptrdiff_t count = n - base < OIPCODEC_F32_BLOCK ? n - base : OIPCODEC_F32_BLOCK, j;
        ptrdiff_t lanes = (count + 3) & ~(ptrdiff_t)3;
        uint64_t nonfinite = 0;
        memcpy(block, v + base, (size_t)count * 4);
        memset(block + count, 0, (size_t)(lanes - count) * 4);
        /* the digits: the fast path, the exact path for what it leaves; zeros 0 and 0 */
        for (j = 0; j < lanes; j++) {
            uint32_t mag = block[j] & 0x7FFFFFFFu, d = oipcodec_f32_fast(mag, &exps[j]);
            if (d == 0 && mag != 0) {
                if (mag >> 23 == 0xFF) {
                    nonfinite |= 1ull << j;
                } else {
                    d = oipcodec_f32_shortest(mag, &exps[j]);
                }
            }
            digits[j] = d;
        }
        for (j = 0; j < lanes; j += 4) {
            oipcodec_f32_layout_x4_neon(block + j, digits + j, exps + j, src + 16 * j, meta + j);
        }
        oipcodec_f32_tokens(block, nonfinite, src, meta);
        /* the text: '-' always stored and kept for negative values, the source by its
         * pattern stored 16 bytes wide after it, then the comma */
        for (j = 0; j < count; j++) {
            uint32_t index = meta[j] & 0xFFFF, negative = meta[j] >> 16;
            uint32_t len = negative + oipcodec_f32_pattern_len[index];
            *out = '-';
            vst1q_u8((uint8_t *)out + negative,
                     vqtbl1q_u8(vld1q_u8(src + 16 * j), vld1q_u8(oipcodec_f32_patterns[index])));
            out[len] = ',';
            out += len + 1;
        }
    }
    return n ? out - 1 : out;
}

#endif

#endif
