"""OIP gRPC clients: :class:`GrpcClient` (grpcio) and :class:`AsyncGrpcClient` (grpc.aio).

ModelInfer and ModelStreamInfer are called with identity serializers: the
``ModelInferRequest`` bytes come from :func:`oipcodec.pb.encode_request` and go on the wire as
they are, and the ``ModelInferResponse`` bytes are read by :func:`oipcodec.pb.decode_response`
(raw contents and packed fp32/fp64 contents become read-only numpy views of the message; no
protobuf objects are built). ``raw=True`` (the default) sends inputs as
``raw_input_contents``; ``raw=False`` in each datatype's typed contents field (FP16/BF16 are
always raw). Answers are bounded by ``limits.max_body_bytes``: grpcio's receive limit is set
from it, so the transport refuses a larger message before it is kept (:class:`LimitError`);
requests of any size are sent (the server bounds what it takes). The other RPCs (health,
metadata, repository) use the generated classes of :mod:`oipcodec.proto` and return the same
plain values as the HTTP clients.
"""

from __future__ import annotations

import re
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from typing import Any

from oipcodec import pb
from oipcodec.client._request import Inputs, Outputs, build_request
from oipcodec.client.shm import (
    Action,
    AsyncSharedMemoryCalls,
    RegionTable,
    SharedMemoryCalls,
)
from oipcodec.errors import (
    ClientError,
    DecodeError,
    LimitError,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
    http_status_for,
)
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.sharedmem import Resolver
from oipcodec.types import InferRequest, InferResponse, Parameters

__all__ = ["AsyncGrpcClient", "GrpcClient", "StreamResult", "channel_target"]

SERVICE = "inference.GRPCInferenceService"

#: Details grpcio gives when the channel never connected (UNAVAILABLE then means "no server",
#: not "model not loaded").
_CONNECT_FAILURES = (
    "failed to connect",
    "connection refused",
    "dns resolution failed",
    "connect failed",
    "socket closed",
    "connection reset",
)

#: A ModelStreamInfer answer: a response, or the error the server put in the stream (the
#: stream goes on after an error).
StreamResult = InferResponse | ServerError


def channel_target(target: str) -> str:
    """``host:port`` of a gRPC target given with or without a scheme.

    Parameters
    ----------
    target
        ``host:port``, or the same behind ``grpc://``, ``http://`` or ``dns:///`` in any case
        (schemes are case-insensitive, RFC 3986 3.1); a trailing ``/`` is dropped.
    """
    for scheme in ("grpc://", "http://", "dns:///"):
        if target.lower().startswith(scheme):
            return target[len(scheme) :].rstrip("/")
    return target


#: grpcio's message size options are C ints.
_GRPC_MAX_INT = 2**31 - 1
#: What grpcio says of a message over a size limit (its size, the limit).
_TOO_LARGE = re.compile(r"Received message larger than max \((\d+) vs\. (\d+)\)")


def _channel_options(
    options: Iterable[tuple[str, Any]] | None, limits: Limits
) -> tuple[list[tuple[str, Any]], int | None]:
    """The channel's options and the receive limit they set (None: unlimited): messages
    received are bounded by ``limits.max_body_bytes`` unless ``options`` say otherwise, sent
    ones are not bounded."""
    extra = list(options or [])
    given = dict(extra)
    chosen: list[tuple[str, Any]] = []
    if "grpc.max_send_message_length" not in given:
        chosen.append(("grpc.max_send_message_length", -1))
    receive = given.get("grpc.max_receive_message_length")
    if receive is None:
        receive = min(limits.max_body_bytes, _GRPC_MAX_INT)
        chosen.append(("grpc.max_receive_message_length", receive))
    return chosen + extra, (receive if receive >= 0 else None)


def _open_channel(
    module: Any, target: str, credentials: Any, options: list[tuple[str, Any]]
) -> Any:
    """A channel of ``module`` (grpc, or grpc.aio) to ``target``: over TLS with
    ``credentials``, else in the clear."""
    if credentials is None:
        return module.insecure_channel(target, options=options)
    return module.secure_channel(target, credentials, options=options)


