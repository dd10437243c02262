"""The TensorRT Inference Server v1 API, served from the same models as the OIP.

:class:`V1Frontend` holds what the HTTP routes (:class:`V1Routes`, mounted under ``/api/``)
and the gRPC ``nvidia.inferenceserver.GRPCService`` (:class:`V1Servicer`) share: health, the
``ServerStatus``, inference and model control over the server's :class:`ModelRegistry`.

Every answer carries a ``RequestStatus``: over HTTP in the ``NV-Status`` header (one-line
text), with status 200 on success and 400 on any failure (v1's rule; the code in
``NV-Status`` says which failure); over gRPC in the answer's ``request_status`` (the gRPC call
itself succeeds, as in v1). Shared memory (v1's ``SharedMemoryControl`` and the headers'
``shared_memory`` fields) is answered UNSUPPORTED.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any
from urllib.parse import parse_qs

from google.protobuf import json_format, text_format

from oipcodec import __version__
from oipcodec import trtis_v1 as v1
from oipcodec.errors import (
    InvalidArgumentError,
    NotFoundError,
    OIPError,
    RequestError,
    UnavailableError,
    UnsupportedError,
)
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.proto import trtis_v1_pb2 as pb
from oipcodec.server.frontends._asgi import (
    BINARY,
    JSON,
    Answer,
    MethodNotAllowed,
    Receive,
    Scope,
    allow,
    joined,
    read_body,
)
from oipcodec.server.frontends._grpc import client_gone
from oipcodec.server.inference import Exchange, Pipeline
from oipcodec.server.inference.streaming import decoupled_refused
from oipcodec.server.metadata import SERVER_NAME
from oipcodec.server.registry import READY, ModelRegistry
from oipcodec.types import InferRequest, RequestedOutput

__all__ = ["SERVICE", "V1Frontend", "V1Routes", "V1Servicer", "add_to_server"]

log = logging.getLogger("oipcodec.server")

#: The gRPC service name of the v1 API.
SERVICE = "nvidia.inferenceserver.GRPCService"

_STATES = {
    READY: pb.MODEL_READY,
    "UNAVAILABLE": pb.MODEL_UNAVAILABLE,
    "LOADING": pb.MODEL_LOADING,
    "UNLOADING": pb.MODEL_UNLOADING,
}
_TEXT = b"text/plain"
#: Past this many ranked classes in one answer, the answer is written in a thread.
_OFF_LOOP_CLASSES = 4096


class V1Frontend:
    """The v1 API over ``registry``: what HTTP and gRPC both answer."""

    def __init__(
        self,
        registry: ModelRegistry,
        *,
        limits: Limits = DEFAULT_LIMITS,
        server_id: str = SERVER_NAME,
        ready: Callable[[], bool] = lambda: True,
    ) -> None:
        self.registry = registry
        self.pipeline = Pipeline.of(registry)
        self.limits = limits
        self.server_id = server_id
        self.ready = ready
        self._started = time.monotonic_ns()
        self._ids = itertools.count(1)

    def status(self, exc: BaseException | None = None) -> pb.RequestStatus:
        """The ``RequestStatus`` of a request that succeeded, or failed with ``exc``."""
        request_id = next(self._ids)
        if exc is None:
            return v1.status(pb.SUCCESS, "", self.server_id, request_id)
        if isinstance(exc, (RequestError, OIPError)):
            message = exc.message if isinstance(exc, RequestError) else str(exc)
            log.info("v1 request failed: %s", message)
        else:
            message = f"internal error: {type(exc).__name__}: {exc}"
            log.error("v1 request failed", exc_info=exc)
        return v1.status(v1.code_for(exc), message, self.server_id, request_id)

    # ------------------------------------------------------------------ status

    def server_status(self, model_name: str = "") -> Any:
        """The ``ServerStatus``: every model (or ``model_name`` only, NOT_FOUND when unknown)
        with its configuration and the state of each version."""
        answer = pb.ServerStatus(
            id=self.server_id,
            version=__version__,
            ready_state=pb.SERVER_READY if self.ready() else pb.SERVER_INITIALIZING,
            uptime_ns=time.monotonic_ns() - self._started,
        )
        rows = self.registry.index()
        if model_name:
            rows = [row for row in rows if row["name"] == model_name]
            if not rows:
                raise NotFoundError(f"no status available for unknown model '{model_name}'")
        for row in rows:
            name = row["name"]
            entry = answer.model_status[name]
            number = row["version"]
            if not number:
                # A repository folder with no model loaded: UNAVAILABLE under the version
                # its folder would serve, and the other models still answered.
                entry.config.name = name
                repository = self.registry.repository
                number = (repository.version_of(name) if repository is not None else None) or "1"
            elif not entry.HasField("config"):
                try:
                    entry.config.CopyFrom(model_config(self.registry.config(name)))
                except (ValueError, RequestError) as exc:  # one model's, not the answer's
                    log.error("v1 status: model %r has no configuration to show: %s", name, exc)
                    entry.config.name = name
            if number.isascii() and number.isdigit():
                version = entry.version_status[int(number)]
                version.ready_state = _STATES.get(row["state"], pb.MODEL_UNKNOWN)
                if row["reason"]:
                    version.ready_state_reason.message = row["reason"]
        return answer

    # ------------------------------------------------------------------ inference

    async def infer(
        self,
        model_name: str,
        version: int | str | None,
        header: Any,
        body: Any,
        path: str,
        *,
        text: bool = False,
    ) -> tuple[Any, list[bytes | memoryview], str | None]:
        """Run a v1 request: the ``InferResponseHeader``, the RAW outputs' bytes, and with
        ``text`` the header's one-line text (else ``None``).
        ``body``: the inputs' bytes in header order (HTTP), or one buffer per input (gRPC).
        Counted in the registry's statistics on encoding ``path`` (``v1_http`` or ``v1_grpc``)."""
        name_version = v1.version_text(version)
        model = self.pipeline.model(model_name, name_version)
        size = (
            len(body) if isinstance(body, bytes | bytearray | memoryview) else sum(map(len, body))
        )
        with self.pipeline.exchange(path, size, model) as exchange:
            answer = await self._infer(exchange, model_name, name_version, header, body, text)
            exchange.sent(sum(len(part) for part in answer[1]))
        return answer

    async def _infer(
        self,
        exchange: Exchange,
        model_name: str,
        name_version: str | None,
        header: Any,
        body: Any,
        text: bool,
    ) -> tuple[Any, list[bytes | memoryview], str | None]:
        model = exchange.model
        assert model is not None
        if model.decoupled:
            raise decoupled_refused("the TRTIS v1 API")
        if model.inputs is None:
            raise UnsupportedError(
                f"model '{model_name}' declares no inputs: a v1 request takes its datatypes "
                "from the model's declared inputs"
            )
        tensors = v1.decode_inputs(
            header, body, model.inputs, model.max_batch_size, limits=self.limits
        )
        names, classes = v1.requested(header)
        for name in classes:
            for spec in model.outputs or ():
                if spec.name == name and spec.datatype == "BYTES":
                    raise InvalidArgumentError(
                        f"output '{name}' is TYPE_STRING: classification (cls) ranks numeric "
                        "outputs only"
                    )
        request = InferRequest(
            tensors,
            outputs=None if names is None else [RequestedOutput(n) for n in names],
            model_name=model_name,
            model_version=name_version,
        )
        response = await exchange.run(request, model)
        encode = functools.partial(
            _encode,
            response,
            batch_size=header.batch_size,
            batched=model.max_batch_size > 0,
            classes=classes,
            labels={name: model.class_labels(name) for name in classes},
            request_id=header.id,
            text=text,
        )
        ranked = sum(
            min(t.data.size, classes[t.name] * (t.shape[0] if t.shape else 1))
            for t in response.outputs
            if t.name in classes
        )
        # Past a few thousand classes, ranked and written in a thread, so that the event loop
        # goes on serving the other clients (docs/measurements.md#v1-classes).
        if ranked > _OFF_LOOP_CLASSES:
            answer = await asyncio.to_thread(encode)
        else:
            answer = encode()
        return answer

    async def control(self, model_name: str, load: bool) -> None:
        """Load or unload ``model_name``."""
        if load:
            await self.registry.load(model_name)
        else:
            await self.registry.unload(model_name)


