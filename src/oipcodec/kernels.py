"""The kernel facade: the native kernels when they are built, else their pure twins.

Every kernel family is a module ``oipcodec._native.<family>`` (Cython) with a twin
``oipcodec._pure.<family>`` (Python/numpy) exporting the same names, listed in its ``__all__``.
This module re-exports the names of the chosen implementation:

- ``OIPCODEC_PURE=1`` in the environment selects the pure twins;
- otherwise the native kernels, or, when they are not built (a platform with no wheel and no
  compiler), the pure twins with a :class:`RuntimeWarning`.

:data:`IMPLEMENTATION` says which was chosen; :func:`load` gives either one by name, which is
how the tests run every kernel against both in one process.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import warnings
from types import SimpleNamespace
from typing import TYPE_CHECKING

__all__ = ["FAMILIES", "IMPLEMENTATION", "load", "native_available"]

from oipcodec import _pure

#: The kernel families: every public module of ``oipcodec._pure``, each with a native twin.
FAMILIES: tuple[str, ...] = tuple(
    sorted(m.name for m in pkgutil.iter_modules(_pure.__path__) if not m.name.startswith("_"))
)


def load(implementation: str, *, partial: bool = False) -> SimpleNamespace:
    """Every kernel of one implementation (``"native"`` or ``"pure"``) as a namespace.

    Raises :class:`ImportError` when a family's module of that implementation is not built,
    unless ``partial`` is true: then the namespace holds the families that are (the tests use
    this to run each family's native kernels as soon as that family is built).
    """
    if implementation not in ("native", "pure"):
        raise ValueError(f"implementation must be 'native' or 'pure', got {implementation!r}")
    kernels = SimpleNamespace(IMPLEMENTATION=implementation)
    for family in FAMILIES:
        try:
            module = importlib.import_module(f"oipcodec._{implementation}.{family}")
        except ImportError:
            if partial:
                continue
            raise
        for name in module.__all__:
            setattr(kernels, name, getattr(module, name))
    return kernels


def native_available() -> bool:
    """Whether every native kernel module is built and importable."""
    try:
        load("native")
    except ImportError:
        return False
    return True


def _choose() -> SimpleNamespace:
    if os.environ.get("OIPCODEC_PURE", "") not in ("", "0"):
        return load("pure")
    try:
        return load("native")
    except ImportError as exc:
        warnings.warn(
            f"oipcodec's native kernels are not built ({exc}); using the pure-Python twins, "
            "which are much slower. Install a binary wheel or build with a C compiler.",
            RuntimeWarning,
            stacklevel=3,
        )
        return load("pure")


if TYPE_CHECKING:
    # The pure twins are the typed reference; the native modules have matching .pyi stubs.
    from oipcodec._pure.framing import *  # noqa: F403
    from oipcodec._pure.halffloat import *  # noqa: F403
    from oipcodec._pure.jsondecode import *  # noqa: F403
    from oipcodec._pure.jsonencode import *  # noqa: F403
    from oipcodec._pure.jsonscan import *  # noqa: F403
    from oipcodec._pure.layout import *  # noqa: F403
    from oipcodec._pure.pbwire import *  # noqa: F403

    IMPLEMENTATION: str
else:
    globals().update(vars(_choose()))
