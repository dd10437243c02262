"""The front ends (src/oipcodec/server/frontends/): OIP REST and gRPC, TRTIS v1, GraphPipe and
the metrics endpoint, each seen from the wire."""
