"""Dynamic batching in the server, seen from the real tritonclient (HTTP JSON, HTTP binary,
gRPC), from the v1 and GraphPipe front ends, and from a model repository's config.pbtxt.

The models (tests/support/batching_models.py) answer ``BATCH``, the rows of the batch each
request ran in, so batching is seen from the client's side; one server subprocess serves them
for the module.
"""

from __future__ import annotations

import asyncio
import http.client as httplib
import socket
import textwrap
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec import graphpipe
from oipcodec import trtis_v1 as v1
from oipcodec.errors import InvalidArgumentError, UnavailableError
from oipcodec.server import DynamicBatching, Model, TensorSpec
from oipcodec.server.inference import Pipeline
from oipcodec.server.registry import ModelRegistry
from oipcodec.testing import RunningServer, background
from oipcodec.types import InferRequest, InferResponse, Tensor
from tests.support.batching_models import MODELS

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
ml_dtypes = pytest.importorskip("ml_dtypes")
from tritonclient.utils import InferenceServerException  # noqa: E402

TIMEOUT = 60.0
CONCURRENT = 64


async def _infer(registry: ModelRegistry, request: InferRequest) -> InferResponse:
    """The answer of the registry's inference step."""
    return (await Pipeline.of(registry).run(request)).response


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(MODELS, log_level="critical") as running:
        yield running


@pytest.fixture(scope="module")
def http(server: RunningServer) -> Iterator[Any]:
    client = httpclient.InferenceServerClient(
        server.http_address,
        concurrency=CONCURRENT,
        connection_timeout=TIMEOUT,
        network_timeout=TIMEOUT,
    )
    yield client
    client.close()


@pytest.fixture(scope="module")
def grpc(server: RunningServer) -> Iterator[Any]:
    client = grpcclient.InferenceServerClient(server.grpc_address)
    yield client
    client.close()


def _values(datatype: str, i: int) -> np.ndarray:
    """Request ``i``'s own values: one row of 3, different in every request."""
    if datatype == "BYTES":
        return np.array([[f"r{i}-{k}".encode() * (k + 1) for k in range(3)]], dtype=object)
    numbers = np.arange(3 * i, 3 * i + 3).reshape(1, 3)
    if datatype == "BF16":
        return numbers.astype(ml_dtypes.bfloat16)  # integers up to 256 are exact
    return numbers.astype({"FP32": np.float32, "INT64": np.int64}[datatype])


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    if want.dtype == object:
        # tritonclient gives JSON's strings as str
        return [v if isinstance(v, bytes) else v.encode() for v in got.ravel()] == list(
            want.ravel()
        )
    return got.dtype == want.dtype and np.array_equal(got, want)


def _concurrently(call: Callable[[int], Any], count: int = CONCURRENT) -> list[Any]:
    """``call(i)`` for ``i < count``, each in a thread of its own (gRPC, plain HTTP)."""
    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(call, range(count)))


def _http_concurrently(
    http: Any, model: str, inputs: Callable[[int], list[Any]], count: int, **kwargs: Any
) -> list[Any]:
    """tritonclient.http's answers (or its errors) to ``count`` requests sent at once: its
    async_infer runs them in greenlets, all from this thread (they cannot switch threads)."""
    pending = [http.async_infer(model, inputs(i), **kwargs) for i in range(count)]
    answers = []
    for request in pending:
        try:
            answers.append(request.get_result(timeout=TIMEOUT))
        except InferenceServerException as exc:
            answers.append(exc)
    return answers


def _inputs(module: Any, datatype: str, data: np.ndarray, binary: bool | None) -> list[Any]:
    item = module.InferInput("X", list(data.shape), datatype)
    if binary is None:
        item.set_data_from_numpy(data)
    else:
        item.set_data_from_numpy(data, binary_data=binary)
    return [item]


