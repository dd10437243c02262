/* The NEON JSON writers (write/arm64/f32.h, write/arm64/f64.h) against the scalar ones they must
 * equal byte for byte, on AArch64 (under qemu-aarch64 on other machines: built and run by
 * tools/check_neon_writers.sh). Usage: check_neon_writers [STRIDE [FIRST [F64_COUNT]]]
 * - FP32: the bit patterns FIRST, FIRST + STRIDE, ... below 2**32 (STRIDE 1: all of them),
 *   then the edge cases: zeros, subnormals, the smallest and largest values, powers of two
 *   and of ten with their neighbours, NaN and infinities of both signs;
 * - FP64: F64_COUNT random values (half uniform bit patterns, a quarter normally distributed,
 *   a quarter log-uniform in 1e-7..1e17), then powers of two and ten with their neighbours,
 *   subnormals and the extremes.
 * The NEON writers are given each batch in pieces of 1 to 71 elements (joined by commas), so
 * partial blocks and tails are checked on every value; the scalar ones the whole batch (65,536
 * values). Prints the values checked and the batches whose text differs (the first differing
 * element of the first few in full); exits 1 on any. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/write/json.h"

#if !OIPCODEC_SIMD_ARM
#error "build for AArch64 with NEON (tools/check_neon_writers.sh)"
#endif

#define BATCH 65536

static unsigned long long differences;

typedef char *(*row_fn)(const void *data, ptrdiff_t n, char *out);

static char *f32_scalar(const void *data, ptrdiff_t n, char *out) {
    return oipcodec_row_f32_scalar(data, n, out, 0);
}

static char *f64_scalar(const void *data, ptrdiff_t n, char *out) {
    return oipcodec_row_f64_scalar(data, n, out, 0);
}

/* row on n elements of itemsize bytes in pieces of 1, 2, ..., 71, 1, ... joined by commas. */
static char *row_pieces(row_fn row, const unsigned char *data, size_t itemsize, ptrdiff_t n,
                        char *out) {
    ptrdiff_t done = 0, piece = 1;
    while (done < n) {
        ptrdiff_t take = n - done < piece ? n - done : piece;
        if (done) {
            *out++ = ',';
        }
        out = row(data + done * itemsize, take, out);
        done += take;
        piece = piece % 71 + 1;
    }
    return out;
}

/* Compares the NEON writer (in pieces) with the scalar one (whole) on n elements; reports the
 * first differing element of the batch. */
