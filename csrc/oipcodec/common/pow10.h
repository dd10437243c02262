/* The powers of ten that fit 64 bits, for the JSON readers (digit-run scaling) and writers
 * (digit counts): one table for both sides. */
#ifndef OIPCODEC_COMMON_POW10_H
#define OIPCODEC_COMMON_POW10_H

#include <stdint.h>

/* 10^0 .. 10^19. */
static const uint64_t oipcodec_pow10_u64[20] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
    1000000000000000000ull,
    10000000000000000000ull,
};

#endif
