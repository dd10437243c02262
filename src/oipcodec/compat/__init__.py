"""Adapters that put oipcodec's kernels inside the clients and servers people already run.

Each submodule belongs to one peer and imports it only when one of its functions needs it, so
``import oipcodec.compat`` (and each submodule) works without the peer installed:

- :mod:`oipcodec.compat.tritonclient`: drop-in replacements for ``tritonclient.utils``'
  BYTES and dtype helpers, and decoders for tritonclient HTTP/gRPC results.
- :mod:`oipcodec.compat.kserve`: conversion between ``kserve.protocol.infer_type``
  requests/responses and oipcodec's, REST and gRPC, and a KServe data plane using them.
- :mod:`oipcodec.compat.mlserver`: an MLServer input/request codec running on the kernels.
- :mod:`oipcodec.compat.asgi`: mounting oipcodec's REST app under a prefix of a
  Starlette/FastAPI app.
- :mod:`oipcodec.compat.ray`: oipcodec's REST app and gRPC service as a Ray Serve deployment
  (replicas, autoscaling, a cluster).

KServe and MLServer cannot share one environment (both register ``inference.*`` protobuf
messages in the default descriptor pool, and their FastAPI pins conflict); the adapters never
import each other. An adapter may import the codecs, the kernels facade, the foundation modules
and :mod:`oipcodec.server` (to mount its app or share its rules); nothing imports compat.
"""

import importlib

_SUBMODULES = ("asgi", "kserve", "mlserver", "ray", "tritonclient")


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return importlib.import_module(f"oipcodec.compat.{name}")
    raise AttributeError(f"module 'oipcodec.compat' has no attribute {name!r}")


__all__ = ["asgi", "kserve", "mlserver", "ray", "tritonclient"]
