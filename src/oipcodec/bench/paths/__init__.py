"""The encoding paths, and for each client implementation how it sends a payload end to end
and what its codec work costs in-process.

Implementations: ``native`` and ``pure`` are oipcodec's own clients (and, with the embedded
server, its server) with the kernels chosen by ``OIPCODEC_PURE`` in the measuring process;
``tritonclient`` is Triton's Python client (its request building and result parsing) against
the same server; ``graphpipe`` is GraphPipe's Python client (its convert module and
requests) on the ``graphpipe`` path; ``kserve`` and ``mlserver`` are those servers' codecs
(decode the request, encode the identity answer; :mod:`oipcodec.bench.peers`), timed
in-process, and end to end only against a server of theirs given by ``--url`` /
``--grpc-target`` (oipcodec's native client sends).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import itertools
import os
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec import datatypes, graphpipe, pb, rest
from oipcodec import trtis_v1 as v1
from oipcodec.bench import peers
from oipcodec.bench.connection import Connection
from oipcodec.bench.encoding import EncodingPath
from oipcodec.bench.payloads import INPUT
from oipcodec.bench.workload import Output, Workload, check_answer
from oipcodec.raw import array_to_raw
from oipcodec.server.model import Arrays, Model, TensorSpec
from oipcodec.sharedmem import location, parameters_for
from oipcodec.types import InferRequest, InferResponse, Tensor

__all__ = [
    "DESCRIPTIONS",
    "IMPLEMENTATIONS",
    "NOT_SUPPORTED",
    "PATHS",
    "PEER_CODEC_ECHO_ONLY",
    "Caller",
    "EncodingPath",
    "codec_only",
    "codec_ops",
    "make_caller",
    "peer_available",
    "release",
    "server_refusal",
    "supported",
    "v1_model_name",
    "v1_models",
]


PATHS: dict[str, EncodingPath] = {
    p.name: p
    for p in (
        EncodingPath("rest-json", "REST JSON flat", "rest"),
        EncodingPath("rest-json-nested", "REST JSON nested", "rest", nested=True),
        EncodingPath("rest-binary", "REST binary", "rest", binary=True),
        EncodingPath(
            "rest-binary-gzip", "REST binary+gzip", "rest", binary=True, compression="gzip"
        ),
        EncodingPath("grpc-raw", "gRPC raw", "grpc", raw=True),
        EncodingPath("grpc-typed", "gRPC typed", "grpc", raw=False),
        EncodingPath("shm", "shared memory", "rest", shared_memory=True),
        EncodingPath("v1-http-raw", "v1 HTTP raw", "rest", binary=True, v1=True),
        EncodingPath("v1-grpc", "v1 gRPC", "grpc", v1=True),
        EncodingPath("graphpipe", "GraphPipe", "rest", graphpipe=True),
    )
}

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
#: Why a peer server's codec rows do not measure a model's generated request.
PEER_CODEC_ECHO_ONLY = (
    "a peer server's codec is timed with the identity model's payloads only, not a model's "
    "generated request"
)

#: The implementations that take every path, GraphPipe's included.
_OURS = ("native", "pure")
#: The paths tritonclient can take (it writes JSON flat only and gRPC raw contents only).
_TRITON_PATHS = ("rest-json", "rest-binary", "rest-binary-gzip", "grpc-raw", "shm")

#: One request, answered: returns the answer's outputs (Tensors, or Outputs for tritonclient).
Caller = Callable[[], Any]


def peer_available(implementation: str) -> bool:
    if implementation in peers.SERVER_PEERS:
        return peers.installed(implementation)
    if implementation == "graphpipe":
        try:
            import graphpipe.convert  # noqa: F401
        except ImportError:
            return False
        return True
    if implementation != "tritonclient":
        return True
    try:
        import tritonclient.grpc
        import tritonclient.http  # noqa: F401
    except ImportError:
        return False
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
    if path.v1:
        if implementation not in ("native", "pure"):
            return "only oipcodec's client speaks the v1 API here"
        if datatype == "BF16":
            return "the v1 API has no BF16"
    if path.graphpipe and datatype in ("BOOL", "BF16"):
        return f"GraphPipe has no {datatype} type"
    if path.graphpipe != (implementation == "graphpipe") and implementation not in _OURS:
        return f"{implementation} has no such path"
    if implementation == "tritonclient":
        if path.name not in _TRITON_PATHS:
            return "tritonclient has no such path"
        if datatype == "BF16" and not path.binary and path.protocol == "rest":
            return "tritonclient sends BF16 in binary only"
    if implementation in peers.SERVER_PEERS:
        if path.shared_memory:
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


# ------------------------------------------------------------------------------ server support

#: How a row that the server does not take begins (the table prints it as "not supported").
NOT_SUPPORTED = "not supported by this server"


def _lacks(path: EncodingPath) -> tuple[str, str | None] | None:
    """What a server that refuses ``path`` lacks, and the extension its metadata would list
    for it (None: no such listing); None for the paths every OIP server takes."""
    if path.v1:
        return "no TensorRT Inference Server v1 API", None
    if path.graphpipe:
        return "no GraphPipe endpoint", None
    if path.shared_memory:
        return "no system shared-memory extension", "system_shared_memory"
    if path.protocol == "rest" and path.binary:
        return "no binary tensor data extension", "binary_tensor_data"
    if path.compression is not None:
        return f"no {path.compression}-compressed request bodies", None
    return None


#: The gRPC codes of a server that does not take what was sent (not of a model that failed).
_REFUSING_CODES = ("UNIMPLEMENTED", "INVALID_ARGUMENT", "NOT_FOUND", "UNAVAILABLE_METHOD")


def _refused(error: BaseException, server_error: type, decode_error: type) -> bool:
    """Whether ``error`` is a server's refusal of the request's form: an HTTP 4xx or 501, a
    gRPC code in :data:`_REFUSING_CODES`, or an answer that is not of the protocol (oipcodec's
    DecodeError: a v1 client answered by an OIP-only server); a model's failure (500,
    INTERNAL) is not."""
    if isinstance(error, decode_error):
        return True
    if isinstance(error, server_error):
        status, code = getattr(error, "status", None), getattr(error, "code", "")
        return (status is not None and (400 <= status < 500 or status == 501)) or (
            getattr(error, "protocol", "") == "grpc" and code in _REFUSING_CODES
        )
    # tritonclient's InferenceServerException (not imported: it may be absent): status() is
    # the HTTP status as text, or the gRPC StatusCode.
    if type(error).__name__ == "InferenceServerException":
        reader = getattr(error, "status", None)
        status = str(reader() if callable(reader) else "")
        return status.startswith("4") or any(code in status for code in _REFUSING_CODES)
    return False


def server_refusal(path: EncodingPath, error: BaseException,
                   extensions: Sequence[str] | None) -> str | None:  # fmt: skip
    """The "not supported by this server" reason for a first request on ``path`` that the
    server refused with ``error``, or None when it is an error to report (a path every OIP
    server takes, no answer at all, a wrong answer). ``extensions``: what the server's
    metadata lists (None: not known); the reason names the listing when it lacks the path's
    extension, else the server's first refusal."""
    from oipcodec.errors import DecodeError, ServerError

    lacks = _lacks(path)
    if lacks is None:
        return None
    what, extension = lacks
    unlisted = extension is not None and extensions is not None and extension not in extensions
    # A server whose metadata does not list the extension may fail it any way (MLServer
    # answers a binary body with 500); one that lists it must refuse the form to count.
    answered = isinstance(error, ServerError) or type(error).__name__ == "InferenceServerException"
    if not (_refused(error, ServerError, DecodeError) or (unlisted and answered)):
        return None
    if unlisted:
        why = f"its metadata (GET /v2) does not list {extension}"
    elif path.compression is not None:  # binary it lists (or takes): the compression it lacks
        what = f"no {path.compression}-compressed request bodies"
        why = "it refused the first request: " + " ".join(str(error).split())[:120]
    else:
        why = "it refused the first request: " + " ".join(str(error).split())[:120]
    return f"{NOT_SUPPORTED}: {what} ({why})"


