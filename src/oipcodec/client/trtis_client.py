"""Clients of the TensorRT Inference Server v1 API (``oipcodec serve`` speaks it, as TRTIS 1.x
did): :class:`V1HttpClient` (``/api/`` over oipcodec's keep-alive HTTP pool) and
:class:`V1GrpcClient` (``nvidia.inferenceserver.GRPCService``); codec: :mod:`oipcodec.trtis_v1`.

``outputs`` maps each output to ``None`` (RAW: a numpy view of the answer's bytes) or ``k``
(its ``k`` best classes per batch row, ``(index, value, label)``). ``batch_size``: the first
dimension of every input is the batch; without it inputs go with their whole shape and
``batch_size: 1``. A failed request raises :class:`~oipcodec.errors.ServerError` with the
``RequestStatus`` message and the v1 code's name as ``code`` (``UNKNOWN`` for a code v1 does
not define); no answer in time :class:`~oipcodec.errors.RequestTimeoutError`; no server
:class:`~oipcodec.errors.ServerConnectionError`; an answer that is not v1's (an ``NV-Status``
or ``NV-InferResponse`` missing or not parsing) :class:`~oipcodec.errors.DecodeError`, as the
OIP clients answer a body that does not parse.

A v1 answer names no datatype, so a client reads each model's configuration (its
``ServerStatus``) once and keeps it. docs/v1.md has a worked example.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import DecodeError as _ProtobufDecodeError

from oipcodec import datatypes, trtis_v1
from oipcodec.client.grpc_client import _error as _grpc_error
from oipcodec.errors import DecodeError, ServerError
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.proto import trtis_v1_pb2 as pb
from oipcodec.raw import array_to_raw, raw_to_array

__all__ = ["V1GrpcClient", "V1HttpClient", "V1Result"]

#: An output to answer RAW (``None``) or as its ``k`` best classes (an int).
Outputs = Mapping[str, int | None] | Sequence[str] | None


@dataclass
class V1Result:
    """A v1 answer.

    Parameters
    ----------
    header
        The ``InferResponseHeader``.
    outputs
        The RAW outputs as arrays, by name.
    classes
        The CLASS outputs, by name: one list of ``(index, value, label)`` per batch row.
    """

    header: Any
    outputs: dict[str, np.ndarray[Any, Any]] = field(default_factory=dict)
    classes: dict[str, list[list[tuple[int, float, str]]]] = field(default_factory=dict)


def build_header(
    inputs: Mapping[str, np.ndarray[Any, Any]],
    outputs: Outputs,
    batch_size: int | None,
    request_id: int = 0,
) -> tuple[Any, list[bytes | memoryview]]:
    """The ``InferRequestHeader`` and each input's raw bytes (BYTES arrays framed).

    Parameters
    ----------
    inputs
        Input name -> array.
    outputs
        As in :meth:`V1HttpClient.infer`.
    batch_size
        The first dimension of every input is the batch; without it inputs go with their whole
        shape and ``batch_size: 1``.
    request_id
        The header's ``id``.
    """
    header = pb.InferRequestHeader(batch_size=batch_size or 1, id=request_id)
    raws: list[bytes | memoryview] = []
    for name, value in inputs.items():
        array = np.asarray(value)
        datatype = "BYTES" if array.dtype.kind in "OSU" else datatypes.from_numpy(array.dtype)
        if batch_size is not None and (not array.ndim or array.shape[0] != batch_size):
            raise ValueError(
                f"input '{name}': its first dimension is the batch, {batch_size}; "
                f"got shape {list(array.shape)}"
            )
        raw = array_to_raw(array, datatype)
        dims = array.shape[1:] if batch_size is not None else array.shape
        header.input.add(name=name, dims=dims, batch_byte_size=len(raw))
        raws.append(raw)
    wanted: Mapping[str, int | None] = {}
    if outputs is not None:
        wanted = outputs if isinstance(outputs, Mapping) else dict.fromkeys(outputs)
    for name, count in wanted.items():
        item = header.output.add(name=name)
        if count is not None:
            item.cls.count = count
    return header, raws


def read_outputs(
    header: Any,
    raws: Sequence[Any],
    config: Any,
    batched: bool,
    limits: Limits = DEFAULT_LIMITS,
) -> V1Result:
    """The arrays of a v1 answer.

    Parameters
    ----------
    header
        The ``InferResponseHeader``.
    raws
        The RAW outputs' bytes in header order.
    config
        The model's ``ModelConfig`` (for the datatypes).
    batched
        Whether the model batches (its outputs' dims leave the batch out).
    limits
        What the outputs may hold.
    """
    types = {o.name: o.data_type for o in config.output}
    result = V1Result(header)
    index = 0
    for output in header.output:
        if len(output.batch_classes):
            result.classes[output.name] = [
                [(c.idx, c.value, c.label) for c in row.cls] for row in output.batch_classes
            ]
            continue
        name = pb.DataType.Name(types.get(output.name, pb.TYPE_INVALID))[5:]
        datatype = "BYTES" if name == "STRING" else name
        dims = list(output.raw.dims)
        shape = [header.batch_size, *dims] if batched else dims
        if index >= len(raws):
            raise ServerError(f"the answer has no bytes for output '{output.name}'")
        result.outputs[output.name] = raw_to_array(raws[index], datatype, shape, limits=limits)
        index += 1
    return result


def _code_name(code: int) -> str:
    """The name of a ``RequestStatusCode``; ``UNKNOWN`` for a number v1 does not define."""
    try:
        return str(pb.RequestStatusCode.Name(code))
    except ValueError:
        return "UNKNOWN"


def _failed(state: Any, where: str, status: int | None, protocol: str = "http") -> ServerError:
    name = _code_name(state.code)
    if name == "UNKNOWN" and state.code != pb.UNKNOWN:
        message = f"{state.msg or 'failed'} (RequestStatus code {state.code}, not a v1 code)"
    else:
        message = state.msg or name
    return ServerError(message, status=status, url=where, code=name, protocol=protocol)


def _parse_status(text: str, where: str) -> Any:
    try:
        return text_format.Parse(text, pb.RequestStatus())
    except (text_format.ParseError, ValueError) as exc:
        raise DecodeError(
            f"the answer from {where} has an {trtis_v1.STATUS_HEADER} that does not parse as "
            f"a RequestStatus: {exc}"
        ) from None


def _response_header(data: bytes, answer: Mapping[str, str], where: str) -> tuple[Any, bytes]:
    """The ``InferResponseHeader`` of an HTTP answer and the RAW outputs' bytes: from the
    ``NV-InferResponse`` header, or, when that one is short (the classes of a large answer),
    from the whole header that ends the body after the RAW bytes."""
    text = answer.get(trtis_v1.RESPONSE_HEADER)
    if text is None:
        raise DecodeError(
            f"the answer from {where} has no {trtis_v1.RESPONSE_HEADER} header: an inference "
            "answer without it is not a v1 answer"
        )
    try:
        found = trtis_v1.parse_response_header(text)
    except DecodeError as exc:
        raise DecodeError(f"the answer from {where}: {exc}") from None
    raw = sum(o.raw.batch_byte_size for o in found.output if o.HasField("raw"))
    if raw > len(data):
        raise DecodeError(
            f"the answer from {where} has {len(data)} body bytes, its "
            f"{trtis_v1.RESPONSE_HEADER} names {raw} bytes of RAW outputs"
        )
    if trtis_v1.classes_in_body(found):
        try:
            found = trtis_v1.parse_response_header(data[raw:])
        except DecodeError as exc:
            raise DecodeError(f"the answer from {where}, the header in its body: {exc}") from None
    return found, data


class _Configs:
    """The model configurations read so far, by (model, version)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int], Any] = {}

    def get(self, model: str, version: int, fetch: Any) -> Any:
        key = (model, version)
        if key not in self._known:
            self._known[key] = fetch().model_status[model].config
        return self._known[key]


