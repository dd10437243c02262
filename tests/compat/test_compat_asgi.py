"""oipcodec's REST app mounted in a FastAPI app under a prefix (oipcodec.compat.asgi), served by
real uvicorn on 127.0.0.1 and called by the real tritonclient.http and urllib3."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import numpy as np
import pytest

from oipcodec.compat.asgi import lifespan, mount
from oipcodec.server import Model, TensorSpec
from oipcodec.server.demo import Identity
from oipcodec.server.frontends._asgi import route_path as _route_path
from oipcodec.server.frontends.rest_frontend import RestApp
from oipcodec.server.runtime import create_app
from tests.support.peers import require_peer

fastapi = require_peer("fastapi")
uvicorn = require_peer("uvicorn")
urllib3 = require_peer("urllib3")
tc_http = require_peer("tritonclient.http")
ml_dtypes = require_peer("ml_dtypes")


class Tracked(Model):
    """Records its load and unload, to see the parent app's lifespan reach it."""

    name = "tracked"
    inputs = (TensorSpec("X", "INT32", [-1]),)
    outputs = (TensorSpec("Y", "INT32", [-1]),)

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def load(self) -> None:
        self.events.append("load")

    def unload(self) -> None:
        self.events.append("unload")

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"Y": inputs["X"] + 1}


