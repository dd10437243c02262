/* The fast lane for JSON arrays of floats: "number ," pairs straight into a typed buffer
 * (FP16, FP32, FP64, BF16), stopping before anything unusual for the caller's general code.
 *
 * FP32, the common case, has two lanes of its own (oipcodec_fp32_lane): the commas of 64 bytes
 * are found first as a bit mask (read/swar.h), so that consecutive numbers are parsed independently
 * and their work overlaps, and each number of one of the two shapes writers produce is read by
 * the 16-byte reader, converted with one multiply by a rounded power of ten and kept only when
 * it is certainly far from a float32 midpoint (the test of oipcodec_decimal_to_narrow_approx).
 * The other formats and the other shapes go through read/numscan.h and read/decimal_to_float.h
 * (Clinger, Eisel-Lemire: see there), and common/half.h for FP16 and BF16. */
#ifndef OIPCODEC_READ_FLOAT_LANE_H
#define OIPCODEC_READ_FLOAT_LANE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/half.h"
#include "oipcodec/read/chars.h"
#include "oipcodec/read/decimal_to_float.h"
#include "oipcodec/read/numscan.h"
#include "oipcodec/read/swar.h"

/* Output formats of oipcodec_float_run: the element kinds K_* of oipcodec._shared.jsondecode
 * (written to _native/jsondecode.pxd). */
enum {
    OIPCODEC_OUT_FP16 = 9,
    OIPCODEC_OUT_FP32 = 10,
    OIPCODEC_OUT_FP64 = 11,
    OIPCODEC_OUT_BF16 = 12,
    OIPCODEC_OUT_BF16_AS_FP32 = 13
};

/* The FP32 lanes' last step: v (positive, normal for float32) within 3 float64 steps of the
 * decimal's magnitude, stored with the sign as the decimal's correctly rounded float32 unless
 * it is within 8 steps of a float32 midpoint (oipcodec_decimal_to_narrow_approx's test, for 24
 * significand bits); returns 0 then, having written nothing. */
static inline int oipcodec_fp32_store(double v, int negative, unsigned char *out) {
    uint64_t bits;
    uint32_t single_bits;
    float single;
    memcpy(&bits, &v, sizeof v);
    if ((bits & 0x1FFFFFFFull) - (1ull << 28) + 8 <= 16) {
        return 0;
    }
    single = (float)v;
    memcpy(&single_bits, &single, 4);
    single_bits |= (uint32_t)negative << 31;
    memcpy(out, &single_bits, 4);
    return 1;
}

/* FP32's hot loop: one element of the shape -?(0|[1-9][0-9]{0,6})\.[0-9]+ (at most 15 digits,
 * its comma within the 17 bytes at p) directly followed by a comma, into *out. Returns the byte
 * after the comma, or NULL, having written nothing, for any other shape and for the values the
 * multiply below cannot settle (zero aside: in practice never, for these shapes): the general
 * path then takes the element.
 *
 * The shape is oipcodec_scan_simple_number's with the dot and the comma required, so that all
 * of its tests fold into one branch; the value is w * 10**-(15 - i) with 8 <= 15 - i <= 14 and
 * w < 10**15 (see there), and goes through oipcodec_decimal_to_narrow_approx's multiply, error
 * bound and midpoint test (24 significand bits; the normal range, which these values never
 * leave). The position of the next element depends only on the 16 bytes at p (the sign is one
 * more non-digit there), so the loop's chain from one element to the next is a load, the mask
 * and two bit scans; the digits' value is computed beside it. 32 bytes must be readable at p. */
static inline int oipcodec_fp32_simple(const unsigned char *p, const unsigned char *comma,
                                       unsigned char *out) {
#if OIPCODEC_SWAR && OIPCODEC_CLINGER
    int negative = p[0] == '-', i, j;
    uint64_t w;
    uint32_t mask;
    double v;
    oipcodec_digits16 d;
    mask = oipcodec_scan16(p, &d) & ~(uint32_t)negative;
    i = oipcodec_ctz64(mask);              /* the dot */
    j = oipcodec_ctz64(mask & (mask - 1)); /* the comma */
    if (!((p[i] == '.') & (p + j == comma) &
          ((unsigned)(i - negative - 1) < (unsigned)(8 - negative)) & (j > i + 1) &
          ((p[negative] != '0') | (i == negative + 1)))) {
        return 0;
    }
    w = oipcodec_digits_dotted(&d, i, j);
    v = (double)w * oipcodec_recip_pow10[16 - i];
    return oipcodec_fp32_store(v, negative, out);
#else
    (void)p;
    (void)comma;
    (void)out;
    return 0;
#endif
}

