"""``patch_dataplane`` keeps the guards a host puts on KServe's app: two real
``kserve.ModelServer`` processes (tests/support/kserve_models_guarded.py, stock and with the
recipe's call), each with an app dependency refusing a POST without an API key (401) and a
middleware refusing an infer request without a tenant header (403), are sent the same requests:
the same status and body wherever a guard refuses; with both headers, the same arrays, and
what only oipcodec's route reads (a gzip body, FP16 in JSON) is answered, so the fast path ran
behind the guards.

Where the two differ on purpose: a JSON body FastAPI cannot parse, sent without the key, is
FastAPI's 422 (or 400) on stock KServe, which parses the body before it runs the dependencies,
and the guard's 401 on the patched server, whose route reads the body only once they passed.
"""

from __future__ import annotations

import contextlib
import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import InferRequest, Tensor, rest
from tests.compat.test_compat_kserve_route import INFER, _both, _decoded, _encoded, _post
from tests.support.adapter_soak import GZIP_BOMB, soak
from tests.support.arrays import assert_same
from tests.support.kserve_process import run_kserve
from tests.support.peers import require_kserve
from tests.support.processes import http_status

require_kserve()

GUARDED = Path(__file__).resolve().parents[1] / "support" / "kserve_models_guarded.py"
KEY = {"X-API-Key": "secret"}
TENANT = {"X-Tenant": "t1"}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``{"stock": host:port, "patched": host:port}``, both guarded; always stopped."""
    started = contextlib.contextmanager(run_kserve)
    with (
        started(GUARDED, "identity", tmp_path_factory.mktemp("s")) as stock,
        started(GUARDED, "identity", tmp_path_factory.mktemp("p"), args=("--patched",)) as ours,
    ):
        yield {"stock": stock["http"], "patched": ours["http"]}


def _same_refusal(answers: dict[str, tuple[int, Any, bytes]], status: int) -> None:
    (s_status, _, s_body), (p_status, _, p_body) = answers["stock"], answers["patched"]
    assert (s_status, p_status) == (status, status), (s_body, p_body)
    assert orjson.loads(p_body) == orjson.loads(s_body)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
@pytest.mark.parametrize("path", [INFER, "/v2/models/identity/versions/1/infer"])
def test_guards_refuse_as_on_stock_kserve(servers: dict[str, str], binary: bool, path: str) -> None:
    x = InferRequest([Tensor.from_array("x", np.arange(6, dtype=np.float32))])
    body, headers = _encoded(x, binary)
    _same_refusal(_both(servers, body, headers, path), 403)
    _same_refusal(_both(servers, body, {**headers, **KEY}, path), 403)
    _same_refusal(_both(servers, body, {**headers, **TENANT}, path), 401)
    _same_refusal(_both(servers, body, {**headers, **TENANT, "X-API-Key": "wrong"}, path), 401)
    # A gzip body, which only the patched server reads: not without the key either (stock
    # KServe fails to parse a JSON one first: 400).
    compressed = {**headers, **TENANT, "Content-Encoding": "gzip"}
    answers = _both(servers, gzip.compress(body), compressed, path)
    assert answers["patched"][0] == 401
    assert answers["stock"][0] == (401 if binary else 400)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_with_the_key_the_fast_path_answers(servers: dict[str, str], binary: bool) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    body, headers = _encoded(InferRequest([Tensor.from_array("x", x)]), binary)
    headers = {**headers, **KEY, **TENANT}
    answers = _both(servers, body, headers)
    for name in ("stock", "patched"):
        assert_same(_decoded(answers[name]).output("x").data, x)
    # What only oipcodec's route reads: a gzip body, and FP16 in JSON.
    compressed = _both(servers, gzip.compress(body), {**headers, "Content-Encoding": "gzip"})
    assert compressed["stock"][0] == 400
    assert_same(_decoded(compressed["patched"]).output("x").data, x)
    half = x.astype(np.float16)
    fp16_body, fp16_headers = _encoded(InferRequest([Tensor.from_array("x", half)]), False)
    fp16 = _both(servers, fp16_body, {**fp16_headers, **KEY, **TENANT})
    assert fp16["stock"][0] == 400
    assert_same(_decoded(fp16["patched"]).output("x").data, half)
    assert fp16["patched"][1]["Content-Type"] == "application/json"


def test_a_body_that_is_not_a_v2_request(servers: dict[str, str]) -> None:
    """With the key, FastAPI's 422 from both (KServe's own route judges it); without it, the
    difference the module's docstring states."""
    headers = {"Content-Type": "application/json", **TENANT}
    for body in (b'{"inputs":[', b"{}"):
        answers = _both(servers, body, {**headers, **KEY})
        _same_refusal(answers, 422)
    _same_refusal(_both(servers, b"{}", headers), 401)
    answers = _both(servers, b'{"inputs":[', headers)
    assert (answers["stock"][0], answers["patched"][0]) == (422, 401)
    assert rest.HEADER_LENGTH not in answers["patched"][1]


