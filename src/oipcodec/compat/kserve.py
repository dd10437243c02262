"""KServe: ``kserve.protocol.infer_type`` requests and responses to and from oipcodec's.

KServe's own codecs go through Python lists; these functions go from the wire bytes straight to
arrays with the kernels and hand KServe objects whose tensors *are* those arrays:

- objects: :func:`to_oip_request`, :func:`to_oip_response`, :func:`from_oip_request`,
  :func:`from_oip_response` (an answer without an id gets the request's, else a UUID4);
- REST bodies (as :func:`oipcodec.rest.decode_request`): :func:`request_from_rest`,
  :func:`response_to_rest`, :func:`request_to_rest`, :func:`response_from_rest`;
- gRPC messages (through :mod:`oipcodec.pb`): :func:`request_from_grpc`,
  :func:`response_to_grpc`, :func:`request_to_grpc`, :func:`response_from_grpc`;
- a ``kserve.ModelServer``: :func:`patch_dataplane` (its REST infer routes on the codec: JSON
  and binary bodies straight to arrays).

Malformed input raises :class:`oipcodec.DecodeError` naming the tensor, the element and the
byte offset. ``kserve`` is imported only inside the functions that build or read its objects.
The recipe, datatypes and parameters: docs/compat.md, "KServe".
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np

from oipcodec import datatypes, kernels, pb, rest
from oipcodec.errors import DecodeError, OIPError, ShapeError
from oipcodec.limits import DEFAULT_LIMITS, Limits, element_count
from oipcodec.raw import array_to_raw, raw_to_array
from oipcodec.types import InferRequest, InferResponse, Parameters, RequestedOutput, Tensor

__all__ = [
    "from_oip_request",
    "from_oip_response",
    "patch_dataplane",
    "request_from_grpc",
    "request_from_rest",
    "request_to_grpc",
    "request_to_rest",
    "response_from_grpc",
    "response_from_rest",
    "response_to_grpc",
    "response_to_rest",
    "to_oip_request",
    "to_oip_response",
]


def _infer_type() -> Any:
    from kserve.protocol import infer_type

    return infer_type


def _messages() -> Any:
    from kserve.protocol.grpc import grpc_predict_v2_pb2

    return grpc_predict_v2_pb2


# ----------------------------------------------------------------------------- KServe -> ours


def to_oip_request(request: Any, *, limits: Limits = DEFAULT_LIMITS) -> InferRequest:
    """A ``kserve.protocol.infer_type.InferRequest`` as an :class:`oipcodec.InferRequest`.

    Each input's data, whatever KServe holds: raw bytes (gRPC raw contents, or
    ``set_data_from_numpy(binary_data=True)``) become a read-only view checked against the shape
    (BYTES framing validated); a numpy array is taken as it is (its dtype must carry the
    datatype); a list (JSON, typed gRPC contents) or ``InferTensorContents`` is converted by
    :func:`oipcodec.kernels.flatten`. ``binary_data_size`` is dropped from the parameters (it
    describes the transport); gRPC ``InferParameter`` values become Python values. An empty
    ``id`` or ``model_version`` (protobuf's default) becomes ``None``.

    Parameters
    ----------
    request
        KServe's request.
    limits
        What the tensors may hold.
    """
    outputs = None
    if request.request_outputs:
        outputs = [
            RequestedOutput(o.name, _parameters(o.parameters, f"output '{o.name}'"))
            for o in request.request_outputs
        ]
    return InferRequest(
        [_to_tensor(t, "input", limits) for t in request.inputs],
        outputs=outputs,
        id=request.id or None,
        parameters=_parameters(request.parameters, "request"),
        model_name=request.model_name or None,
        model_version=getattr(request, "model_version", None) or None,
    )


def to_oip_response(response: Any, *, limits: Limits = DEFAULT_LIMITS) -> InferResponse:
    """A ``kserve.protocol.infer_type.InferResponse`` as an :class:`oipcodec.InferResponse`.

    Parameters
    ----------
    response
        KServe's response; its tensors as in :func:`to_oip_request`.
    limits
        What the tensors may hold.
    """
    return InferResponse(
        response.model_name or "",
        [_to_tensor(t, "output", limits) for t in response.outputs],
        id=response.id or None,
        model_version=response.model_version or None,
        parameters=_parameters(response.parameters, "response"),
    )


def _to_tensor(tensor: Any, kind: str, limits: Limits) -> Tensor:
    name = tensor.name
    try:
        row = datatypes.get(tensor.datatype)
        shape = tuple(tensor.shape)
        parameters = _parameters(tensor.parameters, f"{kind} '{name}'")
        parameters.pop(rest.BINARY_DATA_SIZE, None)
        raw = tensor._raw_data
        data = tensor.data
        if raw is not None:
            array = raw_to_array(raw, row.name, shape, limits=limits)
        elif isinstance(data, np.ndarray):
            array = data
        elif data is None:
            raise DecodeError("has no data")
        else:
            array = _from_values(data, row, shape, limits)
        return Tensor(name, row.name, shape, array, parameters)
    except OIPError as exc:
        if exc.tensor is not None:
            raise
        raise exc.for_tensor(name, kind) from None


def _from_values(
    data: Any, row: datatypes.Datatype, shape: tuple[int, ...], limits: Limits
) -> np.ndarray[Any, Any]:
    """A list of values (or typed gRPC contents) as an array of ``shape``."""
    if hasattr(data, "ListFields"):  # InferTensorContents
        field = row.contents_field
        if field is None:
            raise DecodeError(f"{row.name} has no typed contents field; it must be sent raw")
        data = list(getattr(data, field))
    count = element_count(shape, limits)
    flat, _ = kernels.flatten(data, row.name, limits=limits)
    if flat.size != count:
        raise ShapeError(f"shape {list(shape)} holds {count} elements but data has {flat.size}")
    return flat.reshape(shape)


def _parameters(value: Any, where: str) -> Parameters:
    """KServe parameters (a dict, or a protobuf map of ``InferParameter``) as Python values."""
    if not value:
        return {}
    if not isinstance(value, Mapping) and not hasattr(value, "items"):
        raise DecodeError(f"{where} parameters must be a mapping, got {type(value).__name__}")
    out: Parameters = {}
    for key, item in value.items():
        if hasattr(item, "WhichOneof"):  # InferParameter
            choice = item.WhichOneof("parameter_choice")
            if choice is None:
                raise DecodeError(f"{where} parameter {key!r} has no value")
            item = getattr(item, choice)
        elif isinstance(item, np.generic) and item.dtype.kind in "biuf":
            item = item.item()
        if not isinstance(item, (str, int, float, bool)):
            raise DecodeError(
                f"{where} parameter {key!r} must be a string, number or boolean, got {item!r}"
            )
        out[key] = item
    return out


# ----------------------------------------------------------------------------- ours -> KServe


def from_oip_request(request: InferRequest, *, from_grpc: bool = False) -> Any:
    """An :class:`oipcodec.InferRequest` as a ``kserve.protocol.infer_type.InferRequest``.

    Its inputs hold the numpy arrays (``InferInput.data``, in the tensor's shape).

    Parameters
    ----------
    request
        The request.
    from_grpc
        Mark it as KServe's ``InferRequest.from_grpc`` does for a request with raw contents,
        so that ``use_binary_outputs`` is true and KServe answers with raw contents.
    """
    infer_type = _infer_type()
    inputs = [
        infer_type.InferInput(
            t.name, list(t.shape), t.datatype, data=_shaped(t), parameters=dict(t.parameters)
        )
        for t in request.inputs
    ]
    outputs = None
    if request.outputs is not None:
        outputs = [infer_type.RequestedOutput(o.name, dict(o.parameters)) for o in request.outputs]
    result = infer_type.InferRequest(
        request.model_name or "",
        inputs,
        request_id=request.id,
        from_grpc=from_grpc,
        parameters=dict(request.parameters),
        request_outputs=outputs,
        model_version=request.model_version,
    )
    # KServe's own from_grpc sets this when raw contents came in (raw in, raw out).
    result._use_raw_outputs = from_grpc
    return result


def from_oip_response(response: InferResponse, *, request: Any = None) -> Any:
    """An :class:`oipcodec.InferResponse` as a ``kserve.protocol.infer_type.InferResponse``,
    in the form KServe's server sends without error on the transport the request came by.

    ``request`` (the KServe request being answered) carries KServe's output choices into the
    response, as ``kserve.utils.utils.get_predict_response`` does: its requested outputs and
    ``use_binary_outputs``. It also decides the form of the outputs:

    - a REST request (or none): each output holds its numpy array (``InferOutput.data``), which
      KServe's ``to_rest`` writes as JSON or binary;
    - a gRPC request (``request.from_grpc``): each output holds its raw bytes, what
      ``InferOutput.set_data_from_numpy(binary_data=True)`` gives and what KServe's ``to_grpc``
      sends as ``raw_output_contents`` (for a request with raw contents, ``to_grpc`` cannot take
      an array: it tests the array's truth value).

    A BF16 output, which KServe has no numpy type for, is given as raw bytes in both cases
    (KServe's ``to_grpc`` sends them; its ``to_rest`` cannot). A response without an ``id``
    takes the request's, else a new UUID4, as KServe's ``get_predict_response`` does: KServe's
    REST answer requires a string id (a JSON request without one would otherwise be a 500).

    Parameters
    ----------
    response
        The response.
    request
        The KServe request being answered (see above).
    """
    infer_type = _infer_type()
    grpc = bool(getattr(request, "from_grpc", False))
    outputs = []
    for tensor in response.outputs:
        parameters = dict(tensor.parameters) or None
        if grpc or tensor.datatype == "BF16":
            output = infer_type.InferOutput(
                tensor.name, list(tensor.shape), tensor.datatype, parameters=parameters
            )
            output._raw_data = bytes(array_to_raw(_shaped(tensor), tensor.datatype))
        else:
            output = infer_type.InferOutput(
                tensor.name, list(tensor.shape), tensor.datatype, _shaped(tensor), parameters
            )
        outputs.append(output)
    response_id = response.id or getattr(request, "id", None) or str(uuid.uuid4())
    return infer_type.InferResponse(
        response_id,
        response.model_name,
        outputs,
        model_version=response.model_version,
        parameters=dict(response.parameters) or None,
        use_binary_outputs=bool(request.use_binary_outputs) if request is not None else False,
        requested_outputs=request.request_outputs if request is not None else None,
    )


def _decoded_response(response: InferResponse) -> Any:
    """A response a client decoded, as a KServe ``InferResponse`` holding arrays: its id as
    sent (none stays ``None``, as KServe's ``from_rest`` / ``from_grpc`` leave it)."""
    result = from_oip_response(response)
    result.id = response.id
    return result


def _shaped(tensor: Tensor) -> np.ndarray[Any, Any]:
    data = tensor.data
    return data if data.shape == tensor.shape else data.reshape(tensor.shape)


# ----------------------------------------------------------------------------- REST


def request_from_rest(
    body: Any,
    header_length: int | str | None = None,
    content_encoding: str | None = None,
    *,
    model_name: str,
    model_version: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Any:
    """A REST inference request body as a KServe ``InferRequest`` holding numpy arrays.

    What KServe does with FastAPI's JSON parse and ``InferRequest.from_inference_request``, or
    with ``InferRequest.from_bytes`` for the binary extension, without the Python lists: JSON
    ``data`` is parsed straight into arrays, binary tensors are zero-copy views of ``body``.

    Parameters
    ----------
    body, header_length, content_encoding, model_name, model_version, limits
        As in :func:`oipcodec.rest.decode_request`.

    Raises
    ------
    DecodeError
        Naming the input, element and byte offset.
    """
    request = rest.decode_request(
        body,
        header_length,
        content_encoding,
        model_name=model_name,
        model_version=model_version,
        limits=limits,
    )
    return from_oip_request(request)


def request_to_rest(
    request: Any, *, binary: bool = True, nested: bool = False
) -> tuple[bytes, int | None]:
    """A KServe ``InferRequest`` as a REST body: ``(body, header_length)``.

    The request's own parameters and requested outputs are sent as they are (nothing is added).

    Parameters
    ----------
    request
        KServe's request.
    binary
        The inputs in binary, else JSON written by :func:`oipcodec.kernels.array_to_json`.
    nested
        JSON data nested by shape (else flat).
    """
    return rest.encode_request(
        to_oip_request(request), binary=binary, nested=nested, binary_outputs=False
    )


def response_from_rest(
    body: Any,
    header_length: int | str | None = None,
    content_encoding: str | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> Any:
    """A REST inference response body as a KServe ``InferResponse`` holding numpy arrays.

    KServe's ``InferResponse.from_bytes`` / ``from_rest``, done by oipcodec.

    Parameters
    ----------
    body, header_length, content_encoding, limits
        As in :func:`oipcodec.rest.decode_response`.
    """
    return _decoded_response(
        rest.decode_response(body, header_length, content_encoding, limits=limits)
    )


def response_to_rest(
    response: Any, *, binary: bool | None = None, nested: bool = False
) -> tuple[bytes, int | None]:
    """A KServe ``InferResponse`` as a REST body: ``(body, header_length)``.

    Unlike KServe's, BF16 and FP16 outputs can be written (FP16 JSON numbers are exact).

    Parameters
    ----------
    response
        KServe's response.
    binary
        ``None`` follows KServe's ``to_rest``: with requested outputs, only those are sent,
        each in binary when it asked for ``binary_data``; else every output, in binary when the
        response's ``use_binary_outputs`` is true. ``True`` / ``False`` send every output in
        binary / JSON.
    nested
        JSON data nested by shape (else flat).
    """
    ours, chosen = _selected(response, binary)
    return rest.encode_response(ours, binary=chosen, nested=nested)


def _selected(response: Any, binary: bool | None) -> tuple[InferResponse, bool | set[str]]:
    """``response`` as ours with the outputs KServe's ``to_rest`` sends, and which of them go
    in binary (see :func:`response_to_rest`). An unknown requested output raises
    :class:`DecodeError` with KServe's own message."""
    ours = to_oip_response(response)
    requested = getattr(response, "_requested_outputs", None)
    chosen: bool | set[str]
    if binary is not None:
        chosen = binary
    elif requested:
        by_name = {t.name: t for t in ours.outputs}
        missing = [o.name for o in requested if o.name not in by_name]
        if missing:
            raise DecodeError(
                f"Unexpected inference output '{missing[0]}' for model '{ours.model_name}'"
            )
        ours.outputs = [by_name[o.name] for o in requested]
        chosen = {o.name for o in requested if o.binary_data is True}
    else:
        chosen = bool(getattr(response, "_use_binary_outputs", False))
    return ours, chosen


# ----------------------------------------------------------------------------- gRPC


def _serialized(message: Any) -> Any:
    return message.SerializeToString() if hasattr(message, "SerializeToString") else message


def request_from_grpc(message: Any, *, limits: Limits = DEFAULT_LIMITS) -> Any:
    """A KServe ``ModelInferRequest`` as a KServe ``InferRequest`` holding numpy arrays.

    Decoded by :func:`oipcodec.pb.decode_request` (raw contents as views of the message bytes;
    typed contents in C, no lists), and marked as KServe's ``from_grpc`` marks it:
    ``from_grpc`` and, when the message carries raw contents (always assumed for bytes),
    ``use_binary_outputs``.

    Parameters
    ----------
    message
        The message, or its serialized bytes.
    limits
        What the tensors may hold.
    """
    raw = bool(message.raw_input_contents) if hasattr(message, "raw_input_contents") else True
    request = pb.decode_request(_serialized(message), limits=limits)
    return from_oip_request(request, from_grpc=raw)


def request_to_grpc(request: Any, *, raw: bool = True) -> Any:
    """A KServe ``InferRequest`` as KServe's ``ModelInferRequest`` message.

    Written by :func:`oipcodec.pb.encode_request`.

    Parameters
    ----------
    request
        KServe's request.
    raw
        Raw contents (else typed contents).
    """
    data = pb.encode_request(to_oip_request(request), raw=raw)
    return _messages().ModelInferRequest.FromString(data)


def response_from_grpc(message: Any, *, limits: Limits = DEFAULT_LIMITS) -> Any:
    """A KServe ``ModelInferResponse`` as a KServe ``InferResponse`` holding numpy arrays.

    Parameters
    ----------
    message
        The message, or its serialized bytes.
    limits
        What the tensors may hold.
    """
    return _decoded_response(pb.decode_response(_serialized(message), limits=limits))


def response_to_grpc(response: Any, *, raw: bool = True) -> Any:
    """A KServe ``InferResponse`` as KServe's ``ModelInferResponse`` message.

    Written by :func:`oipcodec.pb.encode_response`. A model's ``predict`` may return this
    message: KServe's gRPC servicer sends it as it is.

    Parameters
    ----------
    response
        KServe's response.
    raw
        Raw contents (the default, as Triton answers; KServe's ``to_grpc`` writes typed
        contents unless the request came raw), else typed contents.
    """
    data = pb.encode_response(to_oip_response(response), raw=raw)
    return _messages().ModelInferResponse.FromString(data)


# ----------------------------------------------------------------------------- model server


#: The REST paths :func:`patch_dataplane` serves with oipcodec's codec ahead of KServe's own.
INFER_PATHS = (
    "/v2/models/{model_name}/infer",
    "/v2/models/{model_name}/versions/{model_version}/infer",
)

# Set on a patched DataPlane (its REST routes then go to oipcodec) and on the hook in KServe.
_MARK = "_oipcodec_patched"


def patch_dataplane(dataplane: Any, *, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Make a KServe ``DataPlane`` (``kserve.ModelServer().dataplane``) and the REST server
    KServe builds on it read request bodies with oipcodec's REST codec. Returns ``dataplane``.

    - ``POST /v2/models/{name}/infer`` (and the versioned path) of every FastAPI app KServe
      registers its V2 endpoints on for this data plane, which ``ModelServer.start`` does: JSON
      ``data`` is parsed by the kernels straight into arrays (never into Python lists by
      FastAPI and pydantic), binary tensors are views of the body, and the answer is written by
      :func:`oipcodec.rest.encode_response`, choosing outputs and binary as KServe's
      ``to_rest`` does. The routes are twins of KServe's, added to KServe's V2 router before the
      app includes it: the app's dependencies and middleware guard them as they guard KServe's,
      and the body is read once those passed (a compressed or large one in a thread, off the
      event loop). Call it before ``start``;
    - the data plane itself decodes a bytes body (the binary extension) with
      :func:`request_from_rest` instead of ``InferRequest.from_bytes``.

    Answers are KServe's wherever KServe answers: the same status and ``{"error": ...}`` body
    for an unknown model (404), a model not ready (503), a model version (501), an unknown
    requested output (400); a body that is not a V2 request document is handed to KServe's own
    route (FastAPI's 422). A malformed tensor (wrong shape, bad element, truncated binary) is a
    400 whose message names the input, element and byte offset, where KServe answers 500 with
    numpy's message. A body without ``Inference-Header-Content-Length`` is read as all JSON.

    Parameters
    ----------
    dataplane
        KServe's data plane, returned.
    limits
        What a request body may hold.
    """
    from kserve.errors import InvalidInput

    if getattr(dataplane, _MARK, False):
        return dataplane
    original = dataplane.decode_inference_request

    def decode_inference_request(body: Any, headers: Any, model_name: str) -> Any:
        if not isinstance(body, (bytes, bytearray, memoryview)):
            return original(body, headers, model_name)
        headers = headers or {}
        try:
            return request_from_rest(
                body,
                headers.get(rest.HEADER_LENGTH.lower()),
                headers.get("content-encoding"),
                model_name=model_name,
                limits=limits,
            )
        except OIPError as exc:  # KServe answers InvalidInput with 400
            raise InvalidInput(str(exc)) from exc

    dataplane.decode_inference_request = decode_inference_request
    setattr(dataplane, _MARK, limits)
    _hook_v2_endpoints()
    return dataplane


def _hook_v2_endpoints() -> None:
    """Wrap KServe's ``register_v2_endpoints`` (once per process) so that, for a patched data
    plane, the V2 router it includes in the app holds oipcodec's infer routes, each a twin of
    KServe's just ahead of it (oipcodec.compat._routes: the app's and KServe's guards apply)."""
    from kserve.protocol.rest import server

    register = server.register_v2_endpoints
    if getattr(register, _MARK, False):
        return

    def register_v2_endpoints(app: Any, dataplane: Any, *args: Any, **kwargs: Any) -> Any:
        limits = getattr(dataplane, _MARK, None)
        if isinstance(limits, Limits):
            app = _Including(app, _Infer(dataplane, limits))
        return register(app, dataplane, *args, **kwargs)

    setattr(register_v2_endpoints, _MARK, True)
    server.register_v2_endpoints = register_v2_endpoints


class _Including:
    """The app as ``register_v2_endpoints`` sees it: a router it includes gets the twins of
    its infer routes first, then goes to the app as it is (so the app's dependencies, and any
    given to ``include_router``, cover the twins as they cover KServe's routes)."""

    def __init__(self, app: Any, infer: _Infer) -> None:
        self._app = app
        self._infer = infer

    def include_router(self, router: Any, *args: Any, **kwargs: Any) -> Any:
        from oipcodec.compat import _routes

        _routes.add_twins(router.routes, INFER_PATHS, self._infer.handler)
        return self._app.include_router(router, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._app, name)


class _Infer:
    """The endpoint of the twins: KServe's ``V2Endpoints.infer`` with oipcodec's codec on the
    raw body; a body only KServe's route can judge goes to that route."""

    def __init__(self, dataplane: Any, limits: Limits) -> None:
        self.dataplane = dataplane
        self.limits = limits

    def handler(self, route: Any) -> Any:
        async def infer(request: Any) -> Any:
            return await self(request, route)

        return infer

    async def __call__(self, request: Any, route: Any) -> Any:
        from kserve.errors import InvalidInput, ModelNotReady

        from oipcodec.compat import _routes

        body = await request.body()
        headers = dict(request.headers)
        model_name = request.path_params["model_name"]
        header_length = headers.get(rest.HEADER_LENGTH.lower())
        encoding = headers.get("content-encoding")
        decoded: Any = None
        problem: OIPError | None = None
        try:
            decoded = await _routes.decode_off_loop(
                body,
                encoding is not None,
                request_from_rest,
                body,
                header_length,
                encoding,
                model_name=model_name,
                limits=self.limits,
            )
        except OIPError as exc:
            if header_length is None and not _is_v2_document(body):
                # Not a V2 request at all: KServe's route gives FastAPI's answer (422 or 400).
                return _routes.HostAnswer(route, body)
            problem = exc
        # KServe's order: versions, then the model, then the tensors.
        if request.path_params.get("model_version"):
            raise NotImplementedError("Model versioning not supported yet.")
        if not await self.dataplane.model_ready(model_name, True):
            raise ModelNotReady(model_name)
        if problem is not None:
            raise InvalidInput(str(problem)) from problem
        result, response_headers = await self.dataplane.infer(
            model_name=model_name, request=decoded, headers=headers
        )
        return await self._answer(model_name, result, headers, response_headers)

    async def _answer(
        self, model_name: str, result: Any, headers: dict[str, str], extra: dict[str, str]
    ) -> Any:
        from fastapi.encoders import jsonable_encoder
        from kserve.errors import InferenceError, InvalidInput
        from kserve.protocol.rest.v2_datamodels import InferenceResponse
        from starlette.responses import JSONResponse, Response

        infer_type = _infer_type()
        cloudevent = "ce-specversion" in headers or (
            headers.get("content-type") == "application/cloudevents+json"
        )
        if isinstance(result, infer_type.InferResponse) and not cloudevent:
            try:
                ours, binary = _selected(result, None)
            except DecodeError as exc:
                raise InvalidInput(exc.reason) from None
            if result.id is not None:
                ours.id = result.id  # KServe writes its id as it is, "" included
            try:
                body, header_length = rest.encode_response(ours, binary=binary)
            except OIPError as exc:
                raise InferenceError(
                    f"model '{model_name}' answered an output oipcodec cannot send: {exc}"
                ) from None
            answer_headers = {k: v for k, v in extra.items() if k not in _FRAMING}
            if header_length is None:
                return Response(body, 200, answer_headers, "application/json")
            answer_headers[rest.HEADER_LENGTH] = str(header_length)
            return Response(body, 200, answer_headers, "application/octet-stream")
        # Anything else (a dict, a CloudEvent) the way KServe's own endpoint answers it.
        encoded, encode_headers = self.dataplane.encode(
            model_name=model_name, response=result, headers=headers, req_attributes={}
        )
        extra = {**extra, **encode_headers}
        answer_headers = {k: v for k, v in extra.items() if k not in _FRAMING}
        if isinstance(encoded, bytes):
            return Response(encoded, 200, answer_headers)
        document = jsonable_encoder(InferenceResponse.model_validate(encoded))
        return JSONResponse(document, 200, answer_headers)


# Headers of the model's answer that the route's own response sets (as KServe drops them).
_FRAMING = frozenset({"content-length", "content-type"})


def _is_v2_document(body: bytes) -> bool:
    """Whether KServe's own route would take ``body`` as a V2 request document (FastAPI's JSON
    parse and pydantic's ``InferenceRequest``); only asked on the error path."""
    from kserve.protocol.rest.v2_datamodels import InferenceRequest

    try:
        InferenceRequest.model_validate_json(body)
    except ValueError:  # pydantic's ValidationError, JSON syntax included
        return False
    return True
