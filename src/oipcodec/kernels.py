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

__all__ = [
    "FAMILIES",
    "IMPLEMENTATION",
    "Kernels",
    "load",
    "native_available",
    # the kernels
    "array_to_json",
    "bytes_offsets",
    "classification_strings",
    "deserialize_bytes",
    "flatten",
    "json_to_array",
    "little_endian_view",
    "locate_data",
    "pack_bf16",
    "pack_strings",
    "pack_fp16",
    "read_flatbuffer",
    "read_infer_message",
    "scan_request_header",
    "scan_response_header",
    "serialize_bytes",
    "top_k",
    "unflatten",
    "uninitialized_bytearray",
    "unpack_bf16",
    "unpack_fp16",
    "view_bf16",
    "write_flatbuffer",
    "write_infer_message",
]

#: The kernel families, each a module in ``_native``, ``_pure`` and ``_shared``.
FAMILIES: tuple[str, ...] = (
    "flatbuf",
    "framing",
    "halffloat",
    "jsondecode",
    "jsonencode",
    "jsonscan",
    "layout",
    "pbwire",
    "topk",
    "v1text",
)

#: What a codec's ``kernels=`` takes: this module (the default) or a namespace from :func:`load`.
Kernels = ModuleType | SimpleNamespace

IMPLEMENTATION: str = "pure"
if os.environ.get("OIPCODEC_PURE", "") in ("", "0"):
    try:
        from oipcodec._native.flatbuf import pack_strings, read_flatbuffer, write_flatbuffer
        from oipcodec._native.framing import bytes_offsets, deserialize_bytes, serialize_bytes
        from oipcodec._native.halffloat import (
            pack_bf16,
            pack_fp16,
            unpack_bf16,
            unpack_fp16,
            view_bf16,
        )
        from oipcodec._native.jsondecode import json_to_array
        from oipcodec._native.jsonencode import array_to_json
        from oipcodec._native.jsonscan import locate_data
        from oipcodec._native.layout import (
            flatten,
            little_endian_view,
            unflatten,
            uninitialized_bytearray,
        )
        from oipcodec._native.pbwire import read_infer_message, write_infer_message
        from oipcodec._native.topk import classification_strings, top_k
        from oipcodec._native.v1text import scan_request_header, scan_response_header

        IMPLEMENTATION = "native"
    except ImportError as exc:
        warnings.warn(
            f"oipcodec's native kernels are not built ({exc}); using the pure-Python twins, "
            "which are much slower. Install a binary wheel or build with a C compiler.",
            RuntimeWarning,
            stacklevel=2,
        )
if IMPLEMENTATION == "pure":
    from oipcodec._pure.flatbuf import pack_strings, read_flatbuffer, write_flatbuffer
    from oipcodec._pure.framing import (
        bytes_offsets,
        deserialize_bytes,
        serialize_bytes,
    )
    from oipcodec._pure.halffloat import (
        pack_bf16,
        pack_fp16,
        unpack_bf16,
        unpack_fp16,
        view_bf16,
    )
    from oipcodec._pure.jsondecode import json_to_array
    from oipcodec._pure.jsonencode import array_to_json
    from oipcodec._pure.jsonscan import locate_data
    from oipcodec._pure.layout import (
        flatten,
        little_endian_view,
        unflatten,
        uninitialized_bytearray,
    )
    from oipcodec._pure.pbwire import (
        read_infer_message,
        write_infer_message,
    )
    from oipcodec._pure.topk import classification_strings, top_k
    from oipcodec._pure.v1text import scan_request_header, scan_response_header


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
