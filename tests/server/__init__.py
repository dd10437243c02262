"""The embedded server: model API and registry, REST and gRPC front ends, the HTTP/1.1
protocol, the ``oipcodec serve`` command, seen from the wire (also by the real tritonclient)."""
