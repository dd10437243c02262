/* Writing JSON arrays of tensor elements, for oipcodec._native.jsonencode: this header only
 * gathers the writers and chooses between their scalar and vector paths.
 *
 * The text is defined once, by the pure twin (oipcodec/_pure/jsonencode.py) and
 * docs/kernels.md; the writers reproduce it byte for byte: integers in decimal and BOOL as
 * true/false (write/int.h); a float as its shortest round-trip digits d1 d2 ... dn with
 * decimal exponent E, positional when E is within the type's range ("0.00012", "123.5", "2.0")
 * and d1[.d2...dn]e[+-]E otherwise ("1e-7", "1.5e+16") (write/layout.h; digits by
 * write/f32.h, write/f64.h, write/half.h); NaN, Infinity, -Infinity tokens
 * (write/nonfinite.h); BYTES as JSON strings (write/strings.h).
 *
 * Every writer is given a buffer the caller sized with the bounds the headers define; none
 * allocates, none needs the GIL. Headers include downward only: the scalar writers (write/) are
 * the portable path and the definition; a vector path (write/x86/int.h, write/x86/f32.h,
 * write/x86/f64.h, write/arm64/f32.h, write/arm64/f64.h, chosen at run time by common/cpu.h)
 * includes what it shares. */
#ifndef OIPCODEC_WRITE_JSON_H
#define OIPCODEC_WRITE_JSON_H

#include <stddef.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/common/cpu.h"
#include "oipcodec/write/arm64/f32.h"
#include "oipcodec/write/arm64/f64.h"
#include "oipcodec/write/f32.h"
#include "oipcodec/write/f64.h"
#include "oipcodec/write/half.h"
#include "oipcodec/write/int.h"
#include "oipcodec/write/layout.h"
#include "oipcodec/write/nonfinite.h"
#include "oipcodec/write/strings.h"
#include "oipcodec/write/x86/f32.h"
#include "oipcodec/write/x86/f64.h"

/* One writer per element type: n elements separated by commas, no brackets, from `data`
 * aligned for the element type (the callers copy a misaligned array first). The row writers
 * share one signature so the nested driver below can take any of them. */
typedef char *(*oipcodec_row_fn)(const void *data, ptrdiff_t n, char *out, const void *ctx);

/* Writes the elements as nested arrays of the given shape (ndim >= 1, every dimension > 0,
 * ndim <= 64): each innermost row by `row`, brackets and commas between rows by counting how
 * many dimensions roll over. A flat array is the shape [n]. */
OIPCODEC_MAYBE_UNUSED
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

/* float32 elements (native byte order) in the reference layout, each followed by a comma:
 * the AVX-512 or AVX2 writer (write/x86/f32.h) where the processor has it, the NEON one on
 * AArch64 (write/arm64/f32.h), else the scalar one (write/f32.h); the same text either way. */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_f32(const void *data, ptrdiff_t n, char *out, const void *ctx) {
#if OIPCODEC_SIMD_X86 && OIPCODEC_F32_FAST_PATH
    /* rows of a few elements (nested arrays such as [N, 1]): the scalar writer, cheaper there */
    int level = n >= OIPCODEC_F32_SIMD_MIN_N ? oipcodec_f32_simd_level() : 0;
    if (level == 2) {
        return oipcodec_row_f32_avx512(data, n, out);
    }
    if (level == 1) {
        return oipcodec_row_f32_avx2(data, n, out);
    }
#endif
#if OIPCODEC_SIMD_ARM && OIPCODEC_F32_FAST_PATH
    if (n >= OIPCODEC_F32_NEON_MIN_N && (oipcodec_simd_features() & OIPCODEC_SIMD_NEON)) {
        return oipcodec_row_f32_neon(data, n, out);
    }
#endif
    return oipcodec_row_f32_scalar(data, n, out, ctx);
}

/* float64 elements (native byte order) in the reference layout, each followed by a comma:
 * the AVX-512 VBMI writer (write/x86/f64.h) for rows of 8 elements or more where the
 * processor has it, the NEON one on AArch64 (write/arm64/f64.h), else the scalar one
 * (write/f64.h); the same text either way. */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_f64(const void *data, ptrdiff_t n, char *out, const void *ctx) {
#if OIPCODEC_SIMD_X86
    if (n >= 8 && (oipcodec_simd_features() & OIPCODEC_SIMD_AVX512_VBMI)) {
        return oipcodec_row_f64_avx512(data, n, out);
    }
#endif
#if OIPCODEC_SIMD_ARM
    if (n >= OIPCODEC_F64_NEON_MIN_N && (oipcodec_simd_features() & OIPCODEC_SIMD_NEON)) {
        return oipcodec_row_f64_neon(data, n, out);
    }
#endif
    return oipcodec_row_f64_scalar(data, n, out, ctx);
}

#endif
