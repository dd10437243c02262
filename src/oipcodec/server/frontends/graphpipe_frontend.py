"""The GraphPipe front end: a model's GraphPipe endpoint, on the REST port and on a port of its own.

``POST /graphpipe/<model>`` (and ``POST /`` on the ``--graphpipe-port``) takes a ``Request``
flatbuffer and answers an ``InferResponse`` or a ``MetadataResponse``; ``GET`` answers the
metadata as JSON (GraphPipe's "simple mode").

Invariant: only a body the flatbuffer verifier refuses (400), an unknown model (404), a model
that is not ready (503) and a body over the limit (413) are not 200, since GraphPipe's clients
read no body of another status; any other problem is an ``InferResponse`` whose one ``Error``
carries the status the REST front end would answer. BOOL and BF16 inputs take Uint8 and
Float32 tensors (GraphPipe has neither type). docs/graphpipe.md has the details.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from oipcodec import __version__, datatypes, graphpipe
from oipcodec.errors import (
    DecodeError,
    InvalidArgumentError,
    NotFoundError,
    OIPError,
    RequestError,
    request_error_for,
)
from oipcodec.limits import Limits
from oipcodec.server.frontends._asgi import (
    Answer,
    MethodNotAllowed,
    Receive,
    Scope,
    Send,
    joined,
    json_answer,
    read_body,
    respond,
)
from oipcodec.server.inference import Pipeline
from oipcodec.server.inference.streaming import decoupled_refused
from oipcodec.server.metadata import SERVER_NAME
from oipcodec.server.model import Model
from oipcodec.server.registry import ModelRegistry
from oipcodec.types import InferRequest, RequestedOutput, Tensor

__all__ = ["CONTENT_TYPE", "GraphPipeApp", "GraphPipeRoutes", "answer", "metadata"]

log = logging.getLogger("oipcodec.server")

#: The content type of GraphPipe answers (its reference servers send no particular one).
CONTENT_TYPE = b"application/octet-stream"


def metadata(model: Model) -> graphpipe.MetadataResponse:
    """The ``MetadataResponse`` of ``model`` (its inputs and outputs as the OIP model metadata
    lists them, a batched model's with the leading -1)."""
    document = model.metadata()

    def entries(items: list[dict[str, Any]]) -> list[graphpipe.IOMetadata]:
        return [
            graphpipe.IOMetadata(item["name"], item["datatype"], tuple(item["shape"]))
            for item in items
        ]

    return graphpipe.MetadataResponse(
        name=document["name"],
        version=__version__,
        server=SERVER_NAME,
        description=f"{document['name']} ({document.get('platform', '')}), served by oipcodec",
        inputs=entries(document["inputs"]),
        outputs=entries(document["outputs"]),
    )


async def answer(
    pipeline: Pipeline, model: Model, body: Any, limits: Limits
) -> tuple[int, list[Any], bytes]:
    """The answer to a POSTed body: (status, body parts, content type). An inference request
    counts in the statistics on the ``graphpipe`` path (an error answered in the
    InferResponse as a failure; a body that is no Request flatbuffer, on the path alone; a
    metadata request, nowhere)."""
    exchange = pipeline.exchange("graphpipe", len(body))
    try:
        with exchange:
            fields = graphpipe.read_request(body, limits=limits)
            exchange.model = model
            request = graphpipe.request_from_fields(fields, limits=limits)
            if request.kind == "metadata":
                return 200, [graphpipe.encode_metadata_response(metadata(model))], CONTENT_TYPE
            if model.decoupled:
                raise decoupled_refused("GraphPipe")
            response = await exchange.run(_infer_request(model, request), model)
            parts = graphpipe.encode_response_parts(response.outputs)
            exchange.sent(sum(len(part) for part in parts))
    except Exception as exc:
        if exchange.model is None:
            return 400, [f"not a GraphPipe Request flatbuffer: {exc}".encode()], b"text/plain"
        error = request_error_for(exc)
        if not isinstance(exc, RequestError | OIPError):
            log.error("GraphPipe request to model '%s' failed", model.name, exc_info=exc)
        parts = graphpipe.encode_response_parts([], [(error.http_status, error.message)])
    return 200, parts, CONTENT_TYPE


async def _endpoint(
    registry: ModelRegistry,
    limits: Limits,
    method: str,
    name: str,
    scope: Scope,
    receive: Receive,
) -> Answer:
    """GraphPipe's endpoint for model ``name``: POST a Request flatbuffer, GET the metadata as
    JSON."""
    if method not in ("GET", "POST"):
        raise MethodNotAllowed("GET, POST")
    pipeline = Pipeline.of(registry)
    model = pipeline.model(name)  # 404 / 503 before reading the body
    if method == "GET":
        return json_answer(200, metadata(model).document())
    body = await read_body(scope, dict(scope["headers"]), receive, limits)
    status, parts, content_type = await answer(pipeline, model, body, limits)
    return status, joined(parts, scope), [(b"content-type", content_type)]


class GraphPipeRoutes:
    """``/graphpipe/<model>``, mounted beside the REST app."""

    def __init__(self, registry: ModelRegistry, limits: Limits) -> None:
        self.registry = registry
        self.limits = limits

    async def __call__(
        self, method: str, path: str, parts: Sequence[str], scope: Scope, receive: Receive
    ) -> Answer:
        if len(parts) != 2:
            raise NotFoundError(f"no endpoint {path}")
        return await _endpoint(self.registry, self.limits, method, parts[1], scope, receive)


class GraphPipeApp:
    """The ASGI app of the GraphPipe port: one model's endpoint at ``/`` (run without
    lifespan events: the runtime loads the models)."""

    def __init__(self, registry: ModelRegistry, model: str, limits: Limits) -> None:
        self.registry = registry
        self.model = model
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await respond(scope, receive, send, lambda m, p: self._route(m, p, scope, receive))
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1003})

    async def _route(self, method: str, path: str, scope: Scope, receive: Receive) -> Answer:
        if path.strip("/").split("/") != [""]:
            raise NotFoundError(f"no endpoint {path}: this port serves GraphPipe at /")
        return await _endpoint(self.registry, self.limits, method, self.model, scope, receive)


