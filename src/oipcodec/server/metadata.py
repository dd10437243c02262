"""What the server says about itself, the same over REST and gRPC (server metadata:
``GET /v2`` and the ServerMetadata RPC)."""

from __future__ import annotations

__all__ = ["EXTENSIONS", "SERVER_NAME"]

#: The protocol extensions listed in the server metadata.
EXTENSIONS = ("binary_tensor_data", "classification", "model_repository", "parameters")

#: The server's name in the server metadata.
SERVER_NAME = "oipcodec"
