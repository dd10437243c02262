"""The kernels on Windows' data model: LLP64, where ``long`` is 32 bits and pointers, ``size_t``
and ``ptrdiff_t`` are 64.

A size, count or offset carried by ``long`` is right on Linux and macOS (LP64) and wrong on
Windows, where it wraps past 2**31. Two checks: the sources of csrc/ and the .pyx/.pxd never
use ``long`` (nor its literal suffix, limits or library functions; ``long long``, ``int64_t``,
``size_t``, ``ptrdiff_t`` and ``Py_ssize_t`` are what they use), and tools/windows_abi_check.sh
builds the C kernels with mingw-w64 and runs them under wine over their edge cases (offsets near
2**31 and 2**32, each type's limits, every datatype), their output equal to the Linux build's.
The second skips without ``x86_64-w64-mingw32-gcc`` and wine, unless
``OIPCODEC_REQUIRE_COMPILERS`` is ``all`` or names ``mingw`` (as .ci/run does), which fails
instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
REQUIRED = {n.strip() for n in os.environ.get("OIPCODEC_REQUIRE_COMPILERS", "").split(",")}

_C_COMMENTS_AND_STRINGS = re.compile(
    r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL
)
_PY_COMMENTS_AND_STRINGS = re.compile(
    r'"""(?:\\.|.)*?"""|\'\'\'(?:\\.|.)*?\'\'\'|#[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
    re.DOTALL,
)
# long alone (long, unsigned long, long int), not long long or long double; a literal's L or UL
# suffix; LONG_MAX and kin; the C library's and the compilers' long functions.
_LONG = re.compile(
    r"(?<!long)(?<!long\s)\blong\b(?!\s+(?:long|double)\b)"
    r"|\b(?:0[xX][0-9a-fA-F]+|\d+)[uU]?[lL]\b"
    r"|\bU?LONG_(?:MAX|MIN)\b"
    r"|\b(?:strtou?l|labs|ldiv|lround|lrint|ftell|fseek|__builtin_(?:clz|ctz|popcount|parity|ffs|clrsb)l)\b"
)
# MSVC's bit scans write their index through an unsigned long * (their signature): a bit index
# below 64, declared for that call alone.
_BIT_SCAN = re.compile(r"unsigned long (\w+);\s*(?:return\s+)?_BitScan\w*\(&\1\b")


def long_uses(text: str, python: bool) -> list[str]:
    """The uses of ``long`` in a C (or, with ``python``, Cython) source, comments and string
    literals left out, each as its line."""
    strip = _PY_COMMENTS_AND_STRINGS if python else _C_COMMENTS_AND_STRINGS
    code = strip.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    allowed = {m.start() for m in _BIT_SCAN.finditer(code)}
    found = []
    for match in _LONG.finditer(code):
        start = match.start()
        if any(a <= start < a + len("unsigned long") for a in allowed):
            continue
        line = code.count("\n", 0, start)
        found.append(f"{line + 1}: {text.splitlines()[line].strip()}")
    return found


def _sources() -> list[Path]:
    native = ROOT / "src" / "oipcodec" / "_native"
    return sorted([*(ROOT / "csrc").rglob("*.[ch]"), *native.glob("*.pyx"), *native.glob("*.pxd")])


def test_no_long_carries_a_size_count_or_offset() -> None:
    sources = _sources()
    if not any(p.suffix == ".h" for p in sources):
        pytest.skip("csrc/ is not next to the tests")
    found = {
        str(p.relative_to(ROOT)): uses
        for p in sources
        if (uses := long_uses(p.read_text(), python=p.suffix in (".pyx", ".pxd")))
    }
    assert not found, f"long is 32 bits on Windows; use int64_t, size_t or ptrdiff_t: {found}"
    assert len(sources) > 40  # not vacuous: the headers and the kernels were read


def test_long_scan_catches_each_form() -> None:
    c_bad = [
        "long n = 0;",
        "unsigned long size;",
        "long int offset;",
        "x = (long)count;",
        "uint64_t m = 1UL << 40;",
        "if (n > LONG_MAX) return;",
        "n = strtol(p, 0, 10);",
        "k = __builtin_clzl(v);",
    ]
    for line in c_bad:
        assert long_uses(line, python=False), line
    assert long_uses("cdef long n = len(data)", python=True)
    assert long_uses("cdef unsigned long k", python=True)
    c_good = [
        "long long n = 0;",
        "unsigned long long v;",
        "long double x;",
        "/* a long row */ int64_t n;",
        'const char *s = "long";',
        "unsigned long i;\n    _BitScanReverse64(&i, x);",
        "unsigned long index;\n    return _BitScanReverse(&index, v | 1u) ? 1 : 0;",
        "uint64_t v = 10ull; int64_t w = 5LL;",
    ]
    for line in c_good:
        assert not long_uses(line, python=False), line
    assert not long_uses('"""A long docstring."""\n# long comment\ncdef Py_ssize_t n', True)


def test_kernels_agree_between_linux_and_windows_llp64() -> None:
    script = TOOLS / "windows_abi_check.sh"
    if not script.exists() or not (ROOT / "csrc").is_dir():
        pytest.skip("tools/ and csrc/ are not next to the tests (an installed copy)")
    missing = [
        tool for tool in ("bash", "x86_64-w64-mingw32-gcc", "cc") if shutil.which(tool) is None
    ]
    if not (shutil.which("wine64") or shutil.which("wine")):
        missing.append("wine64 or wine")
    if missing:
        if "mingw" in REQUIRED or "all" in REQUIRED:
            pytest.fail(f"OIPCODEC_REQUIRE_COMPILERS names mingw, but {', '.join(missing)} missing")
        pytest.skip(f"needs {', '.join(missing)}")
    result = subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, timeout=600, check=False
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    lines = result.stdout.splitlines()
    assert sum(line.endswith("differing lines: 0") for line in lines) == 2, output
    assert output.count("windows model: long 4, pointer 8") == 2, output
