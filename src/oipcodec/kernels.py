"""The kernel facade: the native kernels when they are built, else their pure twins.

Every kernel family is a module ``oipcodec._native.<family>`` (Cython) with a twin
``oipcodec._pure.<family>`` (Python/numpy) exporting the same names, and what both share in
``oipcodec._shared.<family>``. This module imports the names of one implementation:

- ``OIPCODEC_PURE=1`` in the environment selects the pure twins;
- otherwise the native kernels, or, when they are not built (a platform with no wheel and no
  compiler), the pure twins with a :class:`RuntimeWarning`.

:data:`IMPLEMENTATION` says which was chosen. :func:`load` gives either one as a namespace,
which is how every codec takes ``kernels=`` and how the tests run each kernel and each codec
against both implementations in one process.
"""

from __future__ import annotations

import importlib
import os
import warnings
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING

#: The kernel families, each a module in ``_native``, ``_pure`` and ``_shared``. The kernels
#: are the names each family's modules list in ``__all__`` (the one list of them; the twins'
#: lists are equal, tests/architecture/test_house.py).
FAMILIES: tuple[str, ...] = (
    "counters",
    "flatbuf",
    "framing",
    "fusedrest",
    "halffloat",
    "http11",
    "jsondecode",
    "jsonencode",
    "jsonscan",
    "layout",
    "pbwire",
    "topk",
    "v1text",
)

if TYPE_CHECKING:
    # The type checker reads the pure twins' signatures (the .pyi stubs of the native ones
    # match them, tests/kernels/test_stubs.py); at run time the names come from load().
    from oipcodec._pure.counters import *  # noqa: F403
    from oipcodec._pure.flatbuf import *  # noqa: F403
    from oipcodec._pure.framing import *  # noqa: F403
    from oipcodec._pure.fusedrest import *  # noqa: F403
    from oipcodec._pure.halffloat import *  # noqa: F403
    from oipcodec._pure.http11 import *  # noqa: F403
    from oipcodec._pure.jsondecode import *  # noqa: F403
    from oipcodec._pure.jsonencode import *  # noqa: F403
    from oipcodec._pure.jsonscan import *  # noqa: F403
    from oipcodec._pure.layout import *  # noqa: F403
    from oipcodec._pure.pbwire import *  # noqa: F403
    from oipcodec._pure.topk import *  # noqa: F403
    from oipcodec._pure.v1text import *  # noqa: F403

#: What a codec's ``kernels=`` takes: this module (the default) or a namespace from :func:`load`.
Kernels = ModuleType | SimpleNamespace


def load(implementation: str, *, partial: bool = False) -> SimpleNamespace:
    """Every kernel of one implementation as a namespace.

    Parameters
    ----------
    implementation
        ``"native"`` or ``"pure"``.
    partial
        Hold only the families that are built, instead of raising (the tests use this to run
        each family's native kernels as soon as that family is built).

    Raises
    ------
    ImportError
        A family's module of that implementation is not built, unless ``partial``.
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


def _chosen() -> SimpleNamespace:
    """The implementation this module exports, chosen as the module docstring says."""
    if os.environ.get("OIPCODEC_PURE", "") in ("", "0"):
        try:
            return load("native")
        except ImportError as exc:
            warnings.warn(
                f"oipcodec's native kernels are not built ({exc}); using the pure-Python "
                "twins, which are much slower. Install a binary wheel or build with a C "
                "compiler.",
                RuntimeWarning,
                stacklevel=3,
            )
    return load("pure")


_KERNELS = vars(_chosen())
IMPLEMENTATION: str = _KERNELS.pop("IMPLEMENTATION")
globals().update(_KERNELS)

__all__ = ["FAMILIES", "IMPLEMENTATION", "Kernels", "load", "native_available", *sorted(_KERNELS)]
