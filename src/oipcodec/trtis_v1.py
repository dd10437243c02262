"""The TensorRT Inference Server (TRTIS) v1 API codec: headers both ways, raw bodies, status.

A request is an ``InferRequestHeader`` (protobuf: text in the HTTP header ``NV-InferRequest``,
or a gRPC ``InferRequest``'s ``meta_data``) and the inputs' raw bytes in header order. The header
names no datatype (the model does); for a batching model its ``dims`` leave out the batch
dimension. The answer is an ``InferResponseHeader`` and each RAW output's bytes, or the ``k``
best classes of an output asked with ``cls { count: k }``. TYPE_STRING uses the BYTES framing.

Raw bytes are checked against ``dims x batch`` before anything is allocated, and become
read-only views of the body, never copies. A header's text is read as google.protobuf's
``text_format`` reads it. The protobuf messages are :data:`messages`. docs/v1.md.
"""

# Decision: the text format is read by a kernel of its own (scan_request_header) for the plain
# form clients write, and by google.protobuf's text_format otherwise, so the result is always
# text_format's; text_format alone costs more than the rest of a small request
# (docs/measurements.md#the-trtis-v1-header-text).

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import DecodeError as _ProtobufDecodeError

from oipcodec import datatypes
from oipcodec import kernels as _facade
from oipcodec._deprecated import moved
from oipcodec._shared.buffers import byte_view
from oipcodec._shared.pbwire import varint_bytes
from oipcodec.errors import (
    DecodeError,
    InvalidArgumentError,
    OIPError,
    RequestError,
    UnsupportedError,
)
from oipcodec.kernels import Kernels
from oipcodec.limits import DEFAULT_LIMITS, Limits, element_count
from oipcodec.proto import trtis_v1_pb2 as messages
from oipcodec.raw import array_to_raw, raw_to_array
from oipcodec.types import InferResponse, Tensor

__all__ = [
    "REQUEST_HEADER",
    "RESPONSE_HEADER",
    "STATUS_HEADER",
    "MAX_HEADER_TEXT",
    "InputSpec",
    "code_for",
    "config_dims",
    "decode_inputs",
    "classes_in_body",
    "encode_response",
    "encode_response_text",
    "parse_request_header",
    "parse_response_header",
    "messages",
    "request_header_text",
    "requested",
    "response_header_text",
    "short_response_header",
    "status",
    "status_text",
    "v1_datatype",
    "version_text",
]

#: The HTTP headers of the v1 API.
REQUEST_HEADER = "NV-InferRequest"
RESPONSE_HEADER = "NV-InferResponse"
STATUS_HEADER = "NV-Status"
#: The longest ``NV-InferResponse`` the server sends (http.client refuses a header line over
#: 64 KiB): a longer one goes as :func:`short_response_header`, the whole one in the body.
MAX_HEADER_TEXT = 16 * 1024

_INT64 = 2**63 - 1


@dataclass(frozen=True, slots=True)
class InputSpec:
    """What the codec needs of a model input; the server's :class:`~oipcodec.server.TensorSpec` too.

    Parameters
    ----------
    name
        The input's name.
    datatype
        Its OIP datatype.
    shape
        Its declared shape (``-1`` for any size; with the batch dimension when the model
        batches).
    """

    name: str
    datatype: str
    shape: tuple[int, ...]


# ----------------------------------------------------------------------------- status


def code_for(exc: BaseException) -> int:
    """The ``RequestStatusCode`` for an exception.

    The OIP error kinds are mapped onto v1's codes (NOT_FOUND, UNAVAILABLE, UNSUPPORTED,
    INTERNAL; bad input of any kind INVALID_ARG).

    Parameters
    ----------
    exc
        The exception.
    """
    if isinstance(exc, RequestError):
        return {
            "NOT_FOUND": messages.NOT_FOUND,
            "UNAVAILABLE": messages.UNAVAILABLE,
            "UNIMPLEMENTED": messages.UNSUPPORTED,
            "INTERNAL": messages.INTERNAL,
            "ALREADY_EXISTS": messages.ALREADY_EXISTS,
        }.get(exc.grpc_code, messages.INVALID_ARG)
    if isinstance(exc, OIPError):
        return messages.INVALID_ARG
    return messages.INTERNAL


