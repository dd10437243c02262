/* JSON number and string text to binary values, for oipcodec._native.jsondecode.
 *
 * Numbers: a JSON number token is first read into a decimal (w, q): its first 19 significant
 * digits as an integer w and a power of ten q, with a flag when nonzero digits were dropped.
 * The correctly rounded float64 of w * 10**q then comes from, in order:
 * 1. Clinger's fast path: w <= 2**53 and |q| <= 22 make w and 10**|q| exact doubles, so one
 *    IEEE multiply or divide (itself correctly rounded) is the answer;
 * 2. the Eisel-Lemire algorithm: w times a 128-bit truncated power of five (pow5_table.h)
 *    gives the leading bits of the value with an error below two units of the second word;
 *    the result is final unless that error could change the rounding, which the code
 *    detects and reports as "undecided";
 * 3. undecided cases (rare: about one input in 10**15 of random ones, and some with more than
 *    19 digits) are left to the caller, which asks Python's float() (a correct, but slower,
 *    big-number algorithm).
 * Narrower floats (float32, FP16, BF16) round that float64 once more. That second rounding is
 * wrong only when the float64 lies exactly halfway between two values of the narrow format
 * while the decimal does not: oipcodec_is_midpoint() finds those cases for the caller to
 * settle exactly.
 *
 * Speed (the arrays' common case): tokens are read 16 bytes at a time (SSE2 where available,
 * else 64-bit words), with masks instead of data-dependent branches, and the FP32 and integer
 * lanes find the commas of 64 bytes first so that consecutive numbers are parsed
 * independently; see "sixteen bytes at a time" and oipcodec_fp32_lane. Anything unusual falls
 * back to the byte-wise readers, which decide every error.
 *
 * Plain C99 plus optional compiler intrinsics, each with a portable fallback (MSVC included).
 * The Clinger path needs IEEE double arithmetic without excess precision (FLT_EVAL_METHOD 0,
 * as on x86-64 and AArch64); elsewhere it is compiled out and Eisel-Lemire does the work. */
#ifndef OIPCODEC_JSONNUM_H
#define OIPCODEC_JSONNUM_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/pow5_table.h"

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
#include <intrin.h>
#endif

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define OIPCODEC_CLINGER 1
#else
#define OIPCODEC_CLINGER 0
#endif

/* ---- 64-bit helpers ------------------------------------------------------------------- */

/* a * b as 128 bits: returns the low half, stores the high half. */
static inline uint64_t oipcodec_mul128(uint64_t a, uint64_t b, uint64_t *hi) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 r = (unsigned __int128)a * b;
    *hi = (uint64_t)(r >> 64);
    return (uint64_t)r;
#elif defined(_MSC_VER) && defined(_M_X64)
    return _umul128(a, b, hi);
#elif defined(_MSC_VER) && defined(_M_ARM64)
    *hi = __umulh(a, b);
    return a * b;
#else
    uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return (mid << 32) | (p00 & 0xFFFFFFFFu);
#endif
}

/* Leading zero bits of x, which must not be 0. */
static inline int oipcodec_clz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(x);
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
    unsigned long i;
    _BitScanReverse64(&i, x);
    return 63 - (int)i;
#else
    int n = 0;
    while (!(x & 0x8000000000000000ull)) {
        x <<= 1;
        n++;
    }
    return n;
#endif
}

/* Trailing zero bits of x; 64 when x is 0 (as the tzcnt instruction), which the scanners below
 * can pass: `mask & (mask - 1)` is 0 when the 16-byte window holds only digits. The builtins
 * leave 0 undefined (UBSan stops there) and MSVC's bit scan leaves its result unset. */
static inline int oipcodec_ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return x ? __builtin_ctzll(x) : 64;
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
    unsigned long i;
    return _BitScanForward64(&i, x) ? (int)i : 64;
#else
    int n = 0;
    if (!x) {
        return 64;
    }
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

/* ---- characters --------------------------------------------------------------------- */

/* 1 for the bytes that end a bare token (number, true, false, null, NaN, Infinity): JSON white
 * space and structural characters, and '"'. Every other byte belongs to the token, so "1x" is
 * one (invalid) token rather than "1" followed by garbage. */