# ------------------------------------------------------------------------------ end to end


class OurClients:
    """oipcodec's clients, shared by the load threads (both are thread-safe)."""

    def __init__(self, url: str | None, grpc_target: str | None, pool_size: int,
                 timeout: float, connection: Connection | None = None) -> None:  # fmt: skip
        from oipcodec.client import GrpcClient, HttpClient
        from oipcodec.client.trtis_client import V1GrpcClient, V1HttpClient

        #: Headers and TLS for every client of the run, tritonclient's and GraphPipe's too.
        self.connection = connection or Connection()
        on_http = self.connection.http_options(url or "")
        on_grpc = self.connection.grpc_options() if grpc_target else {}
        self.http: HttpClient | None = None
        self.v1_http: V1HttpClient | None = None
        self.grpc: GrpcClient | None = None
        self.v1_grpc: V1GrpcClient | None = None
        if url:
            self.http = HttpClient(url, pool_size=pool_size, timeout=timeout, **on_http)
            self.v1_http = V1HttpClient(url, pool_size=pool_size, timeout=timeout, **on_http)
        if grpc_target:
            self.grpc = GrpcClient(grpc_target, timeout=timeout, **on_grpc)
            self.v1_grpc = V1GrpcClient(grpc_target, timeout=timeout, **on_grpc)

    def close(self) -> None:
        for client in (self.http, self.grpc, self.v1_http, self.v1_grpc):
            if client is not None:
                client.close()


