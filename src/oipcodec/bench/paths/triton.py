"""``tritonclient``, Triton's Python client (its request building and result parsing), on the
paths it has: REST JSON flat and binary (gzip too), gRPC raw, and shared memory with its own
shared-memory utilities. It writes JSON flat only and gRPC raw contents only."""

from __future__ import annotations

import functools
import gzip
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from oipcodec.bench.connection import Connection
from oipcodec.bench.encoding import Encoding, EncodingPath
from oipcodec.bench.paths.base import Caller, CodecOps, on_release
from oipcodec.bench.paths.oip import wire
from oipcodec.bench.paths.shared_memory import out_size, raw_size, region_key
from oipcodec.bench.workload import Output, Workload
from oipcodec.types import Tensor

__all__ = ["PATHS", "available", "caller", "codec_ops", "shm_ops"]

#: The paths tritonclient takes.
PATHS = ("rest-json", "rest-binary", "rest-binary-gzip", "grpc-raw", "shm")

_Ops = tuple[Callable[[], Any], Callable[[], Any]]


def available() -> bool:
    """Whether tritonclient's HTTP and gRPC clients are installed."""
    try:
        import tritonclient.grpc
        import tritonclient.http  # noqa: F401
    except ImportError:
        return False
    return True


def _http_client(url: str | None, timeout: float, connection: Connection) -> Any:
    import tritonclient.http as th

    if url is None:
        raise ValueError("no REST URL to send to")
    return th.InferenceServerClient(
        url.split("://", 1)[-1], connection_timeout=timeout, network_timeout=timeout,
        **connection.triton_http_options(url),
    )  # fmt: skip


def caller(path: EncodingPath, workload: Workload, inputs: list[Tensor], url: str | None,
           grpc_target: str | None, timeout: float, connection: Connection) -> Caller:  # fmt: skip
    if path.encoding is Encoding.SHARED_MEMORY:
        return _shm_caller(workload, inputs, url, timeout, connection)
    # The identity's answer is asked for whole (its one output may have a name of its own:
    # see workload.echoed); a model's declared outputs by name.
    outputs = [] if workload.echo else workload.output_names
    model = workload.model
    if path.protocol == "rest":
        import tritonclient.http as th

        client = _http_client(url, timeout, connection)
        # tritonclient names no Content-Type; KServe's server reads a body without one as
        # binary and refuses it, so the JSON requests say what they are, as a user would.
        json_headers = dict(connection.headers)
        if not path.binary:
            json_headers["Content-Type"] = "application/json"

        def call_rest() -> Any:
            wanted = [th.InferRequestedOutput(n, binary_data=path.binary) for n in outputs]
            result = client.infer(
                model,
                _rest_inputs(inputs, path.binary),
                outputs=wanted or None,
                headers=json_headers or None,
                request_compression_algorithm=path.compression,
                response_compression_algorithm=path.compression,
            )
            return _rest_outputs(result)

        return call_rest
    import tritonclient.grpc as tg

    if grpc_target is None:
        raise ValueError("no gRPC target to send to")
    from oipcodec.client.grpc_client import channel_target

    # tritonclient takes host:port only; a scheme given to --grpc-target is oipcodec's form.
    gclient = tg.InferenceServerClient(
        channel_target(grpc_target), **connection.triton_grpc_options()
    )
    # gRPC metadata names are lower case (grpcio refuses others), as in oipcodec's client.
    grpc_headers = {name.lower(): value for name, value in connection.headers.items()} or None

    def call_grpc() -> Any:
        wanted = [tg.InferRequestedOutput(n) for n in outputs]
        result = gclient.infer(
            model, _grpc_inputs(inputs), outputs=wanted or None, client_timeout=timeout,
            headers=grpc_headers,
        )  # fmt: skip
        return _grpc_outputs(result)

    return call_grpc


def _dtype(datatype: str) -> Any:
    from tritonclient.utils import triton_to_np_dtype

    return np.object_ if datatype == "BYTES" else triton_to_np_dtype(datatype)


def _data(tensor: Tensor) -> Any:
    from tritonclient.utils import serialize_byte_tensor

    return serialize_byte_tensor(tensor.data) if tensor.datatype == "BYTES" else tensor.data


