"""oipcodec's own clients (``native`` and ``pure``) on the Open Inference Protocol's REST and
gRPC paths, and the request and answer oipcodec writes on them: the bytes the other
implementations' codecs are timed on too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oipcodec import pb, rest
from oipcodec.bench.connection import Connection
from oipcodec.bench.encoding import Encoding, EncodingPath
from oipcodec.bench.paths.base import Caller, CodecOps
from oipcodec.bench.workload import Workload
from oipcodec.types import InferRequest, InferResponse

__all__ = ["OurClients", "Wire", "caller", "codec_ops", "wire"]


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


def _compressed(body: bytes, compression: str | None) -> bytes:
    return body if compression is None else rest.compress(body, compression)


def _encode_request(path: EncodingPath, request: InferRequest) -> tuple[bytes, int | None]:
    """The request as oipcodec's client sends it on ``path``, and its JSON header's length."""
    if path.protocol == "grpc":
        return pb.encode_request(request, raw=path.encoding is Encoding.GRPC_RAW), None
    body, header_length = rest.encode_request(
        request, binary=path.binary, nested=path.encoding is Encoding.JSON_NESTED
    )
    return _compressed(body, path.compression), header_length


def _encode_response(path: EncodingPath, response: InferResponse) -> tuple[bytes, int | None]:
    """The answer as oipcodec's server writes it on ``path`` (in binary when the request was,
    compressed when it was; gRPC: raw), and its JSON header's length."""
    if path.protocol == "grpc":
        return pb.encode_response(response, raw=True), None
    answer, answer_length = rest.encode_response(response, binary=path.binary)
    return _compressed(answer, path.compression), answer_length


def caller(ours: OurClients, path: EncodingPath, request: InferRequest) -> Caller:
    """oipcodec's REST or gRPC client sending ``request`` on ``path``."""
    if path.protocol == "rest":
        http = ours.http
        if http is None:
            raise ValueError("no REST URL to send to")
        nested = path.encoding is Encoding.JSON_NESTED

        def call_rest() -> Any:
            return http.infer_request(request, path.binary, path.compression, nested=nested).outputs

        return call_rest
    grpc = ours.grpc
    if grpc is None:
        raise ValueError("no gRPC target to send to")
    raw = path.encoding is Encoding.GRPC_RAW

    def call_grpc() -> Any:
        return grpc.infer_request(request, raw=raw).outputs

    return call_grpc


@dataclass
class Wire:
    """The workload's first request and the answer it got (the identity model's: the input
    back under the same name), as oipcodec writes them on a path."""

    request: InferRequest
    response: InferResponse
    body: bytes
    header_length: int | None
    answer: bytes
    answer_length: int | None


def wire(path: EncodingPath, workload: Workload) -> Wire:
    request = InferRequest(workload.inputs, model_name=workload.model)
    response = InferResponse(workload.model, list(workload.answer))
    body, header_length = _encode_request(path, request)
    answer, answer_length = _encode_response(path, response)
    return Wire(request, response, body, header_length, answer, answer_length)


def codec_ops(path: EncodingPath, workload: Workload) -> CodecOps:
    """What oipcodec's client and server do to one request and its answer on a REST or gRPC
    path, as calls to time."""
    sent = wire(path, workload)
    request, response, body, answer = sent.request, sent.response, sent.body, sent.answer
    if path.protocol == "rest":
        return CodecOps(
            lambda: _encode_request(path, request),
            lambda: rest.decode_response(answer, sent.answer_length, path.compression),
            lambda: rest.decode_request(body, sent.header_length, path.compression),
            lambda: _encode_response(path, response),
            len(body),
            len(answer),
        )
    return CodecOps(
        lambda: _encode_request(path, request),
        lambda: pb.decode_response(answer),
        lambda: pb.decode_request(body),
        lambda: _encode_response(path, response),
        len(body),
        len(answer),
    )