class V1HttpClient:
    """The v1 API over HTTP (``/api/...``), on :class:`~oipcodec.client.HttpClient`'s pool.

    Thread-safe; close it (or use ``with``).

    Parameters
    ----------
    url, timeout, pool_size, limits, headers, ssl_context
        As :class:`~oipcodec.client.HttpClient` takes them.
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:8000",
        *,
        timeout: float | None = 60.0,
        pool_size: int = 10,
        limits: Limits = DEFAULT_LIMITS,
        headers: Mapping[str, str] | None = None,
        ssl_context: Any = None,
    ) -> None:
        from oipcodec.client.http_client import HttpClient

        self._http = HttpClient(url, timeout=timeout, pool_size=pool_size, limits=limits,
                                headers=headers, ssl_context=ssl_context)  # fmt: skip
        self.limits = limits
        self._configs = _Configs()

    def _call(
        self, method: str, path: str, body: bytes | None = None, header: str | None = None
    ) -> tuple[bytes, Mapping[str, str]]:
        headers = {trtis_v1.REQUEST_HEADER: header} if header is not None else None
        status, data, answer = self._http._request(method, path, body, headers)
        text = answer.get(trtis_v1.STATUS_HEADER)
        where = self._http._where(path)
        if text is None:
            raise DecodeError(
                f"the answer from {where} has no {trtis_v1.STATUS_HEADER} header (HTTP "
                f"{status}): not a v1 server?"
            )
        if text.startswith("code: SUCCESS"):  # the code is the first field written
            return data, answer
        state = _parse_status(text, where)
        if state.code != pb.SUCCESS:
            raise _failed(state, where, status)
        return data, answer

    def live(self) -> bool:
        return self._health("live")

    def ready(self) -> bool:
        return self._health("ready")

    def _health(self, mode: str) -> bool:
        try:
            self._call("GET", f"/api/health/{mode}")
        except ServerError:
            return False
        return True

    def status(self, model: str = "") -> Any:
        """The ``ServerStatus``.

        Parameters
        ----------
        model
            Of this model; every model when empty.
        """
        path = f"/api/status/{model}" if model else "/api/status"
        data, _ = self._call("GET", path + "?format=binary")
        try:
            return pb.ServerStatus.FromString(data)
        except _ProtobufDecodeError as exc:
            raise DecodeError(
                f"the answer from {self._http._where(path)} is not a ServerStatus: {exc}"
            ) from None

    def load_model(self, model: str) -> None:
        self._call("POST", f"/api/modelcontrol/load/{model}")

    def unload_model(self, model: str) -> None:
        self._call("POST", f"/api/modelcontrol/unload/{model}")

    def infer(
        self,
        model: str,
        inputs: Mapping[str, np.ndarray[Any, Any]],
        outputs: Outputs = None,
        *,
        batch_size: int | None = None,
        version: int = -1,
    ) -> V1Result:
        """Run ``model`` on ``inputs``.

        Parameters
        ----------
        model
            The model's name.
        inputs
            Input name -> array.
        outputs
            Names (RAW), or names to ``None`` (RAW) or a class count (CLASS); none: every output,
            RAW.
        batch_size
            The first dimension of every input is the batch; without it inputs go with their whole
            shape and ``batch_size: 1``.
        version
            The model's version; default the server's choice.
        """
        config = self._configs.get(model, version, lambda: self.status(model))
        header, raws = build_header(inputs, outputs, batch_size)
        path = f"/api/infer/{model}" + (f"/{version}" if version > 0 else "")
        body = b"".join(raws)
        data, answer = self._call("POST", path, body, trtis_v1.request_header_text(header))
        found, data = _response_header(data, answer, self._http._where(path))
        view = memoryview(data)
        parts, offset = [], 0
        for output in found.output:
            if not len(output.batch_classes):
                size = output.raw.batch_byte_size
                parts.append(view[offset : offset + size])
                offset += size
        return read_outputs(found, parts, config, config.max_batch_size > 0, self.limits)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> V1HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class V1GrpcClient:
    """The v1 API over gRPC (``nvidia.inferenceserver.GRPCService``).

    Thread-safe; close it (or use ``with``).

    Parameters
    ----------
    target, timeout, limits
        As :class:`~oipcodec.client.GrpcClient` takes them.
    headers
        Metadata, names lower case.
    credentials
        ``grpc.ssl_channel_credentials(...)`` for a server over TLS.
    """

    def __init__(
        self,
        target: str = "127.0.0.1:8001",
        *,
        timeout: float | None = 60.0,
        limits: Limits = DEFAULT_LIMITS,
        headers: Mapping[str, str] | None = None,
        credentials: Any = None,
    ) -> None:
        import grpc

        from oipcodec.proto import trtis_v1_pb2_grpc

        self.target = target
        self.timeout = timeout
        self.limits = limits
        self._metadata = tuple((k.lower(), v) for k, v in (headers or {}).items()) or None
        options = [("grpc.max_receive_message_length", limits.max_body_bytes)]
        if credentials is None:
            self._channel = grpc.insecure_channel(target, options=options)
        else:
            self._channel = grpc.secure_channel(target, credentials, options=options)
        self._stub = trtis_v1_pb2_grpc.GRPCServiceStub(self._channel)
        self._configs = _Configs()
        self._rpc_error = grpc.RpcError
        self._receive_limit = limits.max_body_bytes

    def _rpc(self, method: str, request: Any, checked: bool = True) -> Any:
        """Call the stub's ``method``: a gRPC failure (a deadline, no server) as the OIP
        clients raise it, a failed ``request_status`` (with ``checked``) as ServerError."""
        try:
            answer = getattr(self._stub, method)(
                request, timeout=self.timeout, metadata=self._metadata
            )
        except self._rpc_error as exc:
            raise _grpc_error(exc, self.target, method, self._receive_limit) from None
        if checked and answer.request_status.code != pb.SUCCESS:
            raise _failed(answer.request_status, self.target, None, "grpc")
        return answer

    def live(self) -> bool:
        return bool(self._rpc("Health", pb.HealthRequest(mode="live"), checked=False).health)

    def ready(self) -> bool:
        return bool(self._rpc("Health", pb.HealthRequest(mode="ready"), checked=False).health)

    def status(self, model: str = "") -> Any:
        return self._rpc("Status", pb.StatusRequest(model_name=model)).server_status

    def infer(
        self,
        model: str,
        inputs: Mapping[str, np.ndarray[Any, Any]],
        outputs: Outputs = None,
        *,
        batch_size: int | None = None,
        version: int = -1,
    ) -> V1Result:
        """As :meth:`V1HttpClient.infer`.

        Parameters
        ----------
        model, inputs, outputs, batch_size, version
            As there.
        """
        config = self._configs.get(model, version, lambda: self.status(model))
        header, raws = build_header(inputs, outputs, batch_size)
        request = pb.InferRequest(
            model_name=model,
            model_version=version,
            meta_data=header,
            raw_input=[bytes(raw) for raw in raws],
        )
        answer = self._rpc("Infer", request)
        if not answer.HasField("meta_data"):
            raise DecodeError(
                f"the answer from {self.target} has no meta_data (InferResponseHeader): not "
                "a v1 answer"
            )
        return read_outputs(
            answer.meta_data, answer.raw_output, config, config.max_batch_size > 0, self.limits
        )

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> V1GrpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
