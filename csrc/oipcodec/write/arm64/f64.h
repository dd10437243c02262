/* The FP64 JSON writer with AArch64's NEON (Advanced SIMD): oipcodec_row_f64's path on every
 * AArch64 processor unless OIPCODEC_SIMD=0 caps it (common/cpu.h), chosen by write/json.h. The
 * text is byte for byte the scalar writer's (write/f64.h, whose fast and exact paths it shares):
 * tools/check_neon_writers.sh compares the two under qemu-aarch64.
 *
 * Designed for a 128-bit NEON pipeline (Neoverse V1/V2, Apple M), after the AVX-512 writer
 * (write/x86/f64.h): the shortest digits scaled to 17 in scalar code (128-bit products by the
 * power table, which NEON lacks); then the text four elements at a time in vector registers:
 * the division by 10**8 in double precision with an integer correction, the three parts'
 * decimal digits as bytes by the lane-parallel halving of write/arm64/digits.h (Paul Khuong's
 * method, as oipcodec_digits8), the significant digits by pairwise byte maxima, lengths and
 * layout rows in 32-bit lanes without a branch; and each element's text by two tbl lookups
 * (vpermb's role on x86) of its 32-byte source by a row of write/f64_layouts.h. The last pass
 * copies each text 32 bytes wide and advances by its length.
 *
 * Compiled only where OIPCODEC_SIMD_ARM is 1 (AArch64 with GCC 9+ or clang 11+). */
#ifndef OIPCODEC_WRITE_ARM64_F64_H
#define OIPCODEC_WRITE_ARM64_F64_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/cpu.h"
#include "oipcodec/write/arm64/digits.h"
#include "oipcodec/write/f64.h"
#include "oipcodec/write/layout.h"
#include "oipcodec/write/nonfinite.h"

#if OIPCODEC_SIMD_ARM

#include "oipcodec/write/f64_layouts.h"

/* Shorter rows go to the scalar writer: the passes over four lanes cost more there. */
#ifndef OIPCODEC_F64_NEON_MIN_N
#define OIPCODEC_F64_NEON_MIN_N 4
#endif

/* d / 10**8 of two lanes with d < 10**17 as 32-bit values, the first digit of the quotient in
 * *f and the rest of it and the remainder (each < 10**8) interleaved in *parts (a0, r0, a1,
 * r1). The quotient from double precision (d rounded to 53 bits is within 16 of d, so the
 * truncated quotient is exact or one off), corrected by the remainder's range. */
static inline void oipcodec_f64_split_neon(uint64x2_t d, uint32x2_t *f, uint32x4_t *parts) {
    const uint64x2_t e8 = vdupq_n_u64(100000000);
    uint64x2_t q = vcvtq_u64_f64(vmulq_n_f64(vcvtq_f64_u64(d), 1e-8));
    uint64x2_t r = vsubq_u64(d, vmull_n_u32(vmovn_u64(q), 100000000));
    uint64x2_t fix = vcltzq_s64(vreinterpretq_s64_u64(r)); /* all ones: one too many */
    uint32x2_t q32, r32;
    q = vaddq_u64(q, fix);
    r = vaddq_u64(r, vandq_u64(fix, e8));
    fix = vcgeq_u64(r, e8); /* all ones: one too few */
    q = vsubq_u64(q, fix);
    r = vsubq_u64(r, vandq_u64(fix, e8));
    q32 = vmovn_u64(q);
    r32 = vmovn_u64(r);
    /* q < 10**9: its first digit q / 10**8 = (q * ceil(2**57 / 10**8)) >> 57 */
    *f = vmovn_u64(vshrq_n_u64(vmull_n_u32(q32, 1441151881u), 57));
    {
        const uint32x2x2_t z = vzip_u32(vmls_n_u32(q32, *f, 100000000), r32);
        *parts = vcombine_u32(z.val[0], z.val[1]);
    }
}

