"""The KServe recipe of docs/compat.md (``doubler.py``: a ``kserve.Model`` on oipcodec's adapter,
in a real ``kserve.ModelServer`` with ``patch_dataplane``), run as written and used the way
KServe is normally used: REST JSON without an ``id`` (what curl and most clients send), REST
binary, and gRPC by the real tritonclient (raw contents) and by oipcodec's GrpcClient (typed
contents).

The script is taken from the page and run by ``python doubler.py --http_port P --grpc_port Q``
in a process of its own, through tests/support/kserve_loopback.py, which narrows KServe's
listen address to 127.0.0.1 and changes nothing else.
"""

from __future__ import annotations

import os
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from tests.support.arrays import assert_same as _same
from tests.support.doc_recipes import DOCS, recipe
from tests.support.kserve_process import assert_loopback_only, run_kserve
from tests.support.peers import require_kserve, require_peer

require_kserve()
triton_http = require_peer("tritonclient.http")
triton_grpc = require_peer("tritonclient.grpc")
for _module in ("grpc", "aiohttp"):
    pytest.importorskip(_module, reason="the client extra is not installed")

from oipcodec.client import GrpcClient, HttpClient  # noqa: E402

LOOPBACK = Path(__file__).resolve().parents[1] / "support" / "kserve_loopback.py"
MODEL = "doubler"
X = np.arange(12, dtype=np.float32).reshape(3, 4)


if not (DOCS / "compat.md").is_file():
    pytest.skip("docs/ is not next to tests/", allow_module_level=True)


def test_the_recipe_is_a_script_and_its_command() -> None:
    files, shell = recipe("compat.md", "KServe")
    assert list(files) == ["doubler.py"]
    assert shell == [
        'pip install "path/to/oipcodec[integration]"   # your checkout of oipcodec',
        "python doubler.py",
    ]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``python doubler.py`` (the page's script, as written) until its model is ready."""
    folder = tmp_path_factory.mktemp("kserve_recipe")
    files, _ = recipe("compat.md", "KServe")
    (folder / "doubler.py").write_text(files["doubler.py"])
    yield from run_kserve(folder / "doubler.py", MODEL, folder, loopback=LOOPBACK)


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="needs Linux /proc/net")
def test_server_listens_on_loopback_only(server: dict[str, str]) -> None:
    assert_loopback_only(server)


def _is_uuid4(text: Any) -> bool:
    try:
        return isinstance(text, str) and uuid.UUID(text).version == 4
    except ValueError:
        return False


def _post(server: dict[str, str], document: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://{server['http']}/v2/models/{MODEL}/infer",
        data=orjson.dumps(document),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, orjson.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, orjson.loads(error.read())


def test_rest_json_without_id_as_curl_sends_it(server: dict[str, str]) -> None:
    """No ``id`` in the request: KServe's REST answer needs a string one; the adapter makes a
    UUID4, as KServe's own ``get_predict_response`` does (before: 500, "Input should be a
    valid string")."""
    document = {"inputs": [{"name": "INPUT0", "shape": [3, 4], "datatype": "FP32",
                            "data": X.reshape(-1).tolist()}]}  # fmt: skip
    status, answer = _post(server, document)
    assert status == 200, answer
    assert _is_uuid4(answer["id"]), answer["id"]
    (output,) = answer["outputs"]
    assert (output["name"], output["shape"], output["datatype"]) == ("OUTPUT0", [3, 4], "FP32")
    assert output["data"] == (X * 2).reshape(-1).tolist()
    status, answer = _post(server, {**document, "id": "mine"})
    assert (status, answer["id"]) == (200, "mine")


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_rest_oipcodec_http_client(server: dict[str, str], binary: bool) -> None:
    with HttpClient(f"http://{server['http']}", timeout=30) as client:
        answer = client.infer(MODEL, {"INPUT0": X}, binary=binary)
        assert _is_uuid4(answer.id), answer.id
        _same(answer.output("OUTPUT0").data, X * 2)
        assert client.infer(MODEL, {"INPUT0": X}, binary=binary, id="r7").id == "r7"


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_rest_tritonclient(server: dict[str, str], binary: bool) -> None:
    client = triton_http.InferenceServerClient(server["http"], network_timeout=30.0)
    try:
        tensor = triton_http.InferInput("INPUT0", list(X.shape), "FP32")
        tensor.set_data_from_numpy(X, binary_data=binary)
        wanted = [triton_http.InferRequestedOutput("OUTPUT0", binary_data=binary)]
        result = client.infer(MODEL, [tensor], outputs=wanted)
        _same(result.as_numpy("OUTPUT0"), X * 2)
        assert _is_uuid4(result.get_response()["id"])
    finally:
        client.close()


@pytest.mark.parametrize(
    "array",
    [X, np.arange(5, dtype=np.int64), np.zeros((0, 3), np.float32), np.array([7], np.int32)],
    ids=["fp32-2d", "int64", "empty", "one-element"],
)
def test_grpc_tritonclient(server: dict[str, str], array: np.ndarray) -> None:
    """The real tritonclient over gRPC (raw input contents; before: KServe's ``to_grpc`` failed
    on the adapter's arrays, "The truth value of an array ... is ambiguous")."""
    client = triton_grpc.InferenceServerClient(server["grpc"])
    try:
        datatype = {np.float32: "FP32", np.int64: "INT64", np.int32: "INT32"}[array.dtype.type]
        tensor = triton_grpc.InferInput("INPUT0", list(array.shape), datatype)
        tensor.set_data_from_numpy(array)
        result = client.infer(MODEL, [tensor], client_timeout=30)
        _same(result.as_numpy("OUTPUT0"), array * 2)
        assert _is_uuid4(result.get_response().id)
        result = client.infer(MODEL, [tensor], request_id="g1", client_timeout=30)
        assert result.get_response().id == "g1"
    finally:
        client.close()


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "typed"])
def test_grpc_oipcodec_client(server: dict[str, str], raw: bool) -> None:
    """oipcodec's GrpcClient, raw and typed input contents: the answer comes as raw contents
    either way (as KServe's own ``to_grpc`` sends an output held as an array)."""
    with GrpcClient(server["grpc"], timeout=30) as client:
        answer = client.infer(MODEL, {"INPUT0": X}, raw=raw, id="g2")
        assert answer.id == "g2"
        _same(answer.output("OUTPUT0").data, X * 2)
