"""oipcodec's clients and its shared-memory helper, against the embedded server (real
sockets on 127.0.0.1), and crossed with tritonclient: our regions used by tritonclient,
tritonclient's regions used by our clients."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.client.shm import SharedMemoryRegion
from oipcodec.errors import DecodeError, ServerError
from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("grpc", reason="the client extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")

A = np.arange(16, dtype=np.int32).reshape(1, 16)
B = np.full((1, 16), 5, dtype=np.int32)


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(log_level="warning", shared_memory="system") as running:
        yield running


class Sync:
    """The async clients driven to completion, so that one test body serves all four."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._loop = asyncio.new_event_loop()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not asyncio.iscoroutinefunction(method):
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._loop.run_until_complete(method(*args, **kwargs))

        return call

    def close(self) -> None:
        self._loop.run_until_complete(self._client.close())
        self._loop.close()


@pytest.fixture(params=["http", "async-http", "grpc", "async-grpc"])
def client(request: pytest.FixtureRequest, server: RunningServer) -> Iterator[Any]:
    from oipcodec.client import AsyncGrpcClient, AsyncHttpClient, GrpcClient, HttpClient

    made: Any
    if request.param == "http":
        made = HttpClient(server.http_url)
    elif request.param == "async-http":
        made = Sync(AsyncHttpClient(server.http_url))
    elif request.param == "grpc":
        made = GrpcClient(server.grpc_address)
    else:
        made = Sync(AsyncGrpcClient(server.grpc_address))
    yield made
    made.unregister_system_shared_memory()
    made.close()


def test_simple_flow(client: Any) -> None:
    """Inputs in one region, outputs in another; the outputs come back read from it."""
    with (
        SharedMemoryRegion.create("inputs", 128) as inputs,
        SharedMemoryRegion.create("outputs", 128) as outputs,
    ):
        client.register_region(inputs)
        client.register_region(outputs)
        assert [row["name"] for row in client.system_shared_memory_status()] == [
            "inputs",
            "outputs",
        ]
        assert client.system_shared_memory_status("outputs") == [
            {"name": "outputs", "key": outputs.key, "offset": 0, "byte_size": 128}
        ]
        answer = client.infer(
            "simple",
            [inputs.input("INPUT0", A), inputs.input("INPUT1", B, offset=64)],
            outputs=[outputs.output("OUTPUT0", 64), outputs.output("OUTPUT1", 64, offset=64)],
        )
        first, second = answer.output("OUTPUT0"), answer.output("OUTPUT1")
        np.testing.assert_array_equal(first.data, A + B)
        np.testing.assert_array_equal(second.data, A - B)
        assert second.parameters["shared_memory_offset"] == 64
        np.testing.assert_array_equal(outputs.array("INT32", [1, 16], offset=64), A - B)
        # The answer's arrays were read from the region (copies: the server may shrink the
        # object at any time, and a copy cannot fault): later writes leave them as read.
        outputs.put(np.zeros((1, 16), np.int32))
        np.testing.assert_array_equal(first.data, A + B)
        assert not outputs.array("INT32", [1, 16]).any()
        client.unregister_system_shared_memory("inputs")
        assert [row["name"] for row in client.system_shared_memory_status()] == ["outputs"]


def test_mixed_inputs_and_bytes(client: Any) -> None:
    """One input in shared memory and one sent as data; BYTES through the framing."""
    words = np.array([[str(i).encode() for i in range(16)]], dtype=np.object_)
    with SharedMemoryRegion.create("words", 1024) as region:
        client.register_region(region)
        answer = client.infer(
            "simple_string", [region.input("INPUT0", words), _tensor("INPUT1", words)]
        )
        got = answer.output("OUTPUT0").data
        assert [int(x) for x in got.reshape(-1)] == [2 * i for i in range(16)]
        out = client.infer(
            "simple",
            {"INPUT0": A, "INPUT1": region.input("INPUT1", B, offset=512)},
            outputs=[region.output("OUTPUT1", offset=0)],
        )
        np.testing.assert_array_equal(out.output("OUTPUT1").data, A - B)


