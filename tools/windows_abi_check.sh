#!/usr/bin/env bash
# The C kernels on Windows' data model (LLP64: long is 32 bits, pointers and sizes 64): the
# driver tools/windows_abi_driver.c, built with mingw-w64 for Windows x64 and run under wine,
# must print what the same driver built for this machine prints, byte for byte, with the vector
# paths on and capped off (OIPCODEC_SIMD=0), and its own checks must pass. First, every header
# of csrc/oipcodec compiled alone for Windows (-Wall -Wextra -Werror). Run from anywhere:
#   bash tools/windows_abi_check.sh
# Needs gcc-mingw-w64-x86-64 and wine (Debian packages: gcc-mingw-w64-x86-64 wine64, or wine).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
# wineserver outlives the program a little: stop it before the prefix is removed
trap 'WINEPREFIX="$work/wine" wineserver -k 2>/dev/null; rm -rf "$work"' EXIT
mingw="${MINGW_CC:-x86_64-w64-mingw32-gcc}"
wine="$(command -v wine64 || command -v wine || true)"
for tool in "$mingw" "${CC:-cc}"; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done
[ -n "$wine" ] || { echo "missing: wine64 or wine" >&2; exit 2; }
# A private wine prefix, made once per run: wine's first start writes it (a few seconds).
export WINEPREFIX="$work/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
flags=(-O2 -std=c11 -Wall -Wextra -Werror "-I$root/csrc")
src="$root/tools/windows_abi_driver.c"

for header in $(cd "$root/csrc" && find oipcodec -name '*.h' | sort); do
    echo "#include \"$header\"" >"$work/unit.c"
    "$mingw" "${flags[@]}" -c -o "$work/unit.o" "$work/unit.c"
done
echo "== every header compiles alone for Windows x64 (mingw-w64, -Wall -Wextra -Werror)"

"$mingw" "${flags[@]}" -static -o "$work/driver.exe" "$src"
"${CC:-cc}" "${flags[@]}" -o "$work/driver" "$src"
status=0
for simd in "" 0; do
    label="vector paths on"
    [ -z "$simd" ] || label="vector paths capped off (OIPCODEC_SIMD=$simd)"
    OIPCODEC_SIMD="$simd" "$work/driver" >"$work/linux.txt" 2>"$work/linux.err" || status=1
    # wine's console turns "\n" into "\r\n"
    OIPCODEC_SIMD="$simd" "$wine" "$work/driver.exe" 2>"$work/windows.err" |
        tr -d '\r' >"$work/windows.txt" || status=1
    windows_model="$(grep -m1 '^model' "$work/windows.err" | tr -d '\r' || true)"
    echo "== $label: linux $(head -1 "$work/linux.err"); windows $windows_model"
    grep -q '^model: long 4, pointer 8' "$work/windows.err" || {
        echo "the Windows build is not LLP64 (or did not run):" && cat "$work/windows.err"
        status=1
    }
    grep '^FAIL' "$work/linux.txt" "$work/windows.txt" && status=1
    if cmp -s "$work/linux.txt" "$work/windows.txt"; then
        echo "lines: $(wc -l <"$work/linux.txt"), differing lines: 0"
    else
        echo "differing lines: $(diff "$work/linux.txt" "$work/windows.txt" | grep -c '^<')"
        diff "$work/linux.txt" "$work/windows.txt" | cut -c1-300 | head -20
        status=1
    fi
done
exit "$status"
