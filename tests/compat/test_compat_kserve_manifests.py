"""The KServe recipe in examples/kserve/, checked with KServe's own model classes.

No Kubernetes cluster (nor a container engine) runs here, so the manifests are checked as far
as KServe's Python package can: each is loaded into its class (``V1alpha1ServingRuntime``,
``V1beta1InferenceService``; the Kubernetes types inside from ``kubernetes.client``), every key
must be a field of its class (a misspelt field fails instead of being ignored by the API
server), and the fields the recipe depends on are checked: the v2 protocols, HTTP on 8080
and gRPC on 8081, the runtime an InferenceService names, and the image's entry point against
``oipcodec serve``'s own options. The KServe ModelServer alternative's model module is imported
and its model answers a request.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec.cli import build_parser
from tests.support.peers import require_kserve, require_peer

kserve = require_kserve()
k8s = require_peer("kubernetes.client")
yaml = require_peer("yaml")

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "kserve"
_SCALARS = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object}


def load(data: Any, kind: str, where: str = "") -> Any:
    """``data`` (parsed YAML) as an instance of the KServe or Kubernetes class ``kind``,
    refusing a key that is not a field of its class."""
    inner = re.fullmatch(r"(?:list|List)\[(.+)\]", kind)
    if inner:
        assert isinstance(data, list), f"{where}: expected a list"
        return [load(item, inner[1], f"{where}[{i}]") for i, item in enumerate(data)]
    inner = re.fullmatch(r"(?:dict\(str, |Dict\[str, )(.+)[)\]]", kind)
    if inner:
        assert isinstance(data, dict), f"{where}: expected a mapping"
        return {key: load(value, inner[1], f"{where}.{key}") for key, value in data.items()}
    if kind in _SCALARS:
        assert isinstance(data, _SCALARS[kind]), f"{where}: expected {kind}, got {data!r}"
        return data
    cls = getattr(kserve, kind, None) or getattr(k8s, kind)
    assert isinstance(data, dict), f"{where}: expected a {kind} mapping"
    fields = {key: name for name, key in cls.attribute_map.items()}
    unknown = sorted(set(data) - set(fields))
    assert not unknown, f"{where}: {kind} has no field {unknown}"
    return cls(
        **{
            fields[key]: load(value, cls.openapi_types[fields[key]], f"{where}.{key}")
            for key, value in data.items()
        }
    )


def manifest(name: str, kind: str) -> Any:
    data = yaml.safe_load((RECIPE / name).read_text())
    return load(data, kind, name)


def test_load_refuses_a_misspelt_field() -> None:
    with pytest.raises(AssertionError, match="has no field"):
        load({"spec": {"predictor": {"modle": {}}}}, "V1beta1InferenceService")


def test_serving_runtime() -> None:
    runtime = manifest("servingruntime.yaml", "V1alpha1ServingRuntime")
    assert (runtime.api_version, runtime.kind) == ("serving.kserve.io/v1alpha1", "ServingRuntime")
    assert runtime.metadata.name == "oipcodec"
    assert set(runtime.spec.protocol_versions) == {"v2", "grpc-v2"}
    assert [f.name for f in runtime.spec.supported_model_formats] == ["oipcodec"]
    (container,) = runtime.spec.containers
    assert container.name == "kserve-container"  # the name KServe's conventions expect
    assert [p.container_port for p in container.ports] == [8080]
    assert container.readiness_probe.http_get.path == "/v2/health/ready"
    assert container.command == ["oipcodec", "serve"]
    # The arguments are oipcodec serve's: they parse, with the ports and the public address.
    args = build_parser().parse_args(["serve", *container.args])
    assert (args.host, args.http_port, args.grpc_port) == ("0.0.0.0", 8080, 8081)
    assert args.model_module == "models"
    assert runtime.metadata.annotations["prometheus.kserve.io/path"] == "/metrics"


@pytest.mark.parametrize(
    ("name", "protocol", "port"),
    [("inferenceservice.yaml", "v2", None), ("inferenceservice-grpc.yaml", "grpc-v2", 8081)],
)
def test_inference_service(name: str, protocol: str, port: int | None) -> None:
    service = manifest(name, "V1beta1InferenceService")
    assert (service.api_version, service.kind) == ("serving.kserve.io/v1beta1", "InferenceService")
    model = service.spec.predictor.model
    assert model.runtime == manifest("servingruntime.yaml", "V1alpha1ServingRuntime").metadata.name
    assert model.model_format.name == "oipcodec"
    assert model.protocol_version == protocol
    assert model.storage_uri
    if port is None:
        assert model.ports is None  # the runtime's port: REST on 8080
    else:
        assert [(p.name, p.container_port) for p in model.ports] == [("h2c", port)]


def test_kserve_model_server_service() -> None:
    service = manifest("inferenceservice-kserve.yaml", "V1beta1InferenceService")
    (container,) = service.spec.predictor.containers
    assert [p.container_port for p in container.ports] == [8080]
    assert "--http_port=8080" in container.args and "--grpc_port=8081" in container.args
    # The arguments are KServe's ModelServer's own.
    parsed, unknown = kserve.model_server.parser.parse_known_args(container.args)
    assert not unknown
    assert (parsed.http_port, parsed.grpc_port) == (8080, 8081)


def test_dockerfile_serves_the_module() -> None:
    text = (RECIPE / "Dockerfile").read_text()
    assert 'pip install --no-cache-dir "oipcodec[server]"' in text
    entry = re.search(r"^ENTRYPOINT (\[.*\])$", text, re.M)
    command = re.search(r"^CMD (\[.*\])$", text, re.M)
    assert entry and command
    argv = yaml.safe_load(entry[1]) + yaml.safe_load(command[1])
    assert argv[:2] == ["oipcodec", "serve"]
    args = build_parser().parse_args(argv[1:])
    assert (args.host, args.http_port, args.grpc_port, args.model_module) == (
        "0.0.0.0",
        8080,
        8081,
        "models",
    )
    assert "EXPOSE 8080 8081" in text


def _module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"kserve_recipe_{name}", RECIPE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_models_module() -> None:
    models = _module("models").MODELS()
    doubler = next(m for m in models if m.name == "doubler")
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(doubler.predict({"X": x}, {})["Y"], x * 2)
    assert {"simple", "identity"} <= {m.name for m in models}


def test_kserve_model_module() -> None:
    from kserve.protocol.infer_type import InferInput, InferRequest

    model = _module("kserve_model").Doubler("doubler")
    tensor = InferInput("X", [3], "FP32")
    tensor.set_data_from_numpy(np.array([1, 2, 3], dtype=np.float32), binary_data=False)
    answer = model.predict(InferRequest("doubler", [tensor]))
    np.testing.assert_array_equal(answer.outputs[0].as_numpy(), [2, 4, 6])
