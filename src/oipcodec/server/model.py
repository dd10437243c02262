"""The model API: what a model declares (its tensors' metadata) and what it implements.

A model is a subclass of :class:`Model` with a ``predict`` method taking and returning numpy
arrays by tensor name::

    class Scale(Model):
        name = "scale"
        inputs = [TensorSpec("X", "FP32", [-1, 4])]
        outputs = [TensorSpec("Y", "FP32", [-1, 4])]

        def predict(self, inputs, parameters):
            return {"Y": inputs["X"] * float(parameters.get("factor", 2.0))}

docs/serving.md#your-models: batching, configuration, async and threads.
"""

# Invariant: every request is checked against the declared inputs before ``predict`` runs, and
# what it returns against the declared outputs (a breach is an internal error naming the model
# and the output).

from __future__ import annotations

import inspect
import os
import stat
import weakref
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from oipcodec._deprecated import moved
from oipcodec.datatypes import fit_datatype
from oipcodec.server import model_config
from oipcodec.server.model_config import DynamicBatching, TensorSpec
from oipcodec.types import Parameters

__all__ = ["DynamicBatching", "Model", "TensorSpec", "fit_datatype"]

Arrays = dict[str, np.ndarray[Any, Any]]

# "not given" for constructor keywords whose meaningful values include None
_UNSET: Any = object()


#: Whether a ``predict`` method is a coroutine function, by its function: asked for every
#: request, and inspect's answer costs more than a plain ``predict`` call.
ASYNC_PREDICT: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


