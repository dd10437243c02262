"""The path of one small REST JSON inference through the server, traced at run time.

The inference step lives in one room (``oipcodec.server.inference``) that every front end
calls once: a request should cross few modules, and ``predict`` should be called from one
place. The request is served by the server's own HTTP/1.1 protocol over a real socket, in
this thread, and traced with :func:`sys.setprofile`.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("uvicorn")

import numpy as np
import uvicorn
from uvicorn.server import ServerState

import oipcodec
from oipcodec.server import Model, TensorSpec
from oipcodec.server.http11.protocol import HttpProtocol
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.runtime.apps import create_rest_app

PACKAGE = Path(oipcodec.__file__).resolve().parent
#: The most distinct source files of the package one small REST JSON inference enters (the
#: inference step is two: the call of predict, pipeline.py, and the checks, checks.py).
MAX_FILES = 16


class _Double(Model):
    name = "double"
    inputs = (TensorSpec("X", "FP32", [-1]),)
    outputs = (TensorSpec("Y", "FP32", [-1]),)

    def predict(self, inputs: Any, parameters: Any) -> dict[str, Any]:
        return {"Y": inputs["X"] * 2}


_BODY = orjson.dumps(
    {"inputs": [{"name": "X", "datatype": "FP32", "shape": [4], "data": [1, 2, 3, 4]}]}
)
_REQUEST = (
    b"POST /v2/models/double/infer HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
    b"content-length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
)


async def _traced_request() -> tuple[Counter[str], Counter[tuple[str, str]], bytes]:
    registry = ModelRegistry([_Double()])
    await registry.load_all()
    app = create_rest_app(registry, manage_models=False)
    config = uvicorn.Config(app, log_level="error", access_log=False, lifespan="off")
    state = ServerState()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: HttpProtocol(config, state), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def exchange() -> bytes:
        writer.write(_REQUEST)
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        return await reader.readexactly(length)

    await exchange()  # warm: imports and first-use caches are not the request's path
    files: Counter[str] = Counter()
    callers: Counter[tuple[str, str]] = Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        path = frame.f_code.co_filename
        # The pure twins stand in for compiled kernels, which a profile does not see: they
        # are not counted, so the figure is the same with either (OIPCODEC_PURE=1).
        if path.startswith(str(PACKAGE)) and not path.startswith(str(PACKAGE / "_pure")):
            files[str(Path(path).relative_to(PACKAGE))] += 1
        if frame.f_code.co_name == "predict" and isinstance(frame.f_locals.get("self"), Model):
            caller = frame.f_back
            callers[(caller.f_code.co_filename, caller.f_code.co_name)] += 1

    sys.setprofile(profile)
    try:
        body = await exchange()
    finally:
        sys.setprofile(None)
    writer.close()
    server.close()
    await server.wait_closed()
    return files, callers, body


def test_a_small_rest_json_request_crosses_few_modules() -> None:
    files, callers, body = asyncio.run(_traced_request())
    answer = orjson.loads(body)
    assert answer["outputs"][0]["data"] == [2.0, 4.0, 6.0, 8.0]
    assert len(files) <= MAX_FILES, sorted(files)
    assert len(callers) == 1, callers


def test_predict_is_called_from_one_place_in_the_package() -> None:
    """Read from the source: every ``.predict(`` call of the server (batched or not) is one."""
    sites = []
    for path in sorted((PACKAGE / "server").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if ".predict(" in code or ".predict," in code:
                sites.append(f"{path.relative_to(PACKAGE)}:{number}")
    assert len(sites) == 1, sites


def test_the_demo_double_answers() -> None:
    assert np.array_equal(_Double().predict({"X": np.ones(2)}, {})["Y"], np.full(2, 2.0))