#: What to undo when the worker ends: the shared-memory objects its callers and codec timings
#: made (removed from /dev/shm, mappings closed).
_RELEASE: list[Callable[[], None]] = []
_names = itertools.count()


def release() -> None:
    """Remove every shared-memory object made here (the worker calls it on its way out)."""
    while _RELEASE:
        with contextlib.suppress(Exception):
            _RELEASE.pop()()


def _region_key(role: str) -> tuple[str, str]:
    """A region name and POSIX key no other caller of this process (or process) uses."""
    name = f"bench-{os.getpid()}-{next(_names)}-{role}"
    return name, "/oipcodec-" + name


def _our_region(role: str, size: int) -> Any:
    from oipcodec.client.shm import SharedMemoryRegion

    name, key = _region_key(role)
    region = SharedMemoryRegion.create(name, size, key)
    _RELEASE.append(region.close)
    return region


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
    model = workload.model
    connection = ours.connection if ours is not None else Connection()
    if implementation == "tritonclient":
        if path.shared_memory:
            return _triton_shm_caller(workload, inputs, url, timeout, connection)
        # The identity's answer is asked for whole (its one output may have a name of its
        # own: see workload.echoed); a model's declared outputs by name.
        wanted = [] if workload.echo else workload.output_names
        return _triton_caller(path, model, inputs, wanted, url, grpc_target, timeout,
                              connection)  # fmt: skip
    if path.graphpipe:
        return _graphpipe_caller(implementation, workload, inputs, url, timeout, connection)
    assert ours is not None
    if path.shared_memory:
        return _shm_caller(ours, workload, inputs)
    if path.v1:
        return _v1_caller(ours, path, workload, inputs)
    request = InferRequest(inputs, model_name=model)
    if path.protocol == "rest":
        http = ours.http
        if http is None:
            raise ValueError("no REST URL to send to")

        def call_rest() -> Any:
            response = http.infer_request(
                request, path.binary, path.compression, nested=path.nested
            )
            return response.outputs

        return call_rest
    grpc = ours.grpc
    if grpc is None:
        raise ValueError("no gRPC target to send to")

    def call_grpc() -> Any:
        return grpc.infer_request(request, raw=path.raw).outputs

    return call_grpc


def _v1_caller(ours: OurClients, path: EncodingPath, workload: Workload,
               inputs: list[Tensor]) -> Caller:  # fmt: skip
    """oipcodec's v1 client (HTTP or gRPC): the identity payload goes to the typed identity
    model of its datatype and rank (a v1 request names no datatype), a model's generated
    request to the model itself. Answers as Tensors, for the workload's checks."""
    client = ours.v1_http if path.protocol == "rest" else ours.v1_grpc
    if client is None:
        raise ValueError(f"no {'REST URL' if path.protocol == 'rest' else 'gRPC target'}")
    model = v1_model_name(inputs[0]) if workload.echo else workload.model
    values = {t.name: t.data for t in inputs}
    batch = inputs[0].shape[0] if workload.batching else None

    def call_v1() -> Any:
        outputs = client.infer(model, values, batch_size=batch).outputs
        return [
            Tensor(name, datatypes.datatype_of(data), data.shape, data)
            for name, data in outputs.items()
        ]

    return call_v1


