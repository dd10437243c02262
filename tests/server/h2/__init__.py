"""The native gRPC path's HTTP/2 connection (src/oipcodec/server/h2/_session.pyx), over real
sockets: grpcio's own channel, nghttp2's h2load, and raw frames."""
