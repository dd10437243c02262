"""The REST front end with plain HTTP requests (http.client): every error path, the raw binary
request, limits, model API behaviour seen from the wire. After every test the server must
still answer (fixture ``still_serving``).

One server for the module, in a subprocess on free ports of 127.0.0.1, serving the demo
models plus tests/support/server_models.py, with a 1 MB body limit so that 413 is cheap to reach.
"""

from __future__ import annotations

import gzip
import http.client
import socket
import time
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import Limits, rest
from oipcodec.testing import RunningServer, background
from tests.support.server_models import all_models

pytest.importorskip("uvicorn", reason="the server extra is not installed")

LIMIT = 1 << 20
TIMEOUT = 30


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    limits = Limits(max_body_bytes=LIMIT, max_decompressed_bytes=LIMIT, body_timeout_seconds=1.0)
    with background(all_models(), limits=limits, grpc_port=None, log_level="critical") as running:
        yield running


class Answer:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status = response.status
        self.headers = {k.lower(): v for k, v in response.getheaders()}
        self.body = response.read()

    def json(self) -> Any:
        return orjson.loads(self.body)

    @property
    def error(self) -> str:
        assert self.headers["content-type"] == "application/json"
        document = self.json()
        assert list(document) == ["error"]
        assert "Traceback" not in document["error"]
        return str(document["error"])


def request(
    server: RunningServer,
    method: str,
    path: str,
    body: bytes | Iterable[bytes] | None = None,
    headers: dict[str, str] | None = None,
    conn: http.client.HTTPConnection | None = None,
) -> Answer:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=TIMEOUT)
    try:
        chunked = body is not None and not isinstance(body, bytes)
        conn.request(method, path, body=body, headers=headers or {}, encode_chunked=chunked)
        return Answer(conn.getresponse())
    finally:
        if own:
            conn.close()


def infer_body(inputs: list[dict[str, Any]], **extra: Any) -> bytes:
    return orjson.dumps({"inputs": inputs, **extra})


SIMPLE_JSON = infer_body(
    [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16},
    ]
)


@pytest.fixture(autouse=True)
def still_serving(server: RunningServer) -> Iterator[None]:
    yield
    assert request(server, "GET", "/v2/health/live").status == 200
    answer = request(server, "POST", "/v2/models/simple/infer", SIMPLE_JSON)
    assert answer.status == 200, answer.body
    assert answer.json()["outputs"][0]["data"] == list(range(1, 17))


def binary_body(
    tensors: list[tuple[str, str, list[int], bytes]], extra: bytes = b"", **document: Any
) -> tuple[bytes, dict[str, str]]:
    header = orjson.dumps(
        {
            "inputs": [
                {"name": n, "datatype": d, "shape": s, "parameters": {"binary_data_size": len(b)}}
                for n, d, s, b in tensors
            ],
            **document,
        }
    )
    body = header + b"".join(b for *_, b in tensors) + extra
    return body, {rest.HEADER_LENGTH: str(len(header))}


# ------------------------------------------------------------------------------ endpoints


def test_health_and_metadata(server: RunningServer) -> None:
    """Health answers carry KServe's JSON bodies (its REST client parses them; Triton's and
    ours look at the status only)."""
    for path, document in [
        ("/v2/health/live", {"live": True}),
        ("/v2/health/ready", {"ready": True}),
        ("/v2/models/simple/ready", {"name": "simple", "ready": True}),
        ("/v2/models/simple/versions/1/ready", {"name": "simple", "ready": True}),
    ]:
        answer = request(server, "GET", path)
        assert (answer.status, answer.json()) == (200, document), path
        assert answer.headers["content-type"] == "application/json", path
    meta = request(server, "GET", "/v2").json()
    assert meta["name"] == "oipcodec" and "model_repository" in meta["extensions"]
    assert request(server, "GET", "/v2/models/scale").json()["inputs"] == [
        {"name": "X", "datatype": "FP32", "shape": [-1, 4]}
    ]


def test_not_found(server: RunningServer) -> None:
    for method, path in [
        ("GET", "/v2/models/nope"),
        ("GET", "/v2/models/nope/ready"),
        ("GET", "/v2/models/simple/versions/9"),
        ("POST", "/v2/models/nope/infer"),
        ("POST", "/v2/models/simple/versions/9/infer"),
        ("GET", "/v2/nothing/here"),
        ("GET", "/"),
        ("GET", "/v3/models/simple"),
        ("POST", "/v2/repository/models/nope/load"),
    ]:
        answer = request(server, method, path, b"{}" if method == "POST" else None)
        assert answer.status == 404, (method, path)
        assert answer.error


