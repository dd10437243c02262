/* Writing JSON arrays of tensor elements: the C side of oipcodec._native.jsonencode.
 *
 * The text layout is defined once, by the pure twin (oipcodec/_pure/jsonencode.py) and the
 * README; this header reproduces it byte for byte:
 * - integers in decimal, BOOL as true/false;
 * - a float is its shortest round-trip digits d1 d2 ... dn with decimal exponent E (value =
 *   d1.d2...dn * 10**E), written positionally when E is within the type's positional range
 *   ("0.00012", "123.5", integral values end in ".0") and as d1[.d2...dn]e[+-]E otherwise
 *   ("1e-7", "1.5e+16");
 * - NaN, Infinity, -Infinity tokens for non-finite floats;
 * - BYTES as JSON strings: valid UTF-8 copied as is, only '"', '\\' and control characters
 *   escaped.
 *
 * Every writer is given a buffer the caller sized with the bounds below; none allocates, none
 * needs the GIL. Plain C99 and MSVC-compatible. */
#ifndef OIPCODEC_JSONWRITE_H
#define OIPCODEC_JSONWRITE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/endian.h"
#include "oipcodec/half.h"

#if defined(_MSC_VER)
#include <intrin.h>
#endif

/* Slot width of a 16-bit float's text in the lookup tables; the longest text is 16 bytes
 * ("-1234000000000.0" for BF16), and a slot is always copied whole, so buffers written from
 * a table need OIPCODEC_HALF_SLOT bytes of slack. */
#define OIPCODEC_HALF_SLOT 16

static const char oipcodec_digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* ---------------------------------------------------------------- integers */

/* Decimal digits of v, from its bit length: log10(2) ~ 1233/4096 gives the count or one too
 * many, and one comparison settles it. No data-dependent branch: digit counts of real data
 * vary from element to element and would be mispredicted. */
static const uint32_t oipcodec_pow10_u32[10] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u};

static inline int oipcodec_bit_length_u32(uint32_t v) {
#if defined(_MSC_VER)
    unsigned long index;
    return _BitScanReverse(&index, v | 1u) ? (int)index + 1 : 1;
#elif defined(__GNUC__) || defined(__clang__)
    return 32 - __builtin_clz(v | 1u);
#else
    int n = 1;
    while (v >>= 1) {
        n++;
    }
    return n;
#endif
}

static inline int oipcodec_count_digits_u32(uint32_t v) {
    int t = (oipcodec_bit_length_u32(v) * 1233) >> 12;
    return t + 1 - ((v | 1u) < oipcodec_pow10_u32[t]); /* v | 1: zero has one digit */
}

/* Exactly 8 digits, leading zeros included. */
static inline void oipcodec_write_8digits(char *out, uint32_t v) {
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(out, oipcodec_digit_pairs + 2 * (hi / 100), 2);
    memcpy(out + 2, oipcodec_digit_pairs + 2 * (hi % 100), 2);
    memcpy(out + 4, oipcodec_digit_pairs + 2 * (lo / 100), 2);
    memcpy(out + 6, oipcodec_digit_pairs + 2 * (lo % 100), 2);
}

static inline uint64_t oipcodec_pair(uint32_t v) {
    uint16_t pair;
    memcpy(&pair, oipcodec_digit_pairs + 2 * v, 2);
    return pair;
}

/* v < 10**8 without its leading zeros: the 8 digits are assembled in a 64-bit word (in
 * registers: storing pieces and reloading them whole would stall store forwarding), shifted
 * so the significant ones come first, and stored 8 bytes wide (the caller's buffer has slack;
 * later writes overwrite the spare bytes). No branch depends on the digit count, which varies
 * from element to element in real data and would be mispredicted. */
static inline char *oipcodec_write_small(char *out, uint32_t v) {
    uint32_t hi, lo;
    int n, drop;
    uint64_t word;
    if (v < 100) {
        /* Tensors of small counts, classes and bytes are common enough for a shortcut. */
        int two = v >= 10;
        memcpy(out, oipcodec_digit_pairs + 2 * v + 1 - two, 2);
        return out + 1 + two;
    }
    hi = v / 10000;
    lo = v % 10000;
    n = oipcodec_count_digits_u32(v);
    drop = 8 - n;
#if OIPCODEC_BIG_ENDIAN
    word = oipcodec_pair(hi / 100) << 48 | oipcodec_pair(hi % 100) << 32 |
           oipcodec_pair(lo / 100) << 16 | oipcodec_pair(lo % 100);
    word <<= 8 * drop;
#else
    word = oipcodec_pair(hi / 100) | oipcodec_pair(hi % 100) << 16 |
           oipcodec_pair(lo / 100) << 32 | oipcodec_pair(lo % 100) << 48;
    word >>= 8 * drop;
#endif
    memcpy(out, &word, 8);
    return out + n;
}

