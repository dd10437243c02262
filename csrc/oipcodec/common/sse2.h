/* SSE2, part of x86-64's baseline: the readers' and writers' 16-byte steps use it without a
 * run-time check (OIPCODEC_SSE2 is 1 on every x86-64 build, GCC, clang or MSVC; x86-64 is
 * little-endian, as the readers' word tricks need). Vector code beyond the baseline lives in the
 * x86/ folders, chosen at run time by common/cpu.h. */
#ifndef OIPCODEC_COMMON_SSE2_H
#define OIPCODEC_COMMON_SSE2_H

#if (defined(__SSE2__) && defined(__x86_64__)) || defined(_M_X64)
#include <emmintrin.h>
#define OIPCODEC_SSE2 1
#else
#define OIPCODEC_SSE2 0
#endif

#endif
