"""The system shared-memory extension against the real tritonclient, over HTTP and gRPC.

Regions are made with tritonclient.utils.shared_memory (as Triton's examples do; tritonclient
2.x builds it on multiprocessing.shared_memory) or with multiprocessing.shared_memory itself;
the servers run on free ports of 127.0.0.1. Every refusal of the extension is checked for its
status and its words.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from multiprocessing import shared_memory as mp_shm
from typing import Any

import numpy as np
import pytest

from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
tshm = pytest.importorskip("tritonclient.utils.shared_memory")
from tritonclient.utils import InferenceServerException, serialize_byte_tensor  # noqa: E402

from tests.support.client_models import client_models  # noqa: E402

_names = itertools.count()


def _key(tag: str) -> str:
    """A POSIX shm name no other test (or process) uses."""
    return f"/oipcodec-test-{os.getpid()}-{tag}-{next(_names)}"


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(client_models(), log_level="warning", shared_memory="system") as running:
        yield running


@pytest.fixture(scope="module")
def plain() -> Iterator[RunningServer]:
    """A server without the extension."""
    with background(log_level="warning", grpc_port=0) as running:
        yield running


def _client(module: Any, server: RunningServer) -> Any:
    if module is httpclient:
        return httpclient.InferenceServerClient(server.http_address, network_timeout=30.0)
    return grpcclient.InferenceServerClient(server.grpc_address)


@pytest.fixture(params=["http", "grpc"])
def protocol(request: pytest.FixtureRequest) -> Any:
    return httpclient if request.param == "http" else grpcclient


@pytest.fixture
def client(protocol: Any, server: RunningServer) -> Iterator[Any]:
    client = _client(protocol, server)
    yield client
    client.unregister_system_shared_memory()
    client.close()


class Region:
    """A tritonclient region (tritonclient.utils.shared_memory), destroyed at the end of the
    test."""

    def __init__(self, size: int, tag: str = "r") -> None:
        self.key = _key(tag)
        self.name = self.key[1:]
        self.size = size
        self.handle = tshm.create_shared_memory_region(self.name, self.key, size)

    def put(self, *arrays: np.ndarray[Any, Any], offset: int = 0) -> None:
        tshm.set_shared_memory_region(self.handle, list(arrays), offset=offset)

    def get(self, datatype: Any, shape: list[int], offset: int = 0) -> np.ndarray[Any, Any]:
        return tshm.get_contents_as_numpy(self.handle, datatype, shape, offset=offset)

    def destroy(self) -> None:
        tshm.destroy_shared_memory_region(self.handle)


@pytest.fixture
def regions() -> Iterator[list[Region]]:
    made: list[Region] = []
    yield made
    for region in made:
        region.destroy()


def _region(regions: list[Region], size: int, tag: str = "r") -> Region:
    region = Region(size, tag)
    regions.append(region)
    return region


def _refused(call: Any, *args: Any, **kwargs: Any) -> InferenceServerException:
    with pytest.raises(InferenceServerException) as info:
        call(*args, **kwargs)
    return info.value


def _simple_shm_request(
    module: Any, inputs: str, outputs: str | None
) -> tuple[list[Any], list[Any]]:
    i0 = module.InferInput("INPUT0", [1, 16], "INT32")
    i0.set_shared_memory(inputs, 64)
    i1 = module.InferInput("INPUT1", [1, 16], "INT32")
    i1.set_shared_memory(inputs, 64, offset=64)
    o0 = module.InferRequestedOutput("OUTPUT0")
    o1 = module.InferRequestedOutput("OUTPUT1")
    if outputs is not None:
        o0.set_shared_memory(outputs, 64)
        o1.set_shared_memory(outputs, 64, offset=64)
    return [i0, i1], [o0, o1]


# ------------------------------------------------------------------ Triton's example flow


def test_simple_example_flow(client: Any, protocol: Any, regions: list[Region]) -> None:
    """Triton's simple_*_shm_client: inputs in one region, outputs in another."""
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 7, dtype=np.int32)
    ins, outs = _region(regions, 128, "in"), _region(regions, 128, "out")
    ins.put(a, b)
    client.register_system_shared_memory("input_data", ins.key, 128)
    client.register_system_shared_memory("output_data", outs.key, 128)
    inputs, outputs = _simple_shm_request(protocol, "input_data", "output_data")
    result = client.infer("simple", inputs, outputs=outputs)
    np.testing.assert_array_equal(outs.get(np.int32, [1, 16]), a + b)
    np.testing.assert_array_equal(outs.get(np.int32, [1, 16], offset=64), a - b)
    # The answer names where the outputs are, and carries no data.
    document = result.get_response() if protocol is httpclient else None
    if document is not None:
        (first, second) = document["outputs"]
        assert "data" not in first and first["shape"] == [1, 16]
        assert first["parameters"] == {
            "shared_memory_region": "output_data",
            "shared_memory_byte_size": 64,
        }
        assert second["parameters"]["shared_memory_offset"] == 64
    else:
        response = result.get_response()
        assert list(response.raw_output_contents) == [b"", b""]
        assert response.outputs[1].parameters["shared_memory_offset"].int64_param == 64


