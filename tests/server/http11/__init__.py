"""The HTTP/1.1 transport (src/oipcodec/server/http11/): framing, timing, connection handling
and the memory a request leaves behind, over real sockets."""
