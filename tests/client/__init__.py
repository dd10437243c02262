"""oipcodec's clients (HTTP and gRPC, sync and async) against the embedded server."""
