/* float64 as JSON text, scalar: the
 * shortest round-trip digits and the row writer that is the portable path and the definition
 * of the vector path (write/x86/f64.h, which includes this header).
 *
 * Methods and where they come from: Schubfach (Raffaello Giulietti, "The Schubfach way to
 * render doubles", 2020, https://fmt.dev/papers/Schubfach4.pdf) on the JSON parser's 128-bit
 * powers of five (common/pow5_table.h, with a tail to 10**324 for the smallest subnormals),
 * rounded up where inexact as Schubfach requires; the fast path is Zmij's idea (Victor Zverovich,
 * https://github.com/vitaut/zmij, MIT licence) as in write/f32.h, the code this project's
 * own. Its text equals the pure twin's, i.e. repr()'s digits, on 10**8 values and the hard
 * classes (tools/check_f64_writer.py). */
#ifndef OIPCODEC_WRITE_F64_H
#define OIPCODEC_WRITE_F64_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/endian.h"
#include "oipcodec/common/pow10.h"
#include "oipcodec/common/pow5_table.h"
#include "oipcodec/common/target.h"
#include "oipcodec/write/int.h"
#include "oipcodec/write/layout.h"
#include "oipcodec/write/nonfinite.h"

/* floor(log10(2**e)), floor(log10(3/4 * 2**e)) and floor(log2(10**e)) by multiply and shift,
 * exact over the float64 exponent range (as in Schubfach and Ryu). */
static inline int oipcodec_flog10_pow2(int e) { return (e * 1262611) >> 22; }
static inline int oipcodec_flog10_3q_pow2(int e) { return (e * 1262611 - 524031) >> 22; }
static inline int oipcodec_flog2_pow10(int e) { return (e * 1741647) >> 19; }

/* x * g / 2**128 truncated to odd: the integer part, with the lowest bit set when the fraction
 * is above 2**-63 (Schubfach's rounding to odd; g = {hi, lo}). */
static inline uint64_t oipcodec_f64_scale(uint64_t g_hi, uint64_t g_lo, uint64_t x) {
    uint64_t x1 = oipcodec_mulhi64(g_lo, x);
    uint64_t y1, y0 = oipcodec_mul128(g_hi, x, &y1);
    uint64_t z = y0 + x1;
    y1 += z < y0;
    return y1 | (z > 1);
}

/* The shortest digits of a positive finite nonzero float64 given by its bits without the
 * sign: returns d (up to 17 digits, possibly with trailing zeros), the value's decimal being
 * d * 10**(*e10). Schubfach (Giulietti, see the top of this file) on float64: v = c * 2**q,
 * the rounding interval's ends and v scaled by g ~ 10**-k (the parser's table of 128-bit
 * powers of five, rounded up where inexact) and truncated to odd; the one multiple of
 * 10 * 10**k inside if there is one, else the closer of v's unit neighbours (ties: even). */
static inline uint64_t oipcodec_f64_shortest(uint64_t mag, int *e10) {
    uint64_t field = mag >> 52, m = mag & 0xFFFFFFFFFFFFFull;
    uint64_t c = field ? m | 1ull << 52 : m;
    int q = field ? (int)field - 1075 : -1074;
    uint64_t open = c & 1; /* odd: the interval's ends are excluded */
    int closer = m == 0 && field > 1; /* the float below is half as far */
    int k = closer ? oipcodec_flog10_3q_pow2(q) : oipcodec_flog10_pow2(q);
    int h = q + oipcodec_flog2_pow10(-k) + 1; /* 1..4 */
    int p = -k;
    const uint64_t *t = p <= OIPCODEC_POW5_MAX ? oipcodec_pow5_128[p - OIPCODEC_POW5_MIN]
                                               : oipcodec_pow5_128_tail[p - OIPCODEC_POW5_MAX - 1];
    /* The table is floored; Schubfach wants floor + 1 unless 10**p scales exactly (5**p has
     * at most 128 bits for 0 <= p <= 55). */
    uint64_t g_lo = t[1] + (uint64_t)(p < 0 || p > 55);
    uint64_t g_hi = t[0] + (g_lo < t[1]);
    uint64_t cb = c << 2;
    uint64_t vbl = oipcodec_f64_scale(g_hi, g_lo, (cb - 2 + (uint64_t)closer) << h);
    uint64_t vb = oipcodec_f64_scale(g_hi, g_lo, cb << h);
    uint64_t vbr = oipcodec_f64_scale(g_hi, g_lo, (cb + 2) << h);
    uint64_t lower = vbl + open, upper = vbr - open;
    uint64_t s = vb >> 2, sp = s / 10;
    /* Every test computed and the choice made by masks, as in oipcodec_f32_shortest: which
     * candidate wins varies from element to element and would be mispredicted. */
    uint64_t up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
    uint64_t use10 = (uint64_t)(s >= 10) & (up_in ^ wp_in); /* one multiple of 10 inside */
    uint64_t u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
    uint64_t round_up = (vb > 4 * s + 2) | ((vb == 4 * s + 2) & s & 1);
    uint64_t one = u_in ^ w_in; /* exactly one of s and s + 1 inside */
    uint64_t unit = s + ((one & w_in) | (~one & round_up & 1));
    uint64_t mask = 0 - use10;
    *e10 = k + (int)use10;
    return ((sp + wp_in) & mask) | (unit & ~mask);
}

