"""Protobuf ModelInfer messages: serialized ``ModelInferRequest`` / ``ModelInferResponse`` bytes
to and from :class:`~oipcodec.InferRequest` / :class:`~oipcodec.InferResponse`.

The messages are those of ``oipcodec/proto/open_inference_grpc.proto`` (package ``inference``),
read and written by the ``pbwire`` kernel straight from and into the message bytes, without
building protobuf objects.

- ``raw=True`` (the default, Triton's) puts every tensor in the raw contents; a message holding
  FP16 or BF16 is written raw even with ``raw=False`` (they have no typed field, and the spec
  forbids raw and typed contents in one message);
- raw and packed FP32/FP64 contents decode to read-only views of the message (no copy);
- every size is checked against shape x itemsize, and every limit of :class:`~oipcodec.Limits`,
  before memory is allocated; errors are :class:`DecodeError` / :class:`EncodeError` naming the
  tensor, the element and the byte offset; duplicate tensor names are refused both ways.

Parameters, datatypes and what is stricter than protobuf: docs/codec.md, "Protobuf messages".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec import kernels as _facade
from oipcodec._shared import buffers
from oipcodec._shared.pbwire import varint_bytes
from oipcodec.errors import DecodeError, EncodeError, LimitError, OIPError, UnavailableError
from oipcodec.kernels import Kernels
from oipcodec.limits import DEFAULT_LIMITS, Limits, element_count
from oipcodec.raw import LITTLE_ENDIAN, array_to_raw, raw_to_array, view_to_array
from oipcodec.sharedmem import Resolver, location, names_region, no_regions
from oipcodec.types import InferRequest, InferResponse, RequestedOutput, Tensor

__all__ = [
    "decode_request",
    "decode_request_form",
    "decode_response",
    "encode_request",
    "encode_response",
    "encode_stream_error",
    "encode_stream_response",
]


_HALF = ("FP16", "BF16")
# Typed contents: InferTensorContents field number per datatype, and the range a decoded
# int_contents / uint_contents value must fit for the narrower datatypes.
_FIELD = {"BOOL": 1, "INT8": 2, "INT16": 2, "INT32": 2, "INT64": 3, "UINT8": 4, "UINT16": 4,
          "UINT32": 4, "UINT64": 5, "FP32": 6, "FP64": 7, "BYTES": 8}  # fmt: skip
_NARROW = {name: np.iinfo(name.lower()) for name in ("INT8", "INT16", "UINT8", "UINT16")}


# --------------------------------------------------------------------------------------------
# Encoding


def encode_request(
    request: InferRequest, raw: bool = True, *, kernels: Kernels | None = None
) -> bytes:
    """A serialized ModelInferRequest holding ``request``.

    Parameters
    ----------
    request
        The request; it must name its model (``ModelInferRequest.model_name`` is required).
    raw
        ``True``: the inputs in ``raw_input_contents``; ``False``: in each datatype's typed
        contents field (FP16 and BF16 are written raw anyway, see above).
    kernels
        The kernel implementation (e.g. ``oipcodec.kernels.load("pure")``); the default is the
        facade's, as in every codec.

    Raises
    ------
    EncodeError
        A request without a model name, or a tensor that cannot be written as asked.
    """
    if not request.model_name:
        raise EncodeError(
            "the request names no model: ModelInferRequest.model_name is required "
            f"(model_name={request.model_name!r})"
        )
    k = kernels or _facade
    tensors = _encode_tensors(request.inputs, raw, "input", k)
    requested = None
    if request.outputs is not None:
        requested = [(o.name, o.parameters) for o in request.outputs]
    return _write("request", request, tensors, requested, k)


def encode_response(
    response: InferResponse, raw: bool = True, *, kernels: Kernels | None = None
) -> bytes:
    """A serialized ModelInferResponse holding ``response``.

    Parameters
    ----------
    response
        The response.
    raw, kernels
        As in :func:`encode_request`; raw contents by default, as Triton answers.
    """
    k = kernels or _facade
    tensors = _encode_tensors(response.outputs, raw, "output", k)
    return _write("response", response, tensors, None, k)


def _write(
    kind: str,
    message: InferRequest | InferResponse,
    tensors: list[tuple[Any, ...]],
    requested: list[tuple[str, Any]] | None,
    k: Kernels,
) -> bytes:
    """The serialized ModelInfer ``kind`` ("request" or "response") of ``message`` with its
    encoded ``tensors``; the kernel's TypeError, ValueError or OverflowError become EncodeError."""
    try:
        return k.write_infer_message(
            kind, message.model_name, message.model_version, message.id, message.parameters,
            tensors, requested,
        )  # fmt: skip
    except OIPError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise EncodeError(str(exc)) from None


