"""OpenTelemetry traces of inference requests, and Triton's trace extension (``oipcodec[tracing]``).

A server started with ``trace=True`` (``oipcodec serve --trace``) makes one span per inference
request, a child of the W3C ``traceparent``/``tracestate`` the request carried (HTTP headers,
gRPC metadata), with the events ``decode``, ``queue``, ``compute`` and ``encode`` where each
step started. The span is made when the request's :class:`~oipcodec.server.inference.Exchange`
ends, from the ``perf_counter_ns`` readings the pipeline takes anyway, and exported over OTLP
(http/protobuf) as the standard ``OTEL_*`` variables say (endpoint, service name, sampler,
batches). docs/tracing.md describes it all.

Off, nothing of this module is imported and a request does no work for it: the pipeline makes
plain exchanges, the REST app is served unwrapped, and the gRPC handlers are the servicer's.

The trace extension's settings (``/v2[/models/<m>]/trace/setting``, the TraceSetting RPC)
choose the requests traced before the OpenTelemetry sampler sees them: ``trace_level`` OFF
traces none; ``trace_rate`` N traces one request in N; ``trace_count`` N stops after N more
traces (-1: no end). ``trace_file`` and ``log_frequency`` are kept and answered but steer
nothing: the spans go to the OTLP exporter, not to a file.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from types import TracebackType
from typing import Any

import orjson
from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from oipcodec import __version__
from oipcodec.errors import InvalidArgumentError, request_error_for
from oipcodec.limits import Limits
from oipcodec.server.frontends._asgi import (
    Answer,
    MethodNotAllowed,
    Receive,
    Scope,
    Send,
    json_answer,
    read_body,
    respond,
)
from oipcodec.server.inference import Exchange, Pipeline
from oipcodec.server.metadata import TRACED
from oipcodec.server.model import Model
from oipcodec.server.registry import ModelRegistry

__all__ = ["CARRIER", "LEVELS", "TraceSettings", "Tracing"]

log = logging.getLogger("oipcodec.server")

#: The propagation fields (``traceparent``, ``tracestate``...) of the request being handled,
#: set by the REST wrapper and the gRPC handlers for the exchange made under them.
CARRIER: ContextVar[dict[str, str] | None] = ContextVar("oipcodec_trace_carrier", default=None)

#: Triton's trace levels; TENSORS traces as TIMESTAMPS does (no tensor contents in spans).
LEVELS = ("OFF", "TIMESTAMPS", "TENSORS")
#: The settings as the server starts: every request traced (the sampler may drop some).
DEFAULTS: dict[str, str | list[str]] = {
    "trace_file": "",
    "trace_level": ["TIMESTAMPS"],
    "trace_rate": "1",
    "trace_count": "-1",
    "log_frequency": "0",
    "trace_mode": "opentelemetry",
}
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_SETTING_PATH = re.compile(r"^/v2(?:/models/([^/]+)(?:/versions/[^/]+)?)?/trace/setting/?$")


class TraceSettings:
    """Triton's trace settings: the server's, and the models' own (each falls back to the
    server's for the settings it does not set), with the counters they sample by."""

    def __init__(self) -> None:
        self.server: dict[str, str | list[str]] = dict(DEFAULTS)
        self.models: dict[str, dict[str, str | list[str]]] = {}
        # (seen, traces left) per scope: "" the server's, else a model with settings of its own.
        self._counters: dict[str, list[int]] = {"": [0, -1]}

    def of(self, model: str | None) -> dict[str, str | list[str]]:
        """The settings in force for ``model`` (None: the server's)."""
        own = self.models.get(model or "")
        return self.server if not own else {**self.server, **own}

    def update(self, model: str | None, changes: Mapping[str, Any]) -> dict[str, str | list[str]]:
        """Apply ``changes`` (a value None clears a model's own setting, or restores the
        server's start value); a model with no change given loses all its own settings.
        Returns the settings then in force. Raises InvalidArgumentError naming a bad setting."""
        checked = {name: _checked(name, value) for name, value in changes.items()}
        if model:
            own = self.models.setdefault(model, {})
            if not checked:
                own.clear()
            for name, value in checked.items():
                if value is None:
                    own.pop(name, None)
                else:
                    own[name] = value
            if not own:
                del self.models[model]
                self._counters.pop(model, None)
            elif "trace_count" in checked or model not in self._counters:
                self._counters[model] = [0, int(str(self.of(model)["trace_count"]))]
        else:
            for name, value in checked.items():
                self.server[name] = DEFAULTS[name] if value is None else value
            if "trace_count" in checked:
                self._counters[""] = [0, int(str(self.server["trace_count"]))]
        return self.answer(model)

    def answer(self, model: str | None) -> dict[str, str | list[str]]:
        """The settings as Triton answers them: ``trace_count`` is the traces left."""
        settings = dict(self.of(model))
        scope = model if model in self.models else ""
        settings["trace_count"] = str(self._counters[scope][1])
        return settings

    def sample(self, model: str) -> bool:
        """Whether the request to ``model`` seen now is traced (counted whether or not)."""
        settings = self.of(model)
        if settings["trace_level"] == ["OFF"]:
            return False
        counter = self._counters[model if model in self.models else ""]
        counter[0] += 1
        if counter[1] == 0 or counter[0] % int(str(settings["trace_rate"])):
            return False
        if counter[1] > 0:
            counter[1] -= 1
        return True