def _compression(name: str | None) -> Any:
    if name is None:  # every uncompressed call: no import statement on that path
        return None
    import grpc

    table = {"gzip": grpc.Compression.Gzip, "deflate": grpc.Compression.Deflate}
    try:
        return table[name.strip().lower()]
    except KeyError:
        raise ValueError(f"compression must be 'gzip', 'deflate' or None, got {name!r}") from None


def _error(
    exc: Any, target: str, what: str, receive_limit: int | None = None, sent: int = 0
) -> ClientError | LimitError:
    """The ClientError for a grpc.RpcError (or grpc.aio.AioRpcError); a LimitError when
    grpcio refused an answer over the channel's ``receive_limit`` (a request of ``sent``
    bytes over that size refused by the server reads the same, and stays a ServerError)."""
    code = exc.code()
    name = getattr(code, "name", str(code))
    details = exc.details() or ""
    if name == "RESOURCE_EXHAUSTED" and receive_limit is not None:
        match = _TOO_LARGE.search(details)
        if match and int(match[2]) == receive_limit and sent <= receive_limit:
            return LimitError(
                f"{what} on {target}: the answer of {match[1]} bytes is over the client's "
                f"limit of {receive_limit} bytes (Limits.max_body_bytes; grpcio: {details})"
            )
    if name == "DEADLINE_EXCEEDED":
        return RequestTimeoutError(f"{what} on {target}: deadline exceeded", url=target)
    if name == "UNAVAILABLE" and any(s in details.lower() for s in _CONNECT_FAILURES):
        return ServerConnectionError(f"cannot reach {target} ({what}): {details}", url=target)
    return ServerError(
        details, status=http_status_for(name), code=name, url=target, protocol="grpc"
    )


