/* The FP32 JSON writer's fast paths checked on every float32: built three times by
 * tools/check_f32_writer.sh, once as it ships (ROW=row_fast: the AVX-512 writer of
 * json_f32_simd.h on a processor that has it, else the scalar one), once with the scalar
 * writer only (OIPCODEC_F32_SIMD=0, ROW=row_scalar) and once with every element sent to the
 * exact path, oipcodec_f32_shortest (OIPCODEC_F32_FAST_PATH=0, ROW=row_exact); the main
 * program (MAIN) writes all 2**32 bit patterns, 65,536 at a time, through the three and
 * compares the text. The shipped writer is given each block in pieces of 1 to 71 elements
 * (joined by commas), so its handling of partial blocks and tails is checked on every pattern
 * too. Built with -DSTEP=n, only every n-th block is checked (a quick look). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ROW
#include "oipcodec/jsonwrite.h"

char *ROW(const void *data, ptrdiff_t n, char *out) { return oipcodec_row_f32(data, n, out, 0); }

#ifdef SHIPPED
int simd_path(void) {
#if OIPCODEC_F32_SIMD
    return oipcodec_f32_simd_supported();
#else
    return 0;
#endif
}
#endif
#endif

/* Every STEP-th block of 65,536 patterns (1: all; a larger STEP for a quick look). */
#ifndef STEP
#define STEP 1
#endif

#ifdef MAIN
char *row_fast(const void *data, ptrdiff_t n, char *out);
char *row_scalar(const void *data, ptrdiff_t n, char *out);
char *row_exact(const void *data, ptrdiff_t n, char *out);
int simd_path(void);

/* row_fast on bits[0:n] in pieces of 1, 2, ..., 71, 1, ... elements, joined by commas. */
static char *row_fast_pieces(const uint32_t *bits, ptrdiff_t n, char *out) {
    ptrdiff_t done = 0, piece = 1;
    while (done < n) {
        ptrdiff_t take = n - done < piece ? n - done : piece;
        if (done) {
            *out++ = ',';
        }
        out = row_fast(bits + done, take, out);
        done += take;
        piece = piece % 71 + 1;
    }
    return out;
}

static int differ(const char *a, const char *a_end, const char *b, const char *b_end) {
    return a_end - a != b_end - b || memcmp(a, b, (size_t)(a_end - a));
}

int main(void) {
    const ptrdiff_t block = 1 << 16;
    uint32_t *bits = malloc(block * sizeof *bits);
    char *fast = malloc(block * 20 + 64), *scalar = malloc(block * 20 + 64);
    char *exact = malloc(block * 20 + 64);
    unsigned long long fast_differing = 0, scalar_differing = 0, checked = 0;
    uint32_t high;
    if (!bits || !fast || !scalar || !exact) {
        return 2;
    }
    printf("shipped writer on this processor: %s\n",
           simd_path() ? "AVX-512 (json_f32_simd.h)"
                       : "scalar (no AVX-512: the SIMD path is NOT checked)");
    fflush(stdout);
    for (high = 0; high < 65536; high += STEP) {
        ptrdiff_t i;
        char *fast_end, *scalar_end, *exact_end;
        for (i = 0; i < block; i++) {
            bits[i] = high << 16 | (uint32_t)i;
        }
        fast_end = row_fast_pieces(bits, block, fast);
        scalar_end = row_scalar(bits, block, scalar);
        exact_end = row_exact(bits, block, exact);
        checked++;
        if (differ(fast, fast_end, exact, exact_end) && ++fast_differing <= 10) {
            printf("bit patterns 0x%04x0000-0x%04xffff: shipped and exact texts differ\n", high,
                   high);
        }
        if (differ(scalar, scalar_end, exact, exact_end) && ++scalar_differing <= 10) {
            printf("bit patterns 0x%04x0000-0x%04xffff: scalar and exact texts differ\n", high,
                   high);
        }
    }
    printf("shipped writer: %llu of %llu blocks of 65,536 bit patterns differ from the exact"
           " path\n", fast_differing, checked);
    printf("scalar writer: %llu of %llu blocks of 65,536 bit patterns differ from the exact"
           " path\n", scalar_differing, checked);
    return fast_differing != 0 || scalar_differing != 0;
}
#endif
