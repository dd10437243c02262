"""The house rules of the source's words (issue 33; docs/development.md, "House style for
words"): a module docstring says what the module is for, its invariants and where the docs
are, in about 15 lines (at most 20 here); a comment states a decision, its invariant and one
reason, and a measured figure appears only as that reason with a link to docs/measurements.md.
Dates, run logs and before/after series ("118 -> 164 req/s", "3.5 ms, now 1.3", "6 alternating
runs") go stale without a signal: they belong in docs/measurements.md, so none may appear in
src/ or csrc/.

The files are read as text (URLs taken out: a dated page address is a citation, not a
measurement), so a figure in a comment, a docstring or a message counts alike.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "oipcodec"
SOURCES = [ROOT / "src", ROOT / "csrc"]
MAX_DOCSTRING_LINES = 20

#: What a comment may not hold, with the reason it is refused.
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_UNIT = r"(?:req/s|requests/s|[kMG]B/s|ms|us|µs|ns|s|x|%)"
DATED_FIGURES = {
    "a date": re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b"),
    "a run log": re.compile(
        r"\balternating runs?\b|\b(?:means?|medians?|best|average) of \d+ (?:\w+ )?runs\b"
    ),
    "a before/after series (->)": re.compile(
        rf"{_NUMBER}\s*{_UNIT}?\s*(?:->|→)\s*{_NUMBER}\s*{_UNIT}(?![\w-])"
    ),
    "a before/after series (, now)": re.compile(
        rf"{_NUMBER}\s*{_UNIT}\s*,?\s+(?:and\s+)?now\s+{_NUMBER}"
    ),
    "a before/after series (vs)": re.compile(rf"{_NUMBER}\s*{_UNIT}?\s+vs\.?\s+{_NUMBER}"),
    "a before/after series (from .. to)": re.compile(
        rf"\bfrom\s+{_NUMBER}\s*{_UNIT}?\s+to\s+{_NUMBER}\s*{_UNIT}(?![\w-])"
    ),
}
#: A measured figure: a time, a throughput, a share of the CPU or a speed-up. It may stand in a
#: comment only as the one reason for a decision, with docs/measurements.md named within
#: ``_LINK_LINES`` lines of it (where the run that gave it is written down).
MEASURED = re.compile(
    r"(?<![\w.])\d[\d,.]*[ -]?(?:ms|us|µs|ns|req/s|requests/s|[kMG]B/s)(?!\w)"
    r"|\d(?:\.\d+)?% (?:faster|slower|fewer|more|less|of the)\b"
    r"|\d(?:\.\d+)?x (?:faster|slower)\b"
)
#: A machine a figure was measured on ("on one Zen 4 core"; not "Zen 4 and later").
MACHINE = re.compile(
    r"\bon (?:one|a|an|this|the|my) (?:[\w-]+ ){0,2}"
    r"(?:Zen ?\d|Xeon|EPYC|Ryzen|Core i[3579]|Apple M\d|Graviton)\b"
)
_LINK_LINES = 4
#: "2.24 to 1.96 ms" is a series, "1 to 3 ms" a range: a range ascends.
_TO_SERIES = re.compile(rf"({_NUMBER})\s*{_UNIT}?\s+to\s+({_NUMBER})\s*{_UNIT}(?![\w-])")
_URL = re.compile(r"\b\w+://\S+")
#: What starts a comment or docstring line that continues the one before.
_CONTINUATION = re.compile(r"^\s*(?:#:?|\*|//)?\s*")


def _python_modules() -> list[Path]:
    return sorted(
        path
        for suffix in ("*.py", "*.pyx")
        for path in SRC.rglob(suffix)
        if "_pb2" not in path.name
    )


def _text_files() -> list[Path]:
    suffixes = {".py", ".pyx", ".pxd", ".pyi", ".h", ".c", ".cc", ".cpp"}
    return sorted(
        path
        for root in SOURCES
        for path in root.rglob("*")
        if path.suffix in suffixes and "_pb2" not in path.name and not _cython_output(path)
    )


def _cython_output(path: Path) -> bool:
    """A .c beside the .pyx of its name: Cython's output of an in-place build, not source."""
    return path.suffix == ".c" and path.with_suffix(".pyx").exists()


