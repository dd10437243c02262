"""Drop-in replacements for ``tritonclient.utils``' codec helpers, and result decoders.

:func:`serialize_byte_tensor`, :func:`deserialize_bytes_tensor`, :func:`np_to_triton_dtype`
and :func:`triton_to_np_dtype` have tritonclient's signatures and results (the tests compare
them with the installed tritonclient on every datatype), the BYTES framing done by the
kernels. They differ on bad input only, and keep callers' ``except`` clauses working: a
malformed framed buffer raises :class:`BytesTensorError`, both an
:class:`oipcodec.DecodeError` naming the element and offset and the ``struct.error``
tritonclient raises; a refused dtype raises tritonclient's ``InferenceServerException``.

:func:`decode_http_result`, :func:`decode_http_body` and :func:`decode_grpc_response` turn what
tritonclient received into an :class:`oipcodec.InferResponse` through the kernels.
tritonclient is imported only when an exception class or message type is needed. Examples and
BF16: docs/compat.md, "tritonclient".
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from oipcodec import datatypes, kernels, pb, rest
from oipcodec.errors import BytesTensorError, DecodeError, OIPError, ShapeError
from oipcodec.limits import element_count
from oipcodec.raw import raw_to_array
from oipcodec.types import InferResponse, Tensor

__all__ = [
    "BytesTensorError",
    "InferenceServerException",  # noqa: F822 - given by the module's __getattr__
    "decode_grpc_response",
    "decode_http_body",
    "decode_http_result",
    "deserialize_bytes_tensor",
    "np_to_triton_dtype",
    "serialize_byte_tensor",
    "triton_to_np_dtype",
]


@cache
def _exception_class() -> type[Any]:
    """tritonclient's ``InferenceServerException`` (its constructor takes ``msg=``), or the
    stand-in with the same constructor when tritonclient is not installed."""
    try:
        from tritonclient.utils import InferenceServerException as peer
    except ImportError:
        return _OwnInferenceServerException
    return peer


class _OwnInferenceServerException(Exception):
    """Stands in for ``tritonclient.utils.InferenceServerException`` without tritonclient."""

    def __init__(self, msg: str, status: str | None = None, debug_details: Any = None) -> None:
        super().__init__(msg)
        self._msg = msg
        self._status = status
        self._debug_details = debug_details

    def message(self) -> str:
        return self._msg


def __getattr__(name: str) -> object:
    if name == "InferenceServerException":
        return _exception_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _raise_error(message: str) -> None:
    raise _exception_class()(msg=message) from None


# ----------------------------------------------------------------------------- BYTES framing

_PLAIN = frozenset((bytes, str))


def serialize_byte_tensor(input_tensor: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``tritonclient.utils.serialize_byte_tensor``: the elements of a BYTES tensor framed as
    the wire wants them ("each element preceded by its 4-byte little-endian length", row-major),
    returned as tritonclient returns it: a 0-d object array holding the ``bytes``, or an empty
    1-D object array for an empty tensor.

    The dtype must be object or ``S`` (else tritonclient's "cannot serialize bytes tensor:
    invalid datatype"). Object elements of type ``bytes`` are sent as they are, any other
    element as ``str(element)`` in UTF-8 (tritonclient's rule: a ``bytearray`` or
    ``numpy.bytes_`` element is sent as its repr); ``S`` elements lose their trailing NULs.
    """
    if input_tensor.size == 0:
        return np.empty([0], dtype=np.object_)
    if input_tensor.dtype != np.object_ and input_tensor.dtype.type != np.bytes_:
        _raise_error("cannot serialize bytes tensor: invalid datatype")
    if input_tensor.dtype == np.object_:
        elements = input_tensor.ravel().tolist()
        if not set(map(type, elements)) <= _PLAIN:
            elements = [e if type(e) is bytes else str(e).encode("utf-8") for e in elements]
            framed = kernels.serialize_bytes(elements)
        else:
            try:
                framed = kernels.serialize_bytes(elements)
            except OIPError:
                # a str that UTF-8 cannot encode: raise what tritonclient raises
                for e in elements:
                    str(e).encode("utf-8")
                raise
    else:
        framed = kernels.serialize_bytes(input_tensor)
    return np.asarray(framed, dtype=np.object_)


def deserialize_bytes_tensor(encoded_tensor: Any) -> np.ndarray[Any, Any]:
    """``tritonclient.utils.deserialize_bytes_tensor``: a framed BYTES buffer (any bytes-like
    object) to a 1-D object array of ``bytes``, row-major.

    Every length prefix is checked against what is left of the buffer; a malformed buffer
    raises :class:`BytesTensorError` (a ``struct.error``, as tritonclient raises).
    """
    try:
        return kernels.deserialize_bytes(encoded_tensor)
    except DecodeError as exc:
        raise BytesTensorError(exc.reason, index=exc.index, offset=exc.offset) from None


# ----------------------------------------------------------------------------- dtypes

_TO_NUMPY: dict[str, Any] = {
    "BOOL": bool,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
    "BYTES": np.object_,
}
if datatypes.BF16_DTYPE is not None:
    _TO_NUMPY["BF16"] = datatypes.BF16_DTYPE.type

# The order tritonclient's if/elif chains compare in (BF16 between FP32 and FP64).
_PEER_ORDER = ("BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
               "FP16", "FP32", "BF16", "FP64", "BYTES")  # fmt: skip

