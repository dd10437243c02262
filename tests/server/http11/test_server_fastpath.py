"""The native front end's Python half (server/http11/fastpath.py) against the Python path.

For each request (small JSON, binary, Triton's raw binary, every error kind, the probes, a
model that is not ready), the bytes the fast path gives (status line, headers and body, as
the native protocol writes them) equal what the Python path answers over a real socket, the
``date`` line aside; and the statistics count the same. No native code is needed: the fast
path's routes and answers are Python.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import Limits
from oipcodec.server import Model
from oipcodec.server.frontends.rest_frontend import RestApp
from oipcodec.server.http11.fastpath import FastPath, Slot, fast_path_of
from oipcodec.server.http11.grammar import STATUS_LINES
from oipcodec.server.registry import ModelRegistry
from oipcodec.testing import RunningServer, background
from tests.support.server_models import all_models

pytest.importorskip("uvicorn", reason="the server extra is not installed")

TIMEOUT = 30


class Big(Model):
    """An answer of 4 MB from a small request: encoded in a codec thread on both paths."""

    name = "big"
    inputs = None
    outputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"OUT": np.arange(1 << 20, dtype=np.float32)}


def models() -> list[Model]:
    return [*all_models(), Big()]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    # The Python path, whatever protocol the test run asks for elsewhere.
    with background(
        models(), grpc_port=None, http_protocol="oipcodec", process=False, log_level="critical"
    ) as running:
        yield running


def _json(inputs: list[dict[str, Any]], **extra: Any) -> bytes:
    return orjson.dumps({"inputs": inputs, **extra})


def _int32(name: str, values: list[int], datatype: str = "INT32") -> dict[str, Any]:
    return {"name": name, "shape": [1, 16], "datatype": datatype, "data": values}


SIMPLE = _json([_int32("INPUT0", list(range(16))), _int32("INPUT1", [1] * 16)])
_HEAD = orjson.dumps(
    {
        "inputs": [
            {
                "name": n,
                "shape": [1, 16],
                "datatype": "INT32",
                "parameters": {"binary_data_size": 64},
            }
            for n in ("INPUT0", "INPUT1")
        ],
        "parameters": {"binary_data_output": True},
    }
)
BINARY = _HEAD + np.arange(16, dtype=np.int32).tobytes() + np.ones(16, np.int32).tobytes()
ANY = _json([{"name": "X", "shape": [2], "datatype": "FP32", "data": [1.5, 2.5]}])

#: (what it is, method, target, body, Inference-Header-Content-Length or -1)
REQUESTS = [
    ("json", "POST", "/v2/models/simple/infer", SIMPLE, -1),
    ("json, versioned", "POST", "/v2/models/simple/versions/1/infer", SIMPLE, -1),
    ("binary", "POST", "/v2/models/simple/infer", BINARY, len(_HEAD)),
    ("raw binary", "POST", "/v2/models/scale/infer", np.ones(8, np.float32).tobytes(), 0),
    ("raw, bad size", "POST", "/v2/models/scale/infer", b"12345", 0),
    ("bad JSON", "POST", "/v2/models/simple/infer", b"{not json", -1),
    ("bad header length", "POST", "/v2/models/simple/infer", SIMPLE, len(SIMPLE) + 5),
    (
        "wrong datatype",
        "POST",
        "/v2/models/simple/infer",
        _json([_int32("INPUT0", [0] * 16, "FP32"), _int32("INPUT1", [0] * 16)]),
        -1,
    ),
    (
        "unknown output",
        "POST",
        "/v2/models/simple/infer",
        _json([_int32("INPUT0", [0] * 16), _int32("INPUT1", [0] * 16)], outputs=[{"name": "NOPE"}]),
        -1,
    ),
    ("model raising", "POST", "/v2/models/failing/infer", ANY, -1),
    ("bad output", "POST", "/v2/models/bad_output/infer", ANY, -1),
    ("async model", "POST", "/v2/models/async_echo/infer", ANY, -1),
    ("worker thread", "POST", "/v2/models/threaded/infer", ANY, -1),
    (
        "dynamic batch",
        "POST",
        "/v2/models/batched/infer",
        _json([{"name": "X", "shape": [1, 3], "datatype": "FP32", "data": [1, 2, 3]}]),
        -1,
    ),
    ("a version", "POST", "/v2/models/counter/versions/1/infer", ANY, -1),
    ("newest version", "POST", "/v2/models/counter/infer", ANY, -1),
    ("large answer", "POST", "/v2/models/big/infer", ANY, -1),
    ("server metadata", "GET", "/v2", b"", -1),
    ("live", "GET", "/v2/health/live", b"", -1),
    ("ready", "GET", "/v2/health/ready", b"", -1),
    ("model metadata", "GET", "/v2/models/simple", b"", -1),
    ("model metadata, versioned", "GET", "/v2/models/counter/versions/2", b"", -1),
    ("model ready", "GET", "/v2/models/simple/ready", b"", -1),
    ("model ready, versioned", "GET", "/v2/models/simple/versions/1/ready", b"", -1),
    ("model not ready", "GET", "/v2/models/broken_load/ready", b"", -1),
    ("not ready, metadata", "GET", "/v2/models/broken_load", b"", -1),
]

#: The models whose requests become tasks: async, in a worker thread, batched; and a large
#: answer, encoded in a codec thread. Every other inference is answered in the call.
_AWAITS = re.compile(r"/(async_echo|threaded|batched|big)/")
_DATE = re.compile(rb"date: [^\r]*\r\n")


def _python_path(server: RunningServer, method: str, target: str, body: bytes, hl: int) -> bytes:
    """The Python path's whole answer, as sent, without its date line."""
    head = f"{method} {target} HTTP/1.1\r\nhost: test\r\ncontent-length: {len(body)}\r\n"
    if hl >= 0:
        head += f"inference-header-content-length: {hl}\r\n"
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=TIMEOUT) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        return _read_answer(sock)[0]


