/* Compares the JSON parser's array lanes built with the NEON comma scan (read/arm64/lanes.h)
 * and built without it (the SWAR scan of read/swar.h): this file is compiled twice, once with
 * -DSIDE=neon and once with -DSIDE=swar -DOIPCODEC_SIMD_MAX=0, and once more with -DMAIN to
 * drive both. On random texts of JSON numbers in every form the lanes read (integers, signs,
 * fractions, exponents, spaces and newlines around the commas) mixed with malformed ones
 * (leading zeros, '+', bare dots and exponents, doubled signs, letters, hex, missing commas,
 * overlong digit runs), each lane (int64/32/16/8 limits, fp32, fp64) must take the same
 * elements, stop at the same offset and store the same bytes; the comma masks of the text
 * at every offset and of random bytes must agree too. Run by tools/check_lanes_neon.sh. Argument: texts (default 200000). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(COUNT)
/* -DCOUNT: a driver for instruction counts (tools/check_lanes_neon.sh --count): parses the
 * first N of 8192 "int," or "float," elements (KIND int or fp32) through the lane once. */
#include "oipcodec/read/float_lane.h"
#include "oipcodec/read/int_lane.h"

static unsigned char text[8192 * 24 + 256];
static unsigned char out[8192 * 8];

int main(int argc, char **argv) {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    int fp = argc > 1 && strcmp(argv[1], "fp32") == 0, k;
    long n = argc > 2 ? atol(argv[2]) : 1000, len = 0, stop = 0;
    const unsigned char *p = text;
    ptrdiff_t got;
    for (k = 0; k < 8192; k++) {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        len += fp ? sprintf((char *)text + len, "%.6f,", (double)(state % 2000001) / 1e6 - 1)
                  : sprintf((char *)text + len, "%d,", (int)((state >> 8) % 50000));
        if (k + 1 == n) {
            stop = len;
        }
    }
    memset(text + len, ' ', 200);
    got = fp ? oipcodec_float_run(&p, text + stop + 128, out, n, OIPCODEC_OUT_FP32)
             : oipcodec_int_run(&p, text + stop + 128, out, n, 8, INT64_MAX,
                                (uint64_t)INT64_MAX + 1);
    printf("%s %ld elements, %s comma scan\n", fp ? "fp32" : "int", (long)got,
           OIPCODEC_NEON_LANES ? "NEON" : "SWAR");
    return got != n;
}

#elif !defined(MAIN)
#include "oipcodec/read/float_lane.h"
#include "oipcodec/read/int_lane.h"

#define CAT(a, b) a##b
#define NAME(side, what) CAT(side, what)

uint64_t NAME(SIDE, _commas64)(const unsigned char *p) { return oipcodec_commas64(p); }

ptrdiff_t NAME(SIDE, _int_run)(const unsigned char **pp, const unsigned char *end,
                               unsigned char *out, ptrdiff_t limit, int itemsize,
                               uint64_t max_positive, uint64_t max_negative) {
    return oipcodec_int_run(pp, end, out, limit, itemsize, max_positive, max_negative);
}

ptrdiff_t NAME(SIDE, _float_run)(const unsigned char **pp, const unsigned char *end,
                                 unsigned char *out, ptrdiff_t limit, int fp64) {
    return oipcodec_float_run(pp, end, out, limit, fp64 ? OIPCODEC_OUT_FP64 : OIPCODEC_OUT_FP32);
}

/* The digit scan's mask and the 16 digit values, as bytes in memory order. */
uint32_t NAME(SIDE, _scan16)(const unsigned char *p, unsigned char *values) {
    oipcodec_digits16 d;
    uint32_t mask = oipcodec_scan16(p, &d);
    memcpy(values, &d, 16);
    return mask;
}

int NAME(SIDE, _is_neon)(void) { return OIPCODEC_NEON_LANES; }

#else /* MAIN */
typedef ptrdiff_t int_run_fn(const unsigned char **, const unsigned char *, unsigned char *,
                             ptrdiff_t, int, uint64_t, uint64_t);
typedef ptrdiff_t float_run_fn(const unsigned char **, const unsigned char *, unsigned char *,
                               ptrdiff_t, int);
