"""oipcodec: a native-accelerated tensor codec for the Open Inference Protocol.

The Open Inference Protocol (OIP, also KServe V2 or the Triton v2 protocol) moves tensors as
JSON, as JSON plus binary tensor data, or as protobuf. oipcodec does the per-element work of
those encodings in Cython kernels (with pure-Python twins as reference and fallback); see
:mod:`oipcodec.kernels` for which one is in use.

The layers, each importing only those below it:

- the kernels: ``_native`` (Cython) and ``_pure`` (Python), one module per family, sharing
  ``_shared``; :mod:`oipcodec.kernels` chooses one;
- the foundation: :mod:`.datatypes`, :mod:`.errors`, :mod:`.limits`, :mod:`.types`;
- the codecs, bytes <-> :class:`InferRequest` / :class:`InferResponse`, one per wire format:
  :mod:`.raw` (a tensor's raw bytes), :mod:`.rest` (REST bodies), :mod:`.pb` (protobuf);
  each takes ``kernels=`` to pick an implementation;
- :mod:`oipcodec.server` (the embedded OIP server), :mod:`oipcodec.client` (HTTP and gRPC
  clients), :mod:`oipcodec.compat` (adapters into tritonclient, KServe, MLServer, ASGI) and
  :mod:`oipcodec.bench` (the harness), which load on first use.
"""

import importlib

# The codecs are light and always there; the server, clients, harness and peer adapters pull in
# their own dependencies (uvicorn, grpcio, aiohttp...), so they load on first use.
from oipcodec import datatypes, kernels, pb, raw, rest
from oipcodec._version import __version__
from oipcodec.errors import (
    DatatypeError,
    DecodeError,
    EncodeError,
    LimitError,
    OIPError,
    ShapeError,
)
from oipcodec.kernels import (
    array_to_json,
    bytes_offsets,
    deserialize_bytes,
    flatten,
    json_to_array,
    little_endian_view,
    pack_bf16,
    pack_fp16,
    serialize_bytes,
    unflatten,
    unpack_bf16,
    unpack_fp16,
    view_bf16,
)
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.types import InferRequest, InferResponse, RequestedOutput, Tensor

_ON_DEMAND = ("bench", "client", "compat", "server", "testing")


def __getattr__(name: str) -> object:
    if name in _ON_DEMAND:
        return importlib.import_module(f"oipcodec.{name}")
    raise AttributeError(f"module 'oipcodec' has no attribute {name!r}")


__all__ = [
    "DEFAULT_LIMITS",
    "DatatypeError",
    "DecodeError",
    "EncodeError",
    "InferRequest",
    "InferResponse",
    "LimitError",
    "Limits",
    "OIPError",
    "RequestedOutput",
    "ShapeError",
    "Tensor",
    "__version__",
    "array_to_json",
    "bytes_offsets",
    "datatypes",
    "deserialize_bytes",
    "flatten",
    "json_to_array",
    "kernels",
    "pb",
    "raw",
    "rest",
    "little_endian_view",
    "pack_bf16",
    "pack_fp16",
    "serialize_bytes",
    "unflatten",
    "unpack_bf16",
    "unpack_fp16",
    "view_bf16",
]
