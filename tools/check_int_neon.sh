#!/usr/bin/env bash
# Compare the integer row writers' NEON kernels (csrc/oipcodec/write/arm64/int.h) with the scalar
# writers under qemu-user (tools/check_int_neon.c): built by the aarch64 cross GCC and by clang
# for aarch64-linux-gnu (each with -Wall -Wextra -Werror), run with the kernels on and capped
# off (OIPCODEC_SIMD=0: the rows then take the scalar path; the kernels are still checked
# directly), then the same source natively as a check of the x86 build; first, every header of
# csrc/oipcodec compiled alone for aarch64 by both compilers. Run from anywhere:
#   bash tools/check_int_neon.sh [random values per type, default 10000000]
# Needs gcc-aarch64-linux-gnu, clang and qemu-user-static (Debian packages).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
count="${1:-10000000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
flags=(-O2 -std=c11 -Wall -Wextra -Werror "-I$root/csrc")
src="$root/tools/check_int_neon.c"
gcc_lib="$(dirname "$(aarch64-linux-gnu-gcc -print-libgcc-file-name)")"
for header in $(cd "$root/csrc" && find oipcodec -name '*.h' | sort); do
    echo "#include \"$header\"" >"$work/unit.c"
    aarch64-linux-gnu-gcc "${flags[@]}" -c -o "$work/unit.o" "$work/unit.c"
    clang --target=aarch64-linux-gnu "${flags[@]}" -c -o "$work/unit.o" "$work/unit.c"
done
echo "== every header compiles alone for aarch64 (gcc and clang, -Wall -Wextra -Werror)"
aarch64-linux-gnu-gcc "${flags[@]}" -static -o "$work/gcc" "$src"
clang --target=aarch64-linux-gnu "${flags[@]}" -B"$gcc_lib" -L"$gcc_lib" -static \
    -o "$work/clang" "$src"
"${CC:-cc}" "${flags[@]}" -o "$work/native" "$src"
for build in gcc clang; do
    echo "== aarch64, $build, NEON on"
    qemu-aarch64-static "$work/$build" "$count"
    echo "== aarch64, $build, OIPCODEC_SIMD=0"
    OIPCODEC_SIMD=0 qemu-aarch64-static "$work/$build" "$count"
done
echo "== native ($(uname -m))"
"$work/native" "$count"
