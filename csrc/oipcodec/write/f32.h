/* float32 as JSON text, scalar: the
 * shortest round-trip digits and the row writer that is the portable path and the definition
 * of the vector paths (write/x86/f32.h, which includes this header).
 *
 * Methods and where they come from:
 * - exact path (oipcodec_f32_shortest): Schubfach. Raffaello Giulietti, "The Schubfach way to
 *   render doubles" (2020, https://fmt.dev/papers/Schubfach4.pdf): a power of ten 10**k chosen
 *   from the rounding interval's width, the interval's ends and the value scaled by one table
 *   entry each with the products rounded to odd, then the one multiple of 10 * 10**k in the
 *   interval if there is one, else the closer of the value's two unit neighbours. The tables
 *   below were computed for float32 here (exact rational arithmetic).
 * - fast path (oipcodec_row_f32_scalar): the value scaled by one multiply, the interval's half
 *   width a shift of the same table entry instead of two more products, the few values that
 *   choice cannot settle sent to the exact path: the idea of Zmij, Victor Zverovich's
 *   Schubfach-based writer ("1 instead of 3 multiplications by a power of 10 in the common
 *   case", https://github.com/vitaut/zmij, MIT licence). The code is this project's own; its
 *   text equals the exact path's on all 2**32 bit patterns (tools/check_f32_writer.sh). */
#ifndef OIPCODEC_WRITE_F32_H
#define OIPCODEC_WRITE_F32_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/endian.h"
#include "oipcodec/common/target.h"
#include "oipcodec/write/int.h"
#include "oipcodec/write/layout.h"
#include "oipcodec/write/nonfinite.h"

/* A float32 v = c * 2**q (c < 2**24) reads back from any decimal inside its rounding interval:
 * halfway to each neighbour, [c - 1/2, c + 1/2] * 2**q, or [c - 1/4, c + 1/2] * 2**q when c is
 * a power of two above the smallest normal (the float below is half as far); the ends are
 * included when c is even (ties round to even). The decimals in that interval with the fewest
 * significant digits, and of those the closest to v (ties: even), are the reference's digits.
 *
 * Method (Schubfach's idea, in integers): take 10**k, the largest power of ten not above the
 * interval's width, so the width is 1 to 10 units of 10**k. Then the interval holds at most one
 * multiple of 10 * 10**k, and when it holds one, that is the shortest (with s >= 10 below, all
 * other candidates have more digits); when it holds none, every unit of 10**k inside has the
 * same number of digits and the one closest to v is one of v's two unit neighbours s and s + 1,
 * at least one of which is inside.
 *
 * The interval's ends and v are scaled to quarter units of 10**k by one 64x64-bit multiply
 * with the table value g = ceil(10**-k * 2**-r) (64 significant bits) and truncated to odd:
 * the integer part, with the lowest bit set when any fraction is left. Comparing these with
 * multiples of 4 then decides "inside" and "closer" exactly, provided the rounding up of g never
 * shows in the 32 fraction bits kept. That was not proven here but checked on every finite
 * float32 (docs/measurements.md#kernel-design-decisions); tests/kernels/test_jsonencode.py checks the hard classes against an
 * exact rational reference. */

/* Generated with exact rational arithmetic: for each biased exponent field f (0..254, q = max(f,
 * 1) - 150) the decimal exponent k = floor(log10(2**q)) and the shift h = q + r + 96, where 2**r
 * scales 10**-k to 64 bits; the _irr tables use k = floor(log10(3/4 * 2**q)) for the narrower
 * interval below a power of two. oipcodec_f32_pow10[31 - k] = ceil(10**-k * 2**-r). */