def status(code: Any, msg: str = "", server_id: str = "", request_id: int = 0) -> Any:
    """A ``RequestStatus`` message.

    Parameters
    ----------
    code
        A ``RequestStatusCode``, e.g. ``messages.SUCCESS``.
    msg
        The message.
    server_id
        The server's id.
    request_id
        The request's id.
    """
    return messages.RequestStatus(code=code, msg=msg, server_id=server_id, request_id=request_id)


def status_text(message: Any) -> str:
    """``message`` in one-line text format, as the ``NV-Status`` header carries it.

    Parameters
    ----------
    message
        A protobuf message (a ``RequestStatus``).
    """
    return text_format.MessageToString(message, as_one_line=True)


# ----------------------------------------------------------------------------- datatypes


def v1_datatype(datatype: str) -> int:
    """The v1 ``DataType`` number of an OIP datatype (BYTES is TYPE_STRING; BF16 has none).

    Parameters
    ----------
    datatype
        The OIP datatype.
    """
    if datatype == "BYTES":
        return messages.TYPE_STRING
    try:
        return int(messages.DataType.Value(f"TYPE_{datatype}"))
    except ValueError:
        raise DecodeError(f"datatype {datatype} has no v1 equivalent") from None


def config_dims(shape: Sequence[int], batched: bool) -> list[int]:
    """A declared shape as v1 ``dims``.

    Parameters
    ----------
    shape
        The declared shape.
    batched
        The model batches: the batch dimension is left out.
    """
    return list(shape[1:] if batched else shape)


# ----------------------------------------------------------------------------- header text


def parse_request_header(
    data: str | bytes | bytearray | memoryview,
    binary: bool = False,
    *,
    kernels: Kernels | None = None,
) -> Any:
    """The ``InferRequestHeader`` in ``data``.

    The result (or the error) is always google.protobuf ``text_format``'s.

    Parameters
    ----------
    data
        Text format (the ``NV-InferRequest`` header), or the binary protobuf form.
    binary
        ``data`` is the binary form.
    kernels
        The kernel implementation; the default is the facade's, as in every codec.

    Raises
    ------
    DecodeError
        Saying what does not parse (text_format's message: line, column and field).
    """
    if binary:
        try:
            return messages.InferRequestHeader.FromString(bytes(byte_view(data)))
        except _ProtobufDecodeError as exc:
            raise DecodeError(f"InferRequestHeader does not parse: {exc}") from None
    try:
        text = data if isinstance(data, str) else bytes(byte_view(data)).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"{REQUEST_HEADER} is not UTF-8 text: {exc}") from None
    scanned = (kernels or _facade).scan_request_header(text)
    if scanned is not None:
        fields, inputs, outputs = scanned
        return messages.InferRequestHeader(
            input=[messages.InferRequestHeader.Input(**item) for item in inputs],
            output=[_output_request(**item) for item in outputs],
            **fields,
        )
    try:
        return text_format.Parse(text, messages.InferRequestHeader())
    except text_format.ParseError as exc:
        raise DecodeError(
            f"{REQUEST_HEADER} does not parse as an InferRequestHeader: {exc}"
        ) from None


def _output_request(name: str = "", cls: int | None = None) -> Any:
    if cls is None:
        return messages.InferRequestHeader.Output(name=name)
    return messages.InferRequestHeader.Output(
        name=name, cls=messages.InferRequestHeader.Output.Class(count=cls)
    )


