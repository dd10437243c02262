"""MLServer on oipcodec's kernels: a registered codec, and faster REST and gRPC transports.

Two independent parts, both for MLServer 1.7 (``pip install "oipcodec[integration-mlserver]"``):

- the codec, content type ``"oip"``: :data:`OIPCodec` (an ``InputCodec``) and
  :data:`OIPRequestCodec` (a ``RequestCodec``), registered in MLServer's codec registry when
  first imported. They decode a list, an array or raw bytes through the kernels to the arrays
  ``NumpyCodec`` gives, with Triton's strictness (a wrong element is refused, not cast), BYTES
  as ``bytes`` and BF16 added. ``can_encode`` is False: select them by content type;
- the transports, :func:`install` (or :func:`install_rest` on an app you build): REST routes
  in front of MLServer's own, with the binary extension and compression, and gRPC converters
  on :func:`oipcodec.raw.raw_to_array` / :func:`oipcodec.raw.array_to_raw`. Idempotent; call
  it when the runtime module is imported, so it runs in every MLServer process.

MLServer is imported only inside the functions that need it. The recipe, each part in full
and the differences from ``NumpyCodec``: docs/compat.md, "MLServer".
"""

from __future__ import annotations

import importlib
import math
from functools import cache
from typing import Any

import numpy as np

from oipcodec import datatypes, kernels, rest
from oipcodec.errors import (
    DecodeError,
    EncodeError,
    InternalError,
    InvalidArgumentError,
    OIPError,
    ShapeError,
)
from oipcodec.limits import DEFAULT_LIMITS, Limits, element_count
from oipcodec.raw import array_to_raw, raw_to_array
from oipcodec.types import InferRequest, InferResponse, Tensor

__all__ = [
    "CONTENT_TYPE",
    "OIPCodec",
    "OIPRequestCodec",
    "codecs",
    "decode_data",
    "decode_input",
    "decode_output",
    "encode_input",
    "encode_output",
    "from_mlserver_response",
    "install",
    "install_grpc",
    "install_rest",
    "installed",
    "to_mlserver_request",
]

#: The content type under which the codecs are registered in MLServer.
CONTENT_TYPE = "oip"

#: The REST paths :func:`install_rest` serves ahead of MLServer's own routes.
INFER_PATHS = (
    "/v2/models/{model_name}/infer",
    "/v2/models/{model_name}/versions/{model_version}/infer",
)

# Set by install(): the transports of this process write array-backed outputs themselves.
_installed = False
_MARK = "_oipcodec_installed"

# The statuses of the REST route's own answers, from oipcodec's one status table.
_BAD_REQUEST = InvalidArgumentError.http_status
_INTERNAL = InternalError.http_status


def _mlserver(module: str = "") -> Any:
    """An MLServer module, imported on first use (typed Any: MLServer has no stubs)."""
    return importlib.import_module("mlserver" + (f".{module}" if module else ""))


def installed() -> bool:
    """Whether :func:`install` ran in this process (outputs are then array-backed)."""
    return _installed


# ----------------------------------------------------------------------------- decoding


def _datatype_name(datatype: Any) -> str:
    # MLServer stores the enum's value (use_enum_values) but model_construct keeps what it got.
    return str(getattr(datatype, "value", datatype))


def decode_data(
    data: Any, datatype: str, shape: Any, *, limits: Limits = DEFAULT_LIMITS
) -> np.ndarray[Any, Any]:
    """The array of ``shape`` and ``datatype`` that ``data`` (a RequestInput's ``data``: a
    list, a ``TensorData``, a numpy array, or raw bytes) holds.

    "data: row-major, no stride or padding, flat or nested; element count must equal the
    product of shape" (OIP REST): the count is checked, the nesting may be either. Raises
    :class:`~oipcodec.DecodeError` naming the element at fault, :class:`~oipcodec.errors.ShapeError`
    for a count that disagrees with ``shape``, :class:`~oipcodec.errors.LimitError` past ``limits``.

    Parameters
    ----------
    data
        A RequestInput's ``data``: a list, a ``TensorData``, a numpy array, or raw bytes.
    datatype, shape
        The tensor's.
    limits
        What the tensor may hold.
    """
    row = datatypes.get(datatype)
    count = element_count(shape, limits)
    dims = tuple(int(d) for d in shape)
    data = getattr(data, "root", data)  # TensorData
    if isinstance(data, (bytes, bytearray, memoryview)) and not row.is_bytes:
        return raw_to_array(data, row.name, dims, limits=limits)
    if (
        isinstance(data, np.ndarray)
        and not row.is_bytes
        and row.numpy_dtype is not None
        and data.dtype == row.numpy_dtype
    ):
        array = data
    else:
        array = _flatten(data, row, limits)
    if array.size != count:
        raise ShapeError(f"shape {list(dims)} holds {count} elements but data has {array.size}")
    return array.reshape(dims)


