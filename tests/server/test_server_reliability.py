"""Reliability of the newest surfaces (issue 44) against a real server on 127.0.0.1: a
configuration override while a batch queue drains, big JSON of a batching ``async def
predict`` model, shared memory in flight, and reloads that hold no unrelated model.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from oipcodec import rest
from oipcodec.server import DynamicBatching, Model, TensorSpec
from oipcodec.server.regions import SharedMemoryRegions
from oipcodec.testing import background
from tests.support.http1 import read_response

pytest.importorskip("uvicorn", reason="the server extra is not installed")


def _post(base: str, path: str, document: Any, timeout: float = 10.0) -> tuple[int, Any]:
    request = urllib.request.Request(
        base + path, json.dumps(document).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _simple_request(rows: int) -> dict[str, Any]:
    data = list(range(rows * 16))
    return {
        "inputs": [
            {"name": name, "datatype": "INT32", "shape": [rows, 16], "data": data}
            for name in ("INPUT0", "INPUT1")
        ]
    }


def test_an_override_during_a_drain_never_freezes_the_event_loop() -> None:
    """A request looked up before a configuration override that raises ``max_batch_size``
    (8 to 16), whose body arrives while the old queue drains, carries 16 rows into a queue
    made for 8: it is refused (400, naming the queue's limit) and the server goes on; before,
    the batcher looped without awaiting and the event loop froze for good."""
    delay = {"max_queue_delay_microseconds": 1_500_000}
    # oipcodec's protocol looks the model up when the head arrives, which this race needs; the
    # native front end waits 0.5 s for the whole request first and looks it up at hand-over.
    with background(log_level="critical", http_protocol="oipcodec") as server:
        base = f"http://{server.http_address}"
        load = "/v2/repository/models/simple/load"
        config = {"max_batch_size": 8, "dynamic_batching": delay}
        assert _post(base, load, {"parameters": {"config": json.dumps(config)}})[0] == 200
        # A: one row, held in the queue by the delay, so the reload's drain waits for it.
        first: list[Any] = []
        held = threading.Thread(
            target=lambda: first.append(_post(base, "/v2/models/simple/infer", _simple_request(1)))
        )
        held.start()
        time.sleep(0.3)
        # B: the head and half the body now (the model is looked up), the rest during the drain.
        body = json.dumps(_simple_request(16)).encode()
        host, port = server.http_address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Type: "
                b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:100]
            )
            time.sleep(0.3)
            config = {"max_batch_size": 16, "dynamic_batching": delay}
            reloaded: list[Any] = []
            reload = threading.Thread(
                target=lambda: reloaded.append(
                    _post(base, load, {"parameters": {"config": json.dumps(config)}})
                )
            )
            reload.start()
            time.sleep(0.3)  # the override is applied; the drain waits for A
            sock.sendall(body[100:])
            answer, _ = read_response(sock, method="POST")
        assert answer.status == 400, answer.body
        assert b"16" in answer.body and b"8 rows of the batch queue" in answer.body
        held.join(10)
        reload.join(10)
        assert first and first[0][0] == 200
        assert reloaded and reloaded[0][0] == 200
        with urllib.request.urlopen(base + "/v2/health/live", timeout=5) as live:
            assert live.status == 200
        # The new queue takes 16 rows.
        status, document = _post(base, "/v2/models/simple/infer", _simple_request(16))
        assert status == 200 and document["outputs"][0]["shape"] == [16, 16]


class AsyncBatching(Model):
    """Batches, with an ``async def predict`` that notes the event loop's thread."""

    name = "async_batching"
    max_batch_size = 4
    dynamic_batching = DynamicBatching()
    inputs = (TensorSpec("X", "FP32", [-1, -1]),)
    outputs = (TensorSpec("Y", "FP32", [-1, -1]),)

    def __init__(self) -> None:
        super().__init__()
        self.loop_thread = 0

    async def predict(self, inputs: Any, parameters: Any) -> dict[str, Any]:
        self.loop_thread = threading.get_ident()
        return {"Y": inputs["X"] + 1}


def test_big_json_of_a_batching_async_model_is_parsed_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """JSON rows of 1 MiB or more are parsed off the event loop whatever the model's predict
    is; before, an ``async def predict`` had every batched request's JSON parsed on it (two
    clients of 50 MB bodies held health answers for seconds). Small JSON stays on the loop.
    A batched request is decoded once, by the front end, as any other request is."""
    parsed: list[tuple[int, int]] = []  # (thread, bytes of body) of every request decoded
    decode = rest.decode_request

    def noting(body: Any, *args: Any, **kwargs: Any) -> Any:
        parsed.append((threading.get_ident(), len(body)))
        return decode(body, *args, **kwargs)

    monkeypatch.setattr(rest, "decode_request", noting)
    model = AsyncBatching()
    # oipcodec's protocol: the native front end's fused inference reads a small body with its
    # own kernel, not decode_request (and hands a large one to this protocol).
    with background(
        [model], process=False, grpc_port=None, log_level="critical", http_protocol="oipcodec"
    ) as server:
        base = f"http://{server.http_address}"
        for columns in (300_000, 10):
            values = np.arange(columns, dtype=np.float32).tolist()
            document = {"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, columns],
                                    "data": values}]}  # fmt: skip
            status, answer = _post(base, "/v2/models/async_batching/infer", document)
            assert status == 200, answer
            assert answer["outputs"][0]["data"][:2] == [1.0, 2.0]
    (big_thread, big), (small_thread, small) = parsed
    assert big >= 1 << 20 > small
    assert big_thread != model.loop_thread  # parsed in a worker thread
    assert small_thread == model.loop_thread  # a small one is not worth the hand-over


