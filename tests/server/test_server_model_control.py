"""Repository load with Triton's parameters, and the server's name, against the real tritonclient
over HTTP and gRPC: the flows of Triton's model-control and health/metadata example clients
(a configuration override reloads the model, a malformed one and model files are refused in
Triton's words, an unknown model fails to load), written as this project's own tests.

One server (the demo models, named "triton" as those examples expect) runs in a subprocess for
the whole module, on free ports of 127.0.0.1.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from oipcodec.server import Model, ServerConfig, TensorSpec
from oipcodec.server.demo import Simple
from oipcodec.testing import RunningServer, background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with background(log_level="warning", server_name="triton") as running:
        yield running


def test_server_name(http: Any, grpc: Any) -> None:
    assert http.get_server_metadata()["name"] == "triton"
    assert grpc.get_server_metadata().name == "triton"


def test_server_name_is_checked() -> None:
    with pytest.raises(ValueError, match="server_name"):
        ServerConfig(server_name="")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_config_override_reloads_the_model(http: Any, grpc: Any, protocol: str) -> None:
    client = http if protocol == "http" else grpc

    def max_batch_size() -> int:
        if protocol == "http":
            return int(http.get_model_config("simple")["max_batch_size"])
        return int(grpc.get_model_config("simple").config.max_batch_size)

    assert max_batch_size() == 8
    try:
        # protobuf's JSON form writes int64 as a string, as Triton's example does
        client.load_model("simple", config='{"max_batch_size":"16"}')
        assert client.is_model_ready("simple")
        assert max_batch_size() == 16
        client.load_model(
            "simple",
            config='{"max_batch_size": 4, "parameters": {"k": {"string_value": "v"}}}',
        )
        assert max_batch_size() == 4
        config = http.get_model_config("simple")
        assert config["parameters"] == {"k": {"string_value": "v"}}
    finally:
        client.load_model("simple", config='{"max_batch_size": 8, "parameters": {}}')
    assert max_batch_size() == 8
    client.unload_model("simple")
    assert not client.is_model_ready("simple")
    client.load_model("simple")
    assert client.is_model_ready("simple")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ('"parameters": {"config": {{"max_batch_size": "16"}}}', "not valid JSON"),
        ("[1]", "not a JSON object"),
        ('{"max_batch_size": "many"}', "max_batch_size is an int >= 0"),
        ('{"max_batch_size": -1}', "max_batch_size is an int >= 0"),
        ('{"input": []}', "only max_batch_size, parameters and dynamic_batching can be overridden"),
        ('{"name": "other"}', "names model 'other'"),
        ('{"parameters": {"k": {"int_value": 1}}}', "map strings to strings"),
        # beyond ModelConfig's int32: refused, as the status would fail for every model
        ('{"max_batch_size": 2147483648}', "at most 2147483647 (ModelConfig's int32)"),
        ('{"max_batch_size": "2147483648"}', "at most 2147483647 (ModelConfig's int32)"),
        ('{"max_batch_size": 1e23}', "max_batch_size is an int >= 0"),
        ('{"max_batch_size": "\u00b2"}', "max_batch_size is an int >= 0"),
        # nested past the parser's depth: a 400, not a RecursionError
        ("[" * 100_000, "not valid JSON"),
        ('{"a": ' * 50_000 + "1" + "}" * 50_000, "not valid JSON"),
    ],
)
def test_bad_config_fails_to_load(
    server: RunningServer, http: Any, grpc: Any, protocol: str, config: str, expected: str
) -> None:
    client = http if protocol == "http" else grpc
    with pytest.raises(InferenceServerException) as caught:
        client.load_model("simple", config=config)
    assert "failed to load 'simple'" in caught.value.message()
    assert expected in caught.value.message()
    assert caught.value.status() in ("400", "StatusCode.INVALID_ARGUMENT")
    # nothing changed, and the model kept serving
    assert client.is_model_ready("simple")
    assert int(http.get_model_config("simple")["max_batch_size"]) == 8
    assert int(grpc.get_model_config("simple").config.max_batch_size) == 8
    with urllib.request.urlopen(f"http://{server.http_address}/api/status", timeout=30) as got:
        assert got.status == 200 and b"simple" in got.read()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_model_files_are_refused(http: Any, grpc: Any, protocol: str) -> None:
    client = http if protocol == "http" else grpc
    with pytest.raises(InferenceServerException) as caught:
        client.load_model("simple", config="{}", files={"file:" + "A" * 256: b"a"})
    assert "failed to poll from model repository" in caught.value.message()
    assert caught.value.status() in ("500", "StatusCode.INTERNAL")
    assert client.is_server_live() and client.is_model_ready("simple")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_unknown_model_fails_to_load(http: Any, grpc: Any, protocol: str) -> None:
    client = http if protocol == "http" else grpc
    with pytest.raises(InferenceServerException) as caught:
        client.load_model("wrong_model_name")
    message = caught.value.message()
    assert "failed to load 'wrong_model_name': unknown model" in message
    assert "simple" in message  # the models it does have


def test_reconfigure_changes_nothing_on_error() -> None:
    model = Simple()
    with pytest.raises(ValueError, match="strings to strings"):
        model.reconfigure({"max_batch_size": 2, "parameters": {"a": {"string_value": 1}}})
    assert (model.max_batch_size, model.config_parameters) == (8, {})
    model.reconfigure({"name": "simple", "max_batch_size": "3"})
    assert model.max_batch_size == 3


def test_reconfigure_keeps_the_batch_rule() -> None:
    model = Model("fixed", inputs=[TensorSpec("X", "FP32", [4])], outputs=[])
    with pytest.raises(ValueError, match="must start with a -1"):
        model.reconfigure({"max_batch_size": 2})
    assert model.max_batch_size == 0