def _flatten(data: Any, row: datatypes.Datatype, limits: Limits) -> np.ndarray[Any, Any]:
    try:
        return kernels.flatten(data, row.name, limits=limits)[0]
    except EncodeError as exc:
        if row.is_float and _has_none(data):
            # MLServer writes NaN as null (JSON has no NaN) and NumpyCodec reads it back.
            return _flatten(_none_to_nan(data), row, limits)
        raise DecodeError(exc.reason, index=exc.index, offset=exc.offset) from None


def _has_none(data: Any) -> bool:
    if data is None:
        return True
    if isinstance(data, (list, tuple)):
        return any(_has_none(item) for item in data)
    return False


def _none_to_nan(data: Any) -> Any:
    if data is None:
        return math.nan
    if isinstance(data, (list, tuple)):
        return [_none_to_nan(item) for item in data]
    return data


def _located(exc: OIPError, name: str, kind: str) -> OIPError:
    if exc.tensor is not None:
        return exc
    error = exc if isinstance(exc, (DecodeError, ShapeError)) else DecodeError(exc.reason)
    return type(error)(error.reason, tensor=name, index=exc.index, offset=exc.offset, kind=kind)


def decode_input(request_input: Any, *, limits: Limits = DEFAULT_LIMITS) -> np.ndarray[Any, Any]:
    """A ``RequestInput`` (or anything with ``name``, ``datatype``, ``shape`` and ``data``) as
    a numpy array of its shape; errors name the input (see :func:`decode_data`).

    Parameters
    ----------
    request_input
        The input.
    limits
        What the tensor may hold.
    """
    return _decode_tensor(request_input, "input", limits)


def decode_output(response_output: Any, *, limits: Limits = DEFAULT_LIMITS) -> np.ndarray[Any, Any]:
    """A ``ResponseOutput`` as a numpy array of its shape; errors name the output.

    Parameters
    ----------
    response_output
        The output.
    limits
        What the tensor may hold.
    """
    return _decode_tensor(response_output, "output", limits)


def _decode_tensor(tensor: Any, kind: str, limits: Limits) -> np.ndarray[Any, Any]:
    name = getattr(tensor, "name", None)
    try:
        return decode_data(
            tensor.data, _datatype_name(tensor.datatype), tensor.shape, limits=limits
        )
    except OIPError as exc:
        raise _located(exc, str(name), kind) from None


# ----------------------------------------------------------------------------- encoding


def _batch_shape(shape: tuple[int, ...]) -> list[int]:
    """NumpyCodec's shape rule (``inject_batch_dimension``): ``[N]`` is sent as ``[N, 1]``."""
    return list(shape) if len(shape) > 1 else [*shape, 1]


def _as_list(array: np.ndarray[Any, Any], datatype: str) -> list[Any]:
    """The flat list NumpyCodec writes: Python scalars, NaN as None, str elements UTF-8."""
    flat = array.reshape(-1)
    if datatype == "BYTES":
        return [item.encode("utf-8") if isinstance(item, str) else item for item in flat.tolist()]
    if datatype == "BF16":
        flat = flat.astype(np.float32)
    values: list[Any] = flat.tolist()
    if flat.dtype.kind == "f" and np.isnan(flat).any():
        values = [None if value != value else value for value in values]
    return values


def _encoded(name: str, payload: Any, as_list: bool | None, kind: str) -> Any:
    """The ``RequestInput`` (``kind`` "input") or ``ResponseOutput`` (``kind`` "output") that
    :func:`encode_input` and :func:`encode_output` make."""
    types = _mlserver("types")
    array = payload if isinstance(payload, np.ndarray) else np.asarray(payload)
    try:
        datatype = datatypes.from_numpy(array.dtype)
    except OIPError as exc:
        raise EncodeError(exc.reason, tensor=name, kind=kind) from None
    use_list = (not _installed) if as_list is None else as_list
    data = _as_list(array, datatype) if use_list else array
    model = types.RequestInput if kind == "input" else types.ResponseOutput
    return model.model_construct(
        name=name,
        shape=_batch_shape(array.shape),
        datatype=datatype,
        parameters=types.Parameters(content_type=CONTENT_TYPE),
        data=types.TensorData.model_construct(root=data),
    )


