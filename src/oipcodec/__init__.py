"""oipcodec: a native-accelerated tensor codec for the Open Inference Protocol.

The Open Inference Protocol (OIP, also KServe V2 or the Triton v2 protocol) moves tensors as
JSON, as JSON plus binary tensor data, or as protobuf. oipcodec does the per-element work of
those encodings in Cython kernels (with pure-Python twins as reference and fallback); see
:mod:`oipcodec.kernels` for which one is in use.
"""

from oipcodec import datatypes, kernels
from oipcodec._version import __version__
from oipcodec.errors import (
    DatatypeError,
    DecodeError,
    EncodeError,
    LimitError,
    OIPError,
    ShapeError,
)
from oipcodec.kernels import deserialize_bytes, serialize_bytes
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.types import InferRequest, InferResponse, RequestedOutput, Tensor

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
    "datatypes",
    "deserialize_bytes",
    "kernels",
    "serialize_bytes",
]