def request_header_text(header: Any) -> str:
    """An ``InferRequestHeader`` in one-line text format (a client's ``NV-InferRequest``).

    Exactly as ``text_format`` writes it.

    Parameters
    ----------
    header
        The header.
    """
    parts: list[str] = []
    try:
        if header.batch_size:
            parts.append(f"batch_size: {header.batch_size}")
        for item in header.input:
            if item.HasField("shared_memory"):
                raise _Fallback
            inner = [f'name: "{_plain(item.name)}"'] if item.name else []
            inner.extend(f"dims: {d}" for d in item.dims)
            if item.batch_byte_size:
                inner.append(f"batch_byte_size: {item.batch_byte_size}")
            parts.append(_block("input", inner))
        for item in header.output:
            if item.HasField("shared_memory"):
                raise _Fallback
            inner = [f'name: "{_plain(item.name)}"'] if item.name else []
            if item.HasField("cls"):
                inner.append(_block("cls", [f"count: {item.cls.count}"] if item.cls.count else []))
            parts.append(_block("output", inner))
        for name in ("correlation_id", "id", "flags"):  # field numbers 4, 5, 6
            value = getattr(header, name)
            if value:
                parts.append(f"{name}: {value}")
    except _Fallback:
        return text_format.MessageToString(header, as_one_line=True)
    return " ".join(parts)


def _block(name: str, inner: list[str]) -> str:
    return f"{name} {{ {' '.join(inner)} }}" if inner else f"{name} {{ }}"


def parse_response_header(
    data: str | bytes | bytearray | memoryview,
    binary: bool = False,
    *,
    kernels: Kernels | None = None,
) -> Any:
    """The ``InferResponseHeader`` in ``data``.

    Parameters
    ----------
    data, binary, kernels
        As in :func:`parse_request_header`.
    """
    try:
        if binary:
            return messages.InferResponseHeader.FromString(bytes(byte_view(data)))
        text = data if isinstance(data, str) else bytes(byte_view(data)).decode("utf-8")
        scanned = (kernels or _facade).scan_response_header(text)
        if scanned is not None:
            fields, outputs = scanned
            return messages.InferResponseHeader(
                output=[messages.InferResponseHeader.Output(**item) for item in outputs], **fields
            )
        return text_format.Parse(text, messages.InferResponseHeader())
    except (text_format.ParseError, _ProtobufDecodeError, UnicodeDecodeError) as exc:
        raise DecodeError(f"InferResponseHeader does not parse: {exc}") from None


class _Fallback(Exception):
    """Not a header the fast writer writes: let text_format write it."""


_PLAIN_NAME = re.compile(r"[\x20-\x7e]*")


def response_header_text(header: Any) -> str:
    """An ``InferResponseHeader`` in one-line text format, exactly as ``text_format`` writes it.

    Parameters
    ----------
    header
        The header.
    """
    return _header_text(header, {})


def _header_text(header: Any, classes: Mapping[int, str]) -> str:
    """The writer of :func:`response_header_text`; ``classes``: the ``batch_classes`` text of
    the outputs at those positions, already written (any other classes: text_format)."""
    parts: list[str] = []
    try:
        if header.model_name:
            parts.append(f'model_name: "{_plain(header.model_name)}"')
        if header.model_version:
            parts.append(f"model_version: {header.model_version}")
        if header.batch_size:
            parts.append(f"batch_size: {header.batch_size}")
        for position, output in enumerate(header.output):
            if len(output.batch_classes) and position not in classes:
                raise _Fallback
            inner = [f'name: "{_plain(output.name)}"'] if output.name else []
            if position in classes:
                inner.append(classes[position])
            elif output.HasField("raw"):
                raw = [f"dims: {d}" for d in output.raw.dims]
                if output.raw.batch_byte_size:
                    raw.append(f"batch_byte_size: {output.raw.batch_byte_size}")
                inner.append(_block("raw", raw))
            parts.append(_block("output", inner))
        if header.id:  # fields in number order, as text_format writes them
            parts.append(f"id: {header.id}")
    except _Fallback:
        return text_format.MessageToString(header, as_one_line=True)
    return " ".join(parts)


def _plain(name: str) -> str:
    if '"' in name or "\\" in name or "'" in name or not _PLAIN_NAME.fullmatch(name):
        raise _Fallback
    return name


# ----------------------------------------------------------------------------- requests