/* The text of four elements from their digits d17 (< 10**17, trailing zeros included) and
 * exponents e10 (E = e10 + 16 that of the first digit): text[i] the element's text padded to
 * 32 bytes, len[i] its length, as oipcodec_f64_text8_avx512 (write/x86/f64.h). */
static inline void oipcodec_f64_text4_neon(const uint64_t *d17, const int *e10,
                                           uint8_t (*text)[32], uint64_t *len) {
    const int32x4_t one = vdupq_n_s32(1);
    const uint8x16_t ascii = vdupq_n_u8('0');
    uint32x2_t f01, f23;
    uint32x4_t p01, p23;
    uint8x16_t r0, r1, r2, r3, fd;
    int32x4_t n, E, ae, h, t, o, ne, lpos, lneg, lexp, row, length;
    uint32x4_t positional, minus, digits3, tail2;
    uint32_t rows[4];
    oipcodec_f64_split_neon(vld1q_u64(d17), &f01, &p01);
    oipcodec_f64_split_neon(vld1q_u64(d17 + 2), &f23, &p23);
    oipcodec_digits8_neon(p01, &r0, &r1);
    oipcodec_digits8_neon(p23, &r2, &r3);
    /* significant digits: 1 + the position of the last nonzero one of the other sixteen */
    n = vaddq_s32(vreinterpretq_s32_u32(oipcodec_last_nonzero16_neon(r0, r1, r2, r3)), one);
    E = vaddq_s32(vld1q_s32(e10), vdupq_n_s32(16));
    positional = vandq_u32(vcgeq_s32(E, vdupq_n_s32(OIPCODEC_F64_LO_E)),
                           vcleq_s32(E, vdupq_n_s32(OIPCODEC_F64_HI_E)));
    minus = vcltzq_s32(E);
    /* positional lengths: E >= 0, E + 2 + max(n - 1 - E, 1); E < 0, 1 - E + n */
    lpos = vaddq_s32(vaddq_s32(E, vdupq_n_s32(2)), vmaxq_s32(vsubq_s32(vsubq_s32(n, one), E), one));
    lneg = vaddq_s32(vsubq_s32(one, E), n);
    /* the exponent form: |E| < 1000, / 100 as * 41 >> 12, / 10 as * 103 >> 10; its ne digits
     * left aligned after the sign; the length (n > 1 ? n : 0) + 3 + ne; the row
     * 21 + 3 (n - 1) + ne - 1 */
    ae = vabsq_s32(E);
    h = vshrq_n_s32(vmulq_n_s32(ae, 41), 12);
    o = vmlsq_n_s32(ae, h, 100);
    t = vshrq_n_s32(vmulq_n_s32(o, 103), 10);
    o = vmlsq_n_s32(o, t, 10);
    ne = vsubq_s32(vsubq_s32(one, vreinterpretq_s32_u32(vcgeq_s32(ae, vdupq_n_s32(10)))),
                   vreinterpretq_s32_u32(vcgeq_s32(ae, vdupq_n_s32(100))));
    digits3 = vreinterpretq_u32_s32(vorrq_s32(vorrq_s32(h, vshlq_n_s32(t, 8)), vshlq_n_s32(o, 16)));
    digits3 = vorrq_u32(digits3, vdupq_n_u32(0x303030));
    /* >> 8 (3 - ne): a shift by a negative count */
    digits3 = vshlq_u32(digits3, vmulq_n_s32(vsubq_s32(ne, vdupq_n_s32(3)), 8));
    tail2 = vorrq_u32(vbslq_u32(minus, vdupq_n_u32('-'), vdupq_n_u32('+')),
                      vshlq_n_u32(digits3, 8));
    lexp = vaddq_s32(vaddq_s32(vandq_s32(n, vreinterpretq_s32_u32(vcgtq_s32(n, one))), ne),
                     vdupq_n_s32(3));
    length = vbslq_s32(positional, vbslq_s32(minus, lneg, lpos), lexp);
    row = vbslq_s32(positional, vsubq_s32(E, vdupq_n_s32(OIPCODEC_F64_LO_E)),
                    vminq_s32(vaddq_s32(vmulq_n_s32(n, 3), vaddq_s32(ne, vdupq_n_s32(17))),
                              vdupq_n_s32(71)));
    vst1q_u64(len, vreinterpretq_u64_s64(vmovl_s32(vget_low_s32(length))));
    vst1q_u64(len + 2, vreinterpretq_u64_s64(vmovl_high_s32(length)));
    vst1q_u32(rows, vreinterpretq_u32_s32(row));
    /* each element's source: the first digit and digits 2-16 (src0); digit 17, '.', '0',
     * '0's, 'e', the sign and the exponent's digits (src1: source bytes 16-31) */
    fd = vaddq_u8(vreinterpretq_u8_u32(vcombine_u32(f01, f23)), ascii);
    r0 = vorrq_u8(r0, ascii);
    r1 = vorrq_u8(r1, ascii);
    r2 = vorrq_u8(r2, ascii);
    r3 = vorrq_u8(r3, ascii);
    {
        static const uint32_t tail[4] = {0x3030302Eu, 0x65303030u, 0, 0x30303030u};
        const uint32x4_t base = vld1q_u32(tail);
#define OIPCODEC_F64_TEXT_NEON(I, R)                                                           \
    do {                                                                                       \
        uint8x16x2_t src;                                                                      \
        src.val[0] = vextq_u8(vdupq_laneq_u8(fd, 4 * (I)), R, 15);                             \
        src.val[1] = vextq_u8(R, vreinterpretq_u8_u32(vcopyq_laneq_u32(base, 2, tail2, I)), 15); \
        vst1q_u8(text[I], vqtbl2q_u8(src, vld1q_u8(oipcodec_f64_layout[rows[I]])));            \
        vst1q_u8(text[I] + 16, vqtbl2q_u8(src, vld1q_u8(oipcodec_f64_layout[rows[I]] + 16)));  \
    } while (0)
        OIPCODEC_F64_TEXT_NEON(0, r0);
        OIPCODEC_F64_TEXT_NEON(1, r1);
        OIPCODEC_F64_TEXT_NEON(2, r2);
        OIPCODEC_F64_TEXT_NEON(3, r3);
#undef OIPCODEC_F64_TEXT_NEON
    }
}

