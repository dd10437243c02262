"""oipcodec.compat.ray on a real local Ray cluster (not a mock).

The module starts Ray on this machine (2 CPUs, no dashboard), Serve's HTTP proxy on 127.0.0.1
and its gRPC proxy with the OIP service, and the OIP deployment with two replicas (a quarter
of a CPU each); it shuts both down at the end. The real tritonclient then drives it:

- HTTP JSON, HTTP binary and gRPC answers computed by the demo models;
- the answers name their replica (``ray_replica``): requests reach both replicas;
- bad input is refused by a replica with the status and message ``oipcodec serve`` answers
  (the same requests sent to both);
- a replica killed during a bounded load: the load goes on on the other replica, and no
  request fails beyond those in flight on the killed one (last: it changes the replicas).

Ray cannot share an environment with the KServe and MLServer peers: run this module in a
virtual environment with the ``integration-ray`` extra (``OIPCODEC_REQUIRE_PEERS=ray`` makes a
missing Ray an error instead of a skip).
"""

from __future__ import annotations

import http.client
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import orjson
import pytest

from oipcodec.proto import open_inference_grpc_pb2 as pb2
from oipcodec.server.demo import AddSub
from oipcodec.testing import background
from tests.support.peers import require_peer
from tests.support.ports import free_ports

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report leaves the machine
ray = require_peer("ray")
serve = require_peer("ray.serve")
tritonhttp = require_peer("tritonclient.http")
tritongrpc = require_peer("tritonclient.grpc")
triton_utils = require_peer("tritonclient.utils")

from oipcodec.compat import ray as compat  # noqa: E402 - needs Ray, imported after the check

schema = require_peer("ray.serve.schema")
yaml = require_peer("yaml")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ray"
APP = "oip"
MODEL_APP = "add_sub_app"
#: With more than one application, Serve's gRPC proxy routes by the "application" metadata.
ON_APP = {"application": APP}
REPLICAS = 2


class Cluster:
    """The addresses of the running application."""

    def __init__(self, http_port: int, grpc_port: int) -> None:
        self.http = f"127.0.0.1:{http_port}"
        self.grpc = f"127.0.0.1:{grpc_port}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    http_port, grpc_port = free_ports(2)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
    )
    try:
        serve.start(
            http_options={"host": "127.0.0.1", "port": http_port},
            grpc_options=compat.grpc_options(port=grpc_port),
        )
        # The application builder, with string arguments as `serve run` passes them.
        serve.run(
            compat.app_builder({"num_replicas": str(REPLICAS), "num_cpus": "0.25"}),
            name=APP,
            route_prefix="/",
        )
        # One model with an application (and replicas) of its own, under its OIP path.
        serve.run(
            compat.build_app(
                [AddSub()], full_path=True, num_replicas=1, ray_actor_options={"num_cpus": 0.25}
            ),
            name=MODEL_APP,
            route_prefix="/v2/models/add_sub",
        )
        yield Cluster(http_port, grpc_port)
    finally:
        serve.shutdown()
        ray.shutdown()


@pytest.fixture(scope="module")
def reference() -> Iterator[Any]:
    """``oipcodec serve`` with the same (demo) models, in a subprocess."""
    with background() as server:
        yield server


def replica_actors(app: str = APP) -> dict[str, str]:
    """Replica id -> actor name, for the replicas of the application."""
    names = ray.util.list_named_actors(all_namespaces=True)
    replicas = {}
    for entry in names:
        name = entry["name"]
        if name.startswith("SERVE_REPLICA::") and f"::{app}#" in name:
            replicas[name.rpartition("#")[2]] = name
    return replicas


def simple_inputs(module: Any, binary: bool) -> tuple[list[Any], np.ndarray, np.ndarray]:
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 3, dtype=np.int32)
    inputs = [
        module.InferInput("INPUT0", [1, 16], "INT32"),
        module.InferInput("INPUT1", [1, 16], "INT32"),
    ]
    if module is tritonhttp:
        inputs[0].set_data_from_numpy(a, binary_data=binary)
        inputs[1].set_data_from_numpy(b, binary_data=binary)
    else:
        inputs[0].set_data_from_numpy(a)
        inputs[1].set_data_from_numpy(b)
    return inputs, a, b


# ------------------------------------------------------------------ starting it (no cluster)