def decode_inputs(
    header: Any,
    body: Any,
    specs: Sequence[Any],
    max_batch_size: int,
    *,
    limits: Limits = DEFAULT_LIMITS,
    kernels: Kernels | None = None,
) -> list[Tensor]:
    """The input tensors of a v1 request.

    Every size is checked before an array is made; arrays are views of ``body``.

    Parameters
    ----------
    header
        The ``InferRequestHeader``.
    body
        The inputs' raw bytes concatenated in header order (any buffer), or a sequence with one
        buffer per input (gRPC's ``raw_input``).
    specs
        The model's inputs (:class:`InputSpec`: name, datatype, shape).
    max_batch_size
        The model's; 0 when it does not batch.
    limits
        What the request may hold.
    kernels
        As in :func:`parse_request_header`.

    Raises
    ------
    DecodeError
        Naming the input and what was expected.
    """
    batch = header.batch_size
    if max_batch_size > 0:
        if batch < 1 or batch > max_batch_size:
            raise DecodeError(
                f"batch_size {batch} is out of range: the model takes 1 to {max_batch_size} rows"
            )
    elif batch > 1:
        raise DecodeError(f"batch_size {batch}: the model does not batch (batch_size must be 1)")
    if len(header.input) > limits.max_tensors:
        raise DecodeError(
            f"{len(header.input)} inputs, more than the limit of {limits.max_tensors}"
        )
    by_name = {spec.name: spec for spec in specs}
    split = not isinstance(body, (bytes, bytearray, memoryview))
    if split and len(body) != len(header.input):
        raise DecodeError(
            f"{len(header.input)} inputs in the header but {len(body)} raw_input buffers"
        )
    view = None if split else byte_view(body)
    offset = 0
    tensors: list[Tensor] = []
    seen: set[str] = set()
    for index, item in enumerate(header.input):
        name = item.name
        if item.HasField("shared_memory"):
            raise _unsupported_shared_memory(name, "input")
        spec = by_name.get(name)
        if spec is None:
            raise DecodeError(
                f"unexpected inference input '{name}'; the model's inputs are {list(by_name)}"
            )
        if name in seen:
            raise DecodeError(f"input '{name}' appears more than once")  # REST's words
        seen.add(name)
        shape = _input_shape(item, spec, batch, max_batch_size > 0)
        try:
            count = element_count(shape, limits)
        except OIPError as exc:
            raise exc.for_tensor(name, "input") from None
        row = datatypes.get(spec.datatype)
        declared = item.batch_byte_size
        if row.is_bytes:
            if not declared and count:
                raise DecodeError(f"input '{name}' is TYPE_STRING: its batch_byte_size is required")
            size = declared
        else:
            size = count * row.itemsize
            if declared and declared != size:
                raise DecodeError(
                    f"input '{name}': batch_byte_size {declared} disagrees with dims "
                    f"{shape} of {spec.datatype} ({size} bytes)"
                )
        if split:
            chunk = byte_view(body[index])
            if len(chunk) != size:
                raise DecodeError(
                    f"input '{name}': expected {size} bytes for shape {shape}, "
                    f"raw_input has {len(chunk)}"
                )
        else:
            assert view is not None
            if offset + size > len(view):
                raise DecodeError(
                    f"input '{name}': expected {size} bytes for shape {shape} at body offset "
                    f"{offset}, but only {len(view) - offset} remain"
                )
            chunk = view[offset : offset + size]
            offset += size
        try:
            array = raw_to_array(chunk, spec.datatype, shape, limits=limits, kernels=kernels)
        except OIPError as exc:
            raise exc.for_tensor(name, "input") from None
        tensors.append(Tensor(name, spec.datatype, tuple(shape), array))
    if view is not None and offset != len(view):
        raise DecodeError(
            f"the body has {len(view) - offset} bytes after the last input (the header's "
            f"inputs take {offset} of {len(view)})"
        )
    return tensors


def _input_shape(item: Any, spec: Any, batch: int, batched: bool) -> list[int]:
    """The full shape of an input: the header's dims (or the model's when it gives none),
    with the batch dimension in front when the model batches."""
    dims = list(item.dims)
    if not dims:
        dims = config_dims(spec.shape, batched)
        if any(d < 0 for d in dims):
            raise DecodeError(
                f"input '{item.name}': the model's dims {dims} have a variable dimension, so "
                "the header must give dims"
            )
    elif any(d < 0 for d in dims):
        raise DecodeError(f"input '{item.name}': dims {dims} must be non-negative")
    return [batch, *dims] if batched else dims


