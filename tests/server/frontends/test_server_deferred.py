"""A model that batches (``dynamic_batching`` set) gets its requests decoded once, by the
front end, as any model does (no JSON kept as text for the batcher to parse): the ASGI app
driven directly, answers and errors compared with the same model without batching."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import rest
from oipcodec.server import DynamicBatching, Model
from oipcodec.server.inference import Pipeline
from oipcodec.server.model import Arrays, TensorSpec
from oipcodec.server.registry import ModelRegistry
from oipcodec.types import Parameters, Tensor

pytest.importorskip("uvicorn", reason="the server extra is not installed")

from oipcodec.server.frontends.rest_frontend import RestApp


class Scale(Model):
    """x * 2 for FP32 [-1, 3], labels BYTES [-1, 1] passed through."""

    name = "scale"
    platform = "oipcodec_python"
    max_batch_size = 8
    inputs = (TensorSpec("x", "FP32", [-1, 3]), TensorSpec("labels", "BYTES", [-1, 1]))
    outputs = (TensorSpec("y", "FP32", [-1, 3]), TensorSpec("labels", "BYTES", [-1, 1]))

    def predict(self, inputs: Arrays, parameters: Parameters) -> Arrays:
        return {"y": inputs["x"] * 2, "labels": inputs["labels"]}


class BatchingScale(Scale):
    name = "scale_batched"
    dynamic_batching = DynamicBatching(max_queue_delay_microseconds=100)


async def _post(app: RestApp, path: str, body: bytes) -> tuple[int, Any]:
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # as a server does: no disconnect while the client waits
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "method": "POST", "path": path, "headers": []}, receive, send)
    start, payload = sent
    return start["status"], orjson.loads(payload["body"])


def _body(x: Any, labels: Any) -> bytes:
    return orjson.dumps(
        {
            "inputs": [
                {"name": "x", "shape": [2, 3], "datatype": "FP32", "data": x},
                {"name": "labels", "shape": [2, 1], "datatype": "BYTES", "data": labels},
            ]
        }
    )


@pytest.fixture
def served() -> tuple[RestApp, list[type]]:
    registry = ModelRegistry([Scale(), BatchingScale()])
    asyncio.run(registry.load_all())
    seen: list[type] = []
    pipeline = Pipeline.of(registry)
    run = pipeline.run

    async def spy(request: Any, model: Any = None) -> Any:  # records what the front end made
        seen.extend(type(t) for t in request.inputs)
        return await run(request, model)

    pipeline.run = spy  # type: ignore[method-assign]
    return RestApp(registry, manage_models=False), seen


def test_a_batching_model_gets_decoded_tensors(served) -> None:
    app, seen = served
    body = _body([1, 2, 3, 4, 5, 6], ["a", "b"])
    for model, kind in (("scale", Tensor), ("scale_batched", Tensor)):
        seen.clear()
        status, answer = asyncio.run(_post(app, f"/v2/models/{model}/infer", body))
        assert status == 200, answer
        assert seen == [kind, kind]
        y, labels = answer["outputs"]
        assert y["data"] == [2, 4, 6, 8, 10, 12]
        assert labels["data"] == ["a", "b"]


@pytest.mark.parametrize(
    "x, labels",
    [
        ([1, 2, "three", 4, 5, 6], ["a", "b"]),
        ([1, 2, 3, 4, 5], ["a", "b"]),
        ([1, 2, 3, 4, 5, 6e39], ["a", "b"]),
        ([1, 2, 3, 4, 5, 6], ["a", 2]),
    ],
)
def test_bad_data_gets_the_same_answer(served, x: Any, labels: Any) -> None:
    """A batching model answers bad JSON data as any model does: 400 and the same message."""
    app, _ = served
    body = _body(x, labels)
    plain = asyncio.run(_post(app, "/v2/models/scale/infer", body))
    batched = asyncio.run(_post(app, "/v2/models/scale_batched/infer", body))
    assert plain[0] == batched[0] == 400
    assert plain[1] == batched[1]
    assert "input '" in plain[1]["error"]


def test_binary_inputs_are_decoded_too(served) -> None:
    app, seen = served
    request = rest.InferRequest(
        [
            Tensor.from_array("x", np.ones((2, 3), np.float32)),
            Tensor.from_array("labels", np.array([[b"a"], [b"b"]], dtype=object)),
        ]
    )
    body, length = rest.encode_request(request, binary=["x"])
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # as a server does: no disconnect while the client waits
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"inference-header-content-length", str(length).encode())]
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v2/models/scale_batched/infer",
        "headers": headers,
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 200
    assert seen == [Tensor, Tensor]


# ---- tritonclient over HTTP, a server in a thread ------------------------------------------


def test_tritonclient_json_and_binary_to_a_batching_model() -> None:
    """The real client, JSON and binary, to a batching model: each request gets its own
    values back, and bad JSON data is answered 400 naming the input."""
    httpclient = pytest.importorskip("tritonclient.http")
    from tritonclient.utils import InferenceServerException

    from oipcodec.testing import background

    with background([Scale(), BatchingScale()], process=False, log_level="warning") as server:
        client = httpclient.InferenceServerClient(
            server.http_address, connection_timeout=30.0, network_timeout=30.0, concurrency=4
        )
        try:
            pending = []
            for i in range(8):
                x = (np.arange(6, dtype=np.float32) + 10 * i).reshape(2, 3)
                labels = np.array([[f"r{i}a".encode()], [f"r{i}b".encode()]], dtype=object)
                inputs = [
                    httpclient.InferInput("x", [2, 3], "FP32"),
                    httpclient.InferInput("labels", [2, 1], "BYTES"),
                ]
                binary = i % 2 == 1
                inputs[0].set_data_from_numpy(x, binary_data=binary)
                inputs[1].set_data_from_numpy(labels, binary_data=binary)
                outputs = [
                    httpclient.InferRequestedOutput("y", binary_data=binary),
                    httpclient.InferRequestedOutput("labels", binary_data=binary),
                ]
                pending.append(
                    (x, labels, client.async_infer("scale_batched", inputs, outputs=outputs))
                )
            for x, labels, future in pending:
                result = future.get_result()
                np.testing.assert_array_equal(result.as_numpy("y"), x * 2)
                got = [
                    [v if isinstance(v, bytes) else v.encode() for v in row]
                    for row in result.as_numpy("labels").tolist()
                ]  # JSON BYTES come back as str
                assert got == labels.tolist()
            bad = httpclient.InferInput("x", [2, 3], "INT32")  # the model expects FP32
            bad.set_data_from_numpy(np.zeros((2, 3), np.int32), binary_data=False)
            with pytest.raises(InferenceServerException, match="input 'x'"):
                client.infer("scale_batched", [bad])
        finally:
            client.close()
