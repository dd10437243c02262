"""Top-k ranking and Triton's classification strings, pure twin of ``oipcodec._native.topk``.

The ranking sorts a key whose ascending order is the ranking (see ``_shared/topk.py``) with
numpy's stable sort: the values negated (floats; NaN stays NaN, which numpy sorts last) or
bit-inverted (integers: ``~x`` reverses the order without overflow), so that equal values
keep their index order. The native kernel selects with a heap instead; the tests compare both
against an independent reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.topk import (
    CONTRACTS,
    FORMAT_FLOAT,
    format_source,
    label_table,
    rank_source,
)

__all__ = ["classification_strings", "top_k"]


@contract(CONTRACTS)
def top_k(values: Any, k: Any) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    array, count = rank_source(values, k)
    key = -array if array.dtype.kind == "f" else ~array
    order = np.argsort(key, axis=1, kind="stable")[:, :count].astype(np.int64)
    return order, np.take_along_axis(values, order, axis=1)


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return "%f" % value  # noqa: UP031 - printf's %f is the rule being implemented


@contract(CONTRACTS)
def classification_strings(
    values: Any, indices: Any, labels: Sequence[Any] | None = None
) -> np.ndarray[Any, Any]:
    flat, index, code = format_source(values, indices)
    table = label_table(labels)
    texts = map(_float_text, flat.tolist()) if code == FORMAT_FLOAT else map(str, flat.tolist())
    out = np.empty(flat.size, dtype=object)
    for i, (text, at) in enumerate(zip(texts, index.tolist(), strict=True)):
        element = f"{text}:{at}".encode()
        label = table[at] if at < len(table) else b""
        out[i] = element + b":" + label if label else element
    return out.reshape(np.shape(values))
