"""The v1 API of ``oipcodec serve`` against the reference: the ``tensorrtserver`` 1.11.0
package (TensorRT Inference Server's own Python package), not a mock.

- its generated modules (``api_pb2``, ``request_status_pb2``, ``server_status_pb2``,
  ``model_config_pb2``, ``grpc_service_pb2``) parse what oipcodec writes (``NV-Status``,
  ``NV-InferResponse``, the appended header in text and binary, the ``ServerStatus`` in text
  and binary), byte for byte where the message has no maps; the headers they write are read by
  oipcodec (HTTP ``NV-InferRequest`` text, gRPC ``meta_data``);
- its gRPC stubs (``grpc_service_pb2_grpc``) drive every ``GRPCService`` method over a real
  channel, malformed requests included;
- its own client (``InferContext``, ``ServerHealthContext``, ``ServerStatusContext``; a C++
  library that needs OpenSSL 1.1) runs Triton's ``simple`` and ``simple_string`` flows over
  HTTP and gRPC, when that library loads.

tensorrtserver's generated code needs protobuf 3.20 and its client numpy < 1.24, which
oipcodec's own generated modules (protobuf 6) cannot share: run these in an environment of
their own (tensorrtserver, protobuf 3.20, grpcio, numpy 1.23, future, pytest, hypothesis,
orjson, and oipcodec installed without its dependencies), with
``OIPCODEC_SERVER_PYTHON`` naming a Python that has oipcodec's dependencies: the server runs
there, in a subprocess, and this process only talks to it over sockets.
``OIPCODEC_REQUIRE_PEERS=tensorrtserver`` makes a missing package an error, not a skip.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.peers import require_peer
from tests.support.ports import free_ports
from tests.support.processes import http_status
from tests.support.serve_process import serve_process

require_peer("tensorrtserver")
grpc = require_peer("grpc")
text_format = require_peer("google.protobuf.text_format")

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0


def _load_reference() -> tuple[Any, Any]:
    """The ``tensorrtserver.api`` package (its client) and a namespace of its generated
    modules. Importing the package loads its C++ library, which needs OpenSSL 1.1; without
    it, the generated modules are loaded from their files alone and the client is ``None``."""
    names = ("api_pb2", "request_status_pb2", "server_status_pb2", "model_config_pb2")
    names += ("grpc_service_pb2", "grpc_service_pb2_grpc")
    try:
        api = importlib.import_module("tensorrtserver.api")
    except OSError:  # libssl.so.1.1: the package's __init__ loads its C++ client
        spec = importlib.util.find_spec("tensorrtserver")
        assert spec is not None and spec.submodule_search_locations
        package = types.ModuleType("tensorrtserver.api")
        package.__path__ = [os.path.join(spec.submodule_search_locations[0], "api")]
        sys.modules["tensorrtserver.api"] = package
        api = None
    modules = types.SimpleNamespace(
        **{name: importlib.import_module(f"tensorrtserver.api.{name}") for name in names}
    )
    return api, modules


CLIENT, REF = _load_reference()
api_pb2 = REF.api_pb2
status_pb2 = REF.request_status_pb2
server_pb2 = REF.server_status_pb2
config_pb2 = REF.model_config_pb2
service_pb2 = REF.grpc_service_pb2

A = np.arange(16, dtype=np.int32)
B = np.ones(16, dtype=np.int32)


class Server:
    def __init__(self, http_port: int, grpc_port: int) -> None:
        self.http = f"127.0.0.1:{http_port}"
        self.grpc = f"127.0.0.1:{grpc_port}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``oipcodec serve`` (the demo models) in a subprocess of ``OIPCODEC_SERVER_PYTHON``."""
    python = os.environ.get("OIPCODEC_SERVER_PYTHON", sys.executable)
    http_port, grpc_port = free_ports(2)
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = dict(os.environ)
    if any((ROOT / "src" / "oipcodec" / "_native").glob("*.so")):
        # A development tree built in place: serve this checkout's code. (Otherwise, as in
        # CI, the server Python's installed oipcodec, built from the same checkout.)
        paths = [str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])]
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env.pop("LD_LIBRARY_PATH", None)  # OpenSSL 1.1 is the reference client's, not the server's
    args = ["--log-level", "warning", "--http-port", str(http_port), "--grpc-port", str(grpc_port)]

    def ready() -> bool:
        return http_status(f"http://127.0.0.1:{http_port}/api/health/ready") == 200

    with serve_process(*args, env=env, program=[python, "-m", "oipcodec"], ready=ready, log=log):
        yield Server(http_port, grpc_port)