static const unsigned char oipcodec_json_delim[256] = {
    ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [' '] = 1, ['"'] = 1, [','] = 1,
    [':'] = 1,  ['['] = 1,  [']'] = 1,  ['{'] = 1, ['}'] = 1,
};

static inline int oipcodec_is_ws(unsigned char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline const unsigned char *oipcodec_skip_ws(const unsigned char *p,
                                                     const unsigned char *end) {
    while (p < end && oipcodec_is_ws(*p)) {
        p++;
    }
    return p;
}

/* ---- number tokens ------------------------------------------------------------------ */

/* A JSON number as read from text: value = (negative ? -1 : 1) * w * 10**q when not truncated;
 * when truncated, nonzero digits after the 19th were dropped and the value lies strictly
 * between w * 10**q and (w + 1) * 10**q. */
typedef struct {
    uint64_t w;
    int64_t q;
    int negative;
    int truncated;
} oipcodec_decimal;

#define OIPCODEC_IS_DIGIT(c) ((unsigned char)((c) - '0') < 10)

static const uint64_t oipcodec_pow10_u64[20] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
    1000000000000000000ull,
    10000000000000000000ull,
};

/* Number of decimal digits of v (1..8 for v < 10**8; 0 for 0). */
static inline int oipcodec_decimal_length(uint64_t v) {
    int n = 0;
    while (v) {
        v /= 10;
        n++;
    }
    return n;
}

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

/* ---- sixteen bytes at a time ---------------------------------------------------------- */

/* The fast readers below look at the 16 bytes after a token's start at once: one mask says
 * where the digit runs end, so a number costs the same few instructions whatever its digit
 * counts, with no loop whose exit depends on the data (those exits were mispredicted on
 * varied input). They need little-endian words (byte k of the text is byte k of the word);
 * on big-endian hosts they are compiled out and every token takes the byte-wise readers. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define OIPCODEC_SWAR 0
#else
#define OIPCODEC_SWAR 1
#endif

#if OIPCODEC_SWAR && ((defined(__SSE2__) && defined(__x86_64__)) || defined(_M_X64))
#include <emmintrin.h>
#define OIPCODEC_SSE2 1
#else
#define OIPCODEC_SSE2 0
#endif

/* Keeps a hot loop in a function of its own, where its variables stay in registers. */
#if defined(_MSC_VER)
#define OIPCODEC_NOINLINE __declspec(noinline)
#elif defined(__GNUC__) || defined(__clang__)
#define OIPCODEC_NOINLINE __attribute__((noinline))
#else
#define OIPCODEC_NOINLINE
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

/* ---- decimal to float64 -------------------------------------------------------------- */

#define OIPCODEC_F64_INF_BITS 0x7FF0000000000000ull

/* floor(q * log2(10)) for |q| < 1400, in integer arithmetic (217706 / 2**16 approximates
 * log2(10) closely enough over that range; the offset keeps the shifted value non-negative,
 * since right shifts of negative numbers are implementation-defined in C). */
static inline int64_t oipcodec_floor_log2_pow10(int64_t q) {
    return ((q * 217706 + ((int64_t)2048 << 16)) >> 16) - 2048;
}

/* Eisel-Lemire: the float64 bits of w * 10**q (positive), correctly rounded to nearest even.
 * Returns 0, or -1 when the 128-bit approximation cannot decide the rounding. */
