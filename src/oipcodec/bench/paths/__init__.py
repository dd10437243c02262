"""Each client implementation on each encoding path: whether it takes the path, how it sends a
payload end to end, and what its codec work costs in-process.

Implementations: ``native`` and ``pure`` are oipcodec's own clients (and, with the embedded
server, its server) with the kernels chosen by ``OIPCODEC_PURE`` in the measuring process;
``tritonclient`` is Triton's Python client (its request building and result parsing) against
the same server; ``graphpipe`` is GraphPipe's Python client (its convert module and
requests) on the ``graphpipe`` path; ``kserve`` and ``mlserver`` are those servers' codecs
(decode the request, encode the identity answer), timed in-process, and end to end only
against a server of theirs given by ``--url`` / ``--grpc-target`` (oipcodec's native client
sends).

Where the code is: the paths themselves in :mod:`oipcodec.bench.encoding`; oipcodec's REST and
gRPC clients in :mod:`.oip`, its shared-memory, v1 and GraphPipe paths in :mod:`.shared_memory`,
:mod:`.v1` and :mod:`.graphpipe` (GraphPipe's own client too); tritonclient in
:mod:`.triton`; KServe's and MLServer's server codecs in :mod:`.peers`; whether a server
takes a path in :mod:`.refusal`. A new implementation is a module of its own, named in
:data:`IMPLEMENTATIONS` and :data:`DESCRIPTIONS` and dispatched to by the functions here.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from oipcodec.bench.connection import Connection
from oipcodec.bench.encoding import Encoding, EncodingPath
from oipcodec.bench.paths import graphpipe, oip, peers, shared_memory, triton, v1
from oipcodec.bench.paths.base import Caller, CodecOps, release, same_values
from oipcodec.bench.paths.oip import OurClients
from oipcodec.bench.paths.refusal import NOT_SUPPORTED, server_refusal
from oipcodec.bench.paths.v1 import v1_model_name, v1_models
from oipcodec.bench.workload import Workload, check_answer
from oipcodec.types import InferRequest, Tensor

__all__ = [
    "DESCRIPTIONS",
    "IMPLEMENTATIONS",
    "NOT_SUPPORTED",
    "PEER_CODEC_ECHO_ONLY",
    "Caller",
    "CodecOps",
    "OurClients",
    "codec_only",
    "codec_ops",
    "make_caller",
    "peer_available",
    "release",
    "same_values",
    "server_refusal",
    "supported",
    "v1_model_name",
    "v1_models",
]

#: The implementations; the peers ("tritonclient", a client, and the servers' codecs in
#: peers.SERVER_PEERS) are measured where they are installed.
IMPLEMENTATIONS = ("native", "pure", "tritonclient", *peers.SERVER_PEERS, "graphpipe")
#: What each implementation's rows measure (results.json keeps it next to the figures).
DESCRIPTIONS = {
    "native": "oipcodec's client and server, native kernels",
    "pure": "oipcodec's client and server, the pure-Python twins (OIPCODEC_PURE=1)",
    "tritonclient": "Triton's Python client (request building, result parsing) against the "
    "server; no server codec of its own",
    "kserve": "KServe's server codec (decode the request, encode the identity answer), timed "
    "in-process; end to end only against a KServe server given by --url/--grpc-target",
    "mlserver": "MLServer's server codec (decode the request, encode the identity answer), "
    "timed in-process; end to end only against an MLServer given by --url/--grpc-target",
    "graphpipe": "GraphPipe's Python client (graphpipe 1.0.4: convert, requests) against the "
    "server's GraphPipe endpoint; the graphpipe path only",
}
#: How to install each peer that may be missing (said when one is skipped).
INSTALL_HINTS = {
    "tritonclient": "pip install 'oipcodec[bench]' (tritonclient[http,grpc])",
    "kserve": "pip install 'oipcodec[bench-kserve]'",
    "mlserver": "pip install mlserver, in an environment without kserve (their pins conflict)",
    "graphpipe": "pip install graphpipe",
}
#: Why a peer server's codec rows do not measure a model's generated request.
PEER_CODEC_ECHO_ONLY = (
    "a peer server's codec is timed with the identity model's payloads only, not a model's "
    "generated request"
)

#: The implementations that take every path, GraphPipe's included.
_OURS = ("native", "pure")


def peer_available(implementation: str) -> bool:
    if implementation in peers.SERVER_PEERS:
        return peers.installed(implementation)
    if implementation == "graphpipe":
        return graphpipe.available()
    if implementation == "tritonclient":
        return triton.available()
    return True


def supported(implementation: str, path: EncodingPath, datatypes: Sequence[str],
              echo: bool = True) -> str | None:  # fmt: skip
    """None when ``implementation`` can send and read ``datatypes`` on ``path``, else why not
    (``echo``: the identity model's workload; a peer server's codec is timed on that only)."""
    if implementation in peers.SERVER_PEERS and not echo:
        return PEER_CODEC_ECHO_ONLY
    for datatype in [datatypes] if isinstance(datatypes, str) else datatypes:
        reason = _supported(implementation, path, datatype)
        if reason is not None:
            return reason
    return None


def _supported(implementation: str, path: EncodingPath, datatype: str) -> str | None:
    if path.encoding is Encoding.V1:
        if implementation not in _OURS:
            return "only oipcodec's client speaks the v1 API here"
        if datatype == "BF16":
            return "the v1 API has no BF16"
    graphpipe_path = path.encoding is Encoding.GRAPHPIPE
    if graphpipe_path and datatype in ("BOOL", "BF16"):
        return f"GraphPipe has no {datatype} type"
    if graphpipe_path != (implementation == "graphpipe") and implementation not in _OURS:
        return f"{implementation} has no such path"
    if implementation == "tritonclient":
        if path.name not in triton.PATHS:
            return "tritonclient has no such path"
        if datatype == "BF16" and path.protocol == "rest" and not path.binary:
            return "tritonclient sends BF16 in binary only"
    if implementation in peers.SERVER_PEERS:
        if path.encoding is Encoding.SHARED_MEMORY:
            return f"{implementation} has no shared-memory extension"
        return peers.unsupported(implementation, path, datatype)
    return None


def codec_only(implementation: str, path: EncodingPath, url: str | None,
               grpc_target: str | None) -> str | None:  # fmt: skip
    """Why a peer server's row has no load (no server of that peer to send to), or None."""
    if implementation not in peers.SERVER_PEERS:
        return None
    if path.protocol == "rest" and not url:
        return "codec only (no --url)"
    if path.protocol == "grpc" and not grpc_target:
        return "codec only (no --grpc-target)"
    return None


