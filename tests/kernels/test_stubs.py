"""Each native kernel's stub (``_native/<family>.pyi``) states its pure twin's signature.

The type checker reads the stubs for the native kernels, and the twins are one contract: a
parameter the stub names differently, a default it gives differently or a keyword-only mark it
lacks would type-check calls the other implementation refuses. The stub is read with ast (it is
never imported), the twin with inspect.signature; a literal default must be spelled out, an
object default (a ``Limits``) is ``...``; annotations are not compared.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

from oipcodec import kernels

NATIVE = Path(__file__).resolve().parents[2] / "src" / "oipcodec" / "_native"
_KIND = {
    "posonly": inspect.Parameter.POSITIONAL_ONLY,
    "arg": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "vararg": inspect.Parameter.VAR_POSITIONAL,
    "kwonly": inspect.Parameter.KEYWORD_ONLY,
    "kwarg": inspect.Parameter.VAR_KEYWORD,
}
_NO_DEFAULT = "<none>"


def _stub_functions(path: Path) -> dict[str, list[tuple[str, Any, Any]]]:
    """Each top-level function of a stub: its parameters as (name, kind, default)."""
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaults: list[Any] = [_NO_DEFAULT] * (len(positional) - len(args.defaults))
        defaults += [ast.literal_eval(d) for d in args.defaults]
        params = [
            (a.arg, _KIND["posonly" if a in args.posonlyargs else "arg"], d)
            for a, d in zip(positional, defaults, strict=True)
        ]
        if args.vararg:
            params.append((args.vararg.arg, _KIND["vararg"], _NO_DEFAULT))
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            params.append(
                (a.arg, _KIND["kwonly"], _NO_DEFAULT if d is None else ast.literal_eval(d))
            )
        if args.kwarg:
            params.append((args.kwarg.arg, _KIND["kwarg"], _NO_DEFAULT))
        found[node.name] = params
    return found


def _stub_default(value: Any) -> Any:
    """A default as a stub states it: a literal spelled out, any other object as ``...``."""
    if value is inspect.Parameter.empty:
        return _NO_DEFAULT
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    return ...


def _twin_parameters(function: Any) -> list[tuple[str, Any, Any]]:
    return [
        (p.name, p.kind, _stub_default(p.default))
        for p in inspect.signature(function).parameters.values()
    ]


def test_stub_reader_sees_kinds_and_defaults(tmp_path: Path) -> None:
    # What the comparison relies on: a keyword-only mark and a default are read from the stub.
    stub = tmp_path / "s.pyi"
    stub.write_text("def f(a, /, b: int = 1, *c, d: str = 'x', e, **f) -> None: ...\n")
    assert _stub_functions(stub)["f"] == [
        ("a", inspect.Parameter.POSITIONAL_ONLY, _NO_DEFAULT),
        ("b", inspect.Parameter.POSITIONAL_OR_KEYWORD, 1),
        ("c", inspect.Parameter.VAR_POSITIONAL, _NO_DEFAULT),
        ("d", inspect.Parameter.KEYWORD_ONLY, "x"),
        ("e", inspect.Parameter.KEYWORD_ONLY, _NO_DEFAULT),
        ("f", inspect.Parameter.VAR_KEYWORD, _NO_DEFAULT),
    ]


@pytest.mark.parametrize("family", kernels.FAMILIES)
def test_stub_signatures_match_the_pure_twin(family: str) -> None:
    pure = importlib.import_module(f"oipcodec._pure.{family}")
    stub = _stub_functions(NATIVE / f"{family}.pyi")
    functions = [n for n in pure.__all__ if inspect.isfunction(getattr(pure, n))]
    assert functions, f"oipcodec._pure.{family} exports no function"
    differences = {
        name: {"stub": stub.get(name), "pure": _twin_parameters(getattr(pure, name))}
        for name in functions
        if stub.get(name) != _twin_parameters(getattr(pure, name))
    }
    assert differences == {}, f"_native/{family}.pyi differs from _pure/{family}.py"
