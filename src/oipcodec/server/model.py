"""The model API: what a model declares (its tensors' metadata) and what it implements.

A model is a subclass of :class:`Model` with a ``predict`` method taking and returning numpy
arrays by tensor name. The server checks every request against the declared inputs *before*
``predict`` runs (names, datatypes, shapes with ``-1`` for a variable dimension; ``-1``
appears only in metadata, a request's shapes are non-negative), so
``predict`` only ever sees arrays it was promised::

    class Scale(Model):
        name = "scale"
        inputs = [TensorSpec("X", "FP32", [-1, 4])]
        outputs = [TensorSpec("Y", "FP32", [-1, 4])]

        def predict(self, inputs, parameters):
            return {"Y": inputs["X"] * float(parameters.get("factor", 2.0))}

``predict`` may be ``async def``. A plain ``def predict`` runs on the event loop (fastest for
cheap numpy work); set ``run_in_thread = True`` when it blocks for long (a real network), and
it runs in a worker thread while the server keeps answering.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec.errors import InternalError, InvalidArgumentError, OIPError
from oipcodec.types import Parameters, Tensor

__all__ = ["Model", "TensorSpec"]

Arrays = dict[str, np.ndarray[Any, Any]]

# "not given" for constructor keywords whose meaningful values include None
_UNSET: Any = object()


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """The metadata of one input or output: name, OIP datatype, shape (``-1`` = any size).

    An ``optional`` input may be left out of a request.
    """

    name: str
    datatype: str
    shape: tuple[int, ...]
    optional: bool = False

    def __init__(
        self, name: str, datatype: str, shape: Sequence[int], optional: bool = False
    ) -> None:
        datatypes.get(datatype)  # an unknown datatype is a programming error: fail at once
        dims = tuple(int(d) for d in shape)
        if any(d < -1 for d in dims):
            raise ValueError(f"tensor {name!r}: shape dimensions are >= 0, or -1 for any size")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "datatype", datatype)
        object.__setattr__(self, "shape", dims)
        object.__setattr__(self, "optional", optional)

    def accepts(self, shape: Sequence[int]) -> bool:
        """Whether a request shape fits this one (same rank, equal where not ``-1``)."""
        return len(shape) == len(self.shape) and all(
            want in (-1, got) for want, got in zip(self.shape, shape, strict=True)
        )

    def metadata(self) -> dict[str, Any]:
        """This tensor as an entry of the model metadata's ``inputs`` / ``outputs``."""
        return {"name": self.name, "datatype": self.datatype, "shape": list(self.shape)}