def make_caller(
    implementation: str,
    path: EncodingPath,
    workload: Workload,
    ours: OurClients | None,
    url: str | None,
    grpc_target: str | None,
    timeout: float,
) -> Caller:
    """A caller for one load thread (made in that thread: tritonclient's HTTP client is
    gevent-based and must stay in the thread that made it). It sends the workload's requests
    round robin and returns each answer's outputs, checked against the declared outputs
    (ValueError when one is missing or of another datatype or shape)."""
    callers = [
        _one_caller(implementation, path, workload, inputs, ours, url, grpc_target, timeout)
        for inputs in workload.requests
    ]
    turn = itertools.cycle(callers)

    def call() -> Sequence[Any]:
        outputs = next(turn)()
        check_answer(workload, outputs)
        return outputs

    return call


def _one_caller(implementation: str, path: EncodingPath, workload: Workload,
                inputs: list[Tensor], ours: OurClients | None, url: str | None,
                grpc_target: str | None, timeout: float) -> Caller:  # fmt: skip
    connection = ours.connection if ours is not None else Connection()
    if implementation == "tritonclient":
        return triton.caller(path, workload, inputs, url, grpc_target, timeout, connection)
    if path.encoding is Encoding.GRAPHPIPE:
        return graphpipe.caller(implementation, workload, inputs, url, timeout, connection)
    assert ours is not None
    if path.encoding is Encoding.SHARED_MEMORY:
        return shared_memory.caller(ours, workload, inputs)
    if path.encoding is Encoding.V1:
        return v1.caller(ours, path, workload, inputs)
    return oip.caller(ours, path, InferRequest(inputs, model_name=workload.model))


def codec_ops(implementation: str, path: EncodingPath, workload: Workload) -> CodecOps:
    """What the client and the server do to one request and its answer, as calls to time.

    The request is the workload's first; the answer is the one its first request got (the
    identity model's: the input back under the same name), in binary when the request was
    (``binary_data_output``), compressed when it was.
    """
    if path.encoding is Encoding.SHARED_MEMORY:
        # tritonclient's side of the round trip comes from its module, which builds on
        # shared_memory's regions (so that module never imports it).
        theirs = triton.shm_ops if implementation == "tritonclient" else None
        return shared_memory.codec_ops(workload, theirs)
    if path.encoding is Encoding.V1:
        return v1.codec_ops(workload)
    if path.encoding is Encoding.GRAPHPIPE:
        return graphpipe.codec_ops(implementation, workload)
    if implementation == "tritonclient":
        return triton.codec_ops(path, workload)
    if implementation in peers.SERVER_PEERS:
        return peers.codec_ops(implementation, path, workload)
    return oip.codec_ops(path, workload)