static inline char *oipcodec_write_u32(char *out, uint32_t v) {
    if (v < 100000000u) {
        return oipcodec_write_small(out, v);
    }
    out = oipcodec_write_small(out, v / 100000000u);
    oipcodec_write_8digits(out, v % 100000000u);
    return out + 8;
}

static inline char *oipcodec_write_u64(char *out, uint64_t v) {
    if (v < 100000000u) {
        return oipcodec_write_small(out, (uint32_t)v);
    }
    if (v < 10000000000000000ull) {
        out = oipcodec_write_small(out, (uint32_t)(v / 100000000u));
    } else {
        uint64_t high = v / 100000000u;
        out = oipcodec_write_small(out, (uint32_t)(high / 100000000u));
        oipcodec_write_8digits(out, (uint32_t)(high % 100000000u));
        out += 8;
    }
    oipcodec_write_8digits(out, (uint32_t)(v % 100000000u));
    return out + 8;
}

/* The minus sign is always stored and only kept for negative values (branch-free, as above);
 * the magnitude is negated in unsigned arithmetic, where -INT64_MIN does not overflow. */
static inline char *oipcodec_write_i64(char *out, int64_t v) {
    uint64_t negative = v < 0;
    *out = '-';
    out += negative;
    return oipcodec_write_u64(out, negative ? 0 - (uint64_t)v : (uint64_t)v);
}

static inline char *oipcodec_write_i32(char *out, int32_t v) {
    uint32_t negative = v < 0;
    *out = '-';
    out += negative;
    return oipcodec_write_u32(out, negative ? 0 - (uint32_t)v : (uint32_t)v);
}

/* One writer per element type: n elements separated by commas, no brackets. The row writers
 * share one signature so the nested driver below can take any of them. */
typedef char *(*oipcodec_row_fn)(const void *data, ptrdiff_t n, char *out, const void *ctx);

#define OIPCODEC_INT_ROW(NAME, CTYPE, WRITE, WIDE)                                          \
    static char *NAME(const void *data, ptrdiff_t n, char *out, const void *ctx) {         \
        const CTYPE *v = (const CTYPE *)data;                                               \
        ptrdiff_t i;                                                                        \
        (void)ctx;                                                                          \
        for (i = 0; i < n; i++) {                                                           \
            if (i) {                                                                        \
                *out++ = ',';                                                               \
            }                                                                               \
            out = WRITE(out, (WIDE)v[i]);                                                   \
        }                                                                                   \
        return out;                                                                         \
    }

OIPCODEC_INT_ROW(oipcodec_row_u8, uint8_t, oipcodec_write_u32, uint32_t)
OIPCODEC_INT_ROW(oipcodec_row_u16, uint16_t, oipcodec_write_u32, uint32_t)
OIPCODEC_INT_ROW(oipcodec_row_u32, uint32_t, oipcodec_write_u32, uint32_t)
OIPCODEC_INT_ROW(oipcodec_row_u64, uint64_t, oipcodec_write_u64, uint64_t)
OIPCODEC_INT_ROW(oipcodec_row_i8, int8_t, oipcodec_write_i32, int32_t)
OIPCODEC_INT_ROW(oipcodec_row_i16, int16_t, oipcodec_write_i32, int32_t)
OIPCODEC_INT_ROW(oipcodec_row_i32, int32_t, oipcodec_write_i32, int32_t)
OIPCODEC_INT_ROW(oipcodec_row_i64, int64_t, oipcodec_write_i64, int64_t)

static char *oipcodec_row_bool(const void *data, ptrdiff_t n, char *out, const void *ctx) {
    /* Each word is copied 8 bytes wide with its comma (the spare bytes are overwritten by
     * what follows), so the loop has no data-dependent branch: random bools predict badly. */
    static const char words[2][8] = {{'f', 'a', 'l', 's', 'e', ',', 0, 0},
                                     {'t', 'r', 'u', 'e', ',', 0, 0, 0}};
    const uint8_t *v = (const uint8_t *)data;
    ptrdiff_t i;
    (void)ctx;
    for (i = 0; i < n; i++) {
        int t = v[i] != 0;
        memcpy(out, words[t], 8);
        out += 6 - t;
    }
    return n ? out - 1 : out;
}

