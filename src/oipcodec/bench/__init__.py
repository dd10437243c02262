"""``oipcodec bench``: the end-to-end harness. Which encoding path should I use, and what does
the native codec buy me, measured on this machine.

For each payload, encoding path and client implementation (oipcodec native and pure,
tritonclient when installed) it measures requests/s, MB/s and latency percentiles at a few
concurrency levels, and the codec-only cost per request on each side; KServe's and MLServer's
server codecs are rows of the same table (:mod:`oipcodec.bench.paths.peers`). Each implementation
runs in a subprocess of its own (``OIPCODEC_PURE`` set for it) that starts its own embedded
server, so ``pure`` is the pure kernels in the client *and* the server; ``--url`` /
``--grpc-target`` measure any OIP server instead. Load is closed or open loop
(:mod:`oipcodec.bench.load`), measured in windows until stable, as perf_analyzer does.

The harness sits on top: it may import every other layer (codecs, server, client, compat), and
nothing but the CLI imports it. Reading and reproducing the figures: docs/benchmarks.md.
"""

from oipcodec.bench.encoding import PATHS, EncodingPath
from oipcodec.bench.paths import IMPLEMENTATIONS
from oipcodec.bench.payloads import PAYLOADS, QUICK_PAYLOADS, Payload, custom_payload
from oipcodec.bench.runner import BenchOptions, run

__all__ = [
    "IMPLEMENTATIONS",
    "PATHS",
    "PAYLOADS",
    "QUICK_PAYLOADS",
    "BenchOptions",
    "EncodingPath",
    "Payload",
    "custom_payload",
    "run",
]
