/* JSON number and string text to binary values, for oipcodec._native.jsondecode: this header
 * only gathers the parts, each credited in its own header.
 *
 * Numbers: a token is read into a decimal w * 10**q (its first 19 significant digits, with a
 * flag when nonzero digits were dropped; json_numscan.h), then to the correctly rounded float64
 * by Clinger's fast path or Eisel-Lemire (decimal_to_float.h); the rare undecided cases go to
 * the caller, which asks Python's float(). Narrower floats round that float64 once more, and
 * oipcodec_is_midpoint() finds the few cases where that second rounding could be wrong.
 *
 * Arrays' common case: tokens read 16 bytes at a time with masks instead of data-dependent
 * branches (swar.h), the FP32 and integer lanes finding the commas of 64 bytes first so that
 * consecutive numbers parse independently (json_float_lane.h, json_int_lane.h). Anything
 * unusual falls back to the byte-wise readers, which decide every error. Strings:
 * json_strings.h; byte classes: json_chars.h. Plain C99 plus optional intrinsics, each with a
 * portable fallback (MSVC included; common.h). */
#ifndef OIPCODEC_JSONNUM_H
#define OIPCODEC_JSONNUM_H

#include "oipcodec/json_chars.h"
#include "oipcodec/json_numscan.h"
#include "oipcodec/decimal_to_float.h"
#include "oipcodec/json_strings.h"
#include "oipcodec/json_float_lane.h"
#include "oipcodec/json_int_lane.h"

#endif