class Model:
    """Base class of the models a server serves.

    Class attributes (or constructor keywords) declare the model:

    - ``name``, ``version`` (a string; default ``"1"``), ``platform`` (free text);
    - ``inputs`` / ``outputs``: sequences of :class:`TensorSpec`. ``inputs = None`` accepts any
      inputs unchecked (the identity model); ``outputs = None`` answers whatever ``predict``
      returns, each output's datatype taken from its array.
    - ``max_batch_size`` and ``labels`` (class labels by output name), which the
      classification extension uses (see docs/classification.md).

    Subclasses implement :meth:`predict`, and optionally :meth:`load` / :meth:`unload` (called
    when the server starts and stops, and by the repository load/unload endpoints; either may
    be ``async def``; a plain ``def`` runs in a worker thread, as loading may be slow).
    """

    name: str = ""
    version: str = "1"
    platform: str = "oipcodec"
    inputs: Sequence[TensorSpec] | None = ()
    outputs: Sequence[TensorSpec] | None = ()
    #: Run a plain ``def predict`` in a worker thread instead of on the event loop (it may
    #: then run in several threads at once, one per request in flight).
    run_in_thread: bool = False
    #: Triton's ``max_batch_size``: > 0 when the first dimension of every input and output is
    #: the batch (classification then ranks each batch row apart); 0 when the model does not
    #: batch.
    max_batch_size: int = 0
    #: Class labels for the classification extension, by output name: a sequence of labels
    #: (label ``i`` names class index ``i``) or the path of a labels file with one label per
    #: line (Triton's ``label_filename``). Read and checked once, when the model is created.
    labels: Mapping[str, Sequence[str] | str | os.PathLike[str]] | None = None

    def __init__(
        self,
        name: str | None = None,
        version: str | None = None,
        *,
        platform: str | None = None,
        inputs: Sequence[TensorSpec] | None = _UNSET,
        outputs: Sequence[TensorSpec] | None = _UNSET,
    ) -> None:
        if name is not None:
            self.name = name
        if version is not None:
            self.version = str(version)
        if platform is not None:
            self.platform = platform
        if inputs is not _UNSET:
            self.inputs = None if inputs is None else tuple(inputs)
        if outputs is not _UNSET:
            self.outputs = None if outputs is None else tuple(outputs)
        if not self.name or "/" in self.name:
            raise ValueError(f"a model needs a name without '/', got {self.name!r}")
        self.version = str(self.version)
        if not self.version or "/" in self.version:
            raise ValueError(f"model {self.name!r}: a version is a non-empty string without '/'")
        self._class_labels = _read_labels(self)

    # ------------------------------------------------------------------ what subclasses write

    def load(self) -> Awaitable[None] | None:
        """Prepare the model (read weights...). Called before the model is marked ready."""
        return None

    def unload(self) -> Awaitable[None] | None:
        """Release what :meth:`load` took. Called when the model is unloaded."""
        return None

    def predict(
        self, inputs: Arrays, parameters: Parameters
    ) -> Mapping[str, Any] | Awaitable[Mapping[str, Any]]:
        """Compute the outputs: a mapping from output name to a numpy array (or anything
        ``numpy.asarray`` takes, or a :class:`~oipcodec.Tensor`).

        ``inputs`` maps each input name to an array of the request's shape and datatype
        (BYTES: object array of ``bytes``; BF16: ``ml_dtypes.bfloat16``). Arrays decoded from
        binary data are read-only views of the request body: copy one before writing to it.
        ``parameters`` are the request's parameters, without the transport ones
        (``binary_data_output``...).
        """
        raise NotImplementedError(f"model {self.name!r} does not implement predict")

    # ------------------------------------------------------------------ used by the server

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.predict)

    def metadata(self, versions: Sequence[str] | None = None) -> dict[str, Any]:
        """The model metadata document of the OIP (``GET /v2/models/<name>``): name, versions,
        platform, and each input and output with its datatype and shape."""
        return {
            "name": self.name,
            "versions": list(versions) if versions is not None else [self.version],
            "platform": self.platform,
            "inputs": [spec.metadata() for spec in self.inputs or ()],
            "outputs": [spec.metadata() for spec in self.outputs or ()],
        }

    def check_inputs(self, tensors: Sequence[Tensor]) -> Arrays:
        """The request's inputs as arrays by name, after checking them against ``inputs``.

        Raises :class:`~oipcodec.server.InvalidArgumentError` naming the input and what the
        model expects.
        """
        arrays: Arrays = {}
        for tensor in tensors:
            data = tensor.data
            arrays[tensor.name] = data if data.shape == tensor.shape else data.reshape(tensor.shape)
        if self.inputs is None:
            return arrays
        specs = {spec.name: spec for spec in self.inputs}
        for tensor in tensors:
            spec = specs.get(tensor.name)
            if spec is None:
                raise InvalidArgumentError(
                    f"unexpected inference input '{tensor.name}' for model '{self.name}'; "
                    f"its inputs are {_names(self.inputs)}"
                )
            if tensor.datatype != spec.datatype:
                raise InvalidArgumentError(
                    f"input '{tensor.name}' of model '{self.name}' has datatype "
                    f"{tensor.datatype}, the model expects {spec.datatype}"
                )
            if not spec.accepts(tensor.shape):
                raise InvalidArgumentError(
                    f"input '{tensor.name}' of model '{self.name}' has shape "
                    f"{list(tensor.shape)}, the model expects {list(spec.shape)} "
                    "(-1: any size)"
                )
        missing = [s.name for s in self.inputs if not s.optional and s.name not in arrays]
        if missing:
            raise InvalidArgumentError(
                f"model '{self.name}' expects input(s) {missing} that the request does not have"
            )
        return arrays

    def output_tensor(self, name: str, value: Any) -> Tensor:
        """An output of :meth:`predict` as a :class:`Tensor` of its declared datatype."""
        spec = None
        if self.outputs is not None:
            spec = next((s for s in self.outputs if s.name == name), None)
        try:
            if isinstance(value, Tensor):
                tensor = (
                    value
                    if value.name == name
                    else Tensor(
                        name, value.datatype, value.shape, value.data, dict(value.parameters)
                    )
                )
            else:
                array = value if isinstance(value, np.ndarray) else np.asarray(value)
                datatype = spec.datatype if spec is not None else datatypes.datatype_of(array)
                tensor = Tensor(name, datatype, array.shape, array)
        except OIPError as exc:
            raise InternalError(
                f"model '{self.name}' returned an invalid output '{name}': {exc.reason}"
            ) from None
        if spec is not None and tensor.datatype != spec.datatype:
            raise InternalError(
                f"model '{self.name}' returned output '{name}' as {tensor.datatype}, "
                f"its metadata says {spec.datatype}"
            )
        return tensor

    def class_labels(self, output: str) -> tuple[bytes, ...] | None:
        """The labels of ``output`` for classification (UTF-8), or ``None`` when it has none."""
        table = getattr(self, "_class_labels", None)
        if table is None:  # a subclass whose __init__ did not call Model.__init__
            table = self._class_labels = _read_labels(self)
        return table.get(output)

    def output_names(self) -> list[str] | None:
        """The declared output names (``None`` when outputs are not declared)."""
        return None if self.outputs is None else [s.name for s in self.outputs]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} version {self.version!r}>"


def _names(specs: Sequence[TensorSpec]) -> list[str]:
    return [spec.name for spec in specs]


def _read_labels(model: Model) -> dict[str, tuple[bytes, ...]]:
    """``model.labels`` read and checked: every key a declared output (when outputs are
    declared), every value a sequence of str or the path of a UTF-8 text file, one label per
    line as Triton reads ``label_filename`` (a last line without its newline counts; a
    trailing carriage return is dropped)."""
    if not model.labels:
        return {}
    if not isinstance(model.labels, Mapping):
        raise TypeError(f"model {model.name!r}: labels must map output names to labels")
    declared = model.output_names()
    table: dict[str, tuple[bytes, ...]] = {}
    for output, labels in model.labels.items():
        where = f"model {model.name!r} output {output!r}"
        if declared is not None and output not in declared:
            raise ValueError(f"{where}: labels for an output the model does not declare")
        if isinstance(labels, (str, os.PathLike)):
            try:
                with open(labels, encoding="utf-8") as file:
                    text = file.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"{where}: cannot read the labels file: {exc}") from None
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()
            table[output] = tuple(line.removesuffix("\r").encode() for line in lines)
            continue
        if isinstance(labels, bytes) or not isinstance(labels, Sequence):
            raise TypeError(f"{where}: labels are a sequence of str or a file path")
        if not all(isinstance(label, str) for label in labels):
            raise TypeError(f"{where}: every label must be a str")
        table[output] = tuple(label.encode("utf-8", "surrogatepass") for label in labels)
    return table