static const uint64_t oipcodec_f32_pow10[77] = {
    0x81CEB32C4B43FCF5u, 0xA2425FF75E14FC32u, 0xCAD2F7F5359A3B3Fu,
    0xFD87B5F28300CA0Eu, 0x9E74D1B791E07E49u, 0xC612062576589DDBu,
    0xF79687AED3EEC552u, 0x9ABE14CD44753B53u, 0xC16D9A0095928A28u,
    0xF1C90080BAF72CB2u, 0x971DA05074DA7BEFu, 0xBCE5086492111AEBu,
    0xEC1E4A7DB69561A6u, 0x9392EE8E921D5D08u, 0xB877AA3236A4B44Au,
    0xE69594BEC44DE15Cu, 0x901D7CF73AB0ACDAu, 0xB424DC35095CD810u,
    0xE12E13424BB40E14u, 0x8CBCCC096F5088CCu, 0xAFEBFF0BCB24AAFFu,
    0xDBE6FECEBDEDD5BFu, 0x89705F4136B4A598u, 0xABCC77118461CEFDu,
    0xD6BF94D5E57A42BDu, 0x8637BD05AF6C69B6u, 0xA7C5AC471B478424u,
    0xD1B71758E219652Cu, 0x83126E978D4FDF3Cu, 0xA3D70A3D70A3D70Bu,
    0xCCCCCCCCCCCCCCCDu, 0x8000000000000000u, 0xA000000000000000u,
    0xC800000000000000u, 0xFA00000000000000u, 0x9C40000000000000u,
    0xC350000000000000u, 0xF424000000000000u, 0x9896800000000000u,
    0xBEBC200000000000u, 0xEE6B280000000000u, 0x9502F90000000000u,
    0xBA43B74000000000u, 0xE8D4A51000000000u, 0x9184E72A00000000u,
    0xB5E620F480000000u, 0xE35FA931A0000000u, 0x8E1BC9BF04000000u,
    0xB1A2BC2EC5000000u, 0xDE0B6B3A76400000u, 0x8AC7230489E80000u,
    0xAD78EBC5AC620000u, 0xD8D726B7177A8000u, 0x878678326EAC9000u,
    0xA968163F0A57B400u, 0xD3C21BCECCEDA100u, 0x84595161401484A0u,
    0xA56FA5B99019A5C8u, 0xCECB8F27F4200F3Au, 0x813F3978F8940985u,
    0xA18F07D736B90BE6u, 0xC9F2C9CD04674EDFu, 0xFC6F7C4045812297u,
    0x9DC5ADA82B70B59Eu, 0xC5371912364CE306u, 0xF684DF56C3E01BC7u,
    0x9A130B963A6C115Du, 0xC097CE7BC90715B4u, 0xF0BDC21ABB48DB21u,
    0x96769950B50D88F5u, 0xBC143FA4E250EB32u, 0xEB194F8E1AE525FEu,
    0x92EFD1B8D0CF37BFu, 0xB7ABC627050305AEu, 0xE596B7B0C643C71Au,
    0x8F7E32CE7BEA5C70u, 0xB35DBF821AE4F38Cu,
};
static const int8_t oipcodec_f32_k[255] = {
    -45, -45, -45, -45, -44, -44, -44, -44, -43, -43, -43, -42, -42, -42, -41, -41,
    -41, -41, -40, -40, -40, -39, -39, -39, -38, -38, -38, -38, -37, -37, -37, -36,
    -36, -36, -35, -35, -35, -35, -34, -34, -34, -33, -33, -33, -32, -32, -32, -32,
    -31, -31, -31, -30, -30, -30, -29, -29, -29, -28, -28, -28, -28, -27, -27, -27,
    -26, -26, -26, -25, -25, -25, -25, -24, -24, -24, -23, -23, -23, -22, -22, -22,
    -22, -21, -21, -21, -20, -20, -20, -19, -19, -19, -19, -18, -18, -18, -17, -17,
    -17, -16, -16, -16, -16, -15, -15, -15, -14, -14, -14, -13, -13, -13, -13, -12,
    -12, -12, -11, -11, -11, -10, -10, -10, -10, -9, -9, -9, -8, -8, -8, -7,
    -7, -7, -7, -6, -6, -6, -5, -5, -5, -4, -4, -4, -4, -3, -3, -3,
    -2, -2, -2, -1, -1, -1, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2,
    3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7,
    7, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12,
    12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 17,
    17, 17, 18, 18, 18, 18, 19, 19, 19, 20, 20, 20, 21, 21, 21, 21,
    22, 22, 22, 23, 23, 23, 24, 24, 24, 24, 25, 25, 25, 26, 26, 26,
    27, 27, 27, 27, 28, 28, 28, 29, 29, 29, 30, 30, 30, 31, 31,
};
static const uint8_t oipcodec_f32_h[255] = {
    33, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34,
    35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33,
    34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36,
    33, 34, 35, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35,
    33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35,
    36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34,
    35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33,
    34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33,
    34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35,
    33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35,
    33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34,
    35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34,
    35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33,
    34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 36,
    33, 34, 35, 33, 34, 35, 33, 34, 35, 36, 33, 34, 35, 33, 34, 35,
    33, 34, 35, 36, 33, 34, 35, 33, 34, 35, 33, 34, 35, 33, 34,
};
static const int8_t oipcodec_f32_k_irr[255] = {
    -45, -45, -45, -45, -45, -44, -44, -44, -43, -43, -43, -42, -42, -42, -42, -41,
    -41, -41, -40, -40, -40, -39, -39, -39, -39, -38, -38, -38, -37, -37, -37, -36,
    -36, -36, -36, -35, -35, -35, -34, -34, -34, -33, -33, -33, -33, -32, -32, -32,
    -31, -31, -31, -30, -30, -30, -30, -29, -29, -29, -28, -28, -28, -27, -27, -27,
    -27, -26, -26, -26, -25, -25, -25, -24, -24, -24, -24, -23, -23, -23, -22, -22,
    -22, -21, -21, -21, -20, -20, -20, -20, -19, -19, -19, -18, -18, -18, -17, -17,
    -17, -17, -16, -16, -16, -15, -15, -15, -14, -14, -14, -14, -13, -13, -13, -12,
    -12, -12, -11, -11, -11, -11, -10, -10, -10, -9, -9, -9, -8, -8, -8, -8,
    -7, -7, -7, -6, -6, -6, -5, -5, -5, -5, -4, -4, -4, -3, -3, -3,
    -2, -2, -2, -2, -1, -1, -1, 0, 0, 0, 1, 1, 1, 1, 2, 2,
    2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7,
    7, 8, 8, 8, 8, 9, 9, 9, 10, 10, 10, 11, 11, 11, 11, 12,
    12, 12, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 16, 16, 16, 17,
    17, 17, 17, 18, 18, 18, 19, 19, 19, 20, 20, 20, 20, 21, 21, 21,
    22, 22, 22, 23, 23, 23, 23, 24, 24, 24, 25, 25, 25, 26, 26, 26,
    26, 27, 27, 27, 28, 28, 28, 29, 29, 29, 29, 30, 30, 30, 31,
};
static const uint8_t oipcodec_f32_h_irr[255] = {
    33, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34,
    35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33,
    34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36,
    33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 34, 35, 36, 33, 34, 35,
    36, 34, 35, 36, 34, 35, 36, 33, 34, 35, 36, 34, 35, 36, 34, 35,
    36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34,
    35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33,
    34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36,
    34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35,
    33, 34, 35, 36, 34, 35, 36, 34, 35, 36, 33, 34, 35, 36, 34, 35,
    36, 34, 35, 36, 33, 34, 35, 36, 34, 35, 36, 34, 35, 36, 33, 34,
    35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34,
    35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33,
    34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36,
    33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 33, 34, 35, 33, 34, 35,
    36, 34, 35, 36, 33, 34, 35, 33, 34, 35, 36, 34, 35, 36, 34,
};