def test_unknown_model_message(server: RunningServer) -> None:
    """Triton's words, then the first few models served (the module serves more than five)."""
    names = sorted({model.name for model in all_models()})
    assert len(names) > 5
    served = ", ".join(f"'{name}'" for name in names[:5])
    expected = (
        f"Request for unknown model: 'nope' is not found; this server serves {served}, ... "
        f"({len(names)} models)"
    )
    answer = request(server, "POST", "/v2/models/nope/infer", SIMPLE_JSON)
    assert answer.status == 404
    assert answer.error == expected
    assert request(server, "GET", "/v2/models/nope").error == expected


def test_models_list(server: RunningServer) -> None:
    """KServe's list of models: every model name, once, in the order they were added."""
    answer = request(server, "GET", "/v2/models")
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"
    assert answer.json() == {"models": list(dict.fromkeys(m.name for m in all_models()))}
    refused = request(server, "POST", "/v2/models", b"{}")
    assert refused.status == 405 and refused.headers["allow"] == "GET"


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("GET", "/v2/models/simple/infer", "POST"),
        ("PUT", "/v2/models/simple/versions/1/infer", "POST"),
        ("POST", "/v2/health/live", "GET"),
        ("DELETE", "/v2/models/simple", "GET"),
        ("POST", "/v2", "GET"),
        ("GET", "/v2/repository/index", "POST"),
        ("GET", "/v2/repository/models/simple/load", "POST"),
    ],
)
def test_wrong_method(server: RunningServer, method: str, path: str, allowed: str) -> None:
    answer = request(server, method, path, b"{}" if method in ("POST", "PUT") else None)
    assert answer.status == 405
    assert answer.headers["allow"] == allowed
    assert method in answer.error


# ------------------------------------------------------------------------------ bad bodies


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "invalid JSON"),
        (b"", "JSON ends early"),
        (b"[]", "expected a JSON object"),
        (b"{}", "no 'inputs'"),
        (b'{"inputs": 3}', "'inputs' must be a list"),
        (b'{"inputs": [{"name": "INPUT0"}]}', "has no 'datatype'"),
        (
            b'{"inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": [1]}]}',
            "INPUT0",
        ),
        (
            b'{"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "INT32", "data": [1, 1.5]}]}',
            "INPUT0",
        ),
        (
            b'{"inputs": [{"name": "INPUT0", "shape": [-1, 16], "datatype": "INT32", "data": []}]}',
            "non-negative",
        ),
    ],
)
def test_malformed_json(server: RunningServer, body: bytes, message: str) -> None:
    answer = request(server, "POST", "/v2/models/simple/infer", body)
    assert answer.status == 400
    assert message in answer.error