def _unsupported_shared_memory(name: str, kind: str) -> RequestError:
    return UnsupportedError(f"{kind} '{name}': v1 shared memory is not supported")


def requested(header: Any) -> tuple[list[str] | None, dict[str, int]]:
    """The outputs a header asks for (``None``: all), and the class count of each ``cls`` asks.

    Parameters
    ----------
    header
        The ``InferRequestHeader``; a class count of 0 is refused.
    """
    if not len(header.output):
        return None, {}
    names: list[str] = []
    classes: dict[str, int] = {}
    for item in header.output:
        if item.HasField("shared_memory"):
            raise _unsupported_shared_memory(item.name, "output")
        if item.name in names:
            raise DecodeError(f"output '{item.name}' is requested twice")
        names.append(item.name)
        if item.HasField("cls"):
            if item.cls.count < 1:
                raise DecodeError(f"output '{item.name}': cls count must be at least 1")
            classes[item.name] = item.cls.count
    return names, classes


# ----------------------------------------------------------------------------- responses


def encode_response(
    response: InferResponse,
    *,
    batch_size: int,
    batched: bool,
    classes: Mapping[str, int] | None = None,
    labels: Mapping[str, Sequence[bytes] | None] | None = None,
    request_id: int = 0,
    kernels: Kernels | None = None,
) -> tuple[Any, list[bytes | memoryview]]:
    """The ``InferResponseHeader`` and the RAW outputs' bytes of ``response``.

    One part per output, views of the arrays where they are contiguous little-endian.

    Parameters
    ----------
    response
        The response.
    batch_size
        The request's batch size.
    batched
        The model batches: classes are ranked per batch row (else over the whole tensor).
    classes
        Output name -> ``k``: that output is answered as its ``k`` best classes (``k`` bounded
        by the class count).
    labels
        Output name -> its labels, for the classes.
    request_id
        The request's id.
    kernels
        As in :func:`parse_request_header`.
    """
    header, parts, _ = _encode(
        response, batch_size, batched, classes, labels, request_id, kernels, text=False
    )
    return header, parts


def encode_response_text(
    response: InferResponse,
    *,
    batch_size: int,
    batched: bool,
    classes: Mapping[str, int] | None = None,
    labels: Mapping[str, Sequence[bytes] | None] | None = None,
    request_id: int = 0,
    kernels: Kernels | None = None,
) -> tuple[Any, list[bytes | memoryview], str]:
    """:func:`encode_response` and the header's one-line text (:func:`response_header_text`).

    The classes are written from the ranked arrays rather than read back from the message.

    Parameters
    ----------
    response, batch_size, batched, classes, labels, request_id, kernels
        As in :func:`encode_response`.
    """
    header, parts, texts = _encode(
        response, batch_size, batched, classes, labels, request_id, kernels, text=True
    )
    return header, parts, _header_text(header, texts)


def short_response_header(header: Any) -> Any:
    """``header`` without its classes: each CLASS output named only (no ``raw``, ``batch_classes``).

    What the ``NV-InferResponse`` HTTP header carries when the whole header would pass
    :data:`MAX_HEADER_TEXT` (the whole one ends the body).

    Parameters
    ----------
    header
        The whole ``InferResponseHeader``.
    """
    short = messages.InferResponseHeader(
        id=header.id,
        model_name=header.model_name,
        model_version=header.model_version,
        batch_size=header.batch_size,
    )
    for output in header.output:  # built, not copied: the classes may be a million
        item = short.output.add(name=output.name)
        if output.HasField("raw"):
            item.raw.CopyFrom(output.raw)
    return short


def classes_in_body(header: Any) -> bool:
    """Whether ``header`` is a :func:`short_response_header`.

    An output with neither ``raw`` nor ``batch_classes`` has its classes in the whole header at
    the end of the body.

    Parameters
    ----------
    header
        The ``InferResponseHeader`` read from the HTTP header.
    """
    return any(not o.HasField("raw") and not len(o.batch_classes) for o in header.output)


