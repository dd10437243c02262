"""Write the FP32 JSON writer's text patterns (csrc/oipcodec/write/f32_patterns.h).

The SIMD path of ``oipcodec_row_f32`` (csrc/oipcodec/write/x86/f32.h) builds each element's
text with one byte shuffle: a 16-byte source (the nine significant digits as ASCII, then '.',
'e', the exponent's sign and its two digits, and '0') is permuted by a pattern picked by the
element's layout row and its digit count. The patterns here follow the layout rule of
docs/kernels.md (the pure twin, ``oipcodec._pure.jsonencode``, defines it): a decimal exponent
E in -6..12 is written positionally, others as d[.ddd]e[+-]E.

Run from the repository root: ``python tools/gen_f32_text_patterns.py`` (``--check`` only
compares); tests/kernels/test_jsonencode.py fails when the header is out of date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HEADER = Path(__file__).resolve().parent.parent / "csrc" / "oipcodec" / "write" / "f32_patterns.h"

# Source byte positions: digits 0..8, then these.
POINT, EXP, SIGN, TENS, ONES, ZERO = 9, 10, 11, 12, 13, 14
LO_E, HI_E = -6, 12
ROWS = HI_E - LO_E + 1 + 3  # positional rows, exponent < 10, exponent >= 10, token


def pattern(row: int, nd: int) -> list[int]:
    """Source positions of the text of ``nd`` significant digits in layout ``row``."""
    if row <= HI_E - LO_E:
        e = row + LO_E
        if e >= 0:
            whole = [i if i <= 8 else ZERO for i in range(e + 1)]
            frac = list(range(e + 1, nd)) if nd > e + 1 else [ZERO]
            return [*whole, POINT, *frac]
        return [ZERO, POINT, *[ZERO] * (-e - 1), *range(nd)]
    if row < ROWS - 1:
        frac = [POINT, *range(1, nd)] if nd > 1 else []
        exponent = [TENS, ONES] if row == ROWS - 2 else [ONES]
        return [0, *frac, EXP, SIGN, *exponent]
    return list(range(nd))  # NaN and Infinity: the source is the token


def header() -> str:
    """The text of write/f32_patterns.h."""
    rows, lens = [], []
    for row in range(ROWS):
        for nd in range(1, 10):
            p = pattern(row, nd)
            assert len(p) <= 16
            lens.append(len(p))
            rows.append("    {" + ", ".join(str(i) for i in p + [0x80] * (16 - len(p))) + "},")
    lines = [
        "/* Written by tools/gen_f32_text_patterns.py: do not edit. The FP32 SIMD writer's",
        " * byte shuffles (write/x86/f32.h), indexed by layout row * 9 + significant digits - 1,",
        " * and the length of each text. */",
        "#ifndef OIPCODEC_WRITE_F32_PATTERNS_H",
        "#define OIPCODEC_WRITE_F32_PATTERNS_H",
        "",
        "#include <stdint.h>",
        "",
        f"#define OIPCODEC_F32_ROWS {ROWS}",
        "",
        f"static const uint8_t oipcodec_f32_patterns[{ROWS * 9}][16] = {{",
        *rows,
        "};",
        "",
        f"static const uint8_t oipcodec_f32_pattern_len[{ROWS * 9}] = {{",
    ]
    for i in range(0, len(lens), 18):
        lines.append("    " + ", ".join(str(n) for n in lens[i : i + 18]) + ",")
    lines += ["};", "", "#endif", ""]
    return "\n".join(lines)


def main() -> int:
    """Write the header, or with --check report whether it is up to date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, exit 1 if stale")
    args = parser.parse_args()
    text = header()
    if args.check:
        current = HEADER.read_text() if HEADER.exists() else ""
        if current != text:
            print(f"{HEADER} is out of date: run python tools/gen_f32_text_patterns.py")
            return 1
        return 0
    HEADER.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