static inline int oipcodec_eisel_lemire(uint64_t w, int64_t q, uint64_t *bits) {
    const uint64_t *power;
    uint64_t hi, lo, lowmask, m54, m;
    int lz, upper, shift, exact, sticky;
    int64_t biased;
    if (w == 0 || q < OIPCODEC_POW5_MIN) {
        *bits = 0; /* below half the smallest subnormal even with 19 nines */
        return 0;
    }
    if (q > OIPCODEC_POW5_MAX) {
        *bits = OIPCODEC_F64_INF_BITS;
        return 0;
    }
    lz = oipcodec_clz64(w);
    w <<= lz;
    power = oipcodec_pow5_128[q - OIPCODEC_POW5_MIN];
    lo = oipcodec_mul128(w, power[0], &hi);
    /* For 0 <= q <= 27, 5**q has at most 63 bits: the table entry is exact with a zero low
     * word, so (hi, lo) is the exact product. Otherwise the truncated table makes the product
     * slightly too small, and the true value is never exactly a tie or exactly representable
     * (ties need q in [-4, 23]; for q in [-4, -1] the product is below the tie and shows up as
     * the all-ones pattern handled below). */
    exact = q >= 0 && q <= 27;
    if (!exact && (hi & 0x1FF) == 0x1FF) {
        /* The bits below the kept 54 are all ones: a carry from the low word could reach
         * them, so add the second word's product. */
        uint64_t hi2;
        (void)oipcodec_mul128(w, power[1], &hi2);
        lo += hi2;
        hi += lo < hi2;
    }
    upper = (int)(hi >> 63);
    shift = upper + 9; /* keep 54 bits: 53 of the result and one rounding bit */
    lowmask = (1ull << shift) - 1;
    /* The true product exceeds (hi, lo) by less than 2 units of lo: only an all-ones pattern
     * with lo at its top can carry into the kept bits. */
    if (!exact && (hi & lowmask) == lowmask && lo >= UINT64_MAX - 1) {
        return -1;
    }
    m54 = hi >> shift;
    sticky = !exact || (hi & lowmask) != 0 || lo != 0;
    biased = oipcodec_floor_log2_pow10(q) + 63 + upper - lz + 1023;
    if (biased <= 0) {
        /* Subnormal: count in units of 2**-1075 (half the smallest subnormal). */
        uint64_t v;
        int drop = (int)(1 - biased);
        if (drop >= 64) {
            *bits = 0;
            return 0;
        }
        v = m54 >> drop;
        sticky |= (m54 & ((1ull << drop) - 1)) != 0;
        m = (v >> 1) + ((v & 1) & ((uint64_t)sticky | ((v >> 1) & 1)));
        *bits = m; /* 2**52 here is the smallest normal's bit pattern, as it should be */
        return 0;
    }
    m = (m54 >> 1) + ((m54 & 1) & ((uint64_t)sticky | ((m54 >> 1) & 1)));
    if (m >> 53) {
        m >>= 1;
        biased++;
    }
    if (biased >= 0x7FF) {
        *bits = OIPCODEC_F64_INF_BITS;
        return 0;
    }
    *bits = ((uint64_t)biased << 52) | (m & 0x000FFFFFFFFFFFFFull);
    return 0;
}

static const double oipcodec_exact_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* The float64 bits of a decimal's magnitude, correctly rounded; -1 when undecided (the caller
 * then converts the token exactly by other means). */
static inline int oipcodec_decimal_to_f64bits(const oipcodec_decimal *d, uint64_t *bits) {
    uint64_t low, high;
    if (!d->truncated) {
#if OIPCODEC_CLINGER
        if (d->w <= (1ull << 53) && d->q >= -22 && d->q <= 22) {
            double v = (double)d->w;
            v = d->q < 0 ? v / oipcodec_exact_pow10[-d->q] : v * oipcodec_exact_pow10[d->q];
            memcpy(bits, &v, sizeof v);
            return 0;
        }
#endif
        return oipcodec_eisel_lemire(d->w, d->q, bits);
    }
    /* Dropped digits: the value is strictly between w and w + 1 (times 10**q); rounding is
     * monotonic, so when both ends round alike the value does too. */
    if (oipcodec_eisel_lemire(d->w, d->q, &low) == 0 &&
        oipcodec_eisel_lemire(d->w + 1, d->q, &high) == 0 && low == high) {
        *bits = low;
        return 0;
    }
    return -1;
}

/* 10**-k rounded to the nearest double, k = 0..23 (relative error at most 2**-53). */
static const double oipcodec_recip_pow10[24] = {
    1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,  1e-9,  1e-10, 1e-11,
    1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22, 1e-23,
};

/* For a narrower format (p significand bits, normal exponents [emin, emax]): a float64 within
 * two float64 steps of the decimal's magnitude whose narrowing is certainly the decimal's own
 * correct rounding, or 0 when that cannot be guaranteed cheaply (the caller then computes the
 * exact float64 and checks for a midpoint).
 *
 * Why: the narrow format only cares on which side of its midpoints the value lies. w (<= 2**53)
 * times the rounded 10**-k is within 2 float64 steps of w * 10**-k (two roundings of relative
 * error 2**-53 each), so if the float64 found is more than 8 steps away from a midpoint, the
 * decimal rounds the same way. A multiplication replaces the division of the exact path,
 * whose latency was a quarter of the time of the float loop. Normal range of the narrow
 * format only (there the midpoints sit at a fixed bit position). */
