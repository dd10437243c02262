/* Decimal digits in NEON lanes, for the JSON writers' AArch64 paths (write/arm64/f32.h,
 * write/arm64/f64.h): four 32-bit values at a time, compiled only where OIPCODEC_SIMD_ARM is 1. */
#ifndef OIPCODEC_WRITE_ARM64_DIGITS_H
#define OIPCODEC_WRITE_ARM64_DIGITS_H

#include <stdint.h>

#include "oipcodec/common/cpu.h"

#if OIPCODEC_SIMD_ARM

/* The 8 decimal digits of each lane's v < 10**8 as byte values 0..9, the first digit in the
 * lowest byte: lanes 0 and 1 in *d01 (bytes 0-7 and 8-15), lanes 2 and 3 in *d23. */
static inline void oipcodec_digits8_neon(uint32x4_t v, uint8x16_t *d01, uint8x16_t *d23) {
    /* v / 10**4 as (v * ceil(2**45 / 10**4)) >> 45, exact for v < 10**8: the high halves of
     * the 64-bit products, then 13 more bits */
    const uint32x4_t hi = vshrq_n_u32(
        vuzp2q_u32(vreinterpretq_u32_u64(vmull_n_u32(vget_low_u32(v), 0xD1B71759u)),
                   vreinterpretq_u32_u64(vmull_high_n_u32(v, 0xD1B71759u))),
        13);
    const uint32x4_t lo = vmlsq_n_u32(v, hi, 10000);
    /* 16-bit lanes: hi, lo of each element; / 100 as (x * 5243) >> 19 for x < 10**4
     * (sqdmulh doubles: (2 x 5243) >> 16, then 4 more bits) */
    const uint16x8_t x = vreinterpretq_u16_u32(vsliq_n_u32(hi, lo, 16));
    const uint16x8_t q = vshrq_n_u16(
        vreinterpretq_u16_s16(vqdmulhq_n_s16(vreinterpretq_s16_u16(x), 5243)), 4);
    const uint16x8_t r = vmlsq_n_u16(x, q, 100);
    /* pairs below 100 in element order, then / 10 as (y * 6554) >> 16 */
    const uint16x8_t y01 = vzip1q_u16(q, r), y23 = vzip2q_u16(q, r);
    const uint16x8_t t01 = vreinterpretq_u16_s16(vqdmulhq_n_s16(vreinterpretq_s16_u16(y01), 3277));
    const uint16x8_t t23 = vreinterpretq_u16_s16(vqdmulhq_n_s16(vreinterpretq_s16_u16(y23), 3277));
    *d01 = vreinterpretq_u8_u16(vsliq_n_u16(t01, vmlsq_n_u16(y01, t01, 10), 8));
    *d23 = vreinterpretq_u8_u16(vsliq_n_u16(t23, vmlsq_n_u16(y23, t23, 10), 8));
}

/* 1 + the index of the highest nonzero byte of each 8-byte half of d01 and d23 (0 when all
 * are zero), as the four lanes' values. */
static inline uint32x4_t oipcodec_last_nonzero8_neon(uint8x16_t d01, uint8x16_t d23) {
    static const uint8_t iota[16] = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};
    const uint8x16_t at = vld1q_u8(iota);
    uint8x16_t p = vpmaxq_u8(vandq_u8(vtstq_u8(d01, d01), at), vandq_u8(vtstq_u8(d23, d23), at));
    p = vpmaxq_u8(p, p);
    p = vpmaxq_u8(p, p);
    return vmovl_u16(vget_low_u16(vmovl_u8(vget_low_u8(p))));
}

/* 1 + the index of the highest nonzero byte of each of d0..d3 (0 when all are zero), as the
 * four lanes' values. */
static inline uint32x4_t oipcodec_last_nonzero16_neon(uint8x16_t d0, uint8x16_t d1,
                                                      uint8x16_t d2, uint8x16_t d3) {
    static const uint8_t iota[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const uint8x16_t at = vld1q_u8(iota);
    uint8x16_t p = vpmaxq_u8(
        vpmaxq_u8(vandq_u8(vtstq_u8(d0, d0), at), vandq_u8(vtstq_u8(d1, d1), at)),
        vpmaxq_u8(vandq_u8(vtstq_u8(d2, d2), at), vandq_u8(vtstq_u8(d3, d3), at)));
    p = vpmaxq_u8(p, p);
    p = vpmaxq_u8(p, p);
    return vmovl_u16(vget_low_u16(vmovl_u8(vget_low_u8(p))));
}

#endif

#endif
