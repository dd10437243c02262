"""Triton's model configuration, both ways: the declarations a model is made of
(:class:`TensorSpec`, :class:`DynamicBatching`), the configuration document a model answers
(:func:`document`, ``GET /v2/models/<name>/config``), and the configuration read into a model:
a model folder's ``config.pbtxt`` / ``config.json`` (:func:`read_config`, :func:`apply_config`)
and a load request's override (:func:`load_override`, :func:`override`).

docs/model-repository.md says what is read and what is refused.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oipcodec import datatypes
from oipcodec.errors import DatatypeError, InternalError, InvalidArgumentError, RepositoryError
from oipcodec.server.queue_policy import (
    DYNAMIC_BATCHING_FIELDS,
    UNLIMITED,
    QueuePolicy,
    batching_settings,
    check_levels,
)

if TYPE_CHECKING:
    from oipcodec.server.model import Model

__all__ = [
    "BACKEND",
    "CONFIG_FILES",
    "DynamicBatching",
    "TensorSpec",
    "apply_config",
    "config_datatype",
    "datatype_of_config",
    "document",
    "load_override",
    "override",
    "read_config",
]

log = logging.getLogger("oipcodec.server")

#: The configuration files a model folder may hold (one of them).
CONFIG_FILES = ("config.json", "config.pbtxt")


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """The metadata of one input or output: name, OIP datatype, shape.

    Parameters
    ----------
    name
        The tensor's name.
    datatype
        Its OIP datatype (``"FP32"``, ``"BYTES"``...); an unknown one raises
        :class:`~oipcodec.DatatypeError` at once.
    shape
        Its dimensions, each ``>= 0`` or ``-1`` for any size.
    optional
        An optional input may be left out of a request; an optional output, out of the
        model's answer.
    """

    name: str
    datatype: str
    shape: tuple[int, ...]
    optional: bool = False

    def __init__(
        self, name: str, datatype: str, shape: Sequence[int], optional: bool = False
    ) -> None:
        try:  # an unknown datatype is a programming error: fail at once
            datatypes.get(datatype)
        except DatatypeError as exc:
            raise exc.for_tensor(name) from None
        dims = tuple(int(d) for d in shape)
        if any(d < -1 for d in dims):
            raise ValueError(f"tensor {name!r}: shape dimensions are >= 0, or -1 for any size")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "datatype", datatype)
        object.__setattr__(self, "shape", dims)
        object.__setattr__(self, "optional", optional)

    def accepts(self, shape: Sequence[int]) -> bool:
        """Whether a request shape fits this one (same rank, equal where not ``-1``).

        Parameters
        ----------
        shape
            The shape a request gives the tensor.
        """
        return len(shape) == len(self.shape) and all(
            want in (-1, got) for want, got in zip(self.shape, shape, strict=True)
        )

    def metadata(self) -> dict[str, Any]:
        """This tensor as an entry of the model metadata's ``inputs`` / ``outputs``."""
        return {"name": self.name, "datatype": self.datatype, "shape": list(self.shape)}


