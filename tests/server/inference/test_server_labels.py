"""Classification inside the server, without a client: the registry's answers for edge shapes
and undeclared outputs, and how a model's labels are read and checked when it is created."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from oipcodec.server import InvalidArgumentError, Model, TensorSpec
from oipcodec.server.demo import Identity
from oipcodec.server.inference import Pipeline
from oipcodec.server.registry import ModelRegistry
from oipcodec.types import InferRequest, RequestedOutput, Tensor
from tests.support.classify_models import classify_models


def _registry_infer(model_name: str, data: np.ndarray, k: int) -> Tensor:
    registry = ModelRegistry(classify_models(str(Path(__file__))))
    asyncio.run(registry.load_all())
    request = InferRequest(
        [Tensor.from_array("X", data)],
        [RequestedOutput("PROB", {"classification": k})],
        model_name=model_name,
    )
    (tensor,) = asyncio.run(Pipeline.of(registry).run(request)).response.outputs
    return tensor


def test_empty_batches_and_empty_rows() -> None:
    empty_batch = _registry_infer("scores", np.zeros((0, 5), np.float32), 3)
    assert (empty_batch.datatype, empty_batch.shape) == ("BYTES", (0, 3))
    no_classes = _registry_infer("scores", np.zeros((2, 0), np.float32), 3)
    assert no_classes.shape == (2, 0)
    flat_empty = _registry_infer("scores_flat", np.zeros((0, 5), np.float32), 3)
    assert flat_empty.shape == (0,)


def test_undeclared_bytes_output_refused_after_predict() -> None:
    """A model that declares no outputs (identity): the datatype is known only once predict
    answered, and a BYTES output is refused then, naming it."""
    registry = ModelRegistry([Identity()])
    asyncio.run(registry.load_all())
    words = Tensor.from_array("W", np.array([b"a", b"b"], dtype=object))
    numbers = Tensor.from_array("N", np.array([1, 9, 5], dtype=np.uint16))
    asked = [RequestedOutput(name, {"classification": 2}) for name in ("N", "W")]
    request = InferRequest([words, numbers], asked[:1], model_name="identity")
    (tensor,) = asyncio.run(Pipeline.of(registry).run(request)).response.outputs
    assert tensor.data.tolist() == [b"9:1", b"5:2"]
    request = InferRequest([words, numbers], asked, model_name="identity")
    with pytest.raises(InvalidArgumentError, match="output 'W' is BYTES"):
        asyncio.run(Pipeline.of(registry).run(request))


class Labeled(Model):
    name = "labeled"
    outputs = (TensorSpec("P", "FP32", [-1]),)


def _labels_of(labels: object) -> tuple[bytes, ...] | None:
    model = type("M", (Labeled,), {"labels": labels})()
    return model.class_labels("P")


def test_labels_from_a_list_and_from_a_file(tmp_path: Path) -> None:
    assert _labels_of({"P": ["cat", "d\u00e9j\u00e0", ""]}) == (b"cat", b"d\xc3\xa9j\xc3\xa0", b"")
    path = tmp_path / "labels.txt"
    path.write_bytes(b"cat\r\ndog\n\nbird")
    assert _labels_of({"P": str(path)}) == (b"cat", b"dog", b"", b"bird")
    path.write_bytes(b"cat\ndog\n")
    assert _labels_of({"P": path}) == (b"cat", b"dog")  # a PathLike; the last newline ends a line
    assert _labels_of(None) is None
    assert Labeled().class_labels("P") is None


@pytest.mark.parametrize(
    ("labels", "error", "message"),
    [
        ({"Q": ["a"]}, ValueError, "output 'Q': labels for an output the model does not declare"),
        ({"P": ["a", 1]}, TypeError, "every label must be a str"),
        ({"P": b"a\nb"}, TypeError, "a sequence of str or a file path"),
        ({"P": 3}, TypeError, "a sequence of str or a file path"),
        ({"P": "/nonexistent/labels.txt"}, ValueError, "cannot read the labels file"),
        (["a"], TypeError, "must map output names"),
    ],
)
def test_bad_labels_fail_when_the_model_is_created(
    labels: object, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        _labels_of(labels)


def test_a_labels_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "labels.txt"
    path.write_bytes(b"caf\xe9\n")
    with pytest.raises(ValueError, match="cannot read the labels file"):
        _labels_of({"P": str(path)})
