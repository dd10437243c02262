#!/usr/bin/env bash
# Compare the FP32 JSON writer's fast path with its exact path on all 2**32 float32 bit
# patterns (tools/check_f32_writer.c); about 5 minutes on one core. Run from anywhere:
#   bash tools/check_f32_writer.sh            (CC and CFLAGS are honoured)
# Run it after any change to oipcodec_row_f32 or the tables it reads in csrc/oipcodec/jsonwrite.h.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc="${CC:-cc}"
flags="${CFLAGS:--O2} -I$root/csrc"
# shellcheck disable=SC2086
"$cc" $flags -DROW=row_fast -c "$root/tools/check_f32_writer.c" -o "$work/fast.o"
# shellcheck disable=SC2086
"$cc" $flags -DROW=row_exact -DOIPCODEC_F32_FAST_PATH=0 -c "$root/tools/check_f32_writer.c" \
    -o "$work/exact.o"
# shellcheck disable=SC2086
"$cc" $flags -DMAIN "$root/tools/check_f32_writer.c" "$work/fast.o" "$work/exact.o" \
    -o "$work/check"
"$work/check"
