/* FP16 and BF16 as JSON text: a table of
 * all 65,536 values' texts, built once per type, each by a search over digit counts with
 * snprintf/strtod (oipcodec_shortest_small), and the row writer that copies from it. */
#ifndef OIPCODEC_WRITE_HALF_H
#define OIPCODEC_WRITE_HALF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/write/layout.h"

/* Slot width of a 16-bit float's text in the lookup tables; the longest text is 16 bytes
 * ("-1234000000000.0" for BF16), and a slot is always copied whole, so buffers written from
 * a table need OIPCODEC_HALF_SLOT bytes of slack. */
#define OIPCODEC_HALF_SLOT 16

/* The shortest decimal c in the rounding interval of v (v > 0 finite, exactly a value of the
 * 16-bit type; lo/hi the interval's ends, included when `inclusive`), and among those of that
 * length the one closest to v: for each length p, the correctly rounded p-digit decimal of v
 * is the closest one; when it falls outside the interval, the interval being on one side can
 * still hold its neighbour. Writes the digits (trailing zeros removed) and returns their
 * count, with the decimal exponent in *e10; 0 if none up to 17 digits (cannot happen).
 *
 * Checking c against the interval goes through strtod: c has at most 5 digits and the ends
 * have at most 12 significant bits, so c and an end are either equal or farther apart than
 * double precision can blur (tests compare every bit pattern with the exact reference). */
OIPCODEC_MAYBE_UNUSED
static int oipcodec_shortest_small(double v, double lo, double hi, int inclusive, char *digits,
                                   int *e10) {
    char buf[64];
    int p;
    for (p = 1; p <= 17; p++) {
        uint64_t d = 0, cands[3];
        int exp10, k, i, nd = 0;
        const char *s;
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        /* Parse d[.ddd]e[+-]XX; any non-digit before 'e' is the (locale's) decimal point. */
        for (s = buf; *s && *s != 'e' && *s != 'E'; s++) {
            if (*s >= '0' && *s <= '9') {
                d = d * 10 + (uint64_t)(*s - '0');
                nd++;
            }
        }
        if (!*s) {
            return 0;
        }
        exp10 = atoi(s + 1);
        k = exp10 - (nd - 1);
        cands[0] = d;
        cands[1] = d + 1;
        cands[2] = d - 1;
        for (i = 0; i < 3; i++) {
            uint64_t c = cands[i];
            double x;
            int n;
            char tmp[40];
            if (c == 0) {
                continue;
            }
            snprintf(tmp, sizeof tmp, "%llue%d", (unsigned long long)c, k);
            x = strtod(tmp, NULL);
            if ((x > lo && x < hi) || (inclusive && (x == lo || x == hi))) {
                int kk = k;
                while (c % 10 == 0) {
                    c /= 10;
                    kk++;
                }
                n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)c);
                memcpy(digits, tmp, (size_t)n);
                *e10 = kk + n - 1;
                return n;
            }
        }
    }
    return 0;
}

/* Fills the text table of a 16-bit float type: bf16 = 0 for FP16 (1 sign, 5 exponent, 10
 * significand bits), 1 for BF16 (1, 8, 7). `table` holds 65536 * OIPCODEC_HALF_SLOT bytes of
 * text followed by 65536 length bytes. Returns 0, or -1 if a value found no digits. */
OIPCODEC_MAYBE_UNUSED
static int oipcodec_build_half_table(char *table, int bf16) {
    uint8_t *lens = (uint8_t *)table + 65536 * OIPCODEC_HALF_SLOT;
    int mbits = bf16 ? 7 : 10, ebits = bf16 ? 8 : 5;
    int emax = (1 << ebits) - 1, bias = (1 << (ebits - 1)) - 1;
    uint32_t b;
    for (b = 0; b < 65536; b++) {
        char *slot = table + (size_t)b * OIPCODEC_HALF_SLOT;
        char *end = slot;
        int negative = (b >> 15) & 1;
        int efield = (int)((b >> mbits) & (uint32_t)emax);
        uint32_t m = b & ((1u << mbits) - 1);
        memset(slot, ' ', OIPCODEC_HALF_SLOT);
        if (efield == emax) {
            if (m) {
                memcpy(slot, "NaN", 3);
                end = slot + 3;
            } else if (negative) {
                memcpy(slot, "-Infinity", 9);
                end = slot + 9;
            } else {
                memcpy(slot, "Infinity", 8);
                end = slot + 8;
            }
        } else if (efield == 0 && m == 0) {
            end = oipcodec_write_float_layout(slot, negative, "0", 1, 0, 0, 0);
        } else {
            /* value = sig * 2**q exactly; the neighbours are one unit of 2**q away, except
             * below a power of two (not the smallest normal), where the gap halves. */
            uint32_t sig = efield ? (m | (1u << mbits)) : m;
            int q = (efield ? efield : 1) - bias - mbits;
            double v = ldexp((double)sig, q);
            double ulp = ldexp(1.0, q);
            double hi = v + ulp / 2;
            double lo = (m == 0 && efield > 1) ? v - ulp / 4 : v - ulp / 2;
            char digits[24];
            int e10 = 0;
            int n = oipcodec_shortest_small(v, lo, hi, (sig & 1) == 0, digits, &e10);
            if (n == 0) {
                return -1;
            }
            end = oipcodec_write_float_layout(slot, negative, digits, n, e10, OIPCODEC_F32_LO_E,
                                              OIPCODEC_F32_HI_E);
        }
        if (end - slot > OIPCODEC_HALF_SLOT) {
            return -1; /* a text longer than its slot would overrun the next one */
        }
        lens[b] = (uint8_t)(end - slot);
    }
    return 0;
}

/* 16-bit floats: ctx is a table of OIPCODEC_HALF_SLOT-byte texts followed by one length byte
 * per bit pattern (see oipcodec_build_half_table). */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_half(const void *data, ptrdiff_t n, char *out, const void *ctx) {
    const uint16_t *v = (const uint16_t *)data;
    const char *text = (const char *)ctx;
    const uint8_t *lens = (const uint8_t *)ctx + 65536 * OIPCODEC_HALF_SLOT;
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        uint16_t b = v[i];
        memcpy(out, text + (size_t)b * OIPCODEC_HALF_SLOT, OIPCODEC_HALF_SLOT);
        out += lens[b];
        *out++ = ',';
    }
    return n ? out - 1 : out;
}

#endif
