"""In-process pytest-benchmark suites: the kernels and the codecs and adapters built on them,
native vs pure vs the peers' own code, on the same payloads."""