/* x * g / 2**96 truncated to odd (x < 2**63). */
static inline uint32_t oipcodec_f32_scale(uint64_t g, uint64_t x) {
    uint64_t p = oipcodec_mulhi64(g, x);
    return (uint32_t)(p >> 32) | ((uint32_t)p != 0);
}

/* The shortest digits of a positive finite float32 given by its bits without the sign: returns
 * d (1 to 9 digits, possibly with trailing zeros) with the value's decimal being d * 10**(*e10).
 * Any float32; the row writer below uses it for what its fast path leaves (subnormals, powers
 * of two, values too close to a decision to settle with truncated products). */
static OIPCODEC_NOINLINE uint32_t oipcodec_f32_shortest(uint32_t bits, int *e10) {
    uint32_t field = bits >> 23, m = bits & 0x7FFFFFu;
    uint32_t c = field ? m | 0x800000u : m;
    uint32_t open = c & 1; /* odd: the ends are excluded */
    int irregular = m == 0 && field > 1;
    int k = irregular ? oipcodec_f32_k_irr[field] : oipcodec_f32_k[field];
    int h = irregular ? oipcodec_f32_h_irr[field] : oipcodec_f32_h[field];
    uint64_t g = oipcodec_f32_pow10[31 - k];
    uint64_t c4 = (uint64_t)c << 2;
    uint32_t vb = oipcodec_f32_scale(g, c4 << h);
    uint32_t lo = oipcodec_f32_scale(g, (c4 - 2 + (uint64_t)irregular) << h);
    uint32_t hi = oipcodec_f32_scale(g, (c4 + 2) << h);
    uint32_t s = vb >> 2, s10 = s / 10 * 10, d;
    /* Every test is computed and the choice made by selects: which candidate wins varies from
     * element to element, so branches on it would be mispredicted half the time. */
    uint32_t grid10 = s >= 10;
    uint32_t s10_in = grid10 & (lo + open <= s10 << 2);
    uint32_t t10_in = grid10 & (((s10 + 10) << 2) + open <= hi);
    uint32_t s_in = lo + open <= s << 2;
    uint32_t t_in = ((s + 1) << 2) + open <= hi;
    /* v exactly halfway (vb == 4s + 2) goes to the even one */
    uint32_t s_closer = (vb < (s << 2) + 2) | ((vb == (s << 2) + 2) & ~s & 1);
    uint32_t pick10 = 0 - (s10_in | t10_in); /* all ones when a multiple of 10 is inside */
    d = s + 1 - (s_in & ((t_in ^ 1) | s_closer));
    d = (d & ~pick10) | ((s10 + 10 * t10_in) & pick10);
    *e10 = k;
    return d;
}

