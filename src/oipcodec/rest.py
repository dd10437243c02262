"""HTTP bodies of the OIP REST protocol: JSON, and JSON plus the binary tensor data extension.

A body is a JSON header, optionally followed by the raw bytes of the tensors sent in binary,
concatenated in the order of the tensors in the JSON, with no padding. The HTTP header
``Inference-Header-Content-Length`` gives the JSON's length; without it the body is all JSON.
A tensor sent in binary carries the parameter ``binary_data_size`` (its byte count) instead of
``data``, as in Triton's binary tensor data extension.

Decoding never builds Python lists of elements: the envelope (names, shapes, parameters) is
parsed by orjson, each ``data`` array's *text* goes straight to
:func:`oipcodec.kernels.json_to_array`, and binary tensors become read-only views of the body
(:func:`oipcodec.raw.raw_to_array`).
Encoding writes ``data`` with :func:`oipcodec.kernels.array_to_json` and joins the body once.

Compressed bodies (``Content-Encoding: gzip`` or ``deflate``) are inflated with a cap on the
inflated size that is checked while inflating; the header length counts the inflated JSON.
:func:`compress` and :func:`decompress` are :mod:`oipcodec.compression`'s (the fastest deflate
library installed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import orjson

from oipcodec import datatypes
from oipcodec import kernels as _facade
from oipcodec._shared.buffers import byte_view
from oipcodec.compression import compress, decompress
from oipcodec.errors import (
    DatatypeError,
    DecodeError,
    EncodeError,
    LimitError,
    OIPError,
    ShapeError,
    UnavailableError,
)
from oipcodec.kernels import Kernels
from oipcodec.limits import DEFAULT_LIMITS, Limits, element_count
from oipcodec.raw import array_to_raw, raw_to_array
from oipcodec.sharedmem import Resolver, location, names_region, no_regions
from oipcodec.types import InferRequest, InferResponse, Parameters, RequestedOutput, Tensor

__all__ = [
    "BINARY_DATA",
    "BINARY_DATA_OUTPUT",
    "BINARY_DATA_SIZE",
    "HEADER_LENGTH",
    "SHARED_AND_BINARY_OUTPUT",
    "DeferredTensor",
    "binary_outputs",
    "compress",
    "decode_request",
    "decode_response",
    "decompress",
    "encode_request",
    "encode_response",
    "encode_response_parts",
    "error_body",
]

#: The HTTP header that gives the length of the JSON part of a body with binary tensors.
HEADER_LENGTH = "Inference-Header-Content-Length"

#: Parameter names of the binary extension; they describe the transport, not the tensor, so
#: decoding removes ``binary_data_size`` from the tensors' parameters and encoding sets it.
BINARY_DATA_SIZE = "binary_data_size"
BINARY_DATA = "binary_data"
BINARY_DATA_OUTPUT = "binary_data_output"
#: Triton's refusal of a requested output that names a shared-memory region and asks for
#: binary data too (its words, so that clients that match on them see the same).
SHARED_AND_BINARY_OUTPUT = "Output can't set both 'shared_memory_region' and 'binary_data'"

# Sections of a body whose tensors may carry data (oipcodec._pure.jsonscan numbering).
_INPUTS, _OUTPUTS = 0, 1

Binary = bool | Iterable[str]


# ----------------------------------------------------------------------------- decoding


def decode_request(
    body: Any,
    header_length: int | str | None = None,
    content_encoding: str | None = None,
    *,
    model_name: str | None = None,
    model_version: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    kernels: Kernels | None = None,
    shared_memory: Resolver | None = None,
    defer_json: bool = False,
) -> InferRequest:
    """Decode an inference request body.

    Parameters
    ----------
    body
        The body's bytes (any bytes-like object).
    header_length
        The ``Inference-Header-Content-Length`` value (int or the header's text), ``None``
        when the body is all JSON.
    content_encoding
        The body's ``Content-Encoding``: ``gzip``, ``deflate`` or ``identity``.
    model_name, model_version
        From the URL; stored on the request and named in errors.
    limits
        What the body may hold; checked before memory is allocated.
    kernels
        The kernel implementation (e.g. ``oipcodec.kernels.load("pure")``); the default is the
        facade's, as in every codec.
    shared_memory
        Gives the bytes of an input that names a shared-memory region
        (:mod:`oipcodec.sharedmem`); without it such an input is refused.
    defer_json
        Each input whose elements are JSON ``data`` becomes a :class:`DeferredTensor`, which
        keeps the text and parses it when its ``data`` is first read, or straight into a batch
        buffer's rows with :meth:`DeferredTensor.into`; its element errors are then raised
        there, the same as this call raises them otherwise. Everything else (envelope, shapes,
        datatypes, limits, binary and shared-memory inputs) is checked here as always.

    Raises
    ------
    DecodeError
        (or its :class:`LimitError`) naming the input and the element or byte offset at fault.
    """
    k = kernels or _facade
    doc, spans, binary = _open(body, header_length, content_encoding, model_name, limits, k)
    inputs = _decode_tensors(
        doc, "inputs", spans.get(_INPUTS, {}), binary, "input", limits, k, shared_memory, defer_json
    )
    _check_binary_used(binary, "input")
    outputs = None
    if doc.get("outputs") is not None:
        outputs = [
            RequestedOutput(name, _parameters(item.get("parameters"), f"output '{name}'"))
            for name, item in _named_objects(doc["outputs"], "outputs", "output", limits)
        ]
    return InferRequest(
        inputs,
        outputs=outputs,
        id=_optional_str(doc, "id"),
        parameters=_parameters(doc.get("parameters"), "request"),
        model_name=model_name,
        model_version=model_version,
    )


def decode_response(
    body: Any,
    header_length: int | str | None = None,
    content_encoding: str | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    kernels: Kernels | None = None,
    shared_memory: Resolver | None = None,
    requested: Sequence[RequestedOutput] | None = None,
) -> InferResponse:
    """Decode an inference response body.

    Parameters
    ----------
    body, header_length, content_encoding, limits, kernels
        As in :func:`decode_request`.
    shared_memory
        Reads an output the answer places in a shared-memory region.
    requested
        The request's outputs: one it put in a shared-memory region that the answer gives with
        neither data nor region (the real Triton server answers so) is read from the region the
        request named.
    """
    k = kernels or _facade
    doc, spans, binary = _open(body, header_length, content_encoding, None, limits, k)
    model = doc.get("model_name")
    if not isinstance(model, str):
        raise DecodeError(f"response 'model_name' must be a string, got {model!r}")
    if requested:
        _place_in_regions(doc, requested)
    outputs = _decode_tensors(
        doc, "outputs", spans.get(_OUTPUTS, {}), binary, "output", limits, k, shared_memory
    )
    binary.model = model
    _check_binary_used(binary, "output")
    return InferResponse(
        model,
        outputs,
        id=_optional_str(doc, "id"),
        model_version=_optional_str(doc, "model_version"),
        parameters=_parameters(doc.get("parameters"), "response"),
    )


def _place_in_regions(doc: dict[str, Any], requested: Sequence[RequestedOutput]) -> None:
    """Give each answered output that carries nothing (no data, no binary size, no region)
    the region its requested output named."""
    placed = {o.name: o.parameters for o in requested if names_region(o.parameters)}
    outputs = doc.get("outputs")
    if not placed or not isinstance(outputs, list):
        return
    for item in outputs:
        if not isinstance(item, dict) or item.get("name") not in placed or "data" in item:
            continue
        parameters = item.get("parameters")
        if parameters is None:
            parameters = item["parameters"] = {}
        if not isinstance(parameters, dict) or BINARY_DATA_SIZE in parameters:
            continue
        if not names_region(parameters):
            parameters.update(placed[item["name"]])


class _Binary:
    """The binary part of a body, handed out in order to the tensors that ask for it."""

    def __init__(self, view: memoryview, header_length: int, model: str | None) -> None:
        self.view = view
        self.header_length = header_length
        self.model = model
        self.used = 0

    def take(self, size: int, name: str, kind: str) -> memoryview:
        left = len(self.view) - self.used
        if size > left:
            raise DecodeError(
                f"unexpected size for {kind} '{name}', expecting {size} bytes"
                f"{_for_model(self.model)}"
                f", but only {left} bytes of binary data are left",
                offset=self.header_length + self.used,
            )
        part = self.view[self.used : self.used + size]
        self.used += size
        return part


def _for_model(model: str | None) -> str:
    return "" if model is None else f" for model '{model}'"


def _check_binary_used(binary: _Binary, kind: str) -> None:
    extra = len(binary.view) - binary.used
    if extra:
        raise DecodeError(
            f"unexpected additional {kind} data{_for_model(binary.model)}: {extra} bytes after "
            "the last binary tensor",
            offset=binary.header_length + binary.used,
        )


# A data array's text, with where it starts in the (inflated) body.
_Text = tuple[int, memoryview]


def _open(
    body: Any,
    header_length: int | str | None,
    content_encoding: str | None,
    model: str | None,
    limits: Limits,
    k: Kernels,
) -> tuple[dict[str, Any], dict[int, dict[int, _Text]], _Binary]:
    """Split a body into its parsed envelope, the text of each data array, and the binary part."""
    view = byte_view(body, "body")
    if len(view) > limits.max_body_bytes:
        raise LimitError(
            f"body of {len(view)} bytes is larger than the limit of {limits.max_body_bytes}"
        )
    if content_encoding not in (None, "", "identity"):
        view = byte_view(decompress(view, content_encoding, limits.max_decompressed_bytes))
    json_length = len(view) if header_length is None else _header_length(header_length, view)
    text = view[:json_length]
    located = k.locate_data(text)
    spans: dict[int, dict[int, _Text]] = {}
    pieces: list[Any] = []
    previous = 0
    for section, index, start, end in located:
        tensors = spans.setdefault(section, {})
        if index in tensors:
            raise DecodeError(f"tensor {index} has more than one 'data' member", offset=start)
        tensors[index] = (start, text[start:end])
        pieces += [text[previous:start], b"null"]
        previous = end
    envelope = b"".join([*pieces, text[previous:]]) if located else bytes(text)
    try:
        doc = orjson.loads(envelope)
    except orjson.JSONDecodeError as exc:
        raise DecodeError(
            f"invalid JSON: {exc.msg}", offset=_body_offset(exc.pos, located)
        ) from None
    return doc, spans, _Binary(view[json_length:], json_length, model)


def _body_offset(envelope_offset: int, located: list[tuple[int, int, int, int]]) -> int:
    """Map an offset in the envelope (data arrays replaced by null) back to the body."""
    offset = envelope_offset
    for _, _, start, end in located:
        if start >= offset:
            break
        offset += (end - start) - 4
    return offset


def _header_length(value: int | str, view: memoryview) -> int:
    if isinstance(value, str):
        try:
            value = int(value.strip(), 10)
        except ValueError:
            raise DecodeError(f"{HEADER_LENGTH} must be an integer, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(f"{HEADER_LENGTH} must be an integer, got {value!r}")
    if value < 0 or value > len(view):
        raise DecodeError(
            f"{HEADER_LENGTH} {value} is outside the {len(view)}-byte body "
            "(the inflated body, when compressed)"
        )
    if value == 0:
        raise DecodeError(
            f"{HEADER_LENGTH} 0 (a raw binary request with no JSON) needs the model's input; "
            "decode it with oipcodec.raw.raw_to_array"
        )
    return value


def _decode_tensors(
    doc: dict[str, Any],
    key: str,
    texts: dict[int, _Text],
    binary: _Binary,
    kind: str,
    limits: Limits,
    k: Kernels,
    shared_memory: Resolver | None,
    defer_json: bool = False,
) -> list[Tensor]:
    items = doc.get(key)
    if items is None:
        raise DecodeError(f"the body has no '{key}'")
    tensors: list[Tensor] = []
    total = 0
    for index, (name, item) in enumerate(_named_objects(items, key, kind, limits)):
        start, text = texts.get(index, (0, None))
        try:
            budget = limits.max_request_elements - total
            tensor = _decode_tensor(
                name,
                item,
                text,
                binary,
                kind,
                limits,
                budget,
                k,
                shared_memory,
                start if defer_json else None,
            )
        except OIPError as exc:
            if exc.tensor is not None or isinstance(exc, UnavailableError):  # a full server
                raise
            error = exc if isinstance(exc, DecodeError) else DecodeError(exc.reason)
            raise error.for_tensor(name, kind, start if text is not None else 0) from None
        total += math.prod(tensor.shape)  # not data.size: a deferred tensor is not parsed yet
        tensors.append(tensor)
    return tensors


def _decode_tensor(
    name: str,
    item: dict[str, Any],
    text: memoryview | None,
    binary: _Binary,
    kind: str,
    limits: Limits,
    budget: int,
    k: Kernels,
    shared_memory: Resolver | None,
    defer_at: int | None = None,
) -> Tensor:
    """One tensor; ``budget`` is how many elements the request may still hold. ``defer_at``:
    JSON data become a :class:`DeferredTensor`, the text starting at that body offset."""
    for key in ("datatype", "shape"):  # named when missing, not reported as a wrong None
        if key not in item:
            raise DecodeError(f"has no '{key}' (every tensor gives its name, shape and datatype)")
    datatype = item.get("datatype")
    row = datatypes.get(datatype)  # type: ignore[arg-type]
    shape = item.get("shape")
    if not isinstance(shape, list):
        raise DecodeError(f"'shape' must be a list of integers, got {shape!r}")
    if element_count(shape, limits) > budget:  # before the tensor is allocated
        raise LimitError(
            f"the {kind}s hold more than the limit of {limits.max_request_elements} elements"
        )
    parameters = item.get("parameters")
    # (the place is only written for a tensor that has parameters: most have none)
    parameters = {} if parameters is None else _parameters(parameters, f"{kind} '{name}'")
    size = parameters.pop(BINARY_DATA_SIZE, None)
    where = location(parameters) if parameters else None
    if where is not None:
        if size is not None or text is not None or item.get("data") is not None:
            raise DecodeError(
                f"names shared memory region '{where.region}' and carries data as well; "
                "send one or the other"
            )
        part = (shared_memory or no_regions)(where, name, kind, False)
        array = raw_to_array(part, row.name, shape, limits=limits, kernels=k)
        return Tensor(name, row.name, tuple(shape), array, parameters)
    if size is not None:
        if text is not None or item.get("data") is not None:
            raise DecodeError(f"has both 'data' and '{BINARY_DATA_SIZE}'; send one or the other")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise DecodeError(f"'{BINARY_DATA_SIZE}' must be a non-negative integer, got {size!r}")
        start = binary.header_length + binary.used
        part = binary.take(size, name, kind)
        try:
            array = raw_to_array(part, row.name, shape, limits=limits, kernels=k)
        except OIPError as exc:  # located in the body, not in the tensor's part of it
            offset = None if exc.offset is None else start + exc.offset
            cls = type(exc) if isinstance(exc, DecodeError) else DecodeError
            raise cls(exc.reason, index=exc.index, offset=offset) from None
    elif text is not None:
        if defer_at is not None:
            return DeferredTensor(
                name, row.name, shape, text, parameters, defer_at, kind, limits, k
            )
        array = k.json_to_array(text, row.name, shape, max_depth=limits.max_depth)
    elif item.get("data") is not None:
        # Only reached when the "data" key was written with escapes, which the scanner leaves
        # to orjson: correct, if slower.
        dumped = memoryview(_redumped(item["data"], limits))
        if defer_at is not None:
            return DeferredTensor(name, row.name, shape, dumped, parameters, 0, kind, limits, k)
        array = k.json_to_array(dumped, row.name, shape, max_depth=limits.max_depth)
    else:
        raise DecodeError(f"has neither 'data' nor '{BINARY_DATA_SIZE}'")
    if row.is_bytes and size is None:
        _check_json_bytes_lengths(array, text, limits)
    return Tensor(name, row.name, tuple(shape), array, parameters)


#: The slot that holds a tensor's array (a DeferredTensor's ``data`` property stands in front).
_DATA_SLOT: Any = Tensor.__dict__["data"]


class DeferredTensor(Tensor):
    """A tensor whose elements are still the JSON ``data`` text of a request body.

    :func:`decode_request` makes them (``defer_json=True``). ``data`` parses the text when first
    read and keeps the array; errors are those the eager decode raises (the input named, byte
    offsets counted in the body). :meth:`into` parses straight into a destination, a batch
    buffer's rows, so that no array of the request's own is made; once ``data`` was read it
    copies instead. Parsing into a destination keeps no array: reading ``data`` after that
    parses again.

    Parameters
    ----------
    name, datatype, shape, parameters
        Those of any tensor, checked when the request was decoded.
    text
        The JSON text of the data array, a view of the body.
    offset
        Where ``text`` starts in the body, for the byte offsets of errors.
    kind
        ``"input"`` or ``"output"``, as errors name the tensor.
    limits, kernels
        Those the request was decoded with.
    """

    __slots__ = ("_kernels", "_kind", "_limits", "_offset", "_text")

    def __init__(
        self,
        name: str,
        datatype: str,
        shape: Sequence[int],
        text: memoryview,
        parameters: Parameters,
        offset: int = 0,
        kind: str = "input",
        limits: Limits = DEFAULT_LIMITS,
        kernels: Kernels | None = None,
    ) -> None:
        # Not Tensor's __init__: its checks need the array; the decoder checked the rest.
        self.name = name
        self.datatype = datatype
        self.shape = tuple(shape)
        self.parameters = parameters
        _DATA_SLOT.__set__(self, None)
        self._text = text
        self._offset = offset
        self._kind = kind
        self._limits = limits
        self._kernels = kernels or _facade

    @property
    def data(self) -> np.ndarray[Any, Any]:
        """The elements, parsed from the text on first access."""
        array: np.ndarray[Any, Any] | None = _DATA_SLOT.__get__(self)
        if array is None:
            array = self._parse(None)
            _DATA_SLOT.__set__(self, array)
        return array

    @data.setter
    def data(self, value: np.ndarray[Any, Any]) -> None:
        _DATA_SLOT.__set__(self, value)

    @property
    def parsed(self) -> bool:
        """Whether ``data`` holds the parsed array (then :meth:`into` copies it)."""
        return _DATA_SLOT.__get__(self) is not None

    @property
    def text(self) -> memoryview:
        """The JSON text of the data array."""
        return self._text

    def into(self, out: np.ndarray[Any, Any]) -> None:
        """Parse the elements straight into ``out``; a copy when ``data`` was read.

        Parameters
        ----------
        out
            C-contiguous, writable, the tensor's shape, the datatype's dtype (BF16 also into
            float32).

        Raises
        ------
        DecodeError
            The errors of the eager decode, naming the input; ``out`` then holds unspecified values.
        """
        if not isinstance(out, np.ndarray):
            raise DatatypeError(
                f"out must be a numpy array, got {type(out).__name__}",
                tensor=self.name,
                kind=self._kind,
            )
        if self.parsed:
            Tensor.into(self, out)
            return
        if out.shape != self.shape:
            raise ShapeError(
                f"out has shape {list(out.shape)}, the tensor {list(self.shape)}",
                tensor=self.name,
                kind=self._kind,
            )
        self._parse(out)

    def _parse(self, out: np.ndarray[Any, Any] | None) -> np.ndarray[Any, Any]:
        limits = self._limits
        try:
            array = self._kernels.json_to_array(
                self._text, self.datatype, self.shape, max_depth=limits.max_depth, out=out
            )
            if self.datatype == "BYTES":
                _check_json_bytes_lengths(array, self._text, limits)
        except OIPError as exc:  # as _decode_tensors locates them
            if exc.tensor is not None:
                raise
            keep = isinstance(exc, DecodeError) or out is not None  # out= checks keep theirs
            error = exc if keep else DecodeError(exc.reason)
            raise error.for_tensor(self.name, self._kind, self._offset) from None
        return array

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as the plain tensor it stands for.
        return (Tensor, (self.name, self.datatype, self.shape, self.data, self.parameters))


def _redumped(data: Any, limits: Limits) -> bytes:
    """The JSON text of a ``data`` value orjson read; orjson writes at most 255 levels of
    nesting (it reads 1024), so deeper arrays are refused as the data kernel refuses them."""
    try:
        return orjson.dumps(data)
    except TypeError:
        depth = min(limits.max_depth, 255)
        raise LimitError(f"arrays nested deeper than max_depth={depth}") from None


def _check_json_bytes_lengths(
    array: np.ndarray[Any, Any], text: memoryview | None, limits: Limits
) -> None:
    """``limits.max_bytes_element`` for BYTES sent as JSON strings. A decoded string is never
    longer than its JSON text, so only a text longer than the limit is looked at, and the
    memory spent before the check is bounded by the body's own limit."""
    if text is not None and len(text) <= limits.max_bytes_element:
        return
    for index, element in enumerate(array.flat):
        if len(element) > limits.max_bytes_element:
            raise LimitError(
                f"BYTES element of {len(element)} bytes exceeds the limit of "
                f"{limits.max_bytes_element}",
                index=index,
            )


def _named_objects(
    items: Any, key: str, kind: str, limits: Limits
) -> Iterable[tuple[str, dict[str, Any]]]:
    """The objects of a tensor list with their (unique, string) names."""
    if not isinstance(items, list):
        raise DecodeError(f"'{key}' must be a list, got {type(items).__name__}")
    if len(items) > limits.max_tensors:
        raise LimitError(
            f"'{key}' lists {len(items)} {kind}s, more than the limit of {limits.max_tensors}"
        )
    seen: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise DecodeError(f"{kind} {index} must be an object, got {type(item).__name__}")
        name = item.get("name")
        if not isinstance(name, str):
            raise DecodeError(f"{kind} {index} needs a string 'name', got {name!r}")
        if name in seen:
            raise DecodeError(f"{kind} '{name}' appears more than once")
        seen.add(name)
        yield name, item


def _optional_str(doc: dict[str, Any], key: str) -> str | None:
    value = doc.get(key)
    if value is not None and not isinstance(value, str):
        raise DecodeError(f"'{key}' must be a string, got {value!r}")
    return value


def _parameters(value: Any, where: str) -> Parameters:
    """Parameters as the protocol allows them: string, number or boolean values."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError(f"{where} 'parameters' must be an object, got {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(item, (str, int, float, bool)):
            raise DecodeError(
                f"{where} parameter {key!r} must be a string, number or boolean, got {item!r}"
            )
    return value


# ----------------------------------------------------------------------------- encoding


def encode_request(
    request: InferRequest,
    binary: Binary = True,
    *,
    nested: bool = False,
    binary_outputs: bool | None = None,
    kernels: Kernels | None = None,
) -> tuple[bytes, int | None]:
    """Encode an inference request body.

    Parameters
    ----------
    request
        The request to write.
    binary
        Which inputs travel as binary data: all (``True``), none (``False``), or those named in
        an iterable.
    nested
        Write JSON data nested by shape instead of flat.
    binary_outputs
        Ask for outputs in binary, as tritonclient does: ``binary_data: true`` on each requested
        output, or the request parameter ``binary_data_output: true`` when no outputs are
        listed. Default: ``binary`` is not False.
    kernels
        As in :func:`decode_request`.

    Returns
    -------
    tuple
        ``(body, header_length)``; ``header_length`` is ``None`` when nothing is binary, else
        the value for the ``Inference-Header-Content-Length`` header.
    """
    want_binary_outputs = (binary is not False) if binary_outputs is None else binary_outputs
    doc: dict[str, Any] = {}
    if request.id is not None:
        doc["id"] = request.id
    parameters = _checked_parameters(request.parameters, "request")
    if request.outputs is None and want_binary_outputs:
        parameters.setdefault(BINARY_DATA_OUTPUT, True)
    if parameters:
        doc["parameters"] = parameters
    doc["inputs"], texts, parts = _encode_tensors(
        request.inputs, binary, nested, "input", kernels or _facade
    )
    if request.outputs is not None:
        doc["outputs"] = [_requested_output(o, want_binary_outputs) for o in request.outputs]
    return _joined(*_body_parts(doc, texts, parts))


def encode_response(
    response: InferResponse,
    binary: Binary = False,
    *,
    nested: bool = False,
    kernels: Kernels | None = None,
) -> tuple[bytes, int | None]:
    """Encode an inference response body.

    Parameters
    ----------
    response
        The response to write.
    binary, nested, kernels
        As in :func:`encode_request`.

    Returns
    -------
    tuple
        ``(body, header_length)`` as :func:`encode_request` returns them.
    """
    return _joined(*encode_response_parts(response, binary, nested=nested, kernels=kernels))


def encode_response_parts(
    response: InferResponse,
    binary: Binary = False,
    *,
    nested: bool = False,
    kernels: Kernels | None = None,
) -> tuple[list[bytes | memoryview], int | None]:
    """:func:`encode_response`'s body as a list of buffers whose concatenation is that body.

    The JSON around each large tensor text, the texts themselves, and the tensors sent in
    binary (views of the arrays where their layout allows). A server can write them one after
    the other (``writev``) instead of joining them first: a large answer is then not copied
    once more.

    Parameters
    ----------
    response, binary, nested, kernels
        As in :func:`encode_response`.

    Returns
    -------
    tuple
        ``(parts, header_length)``.
    """
    doc: dict[str, Any] = {"model_name": response.model_name}
    if response.model_version is not None:
        doc["model_version"] = response.model_version
    if response.id is not None:
        doc["id"] = response.id
    parameters = _checked_parameters(response.parameters, "response")
    if parameters:
        doc["parameters"] = parameters
    doc["outputs"], texts, parts = _encode_tensors(
        response.outputs, binary, nested, "output", kernels or _facade
    )
    return _body_parts(doc, texts, parts)


def binary_outputs(request: InferRequest) -> bool | set[str]:
    """Which outputs a server answers ``request`` with in binary (Triton's rules).

    The result is the ``binary`` argument of :func:`encode_response` /
    :func:`encode_response_parts` for its answer. With no outputs listed, all of them when the
    request parameter ``binary_data_output`` is ``true`` (any other value: none); else the names
    of the outputs listed with the parameter ``binary_data: true`` (an output listed without it
    stays JSON, whatever ``binary_data_output`` says).

    Parameters
    ----------
    request
        The decoded request.

    Raises
    ------
    DecodeError
        A ``binary_data`` that is neither ``true`` nor ``false`` (a server answers it with
        400), naming the output and what was expected; or an output that names a shared-memory
        region and sets ``binary_data: true`` (Triton's :data:`SHARED_AND_BINARY_OUTPUT`).
    """
    if request.outputs is None:
        return request.parameters.get(BINARY_DATA_OUTPUT) is True
    names = set()
    for output in request.outputs:
        flag = output.parameters.get(BINARY_DATA)
        if flag is True and names_region(output.parameters):
            raise DecodeError(SHARED_AND_BINARY_OUTPUT, tensor=output.name, kind="output")
        if flag is True:
            names.add(output.name)
        elif flag is not None and flag is not False:
            raise DecodeError(
                f"parameter '{BINARY_DATA}' must be a boolean, got {flag!r}",
                tensor=output.name,
                kind="output",
            )
    return names


#: Tensor texts at least this long are kept out of orjson's output (which would copy them) and
#: stand between the parts of the JSON envelope instead.
_SEPARATE_TEXT = 1 << 16
#: What stands for such a text in the envelope while orjson writes it: a NUL byte, which orjson
#: writes nowhere else (it escapes control characters in strings).
_TEXT_MARK = orjson.Fragment(b"\x00")


def _body_parts(
    doc: dict[str, Any], texts: list[bytes], parts: list[bytes | memoryview]
) -> tuple[list[bytes | memoryview], int | None]:
    """The body as buffers: the JSON envelope, each marked text in its place, then the binary
    parts; and the JSON's length when there are binary parts."""
    try:
        header = orjson.dumps(doc)
    except orjson.JSONEncodeError as exc:
        raise EncodeError(f"cannot write the JSON envelope: {exc}") from None
    pieces: list[bytes | memoryview] = [header]
    json_length = len(header)
    if texts:
        around = header.split(b"\x00")
        pieces = [around[0]]
        for text, after in zip(texts, around[1:], strict=True):
            pieces += (text, after)
        json_length += sum(len(t) - 1 for t in texts)
    return pieces + parts, json_length if parts else None


def _joined(parts: list[bytes | memoryview], header_length: int | None) -> tuple[bytes, int | None]:
    # (bytes.join returns a lone bytes part itself, uncopied)
    return b"".join(parts), header_length


def _binary_names(binary: Binary, tensors: Sequence[Tensor]) -> set[str]:
    if binary is True:
        return {t.name for t in tensors}
    if binary is False:
        return set()
    if isinstance(binary, (str, bytes)):
        raise EncodeError("binary must be True, False or an iterable of tensor names, not a str")
    names = set(binary)
    unknown = names - {t.name for t in tensors}
    if unknown:
        raise EncodeError(f"binary names tensors that are not there: {sorted(unknown)}")
    return names


def _encode_tensors(
    tensors: Sequence[Tensor], binary: Binary, nested: bool, kind: str, k: Kernels
) -> tuple[list[dict[str, Any]], list[bytes], list[bytes | memoryview]]:
    """The tensors' JSON entries, the large data texts marked in them (in document order),
    and the binary parts."""
    in_binary = _binary_names(binary, tensors)
    entries: list[dict[str, Any]] = []
    texts: list[bytes] = []
    parts: list[bytes | memoryview] = []
    for tensor in tensors:
        try:
            entry: dict[str, Any] = {
                "name": tensor.name,
                "shape": list(tensor.shape),
                "datatype": tensor.datatype,
            }
            parameters = (  # most tensors have none: no text naming the place then
                _checked_parameters(tensor.parameters, f"{kind} '{tensor.name}'")
                if tensor.parameters
                else {}
            )
            parameters.pop(BINARY_DATA_SIZE, None)
            if parameters and names_region(parameters):
                pass  # in shared memory: the parameters say where, no data here
            elif tensor.name in in_binary:
                raw = array_to_raw(tensor.data, tensor.datatype, kernels=k)
                parameters[BINARY_DATA_SIZE] = len(raw)
                parts.append(raw)
            else:
                text = k.array_to_json(_shaped(tensor), tensor.datatype, nested=nested)
                if len(text) >= _SEPARATE_TEXT:
                    texts.append(text)
                    entry["data"] = _TEXT_MARK
                else:
                    entry["data"] = orjson.Fragment(text)
            if parameters:
                entry["parameters"] = parameters
        except OIPError as exc:
            if exc.tensor is not None:
                raise
            error = (
                exc if isinstance(exc, EncodeError) else EncodeError(exc.reason, index=exc.index)
            )
            raise error.for_tensor(tensor.name, kind) from None
        entries.append(entry)
    return entries, texts, parts


def _shaped(tensor: Tensor) -> np.ndarray[Any, Any]:
    """The tensor's data in the tensor's shape (Tensor only promises the element count)."""
    data = tensor.data
    return data if data.shape == tensor.shape else data.reshape(tensor.shape)


def _requested_output(output: RequestedOutput, binary: bool) -> dict[str, Any]:
    parameters = _checked_parameters(output.parameters, f"output '{output.name}'")
    # An output written into a shared-memory region is not asked for in binary: Triton
    # refuses an output that sets both (SHARED_AND_BINARY_OUTPUT).
    if binary and not names_region(parameters):
        parameters.setdefault(BINARY_DATA, True)
    entry: dict[str, Any] = {"name": output.name}
    if parameters:
        entry["parameters"] = parameters
    return entry


def _checked_parameters(parameters: Parameters, where: str) -> dict[str, Any]:
    """A copy of ``parameters``; values must be str, int, float or bool (numpy scalars of
    those kinds are turned into them)."""
    out: dict[str, Any] = {}
    for key, value in parameters.items():
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            value = value.item()
        if not isinstance(value, (str, int, float, bool)):
            raise EncodeError(
                f"{where} parameter {key!r} must be a string, number or boolean, got "
                f"{type(value).__name__}"
            )
        out[key] = value
    return out


# ----------------------------------------------------------------------------- errors


def error_body(error: BaseException | str) -> bytes:
    """The OIP error body ``{"error": "<message>"}``.

    Parameters
    ----------
    error
        An exception (its message) or a message.
    """
    return orjson.dumps({"error": str(error)})
