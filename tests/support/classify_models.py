"""Models for the classification tests (a helper module, not a test module): created in the
test process, pickled into the server's subprocess."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from oipcodec.server import Model, TensorSpec

LABELS = ["zero", "one", "two", "three", "four"]


class Scores(Model):
    """X FP32 -> PROB (X, no labels), LABELED (X, with labels), COUNTS (X * 10 as INT32), and
    TEXT (BYTES, which classification refuses)."""

    platform = "oipcodec_python"
    inputs = (TensorSpec("X", "FP32", [-1, -1]),)
    outputs = (
        TensorSpec("PROB", "FP32", [-1, -1]),
        TensorSpec("LABELED", "FP32", [-1, -1]),
        TensorSpec("COUNTS", "INT32", [-1, -1]),
        TensorSpec("TEXT", "BYTES", [-1]),
    )

    def __init__(
        self, name: str, max_batch_size: int, labels: Mapping[str, Sequence[str] | str]
    ) -> None:
        self.max_batch_size = max_batch_size
        self.labels = labels
        super().__init__(name)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        x = inputs["X"]
        return {
            "PROB": x,
            "LABELED": x,
            "COUNTS": (x * 10).astype(np.int32),
            # One row per request row (a batching model's outputs are checked for it).
            "TEXT": np.resize(np.array([b"a", b"b"], dtype=object), len(x)),
        }


def classify_models(labels_file: str) -> list[Model]:
    """``scores``: batching (max_batch_size 8), labels as a list; ``scores_flat``: not
    batching, labels from ``labels_file``."""
    return [
        Scores("scores", 8, {"LABELED": LABELS}),
        Scores("scores_flat", 0, {"LABELED": labels_file}),
    ]
