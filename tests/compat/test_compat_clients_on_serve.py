"""The peers' own clients against a real ``oipcodec serve`` (the console command, its demo
models, in a process of its own on 127.0.0.1): KServe's ``InferenceRESTClient`` (protocol v2)
and ``InferenceGRPCClient``, and tritonclient's HTTP and gRPC clients; health, metadata (where
the client has such a call: KServe's have none) and inference.

KServe's REST client parses the health bodies KServe's server sends (``{"live": true}``,
``{"ready": true}``): against a server answering Triton's empty bodies its ``is_server_live``
failed with a JSONDecodeError. MLServer has no client of its own (``mlserver infer`` sends
inferences with tritonclient.http.aio); tests/compat/test_compat_mlserver.py runs it against
``oipcodec serve`` in the MLServer environment.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import __version__
from tests.support.arrays import assert_same as _same
from tests.support.peers import require_kserve, require_peer
from tests.support.serve_process import run_serve

kserve = require_kserve()
triton_http = require_peer("tritonclient.http")
triton_grpc = require_peer("tritonclient.grpc")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

from kserve import InferenceGRPCClient, InferenceRESTClient, InferInput, InferRequest  # noqa: E402
from kserve.inference_client import RESTConfig  # noqa: E402

A = np.arange(16, dtype=np.int32).reshape(1, 16)
B = np.full((1, 16), 3, dtype=np.int32)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``oipcodec serve`` (demo models) on free 127.0.0.1 ports until ready; always stopped."""
    yield from run_serve(tmp_path_factory.mktemp("serve"))


def test_health_bodies(server: dict[str, str]) -> None:
    """Triton's statuses with KServe's bodies, as JSON."""
    for path, document in [
        ("/v2/health/live", {"live": True}),
        ("/v2/health/ready", {"ready": True}),
        ("/v2/models/simple/ready", {"name": "simple", "ready": True}),
    ]:
        with urllib.request.urlopen(f"http://{server['http']}{path}", timeout=10) as answer:
            assert answer.headers["Content-Type"] == "application/json"
            assert orjson.loads(answer.read()) == document


def _kserve_request(binary: bool) -> Any:
    inputs = []
    for name, array in (("INPUT0", A), ("INPUT1", B)):
        tensor = InferInput(name, list(array.shape), "INT32")
        tensor.set_data_from_numpy(array, binary_data=binary)
        inputs.append(tensor)
    return InferRequest("simple", inputs, request_id="k1")


def _check_sum_and_difference(response: Any) -> None:
    outputs = {output.name: output.as_numpy() for output in response.outputs}
    _same(outputs["OUTPUT0"].reshape(1, 16), A + B)
    _same(outputs["OUTPUT1"].reshape(1, 16), A - B)


def test_kserve_rest_client(server: dict[str, str]) -> None:
    base = f"http://{server['http']}"

    async def run() -> None:
        client = InferenceRESTClient(RESTConfig(protocol="v2", timeout=30))
        try:
            assert await client.is_server_live(base) is True
            assert await client.is_server_ready(base) is True
            assert await client.is_model_ready(base, "simple") is True
            assert await client.is_model_ready(base, "nope") is False
            for binary in (False, True):
                response = await client.infer(base, _kserve_request(binary), model_name="simple")
                assert response.id == "k1"
                _check_sum_and_difference(response)
        finally:
            await client.close()

    asyncio.run(run())


def test_kserve_grpc_client(server: dict[str, str]) -> None:
    async def run() -> None:
        client = InferenceGRPCClient(server["grpc"], timeout=30)
        try:
            assert await client.is_server_live() is True
            assert await client.is_server_ready() is True
            assert await client.is_model_ready("simple") is True
            response = await client.infer(_kserve_request(binary=True))
            assert response.id == "k1"
            _check_sum_and_difference(response)
        finally:
            await client.close()

    asyncio.run(run())


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_tritonclient(server: dict[str, str], transport: str) -> None:
    module = triton_http if transport == "http" else triton_grpc
    client = module.InferenceServerClient(server[transport])
    try:
        assert client.is_server_live() is True
        assert client.is_server_ready() is True
        assert client.is_model_ready("simple") is True
        if transport == "http":  # (over gRPC an unknown model is an error, NOT_FOUND)
            assert client.is_model_ready("nope") is False
        as_json = transport == "grpc"
        metadata = client.get_server_metadata(**({"as_json": True} if as_json else {}))
        assert (metadata["name"], metadata["version"]) == ("oipcodec", __version__)
        model = client.get_model_metadata("simple", **({"as_json": True} if as_json else {}))
        assert [i["name"] for i in model["inputs"]] == ["INPUT0", "INPUT1"]
        inputs = []
        for name, array in (("INPUT0", A), ("INPUT1", B)):
            tensor = module.InferInput(name, [1, 16], "INT32")
            tensor.set_data_from_numpy(array)
            inputs.append(tensor)
        result = client.infer("simple", inputs, request_id="t1")
        _same(result.as_numpy("OUTPUT0"), A + B)
        _same(result.as_numpy("OUTPUT1"), A - B)
    finally:
        client.close()