@dataclass(frozen=True, slots=True)
class DynamicBatching:
    """Dynamic batching of a model's requests (Triton's ``dynamic_batching``): requests queue
    per model and ``predict`` runs once per batch of them (docs/batching.md).

    A batch closes when it holds the model's ``max_batch_size`` rows, when it reaches one of
    the preferred sizes (the largest it can), or when its delay has passed since its first
    request was queued. The queue's limits and order are Triton's queue policy
    (:mod:`oipcodec.server.queue_policy`; docs/serving.md#overload).

    Parameters
    ----------
    max_queue_delay_microseconds
        How long a batch waits for more requests after its first was queued (0: not at all,
        it runs with what is queued then).
    preferred_batch_size
        Batch sizes (rows, each ``>= 1``) at which a batch closes before its delay.
    priority_levels
        Levels 1 (first served) to this; 0: one level.
    default_priority_level
        The level of a request whose ``priority`` parameter names none (0 without levels).
    default_queue_policy
        The :class:`~oipcodec.server.queue_policy.QueuePolicy` of each level without one.
    priority_queue_policy
        Policies by level.
    """

    max_queue_delay_microseconds: int = 0
    preferred_batch_size: tuple[int, ...] = ()
    priority_levels: int = 0
    default_priority_level: int = 0
    default_queue_policy: QueuePolicy = UNLIMITED
    priority_queue_policy: Mapping[int, QueuePolicy] = field(default_factory=dict)

    def __init__(
        self,
        max_queue_delay_microseconds: int = 0,
        preferred_batch_size: Iterable[int] = (),
        priority_levels: int = 0,
        default_priority_level: int = 0,
        default_queue_policy: QueuePolicy = UNLIMITED,
        priority_queue_policy: Mapping[int, QueuePolicy] | None = None,
    ) -> None:
        delay = max_queue_delay_microseconds
        if isinstance(delay, bool) or not isinstance(delay, int) or delay < 0:
            raise ValueError(
                f"max_queue_delay_microseconds is an int >= 0, got {max_queue_delay_microseconds!r}"
            )
        sizes = tuple(preferred_batch_size)
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes):
            raise ValueError(f"preferred_batch_size holds ints >= 1, got {list(sizes)!r}")
        policies = dict(priority_queue_policy or {})
        check_levels(priority_levels, default_priority_level, policies, default_queue_policy)
        object.__setattr__(self, "max_queue_delay_microseconds", delay)
        object.__setattr__(self, "preferred_batch_size", tuple(sorted(set(sizes))))
        object.__setattr__(self, "priority_levels", priority_levels)
        object.__setattr__(self, "default_priority_level", default_priority_level)
        object.__setattr__(self, "default_queue_policy", default_queue_policy)
        object.__setattr__(self, "priority_queue_policy", policies)

    def config(self) -> dict[str, Any]:
        """This policy as the ``dynamic_batching`` entry of Triton's JSON configuration."""
        return {
            "preferred_batch_size": list(self.preferred_batch_size),
            "max_queue_delay_microseconds": self.max_queue_delay_microseconds,
            "preserve_ordering": False,
            "priority_levels": self.priority_levels,
            "default_priority_level": self.default_priority_level,
            "default_queue_policy": self.default_queue_policy.config(),
            "priority_queue_policy": {
                str(level): policy.config()
                for level, policy in sorted(self.priority_queue_policy.items())
            },
        }


#: The ``backend`` of every model's configuration: the models run in oipcodec's server.
BACKEND = "oipcodec"


def config_datatype(datatype: str) -> str:
    """An OIP datatype as a model configuration's ``data_type`` (Triton's ``DataType``
    names): ``TYPE_`` + the datatype, except BYTES, which Triton calls ``TYPE_STRING``.

    Parameters
    ----------
    datatype
        An OIP datatype (``"FP32"``).
    """
    return "TYPE_STRING" if datatype == "BYTES" else f"TYPE_{datatype}"


def datatype_of_config(data_type: str) -> str:
    """The OIP datatype of a model configuration's ``data_type`` (:func:`config_datatype`
    reversed): ``TYPE_STRING`` is BYTES.

    Parameters
    ----------
    data_type
        A configuration's ``data_type`` (``"TYPE_FP32"``).

    Raises
    ------
    ValueError
        For a name that is no datatype.
    """
    name = data_type.removeprefix("TYPE_")
    datatype = "BYTES" if name == "STRING" else name
    if not data_type.startswith("TYPE_") or datatype not in datatypes.DATATYPES:
        raise ValueError(f"unknown data_type {data_type!r} (TYPE_FP32, TYPE_STRING...)")
    return datatype


def _dynamic_batching_of(entry: Any) -> DynamicBatching | None:
    """A ``dynamic_batching`` in Triton's JSON form (a configuration override, or a
    configuration file's entry read into JSON) as a policy; ``None`` turns it off."""
    return None if entry is None else DynamicBatching(**batching_settings(entry))