static inline uint64_t oipcodec_decimal_to_narrow_approx(const oipcodec_decimal *d, int p,
                                                         int emin, int emax) {
    double v;
    uint64_t bits, low, half;
    int exponent;
    if (d->truncated | (d->w == 0) | (d->w > (1ull << 53)) | (d->q < -22) | (d->q >= 0)) {
        return 0;
    }
    v = (double)d->w * oipcodec_recip_pow10[-d->q];
    memcpy(&bits, &v, sizeof v);
    exponent = (int)((bits >> 52) & 0x7FF) - 1023;
    if ((exponent < emin) | (exponent > emax)) {
        return 0;
    }
    half = 1ull << (52 - p);       /* the midpoint pattern of the bits below the format's */
    low = bits & ((half << 1) - 1); /* ... last significand bit */
    if (low - half + 8 <= 16) {    /* within 8 steps of the midpoint (unsigned wrap) */
        return 0;
    }
    return bits;
}

/* Whether a float64 (given by its bits, any sign) lies exactly halfway between two adjacent
 * values of a narrower binary format with p significand bits and normal exponents
 * [emin, emax]: then rounding the float64 to that format may differ from rounding the decimal
 * it came from. The halfway point above the largest finite value counts (it decides overflow).
 * Zeros, subnormal float64s, infinities and NaN never are. */
static inline int oipcodec_is_midpoint(uint64_t bits, int p, int emin, int emax) {
    int e = (int)((bits >> 52) & 0x7FF);
    int exponent, quantum, s;
    uint64_t m;
    if (e == 0 || e == 0x7FF) {
        return 0;
    }
    exponent = e - 1023;
    if (exponent > emax) {
        return 0;
    }
    m = (bits & 0x000FFFFFFFFFFFFFull) | (1ull << 52);
    /* The format's spacing at this magnitude is 2**quantum; a midpoint is an odd multiple of
     * half of it, i.e. m's lowest set bit is bit s. */
    quantum = (exponent > emin ? exponent : emin) - (p - 1);
    s = quantum - 1 - (exponent - 52);
    if (s < 1 || s > 52) {
        return 0;
    }
    return (m & ((2ull << s) - 1)) == (1ull << s);
}

/* ---- strings ------------------------------------------------------------------------- */

static inline int oipcodec_hex4(const unsigned char *p) {
    int v = 0, i;
    for (i = 0; i < 4; i++) {
        unsigned char c = p[i];
        int d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            d = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            d = c - 'A' + 10;
        } else {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

/* Length of the valid UTF-8 sequence at p (2..4), or 0 if it is not one (overlong forms,
 * UTF-16 surrogates and code points above U+10FFFF are invalid, as in Python's decoder). */
static inline int oipcodec_utf8_sequence(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0];
    ptrdiff_t left = end - p;
#define OIPCODEC_CONT(x) (((x) & 0xC0) == 0x80)
    if (c >= 0xC2 && c <= 0xDF) {
        return left >= 2 && OIPCODEC_CONT(p[1]) ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return left >= 3 && p[1] >= lo && p[1] <= hi && OIPCODEC_CONT(p[2]) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return left >= 4 && p[1] >= lo && p[1] <= hi && OIPCODEC_CONT(p[2]) &&
                       OIPCODEC_CONT(p[3])
                   ? 4
                   : 0;
    }
    return 0;
#undef OIPCODEC_CONT
}

/* Validate the JSON string whose opening quote is at p. Returns the byte after its closing
 * quote, or NULL if it is unterminated or invalid (raw control character, unknown escape, bad
 * or lone-surrogate \u escape, invalid UTF-8). *escaped is set when it holds any escape. */
static inline const unsigned char *oipcodec_scan_string(const unsigned char *p,
                                                         const unsigned char *end,
                                                         int *escaped) {
    *escaped = 0;
    p++;
    while (p < end) {
        unsigned char c = *p;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            p++;
            continue;
        }
        if (c == '"') {
            return p + 1;
        }
        if (c == '\\') {
            *escaped = 1;
            if (end - p < 2) {
                return NULL;
            }
            c = p[1];
            if (c == 'u') {
                int unit;
                if (end - p < 6 || (unit = oipcodec_hex4(p + 2)) < 0) {
                    return NULL;
                }
                p += 6;
                if (unit >= 0xD800 && unit <= 0xDBFF) {
                    int low;
                    if (end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
                        (low = oipcodec_hex4(p + 2)) < 0xDC00 || low > 0xDFFF) {
                        return NULL;
                    }
                    p += 6;
                } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
                    return NULL;
                }
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                       c == 'r' || c == 't') {
                p += 2;
            } else {
                return NULL;
            }
        } else if (c < 0x20) {
            return NULL;
        } else {
            int n = oipcodec_utf8_sequence(p, end);
            if (n == 0) {
                return NULL;
            }
            p += n;
        }
    }
    return NULL;
}

