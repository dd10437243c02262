/* Debug checks that cost nothing in release builds.
 *
 * OIPCODEC_DEBUG is defined to 1 by setup.py when the build runs with OIPCODEC_DEBUG=1; then
 * OIPCODEC_ASSERT aborts with the failing condition. In release builds it compiles to nothing,
 * so it may only guard invariants the kernels already establish, never input validation. */
#ifndef OIPCODEC_COMMON_DEBUG_H
#define OIPCODEC_COMMON_DEBUG_H

#ifndef OIPCODEC_DEBUG
#define OIPCODEC_DEBUG 0
#endif

#if OIPCODEC_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define OIPCODEC_ASSERT(cond)                                                             \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "oipcodec: assertion failed: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                            \
            abort();                                                                      \
        }                                                                                 \
    } while (0)
#else
#define OIPCODEC_ASSERT(cond) ((void)0)
#endif

#endif
