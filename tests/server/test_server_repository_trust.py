"""The model repository against a careless operator and a hostile client (issue 35, items 5-9):
configuration overrides checked against the protobuf field ranges, a replaced model freed by
reference counting alone, unload that drains the requests in flight, labels files confined to
the model's folder, model folders that are symlinks out of the repository, names and version
folders that are not what they seem, and a status that answers despite an unloaded folder.

In-process tests drive the registry; the others run a real server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec.server.registry import ModelRegistry
from oipcodec.server.repository import ModelRepository
from oipcodec.types import InferRequest, Tensor

BIG_MODEL = """
import numpy as np

from oipcodec.server import Model, TensorSpec

WEIGHTS_BYTES = 8 << 20


class Big(Model):
    inputs = [TensorSpec("X", "FP32", [-1])]
    outputs = [TensorSpec("Y", "FP32", [-1])]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weights = np.ones(WEIGHTS_BYTES // 4, dtype=np.float32)

    def predict(self, inputs, parameters):
        return {"Y": inputs["X"] + self.weights[0]}
"""


@pytest.fixture
def no_gc() -> Iterator[None]:
    """The cyclic collector off, as the HTTP tests run: what is freed is freed by reference
    counting alone."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _request(name: str) -> InferRequest:
    data = np.arange(3, dtype=np.float32)
    return InferRequest([Tensor.from_array("X", data)], model_name=name)


async def _alive(refs: list[weakref.ref[Any]], seconds: float = 2.0) -> list[Any]:
    """The referents still alive once the worker threads that ran the hooks have let go of
    them (a worker drops its call a moment after the loop has its result)."""
    for _ in range(int(seconds / 0.01)):
        if all(ref() is None for ref in refs):
            break
        await asyncio.sleep(0.01)
    return [ref for ref in refs if ref() is not None]


# ------------------------------------------------------------------ item 6: reloads are freed


@pytest.mark.parametrize("infer", [False, True])
@pytest.mark.parametrize("offered", ["class", "MODEL"])
def test_a_replaced_model_is_freed_without_the_cyclic_collector(
    tmp_path: Path, no_gc: None, infer: bool, offered: str
) -> None:
    (tmp_path / "big").mkdir()
    code = BIG_MODEL + ('\nMODEL = Big(name="big")\n' if offered == "MODEL" else "")
    (tmp_path / "big" / "model.py").write_text(code)

    async def run() -> None:
        registry = ModelRegistry(repository=ModelRepository(tmp_path, "explicit", ["big"]))
        await registry.load_all()
        seen = []
        for _ in range(3):
            model = registry.get("big")
            seen.append(weakref.ref(model))
            if infer:
                response, checked, started, finished = await registry.execute(_request("big"))
                assert registry.statistics is not None
                registry.statistics.answered(
                    model, "json", [], checked, (checked, started, finished), 10, 10
                )
                assert response.outputs[0].name == "Y"
            del model
            await registry.load("big")
        await registry.unload("big")
        alive = await _alive(seen)
        assert not alive, f"{len(alive)} replaced models still alive"
        if infer:
            document = registry.statistics_document()
            assert document["model_stats"] == [] or all(
                s["name"] == "big" for s in document["model_stats"]
            )

    asyncio.run(run())


# ------------------------------------------------------------------ item 7: unload drains

SLOW_MODEL = """
import asyncio

from oipcodec.server import Model, TensorSpec

EVENTS = []


class Slow(Model):
    inputs = [TensorSpec("X", "FP32", [-1])]
    outputs = [TensorSpec("Y", "FP32", [-1])]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.release = asyncio.Event()
        self.entered = 0
        self.unloaded = False

    async def predict(self, inputs, parameters):
        self.entered += 1
        await self.release.wait()
        if self.unloaded:
            raise RuntimeError("predict ran after unload")
        return {"Y": inputs["X"] + GENERATION}

    async def unload(self):
        EVENTS.append(("unload", GENERATION, self.entered))
        self.unloaded = True
"""


@pytest.mark.parametrize("change", ["unload", "reload"])
def test_unload_drains_the_requests_in_flight(tmp_path: Path, change: str) -> None:
    (tmp_path / "slow").mkdir()
    code = tmp_path / "slow" / "model.py"
    code.write_text("GENERATION = 1\n" + SLOW_MODEL)

    async def run() -> None:
        registry = ModelRegistry(repository=ModelRepository(tmp_path, "explicit", ["slow"]))
        await registry.load_all()
        first = registry.get("slow")
        events = type(first).predict.__globals__["EVENTS"]
        running = [asyncio.create_task(registry.execute(_request("slow"))) for _ in range(4)]
        for _ in range(100):
            await asyncio.sleep(0)
        assert first.entered == 4
        code.write_text("GENERATION = 2\n" + SLOW_MODEL)
        if change == "unload":
            changing = asyncio.create_task(registry.unload("slow"))
        else:
            changing = asyncio.create_task(registry.load("slow"))
        for _ in range(200):  # the change goes as far as it can without the 4 requests
            await asyncio.sleep(0.005)
            if change == "unload" or registry.is_ready("slow"):
                break
        # New requests see the new state at once; the old model is not unloaded yet.
        if change == "unload":
            with pytest.raises(Exception, match="unloaded"):
                registry.get("slow")
        else:
            second = registry.get("slow")
            assert second is not first
            second.release.set()
            response = (await registry.execute(_request("slow")))[0]
            assert list(response.outputs[0].data) == [2.0, 3.0, 4.0]
        assert events == [] and not changing.done()
        first.release.set()
        answers = await asyncio.gather(*running)
        for response, *_ in answers:  # all 4 finished on the model they started on
            assert list(response.outputs[0].data) == [1.0, 2.0, 3.0]
        await asyncio.wait_for(changing, 5)
        assert events == [("unload", 1, 4)]

    asyncio.run(run())


def test_unload_waits_for_a_stuck_predict_at_most_drain_timeout(tmp_path: Path) -> None:
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "model.py").write_text("GENERATION = 1\n" + SLOW_MODEL)

    async def run() -> None:
        registry = ModelRegistry(repository=ModelRepository(tmp_path, "explicit", ["slow"]))
        registry.drain_timeout = 0.2
        await registry.load_all()
        stuck = registry.get("slow")
        running = asyncio.create_task(registry.execute(_request("slow")))
        await asyncio.sleep(0.01)
        await asyncio.wait_for(registry.unload("slow"), 5)
        assert stuck.unloaded
        stuck.release.set()
        with pytest.raises(Exception, match="predict ran after unload"):
            await running

    asyncio.run(run())