@pytest.mark.parametrize("datatype", ["FP32", "INT64", "BF16", "BYTES"])
@pytest.mark.parametrize("transport", ["json", "binary", "grpc"])
def test_concurrent_requests_each_get_their_own_rows(
    http: Any, grpc: Any, transport: str, datatype: str
) -> None:
    if transport == "json" and datatype == "BF16":
        pytest.skip("tritonclient refuses BF16 as JSON")

    if transport == "grpc":
        results = _concurrently(
            lambda i: grpc.infer("rows", _inputs(grpcclient, datatype, _values(datatype, i), None))
        )
    else:
        binary = transport == "binary"
        outputs = [
            httpclient.InferRequestedOutput(name, binary_data=binary) for name in ("OUT_X", "BATCH")
        ]
        results = _http_concurrently(
            http,
            "rows",
            lambda i: _inputs(httpclient, datatype, _values(datatype, i), binary),
            CONCURRENT,
            outputs=outputs,
        )
    for i, result in enumerate(results):
        assert _same(result.as_numpy("OUT_X"), _values(datatype, i)), i
    sizes = [int(result.as_numpy("BATCH")[0]) for result in results]
    assert max(sizes) > 1, sizes  # requests did share a batch
    assert all(1 <= size <= 64 for size in sizes)


def test_requests_of_other_shapes_are_not_merged(grpc: Any) -> None:
    def one(i: int) -> tuple[int, int]:
        width = 3 if i % 2 else 5
        want = np.full((1, width), i, np.float32)
        result = grpc.infer("rows", _inputs(grpcclient, "FP32", want, None))
        assert _same(result.as_numpy("OUT_X"), want)
        return width, int(result.as_numpy("BATCH")[0])

    answers = _concurrently(one, 32)
    # Each request's batch holds only requests of its width: at most the 16 of that width.
    assert all(size <= 16 for _, size in answers), answers


def test_a_failing_predict_fails_its_batch_only(grpc: Any) -> None:
    def one(i: int) -> str:
        fail = i % 2 == 0
        data = np.full((1, 2), i, np.float32)
        try:
            result = grpc.infer(
                "rows", _inputs(grpcclient, "FP32", data, None), parameters={"fail": fail}
            )
        except InferenceServerException as exc:
            return f"failed: {exc.message()}"
        return "ok" if _same(result.as_numpy("OUT_X"), data) else "wrong rows"

    answers = _concurrently(one, 32)
    for i, answer in enumerate(answers):
        if i % 2:
            assert answer == "ok"
        else:  # every request of a failing batch gets the same error
            assert answer.startswith("failed: ") and "asked to fail" in answer, answer
    data = np.ones((1, 2), np.float32)  # and the next batch runs
    result = grpc.infer("rows", _inputs(grpcclient, "FP32", data, None))
    assert _same(result.as_numpy("OUT_X"), data)


def test_a_request_that_fails_validation_is_refused_alone(http: Any) -> None:
    def data(i: int) -> np.ndarray:
        return np.full((1, 5 if i == 7 else 4), i, np.float32)

    answers = _http_concurrently(
        http, "checked", lambda i: _inputs(httpclient, "FP32", data(i), True), 32
    )
    refused = answers.pop(7)
    assert isinstance(refused, InferenceServerException), refused
    assert "input 'X' of model 'checked' has shape [1, 5]" in refused.message()
    for i, answer in zip([*range(7), *range(8, 32)], answers, strict=True):
        assert _same(answer.as_numpy("Y"), data(i) * 2)
    assert max(int(answer.as_numpy("BATCH")[0]) for answer in answers) > 1


def test_an_output_without_the_batchs_rows_is_an_error_naming_the_model(grpc: Any) -> None:
    data = np.ones((1, 2), np.float32)
    with pytest.raises(InferenceServerException, match="model 'short' returned output 'Y'"):
        grpc.infer("short", _inputs(grpcclient, "FP32", data, None))


