"""A griffe extension for the API reference (mkdocs.yml loads it): docstrings as users read them.

Two things static analysis cannot see or Markdown does not read:

- a kernel's docstring is given at import time by ``@contract(CONTRACTS)`` (the one text both
  twins share, in ``oipcodec._shared.<family>``); for a function of ``oipcodec._pure`` without a
  static docstring this takes the one Python sees at run time;
- the docstrings are written with reST roles (``:func:`load```) and ``::`` before an example;
  the roles become code spans and ``::`` a colon, so the Markdown renderer shows them cleanly.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):`~?\.?([^`]+)`")
_LITERAL = re.compile(r"(\S)::$", re.MULTILINE)


class Docstrings(griffe.Extension):
    """Runtime docstrings for the kernels, and reST roles made into Markdown code spans."""

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        """Take a pure kernel's docstring from the running module when the source has none."""
        if func.docstring is None and func.path.startswith("oipcodec._pure."):
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
        obj.docstring.value = _LITERAL.sub(r"\1:", text).replace("\n::\n", "\n")
    for member in obj.members.values():
        _rewrite(member, seen)