def test_inputs_in_shm_outputs_in_the_answer(
    client: Any, protocol: Any, regions: list[Region]
) -> None:
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    ins = _region(regions, 128)
    ins.put(a, a)
    client.register_system_shared_memory("in", ins.key, 128)
    inputs, outputs = _simple_shm_request(protocol, "in", None)
    result = client.infer("simple", inputs, outputs=outputs)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), 2 * a)


def test_status_and_unregister(client: Any, protocol: Any, regions: list[Region]) -> None:
    one, two = _region(regions, 64), _region(regions, 256)
    client.register_system_shared_memory("one", one.key, 64)
    client.register_system_shared_memory("two", two.key, 128, offset=64)
    status = client.get_system_shared_memory_status()
    if protocol is httpclient:
        assert status == [
            {"name": "one", "key": one.key, "offset": 0, "byte_size": 64},
            {"name": "two", "key": two.key, "offset": 64, "byte_size": 128},
        ]
        assert client.get_system_shared_memory_status("two") == [status[1]]
    else:
        assert set(status.regions) == {"one", "two"}
        row = status.regions["two"]
        assert (row.name, row.key, row.offset, row.byte_size) == ("two", two.key, 64, 128)
        assert list(client.get_system_shared_memory_status("one").regions) == ["one"]
    client.unregister_system_shared_memory("one")
    error = _refused(client.get_system_shared_memory_status, "one")
    assert "Unable to find system shared memory region: 'one'" in error.message()
    client.unregister_system_shared_memory("one")  # an unknown name is no error (Triton)
    client.unregister_system_shared_memory()
    everything = client.get_system_shared_memory_status()
    assert (everything if protocol is httpclient else list(everything.regions)) == []


def test_image_identity_round_trip(client: Any, protocol: Any, regions: list[Region]) -> None:
    """A 1x3x224x224 FP32 image in, the same image out, both in shared memory."""
    image = np.random.default_rng(5).standard_normal((1, 3, 224, 224), dtype=np.float32)
    size = image.nbytes
    ins, outs = _region(regions, size, "image"), _region(regions, size, "answer")
    ins.put(image)
    client.register_system_shared_memory("image", ins.key, size)
    client.register_system_shared_memory("answer", outs.key, size)
    tensor = protocol.InferInput("INPUT0", list(image.shape), "FP32")
    tensor.set_shared_memory("image", size)
    output = protocol.InferRequestedOutput("INPUT0")  # identity answers with its inputs
    output.set_shared_memory("answer", size)
    client.infer("identity", [tensor], outputs=[output])
    np.testing.assert_array_equal(outs.get(np.float32, list(image.shape)), image)


