"""The classification extension: an output requested with the parameter ``classification: k``
(tritonclient's ``class_count``; ``classification_count`` in KServe's V2 overview) is answered
as a BYTES tensor of the ``k`` best classes of each batch row, Triton's way.

Each element is ``"<value>:<index>"`` or ``"<value>:<index>:<label>"`` (see
:func:`oipcodec.kernels.classification_strings`), best first. The shape is Triton's: for a
batching model (``max_batch_size > 0``) the first dimension is the batch and every row is
ranked apart, ``[batch, min(k, classes)]`` with ``classes`` the product of the other
dimensions; a model that does not batch is ranked as one flattened row, ``[min(k, size)]``.
"""

from __future__ import annotations

import math
from typing import Any

from oipcodec import kernels as _facade
from oipcodec.errors import InvalidArgumentError
from oipcodec.kernels import Kernels
from oipcodec.types import RequestedOutput, Tensor

__all__ = ["CLASSIFICATION", "CLASSIFICATION_COUNT", "check_datatype", "class_count", "classify"]

#: The output parameter tritonclient sends (``class_count``) and Triton reads.
CLASSIFICATION = "classification"
#: The same parameter as KServe's V2 overview spells it; either is accepted.
CLASSIFICATION_COUNT = "classification_count"
#: Output parameters that put the tensor where classification cannot go.
_EXCLUSIVE = ("shared_memory_region", "shared_memory_byte_size", "shared_memory_offset")


def class_count(output: RequestedOutput) -> int | None:
    """The ``k`` an output is requested with, or ``None`` when it asks for no classification.

    ``k`` must be a positive integer; both spellings may be given if they agree. An output
    asked into shared memory cannot be classified (Triton refuses it too). Each problem is an
    :class:`InvalidArgumentError` (400) naming the output.
    """
    parameters = output.parameters
    given = {
        key: parameters[key] for key in (CLASSIFICATION, CLASSIFICATION_COUNT) if key in parameters
    }
    if not given:
        return None
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidArgumentError(
                f"output '{output.name}': parameter '{key}' must be a positive integer (the "
                f"number of classes to answer), got {value!r}"
            )
    if len(set(given.values())) > 1:
        raise InvalidArgumentError(
            f"output '{output.name}': parameters '{CLASSIFICATION}' and "
            f"'{CLASSIFICATION_COUNT}' disagree ({given[CLASSIFICATION]} and "
            f"{given[CLASSIFICATION_COUNT]})"
        )
    for key in _EXCLUSIVE:
        if key in parameters:
            raise InvalidArgumentError(
                f"output '{output.name}': classification cannot be written to shared memory "
                f"(parameter '{key}')"
            )
    return int(next(iter(given.values())))


def check_datatype(output: str, datatype: str) -> None:
    """Refuse classification of a non-numeric output (BYTES) with a 400 naming it."""
    if datatype == "BYTES":
        raise InvalidArgumentError(
            f"output '{output}' is BYTES: classification ranks numeric outputs only "
            "(BOOL, INT*, UINT*, FP16, BF16, FP32, FP64)"
        )


def classify(
    tensor: Tensor,
    k: int,
    batched: bool,
    labels: tuple[bytes, ...] | None = None,
    kernels: Kernels = _facade,
) -> Tensor:
    """``tensor`` replaced by its classification: the BYTES tensor of the ``k`` best classes of
    each batch row (``batched``: the first dimension is the batch) or of the whole tensor."""
    check_datatype(tensor.name, tensor.datatype)
    data: Any = tensor.data
    shape = tuple(tensor.shape)
    if batched and shape:
        rows, classes = shape[0], math.prod(shape[1:])
    else:
        rows, classes = 1, math.prod(shape)
    indices, values = kernels.top_k(data.reshape(rows, classes), k)
    strings = kernels.classification_strings(values, indices, labels)
    answer_shape = (rows, indices.shape[1]) if batched and shape else (indices.shape[1],)
    return Tensor(tensor.name, "BYTES", answer_shape, strings.reshape(answer_shape))