def test_serve_deploy_config() -> None:
    """examples/ray/serve_config.yaml is a valid Serve config naming this module's builder
    and gRPC servicer function, and its arguments build an application."""
    document = yaml.safe_load((EXAMPLES / "serve_config.yaml").read_text())
    config = schema.ServeDeploySchema.model_validate(document)
    assert config.grpc_options.grpc_servicer_functions == [compat.GRPC_SERVICER_FUNCTION]
    (application,) = config.applications
    assert application.import_path == "oipcodec.compat.ray:app_builder"
    assert application.deployments[0].name == compat.OIPServer.name
    built = compat.app_builder(application.args)
    assert isinstance(built, serve.Application)


def test_app_builder_arguments() -> None:
    with pytest.raises(ValueError, match=r"unknown arguments \['replicas'\]"):
        compat.app_builder({"replicas": "2"})
    with pytest.raises(ValueError, match="num_replicas must be a number, got 'two'"):
        compat.app_builder({"num_replicas": "two"})
    with pytest.raises(ValueError, match="max_body_bytes must be a number"):
        compat.app_builder({"max_body_bytes": "1e"})
    assert isinstance(compat.app_builder({"num_replicas": "auto"}), serve.Application)


def test_grpc_options_register_the_service_once() -> None:
    options = compat.grpc_options(port=9100, grpc_servicer_functions=["my.add_to_server"])
    assert options.grpc_servicer_functions == ["my.add_to_server", compat.GRPC_SERVICER_FUNCTION]
    assert compat.grpc_options().grpc_servicer_functions == [compat.GRPC_SERVICER_FUNCTION]


# ------------------------------------------------------------------ the three transports


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_http_infer(cluster: Cluster, binary: bool) -> None:
    client = tritonhttp.InferenceServerClient(cluster.http)
    assert client.is_server_ready()
    inputs, a, b = simple_inputs(tritonhttp, binary)
    outputs = [
        tritonhttp.InferRequestedOutput(n, binary_data=binary) for n in ("OUTPUT0", "OUTPUT1")
    ]
    result = client.infer("simple", inputs, outputs=outputs)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert result.get_response()["parameters"][compat.REPLICA_PARAMETER] in replica_actors()


def test_http_binary_bytes(cluster: Cluster) -> None:
    client = tritonhttp.InferenceServerClient(cluster.http)
    values = np.array([b"one", b"", b"three", bytes(range(256))], dtype=np.object_)
    tensor = tritonhttp.InferInput("INPUT0", [4], "BYTES")
    tensor.set_data_from_numpy(values, binary_data=True)
    result = client.infer("identity", [tensor])
    assert list(result.as_numpy("INPUT0")) == list(values)


def test_grpc_infer(cluster: Cluster) -> None:
    client = tritongrpc.InferenceServerClient(cluster.grpc)
    assert client.is_server_live(headers=ON_APP) and client.is_server_ready(headers=ON_APP)
    assert client.is_model_ready("simple", headers=ON_APP)
    assert client.get_server_metadata(headers=ON_APP).name == "oipcodec"
    inputs, a, b = simple_inputs(tritongrpc, binary=True)
    result = client.infer("simple", inputs, headers=ON_APP)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    replica = result.get_response().parameters[compat.REPLICA_PARAMETER].string_param
    assert replica in replica_actors()
    index = client.get_model_repository_index(headers=ON_APP, as_json=True)
    assert {m["name"] for m in index["models"]} >= {"simple", "identity"}


def test_grpc_large_raw_tensor(cluster: Cluster) -> None:
    """4 MB of raw contents through the proxy (bytes forwarded, decoded by the replica)."""
    client = tritongrpc.InferenceServerClient(cluster.grpc)
    values = np.random.default_rng(7).standard_normal((1024, 1024)).astype(np.float32)
    tensor = tritongrpc.InferInput("X", list(values.shape), "FP32")
    tensor.set_data_from_numpy(values)
    result = client.infer("identity", [tensor], headers=ON_APP)
    np.testing.assert_array_equal(result.as_numpy("X"), values)


# ------------------------------------------------------------------ the replicas


