"""The model side of streaming: a generator predict is decoupled, Triton's
``model_transaction_policy`` read both ways, dynamic batching refused with it, and the
streaming run's pull-one-at-a-time and close."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec.server import DynamicBatching, Model, TensorSpec
from oipcodec.server.inference import Pipeline
from oipcodec.server.inference.streaming import Responses
from oipcodec.server.model_config import apply_config, read_config
from oipcodec.server.registry import ModelRegistry
from oipcodec.types import InferRequest, Tensor


class Counter(Model):
    name = "counter"
    inputs = (TensorSpec("N", "INT32", [1]),)
    outputs = (TensorSpec("I", "INT32", [1]),)

    def __init__(self) -> None:
        super().__init__()
        self.pulled = 0
        self.closed = ""

    async def predict(self, inputs: Any, parameters: Any) -> AsyncIterator[dict[str, Any]]:
        try:
            for index in range(int(inputs["N"][0])):
                self.pulled += 1
                yield {"I": np.array([index], dtype=np.int32)}
        except GeneratorExit:
            self.closed = f"GeneratorExit after {self.pulled}"
            raise


class Once(Model):
    name = "once"
    inputs = (TensorSpec("N", "INT32", [1]),)
    outputs = (TensorSpec("I", "INT32", [1]),)

    def predict(self, inputs: Any, parameters: Any) -> dict[str, Any]:
        return {"I": inputs["N"]}


def test_a_generator_predict_is_decoupled() -> None:
    class Sync(Model):
        name = "sync"

        def predict(self, inputs: Any, parameters: Any) -> Iterator[dict[str, Any]]:
            yield {}

    assert Counter().decoupled and Sync().decoupled and not Once().decoupled
    assert Counter().config()["model_transaction_policy"] == {"decoupled": True}
    assert Once().config()["model_transaction_policy"] == {"decoupled": False}


def test_dynamic_batching_is_refused_with_a_decoupled_model() -> None:
    class Batched(Counter):
        max_batch_size = 4
        inputs = (TensorSpec("N", "INT32", [-1, 1]),)
        outputs = (TensorSpec("I", "INT32", [-1, 1]),)

    model = Batched()
    with pytest.raises(ValueError, match="dynamic_batching cannot be combined with a decoupled"):
        model.configure(dynamic_batching=DynamicBatching())
    assert model.dynamic_batching is None and model.decoupled


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("config.pbtxt", 'name: "once"\nmodel_transaction_policy { decoupled: true }\n'),
        ("config.json", '{"name": "once", "model_transaction_policy": {"decoupled": true}}'),
    ],
)
def test_the_transaction_policy_is_read_from_the_configuration(
    tmp_path: Path, filename: str, text: str
) -> None:
    (tmp_path / filename).write_text(text)
    found = read_config(tmp_path, "once")
    assert found is not None
    model = Once()
    apply_config(model, found[0], tmp_path)
    assert model.decoupled


def _request(model: str, n: int) -> InferRequest:
    return InferRequest(
        [Tensor("N", "INT32", [1], np.array([n], dtype=np.int32))], model_name=model
    )


def test_responses_are_pulled_one_at_a_time_and_closed() -> None:
    model = Counter()
    pipeline = Pipeline.of(ModelRegistry([model]))

    async def main() -> list[int]:
        await pipeline.registry.load_all()
        seen = []
        with pipeline.exchange("json", 0) as exchange:
            async with Responses(exchange, _request("counter", 100), None) as responses:
                for _ in range(3):
                    response = await responses.next()
                    assert response is not None
                    seen.append(int(response.outputs[0].data[0]))
                    assert model.pulled == len(seen)  # nothing pulled ahead
        assert pipeline._running == {}  # the stream left the drain count
        return seen

    assert asyncio.run(main()) == [0, 1, 2]
    assert model.closed == "GeneratorExit after 3"


def test_a_model_that_answers_once_is_a_stream_of_one() -> None:
    pipeline = Pipeline.of(ModelRegistry([Once()]))

    async def main() -> tuple[list[int], bool]:
        await pipeline.registry.load_all()
        with pipeline.exchange("json", 0) as exchange:
            async with Responses(exchange, _request("once", 7), None) as responses:
                got = []
                while (response := await responses.next()) is not None:
                    got.append(int(response.outputs[0].data[0]))
                return got, responses.single

    assert asyncio.run(main()) == ([7], True)


def test_closed_responses_do_not_call_predict_again() -> None:
    model = Counter()
    pipeline = Pipeline.of(ModelRegistry([model]))

    async def main() -> None:
        await pipeline.registry.load_all()
        with pipeline.exchange("json", 0) as exchange:
            responses = Responses(exchange, _request("counter", 5), None)
            assert await responses.next() is not None
            await responses.aclose()
            with pytest.raises(RuntimeError, match="closed"):
                await responses.next()

    asyncio.run(main())
    assert model.pulled == 1
