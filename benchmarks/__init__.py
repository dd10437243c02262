"""oipcodec's benchmarks (benchmarks/conftest.py says how to run them)."""