def test_statistics_count_batches_and_rows(server: RunningServer, http: Any, grpc: Any) -> None:
    before = http.get_inference_statistics("checked")["model_stats"][0]

    def one(i: int) -> None:
        data = np.full((1, 4), i, np.float32)
        grpc.infer("checked", _inputs(grpcclient, "FP32", data, None))

    _concurrently(one, 48)
    after = http.get_inference_statistics("checked")["model_stats"][0]
    inferences = after["inference_count"] - before["inference_count"]
    executions = after["execution_count"] - before["execution_count"]
    assert inferences == 48
    assert 0 < executions < inferences
    rows_before = sum(b["batch_size"] * b["compute_infer"]["count"] for b in before["batch_stats"])
    rows_after = sum(b["batch_size"] * b["compute_infer"]["count"] for b in after["batch_stats"])
    assert rows_after - rows_before == 48
    runs_before = sum(b["compute_infer"]["count"] for b in before["batch_stats"])
    runs_after = sum(b["compute_infer"]["count"] for b in after["batch_stats"])
    assert runs_after - runs_before == executions
    assert int(after["inference_stats"]["queue"]["ns"]) > int(
        before["inference_stats"]["queue"]["ns"]
    )
    connection = httplib.HTTPConnection(server.host, server.http_port, timeout=TIMEOUT)
    try:
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    finally:
        connection.close()
    labels = '{model="checked",version="1"}'
    metrics = {
        line.split("{")[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if labels in line and not line.startswith("#")
    }
    # the metrics say what the statistics say
    assert metrics["nv_inference_exec_count"] == after["execution_count"]
    assert metrics["nv_inference_count"] == after["inference_count"]
    config = http.get_model_config("checked")
    assert config["dynamic_batching"]["preferred_batch_size"] == [16]
    grpc_config = grpc.get_model_config("checked").config  # tritonclient's own ModelConfig
    assert list(grpc_config.dynamic_batching.preferred_batch_size) == [16]
    assert grpc_config.dynamic_batching.max_queue_delay_microseconds == 20_000


def test_the_v1_front_end_goes_through_the_batcher(server: RunningServer) -> None:
    def one(i: int) -> tuple[int, np.ndarray]:
        data = np.full((1, 4), i, np.float32)
        header = 'batch_size: 1 input { name: "X" } output { name: "Y" } output { name: "BATCH" }'
        connection = httplib.HTTPConnection(server.host, server.http_port, timeout=TIMEOUT)
        try:
            connection.request(
                "POST",
                "/api/infer/checked?format=binary",
                body=data.tobytes(),
                headers={v1.REQUEST_HEADER: header},
            )
            answer = connection.getresponse()
            body = answer.read()
            assert answer.status == 200, answer.getheaders()
        finally:
            connection.close()
        y = np.frombuffer(body[:16], np.float32)
        return int(np.frombuffer(body[16:20], np.int32)[0]), y

    answers = _concurrently(one, 24)
    for i, (_, y) in enumerate(answers):
        assert y.tolist() == [2.0 * i] * 4
    assert max(size for size, _ in answers) > 1


def test_the_graphpipe_front_end_goes_through_the_batcher(server: RunningServer) -> None:
    def one(i: int) -> tuple[int, np.ndarray]:
        data = np.full((1, 4), i, np.float32)
        parts = graphpipe.encode_request([data], input_names=["X"], output_names=["Y", "BATCH"])
        body = b"".join(bytes(part) for part in parts)
        connection = httplib.HTTPConnection(server.host, server.http_port, timeout=TIMEOUT)
        try:
            connection.request("POST", "/graphpipe/checked", body=body)
            answer = connection.getresponse()
            assert answer.status == 200
            decoded = graphpipe.decode_response(answer.read())
            assert not decoded.errors, decoded.errors
            y, size = decoded.outputs
        finally:
            connection.close()
        return int(size[0]), y

    answers = _concurrently(one, 24)
    for i, (_, y) in enumerate(answers):
        assert y.tolist() == [[2.0 * i] * 4]
    assert max(size for size, _ in answers) > 1


# ----------------------------------------------------------------------- a model repository


MODEL_PY = """
import numpy as np
from oipcodec.server import Model

class Sized(Model):
    def predict(self, inputs, parameters):
        import time
        time.sleep(0.05)
        x = inputs["X"]
        return {"Y": x + 1, "BATCH": np.full(len(x), len(x), np.int32)}
"""

CONFIG_PBTXT = """
max_batch_size: 32
input [ { name: "X", data_type: TYPE_INT64, dims: [ 2 ] } ]
output [ { name: "Y", data_type: TYPE_INT64, dims: [ 2 ] },
         { name: "BATCH", data_type: TYPE_INT32, dims: [ ] } ]
dynamic_batching { max_queue_delay_microseconds: 30000 preferred_batch_size: [ 8, 16 ] }
"""


@pytest.mark.grpc
def test_a_config_pbtxt_with_dynamic_batching_loads_and_batches(tmp_path: Path) -> None:
    folder = tmp_path / "sized"
    (folder / "1").mkdir(parents=True)
    (folder / "1" / "model.py").write_text(textwrap.dedent(MODEL_PY))
    (folder / "config.pbtxt").write_text(CONFIG_PBTXT)
    with background(model_repository=str(tmp_path), log_level="critical") as running:
        client = grpcclient.InferenceServerClient(running.grpc_address)
        try:
            config = client.get_model_config("sized", as_json=True)["config"]
            assert config["dynamic_batching"]["preferred_batch_size"] == [8, 16]

            def one(i: int) -> int:
                data = np.array([[i, -i]], np.int64)
                result = client.infer("sized", _inputs(grpcclient, "INT64", data, None))
                assert _same(result.as_numpy("Y"), data + 1)
                return int(result.as_numpy("BATCH")[0])

            sizes = _concurrently(one, 32)
        finally:
            client.close()
    assert max(sizes) > 1
    assert all(size <= 16 for size in sizes)  # batches close at a preferred size


def test_dynamic_batching_needs_a_batch_dimension() -> None:
    with pytest.raises(ValueError, match="dynamic_batching needs max_batch_size > 0"):
        Model(name="m", inputs=None, outputs=None).configure(dynamic_batching=DynamicBatching())
    with pytest.raises(ValueError, match=r"preferred_batch_size \[9\] is above"):
        Model(name="m", inputs=None, outputs=None, max_batch_size=8).configure(
            dynamic_batching=DynamicBatching(preferred_batch_size=[4, 9])
        )
    with pytest.raises(ValueError, match="max_queue_delay_microseconds is an int >= 0"):
        DynamicBatching(-1)


# ------------------------------------------------------------- the registry, in this process


class Slow(Model):
    """Records each batch's rows; predict waits for ``release`` (set by the test)."""

    name = "slow"
    inputs = (TensorSpec("X", "FP32", [-1]),)
    outputs = (TensorSpec("Y", "FP32", [-1]),)
    max_batch_size = 8
    dynamic_batching = DynamicBatching()

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.release = asyncio.Event()

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        self.batches.append(len(inputs["X"]))
        await self.release.wait()
        return {"Y": inputs["X"] + 1}


def _request(value: float, rows: int = 1) -> InferRequest:
    data = np.full(rows, value, np.float32)
    return InferRequest([Tensor("X", "FP32", data.shape, data)], model_name="slow")


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_unload_drains_the_queue_first() -> None:
    async def run() -> None:
        model = Slow()
        registry = ModelRegistry([model])
        await registry.load_all()
        tasks = [asyncio.ensure_future(_infer(registry, _request(0)))]
        await _settle()  # its batch runs; the next four queue behind it
        tasks += [asyncio.ensure_future(_infer(registry, _request(i))) for i in range(1, 5)]
        await _settle()
        unloading = asyncio.ensure_future(registry.unload("slow"))
        await _settle()
        with pytest.raises(UnavailableError):  # new requests see the unload at once
            await _infer(registry, _request(9))
        model.release.set()
        answers = await asyncio.gather(*tasks)
        await unloading
        assert [float(a.output("Y").data[0]) for a in answers] == [1, 2, 3, 4, 5]
        assert model.batches == [1, 4]  # the first alone, the rest queued behind it

    asyncio.run(run())


def test_unload_refuses_what_is_still_queued_after_the_drain_timeout() -> None:
    async def run() -> None:
        model = Slow()
        registry = ModelRegistry([model])
        registry.drain_timeout = 0.05
        await registry.load_all()
        tasks = [asyncio.ensure_future(_infer(registry, _request(0)))]
        await _settle()
        tasks += [asyncio.ensure_future(_infer(registry, _request(i))) for i in (1, 2)]
        await _settle()
        await registry.unload("slow")
        results = await asyncio.gather(*tasks[1:], return_exceptions=True)
        for result in results:
            assert isinstance(result, UnavailableError)
            assert "model 'slow' version 1 was unloaded before the request's batch ran" in str(
                result
            )
        model.release.set()
        await tasks[0]  # the batch that ran answers

    asyncio.run(run())


def test_a_client_gone_before_its_batch_ran_is_dropped_from_it() -> None:
    async def run() -> None:
        model = Slow()
        registry = ModelRegistry([model])
        await registry.load_all()
        first = asyncio.ensure_future(_infer(registry, _request(0)))
        await _settle()
        queued = [asyncio.ensure_future(_infer(registry, _request(i, 2))) for i in (1, 2, 3)]
        await _settle()
        queued[1].cancel()  # what a front end does when its client goes away
        model.release.set()
        await first
        answers = await asyncio.gather(queued[0], queued[2])
        assert [a.output("Y").data.tolist() for a in answers] == [[2, 2], [4, 4]]
        assert model.batches == [1, 4]
        await registry.unload_all()

    asyncio.run(run())


def test_a_request_that_cannot_write_its_rows_fails_alone() -> None:
    class Broken(Tensor):
        def into(self, out: np.ndarray) -> None:
            raise InvalidArgumentError("input 'X': element 1 is not a number")

    async def run() -> None:
        model = Slow()
        model.release.set()
        registry = ModelRegistry([model])
        await registry.load_all()
        good = [_request(i) for i in range(3)]
        bad = InferRequest([Broken("X", "FP32", (1,), np.zeros(1, np.float32))], model_name="slow")
        results = await asyncio.gather(
            *(_infer(registry, r) for r in (good[0], good[1], bad, good[2])), return_exceptions=True
        )
        assert isinstance(results[2], InvalidArgumentError)
        assert [float(r.output("Y").data[0]) for r in (results[0], results[1], results[3])] == [
            1,
            2,
            3,
        ]
        assert sum(model.batches) == 3  # the bad request's rows are not in a batch
        await registry.unload_all()

    asyncio.run(run())


def test_answers_are_views_of_the_batch_output() -> None:
    async def run() -> None:
        model = Slow()
        registry = ModelRegistry([model])
        await registry.load_all()
        blocker = asyncio.ensure_future(_infer(registry, _request(0)))
        await _settle()
        queued = [asyncio.ensure_future(_infer(registry, _request(i, 2))) for i in (1, 2)]
        await _settle()
        model.release.set()
        await blocker
        answers = await asyncio.gather(*queued)
        assert model.batches == [1, 4]
        a, b = (r.output("Y").data for r in answers)
        assert a.base is not None and a.base is b.base  # rows of one array, not copies
        await registry.unload_all()

    asyncio.run(run())


class Gated(Model):
    """Records each batch's rows; predict waits until the test opens ``gate``."""

    name = "gated"
    inputs = (TensorSpec("X", "FP32", [-1]),)
    outputs = (TensorSpec("Y", "FP32", [-1]),)
    max_batch_size = 8
    dynamic_batching = DynamicBatching()

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.gate = threading.Event()

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        self.batches.append(len(inputs["X"]))
        for _ in range(int(TIMEOUT / 0.005)):  # bounded: the test opens it within seconds
            if self.gate.is_set():
                break
            await asyncio.sleep(0.005)
        return {"Y": inputs["X"] + 1}


def _wait_until(condition: Callable[[], bool]) -> None:
    for _ in range(int(TIMEOUT / 0.01)):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("the condition never held")


@pytest.mark.parametrize("protocol", ["oipcodec", "native", "httptools", "h11"])
def test_a_rest_client_gone_before_its_batch_ran_is_dropped_from_it(protocol: str) -> None:
    model = Gated()
    body = b'{"inputs":[{"name":"X","shape":[1],"datatype":"FP32","data":[1]}]}'
    request = (
        b"POST /v2/models/gated/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )

    def answer(server: RunningServer) -> bytes:
        with socket.create_connection((server.host, server.http_port), TIMEOUT) as sock:
            sock.sendall(request)
            return sock.recv(65536)

    settings: dict[str, Any] = {"grpc_port": None, "http_protocol": protocol}
    with (
        background([model], process=False, log_level="critical", **settings) as server,
        ThreadPoolExecutor(2) as pool,
    ):
        first = pool.submit(answer, server)  # its batch runs, held by the gate
        _wait_until(lambda: model.batches == [1])
        gone = socket.create_connection((server.host, server.http_port), TIMEOUT)
        gone.sendall(request)  # queued behind the first...
        time.sleep(0.3)
        gone.close()  # ...and its client goes away
        time.sleep(0.3)
        last = pool.submit(answer, server)
        time.sleep(0.3)
        model.gate.set()
        assert first.result(TIMEOUT).startswith(b"HTTP/1.1 200")
        assert last.result(TIMEOUT).startswith(b"HTTP/1.1 200")
    assert model.batches == [1, 1]  # the request of the client gone is not in the batch


def test_a_load_with_a_configuration_override_turns_batching_on_and_off() -> None:
    class Plain(Slow):
        dynamic_batching = None

    async def run() -> None:
        model = Plain()
        model.release.set()
        registry = ModelRegistry([model])
        await registry.load_all()
        override = '{"dynamic_batching": {"max_queue_delay_microseconds": "2000"}}'
        await registry.load("slow", {"config": override})
        assert model.dynamic_batching == DynamicBatching(2000)
        assert registry.config("slow")["dynamic_batching"]["max_queue_delay_microseconds"] == 2000
        answers = await asyncio.gather(*(_infer(registry, _request(i)) for i in range(4)))
        assert [float(a.output("Y").data[0]) for a in answers] == [1, 2, 3, 4]
        assert model.batches == [4]  # queued within the delay: one batch
        # max_queue_size belongs in a queue policy, not in dynamic_batching itself
        with pytest.raises(InvalidArgumentError, match=r"\['max_queue_size'\], which Triton"):
            await registry.load("slow", {"config": '{"dynamic_batching": {"max_queue_size": 2}}'})
        assert model.dynamic_batching == DynamicBatching(2000)  # unchanged
        await registry.load("slow", {"config": '{"dynamic_batching": null}'})
        assert model.dynamic_batching is None and "dynamic_batching" not in registry.config("slow")
        await registry.unload_all()

    asyncio.run(run())


def test_a_grpc_call_cancelled_before_its_batch_ran_is_dropped_from_it() -> None:
    model = Gated()
    x = np.ones(1, np.float32)

    def call(server: RunningServer, timeout: float | None = None) -> Any:
        client = grpcclient.InferenceServerClient(server.grpc_address)
        try:
            inputs = _inputs(grpcclient, "FP32", x, None)
            return client.infer("gated", inputs, client_timeout=timeout)
        finally:
            client.close()

    with (
        background([model], process=False, http_port=None, log_level="critical") as server,
        ThreadPoolExecutor(2) as pool,
    ):
        first = pool.submit(call, server)
        _wait_until(lambda: model.batches == [1])
        with pytest.raises(InferenceServerException, match="Deadline"):
            call(server, 0.3)  # queued behind the first, then given up by its client
        time.sleep(0.3)
        last = pool.submit(call, server)
        time.sleep(0.3)
        model.gate.set()
        assert first.result(TIMEOUT).as_numpy("Y").tolist() == [2.0]
        assert last.result(TIMEOUT).as_numpy("Y").tolist() == [2.0]
    assert model.batches == [1, 1]


def test_a_request_looked_up_before_an_unload_gets_no_new_queue() -> None:
    class SlowUnload(Slow):
        async def unload(self) -> None:
            await self.release.wait()

    async def run() -> None:
        model = SlowUnload()
        registry = ModelRegistry([model])
        await registry.load_all()
        model.release.set()
        await _infer(registry, _request(1))  # its queue exists
        model.release.clear()
        unloading = asyncio.ensure_future(registry.unload("slow"))
        await _settle()  # the queue is closed; the unload hook runs
        with pytest.raises(UnavailableError, match="being unloaded"):
            # a front end looked it up before; bounded, as a new queue would wait on the gate
            await asyncio.wait_for(Pipeline.of(registry).run(_request(2), model), TIMEOUT / 10)
        model.release.set()
        await unloading

    asyncio.run(run())


class Echo(Slow):
    """Answers its input as it came (views of the batch buffer), and records (weakly) the
    batch buffer of each batch."""

    name = "slow"

    def __init__(self) -> None:
        super().__init__()
        self.buffers: list[weakref.ref[np.ndarray]] = []

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        x = inputs["X"]
        self.buffers.append(weakref.ref(x.base))  # the batch buffer the input is a view of
        await self.release.wait()
        return {"Y": x}


def test_a_batch_buffer_is_reused_only_when_nothing_refers_to_it() -> None:
    async def run() -> None:
        model = Echo()
        model.release.set()
        registry = ModelRegistry([model])
        await registry.load_all()
        # The answer holds a view of the first batch's buffer: the second batch gets another.
        held = await _infer(registry, _request(1, 4))
        second = await _infer(registry, _request(2, 4))
        assert model.buffers[1]() is not model.buffers[0]()
        assert held.output("Y").data.tolist() == [1, 1, 1, 1]  # not overwritten
        del held
        # Nothing refers to the first buffer's successor once its answer is gone.
        del second
        await _infer(registry, _request(3, 2))
        reused = model.buffers[2]()
        assert reused is not None and reused is model.buffers[1]()  # reused, fewer rows
        await registry.unload_all()

    asyncio.run(run())


class Blocking(Model):
    """A plain (not async) predict that blocks until ``release`` is set, as a model busy
    computing would; records each batch's rows and the thread it ran in."""

    name = "slow"
    inputs = (TensorSpec("X", "FP32", [-1]),)
    outputs = (TensorSpec("Y", "FP32", [-1]),)
    max_batch_size = 8
    dynamic_batching = DynamicBatching()

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.threads: list[int] = []
        self.release = threading.Event()

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        self.batches.append(len(inputs["X"]))
        self.threads.append(threading.get_ident())
        self.release.wait(TIMEOUT)
        return {"Y": inputs["X"] + 1}


def test_a_plain_predict_runs_off_the_event_loop_so_requests_queue_meanwhile() -> None:
    """Without run_in_thread, a batching model's predict still runs in a worker thread: on
    the event loop nothing could join the queue while a batch ran."""

    async def run() -> None:
        model = Blocking()
        assert not model.run_in_thread
        registry = ModelRegistry([model])
        await registry.load_all()
        first = asyncio.ensure_future(_infer(registry, _request(0)))
        while not model.batches:  # the first batch is in predict, in its thread
            await asyncio.sleep(0.01)
        queued = [asyncio.ensure_future(_infer(registry, _request(i))) for i in (1, 2, 3)]
        await _settle()
        model.release.set()
        answers = await asyncio.gather(first, *queued)
        assert [float(r.output("Y").data[0]) for r in answers] == [1.0, 2.0, 3.0, 4.0]
        assert model.batches == [1, 3]
        assert threading.get_ident() not in model.threads
        await registry.unload_all()

    asyncio.run(asyncio.wait_for(run(), TIMEOUT))
