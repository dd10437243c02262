/* The FP32 JSON writer with AArch64's NEON (Advanced SIMD): oipcodec_row_f32's path on every
 * AArch64 processor unless OIPCODEC_SIMD=0 caps it (common/cpu.h), chosen by write/json.h. The
 * text is byte for byte the scalar writer's (write/f32.h, whose tables, fast and exact paths it
 * shares): tools/check_neon_writers.sh compares the two under qemu-aarch64.
 *
 * Designed for a 128-bit NEON pipeline (Neoverse V1/V2, Apple M): three passes per block of
 * OIPCODEC_F32_BLOCK elements, as the x86 writers (write/x86/f32.h):
 * - the digits: the scalar fast path's arithmetic (oipcodec_f32_fast) in two 64-bit lanes per
 *   register, its 64-bit product with the 24-bit significand as two 32x32-bit products
 *   (umull), the table entries by four loads (NEON has no gather), the decisions as compares;
 *   the lanes it cannot settle go one by one to oipcodec_f32_shortest, as in the scalar writer
 *   (Schubfach and Zmij's one-product fast path: credited in write/f32.h);
 * - the numbers of the text, four elements per register: the digit count by compares, the
 *   digits scaled to 9 by a tbl lookup of 10**(9 - count), the nine decimal digits as bytes
 *   (Paul Khuong's halving by 10**4, 100 and 10 with multiply-shift reciprocals, as
 *   oipcodec_digits8, here in 32- and 16-bit lanes), the significant digits by pairwise
 *   byte maxima, the exponent's sign and digits, and a 16-byte source and pattern index per
 *   element;
 * - the text: one tbl of the source by a pattern of write/f32_patterns.h (pshufb's role on x86,
 *   out-of-range indexes giving 0 alike), stored 16 bytes wide, then the comma.
 * Converting many numbers at once in SIMD lanes is described for integers by Daniel Lemire,
 * "Converting integers to decimal strings faster with AVX-512" (2022,
 * https://lemire.me/blog/2022/03/28/); the NEON code here is this project's own.
 *
 * Compiled only where OIPCODEC_SIMD_ARM is 1 (AArch64 with GCC 9+ or clang 11+). */
#ifndef OIPCODEC_WRITE_ARM64_F32_H
#define OIPCODEC_WRITE_ARM64_F32_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/cpu.h"
#include "oipcodec/write/arm64/digits.h"
#include "oipcodec/write/f32.h"
#include "oipcodec/write/layout.h"
#include "oipcodec/write/nonfinite.h"

#if OIPCODEC_SIMD_ARM

#include "oipcodec/write/f32_tokens.h"

/* Shorter rows go to the scalar writer, as on x86 (write/x86/f32.h): three passes over four
 * lanes cost more than the scalar loop for one to three elements. */
#ifndef OIPCODEC_F32_NEON_MIN_N
#define OIPCODEC_F32_NEON_MIN_N 4
#endif
/* 0 computes the fast path's digits in scalar code (oipcodec_f32_fast) instead of lanes: a
 * build for comparing the two by instructions executed, the text being the same. */
#ifndef OIPCODEC_F32_NEON_LANE_DIGITS
#define OIPCODEC_F32_NEON_LANE_DIGITS 1
#endif

/* The fast path's digits of 2 elements in 64-bit lanes (oipcodec_f32_fast, lane by lane): c
 * the significands with the hidden bit, g the table entries, h the shifts; *d the digits and
 * the returned mask the lanes too close to a decision to settle here (all ones). */
static inline uint64x2_t oipcodec_f32_fast_x2_neon(uint32x2_t c, uint64x2_t g, int64x2_t h,
                                                  uint64x2_t *d) {
    const uint64x2_t low32 = vdupq_n_u64(0xFFFFFFFFu), half = vdupq_n_u64(0x80000000u);
    /* V * 2**32 = c * g / 2**(64 - h), h in 33..36: with g's halves, c * g_hi * 2**(h - 32) +
     * (c * g_lo >> (64 - h)), exact (the low product's dropped bits are below the high's) */
    const uint64x2_t lo = vmull_u32(c, vmovn_u64(g)), hi = vmull_u32(c, vshrn_n_u64(g, 32));
    const uint64x2_t mid = vaddq_u64(vshlq_u64(hi, vsubq_s64(h, vdupq_n_s64(32))),
                                     vshlq_u64(lo, vsubq_s64(h, vdupq_n_s64(64))));
    const uint64x2_t delta = vshlq_u64(g, vsubq_s64(h, vdupq_n_s64(65)));
    const uint64x2_t top = vaddq_u64(mid, delta), bottom = vsubq_u64(mid, delta);
    /* (top >> 32) / 10 * 10 by the reciprocal 0xCCCCCCCD / 2**35 (exact for 32-bit values) */
    const uint32x2_t tens = vshrn_n_u64(vmull_n_u32(vshrn_n_u64(top, 32), 0xCCCCCCCDu), 32);
    const uint64x2_t s10 = vmull_n_u32(vshr_n_u32(tens, 3), 10);
    const uint64x2_t at10 = vshlq_n_u64(s10, 32);
    const uint64x2_t mid_frac = vandq_u64(mid, low32);
    const uint64x2_t in10 = vcgtq_u64(at10, bottom);
    /* rounded: the integer part, plus 1 (minus all ones) above one half */
    const uint64x2_t rounded = vsubq_u64(vshrq_n_u64(mid, 32), vcgtq_u64(mid_frac, half));
    *d = vbslq_u64(in10, s10, rounded);
    /* the scalar fast path's doubts: an end within 1 of the multiple of 10, top's integer part
     * uncertain, V's fraction exactly 1/2 */
    return vorrq_u64(
        vorrq_u64(vcleq_u64(vaddq_u64(vsubq_u64(bottom, at10), vdupq_n_u64(1)), vdupq_n_u64(2)),
                  vceqq_u64(at10, top)),
        vorrq_u64(vceqq_u64(vandq_u64(top, low32), low32), vceqq_u64(mid_frac, half)));
}