/* oipcodec_row_f64 with NEON: per block, the digits of all (scalar), their texts four at a
 * time (oipcodec_f64_text4_neon; the lanes past the row's end get zeros), then the texts
 * copied 32 bytes wide; the same text as oipcodec_row_f64_scalar. */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_f64_neon(const void *data, ptrdiff_t n, char *out) {
    const uint64_t *v = (const uint64_t *)data;
    uint64_t digits[OIPCODEC_F64_BLOCK];
    uint64_t lens[OIPCODEC_F64_BLOCK];
    uint8_t text[OIPCODEC_F64_BLOCK][32];
    int exps[OIPCODEC_F64_BLOCK];
    ptrdiff_t base;
    for (base = 0; base < n; base += OIPCODEC_F64_BLOCK) {
        ptrdiff_t count = n - base < OIPCODEC_F64_BLOCK ? n - base : OIPCODEC_F64_BLOCK, j;
        oipcodec_f64_digits17(v + base, count, digits, exps);
        for (j = count; j & 3; j++) {
            digits[j] = 0;
            exps[j] = 0;
        }
        for (j = 0; j < count; j += 4) {
            oipcodec_f64_text4_neon(digits + j, exps + j, text + j, lens + j);
        }
        out = oipcodec_f64_put_texts(v + base, count, text, lens, out);
    }
    return n ? out - 1 : out;
}

#endif

#endif
