/* Compares the integer row writers (oipcodec_row_* of write/int.h, with whatever vector
 * kernel the build and the processor choose: NEON on AArch64) with the scalar writers they
 * must match byte for byte, and on AArch64 the NEON kernels by themselves (their text for the
 * elements they say they wrote). Per element type: the type's minimum and maximum, every power
 * of ten and its neighbours, neighbours of multiples of 10**8 and 10**16 (each alone and among
 * small values, at each place of a block of 4), rows of every length 0..40, and random rows of
 * full-range, small (below 10**8) and mixed values. Run by tools/check_int_neon.sh; prints the
 * counts and exits 1 at the first difference. Argument: random values per type (default
 * 10**7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/write/int.h"

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void) { /* xorshift64* */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
}

/* Below 10**d for a random d in 0..8 (so 0 too), negative half the time when `sign`. */
static uint64_t small_value(int sign) {
    static const uint64_t p10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                    100000000};
    uint64_t r = next(), m = (r >> 8) % p10[r % 9];
    return sign && r & 0x80 ? 0 - m : m;
}

/* A random value of a random digit count 1..20 (each count equally often; 0 among the 1-digit
 * ones), negative half the time when `sign` (64-bit types; narrower ones get it truncated). */
static uint64_t digits_value(int sign) {
    static const uint64_t p10[21] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
                                     1000000ull, 10000000ull, 100000000ull, 1000000000ull,
                                     10000000000ull, 100000000000ull, 1000000000000ull,
                                     10000000000000ull, 100000000000000ull,
                                     1000000000000000ull, 10000000000000000ull,
                                     100000000000000000ull, 1000000000000000000ull,
                                     10000000000000000000ull, 0 /* unused */};
    uint64_t r = next(), d = r % 20, low = d ? p10[d] : 0; /* d + 1 digits */
    uint64_t m = d == 19 ? low + next() % (UINT64_MAX - low + 1) : low + next() % (p10[d + 1] - low);
    return sign && r & 0x100 ? 0 - m : m;
}

static uint64_t specials[2000];
static int n_specials;

static void add_special(uint64_t x) {
    specials[n_specials++] = x;
    specials[n_specials++] = 0 - x;
}

static void make_specials(void) {
    uint64_t p = 1, k;
    int i;
    add_special(0);
    add_special(INT64_MAX);
    add_special((uint64_t)INT64_MIN);
    add_special(UINT64_MAX);
    for (i = 0; i <= 19; i++, p *= 10) {
        add_special(p - 1);
        add_special(p);
        add_special(p + 1);
    }
    for (k = 1; k < 1000; k = k * 3 + 1) {
        uint64_t m8 = k * 100000000ull, m16 = k * 10000000000000000ull;
        add_special(m8 - 1);
        add_special(m8);
        add_special(m8 + 1);
        if (k <= 1844) {
            add_special(m16 - 1);
            add_special(m16);
            add_special(m16 + 1);
        }
    }
    /* every type's limits: the truncating casts below give the rest */
    add_special(0x7F);
    add_special(0x80);
    add_special(0xFF);
    add_special(0x7FFF);
    add_special(0x8000);
    add_special(0xFFFF);
    add_special(0x7FFFFFFF);
    add_special(0x80000000u);
    add_special(0xFFFFFFFFu);
}

static char *ref, *got, *kern;
static ptrdiff_t *ref_end; /* ref_end[i]: the end of element i's text, its comma included */
static unsigned long long n_rows, n_values, n_kernel_values, n_differences;

static void report(const char *type, ptrdiff_t n, const char *what) {
    n_differences++;
    fprintf(stderr, "DIFFERENCE %s: %s, row of %ld\n", type, what, (long)n);
    exit(1);
}

#if OIPCODEC_SIMD_ARM || OIPCODEC_SIMD_X86
#define FEATURES() oipcodec_simd_features()
#else
#define FEATURES() 0
#endif

OIPCODEC_MAYBE_UNUSED static ptrdiff_t no_kernel(const void *data, ptrdiff_t i, ptrdiff_t n, char **end) {
    (void)data;
    (void)n;
    (void)end;
    return i;
}

/* The kernel checked by itself: NEON on AArch64, AVX2 where x86-64 has it. */
#if OIPCODEC_SIMD_ARM
#define KERNEL(T) oipcodec_fast_##T##_neon
#define KERNEL_NAME "NEON"
#elif OIPCODEC_SIMD_X86
#define KERNEL(T) (FEATURES() & OIPCODEC_SIMD_AVX2 ? oipcodec_fast_##T##_avx2 : no_kernel)
#define KERNEL_NAME (FEATURES() & OIPCODEC_SIMD_AVX2 ? "AVX2" : "none")
#else
#define KERNEL(T) no_kernel
#define KERNEL_NAME "none"
#endif