int_run_fn neon_int_run, swar_int_run;
float_run_fn neon_float_run, swar_float_run;
uint64_t neon_commas64(const unsigned char *), swar_commas64(const unsigned char *);
uint32_t neon_scan16(const unsigned char *, unsigned char *),
    swar_scan16(const unsigned char *, unsigned char *);

/* The digit scans of the 16 bytes at p agree (mask and values); counts one check. */
static int same_scan16(const unsigned char *p, unsigned long long *scans) {
    unsigned char va[16], vb[16];
    ++*scans;
    return neon_scan16(p, va) == swar_scan16(p, vb) && memcmp(va, vb, 16) == 0;
}
int neon_is_neon(void), swar_is_neon(void);

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void) { /* xorshift64* */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
}

static int digits(char *o, int n, int lead_zero_ok) {
    int k;
    for (k = 0; k < n; k++) {
        o[k] = (char)('0' + next() % 10);
    }
    if (!lead_zero_ok && n > 1 && o[0] == '0') {
        o[0] = '1';
    }
    return n;
}

static const char *const malformed[] = {"01",  "+1",   "-",    ".5",  "1.",   "1e",  "1e+",
                                        "--1", "0x1F", "1a",   "abc", "1.2.3", "- 1", "1 2",
                                        "NaN", "1E999", "-0.0e-400", "18446744073709551616",
                                        "99999999999999999999999", "", "[", "\"1\""};

/* One element of the kinds above; most are well formed, 1 in `bad` is malformed. */
static int element(char *o, int bad) {
    uint64_t r = next();
    int n = 0, kind = (int)(r % 8);
    if (bad && r % (uint64_t)bad == 0) {
        const char *m = malformed[(r >> 8) % (sizeof(malformed) / sizeof(*malformed))];
        memcpy(o, m, strlen(m));
        return (int)strlen(m);
    }
    if (r >> 60 & 1) {
        o[n++] = '-';
    }
    switch (kind) {
    case 0: /* small integers */
        n += digits(o + n, 1 + (int)((r >> 8) % 5), 0);
        break;
    case 1: /* integers of any length up to 21 digits */
        n += digits(o + n, 1 + (int)((r >> 8) % 21), 0);
        break;
    case 2: /* fractions */
    case 3:
        n += digits(o + n, 1 + (int)((r >> 8) % 3), 0);
        o[n++] = '.';
        n += digits(o + n, 1 + (int)((r >> 12) % 12), 1);
        break;
    case 4: /* exponents */
        n += digits(o + n, 1 + (int)((r >> 8) % 3), 0);
        if (r >> 16 & 1) {
            o[n++] = '.';
            n += digits(o + n, 1 + (int)((r >> 12) % 9), 1);
        }
        o[n++] = r >> 20 & 1 ? 'e' : 'E';
        if (r >> 21 & 1) {
            o[n++] = r >> 22 & 1 ? '-' : '+';
        }
        n += digits(o + n, 1 + (int)((r >> 24) % 3), 1);
        break;
    case 5: /* zero and its forms */
        o[n++] = '0';
        if (r >> 8 & 1) {
            o[n++] = '.';
            n += digits(o + n, 1 + (int)((r >> 12) % 5), 1);
        }
        break;
    default: /* long fractions */
        n += digits(o + n, 1 + (int)((r >> 8) % 9), 0);
        o[n++] = '.';
        n += digits(o + n, 1 + (int)((r >> 12) % 20), 1);
        break;
    }
    return n;
}

static int separator(char *o) {
    static const char *const seps[] = {",", ",", ",", ", ", ",  ", " ,", ",\n", "\n,\t ", ",\r\n"};
    const char *s = seps[next() % (sizeof(seps) / sizeof(*seps))];
    memcpy(o, s, strlen(s));
    return (int)strlen(s);
}

#define TEXT 65536
static unsigned char text[TEXT + 256];
static unsigned char out_a[8 * TEXT], out_b[8 * TEXT];

