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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec import graphpipe, pb, rest
from oipcodec.bench import peers
from oipcodec.bench.payloads import INPUT
from oipcodec.raw import array_to_raw
from oipcodec.sharedmem import location, parameters_for
from oipcodec.types import InferRequest, InferResponse, Tensor

__all__ = [
    "DESCRIPTIONS",
    "IMPLEMENTATIONS",
    "PATHS",
    "Caller",
    "EncodingPath",
    "codec_only",
    "codec_ops",
    "make_caller",
    "peer_available",
    "release",
    "supported",
]


@dataclass(frozen=True)
class EncodingPath:
    name: str
    label: str
    protocol: str  # "rest" or "grpc"
    binary: bool = False
    nested: bool = False
    compression: str | None = None
    raw: bool = True
    #: The tensor stays in a system shared-memory region both ways; the request (over
    #: ``protocol``) only names where (the embedded server enables the extension).
    shared_memory: bool = False
    #: GraphPipe's flatbuffers, POSTed to the REST port's ``/graphpipe/<model>``.
    graphpipe: bool = False


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
#: The implementations that take every path, GraphPipe's included.
_OURS = ("native", "pure")
#: The paths tritonclient can take (it writes JSON flat only and gRPC raw contents only).
_TRITON_PATHS = ("rest-json", "rest-binary", "rest-binary-gzip", "grpc-raw", "shm")

#: One request, answered: returns the output array (checked against the input once).
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


def supported(implementation: str, path: EncodingPath, datatype: str) -> str | None:
    """None when ``implementation`` can send ``datatype`` on ``path``, else why not."""
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


# ------------------------------------------------------------------------------ end to end


class OurClients:
    """oipcodec's clients, shared by the load threads (both are thread-safe)."""

    def __init__(self, url: str | None, grpc_target: str | None, pool_size: int,
                 timeout: float) -> None:  # fmt: skip
        from oipcodec.client import GrpcClient, HttpClient

        self.http = HttpClient(url, pool_size=pool_size, timeout=timeout) if url else None
        self.grpc = GrpcClient(grpc_target, timeout=timeout) if grpc_target else None

    def close(self) -> None:
        if self.http is not None:
            self.http.close()
        if self.grpc is not None:
            self.grpc.close()


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
    model: str,
    tensor: Tensor,
    ours: OurClients | None,
    url: str | None,
    grpc_target: str | None,
    timeout: float,
) -> Caller:
    """A caller for one load thread (made in that thread: tritonclient's HTTP client is
    gevent-based and must stay in the thread that made it)."""
    if implementation == "tritonclient":
        if path.shared_memory:
            return _triton_shm_caller(model, tensor, url, timeout)
        return _triton_caller(path, model, tensor, url, grpc_target, timeout)
    if path.graphpipe:
        return _graphpipe_caller(implementation, model, tensor, url, timeout)
    assert ours is not None
    if path.shared_memory:
        return _shm_caller(ours, model, tensor)
    request = InferRequest([tensor], model_name=model)
    if path.protocol == "rest":
        http = ours.http
        if http is None:
            raise ValueError("no REST URL to send to")

        def call_rest() -> Any:
            response = http.infer_request(
                request, path.binary, path.compression, nested=path.nested
            )
            return response.outputs[0].data

        return call_rest
    grpc = ours.grpc
    if grpc is None:
        raise ValueError("no gRPC target to send to")

    def call_grpc() -> Any:
        return grpc.infer_request(request, raw=path.raw).outputs[0].data

    return call_grpc


def _graphpipe_caller(
    implementation: str, model: str, tensor: Tensor, url: str | None, timeout: float
) -> Caller:
    """A GraphPipe client of the server's ``/graphpipe/<model>``: oipcodec's, or GraphPipe's
    own (``graphpipe.remote``, on requests)."""
    if url is None:
        raise ValueError("no REST URL to send to")
    endpoint = f"{url}/graphpipe/{model}"
    if implementation == "graphpipe":
        from graphpipe import remote

        def call_theirs() -> Any:
            return remote.execute_multi(endpoint, [tensor.data], [INPUT], None)[0]

        return call_theirs
    from oipcodec.client.graphpipe import GraphPipeClient

    client = GraphPipeClient(endpoint, timeout=timeout)
    _RELEASE.append(client.close)

    def call_ours() -> Any:
        return client.infer([tensor.data], [INPUT])[0]

    return call_ours


