"""A griffe extension for the API reference (mkdocs.yml loads it): docstrings as users read them.

Two things static analysis cannot see or Markdown does not read:

- a kernel's docstring is given at import time by ``@contract(CONTRACTS)`` (the one text both
  twins share, in ``oipcodec._shared.<family>``); for a function of ``oipcodec._pure`` without a
  static docstring this takes the one Python sees at run time;
- the docstrings are written with reST roles (``:func:`load```) and ``::`` before an example;
  the roles become code spans, ``::`` a colon, and the indented example after it a fenced
  ``python`` block (``bash`` for a command line), which the site highlights (an indented
  Markdown block has no language and stays plain).
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import griffe

# The kernels imported for their docstrings are the ones griffe reads (mkdocs.yml: paths: [src]),
# also where oipcodec is not installed (docs/requirements.txt): the pure twins need no build.
_SRC = str(Path(__file__).resolve().parent.parent / "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):`~?\.?([^`]+)`")
_LITERAL = re.compile(r"(\S)::$", re.MULTILINE)
#: The first line of a literal block that is a command line, not Python.
_COMMAND = re.compile(r"^(\$ |pip |oipcodec |python -m |curl )")


class Docstrings(griffe.Extension):
    """Runtime docstrings for the kernels, and reST roles made into Markdown code spans."""

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        """Take a pure kernel's docstring from the running module when the source has none."""
        if func.docstring is None and func.path.startswith("oipcodec._pure."):
            with warnings.catch_warnings():  # unbuilt native kernels: same docstrings
                warnings.simplefilter("ignore", RuntimeWarning)
                module = importlib.import_module(func.module.path)
            doc = inspect.getdoc(getattr(module, func.name, None))
            if doc:
                func.docstring = griffe.Docstring(doc, parent=func)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Rewrite every docstring of the package once it is loaded."""
        _rewrite(pkg, set())


def _rewrite(obj: griffe.Object | griffe.Alias, seen: set[str]) -> None:
    if obj.is_alias or obj.path in seen:
        return
    seen.add(obj.path)
    if obj.docstring is not None:
        text = _ROLE.sub(r"`\1`", obj.docstring.value)
        obj.docstring.value = fence_literal_blocks(text)
    for member in obj.members.values():
        _rewrite(member, seen)


def fence_literal_blocks(text: str) -> str:
    """``text`` with each reST literal block (a paragraph ending in ``::``, then an indented
    block) made a fenced Markdown code block, and its ``::`` a colon (or nothing, alone)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.rstrip().endswith("::"):
            out.append(line)
            i += 1
            continue
        stripped = line.rstrip()
        if stripped.strip() != "::":
            out.append(_LITERAL.sub(r"\1:", stripped))
        base = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block: list[str] = []
        while j < len(lines) and (
            not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > base
        ):
            block.append(lines[j])
            j += 1
        while block and not block[-1].strip():
            block.pop()
        if not block:
            i += 1
            continue
        indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
        code = [b[indent:] for b in block]
        language = "bash" if _COMMAND.match(code[0]) else "python"
        pad = " " * base
        out += ["", f"{pad}```{language}", *(pad + c if c else "" for c in code), f"{pad}```", ""]
        i = j
    return "\n".join(out)
