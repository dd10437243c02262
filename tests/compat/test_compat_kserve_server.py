"""oipcodec's clients against a real, stock KServe ModelServer (not a mock, not our server).

tests/support/kserve_models_stock.py runs ``kserve.ModelServer`` (one process, REST and gRPC on free
127.0.0.1 ports) with an identity ``kserve.Model`` written with KServe's public API only; these
tests drive it with HttpClient, AsyncHttpClient, GrpcClient and AsyncGrpcClient. KServe 0.21
has no setting for the listen address (it binds 0.0.0.0 and [::]): the helper narrows only
that, to 127.0.0.1 (see its docstring).

What KServe 0.21 accepts, as found here (kserve/protocol/infer_type.py, utils/numpy_codec.py):

- every OIP datatype but BF16 (no numpy dtype in KServe's table): REST JSON, REST binary
  (the binary tensor data extension, both ways), gRPC raw and typed contents;
- FP16 never as JSON ("Sending FP16 data via JSON is not supported"): 400;
- BF16 anywhere: 400 on REST ("invalid datatype None in the input"), INVALID_ARGUMENT on gRPC
  ("invalid content type");
- BYTES that are not UTF-8 only in gRPC raw contents. KServe turns a binary REST input into a
  JSON list (``InferInput.set_data_from_numpy(binary_data=False)``), which decodes every
  element as UTF-8: a valid binary request is refused with 500 (a KServe bug); typed gRPC
  outputs go the same way (400);
- requested outputs are honoured on REST and ignored on gRPC (``InferResponse.to_grpc`` writes
  every output); no ModelStreamInfer, no repository index (gRPC UNIMPLEMENTED, REST 404); no
  model versions (501); no compressed request bodies (the gzip body is parsed as JSON: 400);
- non-finite floats in JSON answers become ``null`` (orjson), which the client reads as NaN;
- KServe's gRPC RepositoryModelLoad/Unload messages number ``model_name`` 1 where the OIP
  (Triton) messages have ``repository_name = 1; model_name = 2``: over gRPC KServe sees an
  empty model name (REST load/unload carry the name in the URL path).

MLServer and KServe cannot share one environment: run these with the ``integration`` extra
(``OIPCODEC_REQUIRE_PEERS=kserve`` makes a missing KServe an error instead of a skip).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import InferRequest, Tensor, rest
from oipcodec.datatypes import DATATYPES
from tests.support.arrays import assert_same as _same
from tests.support.kserve_process import assert_loopback_only, run_kserve
from tests.support.peers import require_kserve, require_peer

kserve = require_kserve()
ml_dtypes = require_peer("ml_dtypes")
for _module in ("grpc", "aiohttp"):
    pytest.importorskip(_module, reason="the client extra is not installed")

from kserve.utils.numpy_codec import to_np_dtype  # noqa: E402

from oipcodec.client import (  # noqa: E402
    AsyncGrpcClient,
    AsyncHttpClient,
    GrpcClient,
    HttpClient,
    ServerError,
)

HELPER = Path(__file__).resolve().parents[1] / "support" / "kserve_models_stock.py"
MODEL = "identity"

PATHS = ["http-json", "http-binary", "grpc-raw", "grpc-typed"]

#: What KServe refuses, per path and datatype: (HTTP status, gRPC code, words of its message).
REFUSED: dict[tuple[str, str], tuple[int, str, str]] = {
    ("http-json", "FP16"): (400, "INVALID_ARGUMENT", "Sending FP16 data via JSON is not supported"),
    ("http-json", "BF16"): (400, "INVALID_ARGUMENT", "invalid datatype"),
    ("http-binary", "BF16"): (400, "INVALID_ARGUMENT", "invalid datatype"),
    ("grpc-raw", "BF16"): (400, "INVALID_ARGUMENT", "invalid content type"),
    ("grpc-typed", "BF16"): (400, "INVALID_ARGUMENT", "invalid content type"),
}


def test_kserve_supports_the_datatypes_tested() -> None:
    """KServe's own datatype table (to_np_dtype) has every OIP datatype but BF16; a change
    there must change REFUSED."""
    assert {name for name in DATATYPES if to_np_dtype(name) is None} == {"BF16"}


# ----------------------------------------------------------------------------- the server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A stock KServe ModelServer (tests/support/kserve_models_stock.py) until its model is ready on
    REST and its gRPC port is open; always terminated."""
    yield from run_kserve(HELPER, MODEL, tmp_path_factory.mktemp("kserve"))