def test_soak_with_gzip_bodies(servers: dict[str, str]) -> None:
    """A bounded soak of the patched server, behind its guards: 240 requests from 4 threads,
    valid bodies (JSON and binary, plain and gzip) mixed with gzip bombs (64 MB of zeros: the
    inflate limit, and not JSON), truncated gzip streams, bodies that are not V2 requests and
    requests without the key. Every valid one is answered 200 with its arrays, every other
    4xx; the server still answers health and inference at the end."""
    address = servers["patched"]
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    json_body, json_headers = _encoded(InferRequest([Tensor.from_array("x", x)]), False)
    binary_body, binary_headers = _encoded(InferRequest([Tensor.from_array("x", x)]), True)
    guards = {**KEY, **TENANT}
    zipped = {"Content-Encoding": "gzip"}
    valid = [
        (json_body, {**json_headers, **guards}),
        (binary_body, {**binary_headers, **guards}),
        (gzip.compress(json_body), {**json_headers, **guards, **zipped}),
        (gzip.compress(binary_body), {**binary_headers, **guards, **zipped}),
    ]
    bad = [
        (GZIP_BOMB, {**json_headers, **guards, **zipped}),
        (gzip.compress(json_body)[:-9], {**json_headers, **guards, **zipped}),
        (b'{"inputs":"x"}', {**json_headers, **guards}),
        (gzip.compress(json_body), {**json_headers, **TENANT, **zipped}),
    ]
    results = soak(lambda body, headers: _post(address, INFER, body, headers), valid, bad)
    for good, (status, headers, body) in results:
        if good:
            assert_same(_decoded((status, headers, body)).output("x").data, x)
        else:
            assert 400 <= status < 500, (status, body[:200])
    assert http_status(f"http://{address}/v2/health/live") == 200
    answer = _post(address, INFER, *valid[2])
    assert_same(_decoded(answer).output("x").data, x)


def _app_with_a_guarded_router(patched: bool) -> Any:
    """A FastAPI app that includes KServe's V2 endpoints through a router of its own carrying
    the API-key dependency (a router-level guard), on a real DataPlane with the identity
    model; ``patched``: the data plane went through ``patch_dataplane`` first."""
    from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException
    from kserve.model_repository import ModelRepository
    from kserve.protocol.dataplane import DataPlane
    from kserve.protocol.rest import server

    from oipcodec.compat.kserve import patch_dataplane
    from tests.support.kserve_models_stock import Identity

    async def api_key(x_api_key: str | None = Header(default=None)) -> None:
        if x_api_key != KEY["X-API-Key"]:
            raise HTTPException(401, "an API key is required")

    repository = ModelRepository(models_dir="/nonexistent")
    repository.update(Identity("identity"))
    dataplane = DataPlane(model_registry=repository)
    if patched:
        patch_dataplane(dataplane)
    app = FastAPI()
    router = APIRouter(dependencies=[Depends(api_key)])
    server.register_v2_endpoints(router, dataplane, None)
    app.include_router(router)
    return app


def test_a_router_guard_holds_in_an_app_of_ones_own() -> None:
    from tests.compat.test_compat_asgi import serving

    x = np.arange(4, dtype=np.float32)
    body, headers = _encoded(InferRequest([Tensor.from_array("x", x)]), False)
    with (
        serving(_app_with_a_guarded_router(False)) as stock,
        serving(_app_with_a_guarded_router(True)) as ours,
    ):
        servers = {"stock": stock, "patched": ours}
        _same_refusal(_both(servers, body, headers), 401)
        answers = _both(
            servers, gzip.compress(body), {**headers, **KEY, "Content-Encoding": "gzip"}
        )
        assert answers["stock"][0] == 400
        assert_same(_decoded(answers["patched"]).output("x").data, x)
