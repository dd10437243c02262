/* What the FP32 vector writers (write/x86/f32.h, write/arm64/f32.h) share beyond the scalar
 * writer: the text patterns (write/f32_patterns.h) and the sources of NaN and Infinity. */
#ifndef OIPCODEC_WRITE_F32_TOKENS_H
#define OIPCODEC_WRITE_F32_TOKENS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oipcodec/common/compiler.h"
#include "oipcodec/write/f32_patterns.h"

/* NaN and Infinity: the token as the source, copied by a pattern of its length (row
 * OIPCODEC_F32_ROWS - 1); NaN has no sign. */
static inline void oipcodec_f32_tokens(const uint32_t *block, uint64_t nonfinite,
                                       unsigned char *src, uint32_t *meta) {
    while (nonfinite) {
        ptrdiff_t i = oipcodec_ctz64(nonfinite);
        int nan = (block[i] & 0x7FFFFFu) != 0;
        nonfinite &= nonfinite - 1;
        memcpy(src + 16 * i, nan ? "NaN" : "Infinity", nan ? 3 : 8);
        meta[i] = (uint32_t)((OIPCODEC_F32_ROWS - 1) * 9 + (nan ? 2 : 7)) |
                  (nan ? 0 : (block[i] >> 31) << 16);
    }
}

#endif