def test_bytes_through_the_framing(client: Any, protocol: Any, regions: list[Region]) -> None:
    """BYTES in shared memory are length-prefixed, as in raw contents."""
    words = np.array([[str(i).encode() for i in range(16)]], dtype=np.object_)
    serialized = serialize_byte_tensor(words)  # one object: the length-prefixed bytes
    size = len(serialized.item())
    ins, outs = _region(regions, 2 * size), _region(regions, 1024)
    ins.put(serialized, serialized)
    client.register_system_shared_memory("words", ins.key, 2 * size)
    client.register_system_shared_memory("sums", outs.key, 1024)
    i0 = protocol.InferInput("INPUT0", [1, 16], "BYTES")
    i0.set_shared_memory("words", size)
    i1 = protocol.InferInput("INPUT1", [1, 16], "BYTES")
    i1.set_shared_memory("words", size, offset=size)
    o0 = protocol.InferRequestedOutput("OUTPUT0")
    o0.set_shared_memory("sums", 1024)
    result = client.infer("simple_string", [i0, i1], outputs=[o0])
    written = (
        result.get_output("OUTPUT0")["parameters"]["shared_memory_byte_size"]
        if protocol is httpclient
        else result.get_output("OUTPUT0").parameters["shared_memory_byte_size"].int64_param
    )
    got = outs.get(np.object_, [1, 16])
    assert [int(x) for x in got.reshape(-1)] == [2 * i for i in range(16)]
    assert written == len(serialize_byte_tensor(got).item())


def test_standard_library_region(client: Any, protocol: Any) -> None:
    """A region made by the standard library's multiprocessing.shared_memory directly works
    the same."""
    block = mp_shm.SharedMemory(name=_key("mp")[1:], create=True, size=128)
    try:
        view = np.ndarray((2, 1, 16), np.int32, buffer=block.buf)
        view[0] = np.arange(16)
        view[1] = 1
        client.register_system_shared_memory("mp", "/" + block.name, 128)
        inputs, outputs = _simple_shm_request(protocol, "mp", None)
        result = client.infer("simple", inputs, outputs=outputs)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), view[0] - 1)
        del view
    finally:
        client.unregister_system_shared_memory()
        block.close()
        block.unlink()


# ------------------------------------------------------------------ refusals: registration


@pytest.mark.parametrize(
    "key",
    ["", "noslash", "/", "/a/b", "/..", "/.", "/../../etc/passwd", "/" + "x" * 256, "/a\x00b"],
)
def test_key_must_be_a_posix_shm_name(client: Any, key: str) -> None:
    error = _refused(client.register_system_shared_memory, "bad", key, 8)
    assert "invalid shared memory key" in error.message()
    assert error.status() in ("400", "StatusCode.INVALID_ARGUMENT")


def test_missing_object(client: Any) -> None:
    key = _key("missing")
    error = _refused(client.register_system_shared_memory, "gone", key, 8)
    assert f"Unable to open shared memory region: '{key}'" in error.message()
    assert error.status() in ("400", "StatusCode.INVALID_ARGUMENT")


def test_region_must_lie_inside_the_object(client: Any, regions: list[Region]) -> None:
    region = _region(regions, 64)
    for offset, size in ((0, 65), (60, 8), (64, 1)):
        error = _refused(client.register_system_shared_memory, "big", region.key, size, offset)
        assert "failed to register shared memory region 'big': invalid args" in error.message()
    error = _refused(client.register_system_shared_memory, "empty", region.key, 0)
    assert "byte_size must be > 0" in error.message()


def test_duplicate_name(client: Any, regions: list[Region]) -> None:
    one, two = _region(regions, 64), _region(regions, 64)
    client.register_system_shared_memory("dup", one.key, 64)
    error = _refused(client.register_system_shared_memory, "dup", two.key, 64)
    assert "shared memory region 'dup' already in manager" in error.message()
    assert error.status() in ("409", "StatusCode.ALREADY_EXISTS")
    error = _refused(client.register_system_shared_memory, "again", one.key, 64)
    assert "under a different name is not currently supported" in error.message()


