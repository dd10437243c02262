/* Integer rows to JSON text four elements at a time with AArch64's NEON: the vector path of
 * the integer row writers in write/int.h (OIPCODEC_INT_ROW) on AArch64, for blocks whose
 * magnitudes are all below 10**8, as the AVX2 kernels of write/x86/int.h do on x86-64, and for
 * 64-bit elements of any magnitude, as the AVX-512 kernels do; a 32-bit block with a magnitude
 * of 10**8 or more stops the kernel and the scalar writer, which defines the text, takes over.
 * No branch depends on a digit count or a sign.
 *
 * A block of 4 elements, narrowed to 32-bit lanes (64-bit ones with saturation, so that a
 * large magnitude stays large):
 * - the 8 decimal digits of each magnitude (leading zeros included) by Paul Khuong's
 *   parallel-lane method (see the top of write/int.h): halves by 10**4 with a widening
 *   multiply, quarters by 100 and digits by 10 with 16-bit doubling multiply-high reciprocals,
 *   two elements' digits per register;
 * - each element then one tbl from a register of its 8 ASCII digits, '-' and ',' (one ext of
 *   the pair's digits and a template), with an index row chosen by its sign and its count of
 *   leading zero digits (one bit mask per pair
 *   of elements, moved to a general register by a narrowing shift), stored 16 bytes wide; the
 *   pointer advances by the element's length, and later stores overwrite the spare bytes.
 * 64-bit elements: a block with a magnitude of 10**8 or more takes the 24-digit step
 * (oipcodec_int20_block_neon) instead, as the AVX-512 kernels' 20-digit blocks do: each
 * magnitude split by scalar multiply-high divisions into v / 10**16, (v / 10**8) % 10**8 and
 * v % 10**8, the three parts' digits by the 8-digit step above (three times 4 lanes), and each
 * element's text by tbl and tbx from its 24 digits and a comma, shifted by its digit count
 * (a run of such blocks goes through a function of its own: _wide_neon below).
 * NEON is part of AArch64, so the kernels need no run-time check; oipcodec_simd_features
 * (common/cpu.h) still lets a cap turn them off. */
#ifndef OIPCODEC_WRITE_ARM64_INT_H
#define OIPCODEC_WRITE_ARM64_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/cpu.h"

#if OIPCODEC_SIMD_ARM

/* The tbl index row of an element: k its place in the digit register (0 or 1), s its sign,
 * z its leading zero digits; byte j of its text. The element's table is 16 bytes: for k = 0,
 * '-' and ',' in bytes 0 and 1 and its ASCII digits in 8..15; for k = 1, its digits in 0..7
 * and '-' and ',' in 8 and 9 (each one ext of the pair's digits and a template). 0xFF (past
 * the table) gives a spare zero byte. */
#define OIPCODEC_NEON_DIGIT(k) (8 - 8 * (k))
#define OIPCODEC_NEON_MINUS(k) (8 * (k))
#define OIPCODEC_NEON_IDX(k, s, z, j)                                                          \
    ((j) < (s)                  ? OIPCODEC_NEON_MINUS(k)                                       \
     : (j) - (s) < 8 - (z)      ? OIPCODEC_NEON_DIGIT(k) + (z) + (j) - (s)                     \
     : (j) - (s) == 8 - (z)     ? OIPCODEC_NEON_MINUS(k) + 1                                   \
                                : 0xFF)
