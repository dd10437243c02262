/* JSON number and string text to binary values, for oipcodec._native.jsondecode: this header
 * only gathers the parts, each credited in its own header.
 *
 * Numbers: a JSON number token is first read into a decimal (w, q): its first 19 significant
 * digits as an integer w and a power of ten q, with a flag when nonzero digits were dropped
 * (json_numscan.h). The correctly rounded float64 of w * 10**q then comes from, in order
 * (decimal_to_float.h):
 * 1. Clinger's fast path: w <= 2**53 and |q| <= 22 make w and 10**|q| exact doubles, so one
 *    IEEE multiply or divide (itself correctly rounded) is the answer;
 * 2. the Eisel-Lemire algorithm: w times a 128-bit truncated power of five (pow5_table.h)
 *    gives the leading bits of the value with an error below two units of the second word;
 *    the result is final unless that error could change the rounding, which the code
 *    detects and reports as "undecided";
 * 3. undecided cases (rare: about one input in 10**15 of random ones, and some with more than
 *    19 digits) are left to the caller, which asks Python's float() (a correct, but slower,
 *    big-number algorithm).
 * Narrower floats (float32, FP16, BF16) round that float64 once more. That second rounding is
 * wrong only when the float64 lies exactly halfway between two values of the narrow format
 * while the decimal does not: oipcodec_is_midpoint() finds those cases for the caller to
 * settle exactly.
 *
 * Speed (the arrays' common case): tokens are read 16 bytes at a time (SSE2 where available,
 * else 64-bit words; swar.h), with masks instead of data-dependent branches, and the FP32 and
 * integer lanes find the commas of 64 bytes first so that consecutive numbers are parsed
 * independently (json_float_lane.h, json_int_lane.h). Anything unusual falls back to the
 * byte-wise readers, which decide every error.
 *
 * Strings: json_strings.h; the byte classes of JSON text: json_chars.h.
 *
 * Plain C99 plus optional compiler intrinsics, each with a portable fallback (MSVC included;
 * common.h). */
#ifndef OIPCODEC_JSONNUM_H
#define OIPCODEC_JSONNUM_H

#include "oipcodec/json_chars.h"
#include "oipcodec/json_numscan.h"
#include "oipcodec/decimal_to_float.h"
#include "oipcodec/json_strings.h"
#include "oipcodec/json_float_lane.h"
#include "oipcodec/json_int_lane.h"

#endif