static void compare(const char *what, row_fn neon, row_fn scalar, const void *data,
                    size_t itemsize, ptrdiff_t n, char *a, char *b) {
    char *ea = row_pieces(neon, data, itemsize, n, a);
    char *eb = scalar(data, n, b);
    size_t la = (size_t)(ea - a), lb = (size_t)(eb - b), i, start = 0, element = 0;
    if (la == lb && memcmp(a, b, la) == 0) {
        return;
    }
    for (i = 0; i < la && i < lb && a[i] == b[i]; i++) {
        if (a[i] == ',') {
            start = i + 1;
            element++;
        }
    }
    differences++;
    if (differences <= 10) {
        uint64_t bits = 0;
        memcpy(&bits, (const unsigned char *)data + element * itemsize, itemsize);
        fprintf(stderr,
                "%s difference at element %zu (bits 0x%llx): NEON \"%.30s\" scalar \"%.30s\"\n",
                what, element, (unsigned long long)bits, a + start, b + start);
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next64(void) { /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

static double uniform01(void) { return (double)(next64() >> 11) * 0x1p-53; }

static double normal(void) { /* Box-Muller */
    double u = uniform01(), v = uniform01();
    return sqrt(-2.0 * log(u + 0x1p-60)) * cos(6.283185307179586 * v);
}

int main(int argc, char **argv) {
    uint64_t stride = argc > 1 ? strtoull(argv[1], NULL, 0) : 97;
    uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;
    long long f64_count = argc > 3 ? strtoll(argv[3], NULL, 0) : 10000000;
    uint32_t *f32 = malloc(BATCH * sizeof *f32);
    uint64_t *f64 = malloc(BATCH * sizeof *f64);
    char *a = malloc((size_t)BATCH * 40 + 64), *b = malloc((size_t)BATCH * 40 + 64);
    unsigned long long f32_checked = 0, f64_checked = 0;
    uint64_t p;
    ptrdiff_t n = 0;
    int e, s;
    if (!f32 || !f64 || !a || !b || stride == 0) {
        return 2;
    }
    printf("NEON path chosen by the dispatch: %s\n",
           oipcodec_simd_features() & OIPCODEC_SIMD_NEON ? "yes" : "no (OIPCODEC_SIMD=0)");
    /* FP32: the strided patterns */
    for (p = first; p < (1ull << 32); p += stride) {
        f32[n++] = (uint32_t)p;
        if (n == BATCH) {
            compare("f32", oipcodec_row_f32_neon, f32_scalar, f32, 4, n, a, b);
            f32_checked += (unsigned long long)n;
            n = 0;
            if (f32_checked % (BATCH * 1024ull) == 0) { /* progress on long runs */
                printf("FP32: %llu values, up to pattern 0x%08llx, %llu differing batches\n",
                       f32_checked, (unsigned long long)p, differences);
                fflush(stdout);
            }
        }
    }
    /* FP32 edge cases */
    for (s = 0; s < 2; s++) {
        uint32_t sign = (uint32_t)s << 31;
        static const uint32_t fixed[] = {0, 1, 2, 3, 0x7FFFFF, 0x800000, 0x800001, 0x7F7FFFFF,
                                         0x7F7FFFFE, 0x7F800000, 0x7FC00000, 0x7F800001,
                                         0x7FFFFFFF, 0x3F800000, 0x3F7FFFFF, 0x3F800001};
        size_t i;
        for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
            f32[n++] = fixed[i] | sign;
        }
        for (e = 1; e < 255; e++) { /* powers of two and neighbours */
            uint32_t pw = (uint32_t)e << 23;
            f32[n++] = (pw - 1) | sign;
            f32[n++] = pw | sign;
            f32[n++] = (pw + 1) | sign;
        }
        for (e = -45; e <= 38; e++) { /* powers of ten and neighbours */
            float t = (float)pow(10.0, e);
            uint32_t bits;
            memcpy(&bits, &t, 4);
            if (bits > 1 && bits < 0x7F800000) {
                f32[n++] = (bits - 1) | sign;
                f32[n++] = bits | sign;
                f32[n++] = (bits + 1) | sign;
            }
        }
    }
    compare("f32 last batch and edge cases", oipcodec_row_f32_neon, f32_scalar, f32, 4, n, a, b);
    f32_checked += (unsigned long long)n;
    printf("FP32: %llu values (every %llu-th pattern from %llu, and the edge cases), %llu "
           "differing batches\n",
           f32_checked, (unsigned long long)stride, (unsigned long long)first, differences);
    fflush(stdout);
    {
        unsigned long long f32_differences = differences;
        long long done = 0;
        n = 0;
        while (done < f64_count) {
            uint64_t r = next64(), bits;
            double x;
            switch (done % 4) {
            case 0:
            case 1:
                bits = r;
                break;
            case 2:
                x = normal();
                memcpy(&bits, &x, 8);
                break;
            default:
                x = pow(10.0, -7.0 + 24.0 * uniform01()) * (r & 1 ? -1.0 : 1.0);
                memcpy(&bits, &x, 8);
                break;
            }
            f64[n++] = bits;
            done++;
            if (n == BATCH || done == f64_count) {
                compare("f64", oipcodec_row_f64_neon, f64_scalar, f64, 8, n, a, b);
                f64_checked += (unsigned long long)n;
                n = 0;
            }
        }
        for (s = 0; s < 2; s++) {
            uint64_t sign = (uint64_t)s << 63;
            static const uint64_t fixed[] = {0,
                                             1,
                                             2,
                                             0xFFFFFFFFFFFFFull,
                                             0x10000000000000ull,
                                             0x10000000000001ull,
                                             0x7FEFFFFFFFFFFFFFull,
                                             0x7FEFFFFFFFFFFFFEull,
                                             0x7FF0000000000000ull,
                                             0x7FF8000000000000ull,
                                             0x7FF0000000000001ull,
                                             0x3FF0000000000000ull,
                                             0x3FEFFFFFFFFFFFFFull,
                                             0x3FF0000000000001ull};
            size_t i;
            for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
                f64[n++] = fixed[i] | sign;
            }
            for (i = 0; i < 64; i++) { /* subnormals with one bit set */
                f64[n++] = (1ull << (i % 52)) | sign;
            }
            for (e = 1; e < 2047; e++) { /* powers of two and neighbours */
                uint64_t pw = (uint64_t)e << 52;
                f64[n++] = (pw - 1) | sign;
                f64[n++] = pw | sign;
                f64[n++] = (pw + 1) | sign;
            }
            for (e = -323; e <= 308; e++) { /* powers of ten and neighbours */
                double t = pow(10.0, e);
                uint64_t bits;
                memcpy(&bits, &t, 8);
                if (bits > 1 && bits < 0x7FF0000000000000ull) {
                    f64[n++] = (bits - 1) | sign;
                    f64[n++] = bits | sign;
                    f64[n++] = (bits + 1) | sign;
                }
            }
        }
        compare("f64 last batch and edge cases", oipcodec_row_f64_neon, f64_scalar, f64, 8, n, a,
                b);
        f64_checked += (unsigned long long)n;
        printf("FP64: %llu values (%lld random, and the edge cases), %llu differing batches\n",
               f64_checked, f64_count, differences - f32_differences);
    }
    free(f32);
    free(f64);
    free(a);
    free(b);
    return differences ? 1 : 0;
}
