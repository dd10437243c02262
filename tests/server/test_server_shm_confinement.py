"""What the operator may confine in the shared-memory extension (issue 35, items 2 and 3): the
keys clients may register (``--shared-memory-prefix``), how many regions (``--max-shm-regions``)
and how many bytes (``--shared-memory-budget``), each refused with a 400 that names the limit.
Real servers on 127.0.0.1, real tritonclient and oipcodec clients.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402

from oipcodec.client.shm import SharedMemoryRegion  # noqa: E402

_names = itertools.count()
PREFIX = f"/oipcodec-allowed-{os.getpid()}-"


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(
        shared_memory="system",
        shared_memory_prefix=PREFIX,
        max_shm_regions=3,
        shared_memory_budget=8192,
        log_level="warning",
    ) as running:
        yield running


@pytest.fixture(params=["http", "grpc"])
def client(request: pytest.FixtureRequest, server: RunningServer) -> Iterator[Any]:
    if request.param == "http":
        client = httpclient.InferenceServerClient(server.http_address, network_timeout=30.0)
    else:
        client = grpcclient.InferenceServerClient(server.grpc_address)
    yield client
    client.unregister_system_shared_memory()
    client.close()


@pytest.fixture
def regions() -> Iterator[list[SharedMemoryRegion]]:
    made: list[SharedMemoryRegion] = []
    yield made
    for region in made:
        region.close()


def _region(made: list[SharedMemoryRegion], size: int, prefix: str = PREFIX) -> SharedMemoryRegion:
    region = SharedMemoryRegion.create(f"r{next(_names)}", size, f"{prefix}{next(_names)}")
    made.append(region)
    return region


def _refused(call: Any, *args: Any) -> str:
    with pytest.raises(InferenceServerException) as info:
        call(*args)
    status = str(info.value.status())
    assert status in ("400", "StatusCode.INVALID_ARGUMENT"), status
    return str(info.value.message())


def _registered(client: Any) -> list[str]:
    status = client.get_system_shared_memory_status()
    return (
        sorted(row["name"] for row in status)
        if isinstance(status, list)
        else sorted(status.regions)
    )


def test_a_key_outside_the_prefix_is_refused(
    client: Any, regions: list[SharedMemoryRegion]
) -> None:
    """Another program's object (the victim) cannot be registered, so neither read nor
    written; a key inside the prefix can."""
    victim = _region(regions, 64, f"/oipcodec-victim-{os.getpid()}-")
    victim.put(np.frombuffer(b"secret!!" * 8, np.uint8))
    message = _refused(client.register_system_shared_memory, "v", victim.key, 64)
    assert f"key '{victim.key}' is outside the prefix '{PREFIX}'" in message
    assert "failed to register shared memory region 'v'" in message
    assert _registered(client) == []
    mine = _region(regions, 64)
    client.register_system_shared_memory("mine", mine.key, 64)
    assert _registered(client) == ["mine"]


def test_region_count_is_capped(client: Any, regions: list[SharedMemoryRegion]) -> None:
    for index in range(3):
        region = _region(regions, 16)
        client.register_system_shared_memory(f"n{index}", region.key, 16)
    extra = _region(regions, 16)
    message = _refused(client.register_system_shared_memory, "n3", extra.key, 16)
    assert "failed to register shared memory region 'n3'" in message
    assert "3 regions are registered, the most this server holds (--max-shm-regions)" in message
    client.unregister_system_shared_memory("n0")
    client.register_system_shared_memory("n3", extra.key, 16)


def test_registered_bytes_are_budgeted(client: Any, regions: list[SharedMemoryRegion]) -> None:
    first = _region(regions, 6000)
    client.register_system_shared_memory("b0", first.key, 6000)
    second = _region(regions, 4000)
    message = _refused(client.register_system_shared_memory, "b1", second.key, 4000)
    assert "failed to register shared memory region 'b1': its 4000 bytes" in message
    assert "over this server's budget of 8192 (--shared-memory-budget)" in message
    client.unregister_system_shared_memory("b0")
    client.register_system_shared_memory("b1", second.key, 4000)


def test_one_request_reads_at_most_the_budget(
    client: Any, regions: list[SharedMemoryRegion]
) -> None:
    """Three inputs naming the same 4000-byte region: 12000 bytes to copy from a request of a
    few hundred bytes, over the 8192 a request may read."""
    region = _region(regions, 4000)
    client.register_system_shared_memory("in", region.key, 4000)
    module = httpclient if isinstance(client, httpclient.InferenceServerClient) else grpcclient
    tensors = []
    for name in ("A", "B", "C"):
        tensor = module.InferInput(name, [1000], "FP32")
        tensor.set_shared_memory("in", 4000)
        tensors.append(tensor)
    message = _refused(client.infer, "identity", tensors)
    assert "input 'C'" in message and "the 8192 bytes one request may read" in message
    answer = client.infer("identity", tensors[:2])
    assert answer.as_numpy("A").shape == (1000,)


def test_config_and_cli_defaults() -> None:
    from oipcodec.cli import build_parser
    from oipcodec.server.config import ServerConfig
    from oipcodec.server.regions import DEFAULT_MAX_SHM_BYTES, DEFAULT_MAX_SHM_REGIONS

    config = ServerConfig()
    assert config.shared_memory_prefix is None  # Triton's clients choose their own keys
    assert config.max_shm_regions == DEFAULT_MAX_SHM_REGIONS == 256
    assert config.shared_memory_budget == DEFAULT_MAX_SHM_BYTES == 1 << 30
    commands = next(a for a in build_parser()._actions if a.dest == "command")
    serve = {a.dest: a for a in commands.choices["serve"]._actions}
    assert serve["shared_memory_prefix"].default is None
    assert serve["max_shm_regions"].default == DEFAULT_MAX_SHM_REGIONS
    assert serve["shared_memory_budget"].default << 20 == DEFAULT_MAX_SHM_BYTES
    for bad in ("victim", "/a/b", "/" + "x" * 256):
        with pytest.raises(ValueError, match="shared_memory_prefix must be the start of a POSIX"):
            ServerConfig(shared_memory_prefix=bad)
    with pytest.raises(ValueError, match="max_shm_regions must be at least 1"):
        ServerConfig(max_shm_regions=0)


def test_cli_options_reach_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    from oipcodec import cli

    seen: list[Any] = []
    monkeypatch.setattr(cli, "_serve_checked", lambda config: seen.append(config) or 0)
    argv = ["serve", "--shared-memory", "system", "--shared-memory-prefix", "/inference-"]
    argv += ["--max-shm-regions", "7", "--shared-memory-budget", "3"]
    assert cli.main(argv) == 0
    (config,) = seen
    assert config.shared_memory_prefix == "/inference-"
    assert (config.max_shm_regions, config.shared_memory_budget) == (7, 3 << 20)
    assert cli.main(["serve", "--shared-memory-prefix", "victim"]) == 2
