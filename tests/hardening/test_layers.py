"""The floors of the package: each module imports only the floors below it (or its own).

Read from the source with ast, so a lazy import inside a function counts too. The rules are the
ones each package's ``__init__`` docstring states.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "oipcodec"

FOUNDATION = {"_deprecated", "_version", "datatypes", "errors", "limits", "types"}
KERNEL_INTERNALS = {"_native", "_pure", "_shared"}
CODECS = {"raw", "rest", "pb", "proto", "sharedmem", "compression", "trtis_v1", "v1", "graphpipe"}

# floor of a module (by its first component under oipcodec) -> what it may import
ALLOWED: dict[str, set[str]] = {
    **{name: FOUNDATION for name in FOUNDATION},
    "_shared": FOUNDATION | {"_shared"},
    "_native": FOUNDATION | {"_shared", "_native"},
    "_pure": FOUNDATION | {"_shared", "_pure"},
    "kernels": {"_native", "_pure"},
    # The codecs use the buffer helpers and the protobuf varint of the kernels' shared layer.
    **{name: FOUNDATION | CODECS | {"kernels", "_shared"} for name in CODECS},
    "server": FOUNDATION | CODECS | {"kernels", "server"},
    "client": FOUNDATION | CODECS | {"kernels", "client"},
    "testing": FOUNDATION | CODECS | {"kernels", "server", "client", "testing"},
    "compat": FOUNDATION | CODECS | {"kernels", "server", "compat"},
}

# Backward-compatible aliases that reach up on purpose: ``oipcodec.server.background`` (and
# ``oipcodec.server.runtime.background``) name the test helper that moved to oipcodec.testing.
ALIASES: dict[str, set[str]] = {"server/__init__.py": {"testing"}, "server/runtime.py": {"testing"}}


def _floor(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return parts[0]


def _imported(tree: ast.AST) -> set[str]:
    """The oipcodec components a module imports (``oipcodec.server.http`` -> ``server``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "oipcodec":
                found.update(alias.name for alias in node.names)
                continue
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "oipcodec" and len(parts) > 1:
                found.add(parts[1])
    return found


SOURCES = sorted(p for p in SRC.rglob("*") if p.suffix in (".py", ".pyx") and "_pb2" not in p.name)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_stay_below(path: Path) -> None:
    floor = _floor(path)
    if floor not in ALLOWED:  # the top: bench, cli, __init__, __main__
        return
    text = path.read_text()
    if path.suffix == ".pyx":  # Cython: the Python-level imports, read with a pattern
        imported = set(
            re.findall(r"^(?:from|import) oipcodec\.(\w+)[\w.]* (?:import|$)", text, re.M)
        )
    else:
        imported = _imported(ast.parse(text))
    imported -= {floor}
    # ``from oipcodec import datatypes, kernels`` names modules; anything else (a re-exported
    # kernel name such as ``flatten``) belongs to the facade.
    imported = {name if (SRC / name).exists() or (SRC / f"{name}.py").exists() else "kernels"
                for name in imported}  # fmt: skip
    allowed = ALLOWED[floor] | ALIASES.get(str(path.relative_to(SRC)), set())
    assert imported <= allowed, sorted(imported - allowed)


def _private_names(tree: ast.AST, floor: str) -> list[str]:
    """``_names`` a module imports from another floor's module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "oipcodec" or (len(parts) > 1 and parts[1] == floor):
                continue
            found += [
                f"{node.module}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.endswith("__")
            ]
    return found


@pytest.mark.parametrize(
    "path", [p for p in SOURCES if p.suffix == ".py"], ids=lambda p: str(p.relative_to(SRC))
)
def test_no_private_name_is_imported_from_another_floor(path: Path) -> None:
    assert _private_names(ast.parse(path.read_text()), _floor(path)) == []


def test_a_lazy_upward_import_is_seen() -> None:
    tree = ast.parse("def f():\n    from oipcodec.client import HttpClient\n")
    assert _imported(tree) == {"client"}
    assert not _imported(tree) <= ALLOWED["server"]
    tree = ast.parse("from oipcodec.types import _carries\n")
    assert _private_names(tree, "_shared") == ["oipcodec.types._carries"]


def test_sources_were_found() -> None:
    if not SRC.is_dir():
        pytest.skip("sources are not next to the tests (an installed wheel)")
    assert len(SOURCES) > 40