def test_cuda_is_unsupported(client: Any, protocol: Any) -> None:
    handle = base64.b64encode(b"handle") if protocol is grpcclient else b"handle"
    error = _refused(client.register_cuda_shared_memory, "gpu", handle, 0, 64)
    assert "failed to register CUDA shared memory region: 'gpu', GPUs not supported" in (
        error.message()
    )
    assert error.status() in ("501", "StatusCode.UNIMPLEMENTED")
    status = client.get_cuda_shared_memory_status()
    assert (status if protocol is httpclient else list(status.regions)) == []
    client.unregister_cuda_shared_memory()


# ------------------------------------------------------------------ refusals: tensors


def test_unknown_region(client: Any, protocol: Any) -> None:
    inputs, outputs = _simple_shm_request(protocol, "nowhere", None)
    error = _refused(client.infer, "simple", inputs, outputs=outputs)
    assert "input 'INPUT0': Unable to find shared memory region: 'nowhere'" in error.message()
    assert error.status() in ("400", "StatusCode.INVALID_ARGUMENT")


def test_size_must_match_the_shape(client: Any, protocol: Any, regions: list[Region]) -> None:
    region = _region(regions, 128)
    client.register_system_shared_memory("in", region.key, 128)
    tensor = protocol.InferInput("INPUT0", [1, 16], "INT32")
    tensor.set_shared_memory("in", 60)
    other = protocol.InferInput("INPUT1", [1, 16], "INT32")
    other.set_shared_memory("in", 64, offset=64)
    error = _refused(client.infer, "simple", [tensor, other])
    assert "INPUT0" in error.message() and "expected 64 bytes" in error.message()


def test_tensor_must_lie_inside_the_region(
    client: Any, protocol: Any, regions: list[Region]
) -> None:
    region = _region(regions, 128)
    client.register_system_shared_memory("in", region.key, 100)
    inputs, _ = _simple_shm_request(protocol, "in", None)
    error = _refused(client.infer, "simple", inputs)
    assert "input 'INPUT1': Invalid offset for shared memory region: 'in'" in error.message()


def test_output_region_too_small(client: Any, protocol: Any, regions: list[Region]) -> None:
    ins, outs = _region(regions, 128), _region(regions, 32)
    ins.put(np.zeros((2, 16), np.int32))
    client.register_system_shared_memory("in", ins.key, 128)
    client.register_system_shared_memory("out", outs.key, 32)
    inputs, _ = _simple_shm_request(protocol, "in", None)
    output = protocol.InferRequestedOutput("OUTPUT0")
    output.set_shared_memory("out", 32)
    error = _refused(client.infer, "simple", inputs, outputs=[output])
    assert "output 'OUTPUT0' holds 64 bytes, more than the 32 bytes" in error.message()
    output.set_shared_memory("out", 64)
    error = _refused(client.infer, "simple", inputs, outputs=[output])
    assert "output 'OUTPUT0': Invalid offset for shared memory region: 'out'" in error.message()


def test_shrunk_object_is_refused(client: Any, protocol: Any, regions: list[Region]) -> None:
    """An object made smaller after registering is refused, never read past its end."""
    region = _region(regions, 128)
    client.register_system_shared_memory("in", region.key, 128)
    os.truncate("/dev/shm" + region.key, 0)
    inputs, _ = _simple_shm_request(protocol, "in", None)
    error = _refused(client.infer, "simple", inputs)
    assert "was shrunk below its registered size" in error.message()


def test_data_and_region_together_http(server: RunningServer, regions: list[Region]) -> None:
    region = _region(regions, 128)
    client = _client(httpclient, server)
    try:
        client.register_system_shared_memory("in", region.key, 128)
        body = {
            "inputs": [
                {
                    "name": name,
                    "shape": [1, 16],
                    "datatype": "INT32",
                    "data": list(range(16)),
                    "parameters": {"shared_memory_region": "in", "shared_memory_byte_size": 64},
                }
                for name in ("INPUT0", "INPUT1")
            ]
        }
        status, document = _post(server, "/v2/models/simple/infer", body)
        assert status == 400
        assert "input 'INPUT0'" in document["error"]
        assert "names shared memory region 'in' and carries data as well" in document["error"]
    finally:
        client.unregister_system_shared_memory()


