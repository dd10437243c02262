"""``patch_dataplane``'s REST route against stock KServe, differentially: two real
``kserve.ModelServer`` processes with the same ``Identity`` model (KServe's public API only),
tests/support/kserve_models_stock.py as KServe ships and tests/support/kserve_models_patched.py
with the recipe's one call, are sent the same bytes; the answers must carry the same arrays
(every datatype KServe has, JSON and binary, flat and nested, the requested outputs) and the
same status and body wherever KServe answers an error: unknown model, model versions, a body
that is not a V2 request, an unknown requested output.

Where the two differ on purpose, each test says so: a malformed tensor (wrong shape, bad
element, integer out of range, a fraction for an integer datatype, a truncated binary body) is a
400 naming the input and element (KServe: 500 with numpy's message, or a silently truncated
value); FP16 in JSON,
compressed bodies and header-less non-JSON content types are read (KServe refuses them); NaN
and infinities are answered as JSON tokens (KServe writes ``null``).
"""

from __future__ import annotations

import contextlib
import gzip
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import InferRequest, InferResponse, RequestedOutput, Tensor, rest
from tests.support.arrays import assert_same
from tests.support.kserve_process import run_kserve
from tests.support.peers import require_kserve

require_kserve()

SUPPORT = Path(__file__).resolve().parents[1] / "support"
MODEL = "identity"
INFER = f"/v2/models/{MODEL}/infer"

# KServe's datatypes (kserve.utils.numpy_codec.to_np_dtype): every OIP datatype but BF16.
DATATYPES = [
    "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
    "FP16", "FP32", "FP64", "BYTES",
]  # fmt: skip


