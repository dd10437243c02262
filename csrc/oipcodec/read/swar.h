/* Byte-parallel readers of ASCII digits and commas: 8, 16 or 64 bytes of text per step, in
 * 64-bit words (SWAR, "SIMD within a register") or SSE2 registers, for the JSON number readers
 * (read/numscan.h) and the array lanes (read/float_lane.h, read/int_lane.h).
 *
 * Techniques and where they come from:
 * - digits to their value a few at a time, pairs then quadruples then octets, each step one
 *   multiply-add of adjacent lanes: Wojciech Mula, "Parsing decimal numbers - part 1: SWAR"
 *   (2014, http://0x80.pl/notesen/2014-10-12-parsing-decimal-numbers-part-1-swar.html) and its
 *   part 2 (SSE, with pmaddubsw/pmaddwd); oipcodec_sixteen_digits is that SSE method with the
 *   first step done by a 16-bit multiply and shift, as SSE2 has no byte multiply-add.
 * - oipcodec_eight_digits is fast_float's parse_eight_digits_unrolled (credited there to
 *   @aqrit), taking digit values rather than ASCII: fast_float, Daniel Lemire and contributors,
 *   https://github.com/fastfloat/fast_float, available under Apache-2.0, MIT or BSL-1.0.
 * - per-byte tests without carries between bytes ("is this byte a digit / zero") and the
 *   zero-byte test of oipcodec_commas64: Henry S. Warren, Jr., "Hacker's Delight" (2nd ed.,
 *   2012), section 6-1, "Find First 0-Byte"; the top bits of the eight bytes are then gathered
 *   into one byte by a multiply with 0x0102040810204080.
 * - finding the end of a digit run as the lowest set bit of a non-digit mask (one mask for 16
 *   bytes: no loop whose exit depends on the data) and the comma bit masks that let the lanes
 *   find every element before parsing any: the structural-index idea of simdjson, Geoff
 *   Langdale and Daniel Lemire, "Parsing Gigabytes of JSON per Second", VLDB Journal 28(6),
 *   2019 (https://arxiv.org/abs/1902.08318).
 *
 * OIPCODEC_SWAR is 0 on big-endian hosts, where the readers are compiled out (their callers
 * take byte-wise paths); OIPCODEC_SSE2 is 1 on x86-64 (SSE2 is part of the architecture), and
 * on AArch64 the comma and digit scans are NEON's (read/arm64/lanes.h). */
#ifndef OIPCODEC_READ_SWAR_H
#define OIPCODEC_READ_SWAR_H

#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/pow10.h"
#include "oipcodec/common/sse2.h"
#include "oipcodec/read/arm64/lanes.h"

#define OIPCODEC_IS_DIGIT(c) ((unsigned char)((c) - '0') < 10)

/* The run of ASCII digits starting at p, up to 8 of them (8 bytes must be readable): its
 * length in *run and its value. Little-endian hosts find the run's end with a bit mask; others
 * take the digits one by one. */
static inline uint64_t oipcodec_digit_run(const unsigned char *p, int *run) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    uint64_t value = 0;
    int n = 0;
    while (n < 8 && OIPCODEC_IS_DIGIT(p[n])) {
        value = value * 10 + (uint64_t)(p[n] - '0');
        n++;
    }
    *run = n;
    return value;
#else
    uint64_t v, other, digits;
    int n;
    memcpy(&v, p, 8);
    /* A byte is a digit when its high nibble is 3 and adding 6 to it does not carry out of its
     * low nibble. A carry out of a non-digit byte may spoil the bytes after it, which do not
     * matter: only the first non-digit byte is looked for. */
    other = ((v & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
            (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull);
    n = other ? oipcodec_ctz64(other) >> 3 : 8;
    *run = n;
    if (n == 0) {
        return 0;
    }
    /* Keep the n digit bytes, moved to the top so that zero bytes lead: the value is then
     * that of eight digits. */
    digits = (v - 0x3030303030303030ull) << (8 * (8 - n));
    digits = (digits * 10 + (digits >> 8)) & 0x00FF00FF00FF00FFull;
    digits = (digits * 100 + (digits >> 16)) & 0x0000FFFF0000FFFFull;
    digits = (digits * 10000 + (digits >> 32)) & 0x00000000FFFFFFFFull;
    return digits;
#endif
}

/* The fast readers (read/numscan.h, the lanes) look at the 16 bytes after a token's start at
 * once: one mask says where the digit runs end, so a number costs the same few instructions
 * whatever its digit counts, with no loop whose exit depends on the data (those exits were
 * mispredicted on varied input). They need little-endian words (byte k of the text is byte k
 * of the word); on big-endian hosts they are compiled out and every token takes the byte-wise
 * readers. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define OIPCODEC_SWAR 0
#else
#define OIPCODEC_SWAR 1
#endif

static inline uint64_t oipcodec_load8(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* 16 bytes of 0xFF then 16 of 0: as a mask, the 16 (or 8) bytes at offset 16 - k keep the
 * bytes below k, and the 8 at offset 24 - k the bytes 8.. below k. */
static const unsigned char oipcodec_prefix_bytes[32] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
};