@pytest.fixture(scope="module")
def http(server: dict[str, str]) -> Iterator[Any]:
    client = HttpClient(f"http://{server['http']}", timeout=30)
    yield client
    client.close()


@pytest.fixture(scope="module")
def grpc_client(server: dict[str, str]) -> Iterator[Any]:
    client = GrpcClient(server["grpc"], timeout=30)
    yield client
    client.close()


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="needs Linux /proc/net")
def test_server_listens_on_loopback_only(server: dict[str, str]) -> None:
    """KServe hardcodes 0.0.0.0 / [::]; the helper narrows both to 127.0.0.1."""
    assert_loopback_only(server)


# ----------------------------------------------------------------------------- payloads


def _payloads() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    payloads: dict[str, np.ndarray] = {}
    for name, row in DATATYPES.items():
        if name == "BYTES":
            # UTF-8 only: KServe decodes BYTES as UTF-8 everywhere but gRPC raw contents
            payloads[name] = np.array([[b"a", b""], [b"\x00z\x01", "é€".encode()]], dtype=object)
        elif name == "BOOL":
            payloads[name] = rng.integers(0, 2, (2, 3)).astype(np.bool_)
        elif name == "BF16":
            payloads[name] = rng.standard_normal((2, 3)).astype(ml_dtypes.bfloat16)
        elif row.is_float:
            payloads[name] = (rng.standard_normal((2, 3)) * 100).astype(row.numpy_dtype)
        else:
            info = np.iinfo(row.numpy_dtype)
            payloads[name] = rng.integers(
                info.min, info.max, (2, 3), dtype=row.numpy_dtype, endpoint=True
            )
    return payloads


PAYLOADS = _payloads()


def _infer(http: Any, grpc_client: Any, path: str, arrays: dict[str, Any], **kw: Any) -> Any:
    if path.startswith("http"):
        return http.infer(MODEL, arrays, binary=path == "http-binary", **kw)
    return grpc_client.infer(MODEL, arrays, raw=path == "grpc-raw", **kw)


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("datatype", list(DATATYPES))
@pytest.mark.parametrize("path", PATHS)
def test_every_datatype_every_path(http: Any, grpc_client: Any, path: str, datatype: str) -> None:
    """Each datatype alone through each path: the same array back, or, where KServe has no
    support (REFUSED), a ServerError with KServe's status and message, not a hang or a decode
    error."""
    arrays = {"x": PAYLOADS[datatype]}
    refused = REFUSED.get((path, datatype))
    if refused is None:
        response = _infer(http, grpc_client, path, arrays, id=f"{path}-{datatype}")
        assert response.model_name == MODEL
        assert response.id == f"{path}-{datatype}"
        assert [t.name for t in response.outputs] == ["x"]
        assert response.output("x").datatype == datatype
        _same(response.output("x").data, arrays["x"], datatype)
        return
    status, code, words = refused
    with pytest.raises(ServerError) as raised:
        _infer(http, grpc_client, path, arrays)
    assert raised.value.status == status
    assert raised.value.code == code
    assert words in raised.value.message


@pytest.mark.parametrize("path", PATHS)
def test_all_datatypes_in_one_request(http: Any, grpc_client: Any, path: str) -> None:
    """Every datatype the path supports as inputs of one request (binary parts and raw
    contents follow one another in order)."""
    arrays = {
        f"in_{name.lower()}": array
        for name, array in PAYLOADS.items()
        if (path, name) not in REFUSED and not (path == "grpc-typed" and name == "FP16")
    }  # FP16 has no typed field: with it the whole message would go raw
    response = _infer(http, grpc_client, path, arrays)
    assert [t.name for t in response.outputs] == list(arrays)
    for name, array in arrays.items():
        _same(response.output(name).data, array, name)


def test_http_json_nested(http: Any) -> None:
    arrays = {f"in_{n.lower()}": a for n, a in PAYLOADS.items() if ("http-json", n) not in REFUSED}
    response = http.infer(MODEL, arrays, binary=False, nested=True)
    for name, array in arrays.items():
        _same(response.output(name).data, array, name)


