/* The FP32 JSON writer's fast paths checked on every float32: built four times by
 * tools/check_f32_writer.sh, once as it ships (ROW=row_fast: the AVX-512 writer of
 * write/x86/f32.h on a processor that has it), once with the AVX2 writer at most
 * (OIPCODEC_SIMD_MAX=1, ROW=row_avx2), once with the scalar writer only
 * (OIPCODEC_SIMD_MAX=0, ROW=row_scalar) and once with every element sent to the exact path,
 * oipcodec_f32_shortest (OIPCODEC_F32_FAST_PATH=0, ROW=row_exact); the main program (MAIN)
 * writes all 2**32 bit patterns, 65,536 at a time, through the four and compares the text.
 * The SIMD writers are given each block in pieces of 1 to 71 elements (joined by commas), so
 * their handling of partial blocks and tails is checked on every pattern too. Built with
 * -DSTEP=n, only every n-th block is checked (a quick look). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ROW
#include "oipcodec/write/json.h"

char *ROW(const void *data, ptrdiff_t n, char *out) { return oipcodec_row_f32(data, n, out, 0); }

#ifdef LEVEL
/* The SIMD writer this build runs here: 2 AVX-512, 1 AVX2, 0 none. */
int LEVEL(void) {
#if OIPCODEC_SIMD_X86
    return oipcodec_f32_simd_level();
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
char *row_avx2(const void *data, ptrdiff_t n, char *out);
char *row_scalar(const void *data, ptrdiff_t n, char *out);
char *row_exact(const void *data, ptrdiff_t n, char *out);
int level_fast(void);
int level_avx2(void);

static const char *const path_names[3] = {"scalar", "AVX2", "AVX-512"};

/* row on bits[0:n] in pieces of 1, 2, ..., 71, 1, ... elements, joined by commas. */
static char *row_pieces(char *(*row)(const void *, ptrdiff_t, char *), const uint32_t *bits,
                        ptrdiff_t n, char *out) {
    ptrdiff_t done = 0, piece = 1;
    while (done < n) {
        ptrdiff_t take = n - done < piece ? n - done : piece;
        if (done) {
            *out++ = ',';
        }
        out = row(bits + done, take, out);
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
    char *fast = malloc(block * 20 + 64), *avx2 = malloc(block * 20 + 64);
    char *scalar = malloc(block * 20 + 64), *exact = malloc(block * 20 + 64);
    unsigned long long fast_differing = 0, avx2_differing = 0, scalar_differing = 0;
    unsigned long long checked = 0;
    uint32_t high;
    if (!bits || !fast || !avx2 || !scalar || !exact) {
        return 2;
    }
    printf("writers checked on this processor: %s (as shipped), %s (AVX2 at most), scalar\n",
           path_names[level_fast()], path_names[level_avx2()]);
    if (level_fast() < 2 || level_avx2() < 1) {
        printf("(a SIMD writer this processor lacks is NOT checked)\n");
    }
    fflush(stdout);
    for (high = 0; high < 65536; high += STEP) {
        ptrdiff_t i;
        char *fast_end, *avx2_end, *scalar_end, *exact_end;
        for (i = 0; i < block; i++) {
            bits[i] = high << 16 | (uint32_t)i;
        }
        fast_end = row_pieces(row_fast, bits, block, fast);
        avx2_end = row_pieces(row_avx2, bits, block, avx2);
        scalar_end = row_scalar(bits, block, scalar);
        exact_end = row_exact(bits, block, exact);
        checked++;
        if (differ(fast, fast_end, exact, exact_end) && ++fast_differing <= 10) {
            printf("bit patterns 0x%04x0000-0x%04xffff: shipped and exact texts differ\n", high,
                   high);
        }
        if (differ(avx2, avx2_end, exact, exact_end) && ++avx2_differing <= 10) {
            printf("bit patterns 0x%04x0000-0x%04xffff: AVX2 and exact texts differ\n", high,
                   high);
        }
        if (differ(scalar, scalar_end, exact, exact_end) && ++scalar_differing <= 10) {
            printf("bit patterns 0x%04x0000-0x%04xffff: scalar and exact texts differ\n", high,
                   high);
        }
    }
    printf("shipped writer: %llu of %llu blocks of 65,536 bit patterns differ from the exact"
           " path\n", fast_differing, checked);
    printf("AVX2 writer: %llu of %llu blocks of 65,536 bit patterns differ from the exact"
           " path\n", avx2_differing, checked);
    printf("scalar writer: %llu of %llu blocks of 65,536 bit patterns differ from the exact"
           " path\n", scalar_differing, checked);
    return fast_differing != 0 || avx2_differing != 0 || scalar_differing != 0;
}
#endif
