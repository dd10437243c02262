"""No import cycle: neither the modules of src/oipcodec nor the C headers of csrc/ loop.

Python: every module under src/oipcodec, read with ast; an import inside a function counts
(it runs, only later), one under ``if TYPE_CHECKING:`` does not (it never runs). An edge goes
to the most specific module named (``from oipcodec.server import model`` ->
``oipcodec.server.model``), not to the packages above it, whose ``__init__`` Python runs
first but which a submodule never waits for.

C: every ``#include "..."`` of csrc/ counts, whatever preprocessor condition surrounds it,
and comments do not; a cycle makes what a header defines depend on which header a translation
unit names first. ``cdef extern from`` lines include nothing, so they are not edges.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "oipcodec"
CSRC = (Path(__file__).resolve().parents[2] / "csrc").resolve()
C_SOURCES = sorted(p for p in CSRC.rglob("*") if p.suffix in (".h", ".c"))

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterable[tuple[str, list[str]]]:
    """``(module, names)`` of every import that runs, ``names`` empty for ``import x``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)  # the body only runs for a type checker
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")
                if not is_package:
                    package = package[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            yield base, [alias.name for alias in node.names]
        stack.extend(ast.iter_child_nodes(node))


def python_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports."""
    paths = sorted(
        p for p in root.rglob("*") if p.suffix in (".py", ".pyx") and "_pb2" not in p.name
    )
    modules = {_module_name(p, root.parent): p for p in paths}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        text = path.read_text()
        if path.suffix == ".pyx":  # Cython: the Python-level imports, read with a pattern
            found: Iterable[tuple[str, list[str]]] = [
                (m.group(1), [n.strip() for n in m.group(2).split(",")])
                for m in re.finditer(r"^from (oipcodec[\w.]*) import ([\w, ]+)$", text, re.M)
            ] + [(m.group(1), []) for m in re.finditer(r"^import (oipcodec[\w.]*)", text, re.M)]
        else:
            found = _imports(ast.parse(text), name, path.name == "__init__.py")
        for target, names in found:
            if not target.startswith("oipcodec"):
                continue
            if not names:
                graph[name].add(_known(target, modules))
            for imported in names:
                whole = f"{target}.{imported}"
                graph[name].add(whole if whole in modules else _known(target, modules))
        graph[name].discard(name)
    return graph


def _known(target: str, modules: dict[str, Path]) -> str:
    """``target``, or the nearest package above it that is a module of the package."""
    while target not in modules and "." in target:
        target = target.rpartition(".")[0]
    return target


def includes(path: Path) -> set[Path]:
    """The files of csrc/ that ``path`` includes with quotes (found beside it or under csrc/)."""
    text = _COMMENT.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
    found = set()
    for name in _INCLUDE.findall(text):
        for base in (path.parent, CSRC):
            target = (base / name).resolve()
            if target.is_file():
                found.add(target)
                break
    return found


def cycles(graph: dict[Any, set[Any]]) -> list[list[Any]]:
    """One cycle through each strongly connected component of more than one node, and each
    node that names itself."""
    index: dict[Any, int] = {}
    low: dict[Any, int] = {}
    stack: list[Any] = []
    on_stack: set[Any] = set()
    components: list[list[Any]] = []

    def visit(node: Any) -> None:  # Tarjan
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
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_a_cycle(graph, set(component)) for component in components]


def _a_cycle(graph: dict[Any, set[Any]], component: set[Any]) -> list[Any]:
    """A path inside ``component`` from its first node back to it (breadth first)."""
    start = min(component)
    previous: dict[Any, Any] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & component):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"no cycle in {sorted(component)}")


def test_no_python_import_cycle() -> None:
    if not PACKAGE.is_dir():
        pytest.skip("sources are not next to the tests (an installed wheel)")
    found = cycles(python_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_a_cycle_through_a_lazy_import_is_found(tmp_path: Path) -> None:
    package = tmp_path / "oipcodec"
    (package / "server").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "server" / "__init__.py").write_text("")
    (package / "server" / "a.py").write_text("from oipcodec.server import b\n")
    (package / "server" / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from oipcodec.server.c import C\n"
        "def f():\n    from oipcodec.server.a import g\n"
    )
    (package / "server" / "c.py").write_text("from . import b\n")
    graph = python_graph(package)
    assert graph["oipcodec.server.b"] == {"oipcodec.server.a"}  # TYPE_CHECKING left out
    assert graph["oipcodec.server.c"] == {"oipcodec.server.b"}  # relative import resolved
    assert cycles(graph) == [["oipcodec.server.a", "oipcodec.server.b", "oipcodec.server.a"]]


def test_no_include_cycle_in_csrc() -> None:
    if not C_SOURCES:
        pytest.skip(f"no C sources at {CSRC}")
    found = cycles({path.resolve(): includes(path) for path in C_SOURCES})
    named = [" -> ".join(str(p.relative_to(CSRC)) for p in cycle) for cycle in found]
    assert not named, "#include cycles:\n" + "\n".join(named)


def test_the_cycle_finder_finds_mutual_and_self_includes(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.h", tmp_path / "b.h", tmp_path / "c.h"
    assert cycles({a: {b}, b: {c}, c: set()}) == []
    assert cycles({a: {b}, b: {a, c}, c: set()}) == [[a, b, a]]
    assert cycles({a: {a}}) == [[a, a]]


def test_includes_are_read_from_code_not_comments(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(f"{__name__}.CSRC", tmp_path)
    (tmp_path / "x.h").write_text('/* #include "y.h" */\n#if 0\n#  include "y.h"\n#endif\n')
    (tmp_path / "y.h").write_text('// #include "x.h"\n')
    assert includes(tmp_path / "x.h") == {(tmp_path / "y.h").resolve()}
    assert includes(tmp_path / "y.h") == set()