def encode_output(name: str, payload: Any, *, as_list: bool | None = None) -> Any:
    """A ``ResponseOutput`` for ``payload`` (a numpy array, or what ``np.asarray`` takes).

    Datatype and shape as ``NumpyCodec.encode_output`` (``[N]`` becomes ``[N, 1]``);
    ``data`` is the array itself when :func:`install` ran in this process, else NumpyCodec's
    flat list; ``as_list`` forces one or the other. BF16 (``ml_dtypes.bfloat16``) is allowed
    although MLServer's datatype enum lacks it.

    Parameters
    ----------
    name
        The output's name.
    payload
        A numpy array, or what ``np.asarray`` takes.
    as_list
        ``True``: NumpyCodec's flat list; ``False``: the array; ``None``: the array when
        :func:`install` ran in this process.
    """
    return _encoded(name, payload, as_list, "output")


def encode_input(name: str, payload: Any, *, as_list: bool | None = None) -> Any:
    """A ``RequestInput`` for ``payload``, as :func:`encode_output` makes an output.

    Parameters
    ----------
    name, payload, as_list
        As in :func:`encode_output`.
    """
    return _encoded(name, payload, as_list, "input")


# ----------------------------------------------------------------------------- the codecs


class _InputCodecMethods:
    """The methods of :data:`OIPCodec`; :func:`codecs` puts them over MLServer's InputCodec."""

    ContentType = CONTENT_TYPE

    @classmethod
    def can_encode(cls, payload: Any) -> bool:
        # NumpyCodec already claims ndarrays; two claims make MLServer warn on every call.
        return False

    @classmethod
    def encode_output(cls, name: str, payload: Any, **kwargs: Any) -> Any:
        return encode_output(name, payload, as_list=kwargs.get("as_list"))

    @classmethod
    def decode_output(cls, response_output: Any) -> np.ndarray[Any, Any]:
        return decode_output(response_output)

    @classmethod
    def encode_input(cls, name: str, payload: Any, **kwargs: Any) -> Any:
        return encode_input(name, payload, as_list=kwargs.get("as_list"))

    @classmethod
    def decode_input(cls, request_input: Any) -> np.ndarray[Any, Any]:
        return decode_input(request_input)


class _RequestCodecMethods:
    """The methods of :data:`OIPRequestCodec`: every input of a request as a dict
    ``name -> array``, and back (a single array is ``output-1`` / ``input-1``)."""

    ContentType = CONTENT_TYPE

    @classmethod
    def can_encode(cls, payload: Any) -> bool:
        return (
            isinstance(payload, dict)
            and bool(payload)
            and all(isinstance(k, str) and isinstance(v, np.ndarray) for k, v in payload.items())
        )

    @staticmethod
    def _named(payload: Any, prefix: str) -> dict[str, Any]:
        return payload if isinstance(payload, dict) else {f"{prefix}1": payload}

    @classmethod
    def encode_response(
        cls, model_name: str, payload: Any, model_version: str | None = None, **kwargs: Any
    ) -> Any:
        types = _mlserver("types")
        outputs = [
            encode_output(name, array, as_list=kwargs.get("as_list"))
            for name, array in cls._named(payload, "output-").items()
        ]
        return types.InferenceResponse.model_construct(
            model_name=model_name,
            model_version=model_version,
            parameters=types.Parameters(content_type=CONTENT_TYPE),
            outputs=outputs,
        )

    @classmethod
    def decode_response(cls, response: Any) -> dict[str, np.ndarray[Any, Any]]:
        return {output.name: decode_output(output) for output in response.outputs}

    @classmethod
    def encode_request(cls, payload: Any, **kwargs: Any) -> Any:
        types = _mlserver("types")
        inputs = [
            encode_input(name, array, as_list=kwargs.get("as_list"))
            for name, array in cls._named(payload, "input-").items()
        ]
        return types.InferenceRequest.model_construct(
            inputs=inputs, parameters=types.Parameters(content_type=CONTENT_TYPE)
        )

    @classmethod
    def decode_request(cls, request: Any) -> dict[str, np.ndarray[Any, Any]]:
        get_decoded = _mlserver("codecs").get_decoded
        decoded: dict[str, np.ndarray[Any, Any]] = {}
        for request_input in request.inputs:
            value = get_decoded(request_input)  # the input codec's work, when it ran
            if not isinstance(value, np.ndarray):
                value = decode_input(request_input)
            decoded[request_input.name] = value
        return decoded