def _shm_caller(ours: OurClients, model: str, tensor: Tensor) -> Caller:
    """oipcodec's client with the tensor in shared memory: each request writes the tensor into
    the caller's input region (the copy a producer makes) and reads the answer as a view of
    its output region."""
    client = ours.http
    if client is None:
        raise ValueError("no REST URL to send to")
    size = len(array_to_raw(tensor.data, tensor.datatype))
    inputs, outputs = _our_region("in", size), _our_region("out", size)
    client.register_region(inputs)
    client.register_region(outputs)
    wanted = [outputs.output(INPUT)]

    def call_shm() -> Any:
        sent = inputs.input(INPUT, tensor.data, datatype=tensor.datatype)
        request = InferRequest([sent], outputs=wanted, model_name=model)
        return client.infer_request(request).outputs[0].data

    return call_shm


def _triton_shm_caller(model: str, tensor: Tensor, url: str | None, timeout: float) -> Caller:
    """tritonclient with its shared-memory utilities, as Triton's examples use them."""
    import tritonclient.http as th
    import tritonclient.utils.shared_memory as tshm
    from tritonclient.utils import serialize_byte_tensor, triton_to_np_dtype

    if url is None:
        raise ValueError("no REST URL to send to")
    client = th.InferenceServerClient(
        url.split("://", 1)[-1], connection_timeout=timeout, network_timeout=timeout
    )
    shape, datatype = list(tensor.shape), tensor.datatype
    data = serialize_byte_tensor(tensor.data) if datatype == "BYTES" else tensor.data
    size = len(array_to_raw(tensor.data, datatype))
    handles = []
    for role in ("in", "out"):
        name, key = _region_key(role)
        handle = tshm.create_shared_memory_region(name, key, size)
        _RELEASE.append(functools.partial(tshm.destroy_shared_memory_region, handle))
        client.register_system_shared_memory(name, key, size)
        handles.append((name, handle))
    (in_name, in_handle), (out_name, out_handle) = handles
    dtype = np.object_ if datatype == "BYTES" else triton_to_np_dtype(datatype)

    def call_shm() -> Any:
        tshm.set_shared_memory_region(in_handle, [data])
        item = th.InferInput(INPUT, shape, datatype)
        item.set_shared_memory(in_name, size)
        out = th.InferRequestedOutput(INPUT)
        out.set_shared_memory(out_name, size)
        client.infer(model, [item], outputs=[out])
        return tshm.get_contents_as_numpy(out_handle, dtype, shape)

    return call_shm


def _triton_caller(
    path: EncodingPath,
    model: str,
    tensor: Tensor,
    url: str | None,
    grpc_target: str | None,
    timeout: float,
) -> Caller:
    data, shape, datatype = tensor.data, list(tensor.shape), tensor.datatype
    if path.protocol == "rest":
        import tritonclient.http as th

        if url is None:
            raise ValueError("no REST URL to send to")
        client = th.InferenceServerClient(
            url.split("://", 1)[-1], connection_timeout=timeout, network_timeout=timeout
        )

        def call_rest() -> Any:
            item = th.InferInput(INPUT, shape, datatype)
            item.set_data_from_numpy(data, binary_data=path.binary)
            out = th.InferRequestedOutput(INPUT, binary_data=path.binary)
            result = client.infer(
                model,
                [item],
                outputs=[out],
                request_compression_algorithm=path.compression,
                response_compression_algorithm=path.compression,
            )
            return result.as_numpy(INPUT)

        return call_rest
    import tritonclient.grpc as tg

    if grpc_target is None:
        raise ValueError("no gRPC target to send to")
    gclient = tg.InferenceServerClient(grpc_target)

    def call_grpc() -> Any:
        item = tg.InferInput(INPUT, shape, datatype)
        item.set_data_from_numpy(data)
        return gclient.infer(model, [item], client_timeout=timeout).as_numpy(INPUT)

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


