"""The fused inference step (server/inference/fused.py): which models it takes, what it hands
back untouched, and the general step's end after ``predict`` (an exception, outputs to check).
Its answers against the Python path's, byte for byte, over sockets:
tests/server/http11/test_server_fused.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from oipcodec.errors import InternalError, InvalidArgumentError, OverloadedError
from oipcodec.limits import DEFAULT_LIMITS
from oipcodec.server import Model, TensorSpec
from oipcodec.server.inference import Pipeline
from oipcodec.server.inference.fused import Fused
from oipcodec.server.model_config import DynamicBatching
from oipcodec.server.queue_policy import Overload
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.stats import Statistics
from oipcodec.types import InferResponse

X = (TensorSpec("X", "FP32", [1, -1]),)
BODY = orjson.dumps(
    {"inputs": [{"name": "X", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]}
)


class Double(Model):
    name = "double"
    inputs = X
    outputs = (TensorSpec("Y", "FP32", [1, -1]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:
        return {"Y": inputs["X"] * 2}


class AsyncDouble(Double):
    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:  # type: ignore[override]
        return {"Y": inputs["X"] * 2}


class Raises(Double):
    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:
        raise ValueError("no")


class Lists(Double):
    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:
        return {"Y": [[2.0, 4.0]]}


def _encode(response: InferResponse, binary: Any) -> Any:
    async def encoded() -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        return 200, orjson.dumps([t.name for t in response.outputs]), []

    return encoded()


@pytest.fixture
def pipeline() -> Iterator[Pipeline]:
    registry = ModelRegistry([Double()])
    registry.statistics = Statistics()
    asyncio.run(registry.load_all())
    yield Pipeline.of(registry)
    asyncio.run(registry.unload_all())


def _fused(pipeline: Pipeline, model: Model) -> Fused | None:
    return Fused.of(pipeline, model, DEFAULT_LIMITS, _encode)


def _model(**declared: Any) -> Model:
    model = Double()
    model.configure(**declared)
    return model


def _threaded() -> Model:
    model = Double()
    model.run_in_thread = True
    return model


@pytest.mark.parametrize(
    ("what", "make"),
    [
        ("BYTES input", lambda: _model(inputs=(TensorSpec("X", "BYTES", [1, -1]),))),
        ("BF16 output", lambda: _model(outputs=(TensorSpec("Y", "BF16", [1, -1]),))),
    ],
)
def test_a_model_whose_tensors_vary_is_not_taken(pipeline: Pipeline, what: str, make: Any) -> None:
    assert _fused(pipeline, Double()) is not None
    assert _fused(pipeline, make()) is None, what


def test_a_plain_model_is_answered_and_counted(pipeline: Pipeline) -> None:
    model = pipeline.model("double")
    fused = _fused(pipeline, model)
    assert fused is not None
    answer = fused(BODY)
    assert isinstance(answer, bytes)
    assert orjson.loads(answer)["outputs"][0]["data"] == [2.0, 4.0]
    stats = pipeline.registry.statistics_document("double")["model_stats"][0]
    assert stats["inference_stats"]["success"]["count"] == 1
    assert fused(BODY.replace(b'"X"', b'"Z"')) is None  # not its input: the general step's
    stats = pipeline.registry.statistics_document("double")["model_stats"][0]
    assert stats["inference_stats"]["success"]["count"] == 1  # nothing counted when handed back
    # The overload limit admits a predict that answers in the call (nothing else in flight).
    pipeline.overload = Overload(max_queued_requests=1)
    assert isinstance(fused(BODY), bytes)
    stats = pipeline.registry.statistics_document("double")["model_stats"][0]
    assert stats["inference_stats"]["success"]["count"] == 2


def _end(work: Any) -> Any:
    async def run() -> Any:
        return await work

    return asyncio.run(run())


def test_after_predict_the_general_step_ends_the_request(pipeline: Pipeline) -> None:
    raising = _fused(pipeline, Raises())
    assert raising is not None
    work = raising(BODY)
    assert asyncio.iscoroutine(work)
    with pytest.raises(InternalError, match="model 'double' failed: ValueError: no") as failed:
        _end(work)
    assert failed.value.executed
    lists = _fused(pipeline, Lists())
    assert lists is not None
    work = lists(BODY)
    assert asyncio.iscoroutine(work)  # converted by the general step, encoded by the front end
    assert _end(work) == (200, b'["Y"]', [])
    stats = pipeline.registry.statistics_document("double")["model_stats"][0]
    assert stats["inference_stats"]["success"]["count"] == 1
    assert stats["inference_stats"]["fail"]["count"] == 1
    assert stats["execution_count"] == 2


class Halves(Model):
    name = "double"
    max_batch_size = 2
    inputs = (TensorSpec("X", "FP32", [-1, 2]), TensorSpec("W", "FP32", [-1, 2]))
    outputs = (TensorSpec("Y", "FP32", [-1, 2]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:
        return {"Y": inputs["X"][:1]}


def test_a_batching_model_takes_one_batch_size_within_its_own(pipeline: Pipeline) -> None:
    fused = _fused(pipeline, Halves())
    assert fused is not None

    def body(rows: list[int]) -> bytes:
        inputs = [
            {"name": n, "shape": [r, 2], "datatype": "FP32", "data": [0.5] * 2 * r}
            for n, r in zip("XW", rows, strict=True)
        ]
        return orjson.dumps({"inputs": inputs})

    assert isinstance(fused(body([1, 1])), bytes)
    assert fused(body([1, 2])) is None  # two batch sizes: the general step names them
    assert fused(body([3, 3])) is None  # over max_batch_size
    work = fused(body([2, 2]))  # one row answered for two: the general step refuses it
    assert asyncio.iscoroutine(work)
    with pytest.raises(InternalError, match="with 1 rows"):
        _end(work)


class Batched(Model):
    """Doubles X; counts its calls (each a batch) and the rows of each."""

    name = "batched"
    max_batch_size = 4
    dynamic_batching = DynamicBatching(max_queue_delay_microseconds=200_000)
    inputs = (TensorSpec("X", "FP32", [-1, 2]),)
    outputs = (TensorSpec("Y", "FP32", [-1, 2]),)

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:
        self.batches.append(len(inputs["X"]))
        return {"Y": inputs["X"] * 2}


def _rows_body(rows: int, value: float, **extra: Any) -> bytes:
    x = {"name": "X", "shape": [rows, 2], "datatype": "FP32", "data": [value] * 2 * rows}
    return orjson.dumps({"inputs": [x], **extra})


def test_a_batched_models_fused_requests_run_as_one_batch() -> None:
    model = Batched()
    registry = ModelRegistry([model])
    registry.statistics = Statistics()
    pipeline = Pipeline.of(registry)

    async def run() -> list[Any]:
        await registry.load_all()
        fused = _fused(pipeline, model)
        assert fused is not None
        # Taken: decoded now, answered once the batch ran (3 requests, 4 rows: it is full).
        works = [fused(_rows_body(1, 1.0, id="a")), fused(_rows_body(2, 2.0)), fused(BATCH_3)]
        assert all(asyncio.iscoroutine(w) for w in works)
        assert fused(_rows_body(1, 1.0, parameters={"priority": 1})) is None  # the general step's
        answers = await asyncio.gather(*works)
        with pytest.raises(InvalidArgumentError, match="batch-size must be <= 4"):
            await fused(_rows_body(5, 1.0))  # type: ignore[misc]
        await registry.unload_all()
        return answers

    answers = asyncio.run(run())
    assert model.batches == [4]  # one predict call for the three requests
    assert [orjson.loads(a)["outputs"][0]["data"] for a in answers] == [
        [2.0, 2.0],
        [4.0, 4.0, 4.0, 4.0],
        [6.0, 6.0],
    ]
    assert orjson.loads(answers[0])["id"] == "a"
    stats = registry.statistics_document("batched")["model_stats"][0]
    assert stats["inference_stats"]["success"]["count"] == 3
    assert stats["inference_stats"]["fail"]["count"] == 1
    assert stats["inference_count"] == 4  # rows
    assert stats["execution_count"] == 1
    assert [(b["batch_size"], b["compute_infer"]["count"]) for b in stats["batch_stats"]] == [
        (4, 1)
    ]


BATCH_3 = _rows_body(1, 3.0)


class AsyncRaises(Double):
    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:  # type: ignore[override]
        raise ValueError("no")


@pytest.mark.parametrize("make", [AsyncDouble, _threaded], ids=["async", "thread"])
def test_an_awaited_predict_is_answered_by_the_kernel_and_counted(
    pipeline: Pipeline, make: Any
) -> None:
    fused = _fused(pipeline, make())
    assert fused is not None
    work = fused(BODY)
    assert asyncio.iscoroutine(work)
    answer = _end(work)
    assert orjson.loads(answer)["outputs"][0]["data"] == [2.0, 4.0]
    stats = pipeline.registry.statistics_document("double")["model_stats"][0]
    assert stats["inference_stats"]["success"]["count"] == 1
    assert stats["inference_count"] == 1
    raising = _fused(pipeline, AsyncRaises())
    assert raising is not None
    with pytest.raises(InternalError, match="model 'double' failed: ValueError: no") as failed:
        _end(raising(BODY))
    assert failed.value.executed
    stats = pipeline.registry.statistics_document("double")["model_stats"][0]
    assert stats["inference_stats"]["fail"]["count"] == 1


class Gated(Double):
    """Doubles X once its gate opens."""

    def __init__(self) -> None:
        super().__init__()
        self.gate: asyncio.Event | None = None

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:  # type: ignore[override]
        assert self.gate is not None
        await self.gate.wait()
        return {"Y": inputs["X"] * 2}


@pytest.mark.parametrize("where", ["model", "server"])
def test_an_awaited_predict_over_the_overload_limit_is_refused_as_the_general_step_does(
    where: str,
) -> None:
    """The limit (the model's max_queued_requests, or the server's) admitted through the
    general step's own admission: the request over it refused, counted as a failure."""
    model = Gated()
    registry = ModelRegistry([model])
    registry.statistics = Statistics()
    pipeline = Pipeline.of(registry)
    if where == "model":
        model.max_queued_requests = 1
    else:
        pipeline.overload = Overload(max_queued_requests=1)

    async def run() -> Any:
        await registry.load_all()
        model.gate = asyncio.Event()
        fused = _fused(pipeline, model)
        assert fused is not None
        first = asyncio.ensure_future(fused(BODY))  # type: ignore[arg-type]
        await asyncio.sleep(0)  # in flight, waiting at the gate
        with pytest.raises(OverloadedError, match=r"holds 1 requests, its limit"):
            await fused(BODY)  # type: ignore[misc]
        model.gate.set()
        answer = await first
        await registry.unload_all()
        return answer

    assert orjson.loads(asyncio.run(run()))["outputs"][0]["data"] == [2.0, 4.0]
    stats = registry.statistics_document("double")["model_stats"][0]
    assert stats["inference_stats"]["success"]["count"] == 1
    assert stats["inference_stats"]["fail"]["count"] == 1
    assert stats["execution_count"] == 1
