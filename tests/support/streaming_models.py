"""Decoupled models for the streaming tests: each yields what its test counts."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import numpy as np

from oipcodec.errors import InvalidArgumentError
from oipcodec.server import Model, TensorSpec
from oipcodec.server.demo import AddSub, RepeatInt32, SquareInt32

#: What the models saw when a stream ended early, by request id (thread models run in the
#: server's process: the tests that read it run the server in a thread).
CLOSED: dict[str, str] = {}
CLOSED_EVENT = threading.Event()
#: How many responses each stream's model has yielded so far, by request id.
PROGRESS: dict[str, int] = {}


class Tokens(Model):
    """``N`` (INT32 [1]) answers N responses, TOKEN (BYTES [1]) ``t0``, ``t1``...; a
    ``fail_at`` parameter raises at that response; ``sleep`` (seconds) between responses."""

    name = "tokens"
    inputs = (TensorSpec("N", "INT32", [1]),)
    outputs = (TensorSpec("TOKEN", "BYTES", [1]),)

    async def predict(self, inputs: Any, parameters: Any) -> AsyncIterator[dict[str, Any]]:
        fail_at = parameters.get("fail_at", -1)
        pause = float(parameters.get("sleep", 0))
        key = str(parameters.get("key", ""))
        sent = 0
        try:
            for index in range(int(inputs["N"][0])):
                if index == fail_at:
                    raise InvalidArgumentError(f"token {index} refused")
                if pause:
                    await asyncio.sleep(pause)
                yield {"TOKEN": np.array([f"t{index}".encode()], dtype=object)}
                sent += 1
                PROGRESS[key] = sent
        except GeneratorExit:
            CLOSED[key] = f"GeneratorExit after {sent}"
            CLOSED_EVENT.set()
            raise
        except asyncio.CancelledError:
            CLOSED[key] = f"CancelledError after {sent}"
            CLOSED_EVENT.set()
            raise


class SyncTokens(Model):
    """As :class:`Tokens`, a plain generator in a worker thread."""

    name = "sync_tokens"
    run_in_thread = True
    inputs = (TensorSpec("N", "INT32", [1]),)
    outputs = (TensorSpec("TOKEN", "BYTES", [1]),)

    def predict(self, inputs: Any, parameters: Any) -> Iterator[dict[str, Any]]:
        pause = float(parameters.get("sleep", 0))
        key = str(parameters.get("key", ""))
        sent = 0
        try:
            for index in range(int(inputs["N"][0])):
                if pause:
                    time.sleep(pause)
                yield {"TOKEN": np.array([f"t{index}".encode()], dtype=object)}
                sent += 1
        except GeneratorExit:
            CLOSED[key] = f"GeneratorExit after {sent}"
            raise


def streaming_models() -> list[Model]:
    return [Tokens(), SyncTokens(), SquareInt32(), RepeatInt32(), AddSub()]


class Burst(Model):
    """``N`` (INT32 [1]) small responses (OUT INT32 [1], the index) as fast as it can: the
    front ends' cost per response (``oipcodec bench --streaming --model burst``)."""

    name = "burst"
    inputs = (TensorSpec("N", "INT32", [1]),)
    outputs = (TensorSpec("OUT", "INT32", [1]),)

    async def predict(self, inputs: Any, parameters: Any) -> AsyncIterator[dict[str, Any]]:
        for index in range(int(inputs["N"][0])):
            yield {"OUT": np.array([index], dtype=np.int32)}


class Single(Model):
    """One response (OUT = N): the unary call a stream's first response compares with."""

    name = "single"
    inputs = (TensorSpec("N", "INT32", [1]),)
    outputs = (TensorSpec("OUT", "INT32", [1]),)

    def predict(self, inputs: Any, parameters: Any) -> dict[str, Any]:
        return {"OUT": inputs["N"]}


#: What ``--model-module tests.support.streaming_models`` serves (``oipcodec serve`` and the
#: embedded server of ``oipcodec bench``): the front ends' cost per response is
#: ``oipcodec bench --streaming --model burst`` (docs/benchmarks.md#streaming-streaming).
MODELS = [*streaming_models(), Burst(), Single()]