def _encode_tensors(
    tensors: list[Tensor], raw: bool, role: str, k: Kernels
) -> list[tuple[Any, ...]]:
    if not raw and any(t.datatype in _HALF for t in tensors):
        raw = True  # FP16/BF16 are raw only, and a message cannot mix raw and typed contents
    seen: set[str] = set()
    out = []
    for tensor in tensors:
        if tensor.name in seen:
            raise EncodeError("duplicate name", tensor=tensor.name, kind=role)
        seen.add(tensor.name)
        try:
            if names_region(tensor.parameters):
                # In shared memory: no data here. Raw contents keep one (empty) entry per
                # output, as Triton answers; a request has none for such an input, as
                # tritonclient sends it.
                field = 0 if raw else _FIELD[tensor.datatype]
                empty: Any = [] if tensor.datatype == "BYTES" else np.empty(0, np.uint8)
                payload: Any = (None if role == "input" else b"") if raw else empty
            else:
                field, payload = _payload(tensor, raw, k)
        except OIPError as exc:
            raise exc.for_tensor(tensor.name, role) from None
        out.append((tensor.name, tensor.datatype, tensor.shape, tensor.parameters, field, payload))
    return out


def _payload(tensor: Tensor, raw: bool, k: Kernels) -> tuple[int, Any]:
    name = tensor.datatype
    data = tensor.data
    if raw:
        return 0, array_to_raw(data, name, kernels=k)
    field = _FIELD[name]
    if name == "BYTES":
        return field, _bytes_elements(data)
    if name in ("FP32", "FP64"):  # packed fixed-width: the same little-endian bytes as raw
        return field, k.little_endian_view(data)
    # int32/int64 fields carry a negative value as its 64-bit two's complement.
    signed = field in (2, 3)
    bits = data.astype(np.int64).view(np.uint64) if signed else data.astype(np.uint64)
    return field, np.ascontiguousarray(bits).reshape(-1)


def _bytes_elements(data: Any) -> list[bytes]:
    out = []
    for index, element in enumerate(buffers.bytes_elements(data)):
        if isinstance(element, str):
            try:
                element = element.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise buffers.utf8_error(index, exc) from None
        elif isinstance(element, (bytearray, memoryview)):
            element = bytes(element)
        elif not isinstance(element, bytes):
            raise buffers.element_type_error(index, element)
        out.append(element)
    return out


# --------------------------------------------------------------------------------------------
# Decoding


def decode_request(
    data: Any,
    *,
    limits: Limits = DEFAULT_LIMITS,
    kernels: Kernels | None = None,
    shared_memory: Resolver | None = None,
) -> InferRequest:
    """The :class:`InferRequest` in a serialized ModelInferRequest.

    Input order is kept; an empty model_name/model_version/id is ``None``; no requested outputs
    is ``outputs=None``.

    Parameters
    ----------
    data
        The message's bytes (bytes, bytearray, memoryview: any buffer).
    limits
        What the message may hold; checked before memory is allocated.
    kernels
        As in :func:`encode_request`.
    shared_memory
        Gives the bytes of an input that names a shared-memory region
        (:mod:`oipcodec.sharedmem`; such an input has no ``raw_input_contents`` entry, as
        tritonclient sends it); without it such an input is refused.
    """
    return decode_request_form(data, limits=limits, kernels=kernels, shared_memory=shared_memory)[0]


def decode_request_form(
    data: Any,
    *,
    limits: Limits = DEFAULT_LIMITS,
    kernels: Kernels | None = None,
    shared_memory: Resolver | None = None,
) -> tuple[InferRequest, bool]:
    """:func:`decode_request`, and whether the message held ``raw_input_contents``.

    Parameters
    ----------
    data, limits, kernels, shared_memory
        As in :func:`decode_request`.

    Returns
    -------
    tuple
        ``(request, raw)``: ``raw`` is true for the raw form; else every input came in its
        typed contents or in shared memory.
    """
    k = kernels or _facade
    name, version, id_, parameters, tensors, requested, raw = k.read_infer_message(
        data, "request", limits
    )
    inputs = _decode_tensors(tensors, raw, "input", limits, k, shared_memory)
    outputs = [RequestedOutput(n, p) for n, p in requested] if requested else None
    request = InferRequest(inputs, outputs, id_ or None, parameters, name or None, version or None)
    return request, bool(raw)


def decode_response(
    data: Any,
    *,
    limits: Limits = DEFAULT_LIMITS,
    kernels: Kernels | None = None,
    shared_memory: Resolver | None = None,
) -> InferResponse:
    """The :class:`InferResponse` in a serialized ModelInferResponse.

    Parameters
    ----------
    data, limits, kernels
        As in :func:`decode_request`.
    shared_memory
        Reads an output in shared memory (an empty ``raw_output_contents`` entry, as Triton
        answers).
    """
    k = kernels or _facade
    name, version, id_, parameters, tensors, _, raw = k.read_infer_message(data, "response", limits)
    outputs = _decode_tensors(tensors, raw, "output", limits, k, shared_memory)
    return InferResponse(name, outputs, id_ or None, version or None, parameters)


