"""What the twins of the fused REST kernels (``oipcodec._native.fusedrest``,
``oipcodec._pure.fusedrest``) share: the model's plan, the kernels' contracts, and the
binary data extension's reads and writes (numpy's, in both twins).

The two halves of the native HTTP/1.1 front end's fused inference
(:mod:`oipcodec.server.inference.fused`): a small request's inputs read in one pass (JSON, or
a JSON head and binary parts), its answer written in one pass. The kernels never raise on a
body or outputs they do not take: they return None, and the caller runs the general codec
(:mod:`oipcodec.rest`) and checks, which answer exactly as they would have, errors included.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import orjson

from oipcodec._shared.jsondecode import _KINDS
from oipcodec.datatypes import DATATYPES
from oipcodec.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "ANY_INPUT",
    "ANY_OUTPUT",
    "CONTRACTS",
    "FIXED_WIDTH",
    "FusedPlan",
    "Pending",
    "binary_entry",
    "binary_inputs",
    "fused_plan",
]

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
    shape and the data, declared dims, whether it is optional); ``required``: how many
    declared outputs are not optional; ``head``: the answer's bytes before ``,"id"`` /
    ``,"outputs"``. ``inputs`` / ``outputs`` None: the model declares none (any name, any
    :data:`FIXED_WIDTH` datatype, any shape; an output's datatype is its array's,
    :data:`ANY_OUTPUT`). ``max_output_bytes``: the most bytes of output arrays an answer
    written here may hold (more is the general encoder's, which may run in a thread)."""

    inputs: dict[bytes, tuple[str, str, bytes, tuple[int, ...], int, np.dtype[Any]]] | None
    outputs: dict[str, tuple[str, np.dtype[Any], bytes, bytes, tuple[int, ...], bool]] | None
    required: int
    head: bytes
    max_depth: int
    max_tensor_elements: int
    max_request_elements: int
    max_tensors: int
    max_output_bytes: int


def fused_plan(
    model_name: str,
    model_version: str,
    inputs: Sequence[tuple[str, str, Sequence[int]]] | None,
    outputs: Sequence[tuple[str, str, Sequence[int], bool]] | None,
    limits: Limits = DEFAULT_LIMITS,
    max_output_bytes: int | None = None,
) -> FusedPlan | None:
    """The plan of a model's requests and answers for the fused kernels, or None when a
    declared datatype is not one they take (:data:`FIXED_WIDTH`).

    Parameters
    ----------
    model_name
        The model's name, as the answer names it.
    model_version
        The model's version, as the answer names it.
    inputs
        The declared inputs, (name, datatype, dims with -1 for any size), every one
        required; None: the model declares none (any name, datatype and shape).
    outputs
        The declared outputs, (name, datatype, dims, optional); None: the model declares
        none (an output's datatype is its array's).
    limits
        The request limits the decode keeps (depth, elements per tensor and request).
    max_output_bytes
        The most bytes of output arrays ``encode_outputs`` writes (None: no limit).
    """
    if any(dt not in FIXED_WIDTH for _, dt, _ in inputs or ()) or any(
        dt not in FIXED_WIDTH for _, dt, _, _ in outputs or ()
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
                tuple(dims),
                optional,
            )
            for n, dt, dims, optional in outputs
        },
        sum(not optional for _, _, _, optional in outputs or ()),
        head,
        limits.max_depth,
        limits.max_tensor_elements,
        limits.max_request_elements,
        limits.max_tensors,
        sys.maxsize if max_output_bytes is None else max_output_bytes,
    )


#: Whether numpy's native dtypes are the wire's (little-endian) byte order.
_LITTLE = sys.byteorder == "little"
#: An input sent in binary, as the JSON head gives it: name, numpy dtype, shape, element count.
Pending = tuple[str, np.dtype[Any], tuple[int, ...], int]