def test_requests_reach_both_replicas(cluster: Cluster) -> None:
    assert len(replica_actors()) == REPLICAS
    client = tritonhttp.InferenceServerClient(cluster.http, concurrency=4)
    inputs, _, _ = simple_inputs(tritonhttp, binary=True)
    seen: dict[str, int] = {}
    for _ in range(10):  # up to 10 rounds of 8 concurrent requests
        pending = [client.async_infer("simple", inputs) for _ in range(8)]
        for request in pending:
            replica = request.get_result().get_response()["parameters"][compat.REPLICA_PARAMETER]
            seen[replica] = seen.get(replica, 0) + 1
        if len(seen) == REPLICAS:
            break
    assert set(seen) == set(replica_actors()), seen


def test_a_model_with_an_application_of_its_own(cluster: Cluster) -> None:
    """add_sub's OIP paths reach its own application (routed on the full path); the other
    models and the server endpoints stay with the main one; gRPC names the application."""
    (own,) = replica_actors(MODEL_APP)
    client = tritonhttp.InferenceServerClient(cluster.http)
    a = np.arange(16, dtype=np.float32)
    b = np.ones(16, dtype=np.float32)
    inputs = [
        tritonhttp.InferInput("INPUT0", [16], "FP32"),
        tritonhttp.InferInput("INPUT1", [16], "FP32"),
    ]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    for _ in range(3):
        result = client.infer("add_sub", inputs)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
        assert result.get_response()["parameters"][compat.REPLICA_PARAMETER] == own
    assert client.is_model_ready("add_sub")
    assert client.get_model_metadata("add_sub")["name"] == "add_sub"
    inputs, _, _ = simple_inputs(tritonhttp, binary=True)
    assert (
        client.infer("simple", inputs).get_response()["parameters"][compat.REPLICA_PARAMETER] != own
    )

    grpc_client = tritongrpc.InferenceServerClient(cluster.grpc)
    grpc_inputs = [
        tritongrpc.InferInput("INPUT0", [16], "FP32"),
        tritongrpc.InferInput("INPUT1", [16], "FP32"),
    ]
    grpc_inputs[0].set_data_from_numpy(a)
    grpc_inputs[1].set_data_from_numpy(b)
    result = grpc_client.infer("add_sub", grpc_inputs, headers={"application": MODEL_APP})
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert result.get_response().parameters[compat.REPLICA_PARAMETER].string_param == own


# ------------------------------------------------------------------ errors, as oipcodec serve


