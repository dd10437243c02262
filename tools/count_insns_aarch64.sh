#!/usr/bin/env bash
# AArch64 instructions executed per value by the JSON row writers (FP32, FP64, INT64), with the
# NEON paths on and capped off (OIPCODEC_SIMD=0), counted under qemu-user: speed under
# emulation means nothing, instruction counts do. Method: tools/count_insns_driver.c is
# cross-compiled (aarch64-linux-gnu-gcc -O3, static) against the headers of a csrc tree, run by
# qemu-aarch64 with one guest instruction per translation block (-one-insn-per-tb, -singlestep
# before qemu 8.1) and no block chaining (-d nochain,exec), so each executed instruction logs
# one "Trace" line; the count writing 2N values minus the count writing N, divided by N, is the
# writer's instructions per value (start-up and data generation cancel). Debian's qemu is built
# without TCG plugins (libinsn), hence the log. Needs gcc-aarch64-linux-gnu and
# qemu-user-static. See docs/kernels.md ("AArch64 speed, in instructions").
#   tools/count_insns_aarch64.sh [--csrc DIR] [--n N] [--kinds "f32 f64 i64 i64full"]
#   (kinds: f32 f64 i64 i64full u64full)
# --csrc picks the headers (default: this checkout's csrc), --n the N above (default 2000).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
csrc="$repo/csrc"
n=2000
kinds="f32 f64 i64 i64full"
while [ $# -gt 0 ]; do
    case "$1" in
        --csrc) csrc="$(cd "$2" && pwd)"; shift 2 ;;
        --n) n="$2"; shift 2 ;;
        --kinds) kinds="$2"; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "count_insns_aarch64: unknown option $1" >&2; exit 2 ;;
    esac
done
cc="${CC:-aarch64-linux-gnu-gcc}"
qemu="${QEMU:-qemu-aarch64-static}"
if "$qemu" -h | grep -q -- '-one-insn-per-tb'; then one=-one-insn-per-tb; else one=-singlestep; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The flags the package is built with (setup.py): -O3, C11.
"$cc" -O3 -std=c11 -Wall -Wextra -Wno-unused-function -Werror -I"$csrc" -static \
    -o "$work/drv" "$repo/tools/count_insns_driver.c" -lm

count() { # kind n simd-env -> instructions executed by the whole program
    # The log (hundreds of MB) is counted as it streams, never stored.
    env ${3:+OIPCODEC_SIMD=$3} "$qemu" "$one" -d nochain,exec -D /dev/stderr "$work/drv" "$1" \
        "$2" 2>&1 > "$work/out" | grep -c '^Trace'
}

echo "AArch64 instructions per value (qemu $("$qemu" --version | head -1 | awk '{print $3}'), \
$("$cc" --version | head -1), N=$n, csrc=$csrc)"
printf '%-8s %-8s %12s\n' kind NEON insns/value
for kind in $kinds; do
    for simd in "" 0; do
        a=$(count "$kind" "$n" "$simd")
        path="$(awk '{print $2}' "$work/out")"
        b=$(count "$kind" $((2 * n)) "$simd")
        awk -v k="$kind" -v p="$path" -v a="$a" -v b="$b" -v n="$n" \
            'BEGIN { printf "%-8s %-8s %12.1f\n", k, p, (b - a) / n }'
    done
done