def _read_varint(data: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise DecodeError("truncated or overlong varint in ModelStreamInferResponse",
                              offset=pos)  # fmt: skip
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def parse_stream_response(
    data: Any, target: str, limits: Limits, shared_memory: Resolver | None = None
) -> StreamResult:
    """The response in a ModelStreamInferResponse, or a :class:`ServerError` for its message.

    The message is ``{string error_message = 1; ModelInferResponse infer_response = 2}``.

    Parameters
    ----------
    data
        The serialized message.
    target
        The server, named in the error.
    limits, shared_memory
        As in :func:`oipcodec.pb.decode_response`.
    """
    view = memoryview(data).cast("B")
    pos = 0
    error: str | None = None
    response: memoryview | None = None
    while pos < len(view):
        tag, pos = _read_varint(view, pos)
        wire = tag & 7
        if wire == 0:
            _, pos = _read_varint(view, pos)
            continue
        if wire == 1 or wire == 5:
            pos += 8 if wire == 1 else 4
            continue
        if wire != 2:
            raise DecodeError(f"unexpected wire type {wire} in ModelStreamInferResponse",
                              offset=pos)  # fmt: skip
        length, pos = _read_varint(view, pos)
        if pos + length > len(view):
            raise DecodeError("field past the end of ModelStreamInferResponse", offset=pos)
        field = tag >> 3
        if field == 1:
            error = bytes(view[pos : pos + length]).decode("utf-8", "replace")
        elif field == 2:
            response = view[pos : pos + length]
        pos += length
    if error:
        return ServerError(error, code="STREAM_ERROR", url=target, protocol="grpc")
    return pb.decode_response(
        response if response is not None else b"", limits=limits, shared_memory=shared_memory
    )


def _raised(answer: StreamResult) -> InferResponse:
    """A stream's response, or its error raised."""
    if isinstance(answer, ServerError):
        raise answer
    return answer


def _tensor_metadata(items: Any) -> list[dict[str, Any]]:
    return [{"name": t.name, "datatype": t.datatype, "shape": list(t.shape)} for t in items]


def _model_metadata(message: Any) -> dict[str, Any]:
    return {
        "name": message.name,
        "versions": list(message.versions),
        "platform": message.platform,
        "inputs": _tensor_metadata(message.inputs),
        "outputs": _tensor_metadata(message.outputs),
    }


def _index(message: Any) -> list[dict[str, Any]]:
    return [
        {"name": m.name, "version": m.version, "state": m.state, "reason": m.reason}
        for m in message.models
    ]


def _shm_call(
    stubs: _Stubs, action: str, fields: dict[str, Any], timeout: float | None
) -> tuple[Any, Any, str, float | None]:
    """The arguments of ``_call`` for system shared-memory ``action`` (Status, Register,
    Unregister) with message ``fields``."""
    stub, message, rpc = stubs.shm_call(action, **fields)
    return stub, message, rpc, timeout


def _status(message: Any) -> list[dict[str, Any]]:
    """A SystemSharedMemoryStatusResponse as REST's list of ``{name, key, offset,
    byte_size}``, by name."""
    return [
        {"name": r.name, "key": r.key, "offset": r.offset, "byte_size": r.byte_size}
        for _, r in sorted(message.regions.items())
    ]


class _Stubs:
    """The multicallables of every RPC on one channel (sync or aio)."""

    def __init__(self, channel: Any) -> None:
        from oipcodec.proto import open_inference_grpc_pb2 as pb2

        self.pb2 = pb2

        def unary(method: str, request: Any, response: Any) -> Any:
            return channel.unary_unary(
                f"/{SERVICE}/{method}",
                request_serializer=request.SerializeToString,
                response_deserializer=response.FromString,
            )

        # No serializers: grpcio sends the bytes it is given and hands back the bytes it gets.
        self.infer = channel.unary_unary(f"/{SERVICE}/ModelInfer")
        self.stream = channel.stream_stream(f"/{SERVICE}/ModelStreamInfer")
        self.live = unary("ServerLive", pb2.ServerLiveRequest, pb2.ServerLiveResponse)
        self.ready = unary("ServerReady", pb2.ServerReadyRequest, pb2.ServerReadyResponse)
        self.model_ready = unary("ModelReady", pb2.ModelReadyRequest, pb2.ModelReadyResponse)
        self.server_metadata = unary(
            "ServerMetadata", pb2.ServerMetadataRequest, pb2.ServerMetadataResponse
        )
        self.model_metadata = unary(
            "ModelMetadata", pb2.ModelMetadataRequest, pb2.ModelMetadataResponse
        )
        self.index = unary(
            "RepositoryIndex", pb2.RepositoryIndexRequest, pb2.RepositoryIndexResponse
        )
        self.statistics = unary(
            "ModelStatistics", pb2.ModelStatisticsRequest, pb2.ModelStatisticsResponse
        )
        self.load = unary(
            "RepositoryModelLoad", pb2.RepositoryModelLoadRequest, pb2.RepositoryModelLoadResponse
        )
        self.unload = unary(
            "RepositoryModelUnload",
            pb2.RepositoryModelUnloadRequest,
            pb2.RepositoryModelUnloadResponse,
        )
        self.shm: dict[str, Any] = {
            action: unary(
                f"SystemSharedMemory{action}",
                getattr(pb2, f"SystemSharedMemory{action}Request"),
                getattr(pb2, f"SystemSharedMemory{action}Response"),
            )
            for action in ("Status", "Register", "Unregister")
        }

    def shm_call(self, action: str, **fields: Any) -> tuple[Any, Any, str]:
        """The stub, message and RPC name of system shared-memory ``action``."""
        rpc = f"SystemSharedMemory{action}"
        return self.shm[action], getattr(self.pb2, f"{rpc}Request")(**fields), rpc


def _statistics(message: Any) -> dict[str, Any]:
    """A ModelStatisticsResponse as the REST answer's document (64-bit integers as ints, not
    the strings protobuf's JSON form makes of them)."""
    from google.protobuf import json_format

    def ints(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: ints(item) for key, item in value.items()}
        if isinstance(value, list):
            return [ints(item) for item in value]
        return int(value) if isinstance(value, str) and value.isdigit() else value

    # Fields left at zero are absent from the dict; readers take a missing count as 0.
    document = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return {"model_stats": ints(document.get("model_stats", []))}


class _Base:
    def __init__(self, target: str, raw: bool, timeout: float | None, limits: Limits,
                 headers: Mapping[str, str] | None = None) -> None:  # fmt: skip
        self.target = channel_target(target)
        self.raw = raw
        self.timeout = timeout
        self.limits = limits
        # gRPC metadata keys are lower case (grpcio refuses others); the values are sent as given.
        self.headers = {key.lower(): value for key, value in (headers or {}).items()}
        self._metadata = tuple(self.headers.items()) or None
        self._receive_limit: int | None = None
        #: The shared-memory regions registered through this client (outputs written there
        #: come back read from them).
        self.regions = RegionTable()

    def _encode(self, request: InferRequest, raw: bool | None) -> bytes:
        if not request.model_name:
            raise ValueError("the request has no model_name")
        return pb.encode_request(request, raw=self.raw if raw is None else raw)

    def _seconds(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is None else timeout

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target!r})"


