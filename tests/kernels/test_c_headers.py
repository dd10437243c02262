"""The C headers in csrc/oipcodec build together and one by one, warning-free, for every target.

Every header must compile on its own (it includes what it uses) and all of them in one
translation unit (no helper, macro or table defined twice), with ``-std=c11 -Wall -Wextra
-Werror``, under each toolchain below: GCC and clang for this machine (object code, the
target_clones included), GCC and clang for AArch64 (a syntax check: the NEON code, which no x86
build compiles), and clang standing in for MSVC on x64 and ARM64 (a syntax check of the
``_MSC_VER`` branches, with the test-only CRT stand-ins in tests/kernels/msvc_include). A
toolchain that is missing skips its tests, unless ``OIPCODEC_REQUIRE_COMPILERS``
(comma-separated names, or ``all``; set by .ci/run after installing them) names it. csrc/ is found next to tests/, in the source tree as
in cibuildwheel's copy of it (pyproject.toml, test-sources).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parents[2] / "csrc"
HEADERS = sorted((CSRC / "oipcodec").rglob("*.h"))
MSVC_INCLUDE = Path(__file__).resolve().parent / "msvc_include"
FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"]


@dataclass(frozen=True)
class Toolchain:
    """A compiler command for one target, and whether it builds objects or checks syntax."""

    name: str
    command: tuple[str, ...]
    extra: tuple[str, ...] = ()  # after FLAGS
    objects: bool = True  # -c (code generated, target attributes checked) or -fsyntax-only


# cl.exe's macros: _MSC_VER and the target's (_M_X64, _M_ARM64), no __clang__ and no 128-bit
# integer, so the headers take MSVC's branches; MSVC does not warn of unused static functions
# (C4505 is level 4), and the headers mark them for GCC and clang only.
_MSVC = ("-fms-compatibility", "-fms-extensions")
_MSVC_EXTRA = (
    "-U__clang__",
    "-U__SIZEOF_INT128__",
    "-Wno-unused-function",
    "-isystem",
    str(MSVC_INCLUDE),
    "-include",
    str(MSVC_INCLUDE / "msvc_check.h"),
)
# clang's immintrin.h declares for an MSVC target only the intrinsics of the instruction sets
# the build enables, where cl.exe declares them all: these flags stand for that (no header tests
# the macros they define).
_MSVC_X64_INTRINSICS = (
    *(f"-m{s}" for s in ("avx2", "bmi", "bmi2", "lzcnt", "popcnt", "xsave")),
    *(f"-mavx512{s}" for s in ("f", "cd", "bw", "dq", "vl", "vbmi", "vbmi2")),
)

TOOLCHAINS = [
    Toolchain("gcc", ("gcc",)),
    Toolchain("clang", ("clang",)),
    Toolchain("aarch64-gcc", ("aarch64-linux-gnu-gcc",), objects=False),
    Toolchain("aarch64-clang", ("clang", "--target=aarch64-linux-gnu"), objects=False),
    Toolchain(
        "msvc-clang",
        ("clang", "--target=x86_64-pc-windows-msvc", *_MSVC),
        extra=(*_MSVC_EXTRA, *_MSVC_X64_INTRINSICS),
        objects=False,
    ),
    # Windows on ARM64 (no wheel yet): the headers' _M_ARM64 branches (common/compiler.h's intrinsics).
    Toolchain(
        "msvc-arm64-clang",
        ("clang", "--target=aarch64-pc-windows-msvc", *_MSVC),
        extra=_MSVC_EXTRA,
        objects=False,
    ),
]
REQUIRED = {n.strip() for n in os.environ.get("OIPCODEC_REQUIRE_COMPILERS", "").split(",")}


@functools.cache
def _missing(chain: Toolchain) -> str:
    """Why `chain` cannot run here ("" when it can): no compiler, or no C library headers."""
    if not shutil.which(chain.command[0]):
        return f"{chain.command[0]} is not on PATH"
    probe = [*chain.command, *chain.extra, "-fsyntax-only", "-x", "c", "-"]
    result = subprocess.run(
        probe, input="#include <stdlib.h>\n", capture_output=True, text=True, timeout=60
    )
    if result.returncode == 0:
        return ""
    return f"{chain.name} cannot compile: {_first_error(result.stderr)}"


def _first_error(stderr: str) -> str:
    """The compiler's first error line: a skip reason is one line of the summary, not the dump
    ("In file included from", the source line, the caret, "1 error generated")."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line), lines[0] if lines else "no output")