def document(model: Model) -> dict[str, Any]:
    """The model configuration in Triton's JSON form (``GET /v2/models/<name>/config``):
    name, platform, backend, max_batch_size, each input and output with its ``data_type``
    (``TYPE_FP32``...; BYTES is ``TYPE_STRING``) and ``dims`` (without the batch dimension
    when ``max_batch_size`` > 0), and ``parameters``.

    Parameters
    ----------
    model
        The model.
    """

    batched = model.max_batch_size > 0
    extra: dict[str, Any] = {}
    if model.dynamic_batching is not None:
        extra["dynamic_batching"] = model.dynamic_batching.config()
    return {
        "name": model.name,
        "platform": model.platform,
        "backend": BACKEND,
        "max_batch_size": model.max_batch_size,
        "input": [
            {
                "name": spec.name,
                "data_type": config_datatype(spec.datatype),
                "format": "FORMAT_NONE",
                "dims": list(spec.shape[1:] if batched else spec.shape),
                "is_shape_tensor": False,
                "allow_ragged_batch": False,
                "optional": spec.optional,
            }
            for spec in model.inputs or ()
        ],
        "output": [
            {
                "name": spec.name,
                "data_type": config_datatype(spec.datatype),
                "dims": list(spec.shape[1:] if batched else spec.shape),
                "label_filename": "",
                "is_shape_tensor": False,
            }
            for spec in model.outputs or ()
        ],
        "parameters": {
            key: {"string_value": value} for key, value in model.config_parameters.items()
        },
        "model_transaction_policy": {"decoupled": model.decoupled},
        **extra,
    }


def override(model: Model, config: Mapping[str, Any]) -> None:
    """Apply a configuration override in Triton's JSON form (the ``config`` parameter of a
    repository load) to a model: ``max_batch_size`` (a number, or a string of one as
    protobuf's JSON writes int64), ``parameters`` (``{key: {"string_value": value}}``) and
    ``dynamic_batching`` (``{"max_queue_delay_microseconds": n, "preferred_batch_size":
    [...]}``; ``null``: off) change; ``name`` must be the model's; any other entry is refused,
    since a model's tensors, platform and backend are declared in its code.

    Parameters
    ----------
    model
        The model.
    config
        The override, a JSON object.

    Raises
    ------
    ValueError
        Naming what is wrong; the model is then unchanged.
    """

    unknown = sorted(set(config) - {"name", "max_batch_size", "parameters", "dynamic_batching"})
    if unknown:
        raise ValueError(
            f"the configuration sets {unknown}: only max_batch_size, parameters and "
            "dynamic_batching can be overridden (a model's tensors, platform and backend "
            "are declared in its code)"
        )
    if config.get("name", model.name) != model.name:
        raise ValueError(f"the configuration names model {config['name']!r}")
    before = model.max_batch_size, model.config_parameters, model.dynamic_batching
    try:
        if "dynamic_batching" in config:
            model.dynamic_batching = _dynamic_batching_of(config["dynamic_batching"])
        if "max_batch_size" in config:
            size = config["max_batch_size"]
            if isinstance(size, str) and size.isascii() and size.isdigit():
                size = int(size)
            model.max_batch_size = size
        if "parameters" in config:
            entries = config["parameters"]
            if not isinstance(entries, Mapping):
                raise ValueError(f"parameters must be an object, got {entries!r}")
            # _check_config refuses what is not a string (a missing string_value too).
            model.config_parameters = {
                key: value.get("string_value") if isinstance(value, Mapping) else value  # type: ignore[misc]
                for key, value in entries.items()
            }
        model._check_config()
    except ValueError:
        model.max_batch_size, model.config_parameters, model.dynamic_batching = before
        raise


def load_override(name: str, parameters: Mapping[str, Any]) -> dict[str, Any] | None:
    """The configuration override among a load request's parameters (its ``config``, a JSON
    object), or None.

    Parameters
    ----------
    name
        The model to load, named by the errors.
    parameters
        The load request's parameters.

    Raises
    ------
    InternalError
        For model files (``file:<path>`` parameters), with Triton's words for a repository
        that cannot be read.
    InvalidArgumentError
        For a ``config`` that is not a JSON object.
    """
    files = sorted(key for key in parameters if key.startswith("file:"))
    if files:
        raise InternalError(
            f"failed to load '{name}': failed to poll from model repository: model files "
            f"in a load request are not supported; put them into the model's folder of a "
            f"model repository on disk ({files[0][:80]!r})"
        )
    text = parameters.get("config")
    if text is None:
        return None
    try:
        # orjson bounds the nesting (1024 levels): json.loads would recurse to a
        # RecursionError on a config of 100,000 '['.
        config = orjson.loads(text) if isinstance(text, (str, bytes)) else text
    except orjson.JSONDecodeError as exc:
        raise InvalidArgumentError(
            f"failed to load '{name}': its 'config' parameter is not valid JSON ({exc})"
        ) from None
    if not isinstance(config, dict):
        raise InvalidArgumentError(
            f"failed to load '{name}': its 'config' parameter is not a JSON object "
            "(Triton's model configuration in JSON)"
        )
    return config


