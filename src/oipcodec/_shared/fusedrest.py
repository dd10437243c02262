"""What the twins of the fused REST kernels (``oipcodec._native.fusedrest``,
``oipcodec._pure.fusedrest``) share: the model's plan and the kernels' contracts.

PROTOTYPE (issue 45): the hot part of a fused decode -> predict -> encode path for the small
JSON request; nothing in the server uses it yet. The kernels never raise on a body they do not
take: they return None, and the caller runs the general codec (:mod:`oipcodec.rest`) on the
same bytes, which answers exactly as it does today, errors included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import orjson

from oipcodec._shared.jsondecode import _KINDS
from oipcodec.datatypes import DATATYPES
from oipcodec.limits import DEFAULT_LIMITS, Limits

__all__ = ["ANY_INPUT", "ANY_OUTPUT", "CONTRACTS", "FIXED_WIDTH", "FusedPlan", "fused_plan"]

#: The datatypes the fused path takes: those whose JSON elements are numbers or booleans and
#: whose numpy dtype is numpy's own (BF16 depends on ml_dtypes, BYTES makes Python objects).
FIXED_WIDTH = frozenset(name for name, row in DATATYPES.items() if name not in ("BF16", "BYTES"))


def _dtype(datatype: str) -> np.dtype[Any]:
    return np.dtype(DATATYPES[datatype].numpy_dtype)


#: What an input of a model that declares none may be: its datatype as written -> (datatype,
#: the data walk's element kind, numpy dtype).
ANY_INPUT: dict[bytes, tuple[str, int, np.dtype[Any]]] = {
    dt.encode(): (dt, _KINDS[dt], _dtype(dt)) for dt in sorted(FIXED_WIDTH)
}
#: The datatype of an output of a model that declares none, by its array's dtype (native byte
#: order only: another is the general encoder's).
ANY_OUTPUT: dict[np.dtype[Any], str] = {_dtype(dt): dt for dt in sorted(FIXED_WIDTH)}


class FusedPlan(NamedTuple):
    """What a model's requests and answers must look like, computed once per model.

    ``inputs``: declared input name as UTF-8 -> (name, datatype, datatype as bytes, declared
    dims, -1 for any, the data walk's element kind, numpy dtype); ``outputs``: declared output
    name -> (datatype, numpy dtype, the answer's bytes before the shape, those between the
    shape and the data); ``head``: the answer's bytes before ``,"id"`` / ``,"outputs"``.
    ``inputs`` / ``outputs`` None: the model declares none (any name, any :data:`FIXED_WIDTH`
    datatype, any shape; an output's datatype is its array's, :data:`ANY_OUTPUT`)."""

    inputs: dict[bytes, tuple[str, str, bytes, tuple[int, ...], int, np.dtype[Any]]] | None
    outputs: dict[str, tuple[str, np.dtype[Any], bytes, bytes]] | None
    head: bytes
    max_depth: int
    max_tensor_elements: int
    max_request_elements: int


def fused_plan(
    model_name: str,
    model_version: str,
    inputs: Sequence[tuple[str, str, Sequence[int]]] | None,
    outputs: Sequence[tuple[str, str]] | None,
    limits: Limits = DEFAULT_LIMITS,
) -> FusedPlan | None:
    """The plan of a model that declares ``inputs`` ((name, datatype, dims), every one
    required) and ``outputs`` ((name, datatype)), None for either when it declares none; or
    None when a datatype is not one the fused path takes (:data:`FIXED_WIDTH`)."""
    if any(dt not in FIXED_WIDTH for _, dt, _ in inputs or ()) or any(
        dt not in FIXED_WIDTH for _, dt in outputs or ()
    ):
        return None
    head = orjson.dumps({"model_name": model_name, "model_version": model_version})[:-1]
    return FusedPlan(
        None
        if inputs is None
        else {
            n.encode(): (n, dt, dt.encode(), tuple(dims), _KINDS[dt], _dtype(dt))
            for n, dt, dims in inputs
        },
        None
        if outputs is None
        else {
            # The bytes orjson writes for an answer's output entry (rest._encode_tensors'
            # member order: name, shape, datatype, data).
            n: (
                dt,
                _dtype(dt),
                b'{"name":%s,"shape":' % orjson.dumps(n),
                b',"datatype":"%s","data":' % dt.encode(),
            )
            for n, dt in outputs
        },
        head,
        limits.max_depth,
        limits.max_tensor_elements,
        limits.max_request_elements,
    )


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "decode_inputs": """The input arrays of a small JSON request, or None.

    Takes only bodies of this form (JSON white space anywhere): one object with the members
    ``inputs`` and optionally ``id`` (printable ASCII, no escapes) and ``parameters: {}``; each
    input an object with exactly ``name`` (no escapes), ``datatype``, ``shape`` and ``data``,
    every declared input once and no other, its datatype the declared one, its shape positive
    integers matching the declared dims, its data a JSON array (a model that declares no
    inputs: any names once each, any datatype of ``FIXED_WIDTH``, any shape). Anything else,
    and any element the data kernel refuses, gives None: the caller decodes the body with
    :func:`oipcodec.rest.decode_request`.

    Parameters
    ----------
    body
        The request body (any buffer).
    plan
        The model's :class:`~oipcodec._shared.fusedrest.FusedPlan`.

    Returns
    -------
    tuple or None
        ``(arrays, id)``: the arrays by input name in the body's order, each in its shape, as
        ``decode_request`` decodes them; the request's id or None.
    """,
    "encode_outputs": """The JSON body of an answer, as :func:`oipcodec.rest.encode_response`
    writes it with no binary outputs, or None.

    Parameters
    ----------
    plan
        The model's :class:`~oipcodec._shared.fusedrest.FusedPlan`.
    request_id
        The id to echo, or None.
    outputs
        The answer's arrays by output name, in the answer's order.

    Returns
    -------
    bytes or None
        None when an output is not declared, is not exactly a numpy array of its declared
        datatype's dtype (a model that declares no outputs: of a dtype in ``ANY_OUTPUT``), or
        the id or an undeclared output's name needs escaping: the caller encodes with ``rest``.
    """,
}