class Model:
    """Base class of the models a server serves.

    Class attributes declare the model; the constructor's keywords, when given, replace the
    class attributes of the same names. Other class attributes:

    - ``labels`` (class labels by output name), which the classification extension uses with
      ``max_batch_size`` (see docs/classification.md);
    - ``dynamic_batching``: a :class:`DynamicBatching` to run ``predict`` once per batch of
      queued requests (docs/batching.md).
    - ``run_in_thread`` and ``writable_inputs``: how ``predict`` is called (in a worker
      thread; with writable copies of the inputs that arrive as read-only views).
    - ``decoupled``: the model answers a request with any number of responses, by yielding
      them from ``predict`` (docs/streaming.md); a generator ``predict`` sets it.

    Subclasses implement :meth:`predict`, and optionally :meth:`load` / :meth:`unload` (called
    when the server starts and stops, and by the repository load/unload endpoints; either may
    be ``async def``; a plain ``def`` runs in a worker thread, as loading may be slow).

    Parameters
    ----------
    name
        The model's name (no ``/``).
    version
        A string without ``/``; default ``"1"``.
    platform
        Free text, shown in the model's metadata.
    inputs
        A sequence of :class:`TensorSpec`; ``None`` accepts any inputs unchecked (the
        identity model).
    outputs
        A sequence of :class:`TensorSpec`; ``None`` answers whatever ``predict`` returns, each
        output's datatype taken from its array.
    max_batch_size
        The most rows (first dimension) a request may hold; 0: the model does not batch.
    config_parameters
        Entries of the model configuration's ``parameters``, strings to strings.

    Raises
    ------
    ValueError
        A name or version with ``/``, or a configuration the declared tensors cannot have.
    """

    name: str = ""
    version: str = "1"
    platform: str = "oipcodec"
    inputs: Sequence[TensorSpec] | None = ()
    outputs: Sequence[TensorSpec] | None = ()
    #: Run a plain ``def predict`` in a worker thread instead of on the event loop (it may
    #: then run in several threads at once, one per request in flight).
    run_in_thread: bool = False
    #: Give ``predict`` writable copies of the inputs that arrive read-only (binary and gRPC
    #: tensors are views of the request body). Off by default: no copy, and a model that
    #: writes into an input (``x += 1``) fails with a message naming this switch.
    writable_inputs: bool = False
    #: The most rows (first dimension) a request may hold; 0: the model does not batch. Above
    #: 0, every declared input and output must start with a ``-1`` dimension, and
    #: classification ranks each batch row apart.
    max_batch_size: int = 0
    #: Run ``predict`` once per batch of queued requests (needs ``max_batch_size`` > 0);
    #: ``None``: once per request.
    dynamic_batching: DynamicBatching | None = None
    #: Without ``dynamic_batching``: the most requests the model holds at once, running or
    #: waiting to run, before the next is refused as a full queue is (0: no limit; None: the
    #: server's ``max_queued_requests``). A model that batches has Triton's queue policy.
    max_queued_requests: int | None = None
    #: Triton's decoupled transaction policy: each request may have 0..n responses, the ones
    #: ``predict`` yields, streamed as they come (gRPC ModelStreamInfer, REST generate_stream);
    #: the unary ModelInfer and ``/infer`` refuse it. True when ``predict`` is a generator.
    decoupled: bool = False
    #: Entries of the model configuration's ``parameters`` (Triton's ``ModelConfig``).
    config_parameters: Mapping[str, str] = {}
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
        max_batch_size: int | None = None,
        config_parameters: Mapping[str, str] | None = None,
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
        if max_batch_size is not None:
            self.max_batch_size = max_batch_size
        if config_parameters is not None:
            self.config_parameters = config_parameters
        if inspect.isasyncgenfunction(self.predict) or inspect.isgeneratorfunction(self.predict):
            self.decoupled = True
        self._check_config()
        self._class_labels = _read_labels(self)

    def reconfigure(self, config: Mapping[str, Any]) -> None:
        """Apply a configuration override (the ``config`` parameter of a repository load).

        Parameters
        ----------
        config
            The override in Triton's JSON form;
            :func:`oipcodec.server.model_config.override` says what it may change.

        Raises
        ------
        ValueError
            Naming what is wrong; the model is then unchanged.
        """
        model_config.override(self, config)

    def configure(
        self,
        *,
        inputs: Sequence[TensorSpec] | None = _UNSET,
        outputs: Sequence[TensorSpec] | None = _UNSET,
        max_batch_size: int | None = None,
        config_parameters: Mapping[str, str] | None = None,
        labels: Mapping[str, Sequence[str] | str | os.PathLike[str]] | None = None,
        dynamic_batching: DynamicBatching | None = _UNSET,
        decoupled: bool | None = None,
    ) -> None:
        """Change what the model declares after it was made (what a model repository's
        configuration file does, docs/model-repository.md). The arguments given replace the
        class attributes of the same names, checked as the constructor checks them; those
        left out stay.

        Parameters
        ----------
        inputs
            The declared inputs (``None``: any inputs, unchecked).
        outputs
            The declared outputs (``None``: whatever ``predict`` returns).
        max_batch_size
            The most rows a request may hold (0: no batching).
        config_parameters
            The model configuration's ``parameters``, strings to strings.
        labels
            Class labels by output name: a sequence of labels or a labels file's path.
        dynamic_batching
            A :class:`DynamicBatching`, or ``None`` to turn dynamic batching off.
        decoupled
            Triton's decoupled transaction policy (``model_transaction_policy``).

        Raises
        ------
        ValueError, TypeError
            Naming what is wrong; the model is then unchanged.
        """
        before = (
            self.inputs,
            self.outputs,
            self.max_batch_size,
            self.config_parameters,
            self.labels,
            getattr(self, "_class_labels", None),
            self.dynamic_batching,
            self.decoupled,
        )
        try:
            if inputs is not _UNSET:
                self.inputs = None if inputs is None else tuple(inputs)
            if outputs is not _UNSET:
                self.outputs = None if outputs is None else tuple(outputs)
            if max_batch_size is not None:
                self.max_batch_size = max_batch_size
            if config_parameters is not None:
                self.config_parameters = config_parameters
            if labels is not None:
                self.labels = labels
            if dynamic_batching is not _UNSET:
                self.dynamic_batching = dynamic_batching
            if decoupled is not None:
                self.decoupled = decoupled
            self._check_config()
            self._class_labels = _read_labels(self)
        except (ValueError, TypeError):
            (
                self.inputs,
                self.outputs,
                self.max_batch_size,
                self.config_parameters,
                self.labels,
                table,
                self.dynamic_batching,
                self.decoupled,
            ) = before
            if table is not None:
                self._class_labels = table
            raise

    def _check_config(self) -> None:
        """Refuse a ``max_batch_size`` the declared tensors cannot have, and parameters that
        are not strings, naming what is wrong."""
        size = self.max_batch_size
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= _INT32_MAX:
            # ModelConfig holds it in an int32: a larger one would break every answer that
            # carries the configuration (status, gRPC ModelConfig), not only this model's.
            raise ValueError(
                f"model {self.name!r}: max_batch_size is an int >= 0 (0: no batching) and at "
                f"most {_INT32_MAX} (ModelConfig's int32), got {size!r}"
            )
        if size > 0:
            for kind, specs in (("input", self.inputs), ("output", self.outputs)):
                for spec in specs or ():
                    if not spec.shape or spec.shape[0] != -1:
                        raise ValueError(
                            f"model {self.name!r} has max_batch_size {size}, so its {kind} "
                            f"{spec.name!r} must start with a -1 (batch) dimension; its shape "
                            f"is {list(spec.shape)}"
                        )
        batching = self.dynamic_batching
        if batching is not None:
            if not isinstance(batching, DynamicBatching):
                raise ValueError(
                    f"model {self.name!r}: dynamic_batching is a DynamicBatching or None, got "
                    f"{batching!r}"
                )
            if self.decoupled:
                # A batch's predict answers each request once; a decoupled request's responses
                # stream on their own, which a batch cannot split among its requests.
                raise ValueError(
                    f"model {self.name!r}: dynamic_batching cannot be combined with a decoupled "
                    "model (model_transaction_policy decoupled: true, or a generator predict)"
                )
            if size == 0:
                raise ValueError(
                    f"model {self.name!r}: dynamic_batching needs max_batch_size > 0 (the most "
                    "rows of a batch); it is 0"
                )
            over = [n for n in batching.preferred_batch_size if n > size]
            if over:
                raise ValueError(
                    f"model {self.name!r}: preferred_batch_size {over} is above its "
                    f"max_batch_size {size}"
                )
        queued = self.max_queued_requests
        if queued is not None and (
            isinstance(queued, bool) or not isinstance(queued, int) or queued < 0
        ):
            raise ValueError(
                f"model {self.name!r}: max_queued_requests is an int >= 0 (0: no limit) or None "
                f"(the server's), got {queued!r}"
            )
        parameters = dict(self.config_parameters)
        for key, value in parameters.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise ValueError(
                    f"model {self.name!r}: config_parameters map strings to strings, got "
                    f"{key!r}: {value!r}"
                )
            if not (_is_utf8(key) and _is_utf8(value)):  # protobuf strings are UTF-8
                raise ValueError(
                    f"model {self.name!r}: config_parameters entry {key!r} is not valid "
                    "UTF-8 text (a lone surrogate?)"
                )
        self.config_parameters = parameters

    # ------------------------------------------------------------------ what subclasses write

    def load(self) -> Awaitable[None] | None:
        """Prepare the model (read weights...). Called before the model is marked ready."""
        return None

    def unload(self) -> Awaitable[None] | None:
        """Release what :meth:`load` took. Called when the model is unloaded."""
        return None

    def predict(
        self, inputs: Arrays, parameters: Parameters
    ) -> (
        Mapping[str, Any]
        | Awaitable[Mapping[str, Any]]
        | Iterator[Mapping[str, Any]]
        | AsyncIterator[Mapping[str, Any]]
    ):
        """Compute the outputs: a mapping from output name to a numpy array (or anything
        ``numpy.asarray`` takes, or a :class:`~oipcodec.Tensor`), checked against the declared
        outputs, and converted to an output's declared datatype when every value fits exactly
        (:func:`fit_datatype`). A decoupled model yields such mappings instead, one per
        response (docs/streaming.md).

        Parameters
        ----------
        inputs
            Each input name to an array of the request's shape and datatype (BYTES: object
            array of ``bytes``; BF16: ``ml_dtypes.bfloat16``). Arrays decoded from binary data
            are read-only views of the request body: copy one before writing to it, or set
            :attr:`writable_inputs` for writable copies.
        parameters
            The request's parameters, without the transport ones (``binary_data_output``...).
        """
        raise NotImplementedError(f"model {self.name!r} does not implement predict")

    # ------------------------------------------------------------------ used by the server

    @property
    def is_async(self) -> bool:
        predict = self.predict
        function = getattr(predict, "__func__", None)
        if function is None:  # not a method (a callable set on the instance): asked each time
            return inspect.iscoroutinefunction(predict)
        known = ASYNC_PREDICT.get(function)
        if known is None:
            known = ASYNC_PREDICT[function] = inspect.iscoroutinefunction(predict)
        return known

    def metadata(self, versions: Sequence[str] | None = None) -> dict[str, Any]:
        """The model metadata document of the OIP (``GET /v2/models/<name>``): name, versions,
        platform, and each input and output with its datatype and shape.

        Parameters
        ----------
        versions
            The versions to list; ``None``: this model's own version.
        """
        return {
            "name": self.name,
            "versions": list(versions) if versions is not None else [self.version],
            "platform": self.platform,
            "inputs": [spec.metadata() for spec in self.inputs or ()],
            "outputs": [spec.metadata() for spec in self.outputs or ()],
        }

    def config(self) -> dict[str, Any]:
        """The model configuration in Triton's JSON form (``GET /v2/models/<name>/config``;
        :func:`oipcodec.server.model_config.document`)."""
        return model_config.document(self)

    def class_labels(self, output: str) -> tuple[bytes, ...] | None:
        """The labels of an output for classification (UTF-8), or ``None`` when it has none.

        Parameters
        ----------
        output
            The output's name.
        """
        table = getattr(self, "_class_labels", None)
        if table is None:  # a subclass whose __init__ did not call Model.__init__
            table = self._class_labels = _read_labels(self)
        return table.get(output)

    def output_names(self) -> list[str] | None:
        """The declared output names (``None`` when outputs are not declared)."""
        return None if self.outputs is None else [s.name for s in self.outputs]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} version {self.version!r}>"