def _array(datatype: str) -> np.ndarray:
    rng = np.random.default_rng(len(datatype))
    if datatype == "BYTES":  # UTF-8: KServe's REST path decodes every element as text
        return np.array([[b"a", b""], [b"\x00z\x01", "é€".encode()]], dtype=object)
    if datatype == "BOOL":
        return rng.integers(0, 2, (2, 3)).astype(np.bool_)
    dtype = np.dtype(rest.datatypes.get(datatype).numpy_dtype)
    if dtype.kind == "f":
        return (rng.standard_normal((2, 3)) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, (2, 3), dtype=dtype, endpoint=True)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``{"stock": host:port, "patched": host:port}``: both servers until their model is ready;
    always stopped."""
    started = contextlib.contextmanager(run_kserve)
    with (
        started(SUPPORT / "kserve_models_stock.py", MODEL, tmp_path_factory.mktemp("s")) as stock,
        started(SUPPORT / "kserve_models_patched.py", MODEL, tmp_path_factory.mktemp("p")) as ours,
    ):
        yield {"stock": stock["http"], "patched": ours["http"]}


def _post(address: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any, bytes]:
    request = urllib.request.Request(
        f"http://{address}{path}", data=body, method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def _both(
    servers: dict[str, str], body: bytes, headers: dict[str, str], path: str = INFER
) -> dict[str, tuple[int, Any, bytes]]:
    return {name: _post(address, path, body, headers) for name, address in servers.items()}


def _encoded(request: InferRequest, binary: bool, nested: bool = False) -> tuple[bytes, dict]:
    body, length = rest.encode_request(request, binary=binary, nested=nested)
    headers = {"Content-Type": "application/octet-stream" if binary else "application/json"}
    if length is not None:
        headers[rest.HEADER_LENGTH] = str(length)
    return body, headers


def _decoded(answer: tuple[int, Any, bytes]) -> InferResponse:
    status, headers, body = answer
    assert status == 200, body[:300]
    return rest.decode_response(body, headers.get(rest.HEADER_LENGTH))


def _same_answers(answers: dict[str, tuple[int, Any, bytes]], what: str) -> None:
    stock, patched = _decoded(answers["stock"]), _decoded(answers["patched"])
    assert (patched.model_name, patched.id) == (stock.model_name, stock.id), what
    assert [t.name for t in patched.outputs] == [t.name for t in stock.outputs], what
    for theirs, ours in zip(stock.outputs, patched.outputs, strict=True):
        assert (ours.datatype, ours.shape) == (theirs.datatype, theirs.shape), what
        assert_same(ours.data, theirs.data, f"{what} {ours.name}")


def _same_error(answers: dict[str, tuple[int, Any, bytes]], status: int) -> dict[str, Any]:
    (s_status, _, s_body), (p_status, _, p_body) = answers["stock"], answers["patched"]
    assert (s_status, p_status) == (status, status), (s_body, p_body)
    assert orjson.loads(p_body) == orjson.loads(s_body)
    return orjson.loads(p_body)


# ----------------------------------------------------------------------------- same arrays


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
@pytest.mark.parametrize("datatype", DATATYPES)
def test_every_datatype(servers: dict[str, str], datatype: str, binary: bool) -> None:
    """The same answer from both, for each datatype alone; FP16 in JSON, which KServe refuses
    (400), is answered by the patched server with the array sent."""
    x = _array(datatype)
    request = InferRequest([Tensor.from_array("x", x)], id=f"r-{datatype}")
    request.parameters["binary_data_output"] = binary
    answers = _both(servers, *_encoded(request, binary))
    if datatype == "FP16" and not binary:
        assert answers["stock"][0] == 400
        assert b"Sending FP16 data via JSON is not supported" in answers["stock"][2]
        assert_same(_decoded(answers["patched"]).output("x").data, x)
        return
    _same_answers(answers, datatype)
    assert_same(_decoded(answers["patched"]).output("x").data, x)


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_all_datatypes_in_one_request(servers: dict[str, str], binary: bool, nested: bool) -> None:
    tensors = [
        Tensor.from_array(f"in_{d.lower()}", _array(d)) for d in DATATYPES if binary or d != "FP16"
    ]
    answers = _both(servers, *_encoded(InferRequest(tensors, id="all"), binary, nested))
    _same_answers(answers, f"binary={binary} nested={nested}")


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_requested_outputs(servers: dict[str, str], binary: bool) -> None:
    """Only the outputs asked for, in the order asked, binary where asked; an unknown name is
    KServe's own 400."""
    a, b = np.arange(3, dtype=np.int32), np.ones((2, 2))
    outputs = [RequestedOutput("b", {"binary_data": binary}), RequestedOutput("a")]
    request = InferRequest([Tensor.from_array("a", a), Tensor.from_array("b", b)], outputs=outputs)
    answers = _both(servers, *_encoded(request, binary))
    _same_answers(answers, "outputs")
    for name in ("stock", "patched"):
        _, headers, _ = answers[name]
        assert (headers.get(rest.HEADER_LENGTH) is not None) == binary, name
    request.outputs = [RequestedOutput("zz")]
    error = _same_error(_both(servers, *_encoded(request, binary)), 400)
    assert error == {"error": "Unexpected inference output 'zz' for model 'identity'"}


def test_no_id_is_answered_with_the_empty_id(servers: dict[str, str]) -> None:
    """A JSON request without ``id`` (as curl sends it): both answer ``"id": ""``."""
    body = b'{"inputs":[{"name":"x","shape":[2],"datatype":"FP32","data":[1,2.5]}]}'
    answers = _both(servers, body, {"Content-Type": "application/json"})
    for name in ("stock", "patched"):
        assert orjson.loads(answers[name][2])["id"] == "", name
    _same_answers(answers, "no id")


# ----------------------------------------------------------------------------- KServe's errors


def test_unknown_model(servers: dict[str, str]) -> None:
    x = InferRequest([Tensor.from_array("x", np.ones(3, np.float32))])
    for binary in (False, True):
        answers = _both(servers, *_encoded(x, binary), path="/v2/models/nope/infer")
        error = _same_error(answers, 404)
        assert error == {"error": "Model with name nope does not exist."}


def test_versioned_route(servers: dict[str, str]) -> None:
    """KServe has no model versions: 501 on the versioned infer route, after the body is
    judged (a body that is not JSON is FastAPI's 422 first), as stock KServe answers."""
    path = f"/v2/models/{MODEL}/versions/1/infer"
    x = InferRequest([Tensor.from_array("x", np.ones(3, np.float32))])
    for binary in (False, True):
        error = _same_error(_both(servers, *_encoded(x, binary), path=path), 501)
        assert error == {"error": "Model versioning not supported yet."}
    _same_error(_both(servers, b'{"inputs":[', {"Content-Type": "application/json"}, path), 422)


