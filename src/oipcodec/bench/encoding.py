"""What an encoding path is, and the paths there are: the one leaf of bench/ that the paths and
the peers both import. A new path is one more row of :data:`PATHS` (and, for a new
:class:`Encoding`, a branch in each implementation of :mod:`oipcodec.bench.paths`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

__all__ = ["PATHS", "Encoding", "EncodingPath"]


class Encoding(Enum):
    """How a request carries its tensors: one value per path, so a path's form is read off its
    name rather than from a combination of flags."""

    #: KServe V2 JSON, each tensor's data a flat list.
    JSON = "json"
    #: KServe V2 JSON, each tensor's data nested lists by its shape.
    JSON_NESTED = "json-nested"
    #: The binary tensor data extension: a JSON header, then the raw tensors, both ways.
    BINARY = "binary"
    #: gRPC with the tensors in ``raw_input_contents`` / ``raw_output_contents``.
    GRPC_RAW = "grpc-raw"
    #: gRPC with the tensors in the typed ``contents`` fields (the answer raw).
    GRPC_TYPED = "grpc-typed"
    #: The tensors stay in system shared-memory regions both ways; the request only names
    #: where (the embedded server enables the extension).
    SHARED_MEMORY = "shared-memory"
    #: The TensorRT Inference Server v1 API (raw bytes; the transport says HTTP or gRPC), sent
    #: to the typed identity model of the tensor's datatype and rank (paths.v1.v1_models).
    V1 = "v1"
    #: GraphPipe's flatbuffers, POSTed to the REST port's ``/graphpipe/<model>``.
    GRAPHPIPE = "graphpipe"


@dataclass(frozen=True)
class EncodingPath:
    name: str
    label: str
    #: The transport: HTTP/REST or gRPC.
    protocol: Literal["rest", "grpc"]
    encoding: Encoding
    #: The request and answer bodies' compression (REST only).
    compression: str | None = None

    @property
    def binary(self) -> bool:
        """Whether the REST body is the binary tensor data extension's (request and answer)."""
        return self.encoding is Encoding.BINARY


PATHS: dict[str, EncodingPath] = {
    p.name: p
    for p in (
        EncodingPath("rest-json", "REST JSON flat", "rest", Encoding.JSON),
        EncodingPath("rest-json-nested", "REST JSON nested", "rest", Encoding.JSON_NESTED),
        EncodingPath("rest-binary", "REST binary", "rest", Encoding.BINARY),
        EncodingPath("rest-binary-gzip", "REST binary+gzip", "rest", Encoding.BINARY, "gzip"),
        EncodingPath("grpc-raw", "gRPC raw", "grpc", Encoding.GRPC_RAW),
        EncodingPath("grpc-typed", "gRPC typed", "grpc", Encoding.GRPC_TYPED),
        EncodingPath("shm", "shared memory", "rest", Encoding.SHARED_MEMORY),
        EncodingPath("v1-http-raw", "v1 HTTP raw", "rest", Encoding.V1),
        EncodingPath("v1-grpc", "v1 gRPC", "grpc", Encoding.V1),
        EncodingPath("graphpipe", "GraphPipe", "rest", Encoding.GRAPHPIPE),
    )
}