/* The fast path of the float64 writer: the shortest digits of a normal float64 that is not a
 * power of two (mag: its bits without the sign), scaled to exactly 17 digits, from one
 * 64x128-bit product; or 0 for the exact path (oipcodec_f64_shortest) to settle: zero,
 * subnormals, powers of two, infinities and NaNs, and the rare values too close to a decision
 * for the truncated product (none of 10**7 standard normal samples). Zmij's idea, as in the
 * FP32 fast path (Victor Zverovich's Schubfach-based writer, https://github.com/vitaut/zmij,
 * MIT licence; the code here is this project's own): v scaled once, the interval's half width
 * a shift of the same table entry instead of two more products.
 *
 * In units of 10**k (k and h as in oipcodec_f64_shortest, g the parser's table entry for
 * 10**-k as it is, floored), with 64 fraction bits: V * 2**64 = (c << h) * g / 2**64, the
 * 128-bit fixed-point number {vh, vl}, and the half width D * 2**64 = g / 2**(65 - h), {dh,
 * dl}. g is less than 1 below the exact scale and c << h < 2**57, so vh:vl is at most 1 + 2**-7
 * below the exact V * 2**64 and never above, and the same holds for delta: the computed ends
 * are within 2.02 units of 2**-64 of the exact ones. Every decision below is sent to the exact
 * path when its margin is not above that: the multiple of 10 within 2 of the lower end, the
 * upper end's fraction within 4 of an integer (its integer part uncertain), V's fraction
 * within 4 of 1/2. Since 2**q >= 10**k, D >= 1/2 and V >= 2**52: the nearest unit to V is
 * inside the interval, and the interval holds at most one multiple of 10 (2D < 10), which,
 * when it holds one, is the shortest. Checked against the exact path on 2 * 10**9 values
 * (random bit patterns, normal samples, short decimals and their neighbours, mantissas with
 * few bits set) as well as through repr() (tools/check_f64_writer.py). */
static inline uint64_t oipcodec_f64_fast(uint64_t mag, int *e10) {
    uint64_t field = mag >> 52, m = mag & 0xFFFFFFFFFFFFFull;
    int q = (int)field - 1075;
    int k = oipcodec_flog10_pow2(q);
    int h = q + oipcodec_flog2_pow10(-k) + 1; /* 1..4 */
    int p = -k;
    const uint64_t *t;
    uint64_t g_lo, g_hi, x, vh, vl, x1, dh, dl, th, tl, bh, bl, s10, ah, d, up, in10, sel, lt;
    *e10 = k;
    if (field - 1 >= 0x7FE || m == 0) {
        return 0; /* zero, subnormal, power of two, infinity, NaN */
    }
    t = p <= OIPCODEC_POW5_MAX ? oipcodec_pow5_128[p - OIPCODEC_POW5_MIN]
                               : oipcodec_pow5_128_tail[p - OIPCODEC_POW5_MAX - 1];
    g_hi = t[0];
    g_lo = t[1];
    x = (m | 1ull << 52) << h;
    x1 = oipcodec_mulhi64(g_lo, x);
    vl = oipcodec_mul128(g_hi, x, &vh);
    vl += x1;
    vh += vl < x1;
    /* D * 2**64 = g >> (65 - h), the shifts split so that none is by 64 */
    dh = g_hi >> 1 >> (64 - h);
    dl = g_hi << (h - 1) | g_lo >> 1 >> (64 - h);
    tl = vl + dl;
    th = vh + dh + (tl < dl);
    bl = vl - dl;
    bh = vh - dh - (vl < dl);
    /* the multiple of 10 at or below top's integer part, inside when above bottom */
    s10 = th / 10 * 10;
    ah = s10 - bh; /* at10 - bottom, 128 bits: {ah, -bl} */
    ah -= bl != 0;
    in10 = (uint64_t)((int64_t)ah >= 0);
    up = vl > 0x8000000000000000ull;
    sel = 0 - in10;
    d = (s10 & sel) | ((vh + up) & ~sel);
    /* To the exact path when a margin is too small: at10 - bottom within [-2, 2] (units of
     * 2**-64), top's fraction within 4 of an integer (its integer part uncertain), V's
     * fraction within 4 of 1/2. */
    if (((ah == 0) & (0 - bl <= 2)) | ((ah == UINT64_MAX) & (bl <= 2)) | (tl + 4 <= 8) |
        (vl - 0x8000000000000000ull + 4 <= 8)) {
        return 0; /* one branch, rarely taken: ah is 0 or all ones often */
    }
    /* V >= 2**52: d has 16 or 17 digits; scaled to 17 by a multiply, not a branch (which
     * of the two varies from element to element) */
    lt = d < 10000000000000000ull;
    *e10 = k - (int)lt;
    return d * (1 + 9 * lt);
}