static const uint32_t oipcodec_scale_to_9[10] = {0,      100000000, 10000000, 1000000, 100000,
                                                 10000,  1000,      100,      10,      1};

/* Longest float32 text: "-0.000001" and 8 more digits. The writer stores 16 bytes at up to 10
 * bytes past the element's start, so the buffer needs OIPCODEC_F32_SLACK bytes at its end. */
#define OIPCODEC_F32_MAX 17
#define OIPCODEC_F32_SLACK 32
/* Elements per block of oipcodec_row_f32's two passes (a few hundred bytes of stack). */
#define OIPCODEC_F32_BLOCK 64
/* 0 sends every element to oipcodec_f32_shortest: only tools/check_f32_writer.sh builds it so,
 * to compare the fast path with the exact one on every bit pattern. */
#ifndef OIPCODEC_F32_FAST_PATH
#define OIPCODEC_F32_FAST_PATH 1
#endif

/* The fast path's digits of a float32 given by its bits without the sign (see
 * oipcodec_row_f32_scalar below): d with the value's decimal d * 10**(*e10), or 0 where
 * oipcodec_f32_shortest must decide (zeros, subnormals, powers of two, infinities, NaN, the
 * rare near-ties). Shared by the scalar and NEON writers (write/arm64/f32.h). */
static inline uint32_t oipcodec_f32_fast(uint32_t mag, int *e10) {
    uint32_t field = mag >> 23, m = mag & 0x7FFFFFu, d = 0;
    *e10 = 0;
    if (OIPCODEC_F32_FAST_PATH && field - 1u < 0xFEu && m != 0) {
        /* normal, not a power of two */
        int k = oipcodec_f32_k[field], h = oipcodec_f32_h[field];
        uint64_t g = oipcodec_f32_pow10[31 - k];
        uint64_t x = (uint64_t)(m | 0x800000u) << h;
        uint64_t mid = oipcodec_mulhi64(x, g); /* V * 2**32 */
        /* D * 2**32: g * 2**(h-1) / 2**64, exact as a shift. The ends are then one add and
         * one subtract away, each at most 1 below its own truncated product (top in [top',
         * top' + 1], bottom in [bottom' - 1, bottom']). */
        uint64_t delta = g >> (65 - h);
        uint64_t top = mid + delta, bottom = mid - delta;
        uint32_t s10 = (uint32_t)(top >> 32) / 10 * 10, in10, up, sel;
        uint64_t at10 = (uint64_t)s10 << 32;
        in10 = at10 > bottom;
        up = (uint32_t)mid > 0x80000000u;
        sel = 0 - in10;
        d = (s10 & sel) | (((uint32_t)(mid >> 32) + up) & ~sel);
        *e10 = k;
        /* To the exact path: an end within 1 of the multiple of 10 (a tie, or a decision the
         * ends' error could flip), top's integer part uncertain (its fraction all ones), or
         * V's fraction exactly 1/2. */
        if (bottom - at10 + 1 <= 2 || at10 == top || (uint32_t)~top == 0 ||
            (uint32_t)mid == 0x80000000u) {
            d = 0;
        }
    }
    return d;
}

