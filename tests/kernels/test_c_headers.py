"""The C headers in csrc/oipcodec build together and one by one, warning-free.

Every header must compile on its own (it includes what it uses) and all of them in one
translation unit (no helper, macro or table defined twice), with ``-std=c11 -Wall -Wextra
-Werror``. The compiler is $CC, else the first of cc, gcc and clang on PATH; without one (or
with an MSVC-style compiler, whose flags differ) the tests skip. csrc/ is found next to tests/,
in the source tree as in cibuildwheel's copy of it (pyproject.toml, test-sources).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parents[2] / "csrc"
HEADERS = sorted((CSRC / "oipcodec").glob("*.h"))
FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"]


def _compiler() -> list[str] | None:
    """The C compiler command (with any arguments $CC carries), or None."""
    env = os.environ.get("CC", "").strip()
    if env:
        command = shlex.split(env)
        return command if shutil.which(command[0]) else None
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    return None


COMPILER = _compiler()

pytestmark = pytest.mark.skipif(not HEADERS, reason=f"no C headers at {CSRC / 'oipcodec'}")

NO_CC = (
    "no C compiler on PATH (cc, gcc, clang or $CC)"
    if COMPILER is None
    else "an MSVC-style compiler takes other flags than -std=c11 -Wall -Wextra -Werror"
    if Path(COMPILER[0]).stem.lower() in ("cl", "clang-cl")
    else ""
)
needs_cc = pytest.mark.skipif(bool(NO_CC), reason=NO_CC)


def _compile(tmp_path: Path, headers: list[Path]) -> None:
    """Compile a translation unit that includes `headers`, in order; fail with the output."""
    assert COMPILER is not None
    source = tmp_path / "unit.c"
    source.write_text("".join(f'#include "oipcodec/{h.name}"\n' for h in headers))
    command = [*COMPILER, *FLAGS, "-I", str(CSRC), "-c", str(source), "-o", str(tmp_path / "u.o")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and not result.stderr.strip(), (
        f"{shlex.join(command)} failed:\n{result.stdout}{result.stderr}"
    )


@needs_cc
def test_all_headers_in_one_translation_unit(tmp_path: Path) -> None:
    _compile(tmp_path, HEADERS)


@needs_cc
def test_all_headers_in_one_translation_unit_reversed(tmp_path: Path) -> None:
    # The other order too: a header may not lean on what an earlier one happened to include.
    _compile(tmp_path, HEADERS[::-1])


@needs_cc
@pytest.mark.parametrize("header", HEADERS, ids=lambda h: h.name)
def test_header_compiles_alone(tmp_path: Path, header: Path) -> None:
    _compile(tmp_path, [header])


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
            where[name].add(header.name)
    twice = {name: sorted(files) for name, files in where.items() if len(files) > 1}
    assert not twice, f"defined in more than one header: {twice}"
    # Not vacuous: the shared helpers are found, once.
    assert where["oipcodec_clz64"] == {"common.h"}
    assert where["OIPCODEC_NOINLINE"] == {"common.h"}


def test_headers_are_ascii() -> None:
    # MSVC reads a source file in the system's code page unless told /utf-8 (warning C4819).
    bad = [h.name for h in HEADERS if not h.read_bytes().isascii()]
    assert not bad, f"non-ASCII bytes in {bad}"
