"""oipcodec.client.HttpClient and AsyncHttpClient against the embedded server (one server for
the module): every datatype over REST JSON (flat and nested), binary and gzip; metadata and
repository calls; errors, timeouts and connection failures."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import numpy as np
import pytest
from client_models import DATATYPES, client_models, same, sample

from oipcodec import DecodeError, EncodeError, OIPError, RequestedOutput, Tensor
from oipcodec.client import (
    AsyncHttpClient,
    ClientError,
    HttpClient,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
)
from oipcodec.server import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("urllib3", reason="the client extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")

# name -> infer keyword arguments
PATHS = {
    "json": {"binary": False},
    "json-nested": {"binary": False, "nested": True},
    "binary": {"binary": True},
    "binary-gzip": {"binary": True, "compression": "gzip"},
    "json-deflate": {"binary": False, "compression": "deflate"},
}


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(client_models(), grpc_port=None, log_level="critical") as running:
        yield running


@pytest.fixture(scope="module")
def client(server: RunningServer) -> Iterator[HttpClient]:
    with HttpClient(server.http_url, timeout=30) as c:
        yield c


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("datatype", DATATYPES)
def test_round_trip_every_datatype(client: HttpClient, path: str, datatype: str) -> None:
    tensor = sample(datatype)
    response = client.infer("identity", [tensor], id="req-1", **PATHS[path])  # type: ignore[arg-type]
    assert response.model_name == "identity"
    assert response.id == "req-1"
    assert len(response.outputs) == 1
    assert same(tensor, response.outputs[0])


@pytest.mark.parametrize("path", list(PATHS))
def test_async_round_trip_all_datatypes_in_one_request(server: RunningServer, path: str) -> None:
    tensors = [sample(d) for d in DATATYPES]

    async def main() -> None:
        async with AsyncHttpClient(server.http_url, timeout=30) as c:
            response = await c.infer("identity", tensors, **PATHS[path])  # type: ignore[arg-type]
            for sent in tensors:
                assert same(sent, response.output(sent.name))

    asyncio.run(main())


def test_binary_outputs_are_read_only_views_of_the_body(client: HttpClient) -> None:
    data = np.arange(64, dtype=np.float32).reshape(4, 16)
    out = client.infer("identity", {"X": data}).output("X").data
    assert not out.flags.owndata and not out.flags.writeable
    assert np.array_equal(out, data)


def test_dict_inputs_outputs_and_parameters(client: HttpClient) -> None:
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.ones((1, 16), dtype=np.int32)
    response = client.infer("simple", {"INPUT0": a, "INPUT1": b}, outputs=["OUTPUT1"])
    assert [t.name for t in response.outputs] == ["OUTPUT1"]
    assert np.array_equal(response.output("OUTPUT1").data, a - b)
    # RequestedOutput objects, JSON answer, model version in the URL
    response = client.infer(
        "simple",
        {"INPUT0": a, "INPUT1": Tensor.from_array("ignored", b)},
        outputs=[RequestedOutput("OUTPUT0")],
        binary=False,
        model_version="1",
    )
    assert np.array_equal(response.output("OUTPUT0").data, a + b)


def test_many_threads_share_one_client(client: HttpClient) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> bool:
        data = np.full((1, 8), i, dtype=np.int64)
        return bool(np.array_equal(client.infer("identity", {"X": data}).output("X").data, data))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(one, range(64)))


# ------------------------------------------------------------------------------ health, metadata


def test_health_and_metadata(client: HttpClient) -> None:
    assert client.live() and client.ready()
    assert client.model_ready("identity") and client.model_ready("simple", "1")
    assert not client.model_ready("no_such_model")
    meta = client.server_metadata()
    assert meta["name"] == "oipcodec" and "binary_tensor_data" in meta["extensions"]
    model = client.model_metadata("simple")
    assert model["inputs"][0] == {"name": "INPUT0", "datatype": "INT32", "shape": [-1, 16]}
    names = {row["name"] for row in client.repository_index()}
    assert {"identity", "simple", "sleep"} <= names


def test_repository_unload_and_load(client: HttpClient) -> None:
    client.unload_model("add_sub")
    try:
        assert not client.model_ready("add_sub")
        assert "add_sub" not in {row["name"] for row in client.repository_index(ready=True)}
        with pytest.raises(ServerError) as info:
            client.infer(
                "add_sub", {"INPUT0": np.ones(2, np.float32), "INPUT1": np.ones(2, np.float32)}
            )
        assert info.value.status == 503 and info.value.code == "UNAVAILABLE"
    finally:
        client.load_model("add_sub")
    assert client.model_ready("add_sub")


# ------------------------------------------------------------------------------ errors


def test_unknown_model_is_a_server_error(client: HttpClient) -> None:
    with pytest.raises(ServerError) as info:
        client.infer("no_such_model", {"X": np.ones(3, np.float32)})
    error = info.value
    assert isinstance(error, ClientError) and isinstance(error, OIPError)
    assert error.status == 404 and error.code == "NOT_FOUND"
    assert "no_such_model" in error.message
    assert error.url is not None and error.url.endswith("/v2/models/no_such_model/infer")
    assert str(error).startswith("HTTP 404 NOT_FOUND from http://127.0.0.1:")
    with pytest.raises(ServerError, match="no_such_model") as info:
        client.model_metadata("no_such_model")
    assert info.value.status == 404


def test_bad_input_is_a_server_error(client: HttpClient) -> None:
    wrong = {"INPUT0": np.ones((1, 16), np.float32), "INPUT1": np.ones((1, 16), np.float32)}
    with pytest.raises(ServerError) as info:
        client.infer("simple", wrong)
    assert info.value.status == 400 and info.value.code == "INVALID_ARGUMENT"
    assert "INPUT0" in info.value.message and "INT32" in info.value.message


def test_errors_pickle(client: HttpClient) -> None:
    import pickle

    with pytest.raises(ServerError) as info:
        client.infer("no_such_model", {"X": np.ones(3, np.float32)})
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.status, copy.code, copy.message, str(copy)) == (
        info.value.status, info.value.code, info.value.message, str(info.value),
    )  # fmt: skip
    timeout = pickle.loads(pickle.dumps(RequestTimeoutError("slow", url="http://x")))
    assert isinstance(timeout, RequestTimeoutError) and timeout.url == "http://x"


def test_codec_errors_pass_through(client: HttpClient) -> None:
    with pytest.raises(EncodeError):
        client.infer("identity", {"X": np.array([b"\xff"], dtype=object)}, binary=False)
    with pytest.raises(EncodeError, match="model"):
        client.infer("", {"X": np.ones(1)})
    with pytest.raises(EncodeError, match="list of Tensor"):
        client.infer("identity", [np.ones(1)])  # type: ignore[list-item]


def test_timeout(client: HttpClient) -> None:
    with pytest.raises(RequestTimeoutError) as info:
        client.infer("sleep", {"X": np.ones(1, np.float32)}, timeout=0.3)
    assert "/v2/models/sleep/infer" in str(info.value) and "0.3" in str(info.value)
    # the client is still usable afterwards
    data = np.ones(4, np.float32)
    fast = client.infer("sleep", {"X": data}, parameters={"seconds": 0.0})
    assert np.array_equal(fast.output("X").data, data)


def test_client_level_timeout(server: RunningServer) -> None:
    with HttpClient(server.http_url, timeout=0.3) as c, pytest.raises(RequestTimeoutError):
        c.infer("sleep", {"X": np.ones(1, np.float32)})


def test_connection_refused_names_the_url() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    with HttpClient(url) as c, pytest.raises(ServerConnectionError, match=r"127\.0\.0\.1") as info:
        c.live()
    assert info.value.url is not None and info.value.url.startswith(url)


def test_url_forms() -> None:
    assert HttpClient("127.0.0.1:8000").url == "127.0.0.1:8000"
    with pytest.raises(ValueError, match="http"):
        HttpClient("ftp://127.0.0.1:8000")


def test_non_oip_answer_is_a_decode_error_or_server_error(server: RunningServer) -> None:
    # a path prefix that does not exist on the server: 404 with the server's message
    with HttpClient(server.http_url + "/prefix") as c, pytest.raises(ServerError) as info:
        c.server_metadata()
    assert info.value.status == 404
    assert issubclass(DecodeError, OIPError)


def test_async_errors_and_timeouts(server: RunningServer) -> None:
    async def main() -> None:
        async with AsyncHttpClient(server.http_url, timeout=30) as c:
            assert await c.live() and await c.ready() and await c.model_ready("identity")
            assert (await c.model_metadata("simple"))["name"] == "simple"
            assert (await c.server_metadata())["name"] == "oipcodec"
            assert {"identity"} <= {r["name"] for r in await c.repository_index()}
            await c.unload_model("add_sub")
            assert not await c.model_ready("add_sub")
            await c.load_model("add_sub")
            with pytest.raises(ServerError) as info:
                await c.infer("no_such_model", {"X": np.ones(3, np.float32)})
            assert info.value.status == 404 and info.value.code == "NOT_FOUND"
            with pytest.raises(RequestTimeoutError):
                await c.infer("sleep", {"X": np.ones(1, np.float32)}, timeout=0.3)
        async with AsyncHttpClient(f"http://127.0.0.1:{_free_port()}") as c:
            with pytest.raises(ServerConnectionError, match=r"127\.0\.0\.1"):
                await c.live()

    asyncio.run(main())
