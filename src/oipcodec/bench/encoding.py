"""What an encoding path is: the one leaf of bench/ that the paths and the peers both import."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EncodingPath"]


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
    #: The TensorRT Inference Server v1 API (raw bytes; ``protocol`` says HTTP or gRPC), sent
    #: to the typed identity model of the tensor's datatype and rank (:func:`v1_models`).
    v1: bool = False
    #: GraphPipe's flatbuffers, POSTed to the REST port's ``/graphpipe/<model>``.
    graphpipe: bool = False