#define OIPCODEC_NEON_ROW(k, s, z)                                                             \
    {OIPCODEC_NEON_IDX(k, s, z, 0),  OIPCODEC_NEON_IDX(k, s, z, 1),                            \
     OIPCODEC_NEON_IDX(k, s, z, 2),  OIPCODEC_NEON_IDX(k, s, z, 3),                            \
     OIPCODEC_NEON_IDX(k, s, z, 4),  OIPCODEC_NEON_IDX(k, s, z, 5),                            \
     OIPCODEC_NEON_IDX(k, s, z, 6),  OIPCODEC_NEON_IDX(k, s, z, 7),                            \
     OIPCODEC_NEON_IDX(k, s, z, 8),  OIPCODEC_NEON_IDX(k, s, z, 9),                            \
     OIPCODEC_NEON_IDX(k, s, z, 10), OIPCODEC_NEON_IDX(k, s, z, 11),                           \
     OIPCODEC_NEON_IDX(k, s, z, 12), OIPCODEC_NEON_IDX(k, s, z, 13),                           \
     OIPCODEC_NEON_IDX(k, s, z, 14), OIPCODEC_NEON_IDX(k, s, z, 15)}
#define OIPCODEC_NEON_ROWS(k, s)                                                               \
    OIPCODEC_NEON_ROW(k, s, 0), OIPCODEC_NEON_ROW(k, s, 1), OIPCODEC_NEON_ROW(k, s, 2),        \
        OIPCODEC_NEON_ROW(k, s, 3), OIPCODEC_NEON_ROW(k, s, 4), OIPCODEC_NEON_ROW(k, s, 5),    \
        OIPCODEC_NEON_ROW(k, s, 6), OIPCODEC_NEON_ROW(k, s, 7)

/* [k][s][z]: 512 bytes, each row 16 bytes (one load). */
static const uint8_t oipcodec_int_neon_index[2][2][8][16] = {
    {{OIPCODEC_NEON_ROWS(0, 0)}, {OIPCODEC_NEON_ROWS(0, 1)}},
    {{OIPCODEC_NEON_ROWS(1, 0)}, {OIPCODEC_NEON_ROWS(1, 1)}},
};

/* The digits of 4 magnitudes (each < 10**8) as byte values 0..9, 8 per element with the
 * first digit in the lowest byte: elements 0 and 1 in *d01, 2 and 3 in *d23. Reciprocals:
 * x / 10**4 = (x * 0xD1B71759) >> 45 for x < 10**8; x / 100 = (x * 5243) >> 19 for x < 10**4;
 * x / 10 = (x * 6554) >> 16 for x < 100 (vqdmulh doubles: (2 * x * c) >> 16, no saturation
 * in these ranges). */
static inline void oipcodec_digits8x4_neon(uint32x4_t v, uint8x16_t *d01, uint8x16_t *d23) {
    const uint32x4_t c = vdupq_n_u32(0xD1B71759u);
    uint32x4_t hi, lo, halves;
    uint16x8_t w, q, r, pairs, tens, ones;
    hi = vuzp2q_u32(vreinterpretq_u32_u64(vmull_u32(vget_low_u32(v), vget_low_u32(c))),
                    vreinterpretq_u32_u64(vmull_high_u32(v, c)));
    hi = vshrq_n_u32(hi, 13);
    lo = vmlsq_n_u32(v, hi, 10000);
    halves = vsliq_n_u32(hi, lo, 16); /* 16-bit lanes: high half, low half of each element */
    w = vreinterpretq_u16_u32(halves);
    q = vshrq_n_u16(vreinterpretq_u16_s16(vqdmulhq_n_s16(vreinterpretq_s16_u16(w), 5243)), 4);
    r = vmlsq_n_u16(w, q, 100);
    /* quarters in order: elements 0 and 1, then 2 and 3 */
    pairs = vzip1q_u16(q, r);
    tens = vreinterpretq_u16_s16(vqdmulhq_n_s16(vreinterpretq_s16_u16(pairs), 3277));
    ones = vmlsq_n_u16(pairs, tens, 10);
    *d01 = vreinterpretq_u8_u16(vsliq_n_u16(tens, ones, 8));
    pairs = vzip2q_u16(q, r);
    tens = vreinterpretq_u16_s16(vqdmulhq_n_s16(vreinterpretq_s16_u16(pairs), 3277));
    ones = vmlsq_n_u16(pairs, tens, 10);
    *d23 = vreinterpretq_u8_u16(vsliq_n_u16(tens, ones, 8));
}