def _post(address: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    host, port = address.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("POST", path, body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, orjson.loads(answer.read())
    finally:
        connection.close()


def _binary_body(header: dict[str, Any], data: bytes) -> tuple[bytes, dict[str, str]]:
    text = orjson.dumps(header)
    return text + data, {"Inference-Header-Content-Length": str(len(text))}


BAD_HTTP = {
    "not json": ("simple", b'{"inputs": [', {}),
    "unknown model": ("no_such_model", orjson.dumps({"inputs": []}), {}),
    "wrong datatype": (
        "simple",
        orjson.dumps(
            {
                "inputs": [
                    {"name": "INPUT0", "shape": [1, 16], "datatype": "FP32", "data": [0.5] * 16},
                    {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16},
                ]
            }
        ),
        {},
    ),
    "element count": (
        "identity",
        orjson.dumps(
            {"inputs": [{"name": "X", "shape": [2, 3], "datatype": "INT32", "data": [1, 2, 3]}]}
        ),
        {},
    ),
    "element type": (
        "identity",
        orjson.dumps(
            {"inputs": [{"name": "X", "shape": [2], "datatype": "INT8", "data": [1, 300]}]}
        ),
        {},
    ),
    "short binary data": (
        "identity",
        *_binary_body(
            {
                "inputs": [
                    {
                        "name": "X",
                        "shape": [16],
                        "datatype": "FP32",
                        "parameters": {"binary_data_size": 64},
                    }
                ]
            },
            bytes(16),
        ),
    ),
}


@pytest.mark.parametrize("case", list(BAD_HTTP))
def test_http_errors_as_oipcodec_serve(cluster: Cluster, reference: Any, case: str) -> None:
    model, body, headers = BAD_HTTP[case]
    path = f"/v2/models/{model}/infer"
    headers = {"Content-Type": "application/json", **headers}
    expected = _post(reference.http_address, path, body, headers)
    assert expected[0] in (400, 404) and "error" in expected[1]
    assert _post(cluster.http, path, body, headers) == expected


def _raw_request(name: str, datatype: str, shape: list[int], raw: bytes, model: str) -> bytes:
    request = pb2.ModelInferRequest(model_name=model)
    request.inputs.add(name=name, datatype=datatype, shape=shape)
    request.raw_input_contents.append(raw)
    return request.SerializeToString()


BAD_GRPC = {
    "unknown model": _raw_request("X", "FP32", [4], bytes(16), "no_such_model"),
    "short raw contents": _raw_request("X", "FP32", [4], bytes(6), "identity"),
    "wrong datatype": _raw_request("INPUT0", "FP32", [1, 16], bytes(64), "simple"),
    "not a message": b"\x0a\xff\xff\xff\xff\x0f",
}


def _grpc_error(target: str, message: bytes) -> tuple[Any, str]:
    with grpc.insecure_channel(target) as channel:
        infer = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
        with pytest.raises(grpc.RpcError) as caught:
            infer(message, timeout=30, metadata=tuple(ON_APP.items()))
    return caught.value.code(), caught.value.details()


@pytest.mark.parametrize("case", list(BAD_GRPC))
def test_grpc_errors_as_oipcodec_serve(cluster: Cluster, reference: Any, case: str) -> None:
    expected = _grpc_error(reference.grpc_address, BAD_GRPC[case])
    assert expected[0] in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)
    assert _grpc_error(cluster.grpc, BAD_GRPC[case]) == expected


def test_grpc_needs_the_application_with_several(cluster: Cluster) -> None:
    """Serve's own answer when a gRPC call names no application and several are running."""
    client = tritongrpc.InferenceServerClient(cluster.grpc)
    with pytest.raises(triton_utils.InferenceServerException) as caught:
        client.is_server_live()
    assert caught.value.status() == "StatusCode.NOT_FOUND"
    assert "Application metadata not set" in caught.value.message()


def test_tritonclient_grpc_error(cluster: Cluster) -> None:
    client = tritongrpc.InferenceServerClient(cluster.grpc)
    with pytest.raises(triton_utils.InferenceServerException) as caught:
        client.get_model_metadata("no_such_model", headers=ON_APP)
    assert caught.value.status() == "StatusCode.NOT_FOUND"
    assert "no_such_model" in caught.value.message()


# ------------------------------------------------------------------ a replica dies under load


def test_replica_killed_during_load(cluster: Cluster) -> None:
    """Four clients send up to 60 requests each (at most 60 s); once 40 have been answered,
    one replica is killed. The other answers the rest: no more requests fail than the four
    that may have been in flight on the killed replica."""
    workers, per_worker = 4, 60
    inputs, a, b = simple_inputs(tritonhttp, binary=True)
    lock = threading.Lock()
    answered: list[str] = []
    failed: list[str] = []
    killed = threading.Event()
    after_kill: list[str] = []
    deadline = time.monotonic() + 60

    def load() -> None:
        client = tritonhttp.InferenceServerClient(
            cluster.http, connection_timeout=30, network_timeout=30
        )
        for _ in range(per_worker):
            if time.monotonic() > deadline:
                return
            try:
                result = client.infer("simple", inputs)
                np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
                replica = result.get_response()["parameters"][compat.REPLICA_PARAMETER]
            except Exception as exc:
                with lock:
                    failed.append(repr(exc))
                continue
            with lock:
                answered.append(replica)
                if killed.is_set():
                    after_kill.append(replica)

    threads = [threading.Thread(target=load, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    while len(answered) < 40 and time.monotonic() < deadline:
        time.sleep(0.02)
    replicas = replica_actors()
    victim = next(iter(replicas))
    ray.kill(ray.get_actor(replicas[victim], namespace="serve"), no_restart=True)
    killed.set()
    for thread in threads:
        thread.join(timeout=max(1.0, deadline - time.monotonic() + 5))
    assert not any(thread.is_alive() for thread in threads), "the load did not end"

    assert len(answered) + len(failed) == workers * per_worker, (len(answered), len(failed))
    assert len(failed) <= workers, failed
    assert after_kill, "no request was answered after the kill"
    # The load went on elsewhere: the survivor (or Serve's replacement) answered.
    assert set(after_kill) - {victim}, after_kill
