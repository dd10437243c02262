/* Reading JSON number tokens (RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) into a
 * decimal (oipcodec_decimal, read/decimal_to_float.h: the first 19 significant digits and a
 * power of ten) and integer tokens into a 64-bit magnitude.
 *
 * Two readers per kind: the common shapes go through the 16-byte readers of read/swar.h (one mask
 * gives every digit run's end, so a number costs the same few instructions whatever its digit
 * counts), everything else, and every error, through the byte-wise ones. The 16-byte integer
 * reader divides its left-aligned value by 10**k exactly with a shift and a multiply by the
 * inverse of 5**k modulo 2**64 (oipcodec_inv_pow5, common/pow5_table.h): exact division by an odd
 * constant as in Torbjorn Granlund and Peter L. Montgomery, "Division by Invariant Integers using
 * Multiplication", PLDI 1994. */
#ifndef OIPCODEC_READ_NUMSCAN_H
#define OIPCODEC_READ_NUMSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/pow5_table.h"
#include "oipcodec/read/decimal_to_float.h"
#include "oipcodec/read/swar.h"

/* Number of decimal digits of v (1..8 for v < 10**8; 0 for 0). */
static inline int oipcodec_decimal_length(uint64_t v) {
    int n = 0;
    while (v) {
        v /= 10;
        n++;
    }
    return n;
}

/* The common shape of a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)? with at most 8 bytes before
 * the dot (sign included) and its end within the 16 bytes at p, optionally followed by an
 * exponent of 1 to 3 digits. Returns the byte after the number with *out set, or NULL when the
 * token has any other shape, valid or not: oipcodec_scan_number_slow then reads it (and rejects
 * what is invalid). 32 bytes must be readable at p. */
static inline const unsigned char *oipcodec_scan_simple_number(const unsigned char *p,
                                                               oipcodec_decimal *out,
                                                               int *integer) {
#if OIPCODEC_SWAR
    int negative = p[0] == '-', i, j, has_dot, stop;
    uint32_t mask;
    int64_t q;
    oipcodec_digits16 d;
    mask = oipcodec_scan16(p, &d) & ~(uint32_t)negative;
    i = oipcodec_ctz64(mask);              /* the integer part's end */
    j = oipcodec_ctz64(mask & (mask - 1)); /* the next non-digit: the fraction's end */
    has_dot = p[i] == '.';
    /* One branch for every shape test: 1..8 - negative integer digits, no leading zero, and
     * with a dot at least one fraction digit and the fraction's end inside the 16 bytes. */
    if (((unsigned)(i - negative - 1) >= (unsigned)(8 - negative)) |
        ((p[negative] == '0') & (i > negative + 1)) | (has_dot & ((j < i + 2) | (j > 15)))) {
        return NULL;
    }
    stop = i + ((j - i) & -has_dot);
    /* X / 10 (X is a multiple of 10) keeps w below 2**53 for Clinger's path. */
    out->w = oipcodec_digits_dotted(&d, i + ((16 - i) & (has_dot - 1)), stop) / 10;
    q = i - 15;
    p += stop;
    *integer = !has_dot;
    if ((*p | 0x20) == 'e') {
        int negative_exp, e;
        p++;
        negative_exp = *p == '-';
        p += (*p == '-') | (*p == '+');
        if (!OIPCODEC_IS_DIGIT(p[0])) {
            return NULL;
        }
        e = p[0] - '0';
        p++;
        if (OIPCODEC_IS_DIGIT(p[0])) {
            e = e * 10 + (p[0] - '0');
            p++;
            if (OIPCODEC_IS_DIGIT(p[0])) {
                e = e * 10 + (p[0] - '0');
                p++;
                if (OIPCODEC_IS_DIGIT(p[0])) {
                    return NULL;
                }
            }
        }
        q += negative_exp ? -e : e;
        *integer = 0;
    }
    out->q = q;
    out->negative = negative;
    out->truncated = 0;
    return p;
#else
    (void)p;
    (void)out;
    (void)integer;
    return NULL;
#endif
}

/* The digits of an integer whose 16 bytes at p are in d and whose digits end before n (a sign
 * at p[0] being a leading 0 digit): read left-aligned, the 16 bytes make the value times
 * 10**(16 - n), which a shift and a multiply by the inverse of 5**(16 - n) modulo 2**64 divide
 * exactly (no shift by a length-dependent number of bytes, no branch). */
static inline uint64_t oipcodec_digits_integer(const oipcodec_digits16 *d, int n) {
    return (oipcodec_digits16_value(d, n) >> (16 - n)) * oipcodec_inv_pow5[16 - n];
}

/* Read the JSON integer at p when it ends within the 16 bytes at p (sign included) or right
 * after them: returns the byte after it with its magnitude and sign, or NULL for anything else
 * (the caller then uses the byte-wise reader). 17 bytes must be readable at p. */
static inline const unsigned char *oipcodec_scan_simple_integer(const unsigned char *p,
                                                                int *negative,
                                                                uint64_t *magnitude) {
#if OIPCODEC_SWAR
    int neg = p[0] == '-', n;
    oipcodec_digits16 d;
    n = oipcodec_ctz64(oipcodec_scan16(p, &d) & ~(uint32_t)neg);
    if ((n <= neg) | ((p[neg] == '0') & (n > neg + 1)) | ((n == 16) & OIPCODEC_IS_DIGIT(p[16]))) {
        return NULL;
    }
    *magnitude = oipcodec_digits_integer(&d, n);
    *negative = neg;
    return p + n;
#else
    (void)p;
    (void)negative;
    (void)magnitude;
    return NULL;
#endif
}

