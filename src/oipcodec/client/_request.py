"""What the HTTP and gRPC clients share: turning ``infer``'s arguments into an InferRequest."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from oipcodec.errors import EncodeError
from oipcodec.types import InferRequest, Parameters, RequestedOutput, Tensor

__all__ = ["Inputs", "Outputs", "build_request"]

#: ``infer``'s inputs: a dict name -> array (or array-like, or Tensor), or a list of Tensor.
Inputs = Mapping[str, Any] | Sequence[Tensor]
#: ``infer``'s outputs: None (all of them), or names / RequestedOutput objects.
Outputs = Iterable[str | RequestedOutput] | None


def build_request(
    model: str,
    inputs: Inputs,
    outputs: Outputs = None,
    parameters: Parameters | None = None,
    id: str | None = None,
    model_version: str | None = None,
) -> InferRequest:
    """The :class:`~oipcodec.InferRequest` a client sends for these ``infer`` arguments.

    ``inputs`` maps names to numpy arrays (the datatype follows the dtype: see
    :meth:`Tensor.from_array`) or to :class:`Tensor` objects, or is a list of :class:`Tensor`.
    ``outputs`` lists output names or :class:`RequestedOutput` objects; ``None`` asks for all.
    """
    if not isinstance(model, str) or not model:
        raise EncodeError(f"model must be a non-empty string, got {model!r}")
    tensors: list[Tensor] = []
    if isinstance(inputs, Mapping):
        for name, value in inputs.items():
            if isinstance(value, Tensor):
                if value.name != name:
                    value = Tensor(name, value.datatype, value.shape, value.data, value.parameters)
                tensors.append(value)
            else:
                tensors.append(Tensor.from_array(name, value))
    else:
        for item in inputs:
            if not isinstance(item, Tensor):
                raise EncodeError(
                    "inputs must be a dict name -> array or a list of Tensor, got a list "
                    f"holding {type(item).__name__}"
                )
            tensors.append(item)
    requested = None
    if outputs is not None:
        if isinstance(outputs, (str, RequestedOutput)):
            outputs = [outputs]
        requested = [
            o if isinstance(o, RequestedOutput) else RequestedOutput(str(o)) for o in outputs
        ]
    return InferRequest(
        tensors,
        outputs=requested,
        id=id,
        parameters=dict(parameters or {}),
        model_name=model,
        model_version=model_version,
    )