def _encode(
    response: InferResponse,
    batch_size: int,
    batched: bool,
    classes: Mapping[str, int] | None,
    labels: Mapping[str, Sequence[bytes] | None] | None,
    request_id: int,
    kernels: Kernels | None,
    *,
    text: bool,
) -> tuple[Any, list[bytes | memoryview], dict[int, str]]:
    k = kernels or _facade
    header = messages.InferResponseHeader(
        id=request_id,
        model_name=response.model_name,
        model_version=_version_number(response.model_version),
        batch_size=batch_size,
    )
    parts: list[bytes | memoryview] = []
    texts: dict[int, str] = {}
    for position, tensor in enumerate(response.outputs):
        output = header.output.add(name=tensor.name)
        count = (classes or {}).get(tensor.name)
        if count is not None:
            ranked = _Ranked(tensor, count, batched, (labels or {}).get(tensor.name), k)
            # The message is read from its wire form, written from the ranked arrays at once:
            # one protobuf Class object per class cost five times more
            # (docs/measurements.md#v1-classes).
            output.MergeFromString(ranked.wire())
            if text:
                texts[position] = ranked.text()
            continue
        raw = array_to_raw(tensor.data, tensor.datatype, kernels=kernels)
        output.raw.dims.extend(config_dims(tensor.shape, batched))
        output.raw.batch_byte_size = len(raw)
        parts.append(raw)
    return header, parts, texts


_FLOAT32_TINY = float(np.finfo(np.float32).tiny)
#: Values converted to text at once: numpy holds the GIL throughout
#: (docs/measurements.md#v1-classes).
_TEXT_SLICE = 16384


class _Ranked:
    """One CLASS output: the ``k`` best classes of each row (the top-k kernel), written as
    the ``batch_classes`` of an ``InferResponseHeader.Output`` in wire form or in text."""

    def __init__(
        self, tensor: Tensor, count: int, batched: bool, labels: Sequence[bytes] | None, k: Any
    ) -> None:
        if tensor.datatype == "BYTES":
            raise InvalidArgumentError(
                f"output '{tensor.name}' is TYPE_STRING: classification (cls) ranks numeric "
                "outputs only"
            )
        data: Any = tensor.data
        shape = tuple(tensor.shape)
        rows = shape[0] if batched and shape else 1
        values = np.asarray(data).reshape(rows, -1)
        # top_k answers min(count, classes) per row: a count of 2**32 - 1 costs no more than
        # the class count.
        indices, best = k.top_k(values, count)
        self.indices: np.ndarray[Any, Any] = indices
        # Class.value is a protobuf float: the value as float32, as the message would hold it.
        self.values: np.ndarray[Any, Any] = np.asarray(best).astype(np.float32)
        self.labels = [
            label.decode("utf-8", "replace") for label in (labels or ())[: values.shape[1]]
        ]

    def wire(self) -> bytes:
        """The ``batch_classes`` fields (number 3) of an ``Output``, serialized. Each Class
        is written at a fixed width (its idx a 5-byte varint, as protobuf allows), so all of
        them are laid out by numpy in one step; only labels are appended one by one."""
        rows, n = self.indices.shape
        index = self.indices.reshape(-1).astype(np.uint64)
        core = np.empty((rows * n, 11), np.uint8)
        core[:, 0] = 0x08  # idx: field 1, varint
        for byte in range(5):
            part = (index >> np.uint64(7 * byte)) & np.uint64(0x7F)
            core[:, 1 + byte] = part | np.uint64(0x80 if byte < 4 else 0)
        core[:, 6] = 0x15  # value: field 2, fixed32
        core[:, 7:] = self.values.reshape(-1).astype("<f4").view(np.uint8).reshape(-1, 4)
        if not self.labels:
            framed = np.empty((rows * n, 13), np.uint8)
            framed[:, 0] = 0x0A  # Classes.cls: field 1, length-delimited
            framed[:, 1] = 11
            framed[:, 2:] = core
            blobs = [row.tobytes() for row in framed.reshape(rows, n * 13)]
        else:
            heads, tails = [], []
            for label in self.labels:
                encoded = label.encode("utf-8")
                tail = b"\x1a" + varint_bytes(len(encoded)) + encoded if encoded else b""
                heads.append(b"\x0a" + varint_bytes(11 + len(tail)))
                tails.append(tail)
            known = len(self.labels)
            flat = core.tobytes()
            blobs = []
            for r, row in enumerate(self.indices.tolist()):
                pieces = []
                for c, i in enumerate(row):
                    at = (r * n + c) * 11
                    if i < known:
                        pieces.append(heads[i] + flat[at : at + 11] + tails[i])
                    else:
                        pieces.append(b"\x0a\x0b" + flat[at : at + 11])
                blobs.append(b"".join(pieces))
        return b"".join(b"\x1a" + varint_bytes(len(blob)) + blob for blob in blobs)

    def text(self) -> str:
        """The ``batch_classes`` in one-line text format, as text_format writes them: a field
        at its default (idx 0, value +0.0, label "") left out, a value as the shortest text
        that reads back to the same float32."""
        rows, n = self.indices.shape
        flat = self.values.reshape(-1)
        values = _float_texts(flat)
        zero = (flat.view(np.uint32) == 0).tolist()
        labels = [_label_text(label) for label in self.labels]
        known = len(labels)
        written = [
            f"cls {{ {f'idx: {i} ' if i else ''}{'' if z else f'value: {v} '}"
            f"{labels[i] if i < known else ''}}}"
            for i, v, z in zip(self.indices.reshape(-1).tolist(), values, zero, strict=True)
        ]
        return " ".join(_block("batch_classes", written[r * n : (r + 1) * n]) for r in range(rows))


