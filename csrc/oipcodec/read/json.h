/* JSON number and string text to binary values, for oipcodec._native.jsondecode: this header
 * only gathers the parts, each credited in its own header.
 *
 * Numbers: a token is read into a decimal w * 10**q (its first 19 significant digits, with a
 * flag when nonzero digits were dropped; read/numscan.h), then to the correctly rounded float64
 * by Clinger's fast path or Eisel-Lemire (read/decimal_to_float.h); the rare undecided cases go to
 * the caller, which asks Python's float(). Narrower floats round that float64 once more, and
 * oipcodec_is_midpoint() finds the few cases where that second rounding could be wrong.
 *
 * Arrays' common case: tokens read 16 bytes at a time with masks instead of data-dependent
 * branches (read/swar.h), the FP32 and integer lanes finding the commas of 64 bytes first so that
 * consecutive numbers parse independently (read/float_lane.h, read/int_lane.h). Anything
 * unusual falls back to the byte-wise readers, which decide every error. Strings:
 * read/strings.h; byte classes: read/chars.h. Plain C99 plus optional intrinsics, each with a
 * portable fallback (MSVC included; common/compiler.h). */
#ifndef OIPCODEC_READ_JSON_H
#define OIPCODEC_READ_JSON_H

#include "oipcodec/read/chars.h"
#include "oipcodec/read/decimal_to_float.h"
#include "oipcodec/read/float_lane.h"
#include "oipcodec/read/int_lane.h"
#include "oipcodec/read/numscan.h"
#include "oipcodec/read/strings.h"

#endif
