"""Adapters that put oipcodec's kernels inside the clients and servers people already run.

One submodule per peer, which it imports only when one of its functions needs it, so
``import oipcodec.compat`` (and each submodule) works without the peer installed:
:mod:`~oipcodec.compat.tritonclient` (drop-in ``tritonclient.utils`` helpers, result decoders),
:mod:`~oipcodec.compat.kserve` (KServe's requests and responses, its data plane),
:mod:`~oipcodec.compat.mlserver` (an MLServer codec and transports),
:mod:`~oipcodec.compat.triton_python_backend` (Triton's Python backend, inside a model.py),
:mod:`~oipcodec.compat.asgi` (the REST app under a Starlette/FastAPI prefix) and
:mod:`~oipcodec.compat.ray` (the server as a Ray Serve deployment). KServe and MLServer
cannot share one environment (both register ``inference.*`` protobuf messages in protobuf's
default pool), so each adapter is used alone. Guides: docs/compat.md and docs/distributed.md.
"""

# Invariant: the adapters never import each other; an adapter imports the codecs, the kernels
# facade, the foundation and oipcodec.server; nothing imports compat.

import importlib

_SUBMODULES = ("asgi", "kserve", "mlserver", "ray", "triton_python_backend", "tritonclient")


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return importlib.import_module(f"oipcodec.compat.{name}")
    raise AttributeError(f"module 'oipcodec.compat' has no attribute {name!r}")


__all__ = ["asgi", "kserve", "mlserver", "ray", "triton_python_backend", "tritonclient"]