def test_output_in_a_region_and_in_binary_is_refused_as_triton_does(
    server: RunningServer, regions: list[Region]
) -> None:
    """An output that names a region and asks for binary data too: 400 with Triton's words
    (the real Triton server refuses it so), naming the output."""
    region = _region(regions, 128)
    client = _client(httpclient, server)
    try:
        client.register_system_shared_memory("out", region.key, 128)
        body = {
            "inputs": [
                {"name": name, "shape": [1, 16], "datatype": "INT32", "data": list(range(16))}
                for name in ("INPUT0", "INPUT1")
            ],
            "outputs": [
                {
                    "name": "OUTPUT0",
                    "parameters": {
                        "shared_memory_region": "out",
                        "shared_memory_byte_size": 64,
                        "binary_data": True,
                    },
                }
            ],
        }
        status, document = _post(server, "/v2/models/simple/infer", body)
        assert status == 400
        assert "output 'OUTPUT0'" in document["error"]
        refusal = "Output can't set both 'shared_memory_region' and 'binary_data'"
        assert refusal in document["error"]
    finally:
        client.unregister_system_shared_memory()


def test_data_and_region_together_grpc(server: RunningServer, regions: list[Region]) -> None:
    from tritonclient.grpc import service_pb2

    region = _region(regions, 128)
    client = _client(grpcclient, server)
    try:
        client.register_system_shared_memory("in", region.key, 128)
        request = service_pb2.ModelInferRequest(model_name="simple")
        for name in ("INPUT0", "INPUT1"):
            tensor = request.inputs.add(name=name, datatype="INT32", shape=[1, 16])
            tensor.parameters["shared_memory_region"].string_param = "in"
            tensor.parameters["shared_memory_byte_size"].int64_param = 64
            request.raw_input_contents.append(bytes(64))
        with pytest.raises(Exception) as info:
            client._client_stub.ModelInfer(request)
        assert "names shared memory region 'in' and carries data as well" in str(info.value)
    finally:
        client.unregister_system_shared_memory()
        client.close()


# ------------------------------------------------------------------ the extension off


def test_off_by_default(plain: RunningServer, protocol: Any, regions: list[Region]) -> None:
    client = _client(protocol, plain)
    try:
        metadata = client.get_server_metadata()
        extensions = metadata["extensions"] if protocol is httpclient else metadata.extensions
        assert "system_shared_memory" not in extensions
        error = _refused(client.register_system_shared_memory, "r", _region(regions, 64).key, 64)
        assert error.status() in ("404", "StatusCode.UNIMPLEMENTED")
        error = _refused(client.get_system_shared_memory_status)
        assert error.status() in ("404", "StatusCode.UNIMPLEMENTED")
        inputs, _ = _simple_shm_request(protocol, "r", None)
        error = _refused(client.infer, "simple", inputs)
        assert error.status() in ("400", "StatusCode.INVALID_ARGUMENT")
        assert (
            "input 'INPUT0' names shared memory region 'r', but shared memory is not enabled"
            in error.message()
        )
        output = protocol.InferRequestedOutput("OUTPUT0")
        output.set_shared_memory("r", 64)
        a = protocol.InferInput("INPUT0", [1, 16], "INT32")
        a.set_data_from_numpy(np.zeros((1, 16), np.int32))
        b = protocol.InferInput("INPUT1", [1, 16], "INT32")
        b.set_data_from_numpy(np.zeros((1, 16), np.int32))
        error = _refused(client.infer, "simple", [a, b], outputs=[output])
        assert "output 'OUTPUT0' names shared memory region 'r'" in error.message()
    finally:
        client.close()


def test_metadata_lists_the_extension(client: Any, protocol: Any) -> None:
    metadata = client.get_server_metadata()
    extensions = metadata["extensions"] if protocol is httpclient else metadata.extensions
    assert "system_shared_memory" in extensions


# ------------------------------------------------------------------ lifetime


