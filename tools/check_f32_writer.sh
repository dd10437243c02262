#!/usr/bin/env bash
# Compare the FP32 JSON writer's fast paths (the AVX-512 and AVX2 ones, as far as this
# processor has them, and the scalar one) with its exact path on all 2**32 float32 bit
# patterns (tools/check_f32_writer.c); about 10 minutes on one core. Run from anywhere:
#   bash tools/check_f32_writer.sh            (CC and CFLAGS are honoured)
# Run it after any change to oipcodec_row_f32, csrc/oipcodec/write/x86/f32.h or the tables
# they read, on a processor with AVX-512 (the first line it prints says which path it checked).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc="${CC:-cc}"
flags="${CFLAGS:--O2} -I$root/csrc"
# clang 14 makes the resolver of a static function's target_clones a global symbol (clang 22
# does not; those between were not tried), so the four objects below, each with its own clones,
# would not link: one build there.
if "$cc" -dM -E -x c /dev/null | grep -qE "^#define __clang_major__ (1[0-9]|2[01])$"; then
    flags="$flags -DOIPCODEC_NO_CLONES"
fi
# shellcheck disable=SC2086
"$cc" $flags -DROW=row_fast -DLEVEL=level_fast -c "$root/tools/check_f32_writer.c" \
    -o "$work/fast.o"
# shellcheck disable=SC2086
"$cc" $flags -DROW=row_avx2 -DLEVEL=level_avx2 -DOIPCODEC_SIMD_MAX=1 -c \
    "$root/tools/check_f32_writer.c" -o "$work/avx2.o"
# shellcheck disable=SC2086
"$cc" $flags -DROW=row_scalar -DOIPCODEC_SIMD_MAX=0 -c "$root/tools/check_f32_writer.c" \
    -o "$work/scalar.o"
# shellcheck disable=SC2086
"$cc" $flags -DROW=row_exact -DOIPCODEC_F32_FAST_PATH=0 -c "$root/tools/check_f32_writer.c" \
    -o "$work/exact.o"
# shellcheck disable=SC2086
"$cc" $flags -DMAIN "$root/tools/check_f32_writer.c" "$work/fast.o" "$work/avx2.o" \
    "$work/scalar.o" "$work/exact.o" -o "$work/check"
"$work/check"