def _read_answer(sock: socket.socket, received: bytes = b"") -> tuple[bytes, bytes]:
    """The next whole answer on ``sock`` (framed by Content-Length), without its date line,
    and the bytes received after it; ``received``: bytes read before and not used yet."""
    while b"\r\n\r\n" not in received:
        received += _received(sock, 1 << 16)
    top, _, rest = received.partition(b"\r\n\r\n")
    length = int(re.search(rb"\r\ncontent-length: (\d+)", top).group(1))  # type: ignore[union-attr]
    while len(rest) < length:
        rest += _received(sock, 1 << 20)
    return _DATE.sub(b"", top + b"\r\n\r\n" + rest[:length], count=1), rest[length:]


def _received(sock: socket.socket, size: int) -> bytes:
    """Up to ``size`` bytes from ``sock``; EOFError when the server closed mid-answer."""
    data = sock.recv(size)
    if not data:
        raise EOFError("the server closed the connection before the end of its answer")
    return data


def _as_sent(answer: tuple[int, bytes, bytes]) -> bytes:
    """An answer of the fast path as the native protocol writes it, without the date line."""
    status, headers, body = answer
    return STATUS_LINES[status] + headers + b"\r\n" + body


async def _fast_path(fast: FastPath, method: str, target: str, body: bytes, hl: int) -> bytes:
    route = fast.routes[f"{method} {target}".encode()]
    if not isinstance(route, Slot):
        return _as_sent(route)
    # Called as the native protocol calls it: from a callback of the loop, outside any task.
    loop = asyncio.get_running_loop()
    called: asyncio.Future[Any] = loop.create_future()
    loop.call_soon(lambda: called.set_result(route.infer(memoryview(body), hl)))
    answer = await called
    assert answer is not None, target
    if not isinstance(answer, tuple):  # a coroutine the native protocol runs as a task, or one
        assert _AWAITS.search(target), target
        answer = await (loop.create_task(answer) if asyncio.iscoroutine(answer) else answer)
    return _as_sent(answer)


@contextlib.asynccontextmanager
async def _fast_app() -> Any:
    registry = ModelRegistry(models())
    app = RestApp(registry, manage_models=False)
    await registry.load_all()
    try:
        yield app
    finally:
        await registry.unload_all()
        app.close()


def _counts(document: dict[str, Any]) -> list[Any]:
    """The statistics' counts (not their times)."""
    return [
        (
            s["name"],
            s["version"],
            s["inference_count"],
            s["execution_count"],
            {k: v["count"] for k, v in s["inference_stats"].items()},
        )
        for s in document["model_stats"]
    ]


def test_the_fast_path_answers_the_python_paths_bytes(server: RunningServer) -> None:
    async def fast_answers() -> tuple[list[bytes], dict[str, Any]]:
        async with _fast_app() as app:
            fast = fast_path_of(app)
            assert fast is not None
            answers = [await _fast_path(fast, *request[1:]) for request in REQUESTS]
            return answers, app.registry.statistics_document()

    fast, statistics = asyncio.run(fast_answers())
    for (what, *request), answer in zip(REQUESTS, fast, strict=True):
        assert answer == _python_path(server, *request), what
    python = orjson.loads(
        _python_path(server, "GET", "/v2/models/stats", b"", -1).split(b"\r\n\r\n")[1]
    )
    assert _counts(statistics) == _counts(python)


def test_a_model_unloaded_after_the_routes_were_read_is_answered_as_the_python_path_does(
    server: RunningServer,
) -> None:
    """A slot whose model is not ready (unloaded between the native side's snapshot of the
    routes and the request) answers the Python path's 503."""

    async def fast_answer() -> bytes:
        async with _fast_app() as app:
            answer = Slot(app, "broken_load", None).infer(memoryview(ANY), -1)
            assert isinstance(answer, tuple)
            return _as_sent(answer)

    python = _python_path(server, "POST", "/v2/models/broken_load/infer", ANY, -1)
    assert python.startswith(b"HTTP/1.1 503 ")
    assert asyncio.run(fast_answer()) == python