_PYX_DOCSTRING = re.compile(
    r'\A(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*[rRuU]?("""|\'\'\')(.*?)\1', re.DOTALL
)


def docstring_lines(path: Path) -> int:
    """The lines of the module docstring of ``path``, its quotes included; for a Cython module
    without one, the lines of its header comment (0 without either)."""
    text = path.read_text()
    if path.suffix == ".py":
        node = ast.parse(text)
        if not (
            node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
            and isinstance(node.body[0].value.value, str)
        ):
            return 0
        first = node.body[0]
        return (first.end_lineno or first.lineno) - first.lineno + 1
    match = _PYX_DOCSTRING.match(text)  # Cython: the first string literal, before any code
    if match:
        return text[match.start(1) : match.end()].count("\n") + 1
    # else the header comment the kernels open with in its place (compiler directives aside)
    header = 0
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header += not re.match(r"#\s*(?:cython|distutils):", line)
    return header


def dated_figures(text: str) -> list[str]:
    """``line: what: text`` for each dated figure in ``text`` (URLs aside). Each line is read
    with the next one (its comment marker dropped), so a series broken over two lines counts."""
    lines = [_URL.sub("", line) for line in text.splitlines()]
    found = []
    for number, line in enumerate(lines, 1):
        following = lines[number] if number < len(lines) else ""
        window = line + " " + _CONTINUATION.sub("", following)

        for what, pattern in DATED_FIGURES.items():
            if any(m.start() < len(line) for m in pattern.finditer(window)):
                found.append(f"{number}: {what}: {line.strip()}")
        for match in _TO_SERIES.finditer(window):
            first, second = (float(g.replace(",", "")) for g in match.groups())
            if first > second and match.start() < len(line):
                found.append(f"{number}: a before/after series (to): {line.strip()}")
    return found


def unlinked_figures(text: str) -> list[str]:
    """``line: text`` for each measured figure, or machine, with no link to
    docs/measurements.md within ``_LINK_LINES`` lines of it."""
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        bare = _URL.sub("", line)
        if not (MEASURED.search(bare) or MACHINE.search(bare)):
            continue
        near = lines[max(0, number - 1 - _LINK_LINES) : number + _LINK_LINES]
        if not any("measurements.md" in other for other in near):
            found.append(f"{number}: {line.strip()}")
    return found


def test_module_docstrings_are_short() -> None:
    modules = _python_modules()
    assert len(modules) > 50  # not vacuous: the package's modules, the .pyx kernels among them
    assert any(docstring_lines(path) for path in modules if path.suffix == ".pyx")
    long = {}
    for path in modules:
        lines = docstring_lines(path)
        if lines > MAX_DOCSTRING_LINES:
            long[str(path.relative_to(ROOT))] = lines
    assert not long, (
        f"module docstrings over {MAX_DOCSTRING_LINES} lines (keep the purpose, the invariants "
        "and a link; move the rest to docs/):\n" + "\n".join(f"{n:4d} {p}" for p, n in long.items())
    )


def test_no_dated_figures_in_the_source() -> None:
    files = _text_files()
    assert any(path.suffix == ".h" for path in files) and len(files) > 80
    found = {}
    for path in files:
        hits = dated_figures(path.read_text(errors="replace"))
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert not found, (
        "dated figures (move them to docs/measurements.md; keep one reason with a link):\n"
        + "\n".join(f"{path}:{hit}" for path, hits in found.items() for hit in hits)
    )


def test_measured_figures_link_their_page() -> None:
    found = {}
    for path in _text_files():
        hits = unlinked_figures(path.read_text(errors="replace"))
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert not found, (
        "measured figures without docs/measurements.md near them (keep one as the reason, with "
        "the link; move the rest there):\n"
        + "\n".join(f"{path}:{hit}" for path, hits in found.items() for hit in hits)
    )


