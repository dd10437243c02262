"""oipcodec: a native-accelerated tensor codec for the Open Inference Protocol.

The data model (:class:`InferRequest`, :class:`InferResponse`, :class:`Tensor`,
:class:`RequestedOutput`) goes to and from each wire format's module, all importable from here:
:mod:`.rest` (REST bodies), :mod:`.pb` (protobuf), :mod:`.raw` (a tensor's raw bytes),
:mod:`.trtis_v1` (the TensorRT Inference Server v1 API) and :mod:`.graphpipe`. The kernels they
share are in :mod:`oipcodec.kernels` (Cython, or their pure-Python twins); :class:`Limits`
bounds what a decoder accepts; every error is an :class:`OIPError` (:mod:`oipcodec.errors`).
``trtis_v1``, ``graphpipe`` and the submodules with dependencies of their own load on first use.
"""

# Invariant: the layers import only downward (kernels, then datatypes/errors/limits/types, then
# the codecs, then server, client, compat, bench), and anything with a dependency of its own
# loads on first use (docs/design.md; tests/architecture/test_layers.py).

from importlib import import_module as _import_module

from oipcodec import datatypes, kernels, pb, raw, rest
from oipcodec._deprecated import moved as _moved
from oipcodec._version import __version__
from oipcodec.errors import DecodeError, EncodeError, OIPError
from oipcodec.limits import Limits
from oipcodec.types import InferRequest, InferResponse, RequestedOutput, Tensor

__all__ = [
    "DecodeError",
    "EncodeError",
    "InferRequest",
    "InferResponse",
    "Limits",
    "OIPError",
    "RequestedOutput",
    "Tensor",
    "__version__",
    "datatypes",
    "graphpipe",
    "kernels",
    "pb",
    "raw",
    "rest",
    "trtis_v1",
]

# Imported on first use: trtis_v1 loads google.protobuf, and the server, clients, harness and
# peer adapters their own dependencies (uvicorn, grpcio, aiohttp...).
_ON_DEMAND = ("bench", "client", "compat", "graphpipe", "server", "testing", "trtis_v1")

_KERNELS = (
    "array_to_json",
    "bytes_offsets",
    "deserialize_bytes",
    "flatten",
    "json_to_array",
    "little_endian_view",
    "pack_bf16",
    "pack_fp16",
    "serialize_bytes",
    "unflatten",
    "unpack_bf16",
    "unpack_fp16",
    "view_bf16",
)


def _on_demand(name: str) -> object:
    if name in _ON_DEMAND:
        return _import_module(f"oipcodec.{name}")
    raise AttributeError(f"module 'oipcodec' has no attribute {name!r}")


__getattr__ = _moved(
    __name__,
    {
        **{name: f"oipcodec.kernels:{name}" for name in _KERNELS},
        "DEFAULT_LIMITS": "oipcodec.limits:DEFAULT_LIMITS",
        "DatatypeError": "oipcodec.errors:DatatypeError",
        "LimitError": "oipcodec.errors:LimitError",
        "ShapeError": "oipcodec.errors:ShapeError",
    },
    _on_demand,
)