def test_routes_follow_the_registry_and_the_ready_flag() -> None:
    async def check() -> None:
        async with _fast_app() as app:
            fast = fast_path_of(app)
            assert fast is not None and fast_path_of(app) is fast
            assert b"POST /v2/models/simple/infer" in fast.routes
            assert b"POST /v2/models/broken_load/infer" not in fast.routes  # not ready
            assert fast.routes[b"GET /v2/health/ready"][0] == 200
            generation = fast.generation
            app.ready = False
            assert fast.generation == generation + 1
            assert fast.routes[b"GET /v2/health/ready"][0] == 400
            app.ready = False  # no flip, no rebuild
            assert fast.generation == generation + 1
            await app.registry.unload("simple")
            assert fast.generation > generation + 1
            assert b"POST /v2/models/simple/infer" not in fast.routes
            assert fast.routes[b"GET /v2/models/simple/ready"][0] == 400
            await app.registry.load("simple")
            assert b"POST /v2/models/simple/infer" in fast.routes

    asyncio.run(check())
    assert fast_path_of(object()) is None


def test_what_the_fast_path_hands_over_is_not_counted() -> None:
    """Shared-memory inputs and bodies decoded off the loop go to the Python path: None,
    before anything is counted."""
    region = _json(
        [
            {
                "name": n,
                "shape": [1, 16],
                "datatype": "INT32",
                "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 64},
            }
            for n in ("INPUT0", "INPUT1")
        ]
    )
    large = _json([_int32("INPUT0", [0] * 16), _int32("INPUT1", [0] * 16)], id="x" * (1 << 20))

    async def check() -> None:
        async with _fast_app() as app:
            fast = fast_path_of(app)
            assert fast is not None
            slot = fast.routes[b"POST /v2/models/simple/infer"]
            assert isinstance(slot, Slot)
            assert slot.infer(memoryview(region), -1) is None
            assert slot.infer(memoryview(large), -1) is None
            small = RestApp(app.registry, limits=Limits(max_body_bytes=100))
            assert Slot(small, "simple", None).infer(memoryview(SIMPLE), -1) is None  # a 413
            counts = _counts(app.registry.statistics_document("simple"))
            assert counts[0][2:4] == (0, 0)
            assert counts[0][4]["fail"] == 0

    asyncio.run(check())


class Keeper(Model):
    """Keeps its last input, a view of the request body."""

    name = "keeper"
    inputs = None
    outputs = None
    kept: Any = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        Keeper.kept = inputs["X"]
        return {"Y": inputs["X"]}


def test_the_body_is_the_fast_paths_own_copy() -> None:
    """The native side may reuse its buffer once infer returns: what a model keeps of its
    inputs must not change then."""
    head = orjson.dumps(
        {
            "inputs": [
                {
                    "name": "X",
                    "shape": [4],
                    "datatype": "FP32",
                    "parameters": {"binary_data_size": 16},
                }
            ]
        }
    )
    buffer = bytearray(head + np.arange(4, dtype=np.float32).tobytes())

    async def check() -> None:
        registry = ModelRegistry([Keeper()])
        await registry.load_all()
        app = RestApp(registry, manage_models=False)
        answer = Slot(app, "keeper", None).infer(memoryview(buffer), len(head))
        assert isinstance(answer, tuple) and answer[0] == 200
        buffer[len(head) :] = bytes(16)  # the native side reads the next request into it
        assert Keeper.kept.tolist() == [0, 1, 2, 3]

    asyncio.run(check())


def test_a_request_cancelled_in_a_batch_queue_leaves_it_and_counts_as_the_python_path() -> None:
    """The native side cancels a request's task when its client goes away: a request waiting
    in a dynamic batch's queue leaves it and is counted refused, as on the Python path."""
    from tests.server.inference.test_batching import Gated

    body = orjson.dumps({"inputs": [{"name": "X", "shape": [1], "datatype": "FP32", "data": [1]}]})

    async def check() -> None:
        model = Gated()
        registry = ModelRegistry([model])
        await registry.load_all()
        app = RestApp(registry, manage_models=False)
        slot = Slot(app, "gated", None)
        loop = asyncio.get_running_loop()
        first = loop.create_task(slot.infer(memoryview(body), -1))
        while model.batches != [1]:
            await asyncio.sleep(0.01)
        gone = loop.create_task(slot.infer(memoryview(body), -1))
        await asyncio.sleep(0.05)
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        last = loop.create_task(slot.infer(memoryview(body), -1))
        await asyncio.sleep(0.05)
        model.gate.set()
        assert (await first)[0] == 200 and (await last)[0] == 200
        assert model.batches == [1, 1]
        counts = _counts(registry.statistics_document("gated"))[0]
        assert counts[4]["success"] == 2 and counts[4]["fail"] == 1
        await registry.unload_all()

    asyncio.run(check())
