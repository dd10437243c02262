"""Top-k over a [64, 1000] FP32 batch (a classifier's logits), k = 1 and 5: ours (native,
pure) vs numpy's ``argpartition`` + a sort of the k, the usual hand-written peer.

The peer's answer is not the same contract: argpartition leaves ties in any order and ranks
NaN first after negation, where ours breaks ties by the lower index and ranks NaN last. The
last group measures the Triton strings of the answer (``classification_strings``).
"""

from __future__ import annotations

import numpy as np
import pytest

ROWS, CLASSES = 64, 1000


@pytest.fixture(scope="module")
def logits() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((ROWS, CLASSES)).astype(np.float32)


def numpy_top_k(values: np.ndarray, k: int) -> np.ndarray:
    """The k best indices of each row, best first: argpartition, then sort the k."""
    part = np.argpartition(-values, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(values, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def test_peer_agrees_on_distinct_values(native, logits) -> None:
    for k in (1, 5):
        np.testing.assert_array_equal(numpy_top_k(logits, k), native.top_k(logits, k)[0])


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.benchmark(group="top_k [64, 1000] FP32")
def test_top_k_native(benchmark, native, logits, k) -> None:
    benchmark(native.top_k, logits, k)


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.benchmark(group="top_k [64, 1000] FP32")
def test_top_k_pure(benchmark, pure, logits, k) -> None:
    benchmark(pure.top_k, logits, k)


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.benchmark(group="top_k [64, 1000] FP32")
def test_top_k_numpy_argpartition(benchmark, logits, k) -> None:
    benchmark(numpy_top_k, logits, k)


@pytest.mark.benchmark(group="classification_strings [64, 5] FP32")
def test_strings_native(benchmark, native, logits) -> None:
    indices, values = native.top_k(logits, 5)
    benchmark(native.classification_strings, values, indices)


@pytest.mark.benchmark(group="classification_strings [64, 5] FP32")
def test_strings_pure(benchmark, pure, logits) -> None:
    indices, values = pure.top_k(logits, 5)
    benchmark(pure.classification_strings, values, indices)
