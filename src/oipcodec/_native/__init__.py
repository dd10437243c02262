"""The compiled kernels: one Cython module per kernel family (``<family>.pyx``).

Each module exports the names of its pure twin ``oipcodec._pure.<family>`` with the same
behaviour and errors, and imports only ``oipcodec._shared`` (the checks, messages and
contracts both twins share), :mod:`oipcodec.errors`, :mod:`oipcodec.limits`, numpy and the C
headers in csrc/ (through the ``.pxd`` declarations here); never a pure twin. The
``<family>.pxd`` files that hold a ``cdef enum`` are written by tools/gen_constants.py from
``oipcodec._shared.<family>.C_CONSTANTS``; the others declare a C header each. Use the kernels
through :mod:`oipcodec.kernels`.
"""
