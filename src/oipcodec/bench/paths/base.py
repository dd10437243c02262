"""What every implementation's module of the paths gives and shares: a caller, the codec calls
of one round trip, the check that an answer holds the values sent, and what to undo when the
worker ends."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec.datatypes import datatype_of
from oipcodec.types import Tensor

__all__ = ["Caller", "CodecOps", "as_tensors", "on_release", "release", "same_values"]

#: One request, answered: returns the answer's outputs (Tensors, or Outputs for tritonclient).
Caller = Callable[[], Any]


@dataclass
class CodecOps:
    """The codec calls of one request/response round trip, and the wire sizes (a peer
    server's: no client calls; tritonclient's: no server calls)."""

    client_encode: Callable[[], Any] | None
    client_decode: Callable[[], Any] | None
    server_decode: Callable[[], Any] | None
    server_encode: Callable[[], Any] | None
    request_bytes: int
    response_bytes: int


#: What to undo when the worker ends: the shared-memory objects its callers and codec timings
#: made (removed from /dev/shm, mappings closed), the clients its callers opened.
_RELEASE: list[Callable[[], None]] = []


def on_release(undo: Callable[[], Any]) -> None:
    """Have :func:`release` call ``undo``."""
    _RELEASE.append(undo)


def release() -> None:
    """Undo everything registered with :func:`on_release`, last first (the worker calls it on
    its way out)."""
    while _RELEASE:
        with contextlib.suppress(Exception):
            _RELEASE.pop()()


def as_tensors(named: Iterable[tuple[str, Any]]) -> list[Tensor]:
    """Named arrays as Tensors, for the workload's checks (the v1 and GraphPipe answers)."""
    return [Tensor(name, datatype_of(data), data.shape, data) for name, data in named]


def same_values(sent: Tensor, received: Any) -> bool:
    """Whether an answer holds exactly the values sent (bit for bit for floats)."""
    expected = sent.data
    got = np.asarray(received)
    if got.size != expected.size:
        return False
    if sent.datatype == "BYTES":
        return [bytes(x) if not isinstance(x, str) else x.encode() for x in got.ravel()] == [
            bytes(x) for x in expected.ravel()
        ]
    if sent.datatype == "BF16":
        a = np.asarray(expected, dtype=np.float32).ravel()
        b = np.asarray(got, dtype=np.float32).ravel()
        return bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))
    return bool(
        np.array_equal(
            np.ascontiguousarray(expected).ravel().view(np.uint8),
            np.ascontiguousarray(got.astype(expected.dtype, copy=False)).ravel().view(np.uint8),
        )
    )