/* 16-bit floats: ctx is a table of OIPCODEC_HALF_SLOT-byte texts followed by one length byte
 * per bit pattern (see oipcodec_build_half_table). */
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

/* Writes the elements as nested arrays of the given shape (ndim >= 1, every dimension > 0,
 * ndim <= 64): each innermost row by `row`, brackets and commas between rows by counting how
 * many dimensions roll over. A flat array is the shape [n]. */
static char *oipcodec_write_nested(const char *data, ptrdiff_t itemsize, const ptrdiff_t *shape,
                                   int ndim, char *out, oipcodec_row_fn row, const void *ctx) {
    ptrdiff_t idx[64];
    ptrdiff_t rowlen = shape[ndim - 1], nrows = 1, r;
    int k;
    for (k = 0; k < ndim - 1; k++) {
        nrows *= shape[k];
        idx[k] = 0;
    }
    memset(out, '[', (size_t)ndim);
    out += ndim;
    for (r = 0; r < nrows; r++) {
        if (r > 0) {
            int closes = 1;
            k = ndim - 2;
            while (k >= 0) {
                if (++idx[k] < shape[k]) {
                    break;
                }
                idx[k] = 0;
                k--;
                closes++;
            }
            memset(out, ']', (size_t)closes);
            out += closes;
            *out++ = ',';
            memset(out, '[', (size_t)closes);
            out += closes;
        }
        out = row(data + r * rowlen * itemsize, rowlen, out, ctx);
    }
    memset(out, ']', (size_t)ndim);
    return out + ndim;
}

/* ---------------------------------------------------------------- float layout */

/* Writes sign, the significant digits (n >= 1, no trailing zeros unless the value is 0) and
 * the decimal exponent E in the layout described at the top; lo_e..hi_e is the positional
 * range. Returns the end. At most 2 + n + max(hi_e, -lo_e) + 2 bytes, or n + 8. */
static inline char *oipcodec_write_float_layout(char *out, int negative, const char *digits,
                                                int n, int e, int lo_e, int hi_e) {
    if (negative) {
        *out++ = '-';
    }
    if (e >= lo_e && e <= hi_e) {
        if (e >= 0) {
            if (n <= e + 1) {
                memcpy(out, digits, (size_t)n);
                out += n;
                memset(out, '0', (size_t)(e + 1 - n));
                out += e + 1 - n;
                memcpy(out, ".0", 2);
                return out + 2;
            }
            memcpy(out, digits, (size_t)(e + 1));
            out += e + 1;
            *out++ = '.';
            memcpy(out, digits + e + 1, (size_t)(n - e - 1));
            return out + n - e - 1;
        }
        memcpy(out, "0.", 2);
        out += 2;
        memset(out, '0', (size_t)(-e - 1));
        out += -e - 1;
        memcpy(out, digits, (size_t)n);
        return out + n;
    }
    *out++ = digits[0];
    if (n > 1) {
        *out++ = '.';
        memcpy(out, digits + 1, (size_t)(n - 1));
        out += n - 1;
    }
    *out++ = 'e';
    if (e < 0) {
        *out++ = '-';
        return oipcodec_write_u32(out, (uint32_t)(-e));
    }
    *out++ = '+';
    return oipcodec_write_u32(out, (uint32_t)e);
}

/* Positional ranges of the decimal exponent: FP64, and FP32 (also used for FP16 and BF16). */
#define OIPCODEC_F64_LO_E (-5)
#define OIPCODEC_F64_HI_E 15
#define OIPCODEC_F32_LO_E (-6)
#define OIPCODEC_F32_HI_E 12

/* ---------------------------------------------------------------- 16-bit float tables */

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

/* ---------------------------------------------------------------- non-finite floats */

static inline int oipcodec_f32_nonfinite(uint32_t u) { return (u & 0x7F800000u) == 0x7F800000u; }

static inline int oipcodec_f64_nonfinite(uint64_t u) {
    return (u & 0x7FF0000000000000ull) == 0x7FF0000000000000ull;
}

/* Number of non-finite elements of a float32 (wide = 0) or float64 (wide = 1) array, and the
 * index of the first one in *first (-1 if none). */