/* FP32's second shape: what json.dumps writes for a float32 widened to a Python float
 * (tritonclient's JSON bodies, numpy's tolist()): -?(0|[1-9][0-9]{0,7})\.[0-9]+ with the
 * comma 16 to 24 bytes after p and at most 17 digits after any leading zeros. The 17
 * significant digits such text usually has do not fit oipcodec_fp32_simple's 16 bytes, and the
 * general path's byte loop is several times slower on them (docs/measurements.md#kernel-design-decisions).
 *
 * The first 16 bytes give X, 10 times their 15 digits (oipcodec_digits_dotted; the dot taken
 * out, a sign counting as a leading 0), the next r <= 8 bytes the tail: W = X * 10**r +
 * 10 * tail, exact in 64 bits and below 2**63 when X < 10**(18 - r) (leading zeros leave
 * room: 0.0012345678901234567 has r = 6), and the number is W * 10**-(16 - i + r). (X / 10
 * would be the digits' value, but that division doubled the loop's time.) Then the multiply,
 * error bound and midpoint test of oipcodec_decimal_to_narrow_approx, with one more rounding
 * (W to a double, since W may exceed 2**53): three of relative error 2**-53 each, still well
 * inside the 8 steps the test keeps from a midpoint. Text written from a float32 lies on the
 * float32 grid, as far from a midpoint as it can be. 32 bytes must be readable at p. */
static inline int oipcodec_fp32_long(const unsigned char *p, const unsigned char *comma,
                                     unsigned char *out) {
#if OIPCODEC_SWAR && OIPCODEC_CLINGER
    static const uint64_t pow10[19] = {
        1ull,          10ull,          100ull,          1000ull,          10000ull,
        100000ull,     1000000ull,     10000000ull,     100000000ull,     1000000000ull,
        10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
        100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
        1000000000000000000ull};
    int negative = p[0] == '-', i, r = (int)(comma - p) - 16;
    uint32_t mask, tail_mask;
    uint64_t w, tail;
    double v;
    oipcodec_digits16 d, e;
    mask = oipcodec_scan16(p, &d) & ~(uint32_t)negative;
    tail_mask = oipcodec_scan16(p + 16, &e);
    i = oipcodec_ctz64(mask); /* the dot */
    /* One branch: the dot after 1..8 - negative integer digits without a leading zero, only
     * digits after it up to the comma, and at most 8 of them past the first 16 bytes. */
    if (!((p[i] == '.') & ((unsigned)(i - negative - 1) < (unsigned)(8 - negative)) &
          ((p[negative] != '0') | (i == negative + 1)) & ((mask & (mask - 1) & 0xFFFFu) == 0) &
          ((unsigned)r <= 8u) & (oipcodec_ctz64(tail_mask) == r))) {
        return 0;
    }
    w = oipcodec_digits_dotted(&d, i, 16);
    if (w >= pow10[18 - r]) {
        return 0; /* more than 17 digits */
    }
#if OIPCODEC_SSE2
    tail = (uint64_t)_mm_cvtsi128_si64(e);
#else
    tail = e.lo;
#endif
    /* The r tail digits moved to the top bytes (the bytes after them shift out): the eight
     * digits' value is then the tail's own. Two shifts, as r = 0 would shift by 64. */
    tail = oipcodec_eight_digits((tail << (4 * (8 - r))) << (4 * (8 - r)));
    w = w * pow10[r] + tail * 10;
    v = (double)(int64_t)w * oipcodec_recip_pow10[16 - i + r];
    return oipcodec_fp32_store(v, negative, out);
#else
    (void)p;
    (void)comma;
    (void)out;
    return 0;
#endif
}

/* oipcodec_float_run's contract for FP32 and the elements one of the shapes above takes:
 * oipcodec_fp32_simple's when `wide` is 0, oipcodec_fp32_long's when it is 1.
 *
 * The commas come first, 64 bytes at a time, as a bit mask; each element is then the text
 * between two of them. So from one element to the next the loop only clears a bit: finding
 * where the next number starts no longer waits for the previous number's bytes to be examined
 * (that chain of loads and bit scans, not the arithmetic, bounded the per-number loop), and
 * the numbers' own work overlaps. Each number still checks its own shape, which must end
 * exactly at its comma. One shape per loop, each loop its own function: a loop holding both
 * (even with the second never taken) runs the short shape much slower, its vector constants
 * and registers spent on the other (docs/measurements.md#kernel-design-decisions). A writer keeps to one shape, so the caller switches
 * loops rarely. */
static inline ptrdiff_t oipcodec_fp32_lane(const unsigned char **pp, const unsigned char *end,
                                           unsigned char *out, ptrdiff_t limit, int wide) {
    const unsigned char *p = *pp, *block = p, *last;
    ptrdiff_t n = 0;
    if (limit <= 0 || end - p < 128) {
        return 0;
    }
    last = end - 128; /* only once the text holds 128 bytes: a pointer before it is undefined */
    /* A number starts at most two bytes after its block (comma, space), or in the block
     * before when it ends in this one, so each reads within the 128 bytes at its block. */
    while (block <= last) {
        uint64_t commas = oipcodec_commas64(block);
        if (p > block) {
            commas &= ~(uint64_t)0 << (p - block);
        }
        while (commas) {
            const unsigned char *comma = block + oipcodec_ctz64(commas);
            commas &= commas - 1;
            if (!(wide ? oipcodec_fp32_long(p, comma, out + 4 * n)
                       : oipcodec_fp32_simple(p, comma, out + 4 * n))) {
                goto done;
            }
            n++;
            /* Branches, not arithmetic: white space is as regular as the writer. */
            p = comma + 1;
            if (*p == ' ') {
                p++;
            }
            if (*p <= ' ') {
                p = oipcodec_skip_ws(p, end);
                if (p - block > 64 + 1) {
                    goto done; /* more white space than the blocks allow for */
                }
            }
            if (n == limit) {
                goto done;
            }
        }
        block += 64;
        if (p < block - 64) {
            goto done; /* no comma in a whole block: not this lane's text */
        }
    }
done:
    *pp = p;
    return n;
}