def read_config(folder: Path, name: str) -> tuple[Any, str] | None:
    """The model configuration of a model folder (an :mod:`oipcodec.proto` ``ModelConfig``)
    and its file (``<name>/config.json``), or None when it has no configuration file.

    Parameters
    ----------
    folder
        The model's folder.
    name
        The model's name (its folder's): a configuration naming another is refused.

    Raises
    ------
    RepositoryError
        When the configuration cannot be read, names another model, or both files are there.
    """
    from google.protobuf import json_format, text_format

    from oipcodec.proto import open_inference_grpc_pb2 as pb2

    found = [folder / f for f in CONFIG_FILES if (folder / f).is_file()]
    if not found:
        return None
    where = f"{name}/{found[0].name}"
    if len(found) > 1:
        raise RepositoryError(f"{name}: both {' and '.join(CONFIG_FILES)}; keep one")
    path = found[0]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RepositoryError(f"{where}: cannot read it: {exc}") from None
    config = pb2.ModelConfig()
    ignored: list[str] = []
    try:
        if path.suffix == ".json":
            document = json.loads(text)
            if not isinstance(document, dict):
                raise RepositoryError(f"{where}: not a JSON object")
            known = config.DESCRIPTOR.fields_by_name
            ignored = sorted(key for key in document if key not in known)
            # Unknown fields of the message itself are left out, with a warning; within the
            # fields read, an unknown name or value (a data_type) is an error.
            read = {key: value for key, value in document.items() if key in known}
            json_format.ParseDict(read, config)
        else:
            try:
                text_format.Parse(text, config)
            except text_format.ParseError as exc:
                if "no field named" not in str(exc):
                    raise
                config = pb2.ModelConfig()
                text_format.Parse(text, config, allow_unknown_field=True)
                ignored = [str(exc).rsplit(":", 1)[-1].strip() + " and maybe others"]
    except (ValueError, json_format.ParseError, text_format.ParseError) as exc:
        if isinstance(exc, RepositoryError):
            raise
        raise RepositoryError(f"{where}: {' '.join(str(exc).split())}") from None
    ignored += _unread_fields(config)
    if ignored:
        log.warning("%s: ignored what oipcodec does not read: %s", where, ", ".join(ignored))
    if config.name and config.name != name:
        raise RepositoryError(
            f"{where} names model {config.name!r}; it must be the folder's name {name!r}"
        )
    return config, where


#: The fields of Triton's model configuration the server acts on (dotted paths; within
#: ``_READ_WITHIN``, field by field). The schema holds every field of Triton's, so any Triton
#: configuration parses; the others set are named in one warning when it is read.
_READ_FIELDS = frozenset(
    {
        "name",
        "max_batch_size",
        "parameters",
        "input.name",
        "input.data_type",
        "input.dims",
        "input.optional",
        "output.name",
        "output.data_type",
        "output.dims",
        "output.label_filename",
        "dynamic_batching.preferred_batch_size",
        "dynamic_batching.max_queue_delay_microseconds",
        *(f"dynamic_batching.{name}" for name in DYNAMIC_BATCHING_FIELDS),
        "model_transaction_policy",
    }
)
_READ_WITHIN = frozenset({"input", "output", "dynamic_batching"})