def test_kserve_answers_binary_when_asked(server: dict[str, str]) -> None:
    """KServe 0.21 speaks the binary tensor data extension both ways on its V2 REST endpoint:
    the body HttpClient sends (inputs in binary, ``binary_data_output``) is answered with
    Inference-Header-Content-Length and the outputs after the JSON header."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    body, length = rest.encode_request(InferRequest([Tensor.from_array("x", x)]), binary=True)
    request = urllib.request.Request(
        f"http://{server['http']}/v2/models/{MODEL}/infer", data=body, method="POST",
        headers={"Content-Type": "application/octet-stream", rest.HEADER_LENGTH: str(length)},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as answer:
        header_length = int(answer.headers[rest.HEADER_LENGTH])
        data = answer.read()
    header = orjson.loads(data[:header_length])
    assert header["outputs"][0]["parameters"] == {"binary_data_size": x.nbytes}
    assert "data" not in header["outputs"][0]
    assert data[header_length:] == x.tobytes()


def test_non_finite_floats(http: Any, grpc_client: Any) -> None:
    """NaN and infinities come back exactly in binary and raw contents. JSON has neither:
    the client sends NaN/Infinity tokens, KServe's parser takes them and its orjson answer
    writes them as null, which the client reads as NaN."""
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 1.5], np.float32)
    for path in ("http-binary", "grpc-raw", "grpc-typed"):
        _same(_infer(http, grpc_client, path, {"x": x}).output("x").data, x, path)
    got = http.infer(MODEL, {"x": x}, binary=False).output("x").data
    assert np.isnan(got[:3]).all() and got[3:].tolist() == [-0.0, 1.5]


def test_non_utf8_bytes(http: Any, grpc_client: Any) -> None:
    """BYTES that are not UTF-8: exact through gRPC raw contents. KServe refuses them
    elsewhere, and the client surfaces that cleanly: REST binary gets HTTP 500 (a KServe bug:
    InferRequest.from_bytes turns binary inputs into JSON lists, decoding every element as
    UTF-8), gRPC typed gets INVALID_ARGUMENT (its answer goes the same way), and JSON is
    refused by the client before sending, since JSON cannot carry them."""
    from oipcodec import EncodeError

    x = np.array([b"\xff\xfe", b"ok", b"\x80"], dtype=object)
    _same(grpc_client.infer(MODEL, {"x": x}, raw=True).output("x").data, x)
    with pytest.raises(ServerError) as raised:
        http.infer(MODEL, {"x": x}, binary=True)
    assert (raised.value.status, raised.value.code) == (500, "INTERNAL")
    assert "UTF-8" in raised.value.message
    with pytest.raises(ServerError) as raised:
        grpc_client.infer(MODEL, {"x": x}, raw=False)
    assert (raised.value.status, raised.value.code) == (400, "INVALID_ARGUMENT")
    assert "UTF-8" in raised.value.message
    with pytest.raises(EncodeError, match="UTF-8"):
        http.infer(MODEL, {"x": x}, binary=False)


def test_edge_shapes(http: Any, grpc_client: Any) -> None:
    """Empty tensors, a scalar (shape []), a name that needs escaping, and 1 MiB of FP32."""
    arrays = {
        "empty": np.zeros((0, 3), np.float32),
        "no strings": np.array([], dtype=object),
        "scalar": np.array(5, np.int32),
        "é/x 1": np.arange(4, dtype=np.int64),
        "big": np.random.default_rng(0).standard_normal((256, 1024)).astype(np.float32),
    }
    for path in PATHS:
        response = _infer(http, grpc_client, path, arrays)
        for name, array in arrays.items():
            _same(response.output(name).data, array, f"{path} {name}")


# ----------------------------------------------------------------------------- REST


def test_http_health_and_metadata(http: Any) -> None:
    assert http.live() is True
    assert http.ready() is True
    assert http.model_ready(MODEL) is True
    assert http.model_ready("nope") is False  # KServe answers 404
    assert http.model_ready(MODEL, version="1") is False  # KServe has no versions: 501
    metadata = http.server_metadata()
    assert metadata == {
        "name": "kserve",
        "version": importlib.metadata.version("kserve"),
        "extensions": ["model_repository_extension"],
    }
    model = http.model_metadata(MODEL)
    assert model["name"] == MODEL
    assert model["platform"] == ""
    assert model["inputs"] == [] and model["outputs"] == []  # the model declares none


def test_http_unknown_model(http: Any, server: dict[str, str]) -> None:
    with pytest.raises(ServerError) as raised:
        http.infer("nope", {"x": np.zeros(2, np.float32)})
    error = raised.value
    assert (error.status, error.code) == (404, "NOT_FOUND")
    assert error.message == "Model with name nope does not exist."
    assert error.url == f"http://{server['http']}/v2/models/nope/infer"
    with pytest.raises(ServerError) as raised:
        http.model_metadata("nope")
    assert (raised.value.status, raised.value.code) == (404, "NOT_FOUND")
    assert "nope" in raised.value.message


def test_http_what_kserve_lacks_surfaces_as_server_errors(http: Any) -> None:
    """Model versions (501), the repository index (404: no such route, FastAPI's own body)
    and compressed request bodies (KServe reads the gzip bytes as the JSON header: 400)."""
    x = {"x": np.ones(3, np.float32)}
    with pytest.raises(ServerError) as raised:
        http.infer(MODEL, x, model_version="1")
    assert (raised.value.status, raised.value.code) == (501, "UNIMPLEMENTED")
    assert "versioning not supported" in raised.value.message
    with pytest.raises(ServerError) as raised:
        http.repository_index()
    assert raised.value.status == 404
    assert raised.value.message == '{"detail":"Not Found"}'
    for compression in ("gzip", "deflate"):
        with pytest.raises(ServerError) as raised:
            http.infer(MODEL, x, compression=compression)
        assert raised.value.status == 400
        assert "Unrecognized request format" in raised.value.message


def test_http_repository_load_unload_of_unknown_model(http: Any) -> None:
    """KServe's REST repository extension: loading a model it does not have is a 503 ("not
    ready"), unloading it a 404."""
    with pytest.raises(ServerError) as raised:
        http.load_model("nope")
    assert (raised.value.status, raised.value.code) == (503, "UNAVAILABLE")
    assert raised.value.message == "Model with name nope is not ready."
    with pytest.raises(ServerError) as raised:
        http.unload_model("nope")
    assert (raised.value.status, raised.value.code) == (404, "NOT_FOUND")
    assert raised.value.message == "Model with name nope does not exist."


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "json"])
def test_http_outputs_selection(http: Any, binary: bool) -> None:
    """KServe's REST answer holds the requested outputs only (in the form asked for); an
    output the model does not make is a 400."""
    arrays: dict[str, np.ndarray] = {"a": np.arange(3, dtype=np.int32), "b": np.ones((2, 2))}
    response = http.infer(MODEL, arrays, outputs=["b"], binary=binary)
    assert [t.name for t in response.outputs] == ["b"]
    _same(response.output("b").data, arrays["b"])
    with pytest.raises(ServerError) as raised:
        http.infer(MODEL, arrays, outputs=["zz"], binary=binary)
    assert raised.value.status == 400
    assert "Unexpected inference output 'zz'" in raised.value.message