@cache
def codecs() -> tuple[type[Any], type[Any]]:
    """``(OIPCodec, OIPRequestCodec)``: the MLServer codec classes, made and registered in
    MLServer's codec registry under :data:`CONTENT_TYPE` on the first call."""
    base = _mlserver("codecs")
    doc = "An MLServer {} running on oipcodec's kernels (oipcodec.compat.mlserver)."
    input_codec = type(
        "OIPCodec",
        (_InputCodecMethods, base.InputCodec),
        {"__doc__": doc.format("input codec"), "__module__": __name__},
    )
    request_codec = type(
        "OIPRequestCodec",
        (_RequestCodecMethods, base.RequestCodec),
        {"__doc__": doc.format("request codec"), "__module__": __name__},
    )
    base.register_input_codec(input_codec)
    base.register_request_codec(request_codec)
    return input_codec, request_codec


# Made by codecs() on first access (module __getattr__); declared here for readers and linters.
OIPCodec: type[Any]
OIPRequestCodec: type[Any]


def __getattr__(name: str) -> Any:
    if name == "OIPCodec":
        return codecs()[0]
    if name == "OIPRequestCodec":
        return codecs()[1]
    raise AttributeError(f"module 'oipcodec.compat.mlserver' has no attribute {name!r}")


# ----------------------------------------------------------------------------- conversions


def _scalar_parameters(parameters: Any) -> dict[str, Any]:
    """An MLServer ``Parameters`` as OIP parameters: the scalar values (``headers`` and the
    codec's decoded payload are MLServer's own business)."""
    if parameters is None:
        return {}
    items = parameters.model_dump() if hasattr(parameters, "model_dump") else dict(parameters)
    return {
        key: value
        for key, value in items.items()
        if isinstance(value, (str, int, float, bool)) and not key.startswith("_")
    }


def to_mlserver_request(request: InferRequest, *, bytes_as_str: bool = False) -> Any:
    """An oipcodec :class:`~oipcodec.InferRequest` as MLServer's ``InferenceRequest``, built
    without per-element validation. Numeric inputs carry their arrays (``TensorData`` holding
    the array), BYTES inputs a flat list of ``bytes``, or of ``str`` with ``bytes_as_str``
    (what MLServer's REST path gives for JSON strings, and what NumpyCodec needs to read BYTES
    elements of different lengths).

    Parameters
    ----------
    request
        The request.
    bytes_as_str
        BYTES inputs as a flat list of ``str`` instead of ``bytes``.
    """
    types = _mlserver("types")

    def parameters(values: dict[str, Any]) -> Any:
        return types.Parameters(**values) if values else None

    inputs = [
        types.RequestInput.model_construct(
            name=tensor.name,
            shape=list(tensor.shape),
            datatype=tensor.datatype,
            parameters=parameters(tensor.parameters),
            data=types.TensorData.model_construct(root=_input_data(tensor, bytes_as_str)),
        )
        for tensor in request.inputs
    ]
    fields: dict[str, Any] = {"inputs": inputs, "parameters": parameters(request.parameters)}
    if request.id is not None:
        fields["id"] = request.id
    if request.outputs is not None:
        fields["outputs"] = [
            types.RequestOutput.model_construct(
                name=output.name, parameters=parameters(output.parameters)
            )
            for output in request.outputs
        ]
    return types.InferenceRequest.model_construct(**fields)


def _input_data(tensor: Tensor, bytes_as_str: bool) -> Any:
    if tensor.datatype != "BYTES":
        return tensor.data
    elements = tensor.data.reshape(-1).tolist()
    if bytes_as_str:
        try:
            return [element.decode("utf-8") for element in elements]
        except UnicodeDecodeError:  # not text after all: the bytes, as MLServer's gRPC gives
            pass
    return elements


