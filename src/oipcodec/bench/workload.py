"""What one benchmark row sends and how its answers are checked: the identity model's echo of a
payload, or, for a model that declares its inputs, a request generated from its metadata, as
Triton's perf_analyzer builds one.

A model's workload comes from its metadata and, over REST, its configuration
(``max_batch_size``): deterministic pseudo-random values of each declared input's datatype and
shape, or real ones from ``--input-data FILE`` (perf_analyzer's JSON form,
:func:`read_input_data`). A ``-1`` dimension takes its size from ``--shape NAME:d1,d2,...``
(after the batch dimension, ``--batch-size``, for a batching model); one left without a size
is an error naming the input and the option, as perf_analyzer guesses none.

Every answer is checked: its status, and each declared output present with its declared
datatype and a shape the declared one accepts; an identity workload also checks, once per row,
that the answer holds the values sent. In full: docs/benchmarks.md, "Your own model".
"""

from __future__ import annotations

import base64
import json
import math
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from oipcodec import datatypes
from oipcodec.bench.payloads import INPUT, Payload, make_tensor
from oipcodec.errors import OIPError, WorkloadError
from oipcodec.types import Tensor

__all__ = [
    "Declared",
    "Output",
    "Workload",
    "WorkloadError",
    "check_answer",
    "echo_workload",
    "echoed",
    "model_workload",
    "parse_shape",
    "read_input_data",
    "read_metadata",
]


class Output(NamedTuple):
    """One output of an answer as a peer client gives it (oipcodec's clients give Tensors,
    which have the same fields)."""

    name: str
    datatype: str
    shape: tuple[int, ...]
    data: Any


@dataclass(frozen=True)
class Declared:
    """One tensor of a model's metadata: name, datatype, shape (``-1`` = any size)."""

    name: str
    datatype: str
    shape: tuple[int, ...]

    def accepts(self, shape: Sequence[int]) -> bool:
        """Whether an answer's shape fits this one (same rank, equal where not ``-1``)."""
        return len(shape) == len(self.shape) and all(
            want in (-1, got) for want, got in zip(self.shape, shape, strict=True)
        )

    def label(self) -> str:
        return f"{self.name} {'x'.join(map(str, self.shape)) or 'scalar'} {self.datatype}"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "datatype": self.datatype, "shape": list(self.shape)}


@dataclass
class Workload:
    """The requests of one row (sent round robin) and what their answers must hold."""

    model: str
    #: One or more requests' input tensors; callers cycle through them.
    requests: list[list[Tensor]]
    #: The declared outputs: each answer must hold these (empty: whatever comes back).
    outputs: list[Declared]
    #: The payload it stands for in the table and results.json.
    payload: Payload
    #: The identity model: the answer holds the values sent (checked once per row).
    echo: bool = False
    #: The model batches (``max_batch_size > 0``): each input's first dimension is the batch
    #: (the v1 paths send it as the header's ``batch_size``).
    batching: bool = False
    #: The answer of a first request (set by the worker): the outputs' sizes for shared
    #: memory, and the response the codec timings encode and decode.
    answer: list[Any] = field(default_factory=list)
    #: The largest byte size of each output over the answers to every request (set by the
    #: worker): the shared-memory output regions hold any of them.
    region_sizes: dict[str, int] = field(default_factory=dict)

    @property
    def inputs(self) -> list[Tensor]:
        """The first request's inputs (what the codec timings and checks use)."""
        return self.requests[0]

    @property
    def output_names(self) -> list[str]:
        return [d.name for d in self.outputs]

    def datatypes(self) -> list[str]:
        """Every datatype the row's requests and answers carry."""
        names = [t.datatype for t in self.inputs] + [d.datatype for d in self.outputs]
        return list(dict.fromkeys(names))


def echo_workload(payload: Payload, model: str) -> Workload:
    """The identity model's row: the payload as ``INPUT0``, echoed back under the same name."""
    tensor = make_tensor(payload)
    declared = Declared(INPUT, tensor.datatype, tensor.shape)
    return Workload(model, [[tensor]], [declared], payload, echo=True, answer=[tensor])


# ------------------------------------------------------------------------------ options