def test_async_http_client(server: dict[str, str]) -> None:
    arrays = {n.lower(): PAYLOADS[n] for n in ("FP16", "INT64", "BYTES", "BOOL")}

    async def run() -> None:
        async with AsyncHttpClient(f"http://{server['http']}", timeout=30) as client:
            assert await client.model_ready(MODEL)
            response = await client.infer(MODEL, arrays, id="async")
            assert response.id == "async"
            for name, array in arrays.items():
                _same(response.output(name).data, array, name)
            with pytest.raises(ServerError) as raised:
                await client.infer("nope", arrays)
            assert (raised.value.status, raised.value.code) == (404, "NOT_FOUND")

    asyncio.run(run())


# ----------------------------------------------------------------------------- gRPC


def test_grpc_health_and_metadata(grpc_client: Any) -> None:
    assert grpc_client.live() is True
    assert grpc_client.ready() is True
    assert grpc_client.model_ready(MODEL) is True
    assert grpc_client.model_ready("nope") is False  # KServe answers NOT_FOUND
    metadata = grpc_client.server_metadata()
    assert metadata["name"] == "kserve"
    assert metadata["extensions"] == ["model_repository_extension"]
    assert metadata["version"] == importlib.metadata.version("kserve")
    assert grpc_client.model_metadata(MODEL) == {
        "name": MODEL, "versions": [], "platform": "", "inputs": [], "outputs": [],
    }  # fmt: skip