class V1Identity(Model):
    """The identity of one datatype and rank, declared, as the v1 API needs (its requests
    name no datatype); it does not batch, so v1 dims are the whole shape."""

    platform = "oipcodec_python"

    def __init__(self, datatype: str, rank: int) -> None:
        spec = TensorSpec(INPUT, datatype, [-1] * rank)
        super().__init__(f"v1_identity_{datatype.lower()}_{rank}d", inputs=[spec], outputs=[spec])

    def predict(self, inputs: Arrays, parameters: Any) -> Arrays:
        return inputs


#: The ranks the typed identity models cover.
V1_RANKS = (1, 2, 3, 4)


def v1_models() -> list[Model]:
    """A :class:`V1Identity` for every datatype v1 has (all but BF16) and rank 1 to 4: the
    embedded server's models for the v1 paths."""
    return [
        V1Identity(name, rank)
        for name in datatypes.DATATYPES
        if name != "BF16"
        for rank in V1_RANKS
    ]


def v1_model_name(tensor: Tensor) -> str:
    """The typed identity model a v1 path sends ``tensor`` to."""
    rank = len(tensor.shape)
    if rank not in V1_RANKS:
        raise ValueError(f"the v1 paths send tensors of rank 1 to 4, not {rank}")
    return f"v1_identity_{tensor.datatype.lower()}_{rank}d"


def _graphpipe_caller(implementation: str, workload: Workload, inputs: list[Tensor],
                      url: str | None, timeout: float,
                      connection: Connection) -> Caller:  # fmt: skip
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
        return [
            Tensor(name, datatypes.datatype_of(data), data.shape, data)
            for name, data in zip(labels, outputs, strict=False)
        ]

    if implementation == "graphpipe":
        from graphpipe import remote

        def call_theirs() -> Any:
            return named(remote.execute_multi(endpoint, arrays, names, wanted))

        return call_theirs
    from oipcodec.client.graphpipe_client import GraphPipeClient

    client = GraphPipeClient(endpoint, timeout=timeout, **connection.http_options(endpoint))
    _RELEASE.append(client.close)

    def call_ours() -> Any:
        return named(client.infer(arrays, names, wanted))

    return call_ours


def _raw_size(tensor: Any) -> int:
    """Bytes of a tensor's values as they lie in shared memory (BYTES: length-prefixed)."""
    return len(array_to_raw(tensor.data, tensor.datatype))


def _out_size(workload: Workload, output: Any) -> int:
    """The size of an output's region: the largest answer of that output the probes saw."""
    return max(1, _raw_size(output), workload.region_sizes.get(output.name, 0))


def _shm_caller(ours: OurClients, workload: Workload, inputs: list[Tensor]) -> Caller:
    """oipcodec's client with the tensors in shared memory: each request writes the inputs
    into the caller's input regions (the copy a producer makes) and reads the outputs from
    its output regions (sized by the workload's first answer)."""
    client = ours.http
    if client is None:
        raise ValueError("no REST URL to send to")
    in_regions = [_our_region("in", _raw_size(t)) for t in inputs]
    model, answer = workload.model, workload.answer
    out_regions = [_our_region("out", _out_size(workload, t)) for t in answer]
    for region in (*in_regions, *out_regions):
        client.register_region(region)
    wanted = [region.output(t.name) for region, t in zip(out_regions, answer, strict=True)]

    def call_shm() -> Any:
        sent = [
            region.input(t.name, t.data, datatype=t.datatype)
            for region, t in zip(in_regions, inputs, strict=True)
        ]
        request = InferRequest(sent, outputs=wanted, model_name=model)
        return client.infer_request(request).outputs

    return call_shm


def _triton_dtype(datatype: str) -> Any:
    from tritonclient.utils import triton_to_np_dtype

    return np.object_ if datatype == "BYTES" else triton_to_np_dtype(datatype)


def _triton_data(tensor: Tensor) -> Any:
    from tritonclient.utils import serialize_byte_tensor

    return serialize_byte_tensor(tensor.data) if tensor.datatype == "BYTES" else tensor.data


