"""Triton's generate extension: ``POST /v2/models/<name>[/versions/<v>]/generate`` (one JSON
answer) and ``.../generate_stream`` (``text/event-stream``: a ``data:`` event per response).

The request is a JSON object mapped to the model as Triton maps it: a key that names one of
the model's inputs is that tensor (a value or a flat array, shaped into the input's declared
shape: the fixed dimensions divide the count, the innermost ``-1`` takes the rest, other
``-1`` are 1), ``id`` is the request id, ``parameters`` is an object whose keys are mapped
the same way, and any other key is a request parameter (a string, number or boolean). Each
response is a JSON object: ``id`` (when the request had one), ``model_name``,
``model_version``, the response's parameters, and each output by name (one element as a
value, more as a flat array).

An error before the first response is a JSON error with its status; after it,
``/generate_stream`` sends it as an event ``data: {"error": ...}`` (the status, 200, is
sent). ``/generate`` takes a model that answers exactly once. docs/streaming.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
import orjson

from oipcodec import rest
from oipcodec.errors import InternalError, InvalidArgumentError, NotFoundError
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.server.frontends._asgi import (
    JSON,
    Answer,
    ClientGone,
    Receive,
    Scope,
    Send,
    allow,
    error_answer,
    read_body,
    respond,
    while_connected,
)
from oipcodec.server.inference import Pipeline
from oipcodec.server.inference.streaming import Responses
from oipcodec.server.model import Model
from oipcodec.server.registry import ModelRegistry
from oipcodec.types import InferRequest, InferResponse

__all__ = ["GenerateRoutes"]

_EVENT_STREAM = b"text/event-stream; charset=utf-8"


class _Streamed(ClientGone):
    """The answer went out as a stream, written by the route itself: :func:`respond` sends
    nothing more (it sends nothing for :class:`ClientGone`)."""


class GenerateRoutes:
    """The ASGI handler of the generate routes over a registry's models.

    Parameters
    ----------
    registry
        The models.
    limits
        What a request may hold.
    elsewhere
        The routes of the app beside it, for a path that only ends like a generate route
        (``/v2/models/generate``: the metadata of a model called ``generate``).
    """

    def __init__(
        self,
        registry: ModelRegistry,
        limits: Limits = DEFAULT_LIMITS,
        elsewhere: Callable[[str, str, Scope, Receive], Awaitable[Answer]] | None = None,
    ) -> None:
        self.pipeline = Pipeline.of(registry)
        self.limits = limits
        self.elsewhere = elsewhere

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await respond(
            scope,
            receive,
            send,
            lambda method, path: self._generate(method, path, scope, receive, send),
        )

    async def _generate(
        self, method: str, path: str, scope: Scope, receive: Receive, send: Send
    ) -> Answer:
        parts = path.strip("/").split("/")
        if (
            len(parts) not in (4, 6)
            or parts[:2] != ["v2", "models"]
            or (len(parts) == 6 and parts[3] != "versions")
        ):
            if self.elsewhere is not None:
                return await self.elsewhere(method, path, scope, receive)
            raise NotFoundError(f"no endpoint {path}")
        name, version = parts[2], parts[4] if len(parts) == 6 else None
        streaming = parts[-1] == "generate_stream"
        allow(method, "POST")
        model = self.pipeline.model(name, version)  # 404 / 503 before reading the body
        body = await read_body(scope, dict(scope["headers"]), receive, self.limits)
        with self.pipeline.exchange("json", len(body), model) as exchange:
            request = self._request(model, body)
            async with Responses(exchange, request, model) as responses:
                if not streaming:  # the model stops if the client leaves
                    answer = orjson.dumps(
                        _document(await while_connected(receive, _one(responses)))
                    )
                    exchange.sent(len(answer))
                    return 200, answer, [(b"content-type", JSON)]
                first = await responses.next()  # its error is a JSON error answer
                sent = await self._stream(first, responses, receive, send)
                exchange.sent(sent)
        raise _Streamed

    async def _stream(
        self, first: InferResponse | None, responses: Responses, receive: Receive, send: Send
    ) -> int:
        """Write the events, each before the next response is asked of the model; stop
        when the client goes away (its ``http.disconnect``, watched from here on)."""
        headers = [(b"content-type", _EVENT_STREAM), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        gone = asyncio.ensure_future(receive())
        sent = 0
        try:
            response = first
            while response is not None:
                event = b"data: " + orjson.dumps(_document(response)) + b"\n\n"
                await send({"type": "http.response.body", "body": event, "more_body": True})
                sent += len(event)
                # A turn of the event loop per event: a send that need not wait and a model
                # that never awaits would otherwise hold the loop, and the client's leaving
                # (and every other connection) would go unseen until the model ended.
                await asyncio.sleep(0)
                if gone.done():
                    return sent  # the client left: the caller closes the model's generator
                try:
                    response = await responses.next()
                except Exception as exc:
                    message = error_answer(exc, "POST", "generate_stream")[1]
                    assert isinstance(message, bytes)
                    event = b"data: " + message + b"\n\n"
                    await send({"type": "http.response.body", "body": event, "more_body": True})
                    break
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()
        return sent

    def _request(self, model: Model, body: Any) -> InferRequest:
        """The generate request's JSON as an inference request of ``model``."""
        try:
            document = orjson.loads(body) if body.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise InvalidArgumentError(f"invalid JSON in the request body: {exc.msg}") from None
        if not isinstance(document, dict):
            raise InvalidArgumentError("a generate request is a JSON object")
        request_id = document.pop("id", None)
        if request_id is not None and not isinstance(request_id, str):
            raise InvalidArgumentError("Unable to parse 'id': a generate request's id is a string")
        specs = {spec.name: spec for spec in model.inputs or ()}
        inputs: list[dict[str, Any]] = []
        parameters: dict[str, Any] = {}
        nested = document.pop("parameters", None) if "parameters" not in specs else None
        _map(document, specs, inputs, parameters)
        if nested is not None:
            if not isinstance(nested, dict):
                raise InvalidArgumentError("Expected JSON object for keyword: 'parameters'")
            _map(nested, specs, inputs, parameters)
        oip: dict[str, Any] = {"inputs": inputs, "parameters": parameters}
        if request_id is not None:
            oip["id"] = request_id
        return rest.decode_request(
            orjson.dumps(oip),
            model_name=model.name,
            model_version=model.version,
            limits=self.limits,
        )