def test_grpc_unknown_model(grpc_client: Any, server: dict[str, str]) -> None:
    with pytest.raises(ServerError) as raised:
        grpc_client.infer("nope", {"x": np.zeros(2, np.float32)})
    error = raised.value
    assert (error.code, error.status) == ("NOT_FOUND", 404)
    assert error.message == "Model with name nope does not exist."
    assert error.url == server["grpc"]
    with pytest.raises(ServerError) as raised:
        grpc_client.model_metadata("nope")
    assert raised.value.code == "NOT_FOUND"


def test_grpc_what_kserve_lacks_surfaces_as_server_errors(grpc_client: Any) -> None:
    """KServe's GRPCInferenceService has no ModelStreamInfer and no RepositoryIndex."""
    request = InferRequest([Tensor.from_array("x", np.ones(2, np.float32))], model_name=MODEL)
    with pytest.raises(ServerError) as raised:
        list(grpc_client.stream_infer([request]))
    assert (raised.value.code, raised.value.status) == ("UNIMPLEMENTED", 501)
    with pytest.raises(ServerError) as raised:
        grpc_client.repository_index()
    assert raised.value.code == "UNIMPLEMENTED"


def test_grpc_repository_load_unload_lose_the_model_name(grpc_client: Any) -> None:
    """KServe's own grpc_predict_v2.proto numbers RepositoryModel{Load,Unload}Request's
    ``model_name`` 1; the OIP/Triton messages the client sends have ``repository_name = 1;
    model_name = 2``. KServe therefore reads an empty model name (field 2 is unknown to it):
    an incompatibility of KServe's proto, not fixable in the client without breaking Triton
    (sending the name as field 1 would ask Triton for a repository of that name). Unloading
    then fails NOT_FOUND for the model "" and loading with UNKNOWN (KServe's interceptor
    reads ``ModelNotReady.reason``, which does not exist); the client surfaces both."""
    with pytest.raises(ServerError) as raised:
        grpc_client.unload_model("nope")
    assert (raised.value.code, raised.value.status) == ("NOT_FOUND", 404)
    assert raised.value.message == "Model with name  does not exist."  # the name is lost
    with pytest.raises(ServerError) as raised:
        grpc_client.load_model("nope")
    assert (raised.value.code, raised.value.status) == ("UNKNOWN", 500)
    assert "AttributeError" in raised.value.message


def test_grpc_compression(grpc_client: Any) -> None:
    x = {"x": np.linspace(0, 1, 1000, dtype=np.float32)}
    for compression in ("gzip", "deflate"):
        response = grpc_client.infer(MODEL, x, compression=compression)
        _same(response.output("x").data, x["x"], compression)


def test_grpc_requested_outputs_are_ignored_by_kserve(grpc_client: Any) -> None:
    """The request's outputs reach KServe (InferRequest.request_outputs) but its gRPC answer
    holds every output (InferResponse.to_grpc never looks at them), unlike its REST answer;
    an unknown name is not refused either. KServe also copies the REST-only parameter
    ``binary_data_size`` onto raw gRPC outputs; the client passes parameters through."""
    arrays: dict[str, np.ndarray] = {"a": np.arange(3, dtype=np.int32), "b": np.ones((2, 2))}
    for outputs in (["b"], ["zz"]):
        response = grpc_client.infer(MODEL, arrays, outputs=outputs)
        assert [t.name for t in response.outputs] == ["a", "b"]
        for name, array in arrays.items():
            _same(response.output(name).data, array, name)
    assert response.output("b").parameters == {"binary_data_size": arrays["b"].nbytes}


def test_async_grpc_client(server: dict[str, str]) -> None:
    arrays = {n.lower(): PAYLOADS[n] for n in ("FP16", "UINT64", "BYTES", "FP64")}

    async def run() -> None:
        async with AsyncGrpcClient(server["grpc"], timeout=30) as client:
            assert await client.model_ready(MODEL)
            response = await client.infer(MODEL, arrays, id="async")
            assert response.id == "async"
            for name, array in arrays.items():
                _same(response.output(name).data, array, name)
            with pytest.raises(ServerError) as raised:
                await client.infer("nope", arrays)
            assert (raised.value.code, raised.value.status) == ("NOT_FOUND", 404)

    asyncio.run(run())