/* float32 elements (native byte order) in the reference layout, each followed by a comma.
 *
 * Fast path (normal floats that are not a power of two): with V = v / 10**k and D the half
 * interval width in units of 10**k (D in [0.5, 5), V >= 2**23), the shortest decimal is the
 * multiple of 10 inside [V - D, V + D] if there is one (at most one fits), else V rounded to
 * the nearest integer (always inside, as D >= 0.5). V is one 64x64-bit product with 32
 * fraction bits kept; the table's g is rounded up, which makes it too large by less than 1/16
 * of its last bit. The ends are V + D and V - D with D's product a shift of g (one multiply
 * instead of three), which puts each within one unit of the last bit of its own product. So
 * any decision an end's product could sit on or cross (an end equal to the multiple of 10 or
 * one unit from it, top's integer part in doubt) and V's fraction exactly 1/2 could be an exact
 * tie or an error, and go to oipcodec_f32_shortest; all others are exact.
 * tools/check_f32_writer.sh compares the text with the exact path's on every bit pattern.
 *
 * The text is written with fixed-width overlapping stores of words assembled in registers:
 * nothing stored is read back (stores then wider loads of the same bytes stall), and no branch
 * depends on the digit count or on which candidate wins (they vary from element to element and
 * would be mispredicted).
 *
 * Two passes per block of OIPCODEC_F32_BLOCK elements: the digits of all, then the text of all.
 * Each element's digits and their layout are a long chain of dependent multiplies; with both in
 * one loop body the processor could overlap the chains of only about two elements; split, the
 * loops run faster (docs/measurements.md#kernel-design-decisions). */
OIPCODEC_HOT static char *oipcodec_row_f32_scalar(const void *data, ptrdiff_t n, char *out,
                                                 const void *ctx) {
    const uint64_t ascii = 0x3030303030303030ull;
    const uint32_t *v = (const uint32_t *)data;
    uint32_t digits[OIPCODEC_F32_BLOCK];
    int exps[OIPCODEC_F32_BLOCK];
    ptrdiff_t base;
    (void)ctx;
    for (base = 0; base < n; base += OIPCODEC_F32_BLOCK) {
        ptrdiff_t count = n - base < OIPCODEC_F32_BLOCK ? n - base : OIPCODEC_F32_BLOCK, j;
        /* The digits: the fast path's, or 0 where oipcodec_f32_shortest must decide. */
        for (j = 0; j < count; j++) {
            digits[j] = oipcodec_f32_fast(v[base + j] & 0x7FFFFFFFu, &exps[j]);
        }
        /* The text. */
        for (j = 0; j < count; j++) {
            uint32_t bits = v[base + j], mag = bits & 0x7FFFFFFFu, m = mag & 0x7FFFFFu;
            uint32_t field = mag >> 23, d, d9, first;
            uint64_t w;
            int e10, nd, E;
            if (oipcodec_float_prologue(&out, field == 0xFF, m != 0, (int)(bits >> 31), mag == 0)) {
                continue;
            }
            d = digits[j];
            e10 = exps[j];
            if (d == 0) {
                d = oipcodec_f32_shortest(mag, &e10);
            }
            nd = oipcodec_count_digits_u32(d);
            E = e10 + nd - 1; /* value = d1.d2... * 10**E */
            d9 = d * oipcodec_scale_to_9[nd];
            first = d9 / 100000000;
            w = oipcodec_digits8(d9 - first * 100000000);
            /* trailing zero digits are high zero bytes */
            nd = w ? 9 - (oipcodec_clz64(w) >> 3) : 1;
            if (E >= 0 && E <= OIPCODEC_F32_HI_E) {
                /* Overlapping stores, later ones overwriting earlier ones: the digits (padded
                 * with '0's, which gives integral values their zeros), the point after digit E,
                 * and the digits after it (just "0" for integral values). */
                int frac = nd - 1 - E;
                oipcodec_store_le64(out, (first | w << 8) | ascii);
                oipcodec_store_le64(out + 8, w >> 56 | ascii);
                out[E + 1] = '.';
                /* 8E may be 64 */
                oipcodec_store_le64(out + E + 2, (w >> 4 * E >> 4 * E) | ascii);
                out += E + 2 + (frac > 1 ? frac : 1);
            } else if (E < 0 && E >= OIPCODEC_F32_LO_E) {
                oipcodec_store_le64(out, 0x3030303030302E30ull); /* "0.000000" */
                oipcodec_store_le64(out + 1 - E, (first | w << 8) | ascii);
                oipcodec_store_le64(out + 9 - E, w >> 56 | ascii);
                out += 1 - E + nd;
            } else {
                uint32_t ae = (uint32_t)(E < 0 ? -E : E);
                out[0] = (char)('0' + first);
                out[1] = '.';
                oipcodec_store_le64(out + 2, w | ascii);
                out += nd > 1 ? nd + 1 : 1;
                memcpy(out, E < 0 ? "e-" : "e+", 2);
                out += 2;
                out = oipcodec_write_exponent(out, ae);
            }
            *out++ = ',';
        }
    }
    return n ? out - 1 : out;
}

#endif