def _encode(
    response: Any, *, text: bool, **options: Any
) -> tuple[Any, list[bytes | memoryview], str | None]:
    if text:
        return v1.encode_response_text(response, **options)
    header, parts = v1.encode_response(response, **options)
    return header, parts, None


def model_config(config: dict[str, Any]) -> Any:
    """A model configuration in Triton's JSON form (``Model.config``) as v1's ``ModelConfig``
    (a datatype v1 lacks, BF16, becomes TYPE_INVALID)."""

    def data_type(name: str) -> Any:
        try:
            return pb.DataType.Value(name)
        except ValueError:
            return pb.TYPE_INVALID

    return pb.ModelConfig(
        name=config["name"],
        platform=config.get("platform", ""),
        max_batch_size=config.get("max_batch_size", 0),
        input=[
            pb.ModelInput(name=i["name"], data_type=data_type(i["data_type"]), dims=i["dims"])
            for i in config.get("input", ())
        ],
        output=[
            pb.ModelOutput(name=o["name"], data_type=data_type(o["data_type"]), dims=o["dims"])
            for o in config.get("output", ())
        ],
    )


# ----------------------------------------------------------------------------- HTTP


def _answer(
    frontend: V1Frontend,
    exc: BaseException | None,
    body: Any = b"",
    headers: list[tuple[bytes, bytes]] | None = None,
) -> Answer:
    state = frontend.status(exc)
    out = list(headers or [])
    out.append((v1.STATUS_HEADER.lower().encode(), v1.status_text(state).encode()))
    return (200 if exc is None else 400), body, out