def codec_ops(implementation: str, path: EncodingPath, model: str, tensor: Tensor) -> CodecOps:
    """What the client and the server do to one request and its answer, as calls to time.

    The answer is the identity model's: the input back as the output of the same name, in
    binary when the request was (``binary_data_output``), compressed when it was.
    """
    if path.shared_memory:
        return _shm_ops(implementation, model, tensor)
    if path.graphpipe:
        return _graphpipe_ops(implementation, tensor)
    request = InferRequest([tensor], model_name=model)
    response = InferResponse(model, [tensor])
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
            encode, decode = _triton_rest_ops(path, tensor, answer, answer_length)
            return CodecOps(encode, decode, None, None, len(body), len(answer))
        if implementation in peers.SERVER_PEERS:
            return _peer_server_ops(implementation, path, model, tensor, body, header_length)
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
        encode, decode = _triton_grpc_ops(model, tensor, reply)
        return CodecOps(encode, decode, None, None, len(message), len(reply))
    if implementation in peers.SERVER_PEERS:
        return _peer_server_ops(implementation, path, model, tensor, message, None)
    return CodecOps(
        lambda: pb.encode_request(request, raw=path.raw),
        lambda: pb.decode_response(reply),
        lambda: pb.decode_request(message),
        lambda: pb.encode_response(response, raw=True),
        len(message),
        len(reply),
    )


def _graphpipe_ops(implementation: str, tensor: Tensor) -> CodecOps:
    """The GraphPipe round trip: the client writes a Request and reads the InferResponse, the
    server reads the Request and writes the identity answer (oipcodec's codec; GraphPipe's
    client is timed with its convert module)."""
    body = b"".join(graphpipe.encode_request([tensor.data], [INPUT]))
    answer = graphpipe.encode_response([tensor.data])
    if implementation == "graphpipe":
        from graphpipe import convert

        def encode() -> Any:
            request = convert.InferReq(None, [tensor.data], [INPUT], None)
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
        lambda: b"".join(graphpipe.encode_request([tensor.data], [INPUT])),
        lambda: graphpipe.decode_response(answer),
        lambda: graphpipe.decode_request(body),
        lambda: graphpipe.encode_response_parts([tensor.data]),
        len(body),
        len(answer),
    )


