"""The per-request cost of the inference statistics and metrics (server/stats.py): the REST
app and the gRPC servicer answering small requests in-process, with statistics on (the
default) and off (``ServerConfig.metrics=False``), side by side in one run.

In-process (no sockets, no HTTP parsing), so the figure is the server's own work per request
and the share the statistics take of it is an upper bound of their share in a real server,
which also spends time in uvicorn / grpcio and the kernel::

    pytest benchmarks/kernels/bench_statistics.py --benchmark-columns=mean,ops
    python benchmarks/kernels/bench_statistics.py      # on and off alternating, round by round

Each round answers ``REQUESTS`` requests on one event loop, so the loop's start-up is not
what is measured. Run as a script, rounds with statistics on and off alternate (which goes
first alternates too), so that a machine whose load changes during the run burdens both
alike; it prints the best and the first-quartile round of each, per request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, MutableMapping
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import pb
from oipcodec.server.demo import Identity
from oipcodec.server.frontends.grpc_frontend import InferenceServicer
from oipcodec.server.frontends.rest_frontend import RestApp
from oipcodec.server.registry import ModelRegistry
from oipcodec.types import InferRequest, Tensor

REQUESTS = 200

#: 1x16 FP32 as JSON, as tritonclient writes it (the small_json case of load_server.py).
JSON_BODY = orjson.dumps(
    {
        "inputs": [
            {
                "name": "INPUT0",
                "shape": [1, 16],
                "datatype": "FP32",
                "data": np.random.default_rng(0).random(16).tolist(),
            }
        ]
    }
)
GRPC_BODY = pb.encode_request(
    InferRequest(
        [Tensor.from_array("INPUT0", np.ones((1, 16), dtype=np.float32))], model_name="identity"
    )
)


def _registry(statistics: bool) -> ModelRegistry:
    registry = ModelRegistry([Identity()])
    if not statistics:
        registry.statistics = None
    asyncio.run(registry.load_all())
    return registry


def _rest_round(app: RestApp) -> Callable[[], Coroutine[Any, Any, None]]:
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v2/models/identity/infer",
        "headers": [(b"content-type", b"application/json")],
    }
    message = {"type": "http.request", "body": JSON_BODY, "more_body": False}

    async def receive() -> dict[str, Any]:
        return message

    async def send(message: MutableMapping[str, Any]) -> None:
        return None

    async def many() -> None:
        for _ in range(REQUESTS):
            await app(scope, receive, send)

    return many


def _grpc_round(servicer: InferenceServicer) -> Callable[[], Coroutine[Any, Any, None]]:
    async def many() -> None:
        for _ in range(REQUESTS):
            await servicer.model_infer(GRPC_BODY, None)  # no context: nothing fails here

    return many


@pytest.mark.parametrize("statistics", [True, False], ids=["stats_on", "stats_off"])
@pytest.mark.parametrize("path", ["rest_json", "grpc_raw"])
def test_request_cost(benchmark: Any, path: str, statistics: bool) -> None:
    registry = _registry(statistics)
    if path == "rest_json":
        many = _rest_round(RestApp(registry, manage_models=False))
    else:
        many = _grpc_round(InferenceServicer(registry))
    loop = asyncio.new_event_loop()
    rounds = 0

    def one_round() -> None:
        nonlocal rounds
        rounds += 1
        loop.run_until_complete(many())

    try:
        benchmark.group = f"statistics: {REQUESTS} small {path} requests"
        benchmark.pedantic(one_round, rounds=30, warmup_rounds=3)
    finally:
        loop.close()
    if statistics:  # every request was counted (one round only with --benchmark-disable)
        assert registry.statistics is not None
        counted = registry.statistics_document("identity")["model_stats"][0]
        assert counted["inference_stats"]["success"]["count"] == rounds * REQUESTS


def alternate(rounds: int = 80) -> None:
    """Rounds with statistics on and off, alternating; per request: the best round, and the
    first quartile."""
    loop = asyncio.new_event_loop()
    try:
        for path in ("rest_json", "grpc_raw"):
            many = {}
            for statistics in (True, False):
                registry = _registry(statistics)
                many[statistics] = (
                    _rest_round(RestApp(registry, manage_models=False))
                    if path == "rest_json"
                    else _grpc_round(InferenceServicer(registry))
                )
            times: dict[bool, list[float]] = {True: [], False: []}
            for index in range(rounds):
                for statistics in (True, False) if index % 2 else (False, True):
                    start = time.perf_counter_ns()
                    loop.run_until_complete(many[statistics]())
                    times[statistics].append((time.perf_counter_ns() - start) / REQUESTS / 1000)
            on, off = sorted(times[True]), sorted(times[False])
            quartile = rounds // 4
            print(
                f"{path:<10} on {on[0]:6.2f} us/request (q1 {on[quartile]:6.2f}), "
                f"off {off[0]:6.2f} (q1 {off[quartile]:6.2f}): "
                f"{on[0] - off[0]:+.2f} us, {100 * (on[0] - off[0]) / off[0]:+.1f}%"
            )
    finally:
        loop.close()


if __name__ == "__main__":
    alternate()