#define CHECK_TYPE(T, CTYPE, WRITE, WIDE, SIGNED)                                                \
    static void check_##T(const CTYPE *v, ptrdiff_t n) {                                       \
        char *e = ref, *g, *k = kern;                                                          \
        ptrdiff_t i, done;                                                                     \
        for (i = 0; i < n; i++) {                                                              \
            e = WRITE(e, (WIDE)v[i]);                                                          \
            *e++ = ',';                                                                        \
            ref_end[i] = e - ref;                                                              \
        }                                                                                      \
        if (n) {                                                                               \
            e--;                                                                               \
        }                                                                                      \
        g = oipcodec_row_##T(v, n, got, NULL);                                                 \
        if (g - got != e - ref || memcmp(got, ref, (size_t)(e - ref)) != 0) {                  \
            report(#T, n, "row writer");                                                       \
        }                                                                                      \
        done = KERNEL(T)(v, 0, n, &k);                                                         \
        if (done < 0 || done > n || k - kern != (done ? ref_end[done - 1] : 0) ||              \
            memcmp(kern, ref, (size_t)(k - kern)) != 0) {                                      \
            report(#T, n, "kernel");                                                           \
        }                                                                                      \
        n_rows++;                                                                              \
        n_values += (unsigned long long)n;                                                     \
        n_kernel_values += (unsigned long long)done;                                           \
    }                                                                                          \
    static void run_##T(long long random_values) {                                             \
        static CTYPE v[1024];                                                                  \
        const int sign = SIGNED;                                                               \
        long long left;                                                                        \
        int s, pos, len, t, j;                                                                 \
        for (s = 0; s < n_specials; s++) {                                                     \
            const CTYPE x = (CTYPE)specials[s];                                                \
            for (j = 0; j < 24; j++) {                                                         \
                v[j] = x;                                                                      \
            }                                                                                  \
            check_##T(v, 24);                                                                  \
            for (pos = 0; pos < 4; pos++) {                                                    \
                for (j = 0; j < 24; j++) {                                                     \
                    v[j] = (CTYPE)small_value(sign);                                                     \
                }                                                                              \
                v[pos] = x;                                                                    \
                v[pos + 4] = x;                                                                \
                check_##T(v, 24);                                                              \
            }                                                                                  \
        }                                                                                      \
        for (len = 0; len <= 40; len++) {                                                      \
            for (t = 0; t < 300; t++) {                                                        \
                for (j = 0; j < len; j++) {                                                    \
                    v[j] = (CTYPE)(t % 4 == 0   ? next()                                   \
                                   : t % 4 == 1 ? small_value(sign)                             \
                                   : t % 4 == 2 ? next() >> (next() & 63)                       \
                                                : digits_value(sign));                          \
                }                                                                              \
                check_##T(v, len);                                                             \
            }                                                                                  \
        }                                                                                      \
        for (left = random_values, t = 0; left > 0; left -= 1024, t++) {                       \
            for (j = 0; j < 1024; j++) {                                                       \
                v[j] = (CTYPE)(t % 5 == 0   ? next()                                           \
                               : t % 5 == 3 ? (j & 64 ? next() : small_value(sign))            \
                               : t % 5 == 4 ? digits_value(sign)                                \
                                            : small_value(sign));                              \
            }                                                                                  \
            check_##T(v, 1024);                                                                \
        }                                                                                      \
        printf("%-4s rows %llu values %llu of which by the vector kernel %llu, differences "  \
               "%llu\n",                                                                       \
               #T, n_rows, n_values, n_kernel_values, n_differences);                          \
        fflush(stdout);                                                                        \
        n_rows = n_values = n_kernel_values = 0;                                               \
    }

CHECK_TYPE(u8, uint8_t, oipcodec_write_u8, uint32_t, 0)
CHECK_TYPE(i8, int8_t, oipcodec_write_i8, int32_t, 1)
CHECK_TYPE(u16, uint16_t, oipcodec_write_u32, uint32_t, 0)
CHECK_TYPE(i16, int16_t, oipcodec_write_i32, int32_t, 1)
CHECK_TYPE(u32, uint32_t, oipcodec_write_u32, uint32_t, 0)
CHECK_TYPE(i32, int32_t, oipcodec_write_i32, int32_t, 1)
CHECK_TYPE(u64, uint64_t, oipcodec_write_u64, uint64_t, 0)
CHECK_TYPE(i64, int64_t, oipcodec_write_i64, int64_t, 1)

int main(int argc, char **argv) {
    long long random_values = argc > 1 ? atoll(argv[1]) : 10000000LL;
    ref = malloc(32 * 1024 + 64);
    got = malloc(32 * 1024 + 64);
    kern = malloc(32 * 1024 + 64);
    ref_end = malloc(1024 * sizeof(ptrdiff_t));
    if (!ref || !got || !kern || !ref_end) {
        return 2;
    }
    make_specials();
    printf("kernel checked by itself: %s (features %d), %d special values, %lld random values per type\n",
           KERNEL_NAME, FEATURES(),
           n_specials, random_values);
    run_u8(random_values);
    run_i8(random_values);
    run_u16(random_values);
    run_i16(random_values);
    run_u32(random_values);
    run_i32(random_values);
    run_u64(random_values);
    run_i64(random_values);
    printf("differences: %llu\n", n_differences);
    return n_differences != 0;
}