def test_model_input_checks(server: RunningServer) -> None:
    def infer(inputs: list[dict[str, Any]]) -> str:
        answer = request(server, "POST", "/v2/models/simple/infer", infer_body(inputs))
        assert answer.status == 400
        return answer.error

    good = {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": [0] * 16}
    other = {**good, "name": "INPUT1"}
    assert "datatype FP32, the model expects INT32" in infer([{**good, "datatype": "FP32"}, other])
    assert "shape [2, 8], the model expects [-1, 16]" in infer([{**good, "shape": [2, 8]}, other])
    assert "shape [16]" in infer([{**good, "shape": [16]}, other])
    assert "['INPUT1'] that the request does not have" in infer([good])
    assert "unexpected inference input 'EXTRA'" in infer([good, other, {**good, "name": "EXTRA"}])
    assert "appears more than once" in infer([good, good])


@pytest.mark.parametrize(
    ("sizes", "payload", "message"),
    [
        ((64, 64), bytes(124), "unexpected size for input 'INPUT1', expecting 64 bytes"),
        ((64, 64), bytes(130), "unexpected additional input data"),
        ((60, 64), bytes(124), "expected 64 bytes for 16 INT32 elements"),
        ((64, 2**40), bytes(128), "unexpected size for input 'INPUT1'"),
    ],
)
def test_bad_binary_sizes(
    server: RunningServer, sizes: tuple[int, int], payload: bytes, message: str
) -> None:
    header = orjson.dumps(
        {
            "inputs": [
                {"name": f"INPUT{i}", "datatype": "INT32", "shape": [1, 16],
                 "parameters": {"binary_data_size": size}}
                for i, size in enumerate(sizes)
            ]
        }
    )  # fmt: skip
    answer = request(
        server, "POST", "/v2/models/simple/infer", header + payload,
        {rest.HEADER_LENGTH: str(len(header))},
    )  # fmt: skip
    assert answer.status == 400
    assert message in answer.error


@pytest.mark.parametrize("value", ["-1", "abc", "100000", "1.5"])
def test_bad_header_length(server: RunningServer, value: str) -> None:
    answer = request(
        server, "POST", "/v2/models/simple/infer", SIMPLE_JSON, {rest.HEADER_LENGTH: value}
    )
    assert answer.status == 400
    assert rest.HEADER_LENGTH in answer.error


def test_binary_request_and_answer(server: RunningServer) -> None:
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    body, headers = binary_body(
        [("X", "FP32", [2, 4], x.tobytes())],
        parameters={"binary_data_output": True, "factor": 3},
        id="abc",
    )
    answer = request(server, "POST", "/v2/models/scale/infer", body, headers)
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/octet-stream"
    length = int(answer.headers[rest.HEADER_LENGTH.lower()])
    document = orjson.loads(answer.body[:length])
    assert document["id"] == "abc"
    assert document["outputs"][0]["parameters"] == {"binary_data_size": 32}
    np.testing.assert_array_equal(np.frombuffer(answer.body[length:], "<f4").reshape(2, 4), x * 3)


def test_parameters_reach_the_model(server: RunningServer) -> None:
    body = infer_body(
        [{"name": "X", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}],
        parameters={"factor": 0.5},
    )
    answer = request(server, "POST", "/v2/models/scale/infer", body)
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["outputs"][0]["data"] == [0.5, 1, 1.5, 2]
    body = infer_body(
        [{"name": "X", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}],
        parameters={"factor": "big"},
    )
    answer = request(server, "POST", "/v2/models/scale/infer", body)
    assert (answer.status, answer.error) == (400, "parameter 'factor' must be a number")


# ------------------------------------------------------------------------------ raw binary


def test_raw_binary_request(server: RunningServer) -> None:
    x = np.arange(12, dtype=np.float32)
    answer = request(
        server, "POST", "/v2/models/scale/infer", x.tobytes(), {rest.HEADER_LENGTH: "0"}
    )
    assert answer.status == 200, answer.body
    length = int(answer.headers[rest.HEADER_LENGTH.lower()])
    document = orjson.loads(answer.body[:length])
    assert document["outputs"][0]["shape"] == [3, 4]
    np.testing.assert_array_equal(np.frombuffer(answer.body[length:], "<f4"), x * 2)


@pytest.mark.parametrize(
    ("model", "body", "message"),
    [
        ("scale", bytes(10), "not a whole number of FP32 elements"),
        ("scale", bytes(12), "do not fill shape [-1, 4]"),
        ("simple", bytes(64), "exactly one input; model 'simple' takes 2 inputs"),
        ("identity", bytes(64), "exactly one input; model 'identity' takes any number of"),
    ],
)
def test_raw_binary_errors(server: RunningServer, model: str, body: bytes, message: str) -> None:
    answer = request(server, "POST", f"/v2/models/{model}/infer", body, {rest.HEADER_LENGTH: "0"})
    assert answer.status == 400
    assert message in answer.error


# ------------------------------------------------------------------------------ size limits


def test_too_large_by_content_length(server: RunningServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=TIMEOUT)
    try:
        answer = request(server, "POST", "/v2/models/identity/infer", bytes(LIMIT + 1), conn=conn)
        assert answer.status == 413
        assert answer.error == (
            f"request body of {LIMIT + 1} bytes is larger than the limit of {LIMIT} bytes "
            "(oipcodec serve --max-body-bytes, Limits.max_body_bytes)"
        )
        # The same connection goes on serving: the rest of the body was skipped correctly.
        again = request(server, "POST", "/v2/models/simple/infer", SIMPLE_JSON, conn=conn)
        assert again.status == 200
    finally:
        conn.close()


def test_at_the_limit_is_accepted(server: RunningServer) -> None:
    payload = bytes(LIMIT - 200)
    body, headers = binary_body([("B", "UINT8", [len(payload)], payload)])
    assert len(body) <= LIMIT
    answer = request(server, "POST", "/v2/models/identity/infer", body, headers)
    assert answer.status == 200


def test_too_large_chunked(server: RunningServer) -> None:
    chunks = [bytes(64 * 1024)] * (LIMIT // (64 * 1024) + 2)
    answer = request(server, "POST", "/v2/models/identity/infer", iter(chunks))
    assert answer.status == 413
    assert answer.error.endswith("(oipcodec serve --max-body-bytes, Limits.max_body_bytes)")


def test_chunked_body_accepted(server: RunningServer) -> None:
    answer = request(
        server, "POST", "/v2/models/simple/infer", iter([SIMPLE_JSON[:10], SIMPLE_JSON[10:]])
    )
    assert answer.status == 200


def test_too_large_after_inflating(server: RunningServer) -> None:
    bomb = gzip.compress(b"[" * (LIMIT + 10))
    assert len(bomb) < LIMIT // 100
    answer = request(
        server, "POST", "/v2/models/identity/infer", bomb, {"Content-Encoding": "gzip"}
    )
    assert answer.status == 413
    assert "inflates past the limit" in answer.error
    assert answer.error.endswith("(oipcodec serve --max-body-bytes, Limits.max_body_bytes)")


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
def test_bad_compressed_body(server: RunningServer, encoding: str) -> None:
    answer = request(
        server, "POST", "/v2/models/simple/infer", b"not compressed", {"Content-Encoding": encoding}
    )
    assert answer.status == 400
    assert encoding in answer.error


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_compressed_request_and_answer(server: RunningServer, encoding: str) -> None:
    body = gzip.compress(SIMPLE_JSON) if encoding == "gzip" else zlib.compress(SIMPLE_JSON)
    answer = request(
        server,
        "POST",
        "/v2/models/simple/infer",
        body,
        {"Content-Encoding": encoding, "Accept-Encoding": f"br;q=1, {encoding};q=0.5"},
    )
    assert answer.status == 200
    assert answer.headers["content-encoding"] == encoding
    document = orjson.loads(rest.decompress(answer.body, encoding))
    assert document["outputs"][1]["data"] == list(range(-1, 15))


def test_accept_encoding_refused(server: RunningServer) -> None:
    answer = request(
        server, "POST", "/v2/models/simple/infer", SIMPLE_JSON, {"Accept-Encoding": "gzip;q=0"}
    )
    assert answer.status == 200
    assert "content-encoding" not in answer.headers


# ------------------------------------------------------------------------------ model behaviour


def test_model_failure_is_500_without_traceback(server: RunningServer) -> None:
    body = infer_body([{"name": "A", "shape": [1], "datatype": "INT8", "data": [1]}])
    answer = request(server, "POST", "/v2/models/failing/infer", body)
    assert answer.status == 500
    assert answer.error == "model 'failing' failed: RuntimeError: the model broke"


def test_bad_model_output_is_500(server: RunningServer) -> None:
    body = infer_body([{"name": "A", "shape": [1], "datatype": "INT8", "data": [1]}])
    answer = request(server, "POST", "/v2/models/bad_output/infer", body)
    assert answer.status == 500
    assert "does not fit datatype INT32 exactly: element 0 is 0.5" in answer.error


def test_broken_load_is_unavailable(server: RunningServer) -> None:
    index = request(server, "POST", "/v2/repository/index", b"").json()
    row = next(r for r in index if r["name"] == "broken_load")
    assert row["state"] == "UNAVAILABLE"
    assert "weights not found" in row["reason"]
    ready_only = request(server, "POST", "/v2/repository/index", b'{"ready": true}').json()
    assert "broken_load" not in {r["name"] for r in ready_only}
    answer = request(server, "GET", "/v2/models/broken_load/ready")
    assert answer.status == 400 and "not ready" in answer.error
    answer = request(server, "POST", "/v2/models/broken_load/infer", b"{}")
    assert answer.status == 503
    answer = request(server, "POST", "/v2/repository/models/broken_load/load", b"{}")
    assert answer.status == 503 and "weights not found" in answer.error


def test_async_and_threaded_models(server: RunningServer) -> None:
    body = infer_body([{"name": "A", "shape": [2], "datatype": "INT8", "data": [1, 2]}])
    answer = request(server, "POST", "/v2/models/async_echo/infer", body)
    assert answer.json()["outputs"] == [
        {"name": "A_OUT", "shape": [2], "datatype": "INT8", "data": [1, 2]}
    ]
    answer = request(server, "POST", "/v2/models/threaded/infer", body)
    assert answer.json()["outputs"][0]["data"] == [False]


def test_versions(server: RunningServer) -> None:
    body = infer_body([{"name": "A", "shape": [1], "datatype": "INT8", "data": [1]}])

    def version(path: str) -> int:
        answer = request(server, "POST", path, body)
        assert answer.status == 200, answer.body
        return int(answer.json()["outputs"][0]["data"][0])

    assert version("/v2/models/counter/infer") == 2
    assert version("/v2/models/counter/versions/1/infer") == 1
    assert version("/v2/models/counter_text/infer") == 10  # numeric order, not text order
    assert request(server, "GET", "/v2/models/counter").json()["versions"] == ["1", "2"]
    answer = request(server, "POST", "/v2/models/counter/versions/1/infer", body)
    assert answer.json()["model_version"] == "1"


def test_json_cannot_carry_non_utf8_bytes(server: RunningServer) -> None:
    body, headers = binary_body(
        [("B", "BYTES", [1], b"\x02\x00\x00\x00\xff\xfe")],
        outputs=[{"name": "B", "parameters": {"binary_data": False}}],
    )
    answer = request(server, "POST", "/v2/models/identity/infer", body, headers)
    assert answer.status == 400
    assert "UTF-8" in answer.error
    body, headers = binary_body(
        [("B", "BYTES", [1], b"\x02\x00\x00\x00\xff\xfe")],
        outputs=[{"name": "B", "parameters": {"binary_data": True}}],
    )
    answer = request(server, "POST", "/v2/models/identity/infer", body, headers)
    assert answer.status == 200
    assert answer.body.endswith(b"\x02\x00\x00\x00\xff\xfe")


def test_binary_data_must_be_boolean(server: RunningServer) -> None:
    body = orjson.dumps(
        {
            "inputs": orjson.loads(SIMPLE_JSON)["inputs"],
            "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": "yes"}}],
        }
    )
    answer = request(server, "POST", "/v2/models/simple/infer", body)
    assert answer.status == 400
    assert "'binary_data' must be a boolean" in answer.error