static OIPCODEC_NOINLINE ptrdiff_t oipcodec_fp32_lane_simple(const unsigned char **pp,
                                                             const unsigned char *end,
                                                             unsigned char *out, ptrdiff_t limit) {
    return oipcodec_fp32_lane(pp, end, out, limit, 0);
}

static OIPCODEC_NOINLINE ptrdiff_t oipcodec_fp32_lane_long(const unsigned char **pp,
                                                           const unsigned char *end,
                                                           unsigned char *out, ptrdiff_t limit) {
    return oipcodec_fp32_lane(pp, end, out, limit, 1);
}

/* Parse "number ," pairs (white space allowed around the comma) starting at *pp, storing the
 * values at out[0], out[1], ... in the given format, at most `limit` of them. Stops before
 * the first element that is not the easy case: not a plain number followed by a comma, a
 * number the fast algorithms cannot settle, a possible midpoint of a narrower format, or one
 * that overflows; the caller's general code takes it from there (and reports any error), so
 * the fast lane never decides anything the general path would decide differently. Returns the
 * pairs consumed; *pp is then after the last comma and the white space after it. */
static inline ptrdiff_t oipcodec_float_run(const unsigned char **pp, const unsigned char *end,
                                           unsigned char *out, ptrdiff_t limit, int format) {
    const unsigned char *p = *pp;
    ptrdiff_t n = 0;
    while (n < limit) {
        oipcodec_decimal d;
        int integer;
        uint64_t bits;
        const unsigned char *q;
        if (format == OIPCODEC_OUT_FP32) {
            n += oipcodec_fp32_lane_simple(&p, end, out + 4 * n, limit - n);
            n += oipcodec_fp32_lane_long(&p, end, out + 4 * n, limit - n);
            if (n == limit) {
                break;
            }
        }
        q = oipcodec_scan_number(p, end, &d, &integer);
        if (q == NULL || q >= end) {
            break;
        }
        if (*q != ',') {
            if (!oipcodec_is_ws(*q)) {
                break;
            }
            q = oipcodec_skip_ws(q, end);
            if (q >= end || *q != ',') {
                break;
            }
        }
        if (format == OIPCODEC_OUT_FP32) {
            double value;
            float single;
            uint32_t single_bits;
            bits = oipcodec_decimal_to_narrow_approx(&d, 24, -126, 127);
            if (bits == 0) { /* not certain: the exact float64, and no midpoint */
                if (oipcodec_decimal_to_f64bits(&d, &bits) != 0 ||
                    ((bits & 0x0FFFFFFFull) == 0 && oipcodec_is_midpoint(bits, 24, -126, 127))) {
                    break;
                }
            }
            bits |= (uint64_t)d.negative << 63;
            memcpy(&value, &bits, 8);
            single = (float)value;
            memcpy(&single_bits, &single, 4);
            if ((single_bits & 0x7FFFFFFFu) == 0x7F800000u) {
                break;
            }
            memcpy(out + 4 * n, &single_bits, 4);
        } else {
            uint16_t half;
            if (oipcodec_decimal_to_f64bits(&d, &bits) != 0) {
                break;
            }
            bits |= (uint64_t)d.negative << 63;
            if (format == OIPCODEC_OUT_FP64) {
                if ((bits & 0x7FFFFFFFFFFFFFFFull) == OIPCODEC_F64_INF_BITS) {
                    break;
                }
                memcpy(out + 8 * n, &bits, 8);
            } else if (format == OIPCODEC_OUT_FP16) {
                if ((bits & 0x1FFFFFFFFFFull) == 0 && oipcodec_is_midpoint(bits, 11, -14, 15)) {
                    break;
                }
                half = oipcodec_f64bits_to_fp16(bits);
                if ((half & 0x7FFFu) == 0x7C00u) {
                    break;
                }
                memcpy(out + 2 * n, &half, 2);
            } else {
                if ((bits & 0xFFFFFFFFFFFull) == 0 && oipcodec_is_midpoint(bits, 8, -126, 127)) {
                    break;
                }
                half = oipcodec_f64bits_to_bf16(bits);
                if ((half & 0x7FFFu) == 0x7F80u) {
                    break;
                }
                if (format == OIPCODEC_OUT_BF16) {
                    memcpy(out + 2 * n, &half, 2);
                } else {
                    uint32_t widened = (uint32_t)half << 16;
                    memcpy(out + 4 * n, &widened, 4);
                }
            }
        }
        n++;
        q++; /* the comma */
        if (q < end && *q == ' ') {
            q++;
        }
        p = oipcodec_skip_ws(q, end);
    }
    *pp = p;
    return n;
}

#endif