def _format(scope: Scope, headers: dict[bytes, bytes]) -> str:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    given = query.get("format", [""])[-1]
    if given:
        return given
    return "json" if headers.get(b"accept") == JSON else "text"


class V1Routes:
    """The v1 API's HTTP routes, mounted under ``/api/`` beside the REST app: a wrong method
    raises the 405 of :mod:`~oipcodec.server.frontends._asgi`; every other failure is answered
    400 with its ``NV-Status``."""

    def __init__(self, frontend: V1Frontend) -> None:
        self.frontend = frontend

    async def __call__(
        self, method: str, path: str, parts: Sequence[str], scope: Scope, receive: Receive
    ) -> Answer:
        return await _route(self.frontend, method, parts, scope, receive)


async def _route(
    frontend: V1Frontend, method: str, parts: Sequence[str], scope: Scope, receive: Receive
) -> Answer:
    n = len(parts)
    kind = parts[1] if n > 1 else ""
    headers = dict(scope["headers"])
    try:
        if kind == "health" and n == 3 and parts[2] in ("live", "ready"):
            allow(method, "GET")
            if parts[2] == "ready" and not frontend.ready():
                return _answer(frontend, UnavailableError("the server is not ready"))
            return _answer(frontend, None)
        if kind == "status" and n in (2, 3):
            allow(method, "GET")
            server_status = frontend.server_status(parts[2] if n == 3 else "")
            return _answer(frontend, None, *_document(server_status, _format(scope, headers)))
        if kind == "infer" and n in (3, 4):
            allow(method, "POST")
            return await _infer(frontend, parts, scope, headers, receive)
        if kind == "modelcontrol" and n == 4 and parts[2] in ("load", "unload"):
            allow(method, "POST")
            await frontend.control(parts[3], parts[2] == "load")
            return _answer(frontend, None)
        if kind == "sharedmemory":
            raise UnsupportedError("v1 shared memory is not supported (use the OIP's)")
        raise NotFoundError(f"no v1 endpoint /{'/'.join(parts)}")
    except MethodNotAllowed:
        raise
    except Exception as exc:
        return _answer(frontend, exc)


def _document(message: Any, form: str) -> tuple[Any, list[tuple[bytes, bytes]]]:
    if form == "binary":
        return message.SerializeToString(), [(b"content-type", BINARY)]
    if form == "json":
        text = json_format.MessageToJson(message, preserving_proto_field_name=True)
        return text.encode(), [(b"content-type", JSON)]
    return text_format.MessageToString(message).encode(), [(b"content-type", _TEXT)]


