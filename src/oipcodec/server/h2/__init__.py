"""The native gRPC transport (issue 47): HTTP/2 in C on libnghttp2 (``_session``), grpcio's
method handlers served on it (``grpc_server``), the servicer context (``call_context``).
Without the compiled ``_session`` the server runs on grpcio.

It imports nothing of :mod:`oipcodec.server` but the core's shared pieces, so any grpcio
generic handler can be served on it; docs/serving.md#the-native-grpc-server says what it does.
"""