# Exact numpy dtypes (native byte order) to names; any other dtype goes through the same
# comparisons tritonclient makes, so e.g. a big-endian dtype gives None as it does there.
_FROM_DTYPE: dict[np.dtype[Any], str] = {np.dtype(t): n for n, t in _TO_NUMPY.items()}


def np_to_triton_dtype(np_dtype: Any) -> str | None:
    """``tritonclient.utils.np_to_triton_dtype``: the datatype name of a numpy dtype or scalar
    type (``numpy.float32`` or ``numpy.dtype("float32")``), ``None`` when it has none. Object
    and ``S`` dtypes are BYTES; ``ml_dtypes.bfloat16`` is BF16."""
    try:
        name = _FROM_DTYPE.get(np_dtype)
    except TypeError:  # unhashable: compare as tritonclient does
        name = None
    if name is not None:
        return name
    for name in _PEER_ORDER:
        if name != "BYTES" and name in _TO_NUMPY and np_dtype == _TO_NUMPY[name]:
            return name
    if np_dtype == np.object_ or np_dtype.type == np.bytes_:
        return "BYTES"
    return None


def triton_to_np_dtype(dtype: Any) -> Any:
    """``tritonclient.utils.triton_to_np_dtype``: the numpy scalar type of a datatype name
    (``bool`` for BOOL, ``numpy.object_`` for BYTES, ``ml_dtypes.bfloat16`` for BF16), ``None``
    for anything else."""
    try:
        return _TO_NUMPY.get(dtype)
    except TypeError:
        # Unhashable (a 0-d numpy string array, say): compare in tritonclient's order, as it
        # does, so whatever it finds equal to a name is found here too.
        for name in _PEER_ORDER:
            if name in _TO_NUMPY and dtype == name:
                return _TO_NUMPY[name]
        return None


# ----------------------------------------------------------------------------- results


def decode_http_body(
    body: Any, header_length: int | str | None = None, content_encoding: str | None = None
) -> InferResponse:
    """The response in an HTTP inference response body, decoded by oipcodec (arguments as
    ``tritonclient.http.InferResult.from_response_body``): JSON data parsed straight into
    arrays, binary outputs as zero-copy views of the body. Same as
    :func:`oipcodec.rest.decode_response`."""
    return rest.decode_response(body, header_length, content_encoding)


def decode_http_result(result: Any) -> InferResponse:
    """The response held by a ``tritonclient.http.InferResult``, its tensors decoded by the
    kernels: binary outputs are views of the received buffer (tritonclient's ``as_numpy`` does
    the same, but frames BYTES in Python); JSON outputs, already parsed into lists by
    tritonclient, are converted by :func:`oipcodec.kernels.flatten`.

    Arrays equal ``result.as_numpy(name)`` except for BYTES outputs sent as JSON, which come
    back as ``bytes`` (UTF-8), where tritonclient gives ``str``; and BF16, which decodes to
    ``ml_dtypes.bfloat16`` (tritonclient's too) or float32 without ml_dtypes.
    """
    doc: dict[str, Any] = result.get_response()
    buffer = getattr(result, "_buffer", b"")
    offsets: dict[str, int] = getattr(result, "_output_name_to_buffer_map", {})
    outputs = []
    for output in doc.get("outputs") or ():
        name = output["name"]
        datatype = output["datatype"]
        shape = tuple(output["shape"])
        parameters = dict(output.get("parameters") or {})
        try:
            size = parameters.pop(rest.BINARY_DATA_SIZE, None)
            if size is not None:
                if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                    raise DecodeError(
                        f"'{rest.BINARY_DATA_SIZE}' must be a non-negative integer, got {size!r}"
                    )
                start = offsets.get(name, 0)
                array = raw_to_array(memoryview(buffer)[start : start + size], datatype, shape)
            else:
                array = _json_output(output.get("data"), datatype, shape)
        except OIPError as exc:
            raise exc.for_tensor(name, "output") from None
        outputs.append(Tensor(name, datatype, shape, array, parameters))
    return InferResponse(
        doc.get("model_name", ""),
        outputs,
        id=doc.get("id"),
        model_version=doc.get("model_version"),
        parameters=dict(doc.get("parameters") or {}),
    )


def _json_output(data: Any, datatype: str, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """JSON ``data`` already parsed into lists by tritonclient, as an array of ``shape``."""
    if data is None:
        raise DecodeError(f"has neither 'data' nor '{rest.BINARY_DATA_SIZE}'")
    count = element_count(shape)
    flat, _ = kernels.flatten(data, datatype)
    if flat.size != count:
        raise ShapeError(f"shape {list(shape)} holds {count} elements but data has {flat.size}")
    return flat.reshape(shape)


def decode_grpc_response(response: Any) -> InferResponse:
    """The response in a ``tritonclient.grpc.InferResult``, a ``ModelInferResponse`` message
    (tritonclient's, KServe's, any with ``SerializeToString``) or its serialized bytes, decoded
    by :func:`oipcodec.pb.decode_response`: raw contents become views of the message bytes.

    A message object is serialized once first (protobuf keeps no wire bytes); give the bytes
    when you have them (e.g. a gRPC call made with a bytes deserializer) to skip that copy.
    """
    if hasattr(response, "get_response") and not hasattr(response, "SerializeToString"):
        response = response.get_response()
    if hasattr(response, "SerializeToString"):
        response = response.SerializeToString()
    return pb.decode_response(response)
