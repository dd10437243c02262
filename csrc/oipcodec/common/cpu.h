/* Which vector instruction sets the JSON writers may use: asked of the processor once per
 * process, and capped by the environment or the build.
 *
 * The wheels must run on any x86-64 processor, so the extensions are compiled for the baseline
 * and the vector code beyond it carries a target attribute (OIPCODEC_TARGET_*), not a compiler
 * flag; it is called only when oipcodec_simd_features() has the bits it needs. The check is the
 * compiler's __builtin_cpu_supports, which also asks whether the operating system saves the
 * wider registers; MSVC compiles the intrinsics without target attributes (OIPCODEC_TARGET_*
 * are empty there) and the check asks cpuid and XCR0 itself. On AArch64, NEON is part of the
 * architecture: OIPCODEC_SIMD_ARM code is compiled for it unconditionally and only the caps
 * below turn it off. Elsewhere (clang-cl, other processors, old compilers) no vector code is
 * compiled, and the scalar writers, which define the text in every case, do all the work.
 *
 * Caps, for tests and checks on a machine that has everything:
 * - the environment variable OIPCODEC_SIMD when the first writer asks: "0" the scalar code
 *   only, "1" AVX2 at most on x86-64 (the kernel tests run each writer so, in child
 *   processes); on AArch64 any value but "0" leaves NEON on;
 * - a build with -DOIPCODEC_SIMD_MAX=0 or 1 (tools/check_f32_writer.sh builds each so). */
#ifndef OIPCODEC_COMMON_CPU_H
#define OIPCODEC_COMMON_CPU_H

#include <stdlib.h>

#include "oipcodec/common/compiler.h"

#if defined(__x86_64__) && !defined(_MSC_VER) &&                                               \
    ((defined(__clang__) && __clang_major__ >= 11) ||                                          \
     (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 9))
#define OIPCODEC_SIMD_X86 1
#elif defined(_MSC_VER) && !defined(__clang__) && defined(_M_X64) && _MSC_VER >= 1920
#define OIPCODEC_SIMD_X86 1 /* Visual Studio 2019 and later: AVX-512 VBMI2 intrinsics */
#else
#define OIPCODEC_SIMD_X86 0
#endif

#if defined(__aarch64__) && defined(__ARM_NEON) && !defined(_MSC_VER) &&                        \
    ((defined(__clang__) && __clang_major__ >= 11) ||                                          \
     (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 9))
#define OIPCODEC_SIMD_ARM 1
#else
#define OIPCODEC_SIMD_ARM 0
#endif

#ifndef OIPCODEC_SIMD_MAX
#define OIPCODEC_SIMD_MAX 2
#endif

/* The feature bits; each one includes the ones before it. */
#define OIPCODEC_SIMD_AVX2 1        /* AVX2, BMI1, BMI2, POPCNT (Haswell, Zen 1 and later) */
#define OIPCODEC_SIMD_AVX512 2      /* AVX-512 F, CD, BW, DQ, VL (Skylake-SP, Zen 4 and later) */
#define OIPCODEC_SIMD_AVX512_VBMI 4 /* AVX-512 VBMI and VBMI2 too (Ice Lake, Zen 4 and later) */
#define OIPCODEC_SIMD_NEON 8        /* AArch64's Advanced SIMD (every AArch64 processor) */

#if OIPCODEC_SIMD_X86 && defined(_MSC_VER)
#include <immintrin.h>
#include <intrin.h>

/* MSVC compiles every intrinsic in any function; only the run-time check guards them. */
#define OIPCODEC_TARGET_AVX2
#define OIPCODEC_TARGET_AVX512
#define OIPCODEC_TARGET_AVX512_VBMI

/* The OIPCODEC_SIMD_* bits of the processor and operating system, from cpuid and XCR0: the
 * registers are usable only where the operating system saves them (XCR0: SSE and AVX state for
 * AVX2, opmask and both ZMM halves for AVX-512). LZCNT is reported by leaf 0x80000001. */