/* Nibble k*4 of the result is 0xF where byte k of d is non-zero: the last digit of each
 * element (bytes 7 and 15) marked too, so that 0 keeps one digit. */
static inline uint64_t oipcodec_nonzero_nibbles_neon(uint8x16_t d) {
    uint8x8_t nibbles = vshrn_n_u16(vreinterpretq_u16_u8(vtstq_u8(d, d)), 4);
    return vget_lane_u64(vreinterpret_u64_u8(nibbles), 0) | 0x1000000010000000ull;
}

/* One element: its text (sign, digits from the first non-zero one, comma) by one tbl from its
 * table (see OIPCODEC_NEON_IDX), stored 16 bytes wide; zeros4 is 4 times its leading zero
 * digits. Returns the end of its text. */
static inline char *oipcodec_int_neon_put(char *out, uint8x16_t table, const uint8_t *rows,
                                          unsigned zeros4, unsigned sign) {
    const uint8x16_t index = vld1q_u8(rows + 128 * sign + 4 * zeros4);
    vst1q_u8((uint8_t *)out, vqtbl1q_u8(table, index));
    return out + 9 + sign - (zeros4 >> 2);
}

/* Writes 4 elements with their commas: magnitudes in mag (each < 10**8), the negative ones'
 * bits at 0, 16, 32 and 48 of negative. Stores 16 bytes at each element's start. One-register
 * tables: a two-register tbl needs its registers adjacent, which compilers meet with copies. */
static inline char *oipcodec_int4_block_neon(uint32x4_t mag, uint64_t negative, char *out) {
    const uint8x16_t ascii = vdupq_n_u8('0');
    const uint8x16_t signs = vreinterpretq_u8_u64(vdupq_n_u64(0x2C2Du)); /* '-', ',' twice */
    const uint8_t *rows0 = oipcodec_int_neon_index[0][0][0];
    const uint8_t *rows1 = oipcodec_int_neon_index[1][0][0];
    uint8x16_t d01, d23;
    uint64_t m01, m23;
    oipcodec_digits8x4_neon(mag, &d01, &d23);
    m01 = oipcodec_nonzero_nibbles_neon(d01);
    m23 = oipcodec_nonzero_nibbles_neon(d23);
    d01 = vorrq_u8(d01, ascii);
    d23 = vorrq_u8(d23, ascii);
    out = oipcodec_int_neon_put(out, vextq_u8(signs, d01, 8), rows0,
                                (unsigned)oipcodec_ctz64(m01), (unsigned)negative & 1);
    out = oipcodec_int_neon_put(out, vextq_u8(d01, signs, 8), rows1,
                                (unsigned)oipcodec_ctz64(m01 >> 32),
                                (unsigned)(negative >> 16) & 1);
    out = oipcodec_int_neon_put(out, vextq_u8(signs, d23, 8), rows0,
                                (unsigned)oipcodec_ctz64(m23), (unsigned)(negative >> 32) & 1);
    return oipcodec_int_neon_put(out, vextq_u8(d23, signs, 8), rows1,
                                 (unsigned)oipcodec_ctz64(m23 >> 32),
                                 (unsigned)(negative >> 48) & 1);
}

/* 0, 1, ..., 15: the tbl indices of a table read in order. */
static const uint8_t oipcodec_int_neon_iota[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                   8, 9, 10, 11, 12, 13, 14, 15};

/* By the leading zero bits of a 64-bit magnitude v (v | 1, so 0 counts as 1): the power of
 * ten that gives v one digit more than 2**(63 - zeros), and 24 less that smaller count. v's
 * leading zero digits among 24 are then row[1] - (v >= row[0]): one load pair and one
 * comparison. Row z holds 10**n and 24 - n, n = len(str(2**(63 - z))) in Python. */