def parse_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``NAME:d1,d2,...`` (perf_analyzer's ``--shape``) as the name and the dimensions."""
    name, sep, dims = text.rpartition(":")
    if not sep or not name:
        raise ValueError(f"--shape for a model input is NAME:d1,d2,... , got {text!r}")
    try:
        values = tuple(int(d) for d in dims.split(",") if d.strip())
    except ValueError:
        raise ValueError(
            f"--shape {text!r}: the dimensions must be integers separated by commas"
        ) from None
    if any(d < 0 for d in values):
        raise ValueError(f"--shape {text!r}: the dimensions must be non-negative")
    return name, values


def read_input_data(path: str) -> list[dict[str, Any]]:
    """The requests' values from a JSON file in perf_analyzer's form::

        {"data": [{"INPUT0": [1, 2, 3, 4], "INPUT1": {"content": [[1.5], [2.5]], "shape": [2, 1]}},
                  {"INPUT0": {"b64": "AQAAAA=="}, ...}]}

    Each entry of ``data`` is one request (sent round robin). An input's value is a list (flat
    or nested; its shape from ``--shape`` or the declared one), ``{"content": list, "shape":
    dims}``, or ``{"b64": text}`` (the raw little-endian bytes, not for BYTES). BYTES values
    are strings. Returns the entries, checked for form only (values are checked against the
    model when the requests are built).
    """
    try:
        document = json.loads(Path(path).read_text())
    except OSError as exc:
        raise WorkloadError(f"--input-data {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"--input-data {path}: not JSON ({exc})") from None
    entries = document.get("data") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not entries:
        raise WorkloadError(
            f'--input-data {path}: expected {{"data": [{{"INPUT": [...], ...}}, ...]}}, '
            "a non-empty list of requests"
        )
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise WorkloadError(
                f"--input-data {path}: data[{index}] must be an object of inputs "
                "(sequences of requests are not supported)"
            )
    return entries


# ------------------------------------------------------------------------------ metadata


def read_metadata(model: str, url: str | None, grpc_target: str | None, timeout: float,
                  ours: Any) -> dict[str, Any]:  # fmt: skip
    """The model's metadata (over REST when a URL is given, else gRPC) and its
    ``max_batch_size`` from the configuration (over the same transport; 0 when the server
    has no configuration to give)."""
    if ours.http is not None:
        metadata = dict(ours.http.model_metadata(model, timeout=timeout))
        metadata["max_batch_size"] = _max_batch_size(model, ours.http, timeout)
    else:
        metadata = dict(ours.grpc.model_metadata(model, timeout=timeout))
        metadata["max_batch_size"] = _max_batch_size_grpc(model, ours.grpc, timeout)
    return metadata


def _max_batch_size_grpc(model: str, grpc_client: Any, timeout: float) -> int:
    """``max_batch_size`` from Triton's gRPC ModelConfig (on the client's channel, with its
    headers), 0 when the server does not offer the call."""
    from oipcodec.proto import open_inference_grpc_pb2 as pb2

    call = grpc_client._channel.unary_unary(
        "/inference.GRPCInferenceService/ModelConfig",
        request_serializer=pb2.ModelConfigRequest.SerializeToString,
        response_deserializer=pb2.ModelConfigResponse.FromString,
    )
    try:
        answer = call(pb2.ModelConfigRequest(name=model), timeout=timeout,
                      metadata=grpc_client._metadata)  # fmt: skip
    except Exception:  # UNIMPLEMENTED (KServe, MLServer), or no such model: no batching read
        return 0
    return max(0, int(answer.config.max_batch_size))


def _max_batch_size(model: str, http: Any, timeout: float) -> int:
    """``max_batch_size`` of the model's configuration, 0 when the server has none (read
    with the run's REST client: its headers and TLS)."""
    path = f"/v2/models/{urllib.parse.quote(model, safe='')}/config"
    try:
        status, body, _ = http._get(path, timeout)
        config = json.loads(body) if status == 200 else {}
    except (OSError, ValueError, OIPError):  # no configuration endpoint (KServe, MLServer)
        return 0
    value = config.get("max_batch_size", 0) if isinstance(config, dict) else 0
    return value if isinstance(value, int) and value > 0 else 0


def _declared(items: Iterable[Mapping[str, Any]] | None) -> list[Declared]:
    return [
        Declared(str(item["name"]), str(item["datatype"]), tuple(int(d) for d in item["shape"]))
        for item in items or ()
    ]


def model_workload(
    metadata: Mapping[str, Any],
    shapes: Mapping[str, Sequence[int]] | None = None,
    batch_size: int = 1,
    input_data: Sequence[Mapping[str, Any]] | None = None,
    seed: int = 0,
) -> Workload | None:
    """The row of a model that declares its inputs (None when it declares none: an echo
    model, measured with the payloads). Raises WorkloadError naming the input and the option
    when a ``-1`` dimension has no value, or ``--shape``/``--input-data`` do not fit."""
    inputs = _declared(metadata.get("inputs"))
    if not inputs:
        return None
    model = str(metadata.get("name", ""))
    batching = int(metadata.get("max_batch_size", 0) or 0) > 0
    shapes = dict(shapes or {})
    unknown = sorted(set(shapes) - {d.name for d in inputs})
    if unknown:
        raise WorkloadError(
            f"--shape names {', '.join(unknown)}, not an input of model {model!r} "
            f"(its inputs: {', '.join(d.name for d in inputs)})"
        )
    if input_data:
        requests = [
            [_given(spec, entry, index, shapes, batching, batch_size) for spec in inputs]
            for index, entry in enumerate(input_data)
        ]
        for index, entry in enumerate(input_data):
            extra = sorted(set(entry) - {d.name for d in inputs})
            if extra:
                raise WorkloadError(
                    f"--input-data data[{index}] names {', '.join(extra)}, not an input of "
                    f"model {model!r}"
                )
    else:
        requests = [
            [
                _generated(spec, _shape(spec, shapes, batching, batch_size), seed + i)
                for i, spec in enumerate(inputs)
            ]
        ]
    first = requests[0]
    payload = Payload(
        model,
        "+".join(dict.fromkeys(t.datatype for t in first)),
        first[0].shape,
        "generated from the model's metadata: "
        + ", ".join(Declared(t.name, t.datatype, t.shape).label() for t in first),
    )
    return Workload(model, requests, _declared(metadata.get("outputs")), payload, batching=batching)


def _shape(spec: Declared, shapes: Mapping[str, Sequence[int]], batching: bool,
           batch_size: int, need: bool = True) -> tuple[int, ...] | None:  # fmt: skip
    """The shape to send for ``spec``: --shape (without the batch dimension for a batching
    model, or whole), else the declared one with the batch dimension set."""
    rank = len(spec.shape)
    given = shapes.get(spec.name)
    if given is not None:
        dims = tuple(given)
        if batching and len(dims) == rank - 1:
            dims = (batch_size, *dims)
        if len(dims) != rank or not spec.accepts(dims):
            expected = "x".join(map(str, spec.shape))
            after = " (the batch dimension may be left out)" if batching else ""
            raise WorkloadError(
                f"--shape {spec.name}:{','.join(map(str, given))} does not fit its declared "
                f"shape [{expected}]{after}"
            )
        return dims
    dims = tuple(batch_size if batching and i == 0 and d == -1 else d
                 for i, d in enumerate(spec.shape))  # fmt: skip
    if -1 in dims:
        if not need:
            return None
        example = ",".join("16" if d == -1 else str(d) for d in dims[1 if batching else 0 :])
        raise WorkloadError(
            f"input {spec.name!r} has a variable dimension ({list(spec.shape)}): give its "
            f"size with --shape {spec.name}:{example}"
        )
    return dims


def _generated(spec: Declared, shape: tuple[int, ...] | None, seed: int) -> Tensor:
    """Deterministic pseudo-random values of ``spec``'s datatype (BYTES: strings of 8-64
    letters), as the payloads' tensors are made."""
    assert shape is not None
    tensor = make_tensor(Payload(spec.name, spec.datatype, shape, ""), seed=seed)
    return Tensor(spec.name, spec.datatype, shape, tensor.data)


def _given(spec: Declared, entry: Mapping[str, Any], index: int,
           shapes: Mapping[str, Sequence[int]], batching: bool,
           batch_size: int) -> Tensor:  # fmt: skip
    """``spec``'s tensor from one --input-data entry."""
    where = f"--input-data data[{index}] input {spec.name!r}"
    if spec.name not in entry:
        raise WorkloadError(f"{where}: missing (every request must give every input)")
    value = entry[spec.name]
    shape: tuple[int, ...] | None = None
    if isinstance(value, dict):
        if "shape" in value:
            try:
                shape = tuple(int(d) for d in value["shape"])
            except (TypeError, ValueError):
                raise WorkloadError(f"{where}: 'shape' must be a list of integers") from None
            if not spec.accepts(shape):
                raise WorkloadError(
                    f"{where}: shape {list(shape)} does not fit its declared shape "
                    f"{list(spec.shape)}"
                )
        if "b64" in value:
            data = _from_b64(where, spec.datatype, value["b64"])
        elif "content" in value:
            data = _from_list(where, spec.datatype, value["content"])
        else:
            raise WorkloadError(f"{where}: expected a list, or an object with 'content' or 'b64'")
    else:
        data = _from_list(where, spec.datatype, value)
    if shape is None:
        shape = _shape(spec, shapes, batching, batch_size, need=False)
    if shape is None:  # one variable dimension: the element count tells it
        dims = [d if d != -1 else (batch_size if batching and i == 0 else -1)
                for i, d in enumerate(spec.shape)]  # fmt: skip
        known = math.prod(d for d in dims if d != -1)
        if dims.count(-1) != 1 or known == 0 or data.size % known:
            raise WorkloadError(
                f"{where}: {data.size} values and a shape with variable dimensions "
                f"{list(spec.shape)}: give its shape ('shape' in the file, or --shape)"
            )
        shape = tuple(data.size // known if d == -1 else d for d in dims)
    if math.prod(shape) != data.size:
        raise WorkloadError(f"{where}: {data.size} values do not fill shape {list(shape)}")
    return Tensor(spec.name, spec.datatype, shape, data.reshape(shape))


def _from_list(where: str, datatype: str, content: Any) -> np.ndarray[Any, Any]:
    if not isinstance(content, list):
        raise WorkloadError(f"{where}: expected a list of values, got {type(content).__name__}")
    flat = np.asarray(content, dtype=object).ravel()
    if datatype == "BYTES":
        if not all(isinstance(v, str) for v in flat):
            raise WorkloadError(f"{where}: BYTES values must be strings")
        out = np.empty(flat.size, dtype=object)
        out[:] = [v.encode() for v in flat]
        return out
    target = np.dtype(np.float32) if datatype == "BF16" else datatypes.to_numpy(datatype)
    try:
        values = np.array(flat.tolist(), dtype=target)
        exact = np.array(flat.tolist()) == values
    except (OverflowError, TypeError, ValueError) as exc:
        raise WorkloadError(f"{where}: not {datatype} values ({exc})") from None
    if target.kind in "iub" and not bool(np.all(exact)):
        raise WorkloadError(f"{where}: values that are not {datatype} (out of range or not whole)")
    if datatype == "BF16" and datatypes.BF16_DTYPE is not None:
        return values.astype(datatypes.BF16_DTYPE)
    return values


def _from_b64(where: str, datatype: str, text: Any) -> np.ndarray[Any, Any]:
    if datatype == "BYTES":
        raise WorkloadError(f"{where}: 'b64' is not supported for BYTES (give strings)")
    row = datatypes.get(datatype)
    try:
        raw = base64.b64decode(str(text), validate=True)
    except ValueError:
        raise WorkloadError(f"{where}: 'b64' is not base64") from None
    if len(raw) % row.itemsize:
        raise WorkloadError(
            f"{where}: 'b64' holds {len(raw)} bytes, not a whole number of {datatype} values "
            f"({row.itemsize} bytes each)"
        )
    dtype = row.numpy_dtype if row.numpy_dtype is not None else np.dtype(np.uint16)
    values = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype)
    if row.numpy_dtype is None:  # BF16 without ml_dtypes: the float32 of each
        values = (values.astype(np.uint32) << 16).view(np.float32)
    return values


# ------------------------------------------------------------------------------ answers


def echoed(workload: Workload, got: dict[str, Any]) -> dict[str, Any]:
    """An identity's outputs by name, the one a server's model named itself (MLServer's
    codecs answer ``output-0``) taken as the input echoed: an echo workload sends one
    input, and one output that is not named after it can only be that input back."""
    if workload.echo and len(got) == 1 and len(workload.outputs) == 1:
        (name,) = workload.output_names
        if name not in got:
            return {name: next(iter(got.values()))}
    return got


def check_answer(workload: Workload, outputs: Sequence[Any]) -> None:
    """Raise ValueError unless every declared output is in ``outputs`` with its declared
    datatype and a shape its declared one accepts."""
    got = {t.name: t for t in outputs}
    got = echoed(workload, got)
    for spec in workload.outputs:
        tensor = got.get(spec.name)
        if tensor is None:
            raise ValueError(
                f"the answer has no output {spec.name!r} (it has {', '.join(got) or 'none'})"
            )
        if tensor.datatype != spec.datatype:
            raise ValueError(f"output {spec.name!r} is {tensor.datatype}, declared {spec.datatype}")
        if not spec.accepts(tensor.shape):
            raise ValueError(
                f"output {spec.name!r} has shape {list(tensor.shape)}, declared {list(spec.shape)}"
            )
