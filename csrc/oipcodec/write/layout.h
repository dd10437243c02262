/* The layout of a float's text from its shortest digits (defined at the top of write/json.h),
 * shared by the FP32, FP64 and 16-bit writers. */
#ifndef OIPCODEC_WRITE_LAYOUT_H
#define OIPCODEC_WRITE_LAYOUT_H

#include <stdint.h>
#include <string.h>

#include "oipcodec/write/int.h"

/* Writes sign, the significant digits (n >= 1, no trailing zeros unless the value is 0) and
 * the decimal exponent E in the layout described at the top; lo_e..hi_e is the positional
 * range. Returns the end. At most 2 + n + max(hi_e, -lo_e) + 2 bytes, or n + 8. */
static inline char *oipcodec_write_float_layout(char *out, int negative, const char *digits,
                                                int n, int e, int lo_e, int hi_e) {
    if (negative) {
        *out++ = '-';
    }
    if (e >= lo_e && e <= hi_e) {
        if (e >= 0) {
            if (n <= e + 1) {
                memcpy(out, digits, (size_t)n);
                out += n;
                memset(out, '0', (size_t)(e + 1 - n));
                out += e + 1 - n;
                memcpy(out, ".0", 2);
                return out + 2;
            }
            memcpy(out, digits, (size_t)(e + 1));
            out += e + 1;
            *out++ = '.';
            memcpy(out, digits + e + 1, (size_t)(n - e - 1));
            return out + n - e - 1;
        }
        memcpy(out, "0.", 2);
        out += 2;
        memset(out, '0', (size_t)(-e - 1));
        out += -e - 1;
        memcpy(out, digits, (size_t)n);
        return out + n;
    }
    *out++ = digits[0];
    if (n > 1) {
        *out++ = '.';
        memcpy(out, digits + 1, (size_t)(n - 1));
        out += n - 1;
    }
    *out++ = 'e';
    *out++ = e < 0 ? '-' : '+';
    return oipcodec_write_exponent(out, (uint32_t)(e < 0 ? -e : e));
}

/* Positional ranges of the decimal exponent: FP64, and FP32 (also used for FP16 and BF16). */
#define OIPCODEC_F64_LO_E (-5)
#define OIPCODEC_F64_HI_E 15
#define OIPCODEC_F32_LO_E (-6)
#define OIPCODEC_F32_HI_E 12

#endif
