"""What the server says about itself, the same over REST and gRPC (server metadata:
``GET /v2`` and the ServerMetadata RPC)."""

from __future__ import annotations

__all__ = ["EXTENSIONS", "SERVER_NAME"]

#: The protocol extensions listed in the server metadata (Triton's names).
EXTENSIONS = (
    "binary_tensor_data",
    "model_repository",
    "parameters",
    "model_configuration",
    "statistics",
)

#: The server's name in the server metadata.
SERVER_NAME = "oipcodec"
