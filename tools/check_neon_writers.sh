#!/usr/bin/env bash
# Compare the NEON JSON writers (csrc/oipcodec/write/arm64/f32.h, write/arm64/f64.h) with the
# scalar ones byte for byte (tools/check_neon_writers.c), cross-compiled for AArch64 and run
# under qemu-aarch64-static on any machine (natively on an AArch64 one). Run from anywhere:
#   bash tools/check_neon_writers.sh [STRIDE [FIRST [F64_COUNT]]]
# Defaults: every 97th float32 bit pattern (about 44 million) and 10 million float64 values,
# a few minutes under qemu; STRIDE 1 checks all 2**32 float32 patterns. Each header is first
# compiled with -Wall -Wextra -Werror by aarch64-linux-gnu-gcc and by clang for AArch64 (x86
# builds never compile NEON code). Needs gcc-aarch64-linux-gnu and qemu-user-static (Debian's
# packages). CC overrides the compiler that builds the check, e.g.
#   CC="clang --target=aarch64-linux-gnu" bash tools/check_neon_writers.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
read -ra cc <<<"${CC:-aarch64-linux-gnu-gcc}"
warn=(-std=c11 -Wall -Wextra -Werror -I"$root/csrc")
for header in write/arm64/f32.h write/arm64/f64.h write/arm64/digits.h write/json.h; do
    printf '#include "oipcodec/%s"\n' "$header" >"$work/h.c"
    "${cc[@]}" -O2 "${warn[@]}" -c "$work/h.c" -o "$work/h.o"
    if command -v clang >/dev/null; then
        clang --target=aarch64-linux-gnu -O2 "${warn[@]}" -c "$work/h.c" -o "$work/h.o"
    fi
done
"${cc[@]}" -O2 "${warn[@]}" -static -o "$work/check" "$root/tools/check_neon_writers.c" -lm
if [ "$(uname -m)" = aarch64 ]; then
    "$work/check" "$@"
else
    qemu-aarch64-static "$work/check" "$@"
fi
