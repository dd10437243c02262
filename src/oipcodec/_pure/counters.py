"""The statistics counting kernel in Python: the twin and reference of
``oipcodec._native.counters`` (see :mod:`oipcodec._shared.counters`), on a ``memoryview`` of
the slots cast to int64, every argument converted and every block checked before the first
write, as the native kernel does."""

from __future__ import annotations

import operator
from typing import Any

from oipcodec._shared import contract
from oipcodec._shared.counters import (
    BATCH_WIDTH,
    CONTRACTS,
    M_EXTRA_ROWS,
    M_INFER_NS,
    M_INPUT_NS,
    M_LAST,
    M_OUTPUT_NS,
    M_QUEUE_NS,
    M_SUCCESS_NS,
    MODEL_WIDTH,
    PATH_WIDTH,
    SlotLayout,
    block_outside,
    not_slots,
    slot_layout,
)

__all__ = ["SlotLayout", "count_success", "slot_layout"]

_LOW, _HIGH = -(1 << 63), 1 << 63


def _int64(value: Any) -> int:
    value = operator.index(value)
    if not _LOW <= value < _HIGH:
        raise OverflowError(f"statistics slots: {value} does not fit in int64")
    return value


def _add(s: memoryview, index: int, value: int) -> None:
    total = s[index] + value
    if not _LOW <= total < _HIGH:  # wraps, as the C integer does
        total = (total - _LOW) % (1 << 64) + _LOW
    s[index] = total


@contract(CONTRACTS)
def count_success(
    slots: Any,
    model: int,
    path: int,
    batch: int,
    rows: int,
    received: int,
    checked: int,
    started: int,
    finished: int,
    encoded: int,
    request_bytes: int,
    response_bytes: int,
) -> None:
    values = (model, path, batch, rows, received, checked, started, finished, encoded)
    model, path, batch, rows, received, checked, started, finished, encoded = map(_int64, values)
    request_bytes, response_bytes = _int64(request_bytes), _int64(response_bytes)
    view = memoryview(slots)
    if view.readonly or view.nbytes % 8 or not view.c_contiguous:
        raise not_slots(view.readonly, view.c_contiguous, view.nbytes)
    s = view.cast("B").cast("q")
    n = len(s)
    if not 0 <= model <= n - MODEL_WIDTH:
        raise block_outside("model", model, MODEL_WIDTH, n)
    if not 0 <= path <= n - PATH_WIDTH:
        raise block_outside("path", path, PATH_WIDTH, n)
    if batch != -1 and not 0 <= batch <= n - BATCH_WIDTH:
        raise block_outside("batch", batch, BATCH_WIDTH, n)
    input_ns, infer_ns, output_ns = checked - received, finished - started, encoded - finished
    _add(s, model, 1)
    _add(s, model + M_SUCCESS_NS, encoded - received)
    _add(s, model + M_QUEUE_NS, started - checked)
    _add(s, model + M_INPUT_NS, input_ns)
    _add(s, model + M_INFER_NS, infer_ns)
    _add(s, model + M_OUTPUT_NS, output_ns)
    _add(s, model + M_EXTRA_ROWS, rows - 1)
    s[model + M_LAST] = received
    _add(s, path, 1)
    _add(s, path + 1, request_bytes)
    _add(s, path + 2, response_bytes)
    _add(s, path + 3, input_ns)
    _add(s, path + 4, output_ns)
    if batch != -1:
        _add(s, batch, 1)
        _add(s, batch + 1, input_ns)
        _add(s, batch + 2, infer_ns)
        _add(s, batch + 3, output_ns)