def test_pipelined_keep_alive(server: RunningServer) -> None:
    """Bad and good requests on one connection, one after the other."""
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=TIMEOUT)
    try:
        for body, status in [(b"{", 400), (SIMPLE_JSON, 200), (b"[1]", 400), (SIMPLE_JSON, 200)]:
            answer = request(server, "POST", "/v2/models/simple/infer", body, conn=conn)
            assert answer.status == status
    finally:
        conn.close()


@pytest.mark.parametrize("datatype", ["FP16", "BF16"])
def test_half_floats_as_json(server: RunningServer, datatype: str) -> None:
    """Beyond Triton and KServe (which refuse them): numbers rounded to nearest even."""
    body = infer_body(
        [{"name": "H", "shape": [3], "datatype": datatype, "data": [1.5, -0.0, 3.01]}]
    )
    answer = request(server, "POST", "/v2/models/identity/infer", body)
    assert answer.status == 200, answer.body
    output = answer.json()["outputs"][0]
    assert output["datatype"] == datatype
    ml_dtypes = pytest.importorskip("ml_dtypes")
    dtype = np.float16 if datatype == "FP16" else ml_dtypes.bfloat16
    want = np.array([1.5, -0.0, 3.01], dtype=np.float32).astype(dtype)
    got = np.array(output["data"], dtype=np.float32).astype(dtype)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_a_client_that_stalls_mid_body_gets_408_and_is_disconnected(server: RunningServer) -> None:
    # Limits.body_timeout_seconds is 1 s for this module's server.
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=TIMEOUT) as sock:
        sock.sendall(
            b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\n"
            b"Content-Length: 100\r\n\r\n" + SIMPLE_JSON[:10]
        )
        started = time.monotonic()
        received = b""
        while chunk := sock.recv(65536):  # ends when the server closes the connection
            received += chunk
        waited = time.monotonic() - started
    assert received.startswith(b"HTTP/1.1 408 "), received[:80]
    assert b"the request body stopped arriving" in received
    assert waited < TIMEOUT  # closed by the server, not by our own socket timeout