def _triton_shm_caller(workload: Workload, inputs: list[Tensor], url: str | None,
                       timeout: float, connection: Connection) -> Caller:  # fmt: skip
    """tritonclient with its shared-memory utilities, as Triton's examples use them."""
    import tritonclient.http as th
    import tritonclient.utils.shared_memory as tshm

    if url is None:
        raise ValueError("no REST URL to send to")
    client = th.InferenceServerClient(
        url.split("://", 1)[-1], connection_timeout=timeout, network_timeout=timeout,
        **connection.triton_http_options(url),
    )  # fmt: skip
    headers = connection.headers or None

    def region(role: str, size: int) -> tuple[str, Any]:
        name, key = _region_key(role)
        handle = tshm.create_shared_memory_region(name, key, size)
        _RELEASE.append(functools.partial(tshm.destroy_shared_memory_region, handle))
        client.register_system_shared_memory(name, key, size, headers=headers)
        return name, handle

    sent = [(t, _triton_data(t), _raw_size(t), *region("in", _raw_size(t))) for t in inputs]
    model = workload.model
    wanted = [(t.name, t.datatype, _out_size(workload, t), *region("out", _out_size(workload, t)))
              for t in workload.answer]  # fmt: skip

    def call_shm() -> Any:
        items = []
        for tensor, data, size, name, handle in sent:
            tshm.set_shared_memory_region(handle, [data])
            item = th.InferInput(tensor.name, list(tensor.shape), tensor.datatype)
            item.set_shared_memory(name, size)
            items.append(item)
        outs = []
        for output, _, size, name, _ in wanted:
            out = th.InferRequestedOutput(output)
            out.set_shared_memory(name, size)
            outs.append(out)
        result = client.infer(model, items, outputs=outs, headers=headers)
        got = []
        for output, datatype, _, _, handle in wanted:
            shape = result.get_output(output)["shape"]
            data = tshm.get_contents_as_numpy(handle, _triton_dtype(datatype), shape)
            got.append(Output(output, datatype, tuple(shape), data))
        return got

    return call_shm


def _triton_rest_outputs(result: Any) -> list[Output]:
    """tritonclient's HTTP result as the outputs it holds (read with ``as_numpy``)."""
    return [
        Output(o["name"], o["datatype"], tuple(o["shape"]), result.as_numpy(o["name"]))
        for o in result.get_response().get("outputs", [])
    ]


def _triton_grpc_outputs(result: Any) -> list[Output]:
    """tritonclient's gRPC result as the outputs it holds (read with ``as_numpy``)."""
    return [
        Output(o.name, o.datatype, tuple(o.shape), result.as_numpy(o.name))
        for o in result.get_response().outputs
    ]


def _triton_rest_inputs(inputs: list[Tensor], binary: bool) -> list[Any]:
    import tritonclient.http as th

    items = []
    for tensor in inputs:
        item = th.InferInput(tensor.name, list(tensor.shape), tensor.datatype)
        item.set_data_from_numpy(tensor.data, binary_data=binary)
        items.append(item)
    return items


def _triton_grpc_inputs(inputs: list[Tensor]) -> list[Any]:
    import tritonclient.grpc as tg

    items = []
    for tensor in inputs:
        item = tg.InferInput(tensor.name, list(tensor.shape), tensor.datatype)
        item.set_data_from_numpy(tensor.data)
        items.append(item)
    return items


def _triton_caller(
    path: EncodingPath,
    model: str,
    inputs: list[Tensor],
    outputs: list[str],
    url: str | None,
    grpc_target: str | None,
    timeout: float,
    connection: Connection,
) -> Caller:
    if path.protocol == "rest":
        import tritonclient.http as th

        if url is None:
            raise ValueError("no REST URL to send to")
        client = th.InferenceServerClient(
            url.split("://", 1)[-1], connection_timeout=timeout, network_timeout=timeout,
            **connection.triton_http_options(url),
        )  # fmt: skip

        # tritonclient names no Content-Type; KServe's server reads a body without one as
        # binary and refuses it, so the JSON requests say what they are, as a user would.
        json_headers = dict(connection.headers)
        if not path.binary:
            json_headers["Content-Type"] = "application/json"

        def call_rest() -> Any:
            wanted = [th.InferRequestedOutput(n, binary_data=path.binary) for n in outputs]
            result = client.infer(
                model,
                _triton_rest_inputs(inputs, path.binary),
                outputs=wanted or None,
                headers=json_headers or None,
                request_compression_algorithm=path.compression,
                response_compression_algorithm=path.compression,
            )
            return _triton_rest_outputs(result)

        return call_rest
    import tritonclient.grpc as tg

    if grpc_target is None:
        raise ValueError("no gRPC target to send to")
    gclient = tg.InferenceServerClient(grpc_target, **connection.triton_grpc_options())
    # gRPC metadata names are lower case (grpcio refuses others), as in oipcodec's client.
    grpc_headers = {name.lower(): value for name, value in connection.headers.items()} or None

    def call_grpc() -> Any:
        wanted = [tg.InferRequestedOutput(n) for n in outputs]
        result = gclient.infer(
            model, _triton_grpc_inputs(inputs), outputs=wanted or None, client_timeout=timeout,
            headers=grpc_headers,
        )  # fmt: skip
        return _triton_grpc_outputs(result)

    return call_grpc


