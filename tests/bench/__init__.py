"""``oipcodec bench``: the instrument and its measures, the model it serves, its charts, the
server-side breakdown, TLS, and runs against the real peers (Triton, KServe, MLServer)."""
