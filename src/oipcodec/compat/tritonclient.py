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
:func:`install` makes an existing tritonclient app use the kernels (BYTES framing, the HTTP
JSON encode and ``as_numpy``), :func:`uninstall` puts tritonclient back. tritonclient is
imported only by these and when an exception class or message type is needed. Examples, BF16
and what install() changes: docs/compat.md, "tritonclient".
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
import threading
import weakref
from collections.abc import Callable
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
    "install",
    "installed",
    "np_to_triton_dtype",
    "serialize_byte_tensor",
    "triton_to_np_dtype",
    "uninstall",
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
    """``tritonclient.utils.serialize_byte_tensor``: a BYTES tensor's elements framed for the wire.

    Framed as the wire wants them ("each element preceded by its 4-byte little-endian length",
    row-major), returned as tritonclient returns it: a 0-d object array holding the ``bytes``,
    or an empty 1-D object array for an empty tensor.

    Parameters
    ----------
    input_tensor
        An object or ``S`` array (else tritonclient's "cannot serialize bytes tensor: invalid
        datatype"). Object elements of type ``bytes`` are sent as they are, any other element
        as ``str(element)`` in UTF-8 (tritonclient's rule: a ``bytearray`` or ``numpy.bytes_``
        element is sent as its repr); ``S`` elements lose their trailing NULs.
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
    """``tritonclient.utils.deserialize_bytes_tensor``: a framed BYTES buffer to a 1-D object array.

    The elements are ``bytes``, row-major. Every length prefix is checked against what is left
    of the buffer.

    Parameters
    ----------
    encoded_tensor
        The framed buffer (any bytes-like object).

    Raises
    ------
    BytesTensorError
        A malformed buffer (a ``struct.error``, as tritonclient raises).
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
    """``tritonclient.utils.np_to_triton_dtype``: the datatype name of a numpy dtype, or ``None``.

    Object and ``S`` dtypes are BYTES; ``ml_dtypes.bfloat16`` is BF16.

    Parameters
    ----------
    np_dtype
        A numpy dtype or scalar type (``numpy.float32`` or ``numpy.dtype("float32")``).
    """
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
    """``tritonclient.utils.triton_to_np_dtype``: the numpy scalar type of a datatype, or ``None``.

    ``bool`` for BOOL, ``numpy.object_`` for BYTES, ``ml_dtypes.bfloat16`` for BF16.

    Parameters
    ----------
    dtype
        The datatype name.
    """
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
    """The response in an HTTP inference response body, decoded by oipcodec.

    JSON data is parsed straight into arrays, binary outputs are zero-copy views of the body.
    Same as :func:`oipcodec.rest.decode_response`.

    Parameters
    ----------
    body, header_length, content_encoding
        As ``tritonclient.http.InferResult.from_response_body`` takes them.
    """
    return rest.decode_response(body, header_length, content_encoding)