# ------------------------------------------------------------------------------ codec only


@dataclass
class CodecOps:
    """The codec calls of one request/response round trip, and the wire sizes (a peer
    server's: no client calls; tritonclient's: no server calls)."""

    client_encode: Callable[[], Any] | None
    client_decode: Callable[[], Any] | None
    server_decode: Callable[[], Any] | None
    server_encode: Callable[[], Any] | None
    request_bytes: int
    response_bytes: int


def _compressed(body: bytes, compression: str | None) -> bytes:
    return body if compression is None else rest.compress(body, compression)


def codec_ops(implementation: str, path: EncodingPath, workload: Workload) -> CodecOps:
    """What the client and the server do to one request and its answer, as calls to time.

    The request is the workload's first; the answer is the one its first request got (the
    identity model's: the input back under the same name), in binary when the request was
    (``binary_data_output``), compressed when it was.
    """
    model, inputs = workload.model, workload.inputs
    if path.shared_memory:
        return _shm_ops(implementation, workload)
    if path.v1:
        return _v1_ops(workload)
    if path.graphpipe:
        return _graphpipe_ops(implementation, workload)
    request = InferRequest(inputs, model_name=model)
    response = InferResponse(model, list(workload.answer))
    if path.protocol == "rest":
        body, header_length = rest.encode_request(request, binary=path.binary, nested=path.nested)
        body = _compressed(body, path.compression)
        answer, answer_length = rest.encode_response(response, binary=path.binary)
        answer = _compressed(answer, path.compression)
        server_decode = lambda: rest.decode_request(body, header_length, path.compression)  # noqa: E731
        server_encode = lambda: _compressed(  # noqa: E731
            rest.encode_response(response, binary=path.binary)[0], path.compression
        )
        if implementation == "tritonclient":
            encode, decode = _triton_rest_ops(path, workload, answer, answer_length)
            return CodecOps(encode, decode, None, None, len(body), len(answer))
        if implementation in peers.SERVER_PEERS:
            return _peer_server_ops(implementation, path, workload, body, header_length)
        return CodecOps(
            lambda: _compressed(
                rest.encode_request(request, binary=path.binary, nested=path.nested)[0],
                path.compression,
            ),
            lambda: rest.decode_response(answer, answer_length, path.compression),
            server_decode,
            server_encode,
            len(body),
            len(answer),
        )
    message = pb.encode_request(request, raw=path.raw)
    reply = pb.encode_response(response, raw=True)
    if implementation == "tritonclient":
        encode, decode = _triton_grpc_ops(workload, reply)
        return CodecOps(encode, decode, None, None, len(message), len(reply))
    if implementation in peers.SERVER_PEERS:
        return _peer_server_ops(implementation, path, workload, message, None)
    return CodecOps(
        lambda: pb.encode_request(request, raw=path.raw),
        lambda: pb.decode_response(reply),
        lambda: pb.decode_request(message),
        lambda: pb.encode_response(response, raw=True),
        len(message),
        len(reply),
    )


def _v1_ops(workload: Workload) -> CodecOps:
    """The v1 round trip over HTTP (the gRPC path's header is the same message, in binary):
    the client writes the text header and joins the raw body; the server parses the header
    and splits the body into views, then writes the answer's header as text; the client parses
    it and reads the outputs."""
    from oipcodec.client.trtis_client import build_header, read_outputs
    from oipcodec.proto import trtis_v1_pb2 as v1pb

    tensor = workload.inputs[0]
    spec = v1.InputSpec(INPUT, tensor.datatype, tuple(-1 for _ in tensor.shape))
    output: Any = v1pb.ModelOutput(name=INPUT)
    output.data_type = v1.v1_datatype(tensor.datatype)
    config = v1pb.ModelConfig(output=[output])
    inputs = {INPUT: tensor.data}

    def client_encode() -> tuple[str, bytes]:
        header, raws = build_header(inputs, None, None)
        return v1.request_header_text(header), b"".join(raws)

    text, body = client_encode()

    def server_decode() -> Any:
        header = v1.parse_request_header(text)
        return v1.decode_inputs(header, body, [spec], 0)

    response = InferResponse("v1_identity", server_decode())

    def server_encode() -> tuple[str, list[Any]]:
        header, parts = v1.encode_response(response, batch_size=1, batched=False)
        return v1.response_header_text(header), parts

    answer_text, parts = server_encode()
    answer = b"".join(parts)

    def client_decode() -> Any:
        header = v1.parse_response_header(answer_text)
        return read_outputs(header, [answer], config, False)

    return CodecOps(
        client_encode,
        client_decode,
        server_decode,
        server_encode,
        len(text) + len(body),
        2 * len(answer_text) + len(answer),  # NV-InferResponse, and appended to the body
    )


