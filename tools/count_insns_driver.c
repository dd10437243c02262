/* Instruction-count driver for tools/count_insns_aarch64.sh: writes the first N values of a
 * fixed data set of one kind through the shipped row writer once. The data set is always built
 * whole (MAXN values), so a run with N and one with 2N differ only by the writer's work on N
 * more values: start-up, data generation and the writer's first-call set-up cancel.
 *   count_insns_driver KIND N     KIND: f32 (standard normal float32), f64 (standard normal
 *                                 float64), i64 (int64 uniform in [0, 50000)), i64full (int64
 *                                 over the full range), u64full (uint64 over the full range)
 * The data sets follow benchmarks/kernels/bench_jsonencode.py. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/write/json.h"

#define MAXN 8192

static uint64_t state = 0x9E3779B97F4A7C15u;

static uint64_t next_u64(void) { /* xorshift64* */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Du;
}

static double next_normal(void) { /* Box-Muller; one of the pair is enough here */
    double u1 = ((double)(next_u64() >> 11) + 1.0) * 0x1p-53;
    double u2 = (double)(next_u64() >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static float f32s[MAXN];
static double f64s[MAXN];
static int64_t i64s[MAXN], i64full[MAXN];
static uint64_t u64full[MAXN];
static char text[MAXN * 32];

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s f32|f64|i64|i64full|u64full N\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    if (n < 0 || n > MAXN) {
        fprintf(stderr, "N must be in [0, %d]\n", MAXN);
        return 2;
    }
    for (int i = 0; i < MAXN; i++) {
        f32s[i] = (float)next_normal();
        f64s[i] = next_normal();
        i64s[i] = (int64_t)(next_u64() % 50000);
        i64full[i] = (int64_t)next_u64();
        u64full[i] = next_u64();
    }
    char *end;
    if (!strcmp(argv[1], "f32")) {
        end = oipcodec_row_f32(f32s, n, text, NULL);
    } else if (!strcmp(argv[1], "f64")) {
        end = oipcodec_row_f64(f64s, n, text, NULL);
    } else if (!strcmp(argv[1], "i64")) {
        end = oipcodec_row_i64(i64s, n, text, NULL);
    } else if (!strcmp(argv[1], "i64full")) {
        end = oipcodec_row_i64(i64full, n, text, NULL);
    } else if (!strcmp(argv[1], "u64full")) {
        end = oipcodec_row_u64(u64full, n, text, NULL);
    } else {
        fprintf(stderr, "unknown kind %s\n", argv[1]);
        return 2;
    }
    /* The text's length, so the writing is not optimised away (and a sanity check), and whether
     * the NEON paths were on. */
#if defined(OIPCODEC_SIMD_ARM) && OIPCODEC_SIMD_ARM
    int neon = (oipcodec_simd_features() & OIPCODEC_SIMD_NEON) != 0;
#else
    int neon = 0;
#endif
    printf("%ld %s\n", (long)(end - text), neon ? "on" : "off");
    return 0;
}