def test_large_json_is_coded_off_the_event_loop_and_kept_apart() -> None:
    """JSON text of a megabyte or more is parsed and written in the loop's executor threads
    (oipcodec.server.frontends.rest_frontend.RestApp._codec): concurrent large requests, each answered with its own
    values bit for bit, in every mix of JSON and binary on the two sides."""
    from concurrent.futures import ThreadPoolExecutor

    size = 150_528  # 1x3x224x224: about 2.5 MB of JSON text
    arrays = [
        np.random.default_rng(seed).standard_normal(size).astype(np.float32) for seed in range(4)
    ]

    def call(port: int, index: int) -> None:
        array = arrays[index]
        request_json = index % 2 == 0  # requests 0 and 2 in JSON, 1 and 3 binary
        answer_json = index < 2  # answers 0 and 1 in JSON, 2 and 3 binary
        entry: dict[str, Any] = {"name": "INPUT0", "shape": [1, size], "datatype": "FP32"}
        outputs = [{"name": "INPUT0", "parameters": {"binary_data": not answer_json}}]
        if request_json:
            entry["data"] = array.tolist()
            body, headers = infer_body([entry], outputs=outputs), {}
        else:
            body, headers = binary_body(
                [("INPUT0", "FP32", [1, size], array.tobytes())], outputs=outputs
            )
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        try:
            for _ in range(3):
                conn.request("POST", "/v2/models/identity/infer", body=body, headers=headers)
                answer = Answer(conn.getresponse())
                assert answer.status == 200, answer.body[:200]
                length = answer.headers.get(rest.HEADER_LENGTH.lower())
                response = rest.decode_response(answer.body, length)
                got = response.outputs[0].data.reshape(-1)
                assert got.tobytes() == array.tobytes(), index
                assert (length is None) == answer_json
        finally:
            conn.close()

    with background(grpc_port=None, process=False, log_level="critical") as running:
        port = running.http_port
        assert port is not None
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda i: call(port, i), range(4)))


