/* Compiler helpers shared by every header in csrc/oipcodec: function attributes, bit scans and
 * the 64x64 -> 128-bit multiply.
 *
 * Each helper uses the compiler's builtin or intrinsic where there is one (GCC and clang
 * builtins, MSVC intrinsics on x64 and ARM64) and otherwise a portable C99 fallback, so the
 * headers build with any C99 compiler. Defined here once: a translation unit may include any
 * set of the headers. */
#ifndef OIPCODEC_COMMON_COMPILER_H
#define OIPCODEC_COMMON_COMPILER_H

#include <stdint.h>

#if defined(_MSC_VER)
#include <intrin.h>
#endif

/* Keeps a hot loop in a function of its own, where its variables stay in registers. */
#if defined(_MSC_VER)
#define OIPCODEC_NOINLINE __declspec(noinline)
#elif defined(__GNUC__) || defined(__clang__)
#define OIPCODEC_NOINLINE __attribute__((noinline))
#else
#define OIPCODEC_NOINLINE
#endif

/* Marks a file-scope function that a translation unit including its header may leave unused:
 * only -Wunused-function is silenced (an unreferenced static function is still not emitted). */
#if defined(__GNUC__) || defined(__clang__)
#define OIPCODEC_MAYBE_UNUSED __attribute__((unused))
#else
#define OIPCODEC_MAYBE_UNUSED
#endif

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

/* The high 64 bits of a * b. */
static inline uint64_t oipcodec_mulhi64(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
    return __umulh(a, b);
#else
    uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
    uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
    uint64_t cross = (lo_lo >> 32) + (uint32_t)hi_lo + lo_hi;
    return hi_hi + (hi_lo >> 32) + (cross >> 32);
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

/* Trailing zero bits of x; 64 when x is 0 (as the tzcnt instruction), which the 16-byte readers
 * (read/numscan.h) can pass: `mask & (mask - 1)` is 0 when the 16-byte window holds only digits.
 * The builtins leave 0 undefined (UBSan stops there) and MSVC's bit scan leaves its result
 * unset. */
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

/* The bit length of v (32 minus its leading zero bits), 1 for 0. */
static inline int oipcodec_bit_length_u32(uint32_t v) {
#if defined(_MSC_VER)
    unsigned long index;
    return _BitScanReverse(&index, v | 1u) ? (int)index + 1 : 1;
#elif defined(__GNUC__) || defined(__clang__)
    return 32 - __builtin_clz(v | 1u);
#else
    int n = 1;
    while (v >>= 1) {
        n++;
    }
    return n;
#endif
}

#endif