def _checked(name: str, value: Any) -> str | list[str] | None:
    if name not in DEFAULTS:
        raise InvalidArgumentError(
            f"unknown trace setting {name!r}; the settings are {', '.join(DEFAULTS)}"
        )
    if value is None:
        return None
    if name == "trace_level":
        levels = [value] if isinstance(value, str) else value
        if not isinstance(levels, list) or not levels or any(v not in LEVELS for v in levels):
            raise InvalidArgumentError(
                f"trace_level must be a list of {', '.join(LEVELS)}, got {value!r}"
            )
        return list(levels)
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name} must be a string, got {value!r}")
    if name == "trace_mode":
        if value != "opentelemetry":
            raise InvalidArgumentError(
                f"trace_mode is 'opentelemetry' (the only one), got {value!r}"
            )
        return value
    if name == "trace_file":
        return value
    least = {"trace_rate": 1, "trace_count": -1, "log_frequency": 0}[name]
    try:
        number = int(value)
    except ValueError:
        number = least - 1
    if number < least:
        raise InvalidArgumentError(f"{name} must be an integer >= {least}, got {value!r}")
    return str(number)


class Tracing:
    """The traces of one server's requests (:meth:`install` it on the server's pipeline).

    The spans are the SDK's :class:`~opentelemetry.sdk.trace.ReadableSpan`, made whole when a
    request ends and handed to the span processor: the SDK's live ``Span`` (its locks,
    attribute checks and per-call context) would cost more than the request it describes.
    The provider's sampler (``OTEL_TRACES_SAMPLER``), id generator and resource are the SDK's.

    Parameters
    ----------
    registry
        The server's models.
    processor
        Where the ended spans go; default: a ``BatchSpanProcessor`` exporting over OTLP
        http/protobuf as the ``OTEL_*`` variables say (``OTEL_BSP_*`` its batches).
    """

    def __init__(self, registry: ModelRegistry, processor: SpanProcessor | None = None) -> None:
        if processor is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            processor = BatchSpanProcessor(OTLPSpanExporter())
        self.registry = registry
        # Its service.name is oipcodec unless the OTEL_* variables name one.
        self.provider = TracerProvider(resource=_resource())
        self.provider.add_span_processor(processor)  # its shutdown flushes the processor
        self.processor = processor
        self._scope = InstrumentationScope("oipcodec", __version__)
        self.settings = TraceSettings()
        self.pipeline = Pipeline.of(registry)
        self._fields = {name.encode("latin-1") for name in propagate.get_global_textmap().fields}

    def install(self) -> Tracing:
        """Make the pipeline's exchanges traced ones and list ``trace`` in the server's
        extensions (before the front ends are made: the REST app keeps its metadata)."""
        self.pipeline.exchange = self._exchange  # type: ignore[method-assign]
        TRACED.add(self.registry)
        return self

    def shutdown(self) -> None:
        """Send the spans still waiting, stop the exporter."""
        self.provider.shutdown()

    def _exchange(self, path: str, request_bytes: int, model: Model | None = None) -> Exchange:
        return TracedExchange(self, path, request_bytes, model)

    # ------------------------------------------------------------------ spans

    def record(self, exchange: TracedExchange, exc: BaseException | None) -> None:
        """The span of an ended exchange (when its settings and the sampler take it): a child
        of the propagated context, its events ``decode``, ``queue``, ``compute`` and
        ``encode`` where each step started (each lasts until the next, ``encode`` until the
        span's end)."""
        model = exchange.model
        if model is None or not self.settings.sample(model.name):
            return
        end = time.perf_counter_ns()
        epoch = time.time_ns() - end  # perf_counter_ns readings to the epoch the spans use
        provider = self.provider
        carrier = exchange.carrier
        context = propagate.extract(carrier) if carrier is not None else None
        parent = trace.get_current_span(context).get_span_context() if context else None
        if parent is not None and parent.is_valid:
            trace_id = parent.trace_id
        else:
            parent = None
            trace_id = provider.id_generator.generate_trace_id()
        inputs = exchange.inputs
        batch = inputs[0].shape[0] if model.max_batch_size and inputs and inputs[0].shape else 1
        attributes: dict[str, str | int] = {
            "oip.model.name": model.name,
            "oip.model.version": model.version,
            "oip.path": exchange.path,
            "oip.batch_size": batch,
        }
        sampling = provider.sampler.should_sample(
            context, trace_id, "infer", SpanKind.SERVER, attributes
        )
        if not sampling.decision.is_sampled():
            return
        status = Status(StatusCode.UNSET)
        if exc is None:
            attributes["oip.status"] = "OK"
        else:
            error = request_error_for(exc)
            attributes["oip.status"] = error.grpc_code
            attributes["http.response.status_code"] = error.http_status
            status = Status(StatusCode.ERROR, error.message)
        attributes.update(sampling.attributes or {})
        result = exchange.result
        events: tuple[Event, ...] = ()
        if result is not None:
            events = (
                Event("decode", timestamp=exchange.received + epoch),
                Event("queue", timestamp=result.checked + epoch),
                Event("compute", timestamp=result.started + epoch),
                Event("encode", timestamp=result.finished + epoch),
            )
        span = ReadableSpan(
            "infer",
            SpanContext(
                trace_id,
                provider.id_generator.generate_span_id(),
                False,
                _SAMPLED,
                sampling.trace_state,
            ),
            parent,
            resource=provider.resource,
            attributes=attributes,
            events=events,
            kind=SpanKind.SERVER,
            status=status,
            start_time=exchange.received + epoch,
            end_time=end + epoch,
            instrumentation_scope=self._scope,
        )
        self.processor.on_end(span)

    # ------------------------------------------------------------------ REST and gRPC

    def asgi(self, app: Callable[..., Any], limits: Limits) -> Callable[..., Any]:
        """``app`` answering the trace extension's endpoints, its requests' exchanges given
        their propagation headers."""
        fields = self._fields

        async def traced(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                return await app(scope, receive, send)
            match = _SETTING_PATH.match(scope["path"])
            if match is not None:
                model = match.group(1)
                await respond(
                    scope,
                    receive,
                    send,
                    lambda m, p: self._setting(m, model, scope, receive, limits),
                )
                return None
            carrier = {
                k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"] if k in fields
            }
            token = CARRIER.set(carrier or None)
            try:
                return await app(scope, receive, send)
            finally:
                CARRIER.reset(token)

        return traced

    async def _setting(
        self, method: str, model: str | None, scope: Scope, receive: Receive, limits: Limits
    ) -> Answer:
        if method not in ("GET", "POST"):
            raise MethodNotAllowed("GET, POST")
        if model is not None:
            self.registry.get(model)  # 404 for a model the server does not know
        if method == "GET":
            return json_answer(200, self.settings.answer(model))
        body = await read_body(scope, dict(scope["headers"]), receive, limits)
        try:
            changes = orjson.loads(body) if body.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise InvalidArgumentError(f"invalid JSON in the request body: {exc.msg}") from None
        if not isinstance(changes, dict):
            raise InvalidArgumentError("a trace setting request is a JSON object of settings")
        return json_answer(200, self.settings.update(model, changes))

    def grpc_handlers(self, handler: Any) -> tuple[Any, ...]:
        """The gRPC handlers to serve instead of the servicer's ``handler``: TraceSetting, and
        ModelInfer and ModelStreamInfer with their exchanges given the propagation metadata."""
        import grpc

        from oipcodec.proto import open_inference_grpc_pb2 as pb2

        service = pb2.DESCRIPTOR.services_by_name["GRPCInferenceService"].full_name

        fields = {name for name in propagate.get_global_textmap().fields}

        def carried(behavior: Callable[..., Any]) -> Callable[..., Any]:
            async def run(request: Any, context: Any) -> Any:
                metadata = context.invocation_metadata() or ()
                carrier = {k: v for k, v in metadata if k in fields}
                token = CARRIER.set(carrier or None)
                try:
                    return await behavior(request, context)
                finally:
                    CARRIER.reset(token)

            return run

        async def trace_setting(request: Any, context: Any) -> Any:
            try:
                model = request.model_name or None
                if model is not None:
                    self.registry.get(model)
                changes = {
                    name: (
                        None
                        if not setting.value
                        else list(setting.value)
                        if name == "trace_level"
                        else setting.value[0]
                    )
                    for name, setting in request.settings.items()
                }
                # No settings: a get (tritonclient's get_trace_settings), not a clearing.
                settings = (
                    self.settings.update(model, changes) if changes else self.settings.answer(model)
                )
            except Exception as exc:
                error = request_error_for(exc)
                log.info("TraceSetting -> %s: %s", error.grpc_code, error.message)
                await context.abort(getattr(grpc.StatusCode, error.grpc_code), error.message)
            response = pb2.TraceSettingResponse()
            for name, value in settings.items():
                response.settings[name].value.extend([value] if isinstance(value, str) else value)
            return response

        class Traced(grpc.GenericRpcHandler):
            def service(self, details: Any) -> Any:
                found = handler.service(details)
                method = details.method.rsplit("/", 1)[-1]
                if found is None or method not in ("ModelInfer", "ModelStreamInfer"):
                    return found
                if method == "ModelInfer":
                    return found._replace(unary_unary=carried(found.unary_unary))
                return found._replace(stream_stream=carried(found.stream_stream))

        setting = grpc.unary_unary_rpc_method_handler(
            trace_setting,
            request_deserializer=pb2.TraceSettingRequest.FromString,
            response_serializer=pb2.TraceSettingResponse.SerializeToString,
        )
        return (
            grpc.method_handlers_generic_handler(service, {"TraceSetting": setting}),
            Traced(),
        )


class TracedExchange(Exchange):
    """An :class:`Exchange` whose end makes its spans."""

    __slots__ = ("_tracing", "carrier")

    def __init__(
        self, tracing: Tracing, path: str, request_bytes: int, model: Model | None
    ) -> None:
        super().__init__(tracing.pipeline, path, request_bytes, model)
        self._tracing = tracing
        self.carrier = CARRIER.get()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        super().__exit__(kind, exc, traceback)
        try:
            self._tracing.record(self, exc)
        except Exception:  # a trace never fails a request
            log.exception("tracing: the spans of a request could not be made")


def _resource() -> Resource:
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "oipcodec"}))
    return resource