/* The 16 bytes at p as digit values: each digit byte's value (0..9), every other byte 0. */
#if OIPCODEC_SSE2
typedef __m128i oipcodec_digits16;
#else
typedef struct {
    uint64_t lo, hi;
} oipcodec_digits16;
#endif

/* Read the 16 bytes at p into *d; returns the non-digit mask: bit k set when p[k] is not an
 * ASCII digit, and bit 16 always, so that there is a lowest set bit. */
static inline uint32_t oipcodec_scan16(const unsigned char *p, oipcodec_digits16 *d) {
#if OIPCODEC_SSE2
    /* c - '0' < 10 unsigned, as a signed compare: (c - '0') ^ 0x80 < -118. */
    __m128i t = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)p), _mm_set1_epi8('0'));
    __m128i digit = _mm_cmplt_epi8(_mm_xor_si128(t, _mm_set1_epi8((char)0x80)),
                                   _mm_set1_epi8((char)0x8A));
    *d = _mm_and_si128(t, digit);
    return ((uint32_t)_mm_movemask_epi8(digit) ^ 0xFFFFu) | 0x10000u;
#elif OIPCODEC_NEON_LANES
    /* the struct's two words are the 16 values in memory order on little-endian AArch64 */
    return oipcodec_scan16_neon(p, (unsigned char *)d);
#else
    /* Per byte, without carries between bytes: t = c ^ '0' is c's value for a digit; (t & 0x7F)
     * + 0x76 reaches 0x80 exactly when t & 0x7F >= 10, and t's own top bit covers c >= 0x80.
     * The multiply gathers the eight top bits into the top byte (no two partial products
     * meet). */
    uint64_t ta = oipcodec_load8(p) ^ 0x3030303030303030ull;
    uint64_t tb = oipcodec_load8(p + 8) ^ 0x3030303030303030ull;
    uint64_t na = ((((ta & 0x7F7F7F7F7F7F7F7Full) + 0x7676767676767676ull) | ta) &
                   0x8080808080808080ull) >> 7;
    uint64_t nb = ((((tb & 0x7F7F7F7F7F7F7F7Full) + 0x7676767676767676ull) | tb) &
                   0x8080808080808080ull) >> 7;
    d->lo = ta & ~(na * 0xFF);
    d->hi = tb & ~(nb * 0xFF);
    return (uint32_t)((na * 0x0102040810204080ull) >> 56) |
           ((uint32_t)((nb * 0x0102040810204080ull) >> 56) << 8) | 0x10000u;
#endif
}

/* The digit values of the bytes below k (0 <= k <= 16) of *d, bytes 0..7 in *lo, 8..15 in
 * *hi; the others 0. */
static inline void oipcodec_digits16_take(const oipcodec_digits16 *d, int k, uint64_t *lo,
                                          uint64_t *hi) {
#if OIPCODEC_SSE2
    __m128i x = _mm_and_si128(*d,
                              _mm_loadu_si128((const __m128i *)(oipcodec_prefix_bytes + 16 - k)));
    *lo = (uint64_t)_mm_cvtsi128_si64(x);
    *hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x));
#else
    *lo = d->lo & oipcodec_load8(oipcodec_prefix_bytes + 16 - k);
    *hi = d->hi & oipcodec_load8(oipcodec_prefix_bytes + 24 - k);
#endif
}

/* The value of eight digit values, byte 0 the most significant: pairs, then quadruples, then
 * the whole, with three multiplies. */