def _shm_ops(implementation: str, model: str, tensor: Tensor) -> CodecOps:
    """The round trip with the tensor in shared memory: the client writes it into a region
    and sends the JSON that names it; the server reads it as a view (its input) and writes the
    identity answer into the output region; the client reads that as a view."""
    from oipcodec.client.shm import RegionTable
    from oipcodec.server.shm import SharedMemoryRegions

    size = len(array_to_raw(tensor.data, tensor.datatype))
    inputs, outputs = _our_region("codec-in", size), _our_region("codec-out", size)
    server = SharedMemoryRegions()
    _RELEASE.append(server.close)
    for region in (inputs, outputs):
        server.register(region.name, region.key, 0, size)
    known = RegionTable()
    known.add(outputs.name, outputs)
    sent = inputs.input(INPUT, tensor.data, datatype=tensor.datatype)
    wanted = outputs.output(INPUT)
    request = InferRequest([sent], outputs=[wanted], model_name=model)
    body, header_length = rest.encode_request(request)
    where = location(wanted.parameters)
    assert where is not None
    answer_tensor = Tensor(INPUT, tensor.datatype, tensor.shape, tensor.data)
    answer_tensor.parameters = parameters_for(server.write(answer_tensor, where))
    response = InferResponse(model, [answer_tensor])
    answer, answer_length = rest.encode_response(response)
    if implementation == "tritonclient":
        encode, decode = _triton_shm_ops(tensor, inputs, outputs, answer, answer_length)
        return CodecOps(encode, decode, None, None, len(body), len(answer))

    def client_encode() -> Any:
        again = inputs.input(INPUT, tensor.data, datatype=tensor.datatype)
        return rest.encode_request(InferRequest([again], outputs=[wanted], model_name=model))

    def server_decode() -> Any:
        return rest.decode_request(body, header_length, shared_memory=server.resolve)

    def server_encode() -> Any:
        server.write(answer_tensor, where)
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
    tensor: Tensor, inputs: Any, outputs: Any, answer: bytes, answer_length: int | None
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """tritonclient's side of the shared-memory round trip: write the tensor with its
    shared-memory utilities and build the request; parse the answer and read the output
    region (opened with tritonclient's own utility, as its examples do)."""
    import tritonclient.http as th
    import tritonclient.utils.shared_memory as tshm
    from tritonclient.http._utils import _get_inference_request
    from tritonclient.utils import serialize_byte_tensor, triton_to_np_dtype

    shape, datatype = list(tensor.shape), tensor.datatype
    data = serialize_byte_tensor(tensor.data) if datatype == "BYTES" else tensor.data
    size = inputs.byte_size
    handles = [
        tshm.create_shared_memory_region(r.name + "-t", r.key, size, create_only=False)
        for r in (inputs, outputs)
    ]
    # Attached, not created: destroying the handles closes them and leaves the objects (ours,
    # removed by their own release).
    _RELEASE.extend(functools.partial(tshm.destroy_shared_memory_region, h) for h in handles)
    dtype = np.object_ if datatype == "BYTES" else triton_to_np_dtype(datatype)

    def encode() -> Any:
        tshm.set_shared_memory_region(handles[0], [data])
        item = th.InferInput(INPUT, shape, datatype)
        item.set_shared_memory(inputs.name, size)
        out = th.InferRequestedOutput(INPUT)
        out.set_shared_memory(outputs.name, size)
        return _get_inference_request([item], "", [out], 0, False, False, 0, None, None)[0]

    def decode() -> Any:
        th.InferResult.from_response_body(answer, False, answer_length, None)
        return tshm.get_contents_as_numpy(handles[1], dtype, shape)

    return encode, decode


def _peer_server_ops(peer: str, path: EncodingPath, model: str, tensor: Tensor, body: bytes,
                     header_length: int | None) -> CodecOps:  # fmt: skip
    """A peer server's decode and encode of ``body``, checked once: the model gets the
    values sent, and the answer, read back by oipcodec, holds them (else ValueError)."""
    decode, encode = peers.server_codec(peer, path.protocol, model, body, header_length)
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
    path: EncodingPath, tensor: Tensor, answer: bytes, answer_length: int | None
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    import tritonclient.http as th
    from tritonclient.http._utils import _get_inference_request

    shape, datatype = list(tensor.shape), tensor.datatype

    def encode() -> Any:
        item = th.InferInput(INPUT, shape, datatype)
        item.set_data_from_numpy(tensor.data, binary_data=path.binary)
        out = th.InferRequestedOutput(INPUT, binary_data=path.binary)
        body, _ = _get_inference_request([item], "", [out], 0, False, False, 0, None, None)
        if path.compression == "gzip":  # as tritonclient's infer() does it
            body = gzip.compress(body)
        elif path.compression == "deflate":
            body = zlib.compress(body)
        return body

    def decode() -> Any:
        result = th.InferResult.from_response_body(answer, False, answer_length, path.compression)
        return result.as_numpy(INPUT)

    return encode, decode


def _triton_grpc_ops(
    model: str, tensor: Tensor, reply: bytes
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    import tritonclient.grpc as tg
    from tritonclient.grpc import service_pb2
    from tritonclient.grpc._utils import _get_inference_request

    shape, datatype = list(tensor.shape), tensor.datatype

    def encode() -> Any:
        item = tg.InferInput(INPUT, shape, datatype)
        item.set_data_from_numpy(tensor.data)
        message = _get_inference_request(model, [item], "", "", None, 0, False, False, 0, None,
                                         None)  # fmt: skip
        return message.SerializeToString()

    def decode() -> Any:
        return tg.InferResult(service_pb2.ModelInferResponse.FromString(reply)).as_numpy(INPUT)

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