/* Decimal digits of v (1 for 0), as oipcodec_count_digits_u32. */
static inline int oipcodec_count_digits_u64(uint64_t v) {
    int t = ((64 - oipcodec_clz64(v | 1)) * 1233) >> 12;
    return t + 1 - ((v | 1) < oipcodec_pow10_u64[t]);
}

/* oipcodec_f64_shortest's digits scaled to 17 (the fast path's form), kept out of line: the
 * row writer calls it rarely, and inlined it would crowd the loop's registers. */
static OIPCODEC_NOINLINE uint64_t oipcodec_f64_exact17(uint64_t mag, int *e10) {
    uint64_t d = oipcodec_f64_shortest(mag, e10);
    int nd = oipcodec_count_digits_u64(d);
    *e10 -= 17 - nd;
    return d * oipcodec_pow10_u64[17 - nd];
}

/* Longest float64 text: "-0.00001" and 16 more digits, or "-d.dddddddddddddddde-308". The
 * writer stores at most 33 bytes from the element's start (a 32-byte text after the sign),
 * so the buffer needs OIPCODEC_F64_SLACK bytes at its end (33 <= 24 + 32). */
#define OIPCODEC_F64_MAX 24
#define OIPCODEC_F64_SLACK 32
#define OIPCODEC_F64_BLOCK 64

/* The shortest digits scaled to 17 and their exponents of v[0:count] (the fast path, the
 * exact path for what it leaves; 0 for zero, infinities and NaN): the scalar and NEON writers'
 * first pass. */
static inline void oipcodec_f64_digits17(const uint64_t *v, ptrdiff_t count, uint64_t *digits,
                                         int *exps) {
    ptrdiff_t j;
    for (j = 0; j < count; j++) {
        uint64_t mag = v[j] & 0x7FFFFFFFFFFFFFFFull;
        uint64_t d = oipcodec_f64_fast(mag, &exps[j]);
        if (d == 0 && mag - 1 < 0x7FEFFFFFFFFFFFFFull) {
            d = oipcodec_f64_exact17(mag, &exps[j]);
        }
        digits[j] = d;
    }
}

/* The text words of 17-digit numbers: for i < count (d17[i] < 10**17), first[i] the first
 * digit as a character, w1[i] and w2[i] digits 2-9 and 10-17 as ASCII (first in the lowest
 * byte), nd[i] the number of digits without trailing zeros. oipcodec_f64_words_avx512
 * (write/x86/f64.h) computes the same eight elements at a time. */
static inline void oipcodec_f64_words(const uint64_t *d17, ptrdiff_t count, uint64_t *first,
                                      uint64_t *w1, uint64_t *w2, uint64_t *nd) {
    ptrdiff_t j;
    for (j = 0; j < count; j++) {
        uint64_t f = d17[j] / 10000000000000000ull, a, b;
        int n;
        oipcodec_digits16_bytes(d17[j] - f * 10000000000000000ull, &a, &b);
        /* trailing zero digits are high zero bytes */
        n = b ? 17 - (oipcodec_clz64(b) >> 3) : a ? 9 - (oipcodec_clz64(a) >> 3) : 1;
        nd[j] = (uint64_t)n;
        first[j] = '0' + f;
        w1[j] = a | OIPCODEC_ASCII8;
        w2[j] = b | OIPCODEC_ASCII8;
    }
}

