/* Hot loops built twice where the platform can choose between the two when it loads them.
 *
 * OIPCODEC_HOT marks a function the compiler also builds for x86-64-v3 (Haswell and later:
 * AVX2, BMI2, LZCNT, MOVBE), next to the baseline x86-64 build that wheels must run on; the
 * dynamic loader picks one the first time the function is called, by the processor it runs on
 * (GCC's and clang's target_clones, an ifunc). The gain is in the integer code of the float
 * writers and parsers: BMI2's shifts and multiply leave the flags alone, lzcnt/tzcnt need no
 * zero check (the FP32 JSON writer runs about 10% faster: docs/measurements.md#kernel-design-decisions).
 *
 * ifuncs need an x86-64 ELF target with glibc: elsewhere (musl, macOS, Windows, other
 * processors, a compiler without the attribute) there is one build, the baseline one. A build
 * with OIPCODEC_NO_CLONES=1 in its environment (setup.py) has none.
 *
 * OIPCODEC_HOT also says what OIPCODEC_MAYBE_UNUSED says (a header's row writer may go unused
 * in a translation unit), because clang refuses every other attribute next to target_clones,
 * `unused` included: under clang the clones are `inline` instead, which keeps -Wunused-function
 * quiet just as well (GCC's -Wextra wants `static` first, so GCC keeps `unused`). clang 14
 * (not 22) gives the resolver of a static clone a global symbol: two objects that both include
 * a cloned writer do not link together under it (each extension is one translation unit;
 * tools/check_f32_writer.sh builds without clones there). */
#ifndef OIPCODEC_COMMON_TARGET_H
#define OIPCODEC_COMMON_TARGET_H

#include <stdint.h> /* glibc's defines __GLIBC__ (through features.h) */

#include "oipcodec/common/compiler.h"

#if defined(__x86_64__) && defined(__GLIBC__) && defined(__ELF__) && \
    !defined(OIPCODEC_NO_CLONES) && defined(__has_attribute)
#if __has_attribute(target_clones) && defined(__clang__)
#define OIPCODEC_HOT __attribute__((target_clones("arch=x86-64-v3", "default"))) inline
#elif __has_attribute(target_clones)
#define OIPCODEC_HOT __attribute__((target_clones("arch=x86-64-v3", "default"), unused))
#endif
#endif

#ifndef OIPCODEC_HOT
#define OIPCODEC_HOT OIPCODEC_MAYBE_UNUSED
#endif

#endif
