/* Non-finite floats in JSON text: counting
 * them (the caller refuses them or writes tokens, by its option), their tokens, and the start
 * of every FP32 and FP64 element's text, where NaN, Infinity and zero are settled. */
#ifndef OIPCODEC_WRITE_NONFINITE_H
#define OIPCODEC_WRITE_NONFINITE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"

static inline int oipcodec_f32_nonfinite(uint32_t u) { return (u & 0x7F800000u) == 0x7F800000u; }

static inline int oipcodec_f64_nonfinite(uint64_t u) {
    return (u & 0x7FF0000000000000ull) == 0x7FF0000000000000ull;
}

/* Number of non-finite elements of a float32 (wide = 0) or float64 (wide = 1) array, and the
 * index of the first one in *first (-1 if none). */
OIPCODEC_MAYBE_UNUSED
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

/* The start of an element's text in the FP32 and FP64 row writers: NaN, Infinity, -Infinity,
 * 0.0 and -0.0 written whole with their comma (returns 1: the element is done), any other
 * value's sign alone (returns 0). special: the exponent field is all ones; nan: and the
 * significand is not 0. One definition, so both writers give the same tokens. */
static inline int oipcodec_float_prologue(char **out, int special, int nan, int negative,
                                          int zero) {
    char *o = *out;
    if (special) {
        if (nan) {
            memcpy(o, "NaN,", 4);
            o += 4;
        } else if (negative) {
            memcpy(o, "-Infinity,", 10);
            o += 10;
        } else {
            memcpy(o, "Infinity,", 9);
            o += 9;
        }
        *out = o;
        return 1;
    }
    *o = '-';
    o += negative;
    if (zero) {
        memcpy(o, "0.0,", 4);
        *out = o + 4;
        return 1;
    }
    *out = o;
    return 0;
}

#endif