# ------------------------------------------------------------------------------ large answers


@pytest.mark.parametrize("protocol", ["oipcodec", "httptools"])
def test_a_large_answer_in_parts_or_joined(protocol: str) -> None:
    # Under oipcodec's protocol a large answer goes out as its parts (the JSON around each
    # large text, the texts, the binary tensors as views); under uvicorn's joined. Same bytes.
    rng = np.random.default_rng(5)
    big = rng.random(60_000, dtype=np.float32)
    raw = rng.integers(0, 255, 300_000, dtype=np.uint8)
    inputs = [
        {"name": "A", "shape": [big.size], "datatype": "FP32", "data": big.tolist()},
        {"name": "B", "shape": [3], "datatype": "INT64", "data": [1, 2, 3]},
    ]
    header = orjson.dumps(
        {
            "inputs": [
                *inputs,
                {
                    "name": "C",
                    "shape": [raw.size],
                    "datatype": "UINT8",
                    "parameters": {"binary_data_size": raw.size},
                },
            ],
            "outputs": [
                {"name": "A"},
                {"name": "B"},
                {"name": "C", "parameters": {"binary_data": True}},
            ],
        }
    )
    with background(grpc_port=None, http_protocol=protocol, log_level="critical") as running:
        conn = http.client.HTTPConnection("127.0.0.1", running.http_port, timeout=TIMEOUT)
        try:
            conn.request(
                "POST",
                "/v2/models/identity/infer",
                body=header + raw.tobytes(),
                headers={rest.HEADER_LENGTH: str(len(header))},
            )
            answer = Answer(conn.getresponse())
        finally:
            conn.close()
    assert answer.status == 200, answer.body[:200]
    assert int(answer.headers["content-length"]) == len(answer.body)
    decoded = rest.decode_response(answer.body, answer.headers[rest.HEADER_LENGTH.lower()])
    got = {t.name: t.data for t in decoded.outputs}
    assert np.array_equal(got["A"], big) and got["A"].dtype == np.float32
    assert got["B"].tolist() == [1, 2, 3]
    assert np.array_equal(got["C"], raw)