/* The digits of 4 elements (bits v) as oipcodec_f32_fast computes them, 0 and 0 for zeros;
 * returns the lanes (bit i: element i) the exact path or the tokens must decide. */
static inline unsigned oipcodec_f32_digits_x4_neon(const uint32_t *v, uint32_t *digits,
                                                   int *exps) {
    static const uint32_t lane_bits[4] = {1, 2, 4, 8};
    const uint32x4_t mag = vandq_u32(vld1q_u32(v), vdupq_n_u32(0x7FFFFFFFu));
    const uint32x4_t field = vshrq_n_u32(mag, 23);
    const uint32x4_t m = vandq_u32(mag, vdupq_n_u32(0x7FFFFFu));
    /* normal (field 1..254) and not a power of two */
    const uint32x4_t fast = vandq_u32(
        vcltq_u32(vsubq_u32(field, vdupq_n_u32(1)), vdupq_n_u32(0xFE)), vtstq_u32(m, m));
    /* k = floor(log10(2**q)) and h = q + 33 + floor(log2(10**-k)) by multiply and shift, as
     * oipcodec_flog10_pow2 and oipcodec_flog2_pow10: equal to oipcodec_f32_k and
     * oipcodec_f32_h for every field (q of field 0 is field 1's) */
    const int32x4_t q = vsubq_s32(vreinterpretq_s32_u32(vmaxq_u32(field, vdupq_n_u32(1))),
                                  vdupq_n_s32(150));
    const int32x4_t k = vshrq_n_s32(vmulq_n_s32(q, 1262611), 22);
    const int32x4_t h = vaddq_s32(vaddq_s32(q, vdupq_n_s32(33)),
                                  vshrq_n_s32(vmulq_n_s32(vnegq_s32(k), 1741647), 19));
    const uint32x4_t c = vorrq_u32(m, vdupq_n_u32(0x800000u));
    /* the table entries: NEON has no gather, so four loads */
    const int32_t k0 = vgetq_lane_s32(k, 0), k1 = vgetq_lane_s32(k, 1);
    const int32_t k2 = vgetq_lane_s32(k, 2), k3 = vgetq_lane_s32(k, 3);
    const uint64x2_t g01 = vcombine_u64(vld1_u64(&oipcodec_f32_pow10[31 - k0]),
                                        vld1_u64(&oipcodec_f32_pow10[31 - k1]));
    const uint64x2_t g23 = vcombine_u64(vld1_u64(&oipcodec_f32_pow10[31 - k2]),
                                        vld1_u64(&oipcodec_f32_pow10[31 - k3]));
    uint64x2_t d01, d23;
    const uint64x2_t doubt01 =
        oipcodec_f32_fast_x2_neon(vget_low_u32(c), g01, vmovl_s32(vget_low_s32(h)), &d01);
    const uint64x2_t doubt23 =
        oipcodec_f32_fast_x2_neon(vget_high_u32(c), g23, vmovl_high_s32(h), &d23);
    const uint32x4_t doubt = vcombine_u32(vmovn_u64(doubt01), vmovn_u64(doubt23));
    const uint32x4_t d = vcombine_u32(vmovn_u64(d01), vmovn_u64(d23));
    const uint32x4_t exact =
        vorrq_u32(vandq_u32(fast, doubt), vbicq_u32(vtstq_u32(mag, mag), fast));
    vst1q_u32(digits, vandq_u32(fast, d));
    vst1q_s32(exps, vandq_s32(vreinterpretq_s32_u32(fast), k));
    return vaddvq_u32(vandq_u32(exact, vld1q_u32(lane_bits)));
}

/* The text sources and pattern indexes of 4 elements (v their bits) whose digits and exponents
 * are known (zero: 0 and 0): src gets 16 bytes per element (bytes 0..8 the digits, 9 '.', 10
 * 'e', 11 the exponent's sign, 12 and 13 its digits, 14 and 15 '0'), meta the pattern index |
 * sign << 16, as oipcodec_f32_layout_x8 (write/x86/f32.h). */
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
        /* the digits: the fast path in lanes, the exact path for what it leaves (and the
         * tokens for NaN and infinities); zeros 0 and 0 */
        for (j = 0; j < lanes; j += 4) {
#if OIPCODEC_F32_NEON_LANE_DIGITS
            unsigned exact = oipcodec_f32_digits_x4_neon(block + j, digits + j, exps + j);
#else
            unsigned exact = 0, i;
            for (i = 0; i < 4; i++) {
                uint32_t mag = block[j + i] & 0x7FFFFFFFu;
                digits[j + i] = oipcodec_f32_fast(mag, &exps[j + i]);
                exact |= (unsigned)(digits[j + i] == 0 && mag != 0) << i;
            }
#endif
            while (exact) {
                ptrdiff_t i = j + oipcodec_ctz64(exact);
                uint32_t mag = block[i] & 0x7FFFFFFFu;
                exact &= exact - 1;
                if (mag >> 23 == 0xFF) {
                    nonfinite |= 1ull << i;
                } else {
                    digits[i] = oipcodec_f32_shortest(mag, &exps[i]);
                }
            }
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
