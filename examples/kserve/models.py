"""The models the example image serves: ``oipcodec serve --model-module models``.

The demo models (simple, identity, add_sub, ...) and ``doubler``, an FP32 model of the kind
you would write. Replace this module (or put your own ``models.py`` at the InferenceService's
``storageUri``, which KServe downloads to /mnt/models, first on PYTHONPATH).
"""

from __future__ import annotations

from typing import Any

from oipcodec.server import Model, TensorSpec
from oipcodec.server.demo import demo_models


class Doubler(Model):
    """Y = 2 X, for any number of FP32 values."""

    name = "doubler"
    inputs = (TensorSpec("X", "FP32", [-1]),)
    outputs = (TensorSpec("Y", "FP32", [-1]),)

    def predict(self, inputs: Any, parameters: Any) -> Any:
        return {"Y": inputs["X"] * 2}


def MODELS() -> list[Model]:
    return [*demo_models(), Doubler()]