def _graphpipe_ops(implementation: str, workload: Workload) -> CodecOps:
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


def _shm_ops(implementation: str, workload: Workload) -> CodecOps:
    """The round trip with the tensors in shared memory: the client writes the inputs into
    regions and sends the JSON that names them; the server reads them (one copy each: the
    model's inputs) and writes the answer into the output regions; the client reads those."""
    from oipcodec.client.shm import RegionTable
    from oipcodec.server.regions import SharedMemoryRegions

    model, inputs = workload.model, workload.inputs
    server = SharedMemoryRegions()
    _RELEASE.append(server.close)
    in_regions = [_our_region("codec-in", _raw_size(t)) for t in inputs]
    out_regions = [_our_region("codec-out", _out_size(workload, t)) for t in workload.answer]
    known = RegionTable()
    for region in (*in_regions, *out_regions):
        server.register(region.name, region.key, 0, region.byte_size)
    for region in out_regions:
        known.add(region.name, region)
    wanted = [r.output(t.name) for r, t in zip(out_regions, workload.answer, strict=True)]

    def written() -> list[Tensor]:
        return [
            region.input(t.name, t.data, datatype=t.datatype)
            for region, t in zip(in_regions, inputs, strict=True)
        ]

    request = InferRequest(written(), outputs=wanted, model_name=model)
    body, header_length = rest.encode_request(request)
    places = []
    answer_tensors = []
    for tensor, requested in zip(workload.answer, wanted, strict=True):
        where = location(requested.parameters)
        assert where is not None
        places.append(where)
        out = Tensor(tensor.name, tensor.datatype, tensor.shape, tensor.data)
        out.parameters = parameters_for(server.write(out, where))
        answer_tensors.append(out)
    response = InferResponse(model, answer_tensors)
    answer, answer_length = rest.encode_response(response)
    if implementation == "tritonclient":
        encode, decode = _triton_shm_ops(workload, in_regions, out_regions, answer, answer_length)
        return CodecOps(encode, decode, None, None, len(body), len(answer))

    def client_encode() -> Any:
        return rest.encode_request(InferRequest(written(), outputs=wanted, model_name=model))

    def server_decode() -> Any:
        return rest.decode_request(body, header_length, shared_memory=server.resolve)

    def server_encode() -> Any:
        for tensor, where in zip(answer_tensors, places, strict=True):
            server.write(tensor, where)
        return rest.encode_response(response)

    return CodecOps(
        client_encode,
        lambda: rest.decode_response(answer, answer_length, shared_memory=known.resolve),
        server_decode,
        server_encode,
        len(body),
        len(answer),
    )