static ptrdiff_t oipcodec_count_nonfinite(const void *data, ptrdiff_t n, int wide,
                                          ptrdiff_t *first) {
    ptrdiff_t i, count = 0;
    *first = -1;
    if (wide) {
        const uint64_t *v = (const uint64_t *)data;
        for (i = 0; i < n; i++) {
            count += oipcodec_f64_nonfinite(v[i]);
        }
    } else {
        const uint32_t *v = (const uint32_t *)data;
        for (i = 0; i < n; i++) {
            count += oipcodec_f32_nonfinite(v[i]);
        }
    }
    if (count) {
        for (i = 0; i < n; i++) {
            int bad = wide ? oipcodec_f64_nonfinite(((const uint64_t *)data)[i])
                           : oipcodec_f32_nonfinite(((const uint32_t *)data)[i]);
            if (bad) {
                *first = i;
                break;
            }
        }
    }
    return count;
}

/* The token of a non-finite element. */
static inline const char *oipcodec_nonfinite_token(const void *data, ptrdiff_t i, int wide,
                                                   size_t *len) {
    int nan, negative;
    if (wide) {
        uint64_t u = ((const uint64_t *)data)[i];
        nan = (u & 0x000FFFFFFFFFFFFFull) != 0;
        negative = (int)(u >> 63);
    } else {
        uint32_t u = ((const uint32_t *)data)[i];
        nan = (u & 0x007FFFFFu) != 0;
        negative = (int)(u >> 31);
    }
    if (nan) {
        *len = 3;
        return "NaN";
    }
    *len = negative ? 9 : 8;
    return negative ? "-Infinity" : "Infinity";
}

/* Rewrites JSON number-array text produced by another writer (orjson) into our layout: every
 * number token is re-read as sign, digits and exponent and written again; every `null` (the
 * other writer's form of a non-finite float) becomes the token of the next non-finite element
 * of `data`, in row-major order. Brackets and commas are copied. With relayout = 0 the
 * numbers are copied as they are and only the nulls are replaced. `out` needs room for
 * in_len + 5 * (non-finite count) bytes, plus, with relayout, 24 bytes per number. Returns
 * the end of the output, or NULL if the input has a token this function does not expect. */
static char *oipcodec_rewrite_floats(const char *in, size_t in_len, char *out, const void *data,
                                     ptrdiff_t n, int wide, int relayout) {
    const char *p = in, *end = in + in_len;
    ptrdiff_t next = 0; /* the next element that may be non-finite */
    int lo_e = wide ? OIPCODEC_F64_LO_E : OIPCODEC_F32_LO_E;
    int hi_e = wide ? OIPCODEC_F64_HI_E : OIPCODEC_F32_HI_E;
    if (!relayout) {
        /* Fast path: only the nulls change; copy the stretches between them. */
        for (;;) {
            const char *hit = (const char *)memchr(p, 'n', (size_t)(end - p));
            const char *tok;
            size_t len;
            if (hit == NULL) {
                memcpy(out, p, (size_t)(end - p));
                return out + (end - p);
            }
            if (end - hit < 4 || memcmp(hit, "null", 4) != 0) {
                return NULL;
            }
            memcpy(out, p, (size_t)(hit - p));
            out += hit - p;
            while (next < n && !(wide ? oipcodec_f64_nonfinite(((const uint64_t *)data)[next])
                                      : oipcodec_f32_nonfinite(((const uint32_t *)data)[next]))) {
                next++;
            }
            if (next >= n) {
                return NULL;
            }
            tok = oipcodec_nonfinite_token(data, next++, wide, &len);
            memcpy(out, tok, len);
            out += len;
            p = hit + 4;
        }
    }
    while (p < end) {
        char c = *p;
        if (c == '[' || c == ']' || c == ',') {
            *out++ = c;
            p++;
        } else if (c == 'n') {
            const char *tok;
            size_t len;
            if (end - p < 4 || memcmp(p, "null", 4) != 0) {
                return NULL;
            }
            while (next < n && !(wide ? oipcodec_f64_nonfinite(((const uint64_t *)data)[next])
                                      : oipcodec_f32_nonfinite(((const uint32_t *)data)[next]))) {
                next++;
            }
            if (next >= n) {
                return NULL;
            }
            tok = oipcodec_nonfinite_token(data, next++, wide, &len);
            memcpy(out, tok, len);
            out += len;
            p += 4;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            char digits[40];
            int nd = 0, point = -1, lead = 0, negative = 0, e, exp = 0, exp_neg = 0;
            if (c == '-') {
                negative = 1;
                p++;
            }
            /* digits[] keeps the significant digits; `point` counts the digits before the
             * decimal point, `lead` the zeros skipped before the first significant one. */
            for (; p < end; p++) {
                c = *p;
                if (c >= '0' && c <= '9') {
                    if (nd == 0 && c == '0') {
                        lead++;
                        continue;
                    }
                    if (nd >= (int)sizeof digits) {
                        return NULL;
                    }
                    digits[nd++] = c;
                } else if (c == '.' && point < 0) {
                    point = nd + lead;
                } else {
                    break;
                }
            }
            if (point < 0) {
                point = nd + lead;
            }
            if (p < end && (*p == 'e' || *p == 'E')) {
                p++;
                if (p < end && (*p == '+' || *p == '-')) {
                    exp_neg = *p == '-';
                    p++;
                }
                while (p < end && *p >= '0' && *p <= '9' && exp < 100000) {
                    exp = exp * 10 + (*p++ - '0');
                }
                if (exp_neg) {
                    exp = -exp;
                }
            }
            while (nd > 0 && digits[nd - 1] == '0') {
                nd--;
            }
            if (nd == 0) {
                out = oipcodec_write_float_layout(out, negative, "0", 1, 0, 0, 0);
            } else {
                /* d1 is digit number `lead` (from 0) of the token, `point` digits stand
                 * before the decimal point: d1's exponent is point - 1 - lead. */
                e = point - 1 - lead + exp;
                out = oipcodec_write_float_layout(out, negative, digits, nd, e, lo_e, hi_e);
            }
        } else {
            return NULL;
        }
    }
    return out;
}

