"""Limits on what a decoder accepts, in one place.

A codec on the network edge parses bytes from strangers: every size it reads is checked against
these limits *before* memory is allocated for it, so a 30-byte request declaring shape ``[2**40]``
is refused at once. The defaults follow Triton (64 MB bodies, nesting depth 100).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from oipcodec.errors import LimitError, ShapeError

__all__ = ["DEFAULT_LIMITS", "Limits", "element_count"]

#: The largest element count any shape may describe (numpy's and protobuf's int64 limit).
INT64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Limits:
    """Upper bounds on decoded input. Every field is inclusive."""

    max_body_bytes: int = 64 * 1024 * 1024
    """Largest HTTP body or protobuf message, in bytes (Triton's default is 64 MB)."""
    max_decompressed_bytes: int = 64 * 1024 * 1024
    """Largest size a compressed body may inflate to."""
    max_tensor_elements: int = 2**31 - 1
    """Most elements in one tensor."""
    max_request_elements: int = 2**32
    """Most elements in all tensors of one request together."""
    max_depth: int = 100
    """Deepest nesting of a JSON "data" array (Triton's limit is 100)."""
    max_bytes_element: int = 2**32 - 1
    """Longest single BYTES element, in bytes (the wire prefix is a uint32)."""
    max_tensors: int = 4096
    """Most input (or output) tensors in one message."""
    body_timeout_seconds: float = 30.0
    """HTTP server: the longest wait, in seconds, for the next part of a request body. A client
    that stops sending mid-body without closing is answered 408 and disconnected, so such
    clients cannot hold connections forever.
    """


DEFAULT_LIMITS = Limits()


def element_count(shape: Iterable[Any], limits: Limits = DEFAULT_LIMITS) -> int:
    """The number of elements a shape describes, after checking it is a valid OIP shape.

    The empty shape ``[]`` is a scalar holding one element, as in numpy (Triton counts zero
    elements for it; see docs/codec.md).

    Parameters
    ----------
    shape
        Dimensions: non-negative integers (``bool`` is refused).
    limits
        The count is checked against ``limits.max_tensor_elements``, so an absurd shape is
        refused before anything is allocated for it; so is the product of the non-zero
        dimensions, which numpy refuses even for an empty array (``[0, 2**40, 2**40]``).
    """
    if type(shape) is tuple or type(shape) is list:
        # The common case, plain non-negative ints with no zero dimension, without building
        # lists: this runs for every tensor of every request (per-call overhead).
        count = 1
        for dim in shape:
            if type(dim) is not int or dim <= 0:
                break
            count *= dim
        else:
            if len(shape) <= 64 and count <= limits.max_tensor_elements:
                return count
    given = list(shape)
    if len(given) > 64:
        raise LimitError(f"shape has {len(given)} dimensions, more than numpy's limit of 64")
    dims: list[int] = []
    for dim in given:
        try:
            if isinstance(dim, bool):
                raise TypeError
            dims.append(operator.index(dim))  # ints and numpy integers
        except TypeError:
            raise ShapeError(f"shape {given!r}: dimensions must be integers, got {dim!r}") from None
        if dims[-1] < 0:
            raise ShapeError(f"shape {dims!r}: dimensions must be non-negative, got {dim}")
    count = math.prod(dims)
    if count > limits.max_tensor_elements:
        raise LimitError(
            f"shape {dims!r} describes {count} elements, more than the limit of "
            f"{limits.max_tensor_elements}"
        )
    # numpy refuses a shape whose non-zero dimensions overflow its size type even when a zero
    # dimension makes it empty ("array is too big"), so such a shape is refused here too.
    extent = math.prod(d for d in dims if d)
    if extent > limits.max_tensor_elements:
        raise LimitError(
            f"shape {dims!r}: its non-zero dimensions multiply to {extent}, more than the limit "
            f"of {limits.max_tensor_elements} elements (even with a zero dimension)"
        )
    return count