def _triton_shm_ops(
    workload: Workload,
    in_regions: list[Any],
    out_regions: list[Any],
    answer: bytes,
    answer_length: int | None,
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """tritonclient's side of the shared-memory round trip: write the inputs with its
    shared-memory utilities and build the request; parse the answer and read the output
    regions (opened with tritonclient's own utility, as its examples do)."""
    import tritonclient.http as th
    import tritonclient.utils.shared_memory as tshm
    from tritonclient.http._utils import _get_inference_request

    def attach(region: Any) -> Any:
        # Attached, not created: destroying the handle closes it and leaves the object (ours,
        # removed by its own release).
        handle = tshm.create_shared_memory_region(
            region.name + "-t", region.key, region.byte_size, create_only=False
        )
        _RELEASE.append(functools.partial(tshm.destroy_shared_memory_region, handle))
        return handle

    sent = [(t, _triton_data(t), r, attach(r)) for t, r in zip(workload.inputs, in_regions,
                                                             strict=True)]  # fmt: skip
    got = [(t, r, attach(r)) for t, r in zip(workload.answer, out_regions, strict=True)]

    def encode() -> Any:
        items = []
        for tensor, data, region, handle in sent:
            tshm.set_shared_memory_region(handle, [data])
            item = th.InferInput(tensor.name, list(tensor.shape), tensor.datatype)
            item.set_shared_memory(region.name, region.byte_size)
            items.append(item)
        outs = []
        for tensor, region, _ in got:
            out = th.InferRequestedOutput(tensor.name)
            out.set_shared_memory(region.name, region.byte_size)
            outs.append(out)
        return _get_inference_request(items, "", outs, 0, False, False, 0, None, None)[0]

    def decode() -> Any:
        th.InferResult.from_response_body(answer, False, answer_length, None)
        return [
            tshm.get_contents_as_numpy(handle, _triton_dtype(t.datatype), list(t.shape))
            for t, _, handle in got
        ]

    return encode, decode


def _peer_server_ops(peer: str, path: EncodingPath, workload: Workload, body: bytes,
                     header_length: int | None) -> CodecOps:  # fmt: skip
    """A peer server's decode and encode of ``body``, checked once: the model gets the
    values sent, and the answer, read back by oipcodec, holds them (else ValueError)."""
    (tensor,) = workload.inputs  # an echo workload: supported() keeps the others away
    decode, encode = peers.server_codec(peer, path.protocol, workload.model, body, header_length)
    if not same_values(tensor, decode()[0]):
        raise ValueError(f"{peer}'s decode does not give the values sent")
    answer, answer_length = encode()
    if path.protocol == "rest":
        received = rest.decode_response(answer, answer_length).outputs[0].data
    else:
        received = pb.decode_response(answer).outputs[0].data
    if not same_values(tensor, received):
        raise ValueError(f"{peer}'s answer does not hold the values sent")
    return CodecOps(None, None, decode, encode, len(body), len(answer))


def _triton_rest_ops(
    path: EncodingPath, workload: Workload, answer: bytes, answer_length: int | None
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    import tritonclient.http as th
    from tritonclient.http._utils import _get_inference_request

    def encode() -> Any:
        items = _triton_rest_inputs(workload.inputs, path.binary)
        outs = [th.InferRequestedOutput(n, binary_data=path.binary) for n in workload.output_names]
        body, _ = _get_inference_request(items, "", outs or None, 0, False, False, 0, None, None)
        if path.compression == "gzip":  # as tritonclient's infer() does it
            body = gzip.compress(body)
        elif path.compression == "deflate":
            body = zlib.compress(body)
        return body

    def decode() -> Any:
        result = th.InferResult.from_response_body(answer, False, answer_length, path.compression)
        return _triton_rest_outputs(result)

    return encode, decode


def _triton_grpc_ops(
    workload: Workload, reply: bytes
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    import tritonclient.grpc as tg
    from tritonclient.grpc import service_pb2
    from tritonclient.grpc._utils import _get_inference_request

    def encode() -> Any:
        items = _triton_grpc_inputs(workload.inputs)
        outs = [tg.InferRequestedOutput(n) for n in workload.output_names]
        message = _get_inference_request(workload.model, items, "", "", outs or None, 0, False,
                                         False, 0, None, None)  # fmt: skip
        return message.SerializeToString()

    def decode() -> Any:
        reply_message = service_pb2.ModelInferResponse.FromString(reply)
        return _triton_grpc_outputs(tg.InferResult(reply_message))

    return encode, decode


def same_values(sent: Tensor, received: Any) -> bool:
    """Whether an answer holds exactly the values sent (bit for bit for floats)."""
    expected = sent.data
    got = np.asarray(received)
    if got.size != expected.size:
        return False
    if sent.datatype == "BYTES":
        return [bytes(x) if not isinstance(x, str) else x.encode() for x in got.ravel()] == [
            bytes(x) for x in expected.ravel()
        ]
    if sent.datatype == "BF16":
        a = np.asarray(expected, dtype=np.float32).ravel()
        b = np.asarray(got, dtype=np.float32).ravel()
        return bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))
    return bool(
        np.array_equal(
            np.ascontiguousarray(expected).ravel().view(np.uint8),
            np.ascontiguousarray(got.astype(expected.dtype, copy=False)).ravel().view(np.uint8),
        )
    )
