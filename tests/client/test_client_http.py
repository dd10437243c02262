"""oipcodec.client.HttpClient and AsyncHttpClient against the embedded server (one server for
the module): every datatype over REST JSON (flat and nested), binary and gzip; metadata and
repository calls; errors, timeouts and connection failures."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec import DecodeError, EncodeError, OIPError, RequestedOutput, Tensor
from oipcodec.client import (
    AsyncHttpClient,
    ClientError,
    HttpClient,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
)
from oipcodec.testing import RunningServer, background
from tests.support.client_models import DATATYPES, client_models, same, sample
from tests.support.ports import free_port

pytest.importorskip("uvicorn", reason="the server extra is not installed")
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
    url = f"http://127.0.0.1:{free_port()}"
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
        async with AsyncHttpClient(f"http://127.0.0.1:{free_port()}") as c:
            with pytest.raises(ServerConnectionError, match=r"127\.0\.0\.1"):
                await c.live()

    asyncio.run(main())


# ------------------------------------------------------------------------------ the connection pool


class _OneShotServer:
    """A bare HTTP/1.1 server on 127.0.0.1 (a thread): answers each request with ``answer``,
    then, when ``close_after`` is set, closes the connection without saying so (no
    ``Connection: close``), as a server whose keep-alive timeout ran out does. Counts the
    connections it accepted."""

    def __init__(self, answer: bytes, close_after: bool = True, tls: Any = None) -> None:
        import threading

        self.answer = answer
        self.close_after = close_after
        self.tls = tls
        self.accepted = 0
        self.stopping = False
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.settimeout(10)
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self.stopping:
                conn.close()
                return
            self.accepted += 1
            try:
                if self.tls is not None:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                conn.settimeout(10)
                while True:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        chunk = conn.recv(65536)
                        if not chunk:
                            raise ConnectionError
                        request += chunk
                    conn.sendall(self.answer)
                    if self.close_after:
                        break
            except OSError:
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self.stopping = True
        with contextlib.suppress(OSError):  # wakes the accept
            socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
        self.thread.join(10)
        self.listener.close()


_OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}"


@pytest.mark.parametrize(("server_closes", "connections"), [(True, 3), (False, 1)])
def test_keep_alive_connections_are_reused_unless_the_server_closed_them(
    server_closes: bool, connections: int
) -> None:
    # A server that closes each connection after answering (as one whose keep-alive timeout
    # ran out) costs a connection per request; one that keeps it open, a single connection.
    server = _OneShotServer(_OK, close_after=server_closes)
    try:
        with HttpClient(f"http://127.0.0.1:{server.port}", timeout=10) as c:
            for _ in range(3):
                assert c.live()
                time.sleep(0.05)  # a close reaches the idle connection
        assert server.accepted == connections
    finally:
        server.close()


def test_an_answer_cut_short_is_a_connection_error() -> None:
    cut = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}"
    server = _OneShotServer(cut, close_after=True)
    try:
        with (
            HttpClient(f"http://127.0.0.1:{server.port}", timeout=10) as c,
            pytest.raises(
                ServerConnectionError, match="ended after 2 of its 100 body bytes"
            ) as info,
        ):
            c.server_metadata()
        assert info.value.url == f"http://127.0.0.1:{server.port}/v2"
    finally:
        server.close()


def test_pool_size_bounds_the_connections_in_use(server: RunningServer) -> None:
    from concurrent.futures import ThreadPoolExecutor

    data = np.ones(2, np.float32)
    with HttpClient(server.http_url, pool_size=1, timeout=30) as c, ThreadPoolExecutor(1) as pool:
        slow = pool.submit(c.infer, "sleep", {"X": data}, parameters={"seconds": 1.0})
        time.sleep(0.2)  # the one connection is taken by the slow call
        with pytest.raises(RequestTimeoutError, match=r"no free connection within 0\.2 s"):
            c.live(timeout=0.2)
        assert np.array_equal(slow.result(30).output("X").data, data)
        assert c.live()  # free again
    with pytest.raises(ValueError, match="pool_size must be >= 1"):
        HttpClient(server.http_url, pool_size=0)


def test_a_closed_client_refuses_requests(server: RunningServer) -> None:
    c = HttpClient(server.http_url)
    assert c.live()
    c.close()
    with pytest.raises(ServerConnectionError, match="the client is closed"):
        c.live()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 (made with the openssl command)."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate with")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", key, "-out", cert],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def test_https_verifies_the_server(certificate: tuple[str, str]) -> None:
    import ssl

    cert, key = certificate
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server = _OneShotServer(_OK, close_after=False, tls=tls)
    url = f"https://127.0.0.1:{server.port}"
    try:
        # not trusted by the system: refused
        with HttpClient(url, timeout=10) as c, pytest.raises(ServerConnectionError, match="CERT"):
            c.live()
        # trusted through the caller's context: answered, over one kept-alive connection
        trusting = ssl.create_default_context(cafile=cert)
        with HttpClient(url, timeout=10, ssl_context=trusting) as c:
            assert c.live() and c.server_metadata() == {}
    finally:
        server.close()
    assert server.accepted == 2


@pytest.mark.parametrize(
    ("answer", "reused"),
    [
        # chunked, with a chunk extension and a trailer
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"1;x=y\r\n{\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n", True),
        # an interim 100 Continue before the answer
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", True),
        # HTTP/1.0 without a length: the body ends with the connection
        (b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{}", False),
        # Connection: close is honoured
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", False),
        # header names in any case, a header repeated
        (b"HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh: 2\r\nX-A: 1\r\nX-A: 2\r\n\r\n{}", True),
    ],
)  # fmt: skip
def test_answers_in_every_http_1_1_framing(answer: bytes, reused: bool) -> None:
    server = _OneShotServer(answer, close_after=not reused)
    try:
        with HttpClient(f"http://127.0.0.1:{server.port}", timeout=10) as c:
            assert c.server_metadata() == {}
            assert c.server_metadata() == {}
        assert server.accepted == (1 if reused else 2)
    finally:
        server.close()


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"", "closed the connection without answering"),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "not a header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", "is not a number"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not a chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}", "inside a chunk"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", "header line is too long"),
    ],
)
def test_a_broken_answer_is_a_connection_error_naming_what_broke(
    answer: bytes, message: str
) -> None:
    server = _OneShotServer(answer, close_after=True)
    try:
        with (
            HttpClient(f"http://127.0.0.1:{server.port}", timeout=10) as c,
            pytest.raises(ServerConnectionError, match=message),
        ):
            c.server_metadata()
    finally:
        server.close()


def test_headers_and_targets_cannot_smuggle_lines(server: RunningServer) -> None:
    with HttpClient(server.http_url, headers={"X-Ok": "1"}) as c:
        assert c.live()
    bad = {"X-Bad": "1\r\nX-Injected: 2"}
    with HttpClient(server.http_url, headers=bad) as c, pytest.raises(ValueError, match="header"):
        c.live()
    with HttpClient(server.http_url + "/a b") as c, pytest.raises(ValueError, match="target"):
        c.live()


def test_large_request_and_answer_bodies(client: HttpClient) -> None:
    # Over 64 kB the body goes out in a send of its own; the answer is read by its length.
    data = np.arange(300_000, dtype=np.float32).reshape(3, 100_000)
    for binary in (True, False):
        answer = client.infer("identity", {"X": data}, binary=binary)
        assert np.array_equal(answer.output("X").data, data)


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n",
        b"HTTP/1.0 200 OK\r\n\r\n" + b" " * 100,
    ],
)
def test_an_answer_over_the_body_limit_is_refused_before_it_is_read(answer: bytes) -> None:
    # The sync client, then the asyncio one (the server answers each connection once).
    from oipcodec.errors import LimitError
    from oipcodec.limits import Limits

    server = _OneShotServer(answer, close_after=True)
    try:
        url = f"http://127.0.0.1:{server.port}"
        with (
            HttpClient(url, timeout=10, limits=Limits(max_body_bytes=10)) as c,
            pytest.raises(LimitError, match="over the client's limit of 10 bytes"),
        ):
            c.server_metadata()

        async def main() -> None:
            async with AsyncHttpClient(url, timeout=10, limits=Limits(max_body_bytes=10)) as c:
                with pytest.raises(LimitError, match="over the client's limit of 10 bytes"):
                    await c.server_metadata()

        asyncio.run(main())
    finally:
        server.close()
