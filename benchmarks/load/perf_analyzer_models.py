"""The models of benchmarks/load/perf_analyzer_check.py (``oipcodec serve --model-module
benchmarks.load.perf_analyzer_models``): identities with declared, fixed shapes, as
perf_analyzer needs them to build its requests."""

from __future__ import annotations

from typing import Any

from oipcodec.server import Model, TensorSpec


class FixedIdentity(Model):
    """``OUTPUT0`` is ``INPUT0``, of one declared datatype and shape."""

    def __init__(self, name: str, datatype: str, shape: list[int]) -> None:
        super().__init__(
            name,
            inputs=[TensorSpec("INPUT0", datatype, shape)],
            outputs=[TensorSpec("OUTPUT0", datatype, shape)],
        )

    def predict(self, inputs: dict[str, Any], parameters: Any) -> dict[str, Any]:
        return {"OUTPUT0": inputs["INPUT0"]}


MODELS = [
    FixedIdentity("image", "FP32", [1, 3, 224, 224]),
    FixedIdentity("small", "FP32", [1, 16]),
]