int main(int argc, char **argv) {
    long texts = argc > 1 ? atol(argv[1]) : 200000, t;
    unsigned long long runs = 0, elements = 0, stops_inside = 0, masks = 0, scans = 0, diffs = 0;
    static const uint64_t limits[4][2] = {{INT64_MAX, (uint64_t)INT64_MAX + 1},
                                          {INT32_MAX, (uint64_t)INT32_MAX + 1},
                                          {INT16_MAX, (uint64_t)INT16_MAX + 1},
                                          {INT8_MAX, (uint64_t)INT8_MAX + 1}};
    printf("comma and digit scans: %s against %s\n", neon_is_neon() ? "NEON" : "SWAR",
           swar_is_neon() ? "NEON" : "SWAR");
    for (t = 0; t < texts; t++) {
        int len = 0, last, bad = (int)(t % 4) * 20, lane, count = 1 + (int)(next() % 400);
        int integers = t % 2 == 0;
        while (count-- > 0 && len < TEXT - 64) {
            if (integers && next() % 8) {
                char *o = (char *)text + len;
                int n = 0;
                if (next() & 1) {
                    o[n++] = '-';
                }
                uint64_t r = next(); /* one call per statement: the same text from any compiler */
                n += digits(o + n, 1 + (int)(r % (r >> 32 & 1 ? 5 : 20)), 0);
                len += n;
            } else {
                len += element((char *)text + len, bad);
            }
            len += separator((char *)text + len);
        }
        last = len;
        len += element((char *)text + len, bad); /* the last element: no comma */
        text[len] = ']';
        memset(text + len + 1, 0, 128);
        for (lane = 0; lane < 6; lane++) {
            const unsigned char *pa = text, *pb = text;
            const unsigned char *end = text + len + 1;
            ptrdiff_t na, nb, bytes;
            if (lane < 4) {
                int itemsize = 8 >> lane;
                na = neon_int_run(&pa, end, out_a, TEXT, itemsize, limits[lane][0],
                                  limits[lane][1]);
                nb = swar_int_run(&pb, end, out_b, TEXT, itemsize, limits[lane][0],
                                  limits[lane][1]);
                bytes = na * itemsize;
            } else {
                na = neon_float_run(&pa, end, out_a, TEXT, lane == 5);
                nb = swar_float_run(&pb, end, out_b, TEXT, lane == 5);
                bytes = na * (lane == 5 ? 8 : 4);
            }
            runs++;
            elements += (unsigned long long)na;
            stops_inside += pa < text + last;
            if (na != nb || pa != pb || memcmp(out_a, out_b, (size_t)bytes) != 0) {
                diffs++;
                fprintf(stderr, "DIFFERENCE lane %d text %ld: %ld/%ld elements, offsets %ld/%ld\n",
                        lane, t, (long)na, (long)nb, (long)(pa - text), (long)(pb - text));
                return 1;
            }
        }
        /* comma masks of the text's blocks (the lanes fall back to the byte-wise reader when a
         * mask is wrong, so the results above would not show it) and of 64 random bytes */
        {
            unsigned char block[64];
            int k;
            for (k = 0; k + 64 <= len; k++) {
                masks++;
                if (neon_commas64(text + k) != swar_commas64(text + k)) {
                    diffs++;
                    fprintf(stderr, "DIFFERENCE comma mask, text %ld offset %d\n", t, k);
                    return 1;
                }
            }
            for (k = 0; k + 16 <= len; k++) {
                if (!same_scan16(text + k, &scans)) {
                    diffs++;
                    fprintf(stderr, "DIFFERENCE digit scan, text %ld offset %d\n", t, k);
                    return 1;
                }
            }
            for (k = 0; k < 64; k++) {
                uint64_t r = next();
                block[k] = r & 3 ? (unsigned char)(r & 4 ? ',' : '0' + (r >> 3) % 10)
                                 : (unsigned char)(r >> 8);
            }
            for (k = 0; k + 16 <= 64; k++) {
                if (!same_scan16(block + k, &scans)) {
                    diffs++;
                    fprintf(stderr, "DIFFERENCE digit scan, random bytes of text %ld\n", t);
                    return 1;
                }
            }
            masks++;
            if (neon_commas64(block) != swar_commas64(block)) {
                diffs++;
                fprintf(stderr, "DIFFERENCE comma mask, text %ld\n", t);
                return 1;
            }
        }
    }
    printf("texts %ld, lane runs %llu, elements taken %llu, runs stopped before the last element %llu, "
           "comma masks %llu, digit scans %llu, differences %llu\n",
           texts, runs, elements, stops_inside, masks, scans, diffs);
    return diffs != 0;
}
#endif
