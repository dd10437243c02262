"""Open Inference Protocol clients with little overhead of their own.

- :class:`HttpClient` / :class:`AsyncHttpClient`: REST, JSON or binary tensor data;
- :class:`GrpcClient` / :class:`AsyncGrpcClient`: gRPC (grpcio), and ModelStreamInfer;
- :class:`GraphPipeClient` (:mod:`.graphpipe_client`) and the TensorRT Inference Server v1
  clients (:mod:`.trtis_client`);
- the four OIP clients register shared-memory regions (:mod:`oipcodec.client.shm`).

They work with any OIP server (Triton, KServe, MLServer, ``oipcodec serve``). Errors are
:class:`ClientError` (:class:`ServerError`, :class:`RequestTimeoutError`,
:class:`ServerConnectionError`), defined in :mod:`oipcodec.errors`; codec errors pass through.
The clients need the ``client`` extra only; the guide is docs/clients.md.
"""

# Invariant: a client imports the codecs, oipcodec.errors, oipcodec.limits and oipcodec.proto,
# never the server, compat or bench (it installs without the server extra); each transport is
# imported when its client is first made.

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oipcodec.client._request import Inputs, Outputs, build_request
from oipcodec.errors import (
    ClientError,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
)

if TYPE_CHECKING:
    from oipcodec.client.graphpipe_client import GraphPipeClient
    from oipcodec.client.grpc_client import AsyncGrpcClient, GrpcClient, StreamResult
    from oipcodec.client.http_client import AsyncHttpClient, HttpClient

__all__ = [
    "AsyncGrpcClient",
    "AsyncHttpClient",
    "ClientError",
    "GraphPipeClient",
    "GrpcClient",
    "HttpClient",
    "Inputs",
    "Outputs",
    "RequestTimeoutError",
    "ServerConnectionError",
    "ServerError",
    "StreamResult",
    "build_request",
]

_LAZY = {
    "HttpClient": "http_client",
    "AsyncHttpClient": "http_client",
    "GrpcClient": "grpc_client",
    "AsyncGrpcClient": "grpc_client",
    "StreamResult": "grpc_client",
    "GraphPipeClient": "graphpipe_client",
}


def __getattr__(name: str) -> Any:
    # The HTTP and gRPC modules are imported on first use, so `import oipcodec.client` costs
    # nothing and needs neither grpcio nor aiohttp.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'oipcodec.client' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"oipcodec.client.{module}"), name)
    globals()[name] = value
    return value
