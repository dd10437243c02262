"""Open Inference Protocol clients with little overhead of their own.

- :class:`HttpClient` / :class:`AsyncHttpClient`: REST over keep-alive pools (its own on
  sockets / aiohttp), JSON or binary tensor data, optional gzip/deflate;
- :class:`GrpcClient` / :class:`AsyncGrpcClient`: gRPC (grpcio), raw or typed contents, and
  the ModelStreamInfer stream; ModelInfer messages are built and read by :mod:`oipcodec.pb`;
- :class:`GraphPipeClient`: GraphPipe's flatbuffers over HTTP (:mod:`oipcodec.graphpipe`);
- all four OIP clients register system shared-memory regions (``register_region``,
  ``register_system_shared_memory``...) and send inputs / ask for outputs in them, with the
  regions of :mod:`oipcodec.client.shm` (docs/shared-memory.md).

::

    from oipcodec.client import HttpClient

    with HttpClient("http://127.0.0.1:8000") as client:
        response = client.infer("identity", {"INPUT0": np.ones((1, 16), np.float32)})
        response.output("INPUT0").data  # a numpy array (a view of the answer's bytes)

They work with any OIP server (Triton, KServe, MLServer, ``oipcodec serve``). Errors:
:class:`ServerError` (the server's status and message), :class:`RequestTimeoutError`,
:class:`ServerConnectionError`, all :class:`ClientError`, an :class:`oipcodec.OIPError`;
defined in :mod:`oipcodec.errors`, whose one status table gives a ``ServerError`` its
``status`` over gRPC and its ``code`` over HTTP. Needs the ``client`` extra (aiohttp, grpcio;
HttpClient needs only the standard library); each transport is imported when its client is
first made.

The layer: the clients turn calls into wire bytes and answers back. They may import the
codecs (:mod:`oipcodec.rest`, :mod:`oipcodec.pb`, :mod:`oipcodec.types`,
:mod:`oipcodec.sharedmem`...), the kernels only through them, :mod:`oipcodec.errors`,
:mod:`oipcodec.limits` and :mod:`oipcodec.proto`; never
:mod:`oipcodec.server`, :mod:`oipcodec.compat` or :mod:`oipcodec.bench` (a client must install
and import without the server extra), and no ``_private`` name of another layer.
"""

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
