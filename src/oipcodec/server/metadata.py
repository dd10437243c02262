"""What the server says about itself, the same over REST and gRPC (server metadata:
``GET /v2`` and the ServerMetadata RPC)."""

from __future__ import annotations

import weakref
from typing import Any

__all__ = [
    "BODY_TIMEOUT_EXTENSION",
    "BUFFERS_EXTENSION",
    "EXTENSIONS",
    "SERVER_NAME",
    "SYSTEM_SHARED_MEMORY",
    "TRACED",
    "extensions",
]

#: The protocol extensions listed in the server metadata (Triton's names).
EXTENSIONS = (
    "binary_tensor_data",
    "classification",
    "model_repository",
    "parameters",
    "model_configuration",
    "statistics",
    "schedule_policy",  # the priority and timeout parameters (server/queue_policy.py)
)

#: The extension listed as well when system shared memory is enabled.
SYSTEM_SHARED_MEMORY = "system_shared_memory"


#: The model registries whose servers trace
#: (:class:`oipcodec.server.frontends.tracing.Tracing`): they list the ``trace`` extension.
TRACED: weakref.WeakSet[Any] = weakref.WeakSet()


def extensions(shared_memory: bool, registry: object = None) -> list[str]:
    """The extensions a server lists: :data:`EXTENSIONS`, ``system_shared_memory`` when that
    extension is enabled, and ``trace`` when the server of ``registry`` traces."""
    names = [*EXTENSIONS, SYSTEM_SHARED_MEMORY] if shared_memory else list(EXTENSIONS)
    if registry in TRACED:
        names.append("trace")
    return names


#: The server's name in the server metadata.
SERVER_NAME = "oipcodec"

#: The ASGI scope extension by which a server says it times out a stalled request body itself
#: (value ``{"seconds": <the timeout>}``); oipcodec's HTTP/1.1 transport sets it.
BODY_TIMEOUT_EXTENSION = "oipcodec.body_timeout"
#: The ASGI scope extension by which a server says it writes any bytes-like
#: ``http.response.body`` as it is, so an app can send views instead of copies.
BUFFERS_EXTENSION = "oipcodec.buffers"