#: The largest value of a protobuf int32 field (ModelConfig's max_batch_size).
_INT32_MAX = 2**31 - 1


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _names(specs: Sequence[TensorSpec]) -> list[str]:
    return [spec.name for spec in specs]


#: The largest labels file read: a label per class, and even 100,000 classes of 100 bytes
#: are 10 MB; a bigger file is a mistake (/dev/zero would grow memory until the process dies).
MAX_LABELS_BYTES = 16 << 20


def read_labels_file(path: str | os.PathLike[str], where: str) -> str:
    """The text of a labels file: a regular file of at most :data:`MAX_LABELS_BYTES`, UTF-8.

    Parameters
    ----------
    path
        The labels file.
    where
        What the file is for (``model 'm' output 'y'``), named by the error.

    Raises
    ------
    ValueError
        Naming ``where``, the file and what is wrong (missing, not a regular file, too big,
        not UTF-8).
    """
    # Only a regular file: a FIFO would hang the load, a device never end.
    shown = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ValueError(
            f"{where}: cannot read the labels file {shown!r}: {exc.strerror}"
        ) from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{where}: cannot read the labels file {shown!r}: not a regular file")
        if info.st_size > MAX_LABELS_BYTES:
            raise ValueError(
                f"{where}: the labels file {shown!r} holds {info.st_size} bytes, more than "
                f"{MAX_LABELS_BYTES}"
            )
        data = file.read(MAX_LABELS_BYTES + 1)
    if len(data) > MAX_LABELS_BYTES:  # grew since fstat
        raise ValueError(
            f"{where}: the labels file {shown!r} holds more than {MAX_LABELS_BYTES} bytes"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 ({exc})"
        raise ValueError(f"{where}: cannot read the labels file {shown!r}: {reason}") from None


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
            text = read_labels_file(labels, where)
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


#: Names that moved to model_config.py (one release, with a DeprecationWarning).
__getattr__ = moved(
    __name__,
    {
        name: f"oipcodec.server.model_config:{name}"
        for name in ("BACKEND", "config_datatype", "datatype_of_config")
    },
)