async def _infer(
    frontend: V1Frontend,
    parts: Sequence[str],
    scope: Any,
    headers: dict[bytes, bytes],
    receive: Any,
) -> Answer:
    name = parts[2]
    version = parts[3] if len(parts) == 4 else None
    frontend.registry.get(name, v1.version_text(version))  # unknown model: before the body
    text = headers.get(v1.REQUEST_HEADER.lower().encode())
    if text is None:
        raise InvalidArgumentError(f"the request has no {v1.REQUEST_HEADER} header")
    header = v1.parse_request_header(text)
    body = await read_body(scope, headers, receive, frontend.limits)
    try:
        response_header, outputs, line = await frontend.infer(
            name, version, header, body, "v1_http", text=True
        )
    except Exception as exc:
        failed = pb.InferResponseHeader(id=header.id)
        return _answer(
            frontend,
            exc,
            b"",
            [(v1.RESPONSE_HEADER.lower().encode(), v1.response_header_text(failed).encode())],
        )
    assert line is not None
    binary = _format(scope, {}) == "binary"
    appended = response_header.SerializeToString() if binary else line.encode()
    if len(line) > v1.MAX_HEADER_TEXT:
        # As TRTIS 1.x, a large answer's classes go in the body only: the HTTP header names
        # the CLASS outputs without their classes, and the whole header ends the body.
        line = v1.response_header_text(v1.short_response_header(response_header))
    # As the OIP's answers: the parts as they are (large tensors not joined) when the server
    # takes bytes-like parts, else one body.
    answer = joined([*outputs, appended], scope)
    return _answer(
        frontend,
        None,
        answer,
        [
            (b"content-type", BINARY),
            (v1.RESPONSE_HEADER.lower().encode(), line.encode()),
        ],
    )


# ----------------------------------------------------------------------------- gRPC


class V1Servicer:
    """The ``nvidia.inferenceserver.GRPCService`` over a :class:`V1Frontend` (its methods
    carry the service's names, as grpcio's generated registration expects)."""

    def __init__(self, frontend: V1Frontend) -> None:
        self.frontend = frontend

    async def Status(self, request: Any, context: Any) -> Any:
        try:
            found = self.frontend.server_status(request.model_name)
        except Exception as exc:
            return pb.StatusResponse(request_status=self.frontend.status(exc))
        return pb.StatusResponse(request_status=self.frontend.status(), server_status=found)

    async def Health(self, request: Any, context: Any) -> Any:
        if request.mode not in ("live", "ready"):
            exc = InvalidArgumentError(f"unknown health mode '{request.mode}' (live or ready)")
            return pb.HealthResponse(request_status=self.frontend.status(exc))
        health = request.mode == "live" or self.frontend.ready()
        return pb.HealthResponse(request_status=self.frontend.status(), health=health)

    async def Infer(self, request: Any, context: Any) -> Any:
        return await self._infer(request)

    async def StreamInfer(self, requests: AsyncIterator[Any], context: Any) -> None:
        # Written with context.write, not yielded: a client gone mid-stream fails the write
        # here, where it is no error, instead of in grpcio, which logs a traceback.
        with client_gone("v1 StreamInfer"):
            async for request in requests:
                await context.write(await self._infer(request))

    async def _infer(self, request: Any) -> Any:
        header = request.meta_data
        try:
            found, outputs, _ = await self.frontend.infer(
                request.model_name,
                request.model_version,
                header,
                list(request.raw_input),
                "v1_grpc",
            )
        except Exception as exc:
            return pb.InferResponse(
                request_status=self.frontend.status(exc),
                meta_data=pb.InferResponseHeader(id=header.id),
            )
        return pb.InferResponse(
            request_status=self.frontend.status(),
            meta_data=found,
            raw_output=[bytes(part) for part in outputs],
        )

    async def ModelControl(self, request: Any, context: Any) -> Any:
        try:
            await self.frontend.control(
                request.model_name, request.type == pb.ModelControlRequest.LOAD
            )
        except Exception as exc:
            return pb.ModelControlResponse(request_status=self.frontend.status(exc))
        return pb.ModelControlResponse(request_status=self.frontend.status())

    async def SharedMemoryControl(self, request: Any, context: Any) -> Any:
        exc = UnsupportedError("v1 shared memory is not supported (use the OIP's)")
        return pb.SharedMemoryControlResponse(request_status=self.frontend.status(exc))

    async def Repository(self, request: Any, context: Any) -> Any:
        index = pb.ModelRepositoryIndex(
            models=[
                pb.ModelRepositoryIndex.ModelEntry(name=name)
                for name in sorted({row["name"] for row in self.frontend.registry.index()})
            ]
        )
        return pb.RepositoryResponse(request_status=self.frontend.status(), index=index)


def add_to_server(frontend: V1Frontend, server: Any) -> None:
    """Register the v1 ``GRPCService`` on a ``grpc.aio`` server."""
    from oipcodec.proto import trtis_v1_pb2_grpc

    trtis_v1_pb2_grpc.add_GRPCServiceServicer_to_server(V1Servicer(frontend), server)
