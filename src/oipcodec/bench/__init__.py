"""``oipcodec bench``: the end-to-end harness. Which encoding path should I use, and what does
the native codec buy me, measured on this machine.

For each payload x encoding path (REST JSON flat and nested, REST binary, REST binary+gzip,
gRPC raw and typed contents) and each client implementation (oipcodec native, oipcodec pure,
tritonclient when installed), it measures requests/s, tensor MB/s and latency percentiles at
a few concurrency levels against an OIP server, and the codec-only cost per request on the
client and the server side (the encode/decode calls timed in-process on the same payloads).
KServe's and MLServer's server codecs, when installed, are rows of the same table
(:mod:`oipcodec.bench.peers`): their decode + encode timed in-process, requests/s only
against a server of theirs given by ``--url`` / ``--grpc-target``.

Each implementation runs in its own subprocess with ``OIPCODEC_PURE`` set for it, and that
process starts its own embedded server (a subprocess of it, on 127.0.0.1, free ports), so
``pure`` means pure kernels in the client *and* the server. With ``--url`` / ``--grpc-target``
any OIP server is measured instead (only the client side then changes between
implementations). ``--model`` names the model: one that declares its inputs gets requests
generated from its metadata (:mod:`oipcodec.bench.workload`, as perf_analyzer builds them),
answers checked against its declared outputs; one that declares none must echo the payloads.
Load runs in threads of one process, each with a blocking client (oipcodec's
HttpClient/GrpcClient shared by the threads; tritonclient's per thread), closed loop: a thread
sends its next request when the previous answer is decoded.

The harness sits on top: it may import every other layer (codecs, server, client, compat), and
nothing but the CLI imports it.
"""

from oipcodec.bench.paths import IMPLEMENTATIONS, PATHS, EncodingPath
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