OIPCODEC_MAYBE_UNUSED static int oipcodec_cpu_x86_features(void) {
    int leaf1[4], leaf7[4], ext[4];
    unsigned long long xcr0;
    int known = 0;
    __cpuid(leaf1, 0);
    if (leaf1[0] < 7) {
        return 0;
    }
    __cpuid(leaf1, 1);
    if (!(leaf1[2] & (1 << 27)) || !(leaf1[2] & (1 << 28)) || !(leaf1[2] & (1 << 23))) {
        return 0; /* no OSXSAVE, AVX or POPCNT */
    }
    xcr0 = _xgetbv(0);
    __cpuidex(leaf7, 7, 0);
    __cpuid(ext, (int)0x80000001);
    if ((xcr0 & 0x6) == 0x6 && (leaf7[1] & (1 << 5)) && (leaf7[1] & (1 << 3)) &&
        (leaf7[1] & (1 << 8)) && (ext[2] & (1 << 5))) {
        known = OIPCODEC_SIMD_AVX2;
        /* AVX-512 F (16), DQ (17), CD (28), BW (30), VL (31) */
        if ((xcr0 & 0xE6) == 0xE6 && (leaf7[1] & (1 << 16)) && (leaf7[1] & (1 << 17)) &&
            (leaf7[1] & (1 << 28)) && (leaf7[1] & (1 << 30)) && (leaf7[1] & (1u << 31))) {
            known |= OIPCODEC_SIMD_AVX512;
            if ((leaf7[2] & (1 << 1)) && (leaf7[2] & (1 << 6))) { /* VBMI, VBMI2 */
                known |= OIPCODEC_SIMD_AVX512_VBMI;
            }
        }
    }
    return known;
}

/* An aligned int is read and written whole on x64; volatile keeps MSVC from caching it. */
#define OIPCODEC_FEATURES_LOAD(p) (*(volatile int *)(p))
#define OIPCODEC_FEATURES_STORE(p, v) (*(volatile int *)(p) = (v))
#elif OIPCODEC_SIMD_X86
#include <immintrin.h>

/* LZCNT comes with every processor that has AVX2. */
#define OIPCODEC_TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt")))
#define OIPCODEC_TARGET_AVX512                                                                 \
    __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt,avx512f,avx512cd,avx512bw,avx512dq,"     \
                          "avx512vl")))
#define OIPCODEC_TARGET_AVX512_VBMI                                                            \
    __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt,avx512f,avx512cd,avx512bw,avx512dq,"     \
                          "avx512vl,avx512vbmi,avx512vbmi2")))

/* The OIPCODEC_SIMD_* bits of the processor and operating system (the compiler's check). */
OIPCODEC_MAYBE_UNUSED static int oipcodec_cpu_x86_features(void) {
    int known = 0;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
        __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt")) {
        known = OIPCODEC_SIMD_AVX2;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl")) {
            known |= OIPCODEC_SIMD_AVX512;
            if (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2")) {
                known |= OIPCODEC_SIMD_AVX512_VBMI;
            }
        }
    }
    return known;
}

#define OIPCODEC_FEATURES_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define OIPCODEC_FEATURES_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#endif

#if OIPCODEC_SIMD_X86
/* The OIPCODEC_SIMD_* bits this process uses (0: none). Threads may both compute it the first
 * time: they store the same value. */
OIPCODEC_MAYBE_UNUSED static int oipcodec_simd_features(void) {
    static int features = -1;
    int known = OIPCODEC_FEATURES_LOAD(&features);
    if (known < 0) {
        const char *cap = getenv("OIPCODEC_SIMD");
        int level = OIPCODEC_SIMD_MAX;
        known = oipcodec_cpu_x86_features();
        if (cap && (cap[0] == '0' || cap[0] == '1') && cap[0] - '0' < level) {
            level = cap[0] - '0';
        }
        known &= level >= 2 ? ~0 : level == 1 ? OIPCODEC_SIMD_AVX2 : 0;
        OIPCODEC_FEATURES_STORE(&features, known);
    }
    return known;
}
#endif

#if OIPCODEC_SIMD_ARM
#include <arm_neon.h>

/* OIPCODEC_SIMD_NEON unless a cap says scalar only (0: none). */
OIPCODEC_MAYBE_UNUSED static int oipcodec_simd_features(void) {
    static int features = -1;
    int known = __atomic_load_n(&features, __ATOMIC_RELAXED);
    if (known < 0) {
        const char *cap = getenv("OIPCODEC_SIMD");
        known = OIPCODEC_SIMD_MAX >= 1 && !(cap && cap[0] == '0') ? OIPCODEC_SIMD_NEON : 0;
        __atomic_store_n(&features, known, __ATOMIC_RELAXED);
    }
    return known;
}
#endif

#endif
