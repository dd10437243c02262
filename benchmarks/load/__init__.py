"""Scripts that measure end to end, against a running server: ``python
benchmarks/load/load_server.py`` (requests/s and latency of a server) and ``python
benchmarks/load/client_overhead.py`` (per-request cost of the HTTP client libraries)."""