def test_image_identity(client: Any) -> None:
    image = np.random.default_rng(3).standard_normal((1, 3, 224, 224), dtype=np.float32)
    with (
        SharedMemoryRegion.create("image", image.nbytes) as inputs,
        SharedMemoryRegion.create("answer", image.nbytes) as outputs,
    ):
        client.register_region(inputs)
        client.register_region(outputs)
        answer = client.infer(
            "identity", [inputs.input("INPUT0", image)], outputs=[outputs.output("INPUT0")]
        )
        np.testing.assert_array_equal(answer.output("INPUT0").data, image)
        del answer


def test_refusals_reach_the_client(client: Any) -> None:
    with SharedMemoryRegion.create("small", 32) as region:
        client.register_region(region)
        with pytest.raises(ServerError) as info:
            client.register_region(region)
        assert "shared memory region 'small' already in manager" in str(info.value)
        with pytest.raises(ServerError) as info:
            client.infer(
                "simple", {"INPUT0": A, "INPUT1": B}, outputs=[region.output("OUTPUT0", 32)]
            )
        assert "output 'OUTPUT0' holds 64 bytes, more than the 32 bytes" in str(info.value)
    with pytest.raises(ServerError) as info:
        client.register_system_shared_memory("bad", "/../etc/passwd", 8)
    assert "invalid shared memory key" in str(info.value)


def _tensor(name: str, array: np.ndarray[Any, Any]) -> Any:
    from oipcodec import Tensor

    return Tensor.from_array(name, array)


def test_helper_checks_its_bounds() -> None:
    with SharedMemoryRegion.create("r", 16) as region:
        with pytest.raises(ValueError, match="cannot write 64 bytes at offset 0"):
            region.put(A)
        with pytest.raises(ValueError, match="needs their byte_size"):
            region.array("BYTES", [1])
        with pytest.raises(FileNotFoundError):
            SharedMemoryRegion.attach("x", region.key + "-missing", 16)
    with pytest.raises(ValueError, match="closed"):
        region.put(np.zeros(1, np.int8))


# ------------------------------------------------------------------ crossed with tritonclient


def test_our_regions_with_tritonclient(server: RunningServer) -> None:
    httpclient = pytest.importorskip("tritonclient.http")
    triton = httpclient.InferenceServerClient(server.http_address)
    try:
        with (
            SharedMemoryRegion.create("ours-in", 128) as inputs,
            SharedMemoryRegion.create("ours-out", 128) as outputs,
        ):
            inputs.put(A)
            inputs.put(B, offset=64)
            triton.register_system_shared_memory("ours-in", inputs.key, 128)
            triton.register_system_shared_memory("ours-out", outputs.key, 128)
            i0 = httpclient.InferInput("INPUT0", [1, 16], "INT32").set_shared_memory("ours-in", 64)
            i1 = httpclient.InferInput("INPUT1", [1, 16], "INT32")
            i1.set_shared_memory("ours-in", 64, offset=64)
            o0 = httpclient.InferRequestedOutput("OUTPUT0")
            o0.set_shared_memory("ours-out", 64)
            triton.infer("simple", [i0, i1], outputs=[o0])
            np.testing.assert_array_equal(outputs.array("INT32", [1, 16]), A + B)
            triton.unregister_system_shared_memory()
    finally:
        triton.close()