def _needs(chain: Toolchain) -> None:
    """Skip without the toolchain; fail instead when OIPCODEC_REQUIRE_COMPILERS names it."""
    why = _missing(chain)
    if why:
        if chain.name in REQUIRED or "all" in REQUIRED:
            pytest.fail(f"OIPCODEC_REQUIRE_COMPILERS names {chain.name}, but {why}")
        pytest.skip(why)


pytestmark = pytest.mark.skipif(not HEADERS, reason=f"no C headers at {CSRC / 'oipcodec'}")
each_toolchain = pytest.mark.parametrize("chain", TOOLCHAINS, ids=lambda c: c.name)


def _compile(tmp_path: Path, chain: Toolchain, source_text: str) -> Path:
    """Compile `source_text` with `chain`; fail with the output. Returns the object's path."""
    _needs(chain)
    source = tmp_path / "unit.c"
    source.write_text(source_text)
    out = tmp_path / "u.o"
    mode = ["-c", "-o", str(out)] if chain.objects else ["-fsyntax-only"]
    command = [*chain.command, *FLAGS, *chain.extra, "-I", str(CSRC), *mode, str(source)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and not result.stderr.strip(), (
        f"{shlex.join(command)} failed:\n{result.stdout}{result.stderr}"
    )
    return out


def _name(header: Path) -> str:
    """The header's path as the sources include it, under csrc/oipcodec (write/x86/f32.h)."""
    return header.relative_to(CSRC / "oipcodec").as_posix()


def _including(headers: list[Path]) -> str:
    return "".join(f'#include "oipcodec/{_name(h)}"\n' for h in headers)


@each_toolchain
def test_all_headers_in_one_translation_unit(tmp_path: Path, chain: Toolchain) -> None:
    _compile(tmp_path, chain, _including(HEADERS))


@each_toolchain
def test_all_headers_in_one_translation_unit_reversed(tmp_path: Path, chain: Toolchain) -> None:
    # The other order too: a header may not lean on what an earlier one happened to include.
    _compile(tmp_path, chain, _including(HEADERS[::-1]))


@each_toolchain
@pytest.mark.parametrize("header", HEADERS, ids=_name)
def test_header_compiles_alone(tmp_path: Path, chain: Toolchain, header: Path) -> None:
    _compile(tmp_path, chain, _including([header]))


# What each target's build of the headers holds, asked of the preprocessor in the same unit.
_BRANCHES = """#include "oipcodec/write/json.h"
#if {condition}
#else
#error "{what}"
#endif
"""


@pytest.mark.parametrize(
    ("name", "condition", "what"),
    [
        ("aarch64-gcc", "OIPCODEC_SIMD_ARM", "NEON paths compiled for AArch64 (GCC)"),
        ("aarch64-clang", "OIPCODEC_SIMD_ARM", "NEON paths compiled for AArch64 (clang)"),
        ("msvc-clang", "defined(_MSC_VER) && !defined(__clang__)", "cl.exe's macros"),
        ("msvc-clang", "OIPCODEC_SIMD_X86", "AVX2 and AVX-512 writers compiled under MSVC"),
    ],
)
def test_each_target_takes_its_branches(
    tmp_path: Path, name: str, condition: str, what: str
) -> None:
    # Not vacuous: the cross and MSVC checks compile the branches they are there for.
    chain = next(c for c in TOOLCHAINS if c.name == name)
    _compile(tmp_path, chain, _BRANCHES.format(condition=condition, what=what))


@pytest.mark.parametrize("name", ["gcc", "clang"])
def test_row_writers_are_cloned_for_x86_64_v3(tmp_path: Path, name: str) -> None:
    # common/target.h's clones under each compiler: the FP32 row writer has an x86-64-v3 build next to
    # the baseline one (where the platform has ifuncs: x86-64 glibc ELF).
    chain = next(c for c in TOOLCHAINS if c.name == name)
    _needs(chain)
    probe = subprocess.run(
        [*chain.command, "-dM", "-E", "-x", "c", "-"],
        input="#include <stdint.h>\n",
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    if not all(f"#define {m} " in probe for m in ("__x86_64__", "__GLIBC__", "__ELF__")):
        pytest.skip(f"{name} does not build for x86-64 glibc ELF here: no ifuncs, no clones")
    nm = shutil.which("nm")
    if not nm:
        pytest.skip("nm is not on PATH")
    source = '#include "oipcodec/write/json.h"\n'
    source += "char *row(const float *v, ptrdiff_t n, char *out) {\n"
    source += "    return oipcodec_row_f32(v, n, out, 0);\n}\n"
    symbols = subprocess.run(
        [nm, str(_compile(tmp_path, chain, source))], capture_output=True, text=True, timeout=60
    ).stdout
    clones = [s for s in symbols.split() if s.startswith("oipcodec_row_f32_scalar.")]
    assert any("x86_64" in s or "x86-64" in s for s in clones), symbols


# common/cpu.h's MSVC branch built by GCC, with MSVC's cpuid intrinsics made of GCC's (whose __cpuidex
# already has MSVC's signature) and the one bit scan common/compiler.h's MSVC branch needs.
_MSVC_INTRIN = """#pragma once
#include <cpuid.h>
#undef __cpuid
static inline void __cpuid(int r[4], int leaf) { __cpuidex(r, leaf, 0); }
static inline unsigned char _BitScanReverse(unsigned long *i, unsigned long v) {
    *i = v ? 63 - (unsigned long)__builtin_clzl(v) : 0;
    return v != 0;
}
"""
_FEATURES = """#include <stdio.h>
#include "oipcodec/common/cpu.h"
int main(void) {
    printf("%d", oipcodec_simd_features());
    return 0;
}
"""


def test_msvc_cpu_check_agrees_with_the_compilers(tmp_path: Path) -> None:
    # The MSVC run-time check (cpuid and XCR0) is run here, by GCC with cl.exe's macros: on
    # this machine, under each cap, it gives the bits __builtin_cpu_supports gives.
    gcc = next(c for c in TOOLCHAINS if c.name == "gcc")
    _needs(gcc)
    if (
        "#define __x86_64__ "
        not in subprocess.run(
            ["gcc", "-dM", "-E", "-x", "c", "-"], input="", capture_output=True, text=True
        ).stdout
    ):
        pytest.skip("gcc does not build for x86-64 here")
    (tmp_path / "intrin.h").write_text(_MSVC_INTRIN)
    (tmp_path / "features.c").write_text(_FEATURES)
    msvc = ["-mxsave", "-I", str(tmp_path), "-D_MSC_VER=1930", "-D_M_X64=100", "-D__declspec(x)="]
    answers: dict[str, list[str]] = {}
    for name, extra in (("gnu", []), ("msvc", msvc)):
        program = tmp_path / name
        command = ["gcc", *FLAGS, *extra, "-I", str(CSRC), "-o", str(program)]
        built = subprocess.run(
            [*command, str(tmp_path / "features.c")], capture_output=True, text=True, timeout=120
        )
        assert built.returncode == 0, f"{shlex.join(command)}:\n{built.stderr}"
        answers[name] = [
            subprocess.run(
                [str(program)],
                capture_output=True,
                text=True,
                timeout=30,
                env={**os.environ, "OIPCODEC_SIMD": cap},
            ).stdout
            for cap in ("", "1", "0")
        ]
    assert answers["msvc"] == answers["gnu"], answers
    assert answers["gnu"][2] == "0", answers  # the program ran and the cap was read


# A macro or a file-scope function/table is defined in one header only. Defining the same thing
# in two headers compiles as long as the definitions agree (identical macro redefinitions are
# legal C, and a header's guard hides nothing from another), so this is checked on the text.
_MACRO = re.compile(r"^\s*#\s*define\s+(\w+)", re.MULTILINE)
_STATIC = re.compile(r"^(?:OIPCODEC_\w+\s+)?static\b[^;=(]*?\b(\w+)\s*(?:\(|\[|=)", re.MULTILINE)


def test_nothing_is_defined_in_two_headers() -> None:
    where: dict[str, set[str]] = defaultdict(set)
    for header in HEADERS:
        text = header.read_text()
        for name in _MACRO.findall(text) + _STATIC.findall(text):
            where[name].add(_name(header))
    twice = {name: sorted(files) for name, files in where.items() if len(files) > 1}
    assert not twice, f"defined in more than one header: {twice}"
    # Not vacuous: the shared helpers are found, once.
    assert where["oipcodec_clz64"] == {"common/compiler.h"}
    assert where["OIPCODEC_NOINLINE"] == {"common/compiler.h"}


def test_headers_are_ascii() -> None:
    # MSVC reads a source file in the system's code page unless told /utf-8 (warning C4819).
    bad = [_name(h) for h in HEADERS if not h.read_bytes().isascii()]
    assert not bad, f"non-ASCII bytes in {bad}"


def test_a_skip_reason_is_the_first_error_line() -> None:
    clang = (
        "In file included from <stdin>:1:\n"
        "/usr/include/stdlib.h:26:10: fatal error: 'bits/libc-header-start.h' file not found\n"
        "#include <bits/libc-header-start.h>\n"
        "         ^~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "1 error generated.\n"
    )
    assert _first_error(clang) == (
        "/usr/include/stdlib.h:26:10: fatal error: 'bits/libc-header-start.h' file not found"
    )
