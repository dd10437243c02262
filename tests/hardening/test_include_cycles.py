"""No ``#include`` cycle among the C headers of csrc/: each header includes downward only.

A cycle (two headers including each other "when included alone") makes what a header defines
depend on which one a translation unit names first. Read from the text: every ``#include
"..."`` counts, whatever preprocessor condition surrounds it, and comments do not. The
``cdef extern from`` lines of the .pyx/.pxd files name headers but include nothing into them,
so they are not edges here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSRC = (Path(__file__).resolve().parents[2] / "csrc").resolve()
SOURCES = sorted(p for p in CSRC.rglob("*") if p.suffix in (".h", ".c"))

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)


def _includes(path: Path) -> set[Path]:
    """The files of csrc/ that `path` includes with quotes (found beside it or under csrc/)."""
    text = _COMMENT.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
    found = set()
    for name in _INCLUDE.findall(text):
        for base in (path.parent, CSRC):
            target = (base / name).resolve()
            if target.is_file():
                found.add(target)
                break
    return found


def _cycles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """One cycle per strongly connected component of more than one file (or a self-include)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[list[Path]] = []

    def visit(node: Path) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    # The property the next test relies on: a mutual include is reported, a chain is not.
    a, b, c = tmp_path / "a.h", tmp_path / "b.h", tmp_path / "c.h"
    assert _cycles({a: {b}, b: {c}, c: set()}) == []
    assert _cycles({a: {b}, b: {a, c}, c: set()}) == [[a, b]]
    assert _cycles({a: {a}}) == [[a]]


def test_includes_are_read_from_code_not_comments(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(f"{__name__}.CSRC", tmp_path)
    (tmp_path / "x.h").write_text('/* #include "y.h" */\n#if 0\n#  include "y.h"\n#endif\n')
    (tmp_path / "y.h").write_text('// #include "x.h"\n')
    assert _includes(tmp_path / "x.h") == {(tmp_path / "y.h").resolve()}
    assert _includes(tmp_path / "y.h") == set()


@pytest.mark.skipif(not SOURCES, reason=f"no C sources at {CSRC}")
def test_no_include_cycle_in_csrc() -> None:
    graph = {path.resolve(): _includes(path) for path in SOURCES}
    cycles = [[str(p.relative_to(CSRC)) for p in cycle] for cycle in _cycles(graph)]
    assert cycles == [], f"#include cycles among csrc/ headers: {cycles}"
