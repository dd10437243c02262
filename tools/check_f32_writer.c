/* The FP32 JSON writer's fast path checked on every float32: built twice by
 * tools/check_f32_writer.sh, once as it ships (ROW=row_fast) and once with every element sent
 * to the exact path, oipcodec_f32_shortest (OIPCODEC_F32_FAST_PATH=0, ROW=row_exact); the
 * main program (MAIN) writes all 2**32 bit patterns, 65,536 at a time, through both and
 * compares the text. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ROW
#include "oipcodec/jsonwrite.h"

char *ROW(const void *data, ptrdiff_t n, char *out) { return oipcodec_row_f32(data, n, out, 0); }
#endif

#ifdef MAIN
char *row_fast(const void *data, ptrdiff_t n, char *out);
char *row_exact(const void *data, ptrdiff_t n, char *out);

int main(void) {
    const ptrdiff_t block = 1 << 16;
    uint32_t *bits = malloc(block * sizeof *bits);
    char *fast = malloc(block * 20 + 64), *exact = malloc(block * 20 + 64);
    unsigned long long differing = 0;
    uint32_t high;
    if (!bits || !fast || !exact) {
        return 2;
    }
    for (high = 0; high < 65536; high++) {
        ptrdiff_t i;
        char *fast_end, *exact_end;
        for (i = 0; i < block; i++) {
            bits[i] = high << 16 | (uint32_t)i;
        }
        fast_end = row_fast(bits, block, fast);
        exact_end = row_exact(bits, block, exact);
        if (fast_end - fast != exact_end - exact || memcmp(fast, exact, fast_end - fast)) {
            if (++differing <= 10) {
                printf("bit patterns 0x%04x0000-0x%04xffff: the texts differ\n", high, high);
            }
        }
    }
    printf("%llu of 65536 blocks of bit patterns differ\n", differing);
    return differing != 0;
}
#endif