static const uint64_t oipcodec_int24_skip[64][2] = {
    {10000000000000000000ull, 5}, {10000000000000000000ull, 5}, {10000000000000000000ull, 5},
    {10000000000000000000ull, 5}, {1000000000000000000ull, 6}, {1000000000000000000ull, 6},
    {1000000000000000000ull, 6}, {100000000000000000ull, 7}, {100000000000000000ull, 7},
    {100000000000000000ull, 7}, {10000000000000000ull, 8}, {10000000000000000ull, 8},
    {10000000000000000ull, 8}, {10000000000000000ull, 8}, {1000000000000000ull, 9},
    {1000000000000000ull, 9}, {1000000000000000ull, 9}, {100000000000000ull, 10},
    {100000000000000ull, 10}, {100000000000000ull, 10}, {10000000000000ull, 11},
    {10000000000000ull, 11}, {10000000000000ull, 11}, {10000000000000ull, 11},
    {1000000000000ull, 12}, {1000000000000ull, 12}, {1000000000000ull, 12},
    {100000000000ull, 13}, {100000000000ull, 13}, {100000000000ull, 13}, {10000000000ull, 14},
    {10000000000ull, 14}, {10000000000ull, 14}, {10000000000ull, 14}, {1000000000ull, 15},
    {1000000000ull, 15}, {1000000000ull, 15}, {100000000ull, 16}, {100000000ull, 16},
    {100000000ull, 16}, {10000000ull, 17}, {10000000ull, 17}, {10000000ull, 17},
    {10000000ull, 17}, {1000000ull, 18}, {1000000ull, 18}, {1000000ull, 18}, {100000ull, 19},
    {100000ull, 19}, {100000ull, 19}, {10000ull, 20}, {10000ull, 20}, {10000ull, 20},
    {10000ull, 20}, {1000ull, 21}, {1000ull, 21}, {1000ull, 21}, {100ull, 22}, {100ull, 22},
    {100ull, 22}, {10ull, 23}, {10ull, 23}, {10ull, 23}, {10ull, 23}
};

/* One element of a 24-digit block: its 24 ASCII digits (leading zeros included) in t0 (the
 * first 16) and bytes 0..7 of t1, ',' in t1's bytes 8..15; its text is '-' (stored always,
 * kept when negative), then the digits from its first significant one (skip = 24 - digits)
 * on and the comma. With a = 0..15 + skip, the first 16 bytes are tbl(t0, a) filled in by
 * tbx(t1, a - 16) (indices past a table leave a byte as it is: tbl's zero, tbx's own), the
 * next 16 tbl(t1, a): one-register tables, as a two-register tbl costs compilers copies into
 * adjacent registers. Spare bytes are overwritten by later stores. The digit count comes from
 * the magnitude's bit length as the scalar writers count it: one table comparison. */
static inline char *oipcodec_int24_put_neon(char *out, uint8x16_t t0, uint8x16_t t1,
                                            uint64_t mag, unsigned sign, uint8x16_t iota) {
    const uint64_t *row = oipcodec_int24_skip[oipcodec_clz64(mag | 1)];
    const unsigned skip = (unsigned)row[1] - (mag >= row[0]);
    const uint8x16_t a = vaddq_u8(iota, vdupq_n_u8((uint8_t)skip));
    *out = '-';
    out += sign;
    vst1q_u8((uint8_t *)out, vqtbx1q_u8(vqtbl1q_u8(t0, a), t1, vsubq_u8(a, vdupq_n_u8(16))));
    vst1q_u8((uint8_t *)out + 16, vqtbl1q_u8(t1, a));
    return out + 25 - skip;
}

/* 32-bit lanes from two 64-bit words, lanes 0 and 1 from lo. */
static inline uint32x4_t oipcodec_neon_pairs(uint64_t lo, uint64_t hi) {
    return vreinterpretq_u32_u64(vsetq_lane_u64(hi, vdupq_n_u64(lo), 1));
}