def from_mlserver_response(response: Any, *, limits: Limits = DEFAULT_LIMITS) -> InferResponse:
    """MLServer's ``InferenceResponse`` as an oipcodec :class:`~oipcodec.InferResponse`,
    each output's data (array or list) decoded by :func:`decode_output`.

    Parameters
    ----------
    response
        MLServer's response.
    limits
        What the tensors may hold.
    """
    outputs = [
        Tensor(
            output.name,
            _datatype_name(output.datatype),
            tuple(output.shape),
            decode_output(output, limits=limits),
            _scalar_parameters(output.parameters),
        )
        for output in response.outputs
    ]
    return InferResponse(
        response.model_name,
        outputs,
        id=response.id,
        model_version=response.model_version,
        parameters=_scalar_parameters(response.parameters),
    )


# ----------------------------------------------------------------------------- REST


def install_rest(app: Any, data_plane: Any = None, *, limits: Limits = DEFAULT_LIMITS) -> None:
    """Serve ``POST .../infer`` of MLServer's FastAPI ``app`` with oipcodec's REST codec.

    ``data_plane`` is MLServer's ``DataPlane`` (found from MLServer's own infer route when
    omitted). Each of MLServer's infer routes gets a twin just ahead of it, with the same
    dependencies and route class, which answers first; the app's middleware wraps both. A
    second call on the same app does nothing.

    Parameters
    ----------
    app
        MLServer's FastAPI app.
    data_plane
        MLServer's ``DataPlane`` (found from MLServer's own infer route when omitted).
    limits
        What a request body may hold.
    """
    if getattr(app.state, _MARK, False):
        return
    if data_plane is None:
        data_plane = _find_data_plane(app)
    from oipcodec.compat import _routes

    endpoint = _rest_endpoint(data_plane, limits)
    if not _routes.add_twins(app.router.routes, INFER_PATHS, lambda route: endpoint):
        raise ValueError("no MLServer infer route in this app to serve ahead of")
    setattr(app.state, _MARK, True)


def _find_data_plane(app: Any) -> Any:
    for route in app.router.routes:
        if getattr(route, "path", None) == INFER_PATHS[0]:
            owner: Any = getattr(route.endpoint, "__self__", None)
            if hasattr(owner, "_data_plane"):
                return owner._data_plane
    raise ValueError("no MLServer infer route in this app: pass MLServer's DataPlane")


def _rest_endpoint(data_plane: Any, limits: Limits) -> Any:
    responses = importlib.import_module("starlette.responses")
    requests = importlib.import_module("starlette.requests")
    utils = _mlserver("utils")

    def error(status: int, message: str) -> Any:
        return responses.Response(rest.error_body(message), status, media_type="application/json")

    async def infer(request: Any) -> Any:
        from oipcodec.compat import _routes

        model_name = request.path_params["model_name"]
        model_version = request.path_params.get("model_version")
        # The body as sent: MLServer's route class hands over its own Request, whose body()
        # inflates gzip on the event loop, without a bound.
        body = await requests.Request.body(request)
        header_length = request.headers.get(rest.HEADER_LENGTH)
        if header_length is not None and header_length.strip() == "0":
            return error(
                _BAD_REQUEST, f"{rest.HEADER_LENGTH}: 0 (a raw binary request) is not supported"
            )
        encoding = request.headers.get("content-encoding")
        try:
            decoded = await _routes.decode_off_loop(
                body,
                encoding is not None,
                rest.decode_request,
                body,
                header_length,
                encoding,
                model_name=model_name,
                model_version=model_version,
                limits=limits,
            )
            binary = rest.binary_outputs(decoded)
        except OIPError as exc:
            return error(_BAD_REQUEST, str(exc))
        # An all-JSON body gives BYTES as str, as MLServer's own REST path does.
        payload = to_mlserver_request(decoded, bytes_as_str=header_length is None)
        utils.insert_headers(payload, dict(request.headers))
        # MLServerError (unknown model, model failure...) goes to MLServer's own handlers.
        result = await data_plane.infer(payload, model_name, model_version)
        headers = utils.extract_headers(result) or {}
        try:
            answer = from_mlserver_response(result, limits=limits)
            out, out_header_length = rest.encode_response(answer, binary=binary)
        except OIPError as exc:
            return error(
                _INTERNAL, f"model '{model_name}' answered an output oipcodec cannot send: {exc}"
            )
        if out_header_length is not None:
            headers[rest.HEADER_LENGTH] = str(out_header_length)
            media = "application/octet-stream"
        else:
            media = "application/json"
        return responses.Response(out, 200, headers=headers, media_type=media)

    return infer


