"""What the server says about itself, the same over REST and gRPC (server metadata:
``GET /v2`` and the ServerMetadata RPC)."""

from __future__ import annotations

__all__ = ["EXTENSIONS", "SERVER_NAME", "SYSTEM_SHARED_MEMORY", "extensions"]

#: The protocol extensions listed in the server metadata (Triton's names).
EXTENSIONS = (
    "binary_tensor_data",
    "classification",
    "model_repository",
    "parameters",
    "model_configuration",
    "statistics",
)

#: The extension listed as well when system shared memory is enabled.
SYSTEM_SHARED_MEMORY = "system_shared_memory"


def extensions(shared_memory: bool) -> list[str]:
    """The extensions a server lists: :data:`EXTENSIONS`, and ``system_shared_memory`` when
    that extension is enabled."""
    return [*EXTENSIONS, SYSTEM_SHARED_MEMORY] if shared_memory else list(EXTENSIONS)


#: The server's name in the server metadata.
SERVER_NAME = "oipcodec"