SLOW_MODEL = """
import asyncio

from oipcodec.server import Model


class Slow(Model):
    inputs = None
    outputs = None

    async def predict(self, inputs, parameters):
        await asyncio.sleep(3)
        return dict(inputs)
"""

ECHO_MODEL = """
from oipcodec.server import Model


class Echo(Model):
    inputs = None
    outputs = None

    def predict(self, inputs, parameters):
        return dict(inputs)
"""


def test_a_reload_that_drains_holds_no_other_model(tmp_path: Any) -> None:
    """A repository reload drains the replaced version outside the repository lock: an
    unrelated model's unload is done at once; before, it waited for the drain (up to the 30 s
    drain timeout)."""
    for name, code in (("slow", SLOW_MODEL), ("echo", ECHO_MODEL)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.py").write_text(code)
    with background(
        model_repository=str(tmp_path),
        model_control="explicit",
        load_models=("*",),
        grpc_port=None,
        log_level="critical",
    ) as server:
        base = f"http://{server.http_address}"
        document = {"inputs": [{"name": "X", "datatype": "FP32", "shape": [1], "data": [1]}]}
        answers: list[Any] = []
        threads = [
            threading.Thread(
                target=lambda: answers.append(_post(base, "/v2/models/slow/infer", document))
            ),
            threading.Thread(
                target=lambda: answers.append(_post(base, "/v2/repository/models/slow/load", {}))
            ),
        ]
        for thread in threads:
            thread.start()
            time.sleep(0.4)  # the request runs, then the reload drains it
        started = time.monotonic()
        status, _ = _post(base, "/v2/repository/models/echo/unload", {})
        took = time.monotonic() - started
        for thread in threads:
            thread.join(10)
        assert status == 200
        assert sorted(a[0] for a in answers) == [200, 200]
        assert took < 1.0, f"the unload of echo waited {took:.2f} s for slow's drain"


class Holding(Model):
    """Holds its inputs for ``hold`` seconds (awaiting), and answers their bytes."""

    name = "holding"
    inputs = None
    outputs = None
    hold = 0.5

    def __init__(self) -> None:
        super().__init__()
        self.loop_thread = 0

    async def predict(self, inputs: Any, parameters: Any) -> dict[str, Any]:
        self.loop_thread = threading.get_ident()
        await asyncio.sleep(self.hold)
        if "FAIL" in inputs:
            raise ValueError("asked to fail")
        return {"N": np.array([sum(a.nbytes for a in inputs.values())], np.int64)}


def _shm_object(key: str, size: int) -> None:
    fd = os.open("/dev/shm" + key, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.ftruncate(fd, size)
        os.pwrite(fd, b"\x01" * size, 0)
    finally:
        os.close(fd)


def _in_region(region: str, size: int, name: str = "X") -> dict[str, Any]:
    params = {"shared_memory_region": region, "shared_memory_byte_size": size}
    return {"name": name, "datatype": "UINT8", "shape": [size], "parameters": params}


def test_the_shared_memory_budget_bounds_the_copies_of_all_requests_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--shared-memory-budget`` bounds the bytes copied out of shared memory by every
    request in flight together: eight requests of 149 bytes naming a 12 MiB region, with a
    32 MiB budget, get two answers and six refusals naming the region and the budget; each
    copy is given back when its request ends, whether it answered or failed. A copy of 1 MiB
    or more runs in a worker thread, a small one on the loop. Before, each request was
    bounded alone (eight copies: 96 MiB), all copied on the event loop. A refusal is a 503
    (the request is valid, and fits later) counted as a failed request; it was a 400."""
    copies: list[tuple[int, int]] = []  # (thread, bytes) of every copy
    resolve = SharedMemoryRegions.resolve

    def noting(self: SharedMemoryRegions, where: Any, *args: Any) -> memoryview:
        copies.append((threading.get_ident(), where.byte_size))
        return resolve(self, where, *args)

    monkeypatch.setattr(SharedMemoryRegions, "resolve", noting)
    size, key = 12 << 20, f"/oipcodec-budget-{os.getpid()}"
    _shm_object(key, size)
    model = Holding()
    try:
        with (
            background(
                [model],
                process=False,
                grpc_port=None,
                shared_memory="system",
                shared_memory_budget=32 << 20,
                log_level="critical",
            ) as server,
            ThreadPoolExecutor(8) as pool,
        ):
            base = f"http://{server.http_address}"
            register = {"key": key, "offset": 0, "byte_size": size}
            assert _post(base, "/v2/systemsharedmemory/region/big/register", register)[0] == 200
            infer = "/v2/models/holding/infer"

            def round_of(document: dict[str, Any], count: int = 8) -> list[tuple[int, Any]]:
                return list(pool.map(lambda _: _post(base, infer, document), range(count)))

            answers = round_of({"inputs": [_in_region("big", size)]})
            assert sorted(status for status, _ in answers) == [200] * 2 + [503] * 6
            refusal = next(document["error"] for status, document in answers if status == 503)
            assert refusal.startswith("input 'X': reading its 12582912 bytes of shared memory "
                                      "region 'big' would bring the bytes copied by the "
                                      "requests in flight from 25165824 to 37748736, over this "
                                      "server's budget of 33554432"), refusal  # fmt: skip
            assert "byte offset" not in refusal
            with urllib.request.urlopen(base + "/v2/models/holding/stats", timeout=10) as got:
                stats = json.loads(got.read())["model_stats"][0]["inference_stats"]
            assert (stats["success"]["count"], stats["fail"]["count"]) == (2, 6)
            # Copies are given back on every path: answered, failed in predict, refused.
            failing = {"inputs": [_in_region("big", size), _in_region("big", 1, "FAIL")]}
            assert [s for s, _ in round_of(failing, 2)] == [500, 500]
            missing = {"inputs": [_in_region("big", size), _in_region("nowhere", 1, "Y")]}
            assert [s for s, _ in round_of(missing, 2)] == [400, 400]
            answers = round_of({"inputs": [_in_region("big", size)]}, 2)
            assert [s for s, _ in answers] == [200, 200]
            small = {"inputs": [_in_region("big", 1024)]}
            assert _post(base, infer, small)[0] == 200
    finally:
        os.unlink("/dev/shm" + key)
    big_threads = {thread for thread, copied in copies if copied == size}
    assert big_threads and model.loop_thread not in big_threads  # off the event loop
    assert (model.loop_thread, 1024) in copies  # a small copy is not worth a hand-over


def test_over_the_budget_in_flight_is_grpc_unavailable_and_alone_invalid_argument() -> None:
    """Over gRPC (the real tritonclient): a request whose copy does not fit beside those of
    the requests in flight is UNAVAILABLE, naming the region, its bytes, the budget and the
    bytes in flight, without a byte offset; one that alone asks more than the budget (it can
    never succeed) stays INVALID_ARGUMENT, naming the region and the budget. Before, both
    were INVALID_ARGUMENT at a byte offset."""
    grpcclient = pytest.importorskip("tritonclient.grpc")
    from tritonclient.utils import InferenceServerException

    size, key = 6000, f"/oipcodec-budget-grpc-{os.getpid()}"
    _shm_object(key, size)
    model = Holding()
    try:
        with background(
            [model], process=False, shared_memory="system", shared_memory_budget=8192,
            log_level="critical",
        ) as server:  # fmt: skip
            base = f"http://{server.http_address}"
            register = {"key": key, "offset": 0, "byte_size": size}
            assert _post(base, "/v2/systemsharedmemory/region/r/register", register)[0] == 200
            client = grpcclient.InferenceServerClient(server.grpc_address)

            def inputs(*names: str) -> list[Any]:
                tensors = []
                for name in names:
                    tensor = grpcclient.InferInput(name, [size], "UINT8")
                    tensor.set_shared_memory("r", size)
                    tensors.append(tensor)
                return tensors

            holder = threading.Thread(
                target=_post, args=(base, "/v2/models/holding/infer", {"inputs": [_in_region("r", size)]})
            )  # fmt: skip
            holder.start()
            time.sleep(0.2)  # the HTTP request holds its 6000 bytes for 0.5 s
            with pytest.raises(InferenceServerException) as busy:
                client.infer("holding", inputs("X"))
            holder.join(10)
            assert busy.value.status() == "StatusCode.UNAVAILABLE", busy.value
            assert busy.value.message() == (
                "input 'X': reading its 6000 bytes of shared memory region 'r' would bring the "
                "bytes copied by the requests in flight from 6000 to 12000, over this server's "
                "budget of 8192 (--shared-memory-budget); retry when fewer requests are in flight"
            )
            with pytest.raises(InferenceServerException) as never:
                client.infer("holding", inputs("X", "Y"))
            assert never.value.status() == "StatusCode.INVALID_ARGUMENT", never.value
            message = never.value.message()
            assert "input 'Y'" in message and "region 'r'" in message, message
            assert "the 8192 bytes one request may read (--shared-memory-budget)" in message
            assert client.infer("holding", inputs("X")).as_numpy("N").tolist() == [size]
            client.close()
    finally:
        os.unlink("/dev/shm" + key)


def test_an_unregister_while_a_codec_thread_reads_the_region_is_no_500(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request whose JSON part is 1 MiB or more is decoded in a codec thread, which reads
    its input out of shared memory while the event loop unregisters that region: the read
    keeps the region open until it is done, and the requests get 200 or 400 (region not
    found), never a 500 "Bad file descriptor" with a logged traceback. The window between
    the look-up of the region and its read is widened (``os.fstat`` 5 ms slower in codec
    threads) so that the race shows in every run."""
    fstat = os.fstat

    def slow_in_codec_threads(fd: int) -> os.stat_result:
        if threading.current_thread().name.startswith("oipcodec-codec"):
            time.sleep(0.005)
        return fstat(fd)

    monkeypatch.setattr(os, "fstat", slow_in_codec_threads)
    size, key = 4 << 20, f"/oipcodec-unregister-{os.getpid()}"
    _shm_object(key, size)
    pad = {"name": "PAD", "datatype": "INT32", "shape": [600_000], "data": [0] * 600_000}
    document = {"inputs": [_in_region("flap", size), pad]}
    statuses: dict[int, int] = {}
    caplog.set_level(logging.ERROR, logger="oipcodec")
    model = Holding()
    model.hold = 0.0
    try:
        with background(
            [model], process=False, grpc_port=None, shared_memory="system", log_level=None
        ) as server:
            base = f"http://{server.http_address}"
            register = {"key": key, "offset": 0, "byte_size": size}
            stop = time.monotonic() + 2.5

            def flap() -> None:
                while time.monotonic() < stop:
                    _post(base, "/v2/systemsharedmemory/region/flap/register", register)
                    _post(base, "/v2/systemsharedmemory/region/flap/unregister", {})

            def send() -> None:
                while time.monotonic() < stop:
                    status, _ = _post(base, "/v2/models/holding/infer", document)
                    statuses[status] = statuses.get(status, 0) + 1

            threads = [threading.Thread(target=run) for run in (flap, send, send, send)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(15)
    finally:
        os.unlink("/dev/shm" + key)
    assert set(statuses) <= {200, 400} and statuses.get(200), statuses
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_queue_head_over_the_limit_makes_a_batch_alone() -> None:
    """The batcher's plan never takes 0 requests from a queue that is not empty (the task
    would loop without awaiting): a head with more rows than the queue's limit, which
    ``submit`` refuses, would run alone."""
    from oipcodec.server.demo import Simple
    from oipcodec.server.inference.batching import Batcher, _Waiting
    from oipcodec.server.inference.failure import failure
    from oipcodec.server.inference.pipeline import call_predict
    from oipcodec.types import Tensor

    async def plan() -> tuple[int, bool]:
        model = Simple()
        model.configure(dynamic_batching=DynamicBatching())
        batcher = Batcher(model, None, call_predict, failure)  # the pipeline's, as it makes one
        rows = np.zeros((16, 16), np.int32)
        tensors = [Tensor("INPUT0", "INT32", rows.shape, rows)]
        future = asyncio.get_running_loop().create_future()
        batcher._queue.append(_Waiting(("k",), tensors, 16, {}, future, 0))
        return batcher._plan()

    assert asyncio.run(plan()) == (1, True)
