/* Force-included first by the MSVC syntax check (README.md). The check runs clang with the
 * macros cl.exe defines (_MSC_VER, _M_X64; __clang__ and __SIZEOF_INT128__ removed), so the
 * headers take the branches MSVC takes; clang still accepts GCC syntax that cl.exe refuses, so
 * the GCC-only names the headers use are poisoned here, after the system headers that need
 * them: one of them outside a GCC/clang branch is then an error, as it would be under MSVC. */
#pragma once
#include <intrin.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#pragma GCC poison __attribute__ __int128 __atomic_load_n __atomic_store_n
#pragma GCC poison __builtin_bswap16 __builtin_bswap32 __builtin_bswap64 __builtin_clz
#pragma GCC poison __builtin_clzll __builtin_ctzll __builtin_cpu_init __builtin_cpu_supports
