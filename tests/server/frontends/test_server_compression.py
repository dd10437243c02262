"""Compressed REST bodies between the real server and peers, through the fast deflate library.

tritonclient compresses its requests with the standard library (``request_compression_algorithm``)
and inflates the server's answers (``response_compression_algorithm``); a plain HTTP request
checks that the answer's bytes are standard gzip/deflate that the standard library reads.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from http.client import HTTPConnection
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import compression
from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
httpclient = pytest.importorskip("tritonclient.http")

TIMEOUT = 30.0  # seconds of the plain HTTP request


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    """The demo models (``identity`` echoes its inputs); ``http`` (conftest) is tritonclient's."""
    with background(log_level="warning") as running:
        yield running


def _tensors() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {
        "FP32": rng.standard_normal((2, 20_000)).astype(np.float32),
        "INT64": rng.integers(0, 32000, (1, 8192), dtype=np.int64),
    }


@pytest.mark.parametrize("request_encoding", [None, "gzip", "deflate"])
@pytest.mark.parametrize("response_encoding", [None, "gzip", "deflate"])
@pytest.mark.parametrize("binary", [True, False])
def test_tritonclient_both_ways(
    http: Any, request_encoding: str | None, response_encoding: str | None, binary: bool
) -> None:
    tensors = _tensors()
    inputs = []
    for datatype, array in tensors.items():
        item = httpclient.InferInput(datatype, list(array.shape), datatype)
        item.set_data_from_numpy(array, binary_data=binary)
        inputs.append(item)
    outputs = [httpclient.InferRequestedOutput(name, binary_data=binary) for name in tensors]
    result = http.infer(
        "identity",
        inputs,
        outputs=outputs,
        request_compression_algorithm=request_encoding,
        response_compression_algorithm=response_encoding,
    )
    for name, array in tensors.items():
        np.testing.assert_array_equal(result.as_numpy(name), array)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_answer_is_standard_for_the_standard_library(server: RunningServer, encoding: str) -> None:
    values = np.random.default_rng(5).standard_normal(50_000).astype(np.float32)
    document = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [50_000]}]}
    document["inputs"][0]["data"] = values.tolist()
    body = orjson.dumps(document)
    packed = compression.compress(body, encoding)
    conn = HTTPConnection("127.0.0.1", server.http_port, timeout=TIMEOUT)
    try:
        headers = {"Content-Encoding": encoding, "Accept-Encoding": encoding}
        conn.request("POST", "/v2/models/identity/infer", packed, headers)
        response = conn.getresponse()
        answer = response.read()
    finally:
        conn.close()
    assert response.status == 200, answer
    assert response.getheader("Content-Encoding") == encoding
    text = gzip.decompress(answer) if encoding == "gzip" else zlib.decompress(answer)
    output = orjson.loads(text)["outputs"][0]
    np.testing.assert_array_equal(np.asarray(output["data"], dtype=np.float32), values)