static inline uint64_t oipcodec_eight_digits(uint64_t v) {
    v = v * 10 + (v >> 8);
    return (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
            (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
           32;
}

#if OIPCODEC_SSE2
/* The value of sixteen digit values, byte 0 the most significant, in SSE2 (no SSSE3 byte
 * multiply-add): pairs with a 16-bit multiply and shift, then quadruples and octets with
 * multiply-adds of 16-bit lanes. */
static inline uint64_t oipcodec_sixteen_digits(__m128i x) {
    __m128i pairs = _mm_add_epi16(
        _mm_mullo_epi16(_mm_and_si128(x, _mm_set1_epi16(0xFF)), _mm_set1_epi16(10)),
        _mm_srli_epi16(x, 8));
    __m128i quads = _mm_madd_epi16(pairs, _mm_set1_epi32(0x00010064)); /* 100 * a + b */
    __m128i octets = _mm_madd_epi16(_mm_packs_epi32(quads, quads),
                                    _mm_set1_epi32(0x00012710)); /* 10000 * a + b */
    uint64_t both = (uint64_t)_mm_cvtsi128_si64(octets);
    return (both & 0xFFFFFFFFu) * 100000000u + (both >> 32);
}
#endif

/* The digits below k (0 <= k <= 16) of *d, byte 0 the most significant, as a 16-digit value:
 * digits * 10**(16 - k). Two scalar halves: for integers this measured faster than
 * oipcodec_sixteen_digits (the float lane, with more work per element, prefers the latter's
 * fewer instructions). */
static inline uint64_t oipcodec_digits16_value(const oipcodec_digits16 *d, int k) {
    uint64_t lo, hi;
    oipcodec_digits16_take(d, k, &lo, &hi);
    return oipcodec_eight_digits(lo) * 100000000u + oipcodec_eight_digits(hi);
}

/* The digits of a number whose 16 bytes at p are in d, with a dot at i (1 <= i <= 8; i = 16
 * for none) and its digits ending before `stop` (<= 16), as X = digits * 10**(16 - count): the
 * dot taken out (the bytes after it move down one place) and the value padded with zeros to 16
 * digits, so that X * 10**(i - 16) is the number whatever its fraction's length and no shift
 * depends on that length. A sign at p[0] is a non-digit, hence a leading 0 digit here, and counts in i. The
 * 16th digit is always 0: X = 10 * w with w < 10**15, and X itself is exact as a double (its
 * odd part, 5 * w, is below 2**53). Masks, not branches (nor conditional moves a compiler
 * might turn into branches): the lengths vary between numbers. */
static inline uint64_t oipcodec_digits_dotted(const oipcodec_digits16 *d, int i, int stop) {
#if OIPCODEC_SSE2
    __m128i x = _mm_and_si128(
        *d, _mm_loadu_si128((const __m128i *)(oipcodec_prefix_bytes + 16 - stop)));
    __m128i keep = _mm_loadu_si128((const __m128i *)(oipcodec_prefix_bytes + 16 - i));
    x = _mm_or_si128(_mm_and_si128(keep, x), _mm_andnot_si128(keep, _mm_srli_si128(x, 1)));
    return oipcodec_sixteen_digits(x);
#else
    uint64_t lo, hi, keep = oipcodec_load8(oipcodec_prefix_bytes + 16 - i);
    oipcodec_digits16_take(d, stop, &lo, &hi);
    lo = (lo & keep) | (((lo >> 8) | (hi << 56)) & ~keep);
    return oipcodec_eight_digits(lo) * 100000000u + oipcodec_eight_digits(hi >> 8);
#endif
}

/* Bit k set when p[k] is a comma, for the 64 bytes at p. */
static inline uint64_t oipcodec_commas64(const unsigned char *p) {
#if OIPCODEC_SSE2
    __m128i comma = _mm_set1_epi8(',');
    uint64_t m0 = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), comma));
    uint64_t m1 = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), comma));
    uint64_t m2 = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), comma));
    uint64_t m3 = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), comma));
    return m0 | (m1 << 16) | (m2 << 32) | (m3 << 48);
#elif OIPCODEC_NEON_LANES
    return oipcodec_commas64_neon(p);
#else
    /* Per word: a byte is a comma when its xor with ',' is zero (tested without carries
     * between bytes, as in oipcodec_scan16), the top bits gathered by a multiply. */
    uint64_t mask = 0;
    int k;
    for (k = 0; k < 8; k++) {
        uint64_t x = oipcodec_load8(p + 8 * k) ^ 0x2C2C2C2C2C2C2C2Cull;
        uint64_t nonzero = (((x & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | x) &
                           0x8080808080808080ull;
        uint64_t zero = (nonzero ^ 0x8080808080808080ull) >> 7;
        mask |= ((zero * 0x0102040810204080ull) >> 56) << (8 * k);
    }
    return mask;
#endif
}

#endif
