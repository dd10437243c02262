/* NEON for the JSON parser's number readers and array lanes (read/numscan.h,
 * read/int_lane.h, read/float_lane.h) on AArch64: the comma bit mask of 64 bytes of text and
 * the digit scan of 16, which read/swar.h otherwise builds 8 bytes at a time in general registers.
 * Each 16-byte compare's matches are weighted by their bit in a byte (1, 2, .. 128) and
 * gathered in order by pairwise adds: the comma scan takes 17 instructions against the SWAR
 * scan's 80 (docs/measurements.md#aarch64-neon-paths-in-instructions).
 *
 * The lanes call this per 64-byte block, too often for a run-time feature test, so it is
 * chosen when compiling: OIPCODEC_NEON_LANES is 1 on AArch64 with NEON (common/cpu.h's
 * OIPCODEC_SIMD_ARM) unless the build caps vector code (-DOIPCODEC_SIMD_MAX=0), which is how
 * tools/check_lanes_neon.sh compares the two. */
#ifndef OIPCODEC_READ_ARM64_LANES_H
#define OIPCODEC_READ_ARM64_LANES_H

#include <stdint.h>

#include "oipcodec/common/cpu.h"

#if OIPCODEC_SIMD_ARM && OIPCODEC_SIMD_MAX >= 1
#define OIPCODEC_NEON_LANES 1

/* Bit k set when p[k] is a comma, for the 64 bytes at p. */
static inline uint64_t oipcodec_commas64_neon(const unsigned char *p) {
    const uint8x16_t comma = vdupq_n_u8(',');
    const uint8x16_t bits = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
    uint8x16_t m0 = vandq_u8(vceqq_u8(vld1q_u8(p), comma), bits);
    uint8x16_t m1 = vandq_u8(vceqq_u8(vld1q_u8(p + 16), comma), bits);
    uint8x16_t m2 = vandq_u8(vceqq_u8(vld1q_u8(p + 32), comma), bits);
    uint8x16_t m3 = vandq_u8(vceqq_u8(vld1q_u8(p + 48), comma), bits);
    /* pairs, quadruples, then octets of bytes: byte k of the result holds p[8k..8k+7] */
    uint8x16_t sum = vpaddq_u8(vpaddq_u8(m0, m1), vpaddq_u8(m2, m3));
    sum = vpaddq_u8(sum, sum);
    return vgetq_lane_u64(vreinterpretq_u64_u8(sum), 0);
}

/* The 16 bytes at p as digit values (each digit byte's value, every other byte 0) stored at
 * `values`; returns the non-digit mask: bit k set when p[k] is not an ASCII digit, and bit 16
 * always (read/swar.h's oipcodec_scan16 contract). */
static inline uint32_t oipcodec_scan16_neon(const unsigned char *p, unsigned char *values) {
    const uint8x16_t bits = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
    uint8x16_t t = vsubq_u8(vld1q_u8(p), vdupq_n_u8('0'));
    uint8x16_t digit = vcltq_u8(t, vdupq_n_u8(10));
    uint8x16_t m = vbicq_u8(bits, digit);
    vst1q_u8(values, vandq_u8(t, digit));
    /* pairs, quadruples, octets: bytes 0 and 1 of the sum hold p[0..7] and p[8..15] */
    m = vpaddq_u8(m, m);
    m = vpaddq_u8(m, m);
    m = vpaddq_u8(m, m);
    return (uint32_t)vgetq_lane_u16(vreinterpretq_u16_u8(m), 0) | 0x10000u;
}

#else
#define OIPCODEC_NEON_LANES 0
#endif

#endif