/* Writes 4 elements of any 64-bit magnitude (m0..m3) with their commas, the negative ones'
 * bits at 0, 16, 32 and 48 of negative. Each magnitude is cut into three parts below 10**8
 * by scalar divisions (the compilers' multiply-high reciprocals: NEON has no 64-bit
 * multiply-high), each part's 8 digits come from oipcodec_digits8x4_neon, and each element's
 * 24 digits are two zips of its parts' halves. Stores 33 bytes from each element's start.
 * Inlined into the loop of a run of such blocks (the kernels' _wide_neon functions). */
__attribute__((always_inline)) static inline char *
oipcodec_int20_block_neon(uint64_t m0, uint64_t m1, uint64_t m2, uint64_t m3, uint64_t negative,
                          char *out) {
    const uint8x16_t ascii = vdupq_n_u8('0');
    const uint64x2_t commas = vreinterpretq_u64_u8(vdupq_n_u8(','));
    const uint8x16_t iota = vld1q_u8(oipcodec_int_neon_iota);
    const uint64_t e16 = 10000000000000000ull, e8 = 100000000u;
    const uint64_t h0 = m0 / e16, h1 = m1 / e16, h2 = m2 / e16, h3 = m3 / e16;
    const uint64_t r0 = m0 - h0 * e16, r1 = m1 - h1 * e16, r2 = m2 - h2 * e16,
                   r3 = m3 - h3 * e16;
    const uint64_t d0 = r0 / e8, d1 = r1 / e8, d2 = r2 / e8, d3 = r3 / e8;
    /* each register one dup and one insert of two lanes' pairs */
    uint32x4_t high = oipcodec_neon_pairs(h0 | h1 << 32, h2 | h3 << 32);
    uint32x4_t middle = oipcodec_neon_pairs(d0 | d1 << 32, d2 | d3 << 32);
    uint32x4_t low = oipcodec_neon_pairs((r0 - d0 * e8) | (r1 - d1 * e8) << 32,
                                         (r2 - d2 * e8) | (r3 - d3 * e8) << 32);
    uint8x16_t h01, h23, d01, d23, l01, l23;
    uint64x2_t p01_h, p23_h, p01_d, p23_d, ll01, ll23;
    oipcodec_digits8x4_neon(high, &h01, &h23);
    oipcodec_digits8x4_neon(middle, &d01, &d23);
    oipcodec_digits8x4_neon(low, &l01, &l23);
    p01_h = vreinterpretq_u64_u8(vorrq_u8(h01, ascii));
    p23_h = vreinterpretq_u64_u8(vorrq_u8(h23, ascii));
    p01_d = vreinterpretq_u64_u8(vorrq_u8(d01, ascii));
    p23_d = vreinterpretq_u64_u8(vorrq_u8(d23, ascii));
    ll01 = vreinterpretq_u64_u8(vorrq_u8(l01, ascii));
    ll23 = vreinterpretq_u64_u8(vorrq_u8(l23, ascii));
#define OIPCODEC_INT24_PUT(ZIP, HD, LL, M, BIT)                                                 \
    oipcodec_int24_put_neon(out, vreinterpretq_u8_u64(ZIP(HD##_h, HD##_d)),                    \
                            vreinterpretq_u8_u64(ZIP(LL, commas)), M,                          \
                            (unsigned)(negative >> (BIT)) & 1, iota)
    out = OIPCODEC_INT24_PUT(vzip1q_u64, p01, ll01, m0, 0);
    out = OIPCODEC_INT24_PUT(vzip2q_u64, p01, ll01, m1, 16);
    out = OIPCODEC_INT24_PUT(vzip1q_u64, p23, ll23, m2, 32);
    return OIPCODEC_INT24_PUT(vzip2q_u64, p23, ll23, m3, 48);
#undef OIPCODEC_INT24_PUT
}

/* Loaders: 4 elements from p as magnitudes in 32-bit lanes (64-bit ones narrowed with
 * saturation: a magnitude of 2**32 or more reads as 2**32 - 1, still "large") and, for signed
 * types, the negative ones' bits at 0, 16, 32 and 48 of *negative. The abs of the most
 * negative value is itself, which read unsigned is its magnitude. */
static inline uint64_t oipcodec_neon_sign_bits(uint32x4_t negative_lanes) {
    return vget_lane_u64(vreinterpret_u64_u16(vmovn_u32(negative_lanes)), 0) &
           0x0001000100010001ull;
}

static inline uint32x4_t oipcodec_neon_load4_u8(const uint8_t *p, uint64_t *negative) {
    uint32_t word;
    memcpy(&word, p, 4);
    *negative = 0;
    return vmovl_u16(vget_low_u16(vmovl_u8(vcreate_u8(word))));
}

static inline uint32x4_t oipcodec_neon_load4_i8(const int8_t *p, uint64_t *negative) {
    uint32_t word;
    int32x4_t lanes;
    memcpy(&word, p, 4);
    lanes = vmovl_s16(vget_low_s16(vmovl_s8(vcreate_s8(word))));
    *negative = oipcodec_neon_sign_bits(vcltzq_s32(lanes));
    return vreinterpretq_u32_s32(vabsq_s32(lanes));
}

static inline uint32x4_t oipcodec_neon_load4_u16(const uint16_t *p, uint64_t *negative) {
    *negative = 0;
    return vmovl_u16(vld1_u16(p));
}

static inline uint32x4_t oipcodec_neon_load4_i16(const int16_t *p, uint64_t *negative) {
    int32x4_t lanes = vmovl_s16(vld1_s16(p));
    *negative = oipcodec_neon_sign_bits(vcltzq_s32(lanes));
    return vreinterpretq_u32_s32(vabsq_s32(lanes));
}

static inline uint32x4_t oipcodec_neon_load4_u32(const uint32_t *p, uint64_t *negative) {
    *negative = 0;
    return vld1q_u32(p);
}

static inline uint32x4_t oipcodec_neon_load4_i32(const int32_t *p, uint64_t *negative) {
    int32x4_t lanes = vld1q_s32(p);
    *negative = oipcodec_neon_sign_bits(vcltzq_s32(lanes));
    return vreinterpretq_u32_s32(vabsq_s32(lanes));
}

static inline uint32x4_t oipcodec_neon_load4_u64(const uint64_t *p, uint64_t *negative) {
    *negative = 0;
    return vqmovn_high_u64(vqmovn_u64(vld1q_u64(p)), vld1q_u64(p + 2));
}

static inline uint32x4_t oipcodec_neon_load4_i64(const int64_t *p, uint64_t *negative) {
    int64x2_t a = vld1q_s64(p), b = vld1q_s64(p + 2);
    uint32x4_t neg = vmovn_high_u64(vmovn_u64(vcltzq_s64(a)), vcltzq_s64(b));
    *negative = oipcodec_neon_sign_bits(neg);
    return vqmovn_high_u64(vqmovn_u64(vreinterpretq_u64_s64(vabsq_s64(a))),
                           vreinterpretq_u64_s64(vabsq_s64(b)));
}

/* The loader of p's element type. */
#define OIPCODEC_NEON_LOAD4(p, negative)                                                       \
    _Generic((p), const uint8_t *: oipcodec_neon_load4_u8,                                     \
             const int8_t *: oipcodec_neon_load4_i8,                                           \
             const uint16_t *: oipcodec_neon_load4_u16,                                        \
             const int16_t *: oipcodec_neon_load4_i16,                                         \
             const uint32_t *: oipcodec_neon_load4_u32,                                        \
             const int32_t *: oipcodec_neon_load4_i32,                                         \
             const uint64_t *: oipcodec_neon_load4_u64,                                        \
             const int64_t *: oipcodec_neon_load4_i64)((p), (negative))

/* One kernel per element type, with the contract of write/x86/int.h's kernels: writes v[i..]
 * with their commas through *end, 4 at a time, while at least 16 elements are left (each
 * store then ends inside the room the caller gave the elements not yet written, at least 2
 * bytes each, plus its 32 bytes of slack: 33 bytes from the last element of a block leave
 * 12 x 2 + 32), and returns the index of the first element not written. WIDE says what a
 * block with a magnitude of 10**8 or more does, as in write/x86/int.h: 0, there is none (8-
 * and 16-bit types); 1, it stops the kernel (32-bit types, whose scalar writer needs only
 * one division there); 2, it takes the 24-digit step (64-bit types; the magnitudes read
 * again as scalars, negated by the sign bits). */
#define OIPCODEC_NEON_MAG64(x, negative, bit)                                                  \
    ((negative) >> (bit) & 1 ? 0 - (uint64_t)(x) : (uint64_t)(x))
#define OIPCODEC_INT_NEON_ROW(NAME, CTYPE, WIDE)                                               \
    /* the 24-digit blocks from v[i] on while they come (WIDE 2): called once per run of them, \
     * so that the small-value loop keeps its constants in registers */                        \
    OIPCODEC_MAYBE_UNUSED OIPCODEC_NOINLINE static ptrdiff_t NAME##_wide_neon(                 \
        const CTYPE *v, ptrdiff_t i, ptrdiff_t n, char **end) {                               \
        char *out = *end;                                                                     \
        for (; i + 16 <= n; i += 4) {                                                         \
            uint64_t negative;                                                                \
            uint32x4_t mag = OIPCODEC_NEON_LOAD4(v + i, &negative);                           \
            if (vmaxvq_u32(mag) < 100000000u) {                                               \
                break;                                                                        \
            }                                                                                 \
            out = oipcodec_int20_block_neon(OIPCODEC_NEON_MAG64(v[i], negative, 0),           \
                                            OIPCODEC_NEON_MAG64(v[i + 1], negative, 16),      \
                                            OIPCODEC_NEON_MAG64(v[i + 2], negative, 32),      \
                                            OIPCODEC_NEON_MAG64(v[i + 3], negative, 48),      \
                                            negative, out);                                   \
        }                                                                                     \
        *end = out;                                                                           \
        return i;                                                                             \
    }                                                                                         \
    OIPCODEC_MAYBE_UNUSED OIPCODEC_NOINLINE static ptrdiff_t NAME##_neon(                      \
        const void *data, ptrdiff_t i, ptrdiff_t n, char **end) {                             \
        const CTYPE *v = (const CTYPE *)data;                                                 \
        char *out = *end;                                                                     \
        while (i + 16 <= n) {                                                                 \
            char *wide_end;                                                                   \
            for (; i + 16 <= n; i += 4) {                                                     \
                uint64_t negative;                                                            \
                uint32x4_t mag = OIPCODEC_NEON_LOAD4(v + i, &negative);                       \
                if (WIDE && vmaxvq_u32(mag) >= 100000000u) {                                  \
                    break;                                                                    \
                }                                                                             \
                out = oipcodec_int4_block_neon(mag, negative, out);                           \
            }                                                                                 \
            if (WIDE != 2 || i + 16 > n) {                                                    \
                break;                                                                        \
            }                                                                                 \
            /* a copy of out: out's address taken would keep it in memory */                 \
            wide_end = out;                                                                   \
            i = NAME##_wide_neon(v, i, n, &wide_end);                                         \
            out = wide_end;                                                                   \
        }                                                                                     \
        *end = out;                                                                           \
        return i;                                                                             \
    }

#endif /* OIPCODEC_SIMD_ARM */

#endif
