/* The fast lane for JSON arrays of integers: "integer ," pairs straight into a buffer of 1, 2,
 * 4 or 8-byte two's complement values, commas first as in read/float_lane.h, each element read
 * by the 16-byte integer reader of read/numscan.h; the rest goes to the byte-wise reader, and
 * anything unusual stops the lane for the caller's general code. */
#ifndef OIPCODEC_READ_INT_LANE_H
#define OIPCODEC_READ_INT_LANE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/read/chars.h"
#include "oipcodec/read/numscan.h"
#include "oipcodec/read/swar.h"

/* The integer lane's element: an integer ending within the 16 bytes at p (sign included) or
 * right after them, directly followed by a comma, and its magnitude at most max_positive
 * (max_negative when negative), stored as an itemsize-byte two's complement value. Returns the
 * byte after the comma, or NULL, having written nothing, for anything else. 32 bytes must be
 * readable at p. */
static inline int oipcodec_int_simple(const unsigned char *p, const unsigned char *comma,
                                      unsigned char *out, int itemsize, uint64_t max_positive,
                                      uint64_t max_negative) {
#if OIPCODEC_SWAR
    int negative = p[0] == '-', n;
    uint64_t m, sign;
    oipcodec_digits16 d;
    n = oipcodec_ctz64(oipcodec_scan16(p, &d) & ~(uint32_t)negative);
    if (!((p + n == comma) & (n > negative) & ((p[negative] != '0') | (n == negative + 1)))) {
        return 0;
    }
    m = oipcodec_digits_integer(&d, n);
    /* Signs are as random as the data: masks, not branches. */
    sign = (uint64_t)0 - (uint64_t)negative;
    if (m > (max_positive ^ ((max_positive ^ max_negative) & sign))) {
        return 0;
    }
    m = (m ^ sign) - sign; /* two's complement when negative */
    if (itemsize == 8) {
        memcpy(out, &m, 8);
    } else if (itemsize == 4) {
        uint32_t v = (uint32_t)m;
        memcpy(out, &v, 4);
    } else if (itemsize == 2) {
        uint16_t v = (uint16_t)m;
        memcpy(out, &v, 2);
    } else {
        out[0] = (unsigned char)m;
    }
    return 1;
#else
    (void)p;
    (void)comma;
    (void)out;
    (void)itemsize;
    (void)max_positive;
    (void)max_negative;
    return 0;
#endif
}

/* oipcodec_int_run's contract for the elements oipcodec_int_simple takes; commas first, as in
 * oipcodec_fp32_lane. */
static OIPCODEC_NOINLINE ptrdiff_t oipcodec_int_lane(const unsigned char **pp,
                                                     const unsigned char *end, unsigned char *out,
                                                     ptrdiff_t limit, int itemsize,
                                                     uint64_t max_positive,
                                                     uint64_t max_negative) {
    const unsigned char *p = *pp, *block = p, *last;
    ptrdiff_t n = 0;
    if (limit <= 0 || end - p < 128) {
        return 0;
    }
    last = end - 128; /* only once the text holds 128 bytes: a pointer before it is undefined */
    while (block <= last) {
        uint64_t commas = oipcodec_commas64(block) & (~(uint64_t)0 << (p - block));
        while (commas) {
            const unsigned char *comma = block + oipcodec_ctz64(commas);
            commas &= commas - 1;
            if (!oipcodec_int_simple(p, comma, out + itemsize * n, itemsize, max_positive,
                                     max_negative)) {
                goto done;
            }
            n++;
            p = comma + 1;
            if (*p == ' ') {
                p++;
            }
            if (*p <= ' ') {
                p = oipcodec_skip_ws(p, end);
                if (p - block > 64 + 1) {
                    goto done;
                }
            }
            if (n == limit) {
                goto done;
            }
        }
        block += 64;
        if (p < block) {
            goto done;
        }
    }
done:
    *pp = p;
    return n;
}

/* oipcodec_float_run's contract for integer datatypes: "integer ," pairs stored as
 * itemsize-byte two's complement values (1, 2, 4 or 8), stopping before the first element
 * that is not a plain integer followed by a comma or whose magnitude exceeds max_positive
 * (max_negative when negative); the caller's general code reports any error. The common
 * elements take oipcodec_int_simple, in a loop like oipcodec_fp32_lane's; the rest the
 * byte-wise reader. */
static inline ptrdiff_t oipcodec_int_run(const unsigned char **pp, const unsigned char *end,
                                         unsigned char *out, ptrdiff_t limit, int itemsize,
                                         uint64_t max_positive, uint64_t max_negative) {
    const unsigned char *p = *pp, *q;
    ptrdiff_t n = 0;
    while (n < limit) {
        int negative, overflow;
        uint64_t m, sign;
        n += oipcodec_int_lane(&p, end, out + itemsize * n, limit - n, itemsize, max_positive,
                               max_negative);
        if (n == limit) {
            break;
        }
        q = oipcodec_scan_integer(p, end, &negative, &m, &overflow);
        if (q == NULL || q >= end || overflow) {
            break;
        }
        sign = (uint64_t)0 - (uint64_t)negative;
        if (m > (max_positive ^ ((max_positive ^ max_negative) & sign))) {
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
        m = (m ^ sign) - sign;
        if (itemsize == 8) {
            memcpy(out + 8 * n, &m, 8);
        } else if (itemsize == 4) {
            uint32_t v = (uint32_t)m;
            memcpy(out + 4 * n, &v, 4);
        } else if (itemsize == 2) {
            uint16_t v = (uint16_t)m;
            memcpy(out + 2 * n, &v, 2);
        } else {
            out[n] = (unsigned char)m;
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