def decode_http_result(result: Any) -> InferResponse:
    """The response held by a ``tritonclient.http.InferResult``, its tensors decoded by the kernels.

    Binary outputs are views of the received buffer (tritonclient's ``as_numpy`` does the same,
    but frames BYTES in Python); JSON outputs, already parsed into lists by tritonclient, are
    converted by :func:`oipcodec.kernels.flatten`. Arrays equal ``result.as_numpy(name)`` except
    for BYTES outputs sent as JSON, which come back as ``bytes`` (UTF-8), where tritonclient
    gives ``str``; and BF16, which decodes to ``ml_dtypes.bfloat16`` (tritonclient's too) or
    float32 without ml_dtypes.

    Parameters
    ----------
    result
        The ``InferResult``.
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
    """The response in a gRPC answer, decoded by :func:`oipcodec.pb.decode_response`.

    Raw contents become views of the message bytes.

    Parameters
    ----------
    response
        A ``tritonclient.grpc.InferResult``, a ``ModelInferResponse`` message (tritonclient's,
        KServe's, any with ``SerializeToString``) or its serialized bytes. A message object is
        serialized once first (protobuf keeps no wire bytes); give the bytes when you have them
        (e.g. a gRPC call made with a bytes deserializer) to skip that copy.
    """
    if hasattr(response, "get_response") and not hasattr(response, "SerializeToString"):
        response = response.get_response()
    if hasattr(response, "SerializeToString"):
        response = response.SerializeToString()
    return pb.decode_response(response)


# ----------------------------------------------------------------------------- install()
# What install() patches, all of it recorded and put back by uninstall() (the same objects):
# serialize_byte_tensor and deserialize_bytes_tensor in every tritonclient module that binds
# them (they import the names into their own modules), the HTTP InferInput's
# set_data_from_numpy (its JSON encode) and the HTTP InferResult's __init__ and as_numpy (a
# JSON answer is parsed by the kernel; the document tritonclient parses with rapidjson is
# parsed only when the app asks for it). Whatever a kernel refuses goes to tritonclient's own
# function, so errors stay tritonclient's.

# The modules install() imports so that their bindings exist before it patches them; the
# deprecated top-level shims (tritonclientutils, ...) are patched only if the app imported them.
_MODULES = (
    "tritonclient.utils",
    "tritonclient.http",
    "tritonclient.http.aio",
    "tritonclient.grpc",
    "tritonclient.grpc.aio",
)
_SHIMS = ("tritonclientutils", "tritonhttpclient", "tritongrpcclient")
_FUNCTIONS = (
    "serialize_byte_tensor",
    "deserialize_bytes_tensor",
    "serialize_bf16_tensor",
    "deserialize_bf16_tensor",
)
_MISSING = object()

_lock = threading.RLock()
# (owner, attribute name, what was there or _MISSING), in the order they were patched.
_patches: list[tuple[Any, str, Any]] = []
# HTTP results made while installed whose JSON document is not parsed yet: uninstall() parses
# them, so that they work with tritonclient's own methods once those are back.
_pending: weakref.WeakSet[Any] = weakref.WeakSet()


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return bool(_patches)


def install() -> None:
    """Put oipcodec's kernels under tritonclient's BYTES framing, its HTTP JSON encode
    (``set_data_from_numpy(binary_data=False)``) and its HTTP ``as_numpy`` of a JSON answer,
    in every tritonclient module already imported or importable (``http``, ``grpc``, their
    ``aio``). Idempotent; :func:`uninstall` reverses it exactly."""
    with _lock:
        if _patches:
            return
        try:
            _install()
        except BaseException:
            _undo()  # nothing half-installed
            raise


def _install() -> None:
    utils = importlib.import_module("tritonclient.utils")
    for name in _MODULES[1:]:
        # an extra (gevent, aiohttp, grpcio) that is not installed: nothing to patch there
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # serialize_bf16_tensor / deserialize_bf16_tensor: tritonclient before r26.06 only
    stock = {name: getattr(utils, name) for name in _FUNCTIONS if hasattr(utils, name)}
    ours = {name: _with_fallback(_OURS[name], stock[name]) for name in stock}
    for module_name in sorted(sys.modules):
        if not (module_name.startswith("tritonclient") or module_name in _SHIMS):
            continue
        module = sys.modules[module_name]
        namespace = getattr(module, "__dict__", {})
        for name in stock:
            if namespace.get(name) is stock[name]:
                _patch(module, name, ours[name])
    http = sys.modules.get("tritonclient.http")
    if http is not None:
        _install_http(http.InferInput, http.InferResult)


def uninstall() -> None:
    """Put back every function and method :func:`install` replaced (the very same objects).
    HTTP results received while installed keep working: their JSON document is parsed as
    tritonclient parses it. Does nothing when not installed."""
    with _lock:
        while True:
            try:  # a result added by another thread while copying: copy again
                pending = list(_pending)
                break
            except RuntimeError:
                continue
        for result in pending:
            _parsed(result)
        _pending.clear()
        _undo()


def _undo() -> None:
    """Every patch taken back, the last first."""
    while _patches:
        owner, name, original = _patches.pop()
        if original is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, original)


def _serialize_bf16(input_tensor: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """tritonclient's ``serialize_bf16_tensor`` (before r26.06), vectorized: each float32
    truncated to its high 16 bits, as a 0-d object array of the bytes. Its elements pass
    through a Python float there, which quiets a signalling NaN: so here too."""
    if input_tensor.size == 0:
        return np.empty([0], dtype=np.object_)
    if input_tensor.dtype != np.float32 or not input_tensor.dtype.isnative:
        raise TypeError("not native float32: tritonclient's function decides")
    bits = np.ascontiguousarray(input_tensor).reshape(-1).view(np.uint32)
    bits = _quieted(bits)
    return np.asarray((bits >> np.uint32(16)).astype("<u2").tobytes(), dtype=np.object_)


def _deserialize_bf16(encoded_tensor: Any) -> np.ndarray[Any, Any]:
    """tritonclient's ``deserialize_bf16_tensor`` (before r26.06), vectorized: float32 of
    shape ``[n, 1]`` (its list of 1-tuples), ``[0]`` when empty; NaNs quieted as there."""
    halves = np.frombuffer(encoded_tensor, dtype="<u2")  # an odd length: ValueError, stock's
    if halves.size == 0:
        return np.array([], dtype=np.float32)
    bits = _quieted(halves.astype(np.uint32) << np.uint32(16))
    return bits.view(np.float32).reshape(-1, 1)


def _quieted(bits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """float32 bit patterns with each signalling NaN made quiet, as a float32 -> float64 ->
    float32 round trip does on x86-64 and AArch64."""
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    if nan.any():
        bits = np.where(nan, bits | np.uint32(0x400000), bits).astype(np.uint32)
    return bits


_OURS: dict[str, Callable[[Any], Any]] = {
    "serialize_byte_tensor": serialize_byte_tensor,
    "deserialize_bytes_tensor": deserialize_bytes_tensor,
    "serialize_bf16_tensor": _serialize_bf16,
    "deserialize_bf16_tensor": _deserialize_bf16,
}


def _patch(owner: Any, name: str, value: Any) -> None:
    # The class's own attribute (vars), not an inherited one, so restoring is exact.
    original = vars(owner).get(name, _MISSING)
    _patches.append((owner, name, original))
    setattr(owner, name, value)


def _with_fallback(ours: Callable[[Any], Any], stock: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``ours``, or tritonclient's ``stock`` on an input ours refuses: the same error as
    tritonclient's (or its answer, where it has one)."""

    def function(tensor: Any) -> Any:
        try:
            return ours(tensor)
        except Exception:
            return stock(tensor)

    function.__name__ = function.__qualname__ = stock.__name__
    function.__doc__ = stock.__doc__
    function.__wrapped__ = ours  # type: ignore[attr-defined]
    return function


# ----------------------------------------------------------------------------- HTTP


def _install_http(infer_input: type[Any], infer_result: type[Any]) -> None:
    import rapidjson

    raw_json = rapidjson.RawJSON
    stock_set = vars(infer_input)["set_data_from_numpy"]
    stock_init = vars(infer_result)["__init__"]
    stock_as_numpy = vars(infer_result)["as_numpy"]
    to_numpy = sys.modules["tritonclient.utils"].triton_to_np_dtype

    def set_data_from_numpy(self: Any, input_tensor: Any, binary_data: bool = True) -> Any:
        datatype = self._datatype
        if binary_data or (datatype in ("BF16", "BYTES") and not _plain_bytes(input_tensor)):
            return stock_set(self, input_tensor, binary_data)
        # tritonclient's checks (and messages), then its binary form, replaced by JSON text
        # written by the kernel: rapidjson embeds a RawJSON as it is.
        stock_set(self, input_tensor, True)
        try:
            text = kernels.array_to_json(input_tensor, datatype)
        except Exception:
            return stock_set(self, input_tensor, False)
        self._parameters.pop("binary_data_size", None)
        self._raw_data = None
        self._data = raw_json(_ascii(text.decode("utf-8")))
        return self

    def __init__(self: Any, response: Any, verbose: bool) -> None:
        if response.get("Inference-Header-Content-Length") is not None:
            return stock_init(self, response, verbose)  # a binary answer: a small header
        content_encoding = response.get("Content-Encoding")
        if content_encoding in ("gzip", "deflate"):
            return stock_init(self, response, verbose)
        content = response.read()
        if verbose:
            print(content)
        arrays = _decoded(content, to_numpy)
        if arrays is None:  # refused by the kernels: tritonclient parses it (and raises)
            stock_init(self, _Body(content), False)
            return
        self.__dict__["_oip_content"] = content
        self.__dict__["_oip_arrays"] = arrays
        _pending.add(self)

    def as_numpy(self: Any, name: str) -> Any:
        # Each array is handed out once: tritonclient gives a new array at each call, so a
        # second call for the same name (rare) is answered by tritonclient from the document.
        array = self.__dict__.get("_oip_arrays", {}).pop(name, None)
        return stock_as_numpy(self, name) if array is None else array

    for function, stock in ((__init__, stock_init), (as_numpy, stock_as_numpy)):
        function.__doc__ = stock.__doc__
        function.__qualname__ = stock.__qualname__
    set_data_from_numpy.__doc__ = stock_set.__doc__
    set_data_from_numpy.__qualname__ = stock_set.__qualname__
    _patch(infer_input, "set_data_from_numpy", set_data_from_numpy)
    _patch(infer_result, "__init__", __init__)
    _patch(infer_result, "as_numpy", as_numpy)
    _patch(infer_result, "_result", _LazyDocument())


_NON_ASCII = re.compile("[^\x00-\x7f]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _ascii(text: str) -> str:
    """JSON text with every non-ASCII character (only in strings) as ``\\u`` escapes, as
    rapidjson writes them: its RawJSON copies a non-ASCII str wrongly (python-rapidjson
    1.25 fails with a UnicodeDecodeError)."""
    return text if text.isascii() else _NON_ASCII.sub(_escaped, text)


def _plain_bytes(tensor: Any) -> bool:
    """A BYTES tensor the kernel writes as tritonclient does: ``S`` elements, or object
    elements all ``bytes`` or ``str`` (others go through ``str()`` in tritonclient)."""
    if not isinstance(tensor, np.ndarray):
        return False
    if tensor.dtype.type is np.bytes_:
        return True
    return tensor.dtype == np.object_ and set(map(type, tensor.ravel().tolist())) <= {bytes, str}


def _decoded(content: bytes, to_numpy: Callable[[str], Any]) -> dict[str, Any] | None:
    """The outputs of a JSON answer as the arrays tritonclient's ``as_numpy`` gives, by name
    (the first of a name, as it finds), or None when the kernels refuse the answer. BYTES
    outputs are left out: tritonclient gives their JSON strings as ``str``."""
    try:
        response = rest.decode_response(content)
    except Exception:
        return None
    arrays: dict[str, Any] = {}
    names = set()
    for tensor in response.outputs:
        first = tensor.name not in names
        names.add(tensor.name)
        if not first or tensor.datatype == "BYTES":
            continue
        stock_dtype = to_numpy(tensor.datatype)
        if stock_dtype is None or tensor.data.dtype != np.dtype(stock_dtype):
            continue
        arrays[tensor.name] = tensor.data
    return arrays


class _Body:
    """A received body, read again by tritonclient's own ``__init__``."""

    def __init__(self, content: bytes) -> None:
        self._content = content

    def get(self, key: str) -> None:
        return None

    def read(self, length: int = -1) -> bytes:
        return self._content


def _parsed(result: Any) -> Any:
    """The JSON document of an HTTP result made while installed, parsed as tritonclient does
    (rapidjson), kept in the result's ``_result`` as tritonclient keeps it."""
    document = result.__dict__.get("_result")
    if document is None:
        import rapidjson

        document = rapidjson.loads(result.__dict__["_oip_content"])
        result.__dict__["_result"] = document
        _pending.discard(result)
    return document


class _LazyDocument:
    """``InferResult._result`` while installed: the document, parsed at its first use (by
    ``get_response``, ``get_output`` or tritonclient's ``as_numpy``). A non-data descriptor,
    so a result that has its ``_result`` reads it from its own ``__dict__``."""

    def __get__(self, result: Any, owner: type[Any] | None = None) -> Any:
        if result is None:
            return self
        if "_oip_content" not in result.__dict__:
            raise AttributeError("_result")
        return _parsed(result)
