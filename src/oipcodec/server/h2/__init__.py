"""The native gRPC path (issue 47): HTTP/2 on libnghttp2 (``_session``, compiled) and the gRPC
server on it. Without the compiled ``_session`` the server runs on grpcio."""