def _unread_fields(message: Any, prefix: str = "") -> list[str]:
    """The dotted paths of the fields set in a configuration ``message`` that the server
    does not act on (each once, in the order met)."""
    from google.protobuf.message import Message as ProtoMessage

    found: list[str] = []
    for described, value in message.ListFields():
        path = prefix + described.name
        if path in _READ_FIELDS:
            continue
        if path not in _READ_WITHIN:
            found.append(path)
            continue
        for item in [value] if isinstance(value, ProtoMessage) else value:
            found += [name for name in _unread_fields(item, path + ".") if name not in found]
    return found


def apply_config(model: Model, config: Any, folder: Path) -> None:
    """Give a model what the configuration of its folder declares.

    Tensors declared there replace the code's (their dims take a leading -1 when
    ``max_batch_size`` > 0, as Triton's do), and then its ``max_batch_size`` applies even when
    0; without tensors, a ``max_batch_size`` above 0 applies.

    Parameters
    ----------
    model
        The model to configure.
    config
        Its folder's configuration, as :func:`read_config` returns it.
    folder
        The model's folder (where a ``label_filename`` is found).
    """
    batch = int(config.max_batch_size)
    changes: dict[str, Any] = {}
    if config.input or config.output:
        lead = [-1] if batch > 0 else []
        for kind, entries in (("inputs", config.input), ("outputs", config.output)):
            specs = []
            for entry in entries:
                try:
                    datatype = datatype_of_config(_data_type_name(entry.data_type))
                except ValueError as exc:
                    raise RepositoryError(f"{kind[:-1]} {entry.name!r}: {exc}") from None
                optional = bool(getattr(entry, "optional", False))
                specs.append(TensorSpec(entry.name, datatype, lead + list(entry.dims), optional))
            changes[kind] = specs
        changes["max_batch_size"] = batch
    elif batch > 0:
        changes["max_batch_size"] = batch
    if config.HasField("dynamic_batching"):
        if changes.get("max_batch_size", model.max_batch_size) > 0:
            changes["dynamic_batching"] = _dynamic_batching(config.dynamic_batching, model.name)
        else:  # a model without a batch dimension has nothing to batch: as before, ignored
            log.warning(
                "model %r: dynamic_batching ignored: its max_batch_size is 0 (no batch "
                "dimension to batch along)",
                model.name,
            )
    if config.HasField("model_transaction_policy"):
        changes["decoupled"] = bool(config.model_transaction_policy.decoupled)
    if config.parameters:
        changes["config_parameters"] = {k: v.string_value for k, v in config.parameters.items()}
    labels = {
        o.name: _labels_file(folder, o.label_filename, model.name)
        for o in config.output
        if o.label_filename
    }
    if labels:
        changes["labels"] = labels
    model.configure(**changes)


def _dynamic_batching(entry: Any, name: str) -> DynamicBatching:
    """A configuration file's ``dynamic_batching`` (a protobuf message) as the model's
    policy, read as a configuration override's JSON is."""
    from google.protobuf import json_format

    try:
        policy = _dynamic_batching_of(
            json_format.MessageToDict(entry, preserving_proto_field_name=True)
        )
    except ValueError as exc:
        raise RepositoryError(f"model {name!r}: dynamic_batching: {exc}") from None
    assert policy is not None
    return policy


def _labels_file(folder: Path, filename: str, name: str) -> str:
    """The path of a ``label_filename``: a relative path inside the model's folder (its links
    resolved), else :class:`RepositoryError` naming the model and the file. The model reads it
    (a regular file of bounded size: :func:`~oipcodec.server.model.read_labels_file`)."""
    where = f"model {name!r} label_filename {filename!r}"
    parts = Path(filename).parts
    if os.path.isabs(filename) or ".." in parts or "\0" in filename:
        raise RepositoryError(
            f"{where}: a labels file is a path relative to the model's folder, without '..'"
        )
    path = folder / filename
    home = folder.resolve()
    if not path.resolve().is_relative_to(home):
        raise RepositoryError(f"{where}: leads out of the model's folder (a symlink)")
    return str(path)


def _data_type_name(value: int) -> str:
    from oipcodec.proto import open_inference_grpc_pb2 as pb2

    name: str = pb2.DataType.Name(value)
    if name == "TYPE_INVALID":
        raise ValueError("no data_type given")
    return name