def _float_texts(values: np.ndarray[Any, Any]) -> list[str]:
    """Each float32 of ``values`` as text_format writes a protobuf float: the shortest
    decimal that reads back to the same float32 (numpy's, C speed), printed as a Python
    float; a subnormal the way text_format finds it (6 digits at least)."""
    # numpy writes large and small values with an exponent where Python does not: those
    # (the few with an "e") are printed again as Python floats.
    # numpy's conversion holds the GIL: in slices, so that a thread writing a large answer
    # leaves the event loop its turns.
    texts = [
        t if "e" not in t else repr(float(t))
        for start in range(0, len(values), _TEXT_SLICE)
        for t in values[start : start + _TEXT_SLICE].astype(str).tolist()
    ]
    tiny = np.flatnonzero((values != 0) & (np.abs(values) < _FLOAT32_TINY))
    for at in tiny.tolist():
        texts[at] = repr(_shortest_float(float(values[at])))
    return texts


def _shortest_float(value: float) -> float:
    precision = 6
    while True:
        rounded = float(f"{value:.{precision}g}")
        if np.float32(rounded) == np.float32(value) or precision >= 17:
            return rounded
        precision += 1


def _label_text(label: str) -> str:
    """``label: "..." `` as text_format writes it (with its escapes), or nothing when empty."""
    if not label:
        return ""
    if _PLAIN_NAME.fullmatch(label) and '"' not in label and "\\" not in label and "'" not in label:
        return f'label: "{label}" '
    written = text_format.MessageToString(
        messages.InferResponseHeader.Output.Class(label=label), as_one_line=True
    )
    return written + " "


def _version_number(version: str | None) -> int:
    """A model version as v1's int64 (0 when it is not a number)."""
    if version and version.isascii() and version.isdigit() and int(version) <= _INT64:
        return int(version)
    return 0


def version_text(version: int | str | None) -> str | None:
    """A v1 model version as the registry's version string, or ``None`` for the newest.

    Parameters
    ----------
    version
        int64; -1 or 0 for the newest, as v1 clients send.
    """
    if version is None:
        return None
    if isinstance(version, str):
        if not version:
            return None
        try:
            number = int(version)
        except ValueError:
            return version  # the registry says it is not found
        version = number
    return None if version <= 0 else str(version)


#: The former name of :data:`messages` (``pb`` is :mod:`oipcodec.pb`).
__getattr__ = moved(__name__, {"pb": "oipcodec.proto.trtis_v1_pb2"})