def _decode_tensors(
    tensors: list[tuple[Any, ...]],
    raw: list[memoryview],
    role: str,
    limits: Limits,
    k: Kernels,
    shared_memory: Resolver | None,
) -> list[Tensor]:
    out: list[Tensor] = []
    seen: set[str] = set()
    total = 0
    # One raw entry per tensor, or (a request from tritonclient) none for the tensors in
    # shared memory: pb_shared.check_raw_contents has checked that the count is one of the two.
    skip_shm = len(raw) != len(tensors)
    next_raw = 0
    for name, datatype, shape, parameters, contents, offset, _ in tensors:
        if name in seen:
            raise DecodeError(f"duplicate {role} name", tensor=name, offset=offset, kind=role)
        seen.add(name)
        try:
            row = datatypes.get(datatype)
            count = element_count(shape, limits)
            total += count
            if total > limits.max_request_elements:
                raise LimitError(
                    f"the tensors hold more than {limits.max_request_elements} elements together"
                )
            where = location(parameters) if parameters else None
            if where is not None:
                if (raw and not skip_shm and len(raw[next_raw])) or contents:
                    raise DecodeError(
                        f"names shared memory region '{where.region}' and carries data as "
                        "well; send one or the other"
                    )
                next_raw += 0 if skip_shm else 1
                part = (shared_memory or no_regions)(where, name, role, False)
                array = raw_to_array(part, row.name, shape, limits=limits, kernels=k)
            elif raw:  # in the tensor's shape already; the reader's entries are byte views
                array = view_to_array(raw[next_raw], row, count, shape, limits, k)
                next_raw += 1
            else:
                array = _from_contents(row, count, contents).reshape(shape)
                out.append(Tensor(name, datatype, shape, array, parameters))
                continue
            # raw_to_array has checked the size and dtype against the shape and datatype.
            out.append(Tensor.checked(name, datatype, shape, array, parameters))
        except DecodeError as exc:
            raise exc.for_tensor(name, role) from None
        except UnavailableError:  # a full server, not a bad request: the resolver's words
            raise
        except OIPError as exc:  # a bad datatype or shape, read from the wire
            raise DecodeError(
                exc.reason, tensor=name, index=exc.index, offset=offset, kind=role
            ) from None
    return out


def _from_contents(
    row: datatypes.Datatype, count: int, contents: Mapping[str, Any] | None
) -> np.ndarray[Any, Any]:
    if contents is None:
        if count:
            raise DecodeError(
                f"no data: {count} elements expected, no contents and no raw contents"
            )
        contents = {}
    field = row.contents_field
    if field is None:
        raise DecodeError(
            f"{row.name} has no typed contents field; it must be sent in raw contents"
        )
    for other, payload in contents.items():
        if other != field and len(payload):
            raise DecodeError(f"contents hold {other}, but datatype {row.name} uses {field}")
    payload = contents.get(field)
    if row.name in ("FP32", "FP64"):
        size = len(payload) // row.itemsize if payload is not None else 0
    else:
        size = len(payload) if payload is not None else 0
    if size != count:
        raise DecodeError(f"{field} holds {size} values, the shape needs {count}")
    if payload is None:
        return np.empty(0, dtype=row.numpy_dtype)
    if row.name in ("FP32", "FP64"):
        return np.frombuffer(payload, dtype=LITTLE_ENDIAN[row.name])
    array: np.ndarray[Any, Any] = payload
    if row.name in _NARROW:
        info = _NARROW[row.name]
        bad = np.flatnonzero((array < info.min) | (array > info.max))
        if len(bad):
            first = int(bad[0])
            raise DecodeError(
                f"{field} value {array[first]} is out of range for {row.name}", index=first
            )
        return array.astype(row.numpy_dtype)
    return array


# --------------------------------------------------------------------------------------------
# ModelStreamInfer answers


def encode_stream_response(response: bytes) -> bytes:
    """A serialized ModelStreamInferResponse around a serialized ModelInferResponse.

    What a streaming answer carries for each request (``infer_response``, field 2).

    Parameters
    ----------
    response
        The serialized ModelInferResponse.
    """
    return b"\x12" + varint_bytes(len(response)) + response


def encode_stream_error(message: str) -> bytes:
    """A serialized ModelStreamInferResponse carrying ``error_message`` (field 1).

    How a streaming answer reports one failed request without ending the stream.

    Parameters
    ----------
    message
        The error's text.
    """
    data = message.encode("utf-8", "replace")
    return b"\x0a" + varint_bytes(len(data)) + data
