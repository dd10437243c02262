"""What a native kernel family and its pure twin share, one module per family.

``oipcodec._native.<family>`` (Cython) and ``oipcodec._pure.<family>`` (Python) both import
``oipcodec._shared.<family>``: the argument checks, the codes a kernel stops with and the error
each becomes, the tables, and each kernel's contract (its docstring, given to both twins from
the family's ``CONTRACTS`` with :func:`contract`). That is what makes the twins accept the same
input and raise the same error with the same message. :mod:`.buffers` serves several families
(buffer views, BYTES elements). A code the native kernel needs as a C constant is declared here
once, in the family's ``C_CONSTANTS``, from which tools/gen_constants.py writes
``_native/<family>.pxd``.

May import: numpy, :mod:`oipcodec.errors`, :mod:`oipcodec.limits`, :mod:`oipcodec.datatypes`,
:mod:`oipcodec.types`; never ``_native``, ``_pure`` or anything above the kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["contract"]

F = TypeVar("F", bound=Callable[..., object])


def contract(contracts: Mapping[str, str]) -> Callable[[F], F]:
    """Give a kernel, as its docstring, its contract from a family's ``CONTRACTS`` table:
    both twins implement the one text, written once in ``_shared/<family>.py``."""

    def document(kernel: F) -> F:
        kernel.__doc__ = contracts[kernel.__name__]
        return kernel

    return document
