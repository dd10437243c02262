"""The adapters of oipcodec.compat and oipcodec's clients against the real peers: tritonclient,
KServe (its codecs and a stock ModelServer), MLServer, and the app mounted in FastAPI. A peer
that is not installed skips its module (tests.support.peers)."""