def test_unregister_while_a_request_reads_the_region(
    server: RunningServer, regions: list[Region]
) -> None:
    """The region is unregistered while the model (sleeping) holds its input: the request
    still answers with the input's bytes, and the region is gone for later requests."""
    a = np.arange(16, dtype=np.int32).reshape(1, 16) * 3
    region = _region(regions, 64)
    region.put(a)
    client = _client(httpclient, server)
    other = _client(httpclient, server)
    try:
        client.register_system_shared_memory("busy", region.key, 64)
        tensor = httpclient.InferInput("X", [1, 16], "INT32")
        tensor.set_shared_memory("busy", 64)
        pending = client.async_infer("sleep", [tensor], parameters={"seconds": 1.0})
        time.sleep(0.3)  # the model is sleeping with its input, a view of the region
        other.unregister_system_shared_memory("busy")
        assert other.get_system_shared_memory_status() == []
        np.testing.assert_array_equal(pending.get_result().as_numpy("X"), a)
        error = _refused(client.infer, "sleep", [tensor])
        assert "Unable to find shared memory region: 'busy'" in error.message()
    finally:
        client.close()
        other.close()


def _maps(key: str) -> int:
    with open("/proc/self/maps") as maps:
        return sum(1 for line in maps if line.rstrip().endswith("/dev/shm" + key))


def _fds(key: str) -> int:
    """The descriptors of this process open on the object ``key``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "/dev/shm" + key:
                count += 1
        except OSError:
            pass
    return count


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="Linux /proc needed")
def test_one_descriptor_and_no_mapping_per_region() -> None:
    """In a server in this process a registered region holds one descriptor and no mapping
    (a mapping's fault is a SIGBUS; the mmap module dups its fd); unregistering and shutting
    the server down close it."""
    region = Region(4096, "maps")
    try:
        maps, fds = _maps(region.key), _fds(region.key)  # tritonclient's own
        with background(process=False, shared_memory="system", grpc_port=None) as running:
            client = _client(httpclient, running)
            client.register_system_shared_memory("a", region.key, 4096)
            assert _maps(region.key) == maps and _fds(region.key) == fds + 1
            client.unregister_system_shared_memory("a")
            assert _fds(region.key) == fds
            client.register_system_shared_memory("a", region.key, 4096)
            assert _fds(region.key) == fds + 1
            client.close()
        assert _maps(region.key) == maps and _fds(region.key) == fds
    finally:
        region.destroy()


def _post(server: RunningServer, path: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        server.http_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


# ------------------------------------------------------------------ configuration


def test_cli_and_config_offer_the_same_kinds() -> None:
    from oipcodec.cli import build_parser
    from oipcodec.server.config import SHARED_MEMORY_KINDS, ServerConfig

    commands = next(a for a in build_parser()._actions if a.dest == "command")
    option = next(a for a in commands.choices["serve"]._actions if a.dest == "shared_memory")
    assert tuple(option.choices) == ("none", *SHARED_MEMORY_KINDS)
    assert option.default == "none" and ServerConfig().shared_memory is None
    with pytest.raises(ValueError, match="shared_memory must be one of system or None"):
        ServerConfig(shared_memory="cuda")
    with pytest.raises(ValueError, match="shared_memory needs workers=1"):
        ServerConfig(shared_memory="system", workers=2)


def test_an_input_outlives_its_region() -> None:
    """Unregistering while an input array is alive: the array (read from the region) stays
    readable, and the region is gone for new lookups."""
    from oipcodec.raw import raw_to_array
    from oipcodec.server.regions import SharedMemoryRegions
    from oipcodec.sharedmem import Location

    region = Region(64, "inuse")
    try:
        region.put(np.arange(16, dtype=np.int32))
        regions = SharedMemoryRegions()
        regions.register("r", region.key, 0, 64)
        array = raw_to_array(regions.resolve(Location("r", 64), "X", "input", False), "INT32", [16])
        regions.unregister("r")
        assert int(array.sum()) == sum(range(16)) and not array.flags.writeable
        with pytest.raises(Exception, match="Unable to find shared memory region: 'r'"):
            regions.resolve(Location("r", 64), "X", "input", False)
    finally:
        region.destroy()