def _infer_request(model: Model, request: graphpipe.GraphPipeRequest) -> InferRequest:
    """The OIP request for a GraphPipe ``InferRequest`` to ``model``."""
    specs = {spec.name: spec for spec in model.inputs or ()}
    inputs = request.inputs
    if not request.input_names and inputs:
        if model.inputs is None:
            raise InvalidArgumentError(
                f"model '{model.name}' declares no inputs: name them in input_names"
            )
        if len(inputs) > len(model.inputs):
            raise InvalidArgumentError(
                f"{len(inputs)} input tensors without input_names, but model '{model.name}' "
                f"has {len(model.inputs)} inputs: {[s.name for s in model.inputs]}"
            )
        inputs = [
            Tensor(spec.name, t.datatype, t.shape, t.data)
            for spec, t in zip(model.inputs, inputs, strict=False)
        ]
    inputs = [_as_declared(t, specs[t.name].datatype) if t.name in specs else t for t in inputs]
    parameters: dict[str, Any] = {}
    if request.config:
        try:
            parameters["config"] = request.config.decode()
        except UnicodeDecodeError:
            raise InvalidArgumentError("config is not UTF-8") from None
    outputs = [RequestedOutput(name) for name in request.output_names] or None
    return InferRequest(inputs, outputs, parameters=parameters, model_name=model.name)


def _as_declared(tensor: Tensor, declared: str) -> Tensor:
    """A Uint8 input of a BOOL model input as BOOL, a Float32 one of a BF16 input as BF16."""
    data = tensor.data
    if declared == "BOOL" and tensor.datatype == "UINT8":
        if data.size and data.max() > 1:
            index = int(np.argmax(data.reshape(-1) > 1))
            raise DecodeError(
                "a BOOL input takes Uint8 elements of 0 or 1", tensor=tensor.name, index=index
            ).for_tensor(tensor.name, "input")
        return Tensor(tensor.name, "BOOL", tensor.shape, data.view(np.bool_))
    if declared == "BF16" and tensor.datatype == "FP32":
        dtype = datatypes.BF16_DTYPE
        return Tensor(
            tensor.name, "BF16", tensor.shape, data if dtype is None else data.astype(dtype)
        )
    return tensor