/* float64 elements (native byte order) in the reference layout, each followed by a comma.
 * Three passes per block: the digits of all (the fast path, the exact path for what it
 * leaves), their text words, then the layout: the 17 digit positions (first digit, then two
 * 8-digit words, padded with '0's) laid out with fixed-width overlapping stores of words
 * assembled in registers. oipcodec_row_f64_avx512 (write/x86/f64.h) writes the same text. */
OIPCODEC_HOT static char *oipcodec_row_f64_scalar(const void *data, ptrdiff_t n, char *out,
                                                 const void *ctx) {
    const uint64_t *v = (const uint64_t *)data;
    uint64_t digits[OIPCODEC_F64_BLOCK], firsts[OIPCODEC_F64_BLOCK], w1s[OIPCODEC_F64_BLOCK];
    uint64_t w2s[OIPCODEC_F64_BLOCK], nds[OIPCODEC_F64_BLOCK];
    int exps[OIPCODEC_F64_BLOCK];
    ptrdiff_t base;
    (void)ctx;
    for (base = 0; base < n; base += OIPCODEC_F64_BLOCK) {
        ptrdiff_t count = n - base < OIPCODEC_F64_BLOCK ? n - base : OIPCODEC_F64_BLOCK, j;
        oipcodec_f64_digits17(v + base, count, digits, exps);
        oipcodec_f64_words(digits, count, firsts, w1s, w2s, nds);
        for (j = 0; j < count; j++) {
            uint64_t bits = v[base + j], mag = bits & 0x7FFFFFFFFFFFFFFFull, first, w1, w2;
            int nd, E = exps[j] + 16; /* value = d1.d2... * 10**E */
            if (oipcodec_float_prologue(&out, mag >= 0x7FF0000000000000ull,
                                        mag != 0x7FF0000000000000ull, (int)(bits >> 63),
                                        mag == 0)) {
                continue;
            }
            /* digit i of the 17 is byte i of (first, w1, w2): stored from registers, never
             * read back (a wide load of narrower stores stalls) */
            first = firsts[j];
            w1 = w1s[j];
            w2 = w2s[j];
            nd = (int)nds[j];
            if (E >= 0 && E <= OIPCODEC_F64_HI_E) {
                /* the digits padded with '0's, the point after digit E, then the digits after
                 * it (just "0" for integral values): digits E + 1.. are (w1, w2) shifted right
                 * by E bytes */
                int frac = nd - 1 - E, sh = 8 * E;
                uint64_t lo, hi;
                oipcodec_store_le64(out, first | w1 << 8);
                oipcodec_store_le64(out + 8, w1 >> 56 | w2 << 8);
                out[E + 1] = '.';
                if (sh < 64) {
                    lo = w1 >> sh | w2 << (63 - sh) << 1;
                    hi = w2 >> sh;
                } else {
                    lo = w2 >> (sh - 64);
                    hi = 0;
                }
                oipcodec_store_le64(out + E + 2, lo);
                oipcodec_store_le64(out + E + 10, hi);
                out += E + 2 + (frac > 1 ? frac : 1);
            } else if (E < 0 && E >= OIPCODEC_F64_LO_E) {
                oipcodec_store_le64(out, 0x3030303030302E30ull); /* "0.000000" */
                oipcodec_store_le64(out + 1 - E, first | w1 << 8);
                oipcodec_store_le64(out + 9 - E, w1 >> 56 | w2 << 8);
                oipcodec_store_le64(out + 17 - E, w2 >> 56);
                out += 1 - E + nd;
            } else {
                out[0] = (char)first;
                out[1] = '.';
                oipcodec_store_le64(out + 2, w1);
                oipcodec_store_le64(out + 10, w2);
                out += nd > 1 ? nd + 1 : 1;
                *out++ = 'e';
                *out++ = E < 0 ? '-' : '+';
                out = oipcodec_write_exponent(out, (uint32_t)(E < 0 ? -E : E));
            }
            *out++ = ',';
        }
    }
    return n ? out - 1 : out;
}

#endif