@pytest.mark.parametrize(
    "text",
    [
        "# the zeroing pass (2.6% of the server's CPU on 3 MB request bodies)",
        "process 531-616 us of CPU per request through urllib3, 355 us through a plain pool",
        " * (on 1M standard normal values on one Zen 4 core: scalar 14.0 ms, AVX2",
        "# the split loops ran 13% faster",
    ],
)
def test_an_unlinked_figure_is_found(text: str) -> None:
    assert unlinked_figures(text)
    linked = text + '\n# (docs/measurements.md, "JSON writer")'
    assert unlinked_figures(linked) == []


@pytest.mark.parametrize(
    "text",
    [
        "        + f\" {'MB/s':>8} {'p50 ms':>8} {'p90 ms':>8}\"",
        "#: Seconds one example program may take.",
        "    timeout: float = 60,  # seconds",
        "Triton's default is 64 MB.",
        "#define OIPCODEC_SIMD_AVX512 2 /* AVX-512 F, CD, BW, DQ, VL (Skylake-SP, Zen 4 and later) */",
    ],
)
def test_a_figure_that_is_not_a_measurement_is_not_flagged(text: str) -> None:
    assert unlinked_figures(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "thread then spends on other requests' I/O (one process: 118 -> 164 req/s in",
        "served 9% fewer image requests (means of 6 alternating runs, 199 -> 217",
        "# measured 2026-03-14 on the CI runner",
        "the encoder took 3.5 ms, now 1.3 (one pass)",
        "server CPU time per request 9.4 and 10.5 ms vs 7.6 and 9.3 ms;",
        "requests/s 158 and 142 vs 199 and 161",
        " * split loops ran 13% faster on 150,528 values (2.24 to 1.96 ms), the text unchanged.",
        "went from 20 ms to 12 ms",
        "a median of 5 runs",
        "# faster by a third (118 ->\n# 164 req/s on one process)",
        " * split loops ran faster (2.24 to\n * 1.96 ms)",
    ],
)
def test_a_dated_figure_is_found(text: str) -> None:
    assert dated_figures(text)


@pytest.mark.parametrize(
    "text",
    [
        " * the 64x64 -> 128-bit multiply.",
        " *   (2014, http://0x80.pl/notesen/2014-10-12-parsing-decimal-numbers-part-1-swar.html)",
        "def f(x: int) -> int:",
        "    a timeout of 1 to 3 s between retries",
        "levels 1 to 9; 0 -> no compression",
        "shape [2, 2] holds 4 elements, 2**62 refused",
        "(13% faster: docs/measurements.md#json-writer)",
    ],
)
def test_legitimate_text_is_not_flagged(text: str) -> None:
    assert dated_figures(text) == []


def test_a_long_docstring_is_counted(tmp_path: Path) -> None:
    py = tmp_path / "m.py"
    py.write_text('"""one\n' + "more\n" * 20 + '"""\n\nX = 1\n')
    pyx = tmp_path / "m.pyx"
    pyx.write_text('# cython: language_level=3\n"""one\ntwo\n"""\n\ncdef int x = 1\n')
    assert docstring_lines(py) == 22
    assert docstring_lines(pyx) == 3
    pyx.write_text("# cython: boundscheck=False\n# one\n#\n# two\n\ncdef int x = 1\n")
    assert docstring_lines(pyx) == 3
    (tmp_path / "none.py").write_text("X = 1\n")
    assert docstring_lines(tmp_path / "none.py") == 0


#: The most lines a module of the server may hold (issue 43: model.py had grown to 838, one
#: class of 510): past it, a module holds more than one idea.
MAX_SERVER_MODULE_LINES = 600


def test_no_server_module_is_over_600_lines() -> None:
    if not SRC.is_dir():
        pytest.skip("sources are not next to the tests (an installed wheel)")
    long = {
        str(path.relative_to(SRC)): count
        for path in sorted((SRC / "server").rglob("*.py"))
        if (count := len(path.read_text().splitlines())) > MAX_SERVER_MODULE_LINES
    }
    assert long == {}
