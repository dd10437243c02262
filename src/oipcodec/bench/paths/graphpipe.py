"""The GraphPipe path: oipcodec's GraphPipe client and codec, and GraphPipe's own Python client
(the ``graphpipe`` implementation, graphpipe 1.0.4: its convert module and requests), which
takes this path only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oipcodec import graphpipe
from oipcodec.bench.connection import Connection
from oipcodec.bench.paths.base import Caller, CodecOps, as_tensors, on_release
from oipcodec.bench.workload import Workload
from oipcodec.types import Tensor

__all__ = ["available", "caller", "codec_ops"]


def available() -> bool:
    """Whether GraphPipe's Python client is installed."""
    try:
        import graphpipe.convert  # noqa: F401
    except ImportError:
        return False
    return True


def caller(implementation: str, workload: Workload, inputs: list[Tensor], url: str | None,
           timeout: float, connection: Connection) -> Caller:  # fmt: skip
    """A GraphPipe client of the server's ``/graphpipe/<model>``: oipcodec's, or GraphPipe's
    own (``graphpipe.remote``, on requests). GraphPipe's answers carry no names: the outputs
    are asked for by name (the declared ones) and named in that order, for the checks."""
    if url is None:
        raise ValueError("no REST URL to send to")
    endpoint = f"{url}/graphpipe/{workload.model}"
    arrays, names = [t.data for t in inputs], [t.name for t in inputs]
    wanted = workload.output_names or None

    def named(outputs: Sequence[Any]) -> list[Tensor]:
        labels = wanted or [str(index) for index in range(len(outputs))]
        return as_tensors(zip(labels, outputs, strict=False))

    if implementation == "graphpipe":
        from graphpipe import remote

        def call_theirs() -> Any:
            return named(remote.execute_multi(endpoint, arrays, names, wanted))

        return call_theirs
    from oipcodec.client.graphpipe_client import GraphPipeClient

    client = GraphPipeClient(endpoint, timeout=timeout, **connection.http_options(endpoint))
    on_release(client.close)

    def call_ours() -> Any:
        return named(client.infer(arrays, names, wanted))

    return call_ours


def codec_ops(implementation: str, workload: Workload) -> CodecOps:
    """The GraphPipe round trip: the client writes a Request and reads the InferResponse, the
    server reads the Request and writes the answer (oipcodec's codec; GraphPipe's client is
    timed with its convert module)."""
    arrays, names = [t.data for t in workload.inputs], [t.name for t in workload.inputs]
    outputs = [t.data for t in workload.answer]
    body = b"".join(graphpipe.encode_request(arrays, names))
    answer = graphpipe.encode_response(outputs)
    if implementation == "graphpipe":
        from graphpipe import convert

        def encode() -> Any:
            request = convert.InferReq(None, arrays, names, None)
            return convert.serialize_infer_request(request)

        return CodecOps(
            encode,
            lambda: convert.deserialize_infer_response(answer),
            None,
            None,
            len(body),
            len(answer),
        )
    return CodecOps(
        lambda: b"".join(graphpipe.encode_request(arrays, names)),
        lambda: graphpipe.decode_response(answer),
        lambda: graphpipe.decode_request(body),
        lambda: graphpipe.encode_response_parts(outputs),
        len(body),
        len(answer),
    )