def _shm_caller(workload: Workload, inputs: list[Tensor], url: str | None,
                timeout: float, connection: Connection) -> Caller:  # fmt: skip
    """tritonclient with its shared-memory utilities, as Triton's examples use them."""
    import tritonclient.http as th
    import tritonclient.utils.shared_memory as tshm

    client = _http_client(url, timeout, connection)
    headers = connection.headers or None

    def region(role: str, size: int) -> tuple[str, Any]:
        name, key = region_key(role)
        handle = tshm.create_shared_memory_region(name, key, size)
        on_release(functools.partial(tshm.destroy_shared_memory_region, handle))
        client.register_system_shared_memory(name, key, size, headers=headers)
        return name, handle

    sent = [(t, _data(t), raw_size(t), *region("in", raw_size(t))) for t in inputs]
    model = workload.model
    wanted = [(t.name, t.datatype, out_size(workload, t), *region("out", out_size(workload, t)))
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
            data = tshm.get_contents_as_numpy(handle, _dtype(datatype), shape)
            got.append(Output(output, datatype, tuple(shape), data))
        return got

    return call_shm


def _rest_outputs(result: Any) -> list[Output]:
    """tritonclient's HTTP result as the outputs it holds (read with ``as_numpy``)."""
    return [
        Output(o["name"], o["datatype"], tuple(o["shape"]), result.as_numpy(o["name"]))
        for o in result.get_response().get("outputs", [])
    ]


def _grpc_outputs(result: Any) -> list[Output]:
    """tritonclient's gRPC result as the outputs it holds (read with ``as_numpy``)."""
    return [
        Output(o.name, o.datatype, tuple(o.shape), result.as_numpy(o.name))
        for o in result.get_response().outputs
    ]


def _rest_inputs(inputs: list[Tensor], binary: bool) -> list[Any]:
    import tritonclient.http as th

    items = []
    for tensor in inputs:
        item = th.InferInput(tensor.name, list(tensor.shape), tensor.datatype)
        item.set_data_from_numpy(tensor.data, binary_data=binary)
        items.append(item)
    return items


def _grpc_inputs(inputs: list[Tensor]) -> list[Any]:
    import tritonclient.grpc as tg

    items = []
    for tensor in inputs:
        item = tg.InferInput(tensor.name, list(tensor.shape), tensor.datatype)
        item.set_data_from_numpy(tensor.data)
        items.append(item)
    return items


def codec_ops(path: EncodingPath, workload: Workload) -> CodecOps:
    """tritonclient's request building and result parsing on a REST or gRPC path, the answer
    being oipcodec's server's (no server calls: tritonclient is a client)."""
    sent = wire(path, workload)
    if path.protocol == "rest":
        encode, decode = _rest_ops(path, workload, sent.answer, sent.answer_length)
    else:
        encode, decode = _grpc_ops(workload, sent.answer)
    return CodecOps(encode, decode, None, None, len(sent.body), len(sent.answer))


def shm_ops(workload: Workload, in_regions: list[Any], out_regions: list[Any], answer: bytes,
            answer_length: int | None) -> _Ops:  # fmt: skip
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
        on_release(functools.partial(tshm.destroy_shared_memory_region, handle))
        return handle

    sent = [(t, _data(t), r, attach(r)) for t, r in zip(workload.inputs, in_regions,
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
            tshm.get_contents_as_numpy(handle, _dtype(t.datatype), list(t.shape))
            for t, _, handle in got
        ]

    return encode, decode


def _rest_ops(path: EncodingPath, workload: Workload, answer: bytes,
              answer_length: int | None) -> _Ops:  # fmt: skip
    import tritonclient.http as th
    from tritonclient.http._utils import _get_inference_request

    def encode() -> Any:
        items = _rest_inputs(workload.inputs, path.binary)
        outs = [th.InferRequestedOutput(n, binary_data=path.binary) for n in workload.output_names]
        body, _ = _get_inference_request(items, "", outs or None, 0, False, False, 0, None, None)
        if path.compression == "gzip":  # as tritonclient's infer() does it
            body = gzip.compress(body)
        elif path.compression == "deflate":
            body = zlib.compress(body)
        return body

    def decode() -> Any:
        result = th.InferResult.from_response_body(answer, False, answer_length, path.compression)
        return _rest_outputs(result)

    return encode, decode


def _grpc_ops(workload: Workload, reply: bytes) -> _Ops:
    import tritonclient.grpc as tg
    from tritonclient.grpc import service_pb2
    from tritonclient.grpc._utils import _get_inference_request

    def encode() -> Any:
        items = _grpc_inputs(workload.inputs)
        outs = [tg.InferRequestedOutput(n) for n in workload.output_names]
        message = _get_inference_request(workload.model, items, "", "", outs or None, 0, False,
                                         False, 0, None, None)  # fmt: skip
        return message.SerializeToString()

    def decode() -> Any:
        reply_message = service_pb2.ModelInferResponse.FromString(reply)
        return _grpc_outputs(tg.InferResult(reply_message))

    return encode, decode
