"""GraphPipe: tensors in flatbuffers, over one HTTP POST (https://oracle.github.io/graphpipe).

A client POSTs a ``Request`` flatbuffer (an ``InferRequest`` or a ``MetadataRequest``); the
server answers an ``InferResponse`` (``output_tensors`` or ``errors``) or a
``MetadataResponse``. A ``Tensor`` has a ``type``, an int64 ``shape`` and either ``data``
(little-endian, row-major) or ``string_val``. The flatbuffers are read and written by the
``flatbuf`` kernels (:func:`oipcodec.kernels.read_flatbuffer`), which verify a buffer before
reading it.

Types: GraphPipe's Uint8 ... Float64 are OIP's UINT8 ... FP64 and its String is BYTES; having
no boolean nor bfloat16, it carries BOOL as Uint8 (0 or 1) and BF16 as Float32 (exact), and
decoding never gives either (a server converts such inputs itself, as ``oipcodec serve``
does). Decoded tensors are read-only views of the body (String tensors: object arrays of
``bytes``). docs/graphpipe.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec import kernels as _facade
from oipcodec._shared.buffers import byte_view, bytes_array
from oipcodec.errors import DecodeError, EncodeError, LimitError, ShapeError
from oipcodec.kernels import Kernels
from oipcodec.limits import DEFAULT_LIMITS, Limits, element_count
from oipcodec.types import Tensor

__all__ = [
    "DATATYPE_OF_TYPE",
    "TYPE_OF_DATATYPE",
    "GraphPipeRequest",
    "GraphPipeResponse",
    "IOMetadata",
    "MetadataResponse",
    "decode_metadata_response",
    "decode_request",
    "decode_response",
    "encode_metadata_request",
    "encode_metadata_response",
    "encode_request",
    "encode_response",
    "encode_response_parts",
    "read_request",
    "request_from_fields",
]

#: GraphPipe's ``Type`` enum (0 is Null: unknown) to OIP datatypes.
DATATYPE_OF_TYPE: dict[int, str] = {
    1: "UINT8",
    2: "INT8",
    3: "UINT16",
    4: "INT16",
    5: "UINT32",
    6: "INT32",
    7: "UINT64",
    8: "INT64",
    9: "FP16",
    10: "FP32",
    11: "FP64",
    12: "BYTES",
}
#: OIP datatypes to GraphPipe's ``Type``: BOOL travels as Uint8, BF16 as Float32.
TYPE_OF_DATATYPE: dict[str, int] = {
    **{name: code for code, name in DATATYPE_OF_TYPE.items()},
    "BOOL": 1,
    "BF16": 10,
}
_STRING = 12
_TYPE_NAMES = (
    "Null",
    "Uint8",
    "Int8",
    "Uint16",
    "Int16",
    "Uint32",
    "Int32",
    "Uint64",
    "Int64",
    "Float16",
    "Float32",
    "Float64",
    "String",
)


@dataclass(slots=True)
class GraphPipeRequest:
    """A decoded ``Request``.

    Parameters
    ----------
    kind
        ``"infer"`` or ``"metadata"`` (then the rest is empty).
    inputs
        The input tensors, named from ``input_names`` in order, or ``""`` when the request
        names none (the model's inputs in order, the protocol says).
    input_names, output_names
        The names the request gives.
    config
        The request's ``config``, as it came.
    """

    kind: str
    inputs: list[Tensor] = field(default_factory=list)
    input_names: list[str] = field(default_factory=list)
    output_names: list[str] = field(default_factory=list)
    config: bytes | None = None


@dataclass(slots=True)
class GraphPipeResponse:
    """A decoded ``InferResponse``.

    Parameters
    ----------
    outputs
        The output arrays.
    errors
        The errors as ``(code, message)``.
    """

    outputs: list[np.ndarray[Any, Any]]
    errors: list[tuple[int, str]]


@dataclass(slots=True)
class IOMetadata:
    """An input or output in a ``MetadataResponse``.

    Parameters
    ----------
    name
        Its name.
    datatype
        OIP's datatype (``None`` for Null).
    shape
        ``-1`` means any size.
    description
        Its description.
    """

    name: str
    datatype: str | None
    shape: tuple[int, ...]
    description: str = ""


@dataclass(slots=True)
class MetadataResponse:
    """A ``MetadataResponse``.

    Parameters
    ----------
    name, version, server, description
        The model's, as the server describes it.
    inputs, outputs
        :class:`IOMetadata` of each.
    """

    name: str = ""
    version: str = ""
    server: str = ""
    description: str = ""
    inputs: list[IOMetadata] = field(default_factory=list)
    outputs: list[IOMetadata] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        """As JSON: what ``GET`` on a GraphPipe endpoint answers (types by GraphPipe name)."""

        def entry(io: IOMetadata) -> dict[str, Any]:
            code = TYPE_OF_DATATYPE.get(io.datatype or "", 0)
            return {
                "name": io.name,
                "description": io.description,
                "shape": list(io.shape),
                "type": _TYPE_NAMES[code],
            }

        return {
            "name": self.name,
            "version": self.version,
            "server": self.server,
            "description": self.description,
            "inputs": [entry(io) for io in self.inputs],
            "outputs": [entry(io) for io in self.outputs],
        }


# ------------------------------------------------------------------------------------ decode


def decode_request(
    body: Any, *, limits: Limits = DEFAULT_LIMITS, kernels: Kernels | None = None
) -> GraphPipeRequest:
    """A ``Request`` flatbuffer: its tensors as read-only views of ``body``.

    Parameters
    ----------
    body
        The flatbuffer (any buffer).
    limits
        What the request may hold.
    kernels
        The kernel implementation; the default is the facade's, as in every codec.

    Raises
    ------
    DecodeError
        (or :class:`LimitError`) naming the place: anything the flatbuffers verifier refuses, a
        request that is neither kind, more input names than tensors or the reverse, a Null or
        unknown type, a negative dimension, a shape whose element count is over the limits or
        disagrees with the data's length, both ``data`` and ``string_val`` given, names that are
        not UTF-8, an input name given twice.
    """
    return request_from_fields(read_request(body, limits=limits, kernels=kernels), limits=limits)


def read_request(
    body: Any, *, limits: Limits = DEFAULT_LIMITS, kernels: Kernels | None = None
) -> tuple[Any, ...]:
    """The first half of :func:`decode_request`: the ``Request`` flatbuffer verified and read.

    An error here means the body is not a ``Request`` at all.

    Parameters
    ----------
    body, limits, kernels
        As in :func:`decode_request`.
    """
    k = kernels or _facade
    fields: tuple[Any, ...] = k.read_flatbuffer(_check_size(body, limits), "Request", limits)
    return fields


def request_from_fields(
    fields: tuple[Any, ...], *, limits: Limits = DEFAULT_LIMITS
) -> GraphPipeRequest:
    """The second half of :func:`decode_request`: the request in a verified ``Request``.

    Parameters
    ----------
    fields
        What :func:`read_request` returns.
    limits
        As in :func:`decode_request`.
    """
    req_type, infer = fields
    if req_type == 2:
        return GraphPipeRequest("metadata")
    if req_type != 1 or infer is None:
        raise DecodeError("the Request holds neither an InferRequest nor a MetadataRequest")
    config, input_names, tensors, output_names = infer
    names = _names(input_names, "input_names")
    tensors = tensors or []
    if len(tensors) > limits.max_tensors:
        raise LimitError(
            f"{len(tensors)} input tensors, more than the limit of {limits.max_tensors}"
        )
    if names and len(names) != len(tensors):
        raise DecodeError(
            f"the InferRequest has {len(names)} input names for {len(tensors)} input tensors"
        )
    inputs = []
    total = 0
    seen: set[str] = set()
    for index, fields in enumerate(tensors):
        name = names[index] if names else ""
        if name in seen:  # the last one would silently win: refused, in REST's and v1's words
            raise DecodeError(f"input '{name}' appears more than once")
        if name:
            seen.add(name)
        label = name or f"#{index}"
        datatype, shape, array = _tensor(fields, label, "input", limits)
        total += array.size
        if total > limits.max_request_elements:
            raise LimitError(
                f"the inputs hold more than {limits.max_request_elements} elements together"
            )
        inputs.append(Tensor(name, datatype, shape, array))
    return GraphPipeRequest("infer", inputs, names, _names(output_names, "output_names"), config)


def decode_response(
    body: Any, *, limits: Limits = DEFAULT_LIMITS, kernels: Kernels | None = None
) -> GraphPipeResponse:
    """An ``InferResponse`` flatbuffer: the outputs (read-only views) and the errors.

    Parameters
    ----------
    body, limits, kernels
        As in :func:`decode_request`.
    """
    k = kernels or _facade
    tensors, errors = k.read_flatbuffer(_check_size(body, limits), "InferResponse", limits)
    outputs = [
        _tensor(fields, f"#{index}", "output", limits)[2]
        for index, fields in enumerate(tensors or [])
    ]
    return GraphPipeResponse(
        outputs,
        [(code, _text(message or b"", "Error.message")) for code, message in errors or []],
    )


def decode_metadata_response(
    body: Any, *, limits: Limits = DEFAULT_LIMITS, kernels: Kernels | None = None
) -> MetadataResponse:
    """A ``MetadataResponse`` flatbuffer.

    Parameters
    ----------
    body, limits, kernels
        As in :func:`decode_request`.
    """
    k = kernels or _facade
    name, version, server, description, inputs, outputs = k.read_flatbuffer(
        _check_size(body, limits), "MetadataResponse", limits
    )

    def entries(items: list[tuple[Any, ...]] | None, what: str) -> list[IOMetadata]:
        out = []
        for io_name, io_description, shape, code in items or []:
            out.append(
                IOMetadata(
                    _text(io_name or b"", f"{what}.name"),
                    DATATYPE_OF_TYPE.get(code),
                    tuple(shape or ()),
                    _text(io_description or b"", f"{what}.description"),
                )
            )
        return out

    return MetadataResponse(
        _text(name or b"", "name"),
        _text(version or b"", "version"),
        _text(server or b"", "server"),
        _text(description or b"", "description"),
        entries(inputs, "inputs"),
        entries(outputs, "outputs"),
    )


def _check_size(body: Any, limits: Limits) -> memoryview:
    view = byte_view(body, "a GraphPipe body")
    if len(view) > limits.max_body_bytes:
        raise LimitError(
            f"a body of {len(view)} bytes, more than the limit of {limits.max_body_bytes}"
        )
    return view


def _text(raw: bytes, what: str) -> str:
    try:
        return raw.decode()
    except UnicodeDecodeError as exc:
        raise DecodeError(f"{what} is not UTF-8 ({exc})") from None


def _names(values: np.ndarray[Any, Any] | None, what: str) -> list[str]:
    if values is None:
        return []
    return [_text(raw, f"{what}[{index}]") for index, raw in enumerate(values.tolist())]


def _tensor(
    fields: tuple[Any, ...], label: str, kind: str, limits: Limits
) -> tuple[str, tuple[int, ...], Any]:
    """A ``Tensor`` table as (datatype, shape, array), checked against its shape."""
    code, shape, data, strings = fields
    datatype = DATATYPE_OF_TYPE.get(code)
    if datatype is None:
        known = "Null" if code == 0 else f"unknown type {code}"
        raise DecodeError(
            f"type {known}: expected one of Uint8 ... Float64 (1-11) or String (12)",
            tensor=label,
            kind=kind,
        )
    shape = tuple(shape or ())
    try:
        count = element_count(shape, limits)
    except LimitError as exc:
        raise exc.for_tensor(label, kind) from None
    except ShapeError as exc:  # a negative dimension: a request GraphPipe's rules refuse
        raise DecodeError(exc.reason, tensor=label, kind=kind) from None
    if code == _STRING:
        if data is not None and len(data):
            raise DecodeError(
                "a String tensor carries its elements in string_val, but data is not empty",
                tensor=label,
                kind=kind,
            )
        given = 0 if strings is None else len(strings)
        if given != count:
            raise DecodeError(
                f"shape {list(shape)} holds {count} elements but string_val has {given}",
                tensor=label,
                kind=kind,
            )
        array = np.empty(0, dtype=object) if strings is None else strings
        return datatype, shape, array.reshape(shape)
    if strings is not None and len(strings):
        raise DecodeError(
            f"a {_TYPE_NAMES[code]} tensor carries its elements in data, "
            "but string_val is not empty",
            tensor=label,
            kind=kind,
        )
    dtype = datatypes.to_numpy(datatype).newbyteorder("<")
    expected = count * dtype.itemsize
    size = 0 if data is None else len(data)
    if size != expected:
        raise DecodeError(
            f"expected {expected} bytes of data for {count} {_TYPE_NAMES[code]} elements of "
            f"shape {list(shape)}, got {size}",
            tensor=label,
            kind=kind,
        )
    array = np.frombuffer(data if data is not None else b"", dtype=dtype)
    return datatype, shape, array.reshape(shape)


# ------------------------------------------------------------------------------------ encode


def encode_request(
    inputs: Sequence[Any],
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    config: str | bytes | None = None,
    *,
    kernels: Kernels | None = None,
) -> list[Any]:
    """An ``InferRequest`` as parts whose concatenation is the body.

    A large tensor's data is a part of its own, not copied.

    Parameters
    ----------
    inputs
        numpy arrays or :class:`Tensor`.
    input_names, output_names
        The names the request gives (none: the model's, in order; all outputs).
    config
        Passed to the server as it is.
    kernels
        As in :func:`decode_request`.
    """
    k = kernels or _facade
    value = (
        None if config is None else config,
        None if not input_names else list(input_names),
        [_tensor_fields(t, f"#{i}", k) for i, t in enumerate(inputs)],
        None if not output_names else list(output_names),
    )
    parts: list[Any] = k.write_flatbuffer("Request", (1, value))
    return parts


def encode_metadata_request(*, kernels: Kernels | None = None) -> bytes:
    """A ``Request`` holding a ``MetadataRequest``.

    Parameters
    ----------
    kernels
        As in :func:`decode_request`.
    """
    k = kernels or _facade
    return b"".join(k.write_flatbuffer("Request", (2, ())))


def encode_response_parts(
    outputs: Sequence[Any],
    errors: Sequence[tuple[int, str]] = (),
    *,
    kernels: Kernels | None = None,
) -> list[Any]:
    """An ``InferResponse`` as parts whose concatenation is the body.

    A large tensor's data is not copied.

    Parameters
    ----------
    outputs
        numpy arrays or :class:`Tensor`; BOOL is sent as Uint8, BF16 as Float32.
    errors
        ``(code, message)`` pairs.
    kernels
        As in :func:`decode_request`.
    """
    k = kernels or _facade
    value = (
        [_tensor_fields(t, f"#{i}", k) for i, t in enumerate(outputs)] if outputs else None,
        [(int(code), message) for code, message in errors] if errors else None,
    )
    parts: list[Any] = k.write_flatbuffer("InferResponse", value)
    return parts


def encode_response(
    outputs: Sequence[Any],
    errors: Sequence[tuple[int, str]] = (),
    *,
    kernels: Kernels | None = None,
) -> bytes:
    """:func:`encode_response_parts` as one ``bytes``.

    Parameters
    ----------
    outputs, errors, kernels
        As in :func:`encode_response_parts`.
    """
    return b"".join(encode_response_parts(outputs, errors, kernels=kernels))


def encode_metadata_response(
    metadata: MetadataResponse, *, kernels: Kernels | None = None
) -> bytes:
    """A ``MetadataResponse``.

    Parameters
    ----------
    metadata
        The :class:`MetadataResponse` to write.
    kernels
        As in :func:`decode_request`.
    """
    k = kernels or _facade

    def entries(items: list[IOMetadata]) -> list[tuple[Any, ...]]:
        return [
            (
                io.name,
                io.description or None,
                tuple(io.shape),
                TYPE_OF_DATATYPE.get(io.datatype or "", 0),
            )
            for io in items
        ]

    value = (
        metadata.name or None,
        metadata.version or None,
        metadata.server or None,
        metadata.description or None,
        entries(metadata.inputs),
        entries(metadata.outputs),
    )
    return b"".join(k.write_flatbuffer("MetadataResponse", value))


def _tensor_fields(item: Any, label: str, k: Kernels) -> tuple[Any, ...]:
    if isinstance(item, Tensor):
        array, datatype, label = item.data, item.datatype, item.name
    else:
        array = np.asarray(item)
        if array.dtype.kind in "OSU":
            datatype = "BYTES"
        else:
            try:
                datatype = datatypes.datatype_of(array)
            except Exception as exc:
                raise EncodeError(f"{exc}", tensor=label) from None
    shape = tuple(int(d) for d in array.shape)
    if datatype == "BYTES":
        try:
            return (_STRING, shape, None, bytes_array(array))
        except EncodeError as exc:
            raise exc.for_tensor(label) from None
    if datatype == "BF16":
        array = np.asarray(array, dtype=np.float32)
    elif datatype == "BOOL":
        array = np.asarray(array, dtype=np.bool_).view(np.uint8)
    return (TYPE_OF_DATATYPE[datatype], shape, k.little_endian_view(array), None)
