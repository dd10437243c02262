"""Pure-Python/numpy twins of the native kernels: same names, same behaviour, same errors.

They are the reference the native kernels are tested against, and the fallback used when the
extension is not built or ``OIPCODEC_PURE=1`` is set. A twin imports only ``oipcodec._shared``
(what it shares with its native twin), :mod:`oipcodec.errors`, :mod:`oipcodec.limits`,
:mod:`oipcodec.datatypes` and numpy. Use the kernels through :mod:`oipcodec.kernels`.
"""
