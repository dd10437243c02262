"""The shared-memory path with oipcodec's client and server: the regions a caller or a codec
timing makes (each removed by :func:`~oipcodec.bench.paths.base.release`), the caller, and
the round trip's codec calls. tritonclient's side of this path is in
:mod:`oipcodec.bench.paths.triton`, on the regions made here."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from typing import Any

from oipcodec import rest
from oipcodec.bench.paths.base import Caller, CodecOps, on_release
from oipcodec.bench.paths.oip import OurClients
from oipcodec.bench.workload import Workload
from oipcodec.raw import array_to_raw
from oipcodec.sharedmem import location, parameters_for
from oipcodec.types import InferRequest, InferResponse, Tensor

__all__ = ["caller", "codec_ops", "out_size", "raw_size", "region_key"]

_names = itertools.count()


def region_key(role: str) -> tuple[str, str]:
    """A region name and POSIX key no other caller of this process (or process) uses."""
    name = f"bench-{os.getpid()}-{next(_names)}-{role}"
    return name, "/oipcodec-" + name


def _our_region(role: str, size: int) -> Any:
    from oipcodec.client.shm import SharedMemoryRegion

    name, key = region_key(role)
    region = SharedMemoryRegion.create(name, size, key)
    on_release(region.close)
    return region


def raw_size(tensor: Any) -> int:
    """Bytes of a tensor's values as they lie in shared memory (BYTES: length-prefixed)."""
    return len(array_to_raw(tensor.data, tensor.datatype))


def out_size(workload: Workload, output: Any) -> int:
    """The size of an output's region: the largest answer of that output the probes saw."""
    return max(1, raw_size(output), workload.region_sizes.get(output.name, 0))


def caller(ours: OurClients, workload: Workload, inputs: list[Tensor]) -> Caller:
    """oipcodec's client with the tensors in shared memory: each request writes the inputs
    into the caller's input regions (the copy a producer makes) and reads the outputs from
    its output regions (sized by the workload's first answer)."""
    client = ours.http
    if client is None:
        raise ValueError("no REST URL to send to")
    in_regions = [_our_region("in", raw_size(t)) for t in inputs]
    model, answer = workload.model, workload.answer
    out_regions = [_our_region("out", out_size(workload, t)) for t in answer]
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


def codec_ops(workload: Workload, tritonclient_ops: Callable[..., Any] | None = None) -> CodecOps:
    """The round trip with the tensors in shared memory: the client writes the inputs into
    regions and sends the JSON that names them; the server reads them (one copy each: the
    model's inputs) and writes the answer into the output regions; the client reads those."""
    from oipcodec.client.shm import RegionTable
    from oipcodec.server.regions import SharedMemoryRegions

    model, inputs = workload.model, workload.inputs
    server = SharedMemoryRegions()
    on_release(server.close)
    in_regions = [_our_region("codec-in", raw_size(t)) for t in inputs]
    out_regions = [_our_region("codec-out", out_size(workload, t)) for t in workload.answer]
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
    if tritonclient_ops is not None:  # tritonclient's side (triton.shm_ops) on these regions
        encode, decode = tritonclient_ops(workload, in_regions, out_regions, answer, answer_length)
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