/* Read the JSON number at p (grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?).
 * Returns the byte after it, or NULL when the text at p does not start with a JSON number.
 * What follows the number is the caller's to check. `integer` is set when the number has
 * neither a fraction nor an exponent part. */
static inline const unsigned char *oipcodec_scan_number_slow(const unsigned char *p,
                                                              const unsigned char *end,
                                                              oipcodec_decimal *out,
                                                              int *integer) {
    uint64_t w = 0;
    int64_t q = 0;
    int nd = 0, truncated = 0;
    out->negative = 0;
    *integer = 1;
    if (p < end && *p == '-') {
        out->negative = 1;
        p++;
    }
    if (p >= end) {
        return NULL;
    }
    if (*p == '0') {
        p++;
    } else if ((unsigned char)(*p - '1') < 9) {
        do {
            unsigned d = (unsigned)(*p - '0');
            if (nd < 19) {
                w = w * 10 + d;
                nd++;
            } else {
                q++;
                truncated |= d != 0;
            }
            p++;
        } while (p < end && OIPCODEC_IS_DIGIT(*p));
    } else {
        return NULL;
    }
    if (p < end && *p == '.') {
        p++;
        *integer = 0;
        if (p >= end || !OIPCODEC_IS_DIGIT(*p)) {
            return NULL;
        }
        /* Eight bytes at a time while the digits fit in w's 19 (the common float32 text):
         * the digit run's length comes from a bit mask, not a loop that ends mispredicted. */
        while (nd <= 11 && end - p >= 8) {
            int run;
            uint64_t value = oipcodec_digit_run(p, &run);
            if (run == 0) {
                break;
            }
            if (w == 0 && value == 0) {
                q -= run; /* leading zeros, as in 0.000000001 */
            } else {
                if (w == 0) { /* the significant digits start inside the run */
                    nd += oipcodec_decimal_length(value);
                } else {
                    nd += run;
                }
                w = w * oipcodec_pow10_u64[run] + value;
                q -= run;
            }
            p += run;
            if (run < 8) {
                break;
            }
        }
        while (p < end && OIPCODEC_IS_DIGIT(*p)) {
            unsigned d = (unsigned)(*p - '0');
            if (nd < 19) {
                if (nd != 0 || d != 0) {
                    w = w * 10 + d;
                    nd++;
                }
                q--;
            } else {
                truncated |= d != 0;
            }
            p++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        int negative_exp = 0;
        int64_t e = 0;
        p++;
        *integer = 0;
        if (p < end && (*p == '+' || *p == '-')) {
            negative_exp = *p == '-';
            p++;
        }
        if (p >= end || !OIPCODEC_IS_DIGIT(*p)) {
            return NULL;
        }
        do {
            /* Saturate: beyond 10**7 every exponent gives zero or an overflow anyway. */
            if (e < 10000000) {
                e = e * 10 + (*p - '0');
            }
            p++;
        } while (p < end && OIPCODEC_IS_DIGIT(*p));
        q += negative_exp ? -e : e;
    }
    out->w = w;
    out->q = q;
    out->truncated = truncated;
    return p;
}

/* oipcodec_scan_number_slow's contract; the common shapes take the 16-byte reader. */
static inline const unsigned char *oipcodec_scan_number(const unsigned char *p,
                                                         const unsigned char *end,
                                                         oipcodec_decimal *out, int *integer) {
    if (end - p >= 32) {
        const unsigned char *q = oipcodec_scan_simple_number(p, out, integer);
        if (q != NULL) {
            return q;
        }
    }
    return oipcodec_scan_number_slow(p, end, out, integer);
}

/* Read a JSON integer (-?(0|[1-9][0-9]*)) at p. Returns the byte after it or NULL if the text
 * at p does not start with one. *magnitude is its absolute value; *overflow is set when that
 * does not fit 64 bits. */
static inline const unsigned char *oipcodec_scan_integer(const unsigned char *p,
                                                          const unsigned char *end,
                                                          int *negative, uint64_t *magnitude,
                                                          int *overflow) {
    uint64_t m = 0;
    int over = 0, nd = 0;
    if (end - p >= 32) {
        const unsigned char *q = oipcodec_scan_simple_integer(p, negative, magnitude);
        if (q != NULL) {
            *overflow = 0;
            return q;
        }
    }
    *negative = 0;
    if (p < end && *p == '-') {
        *negative = 1;
        p++;
    }
    if (p >= end) {
        return NULL;
    }
    if (*p == '0') {
        p++;
    } else if ((unsigned char)(*p - '1') < 9) {
        do {
            unsigned d = (unsigned)(*p - '0');
            /* 19 digits always fit; only a 20th can overflow (a division only then). */
            if (nd < 19 || (nd == 19 && m <= (UINT64_MAX - d) / 10)) {
                m = m * 10 + d;
            } else {
                over = 1;
            }
            nd++;
            p++;
        } while (p < end && OIPCODEC_IS_DIGIT(*p));
    } else {
        return NULL;
    }
    *magnitude = m;
    *overflow = over;
    return p;
}

#endif