def test_tritonclient_regions_with_our_clients(client: Any) -> None:
    tshm = pytest.importorskip("tritonclient.utils.shared_memory")
    key = f"/oipcodec-test-theirs-{os.getpid()}"
    handle = tshm.create_shared_memory_region("theirs", key, 128)
    try:
        tshm.set_shared_memory_region(handle, [A, B])
        region = SharedMemoryRegion.attach("theirs", key, 128)
        with region:
            client.register_region(region)
            answer = client.infer(
                "simple",
                {"INPUT0": A, "INPUT1": B},
                outputs=[region.output("OUTPUT0", 64, offset=64)],
            )
            np.testing.assert_array_equal(answer.output("OUTPUT0").data, A + B)
            del answer
        np.testing.assert_array_equal(
            tshm.get_contents_as_numpy(handle, np.int32, [1, 16], offset=64), A + B
        )
        # Registered by key: the client opens the region itself to read outputs there.
        client.unregister_system_shared_memory()
        client.register_system_shared_memory("by-key", key, 128)
        answer = client.infer(
            "simple",
            {"INPUT0": A, "INPUT1": B},
            outputs=[_output("OUTPUT1", "by-key", 64)],
        )
        np.testing.assert_array_equal(answer.output("OUTPUT1").data, A - B)
    finally:
        tshm.destroy_shared_memory_region(handle)


def test_output_in_a_region_the_client_does_not_know(server: RunningServer) -> None:
    from oipcodec.client import HttpClient

    with SharedMemoryRegion.create("elsewhere", 64) as region:
        with HttpClient(server.http_url) as registrar:
            registrar.register_region(region)
        with HttpClient(server.http_url) as client:
            try:
                with pytest.raises(DecodeError, match="not registered through this client"):
                    client.infer(
                        "simple",
                        {"INPUT0": A, "INPUT1": B},
                        outputs=[_output("OUTPUT0", "elsewhere", 64)],
                    )
                np.testing.assert_array_equal(region.array("INT32", [1, 16]), A + B)
            finally:
                client.unregister_system_shared_memory()


def _output(name: str, region: str, size: int) -> Any:
    from oipcodec import RequestedOutput
    from oipcodec.sharedmem import Location, parameters_for

    return RequestedOutput(name, parameters_for(Location(region, size)))


def test_grpc_typed_contents(server: RunningServer) -> None:
    """With typed contents, an input in shared memory carries empty contents beside the
    others' typed values; a BYTES output written at an offset says how many bytes it took."""
    from oipcodec.client import GrpcClient

    words = np.array([[str(i).encode() for i in range(16)]], dtype=np.object_)
    with (
        GrpcClient(server.grpc_address, raw=False) as client,
        SharedMemoryRegion.create("typed", 4096) as region,
    ):
        client.register_region(region)
        try:
            answer = client.infer("simple", {"INPUT0": region.input("INPUT0", A), "INPUT1": B})
            np.testing.assert_array_equal(answer.output("OUTPUT0").data, A + B)
            answer = client.infer(
                "simple_string",
                {"INPUT0": region.input("INPUT0", words), "INPUT1": words},
                outputs=[region.output("OUTPUT0", 2000, offset=1000)],
            )
            output = answer.output("OUTPUT0")
            assert [int(x) for x in output.data.reshape(-1)] == [2 * i for i in range(16)]
            size = output.parameters["shared_memory_byte_size"]
            assert size == 16 * 4 + sum(len(str(2 * i)) for i in range(16))
            assert region.array("BYTES", [1, 16], offset=1000, byte_size=size).tolist() == (
                output.data.tolist()
            )
            del answer, output
        finally:
            client.unregister_system_shared_memory()


@pytest.mark.parametrize(
    "method",
    [
        "register_system_shared_memory",
        "register_region",
        "unregister_system_shared_memory",
        "system_shared_memory_status",
    ],
)
def test_the_four_clients_share_one_implementation(method: str) -> None:
    from oipcodec.client import AsyncGrpcClient, AsyncHttpClient, GrpcClient, HttpClient
    from oipcodec.client.shm import AsyncSharedMemoryCalls, SharedMemoryCalls

    for cls in (HttpClient, GrpcClient):
        assert getattr(cls, method) is getattr(SharedMemoryCalls, method), cls
    for cls in (AsyncHttpClient, AsyncGrpcClient):
        assert getattr(cls, method) is getattr(AsyncSharedMemoryCalls, method), cls