class GrpcClient(SharedMemoryCalls, _Base):
    """A synchronous OIP gRPC client (one grpcio channel; thread-safe).

    Parameters
    ----------
    target
        ``host:port``.
    raw
        The default contents form of :meth:`infer`: raw (True) or typed (False).
    timeout
        Seconds per call (the gRPC deadline), overridable per call; ``None`` waits forever.
    options
        Extra grpc channel options.
    limits
        An answer over ``limits.max_body_bytes`` is refused by grpcio as it arrives (grpc's
        ``max_receive_message_length``, unless ``options`` set it), with :class:`LimitError`;
        requests may be of any size.
    headers
        Metadata sent with every call (names lower case).
    credentials
        ``grpc.ssl_channel_credentials(...)`` for a server over TLS.
    """

    def __init__(
        self,
        target: str = "127.0.0.1:8001",
        *,
        raw: bool = True,
        timeout: float | None = 60.0,
        options: Iterable[tuple[str, Any]] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        headers: Mapping[str, str] | None = None,
        credentials: Any = None,
    ) -> None:
        import grpc

        super().__init__(target, raw, timeout, limits, headers)
        self._grpc = grpc
        channel_options, self._receive_limit = _channel_options(options, limits)
        self._channel = _open_channel(grpc, self.target, credentials, channel_options)
        self._stubs = _Stubs(self._channel)

    def _call(self, stub: Any, message: Any, what: str, timeout: float | None,
              compression: Any = None) -> Any:  # fmt: skip
        try:
            return stub(message, timeout=self._seconds(timeout), compression=compression,
                        metadata=self._metadata)  # fmt: skip
        except self._grpc.RpcError as exc:
            sent = len(message) if isinstance(message, bytes) else 0
            raise _error(exc, self.target, what, self._receive_limit, sent) from None

    def infer(
        self,
        model: str,
        inputs: Inputs,
        outputs: Outputs = None,
        raw: bool | None = None,
        compression: str | None = None,
        parameters: Parameters | None = None,
        id: str | None = None,
        model_version: str | None = None,
        timeout: float | None = None,
    ) -> InferResponse:
        """Run ``model`` on ``inputs``.

        Parameters
        ----------
        model
            The model's name.
        inputs
            A dict name -> ndarray, or a list of :class:`~oipcodec.Tensor`.
        outputs
            Names (or :class:`~oipcodec.RequestedOutput`) to ask for; default all.
        raw
            Raw contents (True) or typed contents (False); default the client's.
        compression
            gRPC message compression, ``"gzip"`` or ``"deflate"``.
        parameters
            The request's parameters.
        id
            The request's id, echoed in the answer.
        model_version
            The model's version; default the server's choice.
        timeout
            Seconds, overriding the client's.

        Raises
        ------
        ServerError
            The server refused (``code`` is the gRPC status).
        RequestTimeoutError, ServerConnectionError
            No answer in time; no server.
        EncodeError, DecodeError
            The codec's, for the request or the answer.
        """
        request = build_request(model, inputs, outputs, parameters, id, model_version)
        return self.infer_request(request, raw, compression, timeout)

    def infer_request(
        self,
        request: InferRequest,
        raw: bool | None = None,
        compression: str | None = None,
        timeout: float | None = None,
    ) -> InferResponse:
        """:meth:`infer` for a ready-made :class:`~oipcodec.InferRequest`.

        Parameters
        ----------
        request
            The request (``model_name`` required).
        raw, compression, timeout
            As in :meth:`infer`.
        """
        data = self._encode(request, raw)
        reply = self._call(
            self._stubs.infer, data, "ModelInfer", timeout, _compression(compression)
        )
        return pb.decode_response(reply, limits=self.limits, shared_memory=self.regions.resolve)

    def stream_infer(
        self,
        requests: Iterable[InferRequest],
        raw: bool | None = None,
        timeout: float | None = None,
    ) -> Generator[StreamResult, None, None]:
        """ModelStreamInfer: answers to ``requests`` sent on one stream: one per request, in
        order, from a model that answers once; 0..n per request, as they come, from a
        decoupled model (each response's ``parameters`` hold ``triton_final_response``; tell
        the requests apart by ``id``; a request with the parameter
        ``triton_enable_empty_final_response`` true also gets an empty final response).

        Each answer is an :class:`~oipcodec.InferResponse`, or a :class:`ServerError` (not raised:
        the stream goes on). A broken stream raises.

        Parameters
        ----------
        requests
            InferRequest objects with their model_name (see :func:`oipcodec.client.build_request`).
        raw
            As in :meth:`infer`.
        timeout
            Bounds the whole stream.
        """
        messages = (self._encode(request, raw) for request in requests)
        try:
            for reply in self._stubs.stream(
                messages, timeout=self._seconds(timeout), metadata=self._metadata
            ):
                yield parse_stream_response(reply, self.target, self.limits, self.regions.resolve)
        except self._grpc.RpcError as exc:
            raise _error(exc, self.target, "ModelStreamInfer", self._receive_limit) from None

    def infer_stream(
        self,
        model: str,
        inputs: Inputs,
        outputs: Outputs = None,
        raw: bool | None = None,
        parameters: Parameters | None = None,
        id: str | None = None,
        model_version: str | None = None,
        timeout: float | None = None,
    ) -> Iterator[InferResponse]:
        """One request on its own ModelStreamInfer stream: its responses as they arrive (a
        decoupled model's 0..n, any other model's one), until the server ends the stream.
        Leaving the loop early closes the stream, and the server then stops the model.

        Parameters
        ----------
        model, inputs, outputs, raw, parameters, id, model_version
            As in :meth:`infer`.
        timeout
            Bounds the whole stream.

        Raises
        ------
        ServerError
            The server's error for the request (before or after some responses).
        """
        request = build_request(model, inputs, outputs, parameters, id, model_version)
        answers = self.stream_infer([request], raw, timeout)
        try:
            for answer in answers:
                yield _raised(answer)
        finally:
            answers.close()

    def live(self, timeout: float | None = None) -> bool:
        return bool(self._call(self._stubs.live, self._stubs.pb2.ServerLiveRequest(),
                               "ServerLive", timeout).live)  # fmt: skip

    def ready(self, timeout: float | None = None) -> bool:
        return bool(self._call(self._stubs.ready, self._stubs.pb2.ServerReadyRequest(),
                               "ServerReady", timeout).ready)  # fmt: skip

    def model_ready(self, model: str, version: str | None = None,
                    timeout: float | None = None) -> bool:  # fmt: skip
        """Whether the model (version) is ready; an unknown model is not ready.

        Parameters
        ----------
        model, version
            The model's name and version (default: the server's choice).
        timeout
            Seconds, overriding the client's.
        """
        request = self._stubs.pb2.ModelReadyRequest(name=model, version=version or "")
        try:
            return bool(self._call(self._stubs.model_ready, request, "ModelReady", timeout).ready)
        except ServerError as exc:
            if exc.code == "NOT_FOUND":
                return False
            raise

    def server_metadata(self, timeout: float | None = None) -> dict[str, Any]:
        m = self._call(self._stubs.server_metadata, self._stubs.pb2.ServerMetadataRequest(),
                       "ServerMetadata", timeout)  # fmt: skip
        return {"name": m.name, "version": m.version, "extensions": list(m.extensions)}

    def model_metadata(self, model: str, version: str | None = None,
                       timeout: float | None = None) -> dict[str, Any]:  # fmt: skip
        request = self._stubs.pb2.ModelMetadataRequest(name=model, version=version or "")
        return _model_metadata(
            self._call(self._stubs.model_metadata, request, "ModelMetadata", timeout)
        )

    def repository_index(self, ready: bool = False,
                         timeout: float | None = None) -> list[dict[str, Any]]:  # fmt: skip
        request = self._stubs.pb2.RepositoryIndexRequest(ready=ready)
        return _index(self._call(self._stubs.index, request, "RepositoryIndex", timeout))

    def model_statistics(self, model: str = "", version: str | None = None,
                         timeout: float | None = None) -> dict[str, Any]:  # fmt: skip
        """The statistics extension's ModelStatistics, as ``GET /v2/models/<model>/stats`` has it.

        ``{"model_stats": [...]}`` with the counts and nanoseconds as integers.

        Parameters
        ----------
        model
            The model; every model when empty.
        version
            The model's version.
        timeout
            Seconds, overriding the client's.
        """
        request = self._stubs.pb2.ModelStatisticsRequest(name=model, version=version or "")
        return _statistics(self._call(self._stubs.statistics, request, "ModelStatistics", timeout))

    def load_model(self, model: str, timeout: float | None = None) -> None:
        request = self._stubs.pb2.RepositoryModelLoadRequest(model_name=model)
        self._call(self._stubs.load, request, "RepositoryModelLoad", timeout)

    def unload_model(self, model: str, timeout: float | None = None) -> None:
        request = self._stubs.pb2.RepositoryModelUnloadRequest(model_name=model)
        self._call(self._stubs.unload, request, "RepositoryModelUnload", timeout)

    def _shm_request(
        self, action: Action, name: str, fields: dict[str, Any], timeout: float | None
    ) -> list[dict[str, Any]]:
        call = _shm_call(self._stubs, action.capitalize(), {"name": name, **fields}, timeout)
        answer = self._call(*call)
        return _status(answer) if action == "status" else []

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> GrpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncGrpcClient(AsyncSharedMemoryCalls, _Base):
    """The asyncio twin of :class:`GrpcClient` (grpc.aio); the same methods, as coroutines.

    The channel is opened on first use, in the running event loop (grpc.aio channels belong to
    one loop); ``await client.close()`` or ``async with`` closes it.

    Parameters
    ----------
    target, raw, timeout, options, limits, headers, credentials
        As in :class:`GrpcClient`.
    """

    def __init__(
        self,
        target: str = "127.0.0.1:8001",
        *,
        raw: bool = True,
        timeout: float | None = 60.0,
        options: Iterable[tuple[str, Any]] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        headers: Mapping[str, str] | None = None,
        credentials: Any = None,
    ) -> None:
        import grpc

        super().__init__(target, raw, timeout, limits, headers)
        self._grpc = grpc
        self._options, self._receive_limit = _channel_options(options, limits)
        self._credentials = credentials
        self._channel: Any = None
        self._stubs_: _Stubs | None = None

    @property
    def _stubs(self) -> _Stubs:
        if self._stubs_ is None:
            self._channel = _open_channel(
                self._grpc.aio, self.target, self._credentials, self._options
            )
            self._stubs_ = _Stubs(self._channel)
        return self._stubs_

    async def _call(self, stub: Any, message: Any, what: str, timeout: float | None,
                    compression: Any = None) -> Any:  # fmt: skip
        try:
            return await stub(message, timeout=self._seconds(timeout), compression=compression,
                              metadata=self._metadata)  # fmt: skip
        except self._grpc.RpcError as exc:
            sent = len(message) if isinstance(message, bytes) else 0
            raise _error(exc, self.target, what, self._receive_limit, sent) from None

    async def infer(
        self,
        model: str,
        inputs: Inputs,
        outputs: Outputs = None,
        raw: bool | None = None,
        compression: str | None = None,
        parameters: Parameters | None = None,
        id: str | None = None,
        model_version: str | None = None,
        timeout: float | None = None,
    ) -> InferResponse:
        """As :meth:`GrpcClient.infer`.

        Parameters
        ----------
        model, inputs, outputs, raw, compression, parameters, id, model_version, timeout
            As in :meth:`GrpcClient.infer`.
        """
        request = build_request(model, inputs, outputs, parameters, id, model_version)
        return await self.infer_request(request, raw, compression, timeout)

    async def infer_request(
        self,
        request: InferRequest,
        raw: bool | None = None,
        compression: str | None = None,
        timeout: float | None = None,
    ) -> InferResponse:
        data = self._encode(request, raw)
        reply = await self._call(
            self._stubs.infer, data, "ModelInfer", timeout, _compression(compression)
        )
        return pb.decode_response(reply, limits=self.limits, shared_memory=self.regions.resolve)

    async def stream_infer(
        self,
        requests: Iterable[InferRequest] | AsyncIterable[InferRequest],
        raw: bool | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[StreamResult, None]:
        """As :meth:`GrpcClient.stream_infer`.

        Parameters
        ----------
        requests
            InferRequest objects, or an async iterable of them.
        raw, timeout
            As in :meth:`GrpcClient.stream_infer`.
        """

        async def messages() -> AsyncIterator[bytes]:
            if isinstance(requests, AsyncIterable):
                async for request in requests:
                    yield self._encode(request, raw)
            else:
                for request in requests:
                    yield self._encode(request, raw)

        call = self._stubs.stream(
            messages(), timeout=self._seconds(timeout), metadata=self._metadata
        )
        try:
            async for reply in call:
                yield parse_stream_response(reply, self.target, self.limits, self.regions.resolve)
        except self._grpc.RpcError as exc:
            raise _error(exc, self.target, "ModelStreamInfer", self._receive_limit) from None
        finally:
            call.cancel()

    async def infer_stream(
        self,
        model: str,
        inputs: Inputs,
        outputs: Outputs = None,
        raw: bool | None = None,
        parameters: Parameters | None = None,
        id: str | None = None,
        model_version: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[InferResponse]:
        """As :meth:`GrpcClient.infer_stream`.

        Parameters
        ----------
        model, inputs, outputs, raw, parameters, id, model_version, timeout
            As in :meth:`GrpcClient.infer_stream`.
        """
        request = build_request(model, inputs, outputs, parameters, id, model_version)
        answers = self.stream_infer([request], raw, timeout)
        try:
            async for answer in answers:
                yield _raised(answer)
        finally:
            await answers.aclose()

    async def live(self, timeout: float | None = None) -> bool:
        m = await self._call(self._stubs.live, self._stubs.pb2.ServerLiveRequest(),
                             "ServerLive", timeout)  # fmt: skip
        return bool(m.live)

    async def ready(self, timeout: float | None = None) -> bool:
        m = await self._call(self._stubs.ready, self._stubs.pb2.ServerReadyRequest(),
                             "ServerReady", timeout)  # fmt: skip
        return bool(m.ready)

    async def model_ready(self, model: str, version: str | None = None,
                          timeout: float | None = None) -> bool:  # fmt: skip
        request = self._stubs.pb2.ModelReadyRequest(name=model, version=version or "")
        try:
            m = await self._call(self._stubs.model_ready, request, "ModelReady", timeout)
        except ServerError as exc:
            if exc.code == "NOT_FOUND":
                return False
            raise
        return bool(m.ready)

    async def server_metadata(self, timeout: float | None = None) -> dict[str, Any]:
        m = await self._call(self._stubs.server_metadata, self._stubs.pb2.ServerMetadataRequest(),
                             "ServerMetadata", timeout)  # fmt: skip
        return {"name": m.name, "version": m.version, "extensions": list(m.extensions)}

    async def model_metadata(self, model: str, version: str | None = None,
                             timeout: float | None = None) -> dict[str, Any]:  # fmt: skip
        request = self._stubs.pb2.ModelMetadataRequest(name=model, version=version or "")
        return _model_metadata(
            await self._call(self._stubs.model_metadata, request, "ModelMetadata", timeout)
        )

    async def repository_index(self, ready: bool = False,
                               timeout: float | None = None) -> list[dict[str, Any]]:  # fmt: skip
        request = self._stubs.pb2.RepositoryIndexRequest(ready=ready)
        return _index(await self._call(self._stubs.index, request, "RepositoryIndex", timeout))

    async def load_model(self, model: str, timeout: float | None = None) -> None:
        request = self._stubs.pb2.RepositoryModelLoadRequest(model_name=model)
        await self._call(self._stubs.load, request, "RepositoryModelLoad", timeout)

    async def unload_model(self, model: str, timeout: float | None = None) -> None:
        request = self._stubs.pb2.RepositoryModelUnloadRequest(model_name=model)
        await self._call(self._stubs.unload, request, "RepositoryModelUnload", timeout)

    async def _shm_request(
        self, action: Action, name: str, fields: dict[str, Any], timeout: float | None
    ) -> list[dict[str, Any]]:
        call = _shm_call(self._stubs, action.capitalize(), {"name": name, **fields}, timeout)
        answer = await self._call(*call)
        return _status(answer) if action == "status" else []

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
            self._stubs_ = None

    async def __aenter__(self) -> AsyncGrpcClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
