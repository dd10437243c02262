"""Former public names, still found for one release with a :class:`DeprecationWarning`.

A module that renamed or moved public names sets ``__getattr__ = moved(__name__, {...})``;
the table maps each former name to ``"module"`` or ``"module:attribute"``, imported only when
the name is used. The CHANGELOG lists every entry; the next release removes them.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def moved(
    module: str,
    table: Mapping[str, str],
    fallback: Callable[[str], object] | None = None,
) -> Callable[[str], object]:
    """A module ``__getattr__`` that answers each former name in ``table`` with a warning,
    and any other name with ``fallback`` (a module's own lazy attributes) when given.

    The fallback is called from here rather than wrapping the result, so that the warning
    still points at the line that used the former name (``stacklevel`` counts frames)."""

    def __getattr__(name: str) -> object:
        try:
            target = table[name]
        except KeyError:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
        where, _, attribute = target.partition(":")
        value: object = importlib.import_module(where)
        if attribute:
            value = getattr(value, attribute)
        new = f"{where}.{attribute}" if attribute else where
        warnings.warn(
            f"{module}.{name} is deprecated and will be removed in the next release: use {new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__


def forwarded(former: str, target: str, use: str) -> Callable[..., Any]:
    """A former method, kept for one release: it warns, then calls ``target``
    (``"module:function"``, imported on the call, so a class need not import the layer its
    work moved to) with the same arguments, ``self`` first; ``use`` names what replaces it."""

    def method(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"{former} is deprecated and will be removed in the next release: use {use}",
            DeprecationWarning,
            stacklevel=2,
        )
        where, _, attribute = target.partition(":")
        return getattr(importlib.import_module(where), attribute)(*args, **kwargs)

    method.__doc__ = f"Deprecated: use ``{use}``."
    return method