# ----------------------------------------------------------------------------- gRPC


def install_grpc(*, limits: Limits = DEFAULT_LIMITS) -> None:
    """Make MLServer's gRPC converters read ``raw_input_contents`` and write
    ``raw_output_contents`` with the kernels, and accept array-backed outputs in typed
    contents. Takes effect at once, servers already running included.

    Parameters
    ----------
    limits
        What a message's tensors may hold.
    """
    converters = _mlserver("grpc.converters")
    if getattr(converters, _MARK, False):
        return
    types = _mlserver("types")
    errors = _mlserver("errors")
    contents = converters.InferTensorContentsConverter
    original_contents = contents._get_contents.__func__

    def inject_raw(elems: list[Any], raw_contents: Any) -> list[Any]:
        raw_index = 0
        for elem in elems:
            if elem.data:
                continue  # as MLServer: entries with data take no raw contents
            if raw_index >= len(raw_contents):
                raise errors.InferenceError(
                    f"input '{elem.name}' has neither contents nor raw_input_contents"
                )
            raw = raw_contents[raw_index]
            raw_index += 1
            datatype = _datatype_name(elem.datatype)
            try:
                array = raw_to_array(raw, datatype, elem.shape, limits=limits)
            except OIPError as exc:
                raise errors.InferenceError(str(_located(exc, elem.name, "input"))) from None
            data = array.reshape(-1).tolist() if datatype == "BYTES" else array
            elem.data = types.TensorData.model_construct(root=data)
        return elems

    def extract_raw(elems: list[Any]) -> tuple[list[Any], list[bytes]]:
        raw_contents = []
        for elem in elems:
            datatype = _datatype_name(elem.datatype)
            try:
                array = decode_data(elem.data, datatype, elem.shape, limits=limits)
                raw = array_to_raw(array, datatype)
            except OIPError as exc:
                raise errors.InferenceError(str(_located(exc, elem.name, "output"))) from None
            raw_contents.append(raw if isinstance(raw, bytes) else bytes(raw))
            elem.data = []
        return elems, raw_contents

    def get_contents(cls: Any, type_object: Any, datatype: Any) -> Any:
        root = getattr(type_object, "root", type_object)
        if isinstance(root, np.ndarray):
            type_object = _as_list(root, _datatype_name(datatype))
        return original_contents(cls, type_object, datatype)

    outputs = converters.InferOutputTensorConverter
    original_output = outputs.from_types.__func__

    def output_from_types(cls: Any, type_object: Any) -> Any:
        # MLServer looks BF16 up in its Datatype enum, which lacks it, even for raw outputs.
        if _datatype_name(type_object.datatype) != "BF16":
            return original_output(cls, type_object)
        if type_object.data:
            raise errors.InferenceError(
                f"output '{type_object.name}': BF16 travels only in raw_output_contents "
                "(the protocol has no typed contents field for it); send the request raw"
            )
        tensor = original_output(cls, type_object.model_copy(update={"datatype": "FP16"}))
        tensor.datatype = "BF16"
        return tensor

    converters.inject_raw = inject_raw
    converters.extract_raw = extract_raw
    contents._get_contents = classmethod(get_contents)
    outputs.from_types = classmethod(output_from_types)
    setattr(converters, _MARK, True)


# ----------------------------------------------------------------------------- both


def install(*, limits: Limits = DEFAULT_LIMITS) -> None:
    """Register the codecs and put oipcodec's REST and gRPC transports into MLServer.

    Call it at the top of a custom runtime's module. The gRPC converters change at once; the
    REST routes go into MLServer's app the next time MLServer registers a model's custom
    handlers, which ``mlserver start`` does for every model right after importing its runtime
    (and before calling its ``load()``). Idempotent.

    Parameters
    ----------
    limits
        What a request may hold, on both transports.
    """
    global _installed
    codecs()
    install_grpc(limits=limits)
    server = _mlserver("rest.server").RESTServer
    if not getattr(server.add_custom_handlers, _MARK, False):
        original = server.add_custom_handlers

        async def add_custom_handlers(self: Any, model: Any) -> Any:
            install_rest(self._app, self._data_plane, limits=limits)
            return await original(self, model)

        setattr(add_custom_handlers, _MARK, True)
        server.add_custom_handlers = add_custom_handlers
    _installed = True
