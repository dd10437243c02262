#!/usr/bin/env bash
# Compare the JSON parser's array lanes with the NEON comma scan (csrc/oipcodec/
# read/arm64/lanes.h) against the same lanes with the SWAR scan, under qemu-user
# (tools/check_lanes_neon.c), built by the aarch64 cross GCC and by clang for
# aarch64-linux-gnu, each with -Wall -Wextra -Werror. Run from anywhere:
#   bash tools/check_lanes_neon.sh [texts, default 200000]
#   bash tools/check_lanes_neon.sh --count   (instructions per element, NEON and SWAR scans)
# The count runs the -DCOUNT driver of check_lanes_neon.c under qemu with one instruction per
# translation block and no chaining (-d nochain,exec logs one line per executed instruction):
# parsing 4000 elements less parsing 2000, over 2000 (set-up and text generation cancel).
# Needs gcc-aarch64-linux-gnu, clang and qemu-user-static (Debian packages).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
count="${1:-200000}"
if [ "$count" = --count ]; then
    if qemu-aarch64-static -h | grep -q -- '-one-insn-per-tb'; then one=-one-insn-per-tb; else one=-singlestep; fi
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    for side in neon swar; do
        cap=()
        [ "$side" = swar ] && cap=(-DOIPCODEC_SIMD_MAX=0)
        aarch64-linux-gnu-gcc -O3 -std=c11 -Wall -Wextra -Werror "-I$root/csrc" -DCOUNT \
            "${cap[@]}" -static -o "$work/$side" "$root/tools/check_lanes_neon.c"
        for kind in int fp32; do
            a=$(qemu-aarch64-static "$one" -d nochain,exec -D /dev/stderr "$work/$side" "$kind" \
                2000 2>&1 >/dev/null | grep -c '^Trace')
            b=$(qemu-aarch64-static "$one" -d nochain,exec -D /dev/stderr "$work/$side" "$kind" \
                4000 2>&1 >/dev/null | grep -c '^Trace')
            awk -v k="$kind" -v s="$side" -v a="$a" -v b="$b" \
                'BEGIN { printf "%-5s %-5s %8.1f instructions per element\n", k, s, (b - a) / 2000 }'
        done
    done
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
flags=(-O2 -std=c11 -Wall -Wextra -Werror "-I$root/csrc")
src="$root/tools/check_lanes_neon.c"
gcc_lib="$(dirname "$(aarch64-linux-gnu-gcc -print-libgcc-file-name)")"
for build in gcc clang; do
    if [ "$build" = gcc ]; then
        cc=(aarch64-linux-gnu-gcc)
        link=()
    else
        cc=(clang --target=aarch64-linux-gnu)
        link=(-B"$gcc_lib" -L"$gcc_lib")
    fi
    "${cc[@]}" "${flags[@]}" -DSIDE=neon -c -o "$work/neon.o" "$src"
    "${cc[@]}" "${flags[@]}" -DSIDE=swar -DOIPCODEC_SIMD_MAX=0 -c -o "$work/swar.o" "$src"
    "${cc[@]}" "${link[@]}" "${flags[@]}" -DMAIN -static -o "$work/check" "$src" "$work/neon.o" \
        "$work/swar.o"
    echo "== aarch64, $build"
    qemu-aarch64-static "$work/check" "$count"
done
