"""The data model: tensors, inference requests and responses.

These are plain slotted dataclasses; the codecs (:mod:`oipcodec.rest`, :mod:`oipcodec.pb`)
turn them into wire bytes and back. Tensor data is always a numpy array:

- fixed-size datatypes: an array of the datatype's numpy dtype (any byte order or memory
  layout; the encoders write little-endian, row-major);
- BF16: an ``ml_dtypes.bfloat16`` array, or a float32/float64 array whose values are rounded to
  BF16 (nearest even) when encoded; decoders return float32 when ml_dtypes is not installed;
- BYTES: an object array of ``bytes`` (``str`` elements are UTF-8 encoded when sent), or a numpy
  ``S`` or ``U`` array.

Parameters are ``dict[str, str | int | float | bool]``; their Python types survive the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec.errors import DatatypeError, ShapeError
from oipcodec.limits import element_count

__all__ = ["InferRequest", "InferResponse", "Parameters", "RequestedOutput", "Tensor"]

#: OIP parameter values: the JSON scalars the protocol allows.
ParameterValue = str | int | float | bool
Parameters = dict[str, ParameterValue]


@dataclass(slots=True)
class Tensor:
    """A named tensor: an input of a request or an output of a response.

    Construction checks every argument against the others.

    Parameters
    ----------
    name
        The tensor's name.
    datatype
        An OIP datatype name (``"FP32"``, ``"BYTES"``...).
    shape
        A valid shape, stored as a tuple; the empty shape ``[]`` is a scalar with one element.
    data
        The elements: an array whose dtype carries ``datatype`` and whose element count equals
        the shape's.
    parameters
        The tensor's parameters (e.g. ``binary_data_size``, as they travel).
    """

    name: str
    datatype: str
    shape: tuple[int, ...]
    data: np.ndarray[Any, Any]
    parameters: Parameters = field(default_factory=dict)

    def __post_init__(self) -> None:
        row = datatypes.get(self.datatype)
        self.shape = tuple(self.shape)
        try:
            count = element_count(self.shape)
        except ShapeError as exc:
            raise exc.for_tensor(self.name) from None
        if not isinstance(self.data, np.ndarray):
            raise DatatypeError(
                f"data must be a numpy array, got {type(self.data).__name__}", tensor=self.name
            )
        if not row.carries(self.data.dtype):
            raise DatatypeError(
                f"numpy dtype {self.data.dtype} cannot carry datatype {self.datatype}",
                tensor=self.name,
            )
        if self.data.size != count:
            raise ShapeError(
                f"shape {list(self.shape)} holds {count} elements but data has {self.data.size}",
                tensor=self.name,
            )

    @classmethod
    def checked(
        cls,
        name: str,
        datatype: str,
        shape: tuple[int, ...],
        data: np.ndarray[Any, Any],
        parameters: Parameters,
    ) -> Tensor:
        """A tensor whose parts a decoder has checked already, built without checking them
        again (that check is a part of every request's cost).

        Parameters
        ----------
        name
            The tensor's name.
        datatype
            A valid OIP datatype name.
        shape
            A tuple the limits allow.
        data
            An array whose dtype carries ``datatype`` and whose size is the shape's.
        parameters
            The tensor's parameters.
        """
        tensor = object.__new__(cls)
        tensor.name, tensor.datatype, tensor.shape = name, datatype, shape
        tensor.data, tensor.parameters = data, parameters
        return tensor

    def into(self, out: np.ndarray[Any, Any]) -> None:
        """Write this tensor's elements into ``out`` (a dynamic batch's rows for this request).

        The default is one copy; a tensor that decodes lazily may write its elements straight into
        ``out`` instead.

        Parameters
        ----------
        out
            A C-contiguous array of this tensor's shape whose dtype carries its datatype.

        Raises
        ------
        ShapeError, DatatypeError
            ``out`` does not fit, naming the tensor.
        """
        if out.shape != self.shape:
            raise ShapeError(
                f"the destination holds shape {list(out.shape)}, the tensor has {list(self.shape)}",
                tensor=self.name,
            )
        if not datatypes.get(self.datatype).carries(out.dtype):
            raise DatatypeError(
                f"the destination's numpy dtype {out.dtype} cannot carry datatype {self.datatype}",
                tensor=self.name,
            )
        data = self.data
        np.copyto(out, data if data.shape == self.shape else data.reshape(self.shape))

    @classmethod
    def from_array(cls, name: str, array: Any, parameters: Parameters | None = None) -> Tensor:
        """A tensor whose datatype and shape are those of ``array``.

        Parameters
        ----------
        name
            The tensor's name.
        array
            The elements (anything ``np.asarray`` takes).
        parameters
            The tensor's parameters.
        """
        data = np.asarray(array)
        # Its datatype and size are the array's own: of the checks only the shape's limits are
        # left (every output of a model that declares none comes this way).
        try:
            element_count(data.shape)
        except ShapeError as exc:
            raise exc.for_tensor(name) from None
        datatype = datatypes.datatype_of(data)
        return cls.checked(name, datatype, data.shape, data, dict(parameters or {}))


@dataclass(slots=True)
class RequestedOutput:
    """An output a request asks for.

    Parameters
    ----------
    name
        The output's name.
    parameters
        Its per-output parameters (e.g. ``binary_data``).
    """

    name: str
    parameters: Parameters = field(default_factory=dict)


@dataclass(slots=True)
class InferRequest:
    """An inference request.

    Parameters
    ----------
    inputs
        The input tensors, in order.
    outputs
        The outputs asked for; ``None`` asks for every output of the model.
    id
        The request's id, echoed in the answer.
    parameters
        The request's parameters.
    model_name, model_version
        The model it is for (from the URL or the message); named in errors.
    """

    inputs: list[Tensor]
    outputs: list[RequestedOutput] | None = None
    id: str | None = None
    parameters: Parameters = field(default_factory=dict)
    model_name: str | None = None
    model_version: str | None = None

    def input(self, name: str) -> Tensor:
        """The input called ``name``.

        Parameters
        ----------
        name
            The input's name.

        Raises
        ------
        KeyError
            There is none.
        """
        return _find(self.inputs, name)


@dataclass(slots=True)
class InferResponse:
    """An inference response.

    Parameters
    ----------
    model_name
        The model that answered.
    outputs
        The output tensors.
    id
        The request's id.
    model_version
        The model's version.
    parameters
        The response's parameters.
    """

    model_name: str
    outputs: list[Tensor]
    id: str | None = None
    model_version: str | None = None
    parameters: Parameters = field(default_factory=dict)

    def output(self, name: str) -> Tensor:
        """The output called ``name``.

        Parameters
        ----------
        name
            The output's name.

        Raises
        ------
        KeyError
            There is none.
        """
        return _find(self.outputs, name)


def _find(tensors: list[Tensor], name: str) -> Tensor:
    for tensor in tensors:
        if tensor.name == name:
            return tensor
    raise KeyError(name)