/* Decode the contents of a JSON string already validated by oipcodec_scan_string, from the
 * byte after its opening quote up to (not including) its closing quote at `stop`, into out,
 * which has room for stop - p bytes (decoding never grows the text). Returns the length. */
static inline size_t oipcodec_decode_string(const unsigned char *p, const unsigned char *stop,
                                            unsigned char *out) {
    unsigned char *o = out;
    while (p < stop) {
        unsigned char c = *p;
        if (c != '\\') {
            *o++ = c;
            p++;
            continue;
        }
        c = p[1];
        if (c == 'u') {
            uint32_t cp = (uint32_t)oipcodec_hex4(p + 2);
            p += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)oipcodec_hex4(p + 2) - 0xDC00);
                p += 6;
            }
            if (cp < 0x80) {
                *o++ = (unsigned char)cp;
            } else if (cp < 0x800) {
                *o++ = (unsigned char)(0xC0 | (cp >> 6));
                *o++ = (unsigned char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                *o++ = (unsigned char)(0xE0 | (cp >> 12));
                *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                *o++ = (unsigned char)(0x80 | (cp & 0x3F));
            } else {
                *o++ = (unsigned char)(0xF0 | (cp >> 18));
                *o++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
                *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                *o++ = (unsigned char)(0x80 | (cp & 0x3F));
            }
            continue;
        }
        switch (c) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        default: *o++ = c; break; /* '"', '\\', '/' */
        }
        p += 2;
    }
    return (size_t)(o - out);
}

/* ---- the fast lane for float arrays ----------------------------------------------------- */

#include "oipcodec/half.h"

/* Output formats of oipcodec_float_run (the element kinds of oipcodec._jsondecode_common). */
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
 * general path's byte loop took three times as long per element.
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

/* oipcodec_float_run's contract for FP32 and the elements one of the shapes above takes:
 * oipcodec_fp32_simple's when `wide` is 0, oipcodec_fp32_long's when it is 1.
 *
 * The commas come first, 64 bytes at a time, as a bit mask; each element is then the text
 * between two of them. So from one element to the next the loop only clears a bit: finding
 * where the next number starts no longer waits for the previous number's bytes to be examined
 * (that chain of loads and bit scans, not the arithmetic, bounded the per-number loop), and
 * the numbers' own work overlaps. Each number still checks its own shape, which must end
 * exactly at its comma. One shape per loop, each loop its own function: a loop holding both
 * (even with the second never taken) ran the short shape 60% slower, its vector constants
 * and registers spent on the other. A writer keeps to one shape, so the caller switches
 * loops rarely. */
static inline ptrdiff_t oipcodec_fp32_lane(const unsigned char **pp, const unsigned char *end,
                                           unsigned char *out, ptrdiff_t limit, int wide) {
    const unsigned char *p = *pp, *block = p, *last = end - 128;
    ptrdiff_t n = 0;
    if (limit <= 0 || end - p < 128) {
        return 0;
    }
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
    const unsigned char *p = *pp, *block = p, *last = end - 128;
    ptrdiff_t n = 0;
    if (limit <= 0 || end - p < 128) {
        return 0;
    }
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