@pytest.mark.parametrize(
    "body",
    [b'{"inputs":[', b"[1,2]", b"{}", b'{"inputs":[{"name":"x"}]}', b'{"inputs":"x"}'],
    ids=["bad-json", "not-an-object", "no-inputs", "input-without-fields", "inputs-not-a-list"],
)
def test_not_a_v2_request_is_fastapis_422(servers: dict[str, str], body: bytes) -> None:
    """A body KServe's pydantic model refuses goes to KServe's own route: the same 422 and
    FastAPI's ``detail`` body, on a known model and an unknown one."""
    headers = {"Content-Type": "application/json"}
    detail = _same_error(_both(servers, body, headers), 422)
    assert "detail" in detail
    _same_error(_both(servers, body, headers, "/v2/models/nope/infer"), 422)


# ----------------------------------------------------------------------------- on purpose


@pytest.mark.parametrize(
    ("data", "shape", "datatype", "stock_status", "words"),
    [
        ("[1, 2.5]", [3], "FP32", 500, "input 'x': element 2 at byte offset"),
        ('[1, "a"]', [2], "FP32", 500, "expected a JSON number"),
        ("[1, 300]", [2], "INT8", 500, "300 is out of range for INT8"),
        ("[1, 2.5]", [2], "INT32", 200, "expected a JSON integer for INT32"),
    ],
    ids=["wrong-shape", "bad-element", "out-of-range", "fraction-for-integer"],
)
def test_malformed_tensor_is_400_naming_it(
    servers: dict[str, str], data: str, shape: list[int], datatype: str, stock_status: int,
    words: str,
) -> None:  # fmt: skip
    """Where stock KServe answers 500 with numpy's message (or truncates 2.5 to 2), the
    patched server answers 400 naming the input, the element and what was expected; an
    unknown model is still KServe's 404 first."""
    tensor = f'{{"name":"x","shape":{shape},"datatype":"{datatype}","data":{data}}}'
    body = f'{{"inputs":[{tensor}]}}'.encode()
    headers = {"Content-Type": "application/json"}
    answers = _both(servers, body, headers)
    assert answers["stock"][0] == stock_status
    status, _, answer = answers["patched"]
    assert status == 400
    assert words in orjson.loads(answer)["error"]
    _same_error(_both(servers, body, headers, "/v2/models/nope/infer"), 404)


def test_truncated_binary_is_400_naming_the_input(servers: dict[str, str]) -> None:
    """A binary body one byte short: stock KServe 500, the patched server 400 naming it."""
    request = InferRequest([Tensor.from_array("x", np.ones(4, np.float32))])
    body, headers = _encoded(request, True)
    answers = _both(servers, body[:-1], headers)
    assert answers["stock"][0] == 500
    assert answers["patched"][0] == 400
    assert "'x'" in orjson.loads(answers["patched"][2])["error"]


def test_non_finite_floats_are_kept(servers: dict[str, str]) -> None:
    """Stock KServe answers NaN and infinities as ``null`` (read back as NaN); the patched
    server writes the tokens NaN, Infinity, -Infinity, which the client reads exactly."""
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 1.5], np.float32)
    answers = _both(servers, *_encoded(InferRequest([Tensor.from_array("x", x)]), False))
    stock = _decoded(answers["stock"]).output("x").data
    assert np.isnan(stock[:3]).all() and stock[3:].tolist() == [-0.0, 1.5]
    assert_same(_decoded(answers["patched"]).output("x").data, x)


def test_what_only_the_patched_server_reads(servers: dict[str, str]) -> None:
    """A gzip body and a JSON body sent without a JSON content type: stock KServe answers 400
    to both; the patched server answers them."""
    x = np.arange(4, dtype=np.int64)
    body, headers = _encoded(InferRequest([Tensor.from_array("x", x)]), False)
    for sent, extra in (
        (gzip.compress(body), {"Content-Encoding": "gzip"}),
        (body, {"Content-Type": "text/plain"}),
    ):
        answers = _both(servers, sent, {**headers, **extra})
        assert answers["stock"][0] == 400
        assert_same(_decoded(answers["patched"]).output("x").data, x)
