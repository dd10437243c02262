"""The checks of the inference step: a request's inputs against the model's declared inputs
(datatype, shape, one batch size), and what ``predict`` returned against its declared outputs,
each refusal naming the model, the tensor and what was expected.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from typing import Any

from oipcodec import datatypes
from oipcodec.errors import InternalError, InvalidArgumentError, OIPError, RequestError
from oipcodec.server.model import Arrays, Model, TensorSpec
from oipcodec.types import Tensor

__all__ = ["check_inputs", "check_tensors", "output_tensors"]


def check_inputs(model: Model, tensors: Sequence[Tensor]) -> Arrays:
    """The request's inputs as arrays by name, checked against the model's declared inputs
    (:class:`InvalidArgumentError` naming the input and what is expected; a model that
    batches dynamically also takes :func:`~oipcodec.server.inference.batching.check_batchable`).

    Parameters
    ----------
    model
        The model.
    tensors
        The request's inputs.
    """
    arrays: Arrays = {}
    for tensor in tensors:
        data = tensor.data
        arrays[tensor.name] = data if data.shape == tensor.shape else data.reshape(tensor.shape)
    check_tensors(model, tensors)
    if model.writable_inputs:
        for name, array in arrays.items():
            if not array.flags.writeable:
                arrays[name] = array.copy()
    return arrays


def check_tensors(model: Model, tensors: Sequence[Tensor]) -> None:
    """The tensors against the declared inputs, then one batch size if the model batches."""
    if model.inputs is None:
        if model.dynamic_batching is not None:
            _check_batch(model, tensors)
        return
    specs = {spec.name: spec for spec in model.inputs}
    for tensor in tensors:
        spec = specs.get(tensor.name)
        if spec is None:
            raise InvalidArgumentError(
                f"unexpected inference input '{tensor.name}' for model '{model.name}'; "
                f"its inputs are {list(specs)}"
            )
        _check_declared(
            spec,
            tensor,
            lambda name, what, got, want: InvalidArgumentError(
                f"input '{name}' of model '{model.name}' has {what} {got}, the model expects {want}"
            ),
        )
    missing = _missing(model.inputs, {t.name for t in tensors})
    if missing:
        raise InvalidArgumentError(
            f"model '{model.name}' expects input(s) {missing} that the request does not have"
        )
    if model.max_batch_size > 0:
        _check_batch(model, tensors)


def _check_batch(model: Model, tensors: Sequence[Tensor]) -> None:
    """Every input of one batch size, at most ``max_batch_size`` (Triton's rule)."""
    rows = {t.shape[0] for t in tensors if t.shape}
    if len(rows) > 1:
        raise InvalidArgumentError(
            f"the inputs of a request to model '{model.name}' must have one batch size "
            f"(first dimension), got {sorted(rows)}"
        )
    if rows and (size := rows.pop()) > model.max_batch_size:
        raise InvalidArgumentError(
            f"inference request batch-size must be <= {model.max_batch_size} for "
            f"'{model.name}', got {size}"
        )


def output_tensors(
    model: Model,
    produced: Mapping[str, Any],
    requested: Sequence[str] | None,
    inputs: Sequence[Tensor] = (),
) -> list[Tensor]:
    """What ``predict`` returned as the answer's tensors, each checked against its declaration.

    With declared outputs, an answer of every output holds each that is not ``optional`` and
    nothing else; else :class:`InternalError` (the model's fault) names the model, the output
    and what was expected (a requested output an undeclared model did not return: 400).

    Parameters
    ----------
    model
        The model.
    produced
        What ``predict`` returned.
    requested
        The output names asked for, or None for all.
    inputs
        The request's inputs, whose first dimension is the batch size every output of a
        batching model must have.
    """
    specs = None if model.outputs is None else {s.name: s for s in model.outputs}
    batch = None
    if model.max_batch_size > 0 and inputs and inputs[0].shape:
        batch = inputs[0].shape[0]
    if requested is None:
        if specs is not None:
            extra = [name for name in produced if name not in specs]
            if extra:
                raise InternalError(
                    f"model '{model.name}' returned output '{extra[0]}', which it does not "
                    f"declare; its outputs are {list(specs)}"
                )
            missing = _missing(specs.values(), produced)
            if missing:
                raise InternalError(
                    f"model '{model.name}' did not return its output '{missing[0]}'; "
                    f"it returned {sorted(produced)}"
                )
        return [
            _output_tensor(model, name, value, batch, specs) for name, value in produced.items()
        ]
    tensors = []
    for name in requested:
        if name not in produced:
            kind: type[RequestError] = InvalidArgumentError if specs is None else InternalError
            raise kind(
                f"unexpected inference output '{name}' for model '{model.name}'; "
                f"it produced {sorted(produced)}"
            )
        tensors.append(_output_tensor(model, name, produced[name], batch, specs))
    return tensors


def _output_tensor(
    model: Model,
    name: str,
    value: Any,
    batch: int | None,
    specs: Mapping[str, TensorSpec] | None,
) -> Tensor:
    """An output of ``predict`` as a :class:`Tensor`, checked against its declaration
    (``specs``, by name; without one the datatype is the array's): the declared shape (``-1``:
    any size; ``batch`` rows with ``max_batch_size``) and datatype, to which a value that is
    not such an array is converted when every value fits (:func:`~oipcodec.datatypes.fit_datatype`;
    a :class:`Tensor` must have it); else :class:`InternalError` names the model and output."""
    spec = None if specs is None else specs.get(name)
    try:
        if isinstance(value, Tensor):
            tensor = (
                value
                if value.name == name
                else Tensor(name, value.datatype, value.shape, value.data, dict(value.parameters))
            )
        elif spec is None:
            tensor = Tensor.from_array(name, value)
        else:
            array = datatypes.fit_datatype(value, spec.datatype)
            tensor = Tensor(name, spec.datatype, array.shape, array)
    except OIPError as exc:
        raise InternalError(
            f"model '{model.name}' returned an invalid output '{name}': {exc.reason}"
        ) from None
    if spec is None:
        return tensor
    _check_declared(
        spec,
        tensor,
        lambda name, what, got, want: InternalError(
            f"model '{model.name}' returned output '{name}' "
            f"{'as' if what == 'datatype' else 'of shape'} {got}, its metadata says {want}"
        ),
    )
    if batch is not None and tensor.shape[0] != batch:
        raise InternalError(
            f"model '{model.name}' returned output '{name}' with {tensor.shape[0]} rows "
            f"(first dimension) for a request of batch size {batch}"
        )
    return tensor


def _check_declared(
    spec: TensorSpec, tensor: Tensor, mismatch: Callable[[str, str, str, str], Exception]
) -> None:
    """One check for inputs and outputs: ``tensor`` has the declared datatype and a shape the
    declaration accepts; else ``mismatch(name, what, got, expected)`` is raised."""
    if tensor.datatype != spec.datatype:
        raise mismatch(tensor.name, "datatype", tensor.datatype, spec.datatype)
    declared, shape = spec.shape, tensor.shape
    # TensorSpec.accepts, inlined: the one check every tensor of every request takes.
    if len(shape) != len(declared) or any(
        want != -1 and want != got for want, got in zip(declared, shape, strict=True)
    ):
        raise mismatch(tensor.name, "shape", str(list(shape)), f"{list(declared)} (-1: any size)")


def _missing(specs: Iterable[TensorSpec], present: Container[str]) -> list[str]:
    """The declared tensors that are not ``optional`` and not ``present``, in order."""
    return [s.name for s in specs if not s.optional and s.name not in present]