def binary_inputs(
    view: memoryview, header_length: int, pending: list[Pending], arrays: dict[str, Any]
) -> bool:
    """The inputs sent in binary as read-only views of the body's byte ``view``, each in its
    place in ``arrays``, as ``rest.decode_request`` reads them (the parts one after the other
    from ``header_length``); False when the parts do not fill the body exactly or a BOOL byte
    is not 0 or 1 (the general decoder names what is wrong). The twins' shared step: numpy
    reads the parts in both."""
    view = view.toreadonly()  # (one read-only view: no flag to clear on each array)
    offset = header_length
    end = len(view)
    for name, dtype, shape, count in pending:
        size = count * dtype.itemsize
        if offset + size > end:
            return False
        if dtype.kind == "b":
            array = np.frombuffer(view, np.uint8, count, offset)
            if int(array.max()) > 1:
                return False
            array = array.view(np.bool_)
        else:
            wire = dtype if _LITTLE else dtype.newbyteorder("<")
            array = np.frombuffer(view, wire, count, offset)
        arrays[name] = array.reshape(shape)
        offset += size
    return offset == end


def binary_entry(between: bytes, array: np.ndarray[Any, Any]) -> tuple[bytes, bytes]:
    """An output sent in binary: its entry's bytes after the shape (``between`` is the
    plan's, up to ``"data":``) and its raw bytes."""
    raw = array.tobytes()
    return b'%s"parameters":{"binary_data_size":%d}}' % (between[:-7], len(raw)), raw


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "decode_inputs": """The input arrays of a small request, or None.

    Takes only bodies of this form (JSON white space anywhere): one object with the members
    ``inputs`` and optionally ``id`` (printable ASCII, no escapes), ``parameters`` (``{}`` or
    ``{"binary_data_output": true|false}``) and ``outputs`` (one or more objects with
    ``name`` and optionally ``parameters``, ``{}`` or ``{"binary_data": true|false}``, each
    name once and declared when the model declares outputs); each input an object with
    exactly ``name`` (no escapes), ``datatype``, ``shape`` and ``data``, every declared input
    once and no other, its datatype the declared one, its shape positive integers matching
    the declared dims, its data a JSON array (a model that declares no inputs: any names once
    each, any datatype of ``FIXED_WIDTH``, any shape). With ``header_length`` (the binary
    data extension), the JSON is the body's first ``header_length`` bytes, and an input may
    give ``parameters: {"binary_data_size": N}`` instead of ``data``, N its bytes: the
    binary parts fill the rest of the body exactly, one after the other. Anything else,
    and any element the data kernel refuses, gives None: the caller decodes the body with
    :func:`oipcodec.rest.decode_request`.

    Parameters
    ----------
    body
        The request body (any buffer; the binary inputs are views of it).
    plan
        The model's :class:`~oipcodec._shared.fusedrest.FusedPlan`.
    header_length
        ``Inference-Header-Content-Length``, or -1 when absent.

    Returns
    -------
    tuple or None
        ``(arrays, id, requested, binary)``: the arrays by input name in the body's order,
        each in its shape, as ``decode_request`` decodes them (read-only views of ``body``
        when sent in binary); the request's id or None; the requested outputs' names in the
        body's order, or None; the outputs to answer in binary as
        :func:`oipcodec.rest.binary_outputs` gives them (True, False or a set of names).
    """,
    "encode_outputs": """The body of an answer, as :func:`oipcodec.rest.encode_response`
    writes it, or None.

    Parameters
    ----------
    plan
        The model's :class:`~oipcodec._shared.fusedrest.FusedPlan`.
    request_id
        The id to echo, or None.
    outputs
        The answer's arrays by output name, in the answer's order.
    binary
        The outputs written in binary: True for all, False for none, or their names.

    Returns
    -------
    bytes, tuple or None
        The JSON body when no output is written in binary, else ``(body, header_length)``:
        the JSON head and each binary output's bytes after it, and the head's length. None
        when ``outputs`` is not exactly a dict; when an output is not declared, is not
        exactly a numpy array of its declared datatype's dtype (a model that declares no
        outputs: of a dtype in ``ANY_OUTPUT``) and of a shape its dims accept; when a declared
        output that is not optional is missing; when the arrays hold more than
        ``max_output_bytes``; or when the id or an undeclared output's name needs escaping: the
        caller checks and encodes them with the general code, which names what is wrong.
    """,
}