def http(
    server: Server, method: str, path: str, body: bytes | None = None, header: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(f"http://{server.http}{path}", data=body, method=method)
    if header is not None:
        request.add_header("NV-InferRequest", header)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            status, headers, data = answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        status, headers, data = error.code, error.headers, error.read()
    return status, {k.lower(): v for k, v in headers.items()}, data


def request_status(headers: dict[str, str]) -> Any:
    return text_format.Parse(headers["nv-status"], status_pb2.RequestStatus())


def simple_header(**fields: Any) -> Any:
    header = api_pb2.InferRequestHeader(batch_size=1, **fields)
    for name in ("INPUT0", "INPUT1"):
        header.input.add(name=name, dims=[16], batch_byte_size=64)
    header.output.add(name="OUTPUT0")
    header.output.add(name="OUTPUT1").cls.count = 3
    return header


# ----------------------------------------------------------------------------- messages


@pytest.mark.parametrize("form", ["text", "binary"])
def test_http_infer_headers_parse_with_the_reference(server: Server, form: str) -> None:
    header = simple_header(id=77)
    query = "?format=binary" if form == "binary" else ""
    text = text_format.MessageToString(header, as_one_line=True)
    status, headers, body = http(
        server, "POST", f"/api/infer/simple{query}", A.tobytes() + B.tobytes(), text
    )
    assert status == 200
    state = request_status(headers)
    assert state.code == status_pb2.SUCCESS and state.server_id == "oipcodec"
    assert text_format.MessageToString(state, as_one_line=True) == headers["nv-status"]
    response = text_format.Parse(headers["nv-inferresponse"], api_pb2.InferResponseHeader())
    assert text_format.MessageToString(response, as_one_line=True) == headers["nv-inferresponse"]
    assert (response.model_name, response.model_version, response.id) == ("simple", 1, 77)
    raw, classes = response.output
    assert (raw.name, list(raw.raw.dims), raw.raw.batch_byte_size) == ("OUTPUT0", [16], 64)
    assert [(c.idx, c.value) for c in classes.batch_classes[0].cls] == [
        (15, 14.0),
        (14, 13.0),
        (13, 12.0),
    ]
    np.testing.assert_array_equal(np.frombuffer(body[:64], np.int32), A + B)
    appended = body[64:]
    if form == "binary":
        parsed = api_pb2.InferResponseHeader.FromString(appended)
        assert parsed.SerializeToString() == appended  # byte for byte
    else:
        parsed = text_format.Parse(appended.decode(), api_pb2.InferResponseHeader())
    assert parsed == response


def test_http_status_parses_with_the_reference(server: Server) -> None:
    status, headers, body = http(server, "GET", "/api/status/simple?format=binary")
    assert status == 200 and request_status(headers).code == status_pb2.SUCCESS
    document = server_pb2.ServerStatus.FromString(body)
    assert document.ready_state == server_pb2.SERVER_READY
    config = document.model_status["simple"].config
    assert (config.name, config.max_batch_size) == ("simple", 8)
    assert [(i.name, i.data_type, list(i.dims)) for i in config.input] == [
        ("INPUT0", config_pb2.TYPE_INT32, [16]),
        ("INPUT1", config_pb2.TYPE_INT32, [16]),
    ]
    assert document.model_status["simple"].version_status[1].ready_state == server_pb2.MODEL_READY
    status, headers, body = http(server, "GET", "/api/status/simple_string")
    strings = text_format.Parse(body.decode(), server_pb2.ServerStatus())
    assert [i.data_type for i in strings.model_status["simple_string"].config.input] == [
        config_pb2.TYPE_STRING
    ] * 2
    status, headers, body = http(server, "GET", "/api/status/nope")
    assert status == 400 and request_status(headers).code == status_pb2.NOT_FOUND


@pytest.mark.parametrize(
    ("header", "body", "code", "words"),
    [
        ("batch_size: 1 input {", b"", "INVALID_ARG", ["NV-InferRequest", "Expected"]),
        ("batch_size: 1 unknown_field: 1", b"", "INVALID_ARG", ["unknown_field"]),
        (None, A.tobytes(), "INVALID_ARG", ["'INPUT1'", "expected 64 bytes"]),
        (None, 3 * A.tobytes(), "INVALID_ARG", ["bytes after the last input"]),
        ("batch_size: 9", b"", "INVALID_ARG", ["batch_size 9", "1 to 8"]),
    ],
)
def test_http_malformed(
    server: Server, header: str | None, body: bytes, code: str, words: list[str]
) -> None:
    if header is None:
        header = text_format.MessageToString(simple_header(), as_one_line=True)
    status, headers, _ = http(server, "POST", "/api/infer/simple", body, header)
    assert status == 400
    state = request_status(headers)
    assert state.code == status_pb2.RequestStatusCode.Value(code)
    for word in words:
        assert word in state.msg


# ----------------------------------------------------------------------------- gRPC stubs


@pytest.fixture(scope="module")
def stub(server: Server) -> Iterator[Any]:
    channel = grpc.insecure_channel(server.grpc)
    try:
        yield REF.grpc_service_pb2_grpc.GRPCServiceStub(channel)
    finally:
        channel.close()


def test_grpc_stubs(stub: Any) -> None:
    health = stub.Health(service_pb2.HealthRequest(mode="ready"), timeout=TIMEOUT)
    assert health.health and health.request_status.code == status_pb2.SUCCESS
    status = stub.Status(service_pb2.StatusRequest(model_name="simple"), timeout=TIMEOUT)
    assert status.server_status.model_status["simple"].config.max_batch_size == 8
    request = service_pb2.InferRequest(
        model_name="simple",
        model_version=-1,
        meta_data=simple_header(id=5),
        raw_input=[A.tobytes(), B.tobytes()],
    )
    answer = stub.Infer(request, timeout=TIMEOUT)
    assert answer.request_status.code == status_pb2.SUCCESS, answer.request_status
    assert answer.meta_data.id == 5 and len(answer.raw_output) == 1
    np.testing.assert_array_equal(np.frombuffer(answer.raw_output[0], np.int32), A + B)
    assert answer.meta_data.output[1].batch_classes[0].cls[0].idx == 15
    short = service_pb2.InferRequest()
    short.CopyFrom(request)
    short.raw_input[1] = B.tobytes()[:8]
    streamed = list(stub.StreamInfer(iter([request, short]), timeout=TIMEOUT))
    assert [s.request_status.code for s in streamed] == [
        status_pb2.SUCCESS,
        status_pb2.INVALID_ARG,
    ]
    assert "'INPUT1'" in streamed[1].request_status.msg
    unknown = service_pb2.InferRequest(model_name="nope", meta_data=simple_header())
    assert stub.Infer(unknown, timeout=TIMEOUT).request_status.code == status_pb2.NOT_FOUND
    control = service_pb2.ModelControlRequest
    unload = control(model_name="simple_string", type=control.UNLOAD)
    assert stub.ModelControl(unload, timeout=TIMEOUT).request_status.code == status_pb2.SUCCESS
    load = control(model_name="simple_string", type=control.LOAD)
    assert stub.ModelControl(load, timeout=TIMEOUT).request_status.code == status_pb2.SUCCESS
    shm = stub.SharedMemoryControl(
        service_pb2.SharedMemoryControlRequest(
            status=service_pb2.SharedMemoryControlRequest.Status()
        ),
        timeout=TIMEOUT,
    )
    assert shm.request_status.code == status_pb2.UNSUPPORTED
    index = stub.Repository(service_pb2.RepositoryRequest(index=True), timeout=TIMEOUT)
    assert "simple" in [m.name for m in index.index.models]


# ----------------------------------------------------------------------------- the client


@pytest.mark.skipif(CLIENT is None, reason="tensorrtserver's C++ client needs OpenSSL 1.1")
@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_reference_client_simple_flows(server: Server, protocol: str) -> None:
    assert CLIENT is not None
    kind = CLIENT.ProtocolType.from_str(protocol)
    url = server.http if protocol == "http" else server.grpc
    health = CLIENT.ServerHealthContext(url, kind)
    assert health.is_live() and health.is_ready()
    context = CLIENT.InferContext(url, kind, "simple", -1)
    result = context.run(
        {"INPUT0": (A,), "INPUT1": (B,)},
        {
            "OUTPUT0": CLIENT.InferContext.ResultFormat.RAW,
            "OUTPUT1": (CLIENT.InferContext.ResultFormat.CLASS, 2),
        },
        1,
    )
    np.testing.assert_array_equal(result["OUTPUT0"][0], A + B)
    assert result["OUTPUT1"] == [[(15, 14.0, ""), (14, 13.0, "")]]
    batched = context.run(
        {"INPUT0": (A, 2 * A), "INPUT1": (B, B)},
        {"OUTPUT1": CLIENT.InferContext.ResultFormat.RAW},
        2,
    )
    np.testing.assert_array_equal(batched["OUTPUT1"][1], 2 * A - B)
    strings = CLIENT.InferContext(url, kind, "simple_string", -1)
    values = np.array([str(i) for i in range(16)], dtype=object)
    result = strings.run(
        {"INPUT0": (values,), "INPUT1": (values,)},
        {"OUTPUT0": CLIENT.InferContext.ResultFormat.RAW},
        1,
    )
    assert result["OUTPUT0"][0].tolist() == [str(2 * i).encode() for i in range(16)]
    with pytest.raises(CLIENT.InferenceServerException, match="'nope'"):
        CLIENT.InferContext(url, kind, "nope", -1)  # reads the model's status first