/* ---------------------------------------------------------------- BYTES as JSON strings */

/* Length of the longest valid UTF-8 prefix of s[0:n] (n if all of it is valid). Rejects what
 * Python's strict UTF-8 codec rejects: overlong forms, surrogates, code points above
 * U+10FFFF, truncated sequences. */
static ptrdiff_t oipcodec_utf8_valid_prefix(const unsigned char *s, ptrdiff_t n) {
    ptrdiff_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) {
                return i;
            }
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
            if (i + 2 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xC0) != 0x80) {
                return i;
            }
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
            if (i + 3 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xC0) != 0x80 ||
                (s[i + 3] & 0xC0) != 0x80) {
                return i;
            }
            i += 4;
        } else {
            return i;
        }
    }
    return n;
}

/* Bytes each input byte takes inside a JSON string: 1, 2 for the short escapes, 6 for
 * \u00XX. */
static const unsigned char oipcodec_escape_len[256] = {
    6, 6, 6, 6, 6, 6, 6, 6, 2, 2, 2, 6, 2, 2, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* Size of s[0:n] as the contents of a JSON string (quotes not counted). */
static size_t oipcodec_escaped_size(const unsigned char *s, ptrdiff_t n) {
    size_t size = 0;
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        size += oipcodec_escape_len[s[i]];
    }
    return size;
}

/* Writes s[0:n] as a JSON string, quotes included. */
static char *oipcodec_write_string(char *out, const unsigned char *s, ptrdiff_t n) {
    static const char hex[] = "0123456789abcdef";
    ptrdiff_t i = 0, run = 0;
    *out++ = '"';
    while (i < n) {
        unsigned char c;
        /* Copy the run of bytes that need no escape in one go. */
        run = i;
        while (i < n && oipcodec_escape_len[s[i]] == 1) {
            i++;
        }
        memcpy(out, s + run, (size_t)(i - run));
        out += i - run;
        if (i >= n) {
            break;
        }
        c = s[i++];
        *out++ = '\\';
        switch (c) {
        case '"': *out++ = '"'; break;
        case '\\': *out++ = '\\'; break;
        case '\b': *out++ = 'b'; break;
        case '\f': *out++ = 'f'; break;
        case '\n': *out++ = 'n'; break;
        case '\r': *out++ = 'r'; break;
        case '\t': *out++ = 't'; break;
        default:
            memcpy(out, "u00", 3);
            out[3] = hex[c >> 4];
            out[4] = hex[c & 15];
            out += 5;
        }
    }
    *out++ = '"';
    return out;
}

/* A BYTES element: its bytes (valid UTF-8, checked by the caller) and their count. */
typedef struct {
    const unsigned char *data;
    ptrdiff_t size;
} oipcodec_piece;

static char *oipcodec_row_strings(const void *data, ptrdiff_t n, char *out, const void *ctx) {
    const oipcodec_piece *pieces = (const oipcodec_piece *)data;
    ptrdiff_t i;
    (void)ctx;
    for (i = 0; i < n; i++) {
        if (i) {
            *out++ = ',';
        }
        out = oipcodec_write_string(out, pieces[i].data, pieces[i].size);
    }
    return out;
}

#endif
