"""MLServer on oipcodec's kernels: a registered codec, and faster REST and gRPC transports.

Two independent parts, both for MLServer 1.7 (``pip install "oipcodec[integration-mlserver]"``):

**The codec** (content type ``"oip"``): :data:`OIPCodec` is an MLServer ``InputCodec`` and
:data:`OIPRequestCodec` a ``RequestCodec``, both registered in MLServer's codec registry when
first used (``from oipcodec.compat.mlserver import OIPCodec`` registers them). Where MLServer's
``NumpyCodec`` does ``np.array(list, dtype)``, they decode a ``RequestInput`` through the
kernels, whatever its ``data`` holds:

- a Python list, flat or nested (MLServer's REST JSON, gRPC typed contents and raw contents
  after MLServer unpacked them): :func:`oipcodec.kernels.flatten`, which checks every element
  (Triton's strictness: ``1.5`` for an INT32 input, ``300`` for INT8, ragged nesting are
  errors naming the input and the element, never a silent wrap or truncation);
- a numpy array (what the transports below hand over): used as it is when its dtype is the
  datatype's (no copy), else converted with the same checks;
- a bytes-like object, for any datatype but BYTES: the tensor's raw little-endian bytes (the
  gRPC ``raw_input_contents`` form), decoded by :func:`oipcodec.raw.raw_to_array` as a
  zero-copy view after checking the size against the shape.

Results are those of ``NumpyCodec.decode_input`` for every datatype MLServer supports
(tests/compat/test_compat_mlserver.py compares them), with these documented differences: BYTES come
back as an object array of ``bytes`` (``str`` elements UTF-8 encoded), where NumpyCodec gives a
fixed-width ``S``/``U`` array and refuses elements whose length differs from the last
dimension; ``null`` in a float tensor is NaN in both, but wrong elements that NumpyCodec casts
(``1.5`` for INT32, ``1`` for BOOL) raise :class:`~oipcodec.DecodeError` here. BF16, which
MLServer's datatype enum lacks, is supported: ``ml_dtypes.bfloat16`` arrays (float32 holding
BF16 values without ml_dtypes), from floats rounded to nearest even or from raw bytes.

Encoding mirrors ``NumpyCodec.encode_output`` (same datatype, same shape rule: a 1-D array of
N elements gets shape ``[N, 1]``, parameters ``content_type: "oip"``). The output's ``data``
is the array itself when the transports below are installed in the process (they write it with
the kernels), else the flat list NumpyCodec writes (NaN as ``None``): MLServer's stock
transports cannot serialize arrays. ``encode_output(..., as_list=True/False)`` forces either.

:data:`OIPCodec` reports ``can_encode() == False``, so MLServer never picks it by payload in
place of NumpyCodec (two codecs claiming ``np.ndarray`` make MLServer log a warning on every
call); select it by content type (``"oip"`` in a model's settings or a request's parameters)
or as a ``default_codec``. :data:`OIPRequestCodec` decodes every input of a request into a dict
``name -> array`` and encodes a dict of arrays (or one array, as ``output-1``, like
``NumpyRequestCodec``).

**The transports** (:func:`install`): MLServer parses a REST body with ``orjson.loads`` into
Python objects, validates them element by element with pydantic into an ``InferenceRequest``,
and hands lists to the model; its gRPC servicer turns ``raw_input_contents`` into lists with
``struct.unpack``. :func:`install` replaces both paths in a running ``mlserver start``:

- REST: routes for ``POST /v2/models/{name}[/versions/{v}]/infer`` placed in front of
  MLServer's own. A body is decoded by :func:`oipcodec.rest.decode_request` (JSON data parsed
  straight into arrays; the binary tensor data extension, which MLServer lacks, and gzip/deflate
  bodies), turned into an ``InferenceRequest`` without per-element validation, and passed to
  MLServer's data plane as usual (model lookup, middlewares, caching). Numeric inputs reach the
  model as ``TensorData`` holding a numpy array of the input's shape; BYTES inputs as a flat
  list, of ``str`` when the body is all JSON (what MLServer's REST path gives, so the ``str`` and
  ``np`` codecs keep working) and of ``bytes`` when it has binary parts. The answer is written by
  :func:`oipcodec.rest.encode_response`, in binary for the outputs the request asks so
  (:func:`oipcodec.rest.binary_outputs`: ``binary_data_output`` / ``binary_data``, Triton's
  rules, the same as ``oipcodec serve``: a ``binary_data`` that is not a boolean is a 400 naming
  the output); NaN in JSON data is the token ``NaN`` (MLServer writes ``null``). Triton's raw
  binary request (header length 0) is refused with a 400. MLServer's errors keep their status
  codes; a codec error is a 400.
- gRPC: MLServer's converters unpack ``raw_input_contents`` with :func:`oipcodec.raw.raw_to_array`
  (numeric inputs become zero-copy arrays, BYTES a list of ``bytes`` as before) and pack
  ``raw_output_contents`` with :func:`oipcodec.raw.array_to_raw`; typed contents accept
  array-backed outputs.

Call :func:`install` when the custom runtime's module is imported (MLServer imports it before it
sets up the model, so the REST routes go in when MLServer registers the model's custom
handlers); it is idempotent, and a no-op for the parts whose MLServer objects are not there.
:func:`install_rest` puts the routes into any MLServer FastAPI app directly (for code that
builds ``MLServer`` itself).

With MLServer's parallel inference workers (its default: one), every process imports the
runtime module, so :func:`install` runs in the server process (the transports) and in each
worker (the codec); MLServer pickles each request to a worker and its answer back, a copy of
every array each way (with ``parallel_workers: 0`` the model gets the transports' zero-copy
views). MLServer 1.7.1's workers need uvloop < 0.22 (the ``integration-mlserver`` extra pins
it; docs/compat.md says why).

MLServer is imported only inside the functions that need it: importing this module works
without it.
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
    a numpy array of its shape; errors name the input (see :func:`decode_data`)."""
    return _decode_tensor(request_input, "input", limits)