@contextmanager
def serving(app: Any, **config: Any) -> Iterator[str]:
    """Run ``app`` under uvicorn on 127.0.0.1 (a free port) in a thread; yields host:port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False, **config)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def _fastapi_app(**kwargs: Any) -> Any:
    app = fastapi.FastAPI(**kwargs)

    @app.get("/hello")
    def hello() -> dict[str, str]:
        return {"hello": "world"}

    return app


@pytest.fixture(scope="module")
def mounted() -> Iterator[tuple[str, Tracked, Any]]:
    tracked = Tracked()
    app = _fastapi_app()
    mount(app, [Identity(), tracked], prefix="/oip")
    with serving(app) as address:
        yield address, tracked, app
    assert tracked.events == ["load", "unload"]


SAMPLES = {
    "BOOL": np.array([[True, False, True]]),
    "INT8": np.array([[-128, 0, 127]], np.int8),
    "INT16": np.array([[-32768, 1, 32767]], np.int16),
    "INT32": np.array([[-(2**31), 2, 2**31 - 1]], np.int32),
    "INT64": np.array([[-(2**63), 3, 2**63 - 1]], np.int64),
    "UINT8": np.array([[0, 1, 255]], np.uint8),
    "UINT16": np.array([[0, 1, 65535]], np.uint16),
    "UINT32": np.array([[0, 1, 2**32 - 1]], np.uint32),
    "UINT64": np.array([[0, 1, 2**64 - 1]], np.uint64),
    "FP16": np.array([[0.5, -0.0, 65504]], np.float16),
    "FP32": np.array([[1.1, -0.0, 3.4e38]], np.float32),
    "FP64": np.array([[1.1, -0.0, 1e308]], np.float64),
    "BF16": np.array([[1.5, -2.0, 0.0078125]], ml_dtypes.bfloat16),
    "BYTES": np.array([[b"a", b"", b"\xff\x00z"]], dtype=object),
}


# JSON: not FP16/BF16 (tritonclient writes no JSON for them) nor BYTES (its JSON gives str)
CASES = [(d, True) for d in SAMPLES] + [
    (d, False) for d in SAMPLES if d not in ("FP16", "BF16", "BYTES")
]


@pytest.mark.parametrize(
    ("datatype", "binary"), CASES, ids=[f"{d}-{'binary' if b else 'json'}" for d, b in CASES]
)
def test_tritonclient_infers_through_the_prefix(
    mounted: tuple[str, Tracked, Any], datatype: str, binary: bool
) -> None:
    address, _, _ = mounted
    array = SAMPLES[datatype]
    with tc_http.InferenceServerClient(f"{address}/oip") as client:
        inputs = [tc_http.InferInput("INPUT0", list(array.shape), datatype)]
        inputs[0].set_data_from_numpy(array, binary_data=binary)
        outputs = [tc_http.InferRequestedOutput("INPUT0", binary_data=binary)]
        result = client.infer("identity", inputs, outputs=outputs)
        got = result.as_numpy("INPUT0")
    assert got.dtype == array.dtype
    assert got.shape == array.shape
    if datatype == "BYTES":
        assert got.tolist() == array.tolist()
    else:
        assert got.tobytes() == array.tobytes()


def test_tritonclient_health_and_metadata_through_the_prefix(
    mounted: tuple[str, Tracked, Any],
) -> None:
    address, tracked, _ = mounted
    with tc_http.InferenceServerClient(f"{address}/oip") as client:
        assert client.is_server_live()
        assert client.is_server_ready()
        assert client.is_model_ready("tracked")
        assert client.get_model_metadata("tracked")["inputs"][0]["name"] == "X"
        assert client.get_server_metadata()["name"] == "oipcodec"
        x = tc_http.InferInput("X", [3], "INT32")
        x.set_data_from_numpy(np.array([1, 2, 3], np.int32))
        assert client.infer("tracked", [x]).as_numpy("Y").tolist() == [2, 3, 4]
    assert tracked.events == ["load"]


def test_the_parent_app_and_its_routes_still_answer(mounted: tuple[str, Tracked, Any]) -> None:
    address, _, _ = mounted
    http = urllib3.PoolManager()
    assert http.request("GET", f"http://{address}/hello").json() == {"hello": "world"}
    # outside the prefix, OIP paths belong to the parent app (404 from FastAPI)
    assert http.request("GET", f"http://{address}/v2/health/live").status == 404
    answer = http.request("GET", f"http://{address}/oip/v2/models/nope")
    assert answer.status == 404
    assert "'nope'" in answer.json()["error"]
    assert http.request("POST", f"http://{address}/oip/v2/health/live").status == 405


def test_behind_a_proxy_root_path() -> None:
    """uvicorn's --root-path /api (a proxy that strips /api): the full path is
    /api/oip/v2/..., root_path /api, and the mount adds /oip to it."""
    app = _fastapi_app()
    mount(app, [Identity()], prefix="/oip")
    with serving(app, root_path="/api") as address:
        http = urllib3.PoolManager()
        assert http.request("GET", f"http://{address}/oip/v2/health/ready").status == 200
        with tc_http.InferenceServerClient(f"{address}/oip") as client:
            assert client.is_model_ready("identity")


def test_plain_starlette_mount_routes_but_loads_nothing() -> None:
    """Starlette's Mount alone: the prefix is handled by the app, but the parent's lifespan
    does not reach it, so models stay unloaded, as documented."""
    app = _fastapi_app()
    app.mount("/oip", create_app([Identity()]))
    with serving(app) as address:
        http = urllib3.PoolManager()
        assert http.request("GET", f"http://{address}/oip/v2/health/live").status == 200
        assert http.request("GET", f"http://{address}/oip/v2/health/ready").status == 400
        assert http.request("GET", f"http://{address}/oip/v2/models/identity/ready").status == 400


def test_own_lifespan_with_manage_models_false() -> None:
    tracked = Tracked()
    rest_app: list[RestApp] = []

    @asynccontextmanager
    async def app_lifespan(app: Any) -> Any:
        async with lifespan(rest_app[0]):
            yield

    app = _fastapi_app(lifespan=app_lifespan)
    rest_app.append(mount(app, [tracked], prefix="/models/oip/", manage_models=False))
    with serving(app) as address, tc_http.InferenceServerClient(f"{address}/models/oip") as client:
        assert client.is_server_ready()
        assert client.is_model_ready("tracked")
    assert tracked.events == ["load", "unload"]


@pytest.mark.parametrize("prefix", ["", "/", "oip"])
def test_mount_refuses_a_bad_prefix(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        mount(_fastapi_app(), [Identity()], prefix=prefix)


@pytest.mark.parametrize(
    ("path", "root_path", "expected"),
    [
        ("/v2/health/live", "", "/v2/health/live"),
        ("/oip/v2/health/live", "/oip", "/v2/health/live"),
        ("/oip", "/oip", "/"),
        ("/oipx/v2", "/oip", "/oipx/v2"),  # a prefix only at a segment boundary
        ("/v2/health/live", "/oip", "/v2/health/live"),  # already stripped by a proxy
    ],
)
def test_route_path(path: str, root_path: str, expected: str) -> None:
    assert _route_path({"path": path, "root_path": root_path}) == expected