async def _one(responses: Responses) -> InferResponse:
    """The model's one response; more or none is refused in Triton's words."""
    first = await responses.next()
    if first is None or await responses.next() is not None:
        raise InternalError(
            "generate expects model to produce exactly 1 response, use generate stream for "
            "model that generates various number of responses"
        )
    return first


def _map(
    document: dict[str, Any],
    specs: dict[str, Any],
    inputs: list[dict[str, Any]],
    parameters: dict[str, Any],
) -> None:
    """Each key of ``document``: an input tensor when it names one, else a parameter."""
    for key, value in document.items():
        spec = specs.get(key)
        if spec is None:
            if isinstance(value, (dict, list)) or value is None:
                raise InvalidArgumentError(
                    f"parameter '{key}' of a generate request must be a string, number or "
                    f"boolean, got {type(value).__name__}"
                )
            parameters[key] = value
            continue
        count = len(value) if isinstance(value, list) else 1
        inputs.append(
            {
                "name": key,
                "datatype": spec.datatype,
                "shape": _shape(key, count, spec.shape),
                "data": value if isinstance(value, list) else [value],
            }
        )


def _shape(name: str, count: int, declared: Sequence[int]) -> list[int]:
    """``count`` elements in the declared shape, as Triton shapes a generate input: the
    fixed dimensions divide the count, the innermost ``-1`` takes what is left, any other
    ``-1`` is 1."""
    left = count
    for size in declared:
        if size != -1:
            if size == 0 or left % size:
                raise InvalidArgumentError(
                    f"The schema can not convert input '{name}' to tensor with proper shape"
                )
            left //= size
    shape = list(declared)
    for index in range(len(shape) - 1, -1, -1):
        if shape[index] == -1:
            shape[index], left = left, 1
    if left != 1:
        raise InvalidArgumentError(
            f"The schema can not convert input '{name}' to tensor with proper shape"
        )
    return shape


def _document(response: InferResponse) -> dict[str, Any]:
    """A response as the generate extension's JSON object."""
    document: dict[str, Any] = {}
    if response.id:
        document["id"] = response.id
    document["model_name"] = response.model_name
    document["model_version"] = response.model_version or ""
    document.update(response.parameters)
    for tensor in response.outputs:
        data = tensor.data
        if tensor.datatype == "BYTES":
            values: list[Any] = [
                bytes(v).decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else v
                for v in data.ravel().tolist()
            ]
        elif data.dtype.kind == "f" or tensor.datatype in ("FP16", "BF16"):
            values = np.asarray(data, dtype=np.float64).ravel().tolist()
        else:
            values = data.ravel().tolist()
        document[tensor.name] = values[0] if len(values) == 1 else values
    return document