def decode_output(response_output: Any, *, limits: Limits = DEFAULT_LIMITS) -> np.ndarray[Any, Any]:
    """A ``ResponseOutput`` as a numpy array of its shape; errors name the output."""
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


def _encoded(
    name: str, payload: Any, as_list: bool | None, kind: str
) -> tuple[str, list[int], Any]:
    array = payload if isinstance(payload, np.ndarray) else np.asarray(payload)
    try:
        datatype = datatypes.from_numpy(array.dtype)
    except OIPError as exc:
        raise EncodeError(exc.reason, tensor=name, kind=kind) from None
    use_list = (not _installed) if as_list is None else as_list
    data = _as_list(array, datatype) if use_list else array
    return datatype, _batch_shape(array.shape), data


def encode_output(name: str, payload: Any, *, as_list: bool | None = None) -> Any:
    """A ``ResponseOutput`` for ``payload`` (a numpy array, or what ``np.asarray`` takes).

    Datatype and shape as ``NumpyCodec.encode_output`` (``[N]`` becomes ``[N, 1]``);
    ``data`` is the array itself when :func:`install` ran in this process, else NumpyCodec's
    flat list; ``as_list`` forces one or the other. BF16 (``ml_dtypes.bfloat16``) is allowed
    although MLServer's datatype enum lacks it.
    """
    types = _mlserver("types")
    datatype, shape, data = _encoded(name, payload, as_list, "output")
    return types.ResponseOutput.model_construct(
        name=name,
        shape=shape,
        datatype=datatype,
        parameters=types.Parameters(content_type=CONTENT_TYPE),
        data=types.TensorData.model_construct(root=data),
    )


def encode_input(name: str, payload: Any, *, as_list: bool | None = None) -> Any:
    """A ``RequestInput`` for ``payload``, as :func:`encode_output` makes an output."""
    types = _mlserver("types")
    datatype, shape, data = _encoded(name, payload, as_list, "input")
    return types.RequestInput.model_construct(
        name=name,
        shape=shape,
        datatype=datatype,
        parameters=types.Parameters(content_type=CONTENT_TYPE),
        data=types.TensorData.model_construct(root=data),
    )


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
    elements of different lengths)."""
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
    each output's data (array or list) decoded by :func:`decode_output`."""
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
    omitted). The routes go first in the app's route list, so they answer before MLServer's;
    a second call on the same app does nothing.
    """
    if getattr(app.state, _MARK, False):
        return
    if data_plane is None:
        data_plane = _find_data_plane(app)
    routing = importlib.import_module("starlette.routing")
    endpoint = _rest_endpoint(data_plane, limits)
    routes = [routing.Route(path, endpoint, methods=["POST"]) for path in INFER_PATHS]
    app.router.routes[0:0] = routes
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
    utils = _mlserver("utils")

    def error(status: int, message: str) -> Any:
        return responses.Response(rest.error_body(message), status, media_type="application/json")

    async def infer(request: Any) -> Any:
        model_name = request.path_params["model_name"]
        model_version = request.path_params.get("model_version")
        body = await request.body()
        header_length = request.headers.get(rest.HEADER_LENGTH)
        if header_length is not None and header_length.strip() == "0":
            return error(
                _BAD_REQUEST, f"{rest.HEADER_LENGTH}: 0 (a raw binary request) is not supported"
            )
        try:
            decoded = rest.decode_request(
                body,
                header_length,
                request.headers.get("content-encoding"),
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
    contents. Takes effect at once, servers already running included."""
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
