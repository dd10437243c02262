"""The model API and registry in-process, the ASGI app driven directly, the server in a thread
of this process (gRPC with oipcodec's own protobuf classes next to tritonclient's), and the
``oipcodec serve`` command (with --model-module and --workers)."""

from __future__ import annotations

import asyncio
import http.client
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np
import orjson
import pytest

from oipcodec import InferRequest, InferResponse, RequestedOutput, Tensor
from oipcodec.errors import DatatypeError
from oipcodec.server import InvalidArgumentError, Model, NotFoundError, UnavailableError
from oipcodec.server.demo import AddSub, Identity
from oipcodec.server.inference import Pipeline, check_inputs
from oipcodec.server.model import TensorSpec
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.runtime import create_app, load_model_module
from oipcodec.server.runtime.malloc import _glibc
from oipcodec.testing import background
from tests.support.ports import free_port
from tests.support.serve_process import serve_checkout
from tests.support.server_models import AsyncEcho, Counter, Failing, all_models

pytest.importorskip("uvicorn", reason="the server extra is not installed")


# ------------------------------------------------------------------------------ model API


async def _infer(registry: ModelRegistry, request: InferRequest) -> InferResponse:
    """The answer of the registry's inference step."""
    return (await Pipeline.of(registry).run(request)).response


def test_tensor_spec() -> None:
    spec = TensorSpec("X", "FP32", [-1, 4])
    assert spec.shape == (-1, 4)
    assert spec.accepts((7, 4)) and spec.accepts((0, 4))
    assert not spec.accepts((7, 5)) and not spec.accepts((4,)) and not spec.accepts((1, 1, 4))
    assert spec.metadata() == {"name": "X", "datatype": "FP32", "shape": [-1, 4]}
    with pytest.raises(DatatypeError):
        TensorSpec("X", "float32", [1])
    with pytest.raises(ValueError, match="-1 for any size"):
        TensorSpec("X", "FP32", [-2])


def test_model_declaration() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        Model()
    with pytest.raises(ValueError, match="without '/'"):
        Model("a/b")
    with pytest.raises(ValueError, match="version"):
        Model("a", version="")
    model = Model("m", 3, platform="p", inputs=[TensorSpec("A", "INT8", [2])], outputs=None)
    assert (model.version, model.platform, model.outputs) == ("3", "p", None)
    assert model.metadata(["1", "3"]) == {
        "name": "m",
        "versions": ["1", "3"],
        "platform": "p",
        "inputs": [{"name": "A", "datatype": "INT8", "shape": [2]}],
        "outputs": [],
    }
    with pytest.raises(NotImplementedError):
        model.predict({}, {})


def test_is_async_per_predict() -> None:
    """``Model.is_async`` is asked once per ``predict`` method and kept: a subclass that
    overrides an async ``predict`` with a plain one, and a ``predict`` set on the instance,
    each get their own answer."""

    class Plain(AsyncEcho):
        def predict(self, inputs: Any, parameters: Any) -> Any:
            return inputs

    async def later(inputs: Any, parameters: Any) -> Any:
        return inputs

    echo, plain, patched = AsyncEcho(), Plain(), Identity()
    for _ in range(2):  # the second round reads what the first kept
        assert echo.is_async and not plain.is_async and not Identity().is_async
    patched.predict = later  # type: ignore[method-assign]
    assert patched.is_async and not Identity().is_async


def test_optional_inputs() -> None:
    model = Model(
        "m",
        inputs=[TensorSpec("A", "INT8", [-1]), TensorSpec("B", "INT8", [-1], optional=True)],
    )
    a = Tensor.from_array("A", np.zeros(3, np.int8))
    assert list(check_inputs(model, [a])) == ["A"]
    with pytest.raises(InvalidArgumentError, match=r"expects input\(s\) \['A'\]"):
        check_inputs(model, [Tensor.from_array("B", np.zeros(3, np.int8))])


def test_check_inputs_reshapes_flat_data() -> None:
    flat = Tensor("A", "INT8", (2, 3), np.arange(6, dtype=np.int8))
    arrays = check_inputs(Identity(), [flat])
    assert arrays["A"].shape == (2, 3)


# ------------------------------------------------------------------------------ registry


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_registry_add_and_lookup() -> None:
    registry = ModelRegistry([Counter(version="1"), Counter(version="2")])
    with pytest.raises(ValueError, match="already there"):
        registry.add(Counter(version="2"))
    with pytest.raises(TypeError):
        registry.add(object())  # type: ignore[arg-type]
    assert "counter" in registry and len(registry) == 2
    with pytest.raises(UnavailableError, match="no available versions"):
        registry.get("counter")
    run(registry.load_all())
    assert registry.get("counter").version == "2"
    assert registry.get("counter", "1").version == "1"
    with pytest.raises(NotFoundError):
        registry.get("counter", "3")
    with pytest.raises(NotFoundError):
        registry.get("other")
    run(registry.unload("counter"))
    assert [row["state"] for row in registry.index()] == ["UNAVAILABLE"] * 2
    assert registry.index(ready_only=True) == []


def test_registry_infer() -> None:
    registry = ModelRegistry([AddSub(), AsyncEcho(), Failing()])
    run(registry.load_all())
    x = Tensor.from_array("INPUT0", np.array([1.0, 2.0], np.float32))
    y = Tensor.from_array("INPUT1", np.array([0.5, 0.5], np.float32))
    request = InferRequest(
        [x, y], [RequestedOutput("OUTPUT1")], id="r", model_name="add_sub", parameters={"a": 1}
    )
    response = run(Pipeline.of(registry).run(request)).response
    assert (response.id, response.model_name, response.model_version) == ("r", "add_sub", "1")
    assert [t.name for t in response.outputs] == ["OUTPUT1"]
    np.testing.assert_array_equal(response.outputs[0].data, [0.5, 1.5])
    request.outputs = [RequestedOutput("OUTPUT0", {"classification": 2})]
    (classified,) = run(Pipeline.of(registry).run(request)).response.outputs
    assert (classified.datatype, classified.shape) == ("BYTES", (2,))  # add_sub does not batch
    assert classified.data.tolist() == [b"2.500000:1", b"1.500000:0"]
    with pytest.raises(InvalidArgumentError, match="names no model"):
        run(_infer(registry, InferRequest([x])))
    echoed = run(_infer(registry, InferRequest([x], model_name="async_echo")))
    assert echoed.outputs[0].name == "INPUT0_OUT"
    with pytest.raises(Exception, match="model 'failing' failed: RuntimeError: the model broke"):
        run(_infer(registry, InferRequest([x], model_name="failing")))


def test_load_model_module(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(load_model_module("tests.support.server_models")) == len(all_models())
    with pytest.raises(ValueError, match="has no MODELS"):
        load_model_module("oipcodec.datatypes")


# ------------------------------------------------------------------------------ ASGI app


class _Asgi:
    """Drive an ASGI app without a server: one HTTP request, its whole answer."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: tuple[tuple[bytes, bytes], ...] = (),
    ) -> tuple[int, dict[bytes, bytes], bytes]:
        chunks = [body[i : i + 7] for i in range(0, len(body), 7)] or [b""]
        messages = [
            {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
            for i, c in enumerate(chunks)
        ]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": method, "path": path, "headers": headers}
        await self.app(scope, receive, send)
        start, payload = sent
        return start["status"], dict(start["headers"]), payload["body"]


def test_asgi_app_lifespan_and_requests() -> None:
    app = create_app([Identity(), AddSub()])
    client = _Asgi(app)

    async def scenario() -> None:
        assert (await client.request("GET", "/v2/health/ready"))[0] == 400  # not started
        events = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
        sent: list[dict[str, Any]] = []
        gate = asyncio.Event()

        async def receive() -> dict[str, Any]:
            if len(events) == 1:
                await gate.wait()
            return events.pop(0)

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        lifespan = asyncio.create_task(app({"type": "lifespan"}, receive, send))
        while not sent:
            await asyncio.sleep(0)
        assert sent == [{"type": "lifespan.startup.complete"}]
        assert (await client.request("GET", "/v2/health/ready"))[0] == 200
        body = orjson.dumps(
            {"inputs": [{"name": "A", "shape": [2], "datatype": "BOOL", "data": [True, False]}]}
        )
        status, headers, answer = await client.request("POST", "/v2/models/identity/infer", body)
        assert status == 200 and headers[b"content-type"] == b"application/json"
        assert orjson.loads(answer)["outputs"][0]["data"] == [True, False]
        # Announced length with a body sent in several chunks: assembled in one buffer.
        status, _, _ = await client.request(
            "POST", "/v2/models/identity/infer", body, ((b"content-length", b"%d" % len(body)),)
        )
        assert status == 200
        status, _, answer = await client.request(
            "POST", "/v2/models/identity/infer", body, ((b"content-length", b"nope"),)
        )
        assert status == 400 and b"Content-Length" in answer
        gate.set()
        await lifespan
        assert sent[-1] == {"type": "lifespan.shutdown.complete"}
        assert (await client.request("GET", "/v2/health/ready"))[0] == 400
        assert (await client.request("GET", "/v2/health/live"))[0] == 200
        closed: list[dict[str, Any]] = []

        async def collect(message: dict[str, Any]) -> None:
            closed.append(message)

        await app({"type": "websocket"}, receive, collect)
        assert closed[0]["type"] == "websocket.close"

    run(scenario())


def test_asgi_client_gone() -> None:
    app = create_app([Identity()], manage_models=False)
    run(app.registry.load_all())
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v2/models/identity/infer", "headers": []}
    run(app(scope, receive, send))
    assert sent == []


# ------------------------------------------------------------------------------ thread mode, gRPC


def _get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_thread_mode_and_grpc_with_oipcodec_protos() -> None:
    """The server in a thread of this process; a gRPC client built on oipcodec's generated
    classes, in a process that also imported tritonclient's (private descriptor pool)."""
    grpc = pytest.importorskip("grpc")
    pytest.importorskip("tritonclient.grpc")
    from oipcodec import pb
    from oipcodec.proto import open_inference_grpc_pb2 as pb2

    with background(all_models(), process=False) as server:
        assert _get(server.http_port, "/v2/health/ready")[0] == 200
        with grpc.insecure_channel(server.grpc_address) as channel:
            service = "/inference.GRPCInferenceService/"

            def unary(method: str, request: Any, response: Any) -> Any:
                call = channel.unary_unary(
                    service + method,
                    request_serializer=type(request).SerializeToString,
                    response_deserializer=response.FromString,
                )
                return call(request, timeout=30)

            assert unary("ServerLive", pb2.ServerLiveRequest(), pb2.ServerLiveResponse).live
            meta = unary(
                "ModelMetadata", pb2.ModelMetadataRequest(name="scale"), pb2.ModelMetadataResponse
            )
            assert [(t.name, list(t.shape)) for t in meta.inputs] == [("X", [-1, 4])]
            infer = channel.unary_unary(service + "ModelInfer")  # bytes in, bytes out
            x = Tensor.from_array("X", np.arange(8, dtype=np.float32).reshape(2, 4))
            message = pb.encode_request(
                InferRequest([x], model_name="scale", parameters={"factor": 4}), raw=False
            )
            response = pb.decode_response(infer(message, timeout=30))
            np.testing.assert_array_equal(response.outputs[0].data, x.data * 4)
            failing = pb.encode_request(InferRequest([x], model_name="failing"))
            with pytest.raises(grpc.RpcError) as caught:
                infer(failing, timeout=30)
            assert caught.value.code() == grpc.StatusCode.INTERNAL
            assert caught.value.details() == "model 'failing' failed: RuntimeError: the model broke"
            with pytest.raises(grpc.RpcError) as caught:
                infer(b"\xff\xff\xff", timeout=30)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            with pytest.raises(grpc.RpcError) as caught:
                infer(pb2.ModelInferRequest().SerializeToString(), timeout=30)  # no model
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            with pytest.raises(grpc.RpcError) as caught:
                infer(pb.encode_request(InferRequest([x], model_name="broken_load")), timeout=30)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            assert unary("ServerReady", pb2.ServerReadyRequest(), pb2.ServerReadyResponse).ready
    with pytest.raises(OSError):
        _get(server.http_port, "/v2/health/live")


def test_thread_mode_port_in_use() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with (
            pytest.raises(RuntimeError, match="failed to start"),
            background(process=False, http_port=port, grpc_port=None),
        ):
            pass  # pragma: no cover


# ------------------------------------------------------------------------------ the command


def test_serve_command_demo_models_and_port_in_use() -> None:
    port = free_port()
    with serve_checkout("--http-port", str(port), "--grpc-port", "-1", ready_port=port) as process:
        index = orjson.loads(_get(port, "/v2/models/simple")[1])
        assert index["name"] == "simple"
        with serve_checkout("--http-port", str(port), "--grpc-port", "-1") as second:
            output, _ = second.communicate(timeout=60)
        assert second.returncode == 2
        assert f"cannot listen for HTTP on 127.0.0.1:{port}" in output
        assert "Traceback" not in output
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert "oipcodec server ready" in output and "Traceback" not in output


@pytest.mark.skipif(_glibc() is None, reason="M_TOP_PAD is a glibc malloc parameter")
@pytest.mark.parametrize(("option", "pad"), [((), 64 << 20), (("--malloc-top-pad", "0"), None)])
def test_serve_command_pads_the_heap(option: tuple[str, ...], pad: int | None) -> None:
    port = free_port()
    args = ["--http-port", str(port), "--grpc-port", "-1", "--log-level", "debug", *option]
    with serve_checkout(*args, ready_port=port) as process:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    if pad is None:
        assert "M_TOP_PAD" not in output
    else:
        assert f"malloc: M_TOP_PAD set to {pad} bytes" in output


def test_serve_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "oipcodec", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    for option in ("--http-port", "--grpc-port", "--model-module", "--workers", "--malloc-top-pad"):
        assert option in out.stdout


def _codec_threads_alive() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("oipcodec-codec"))


def test_large_json_bodies_are_coded_in_the_apps_own_threads() -> None:
    app = create_app([Identity()], manage_models=False, codec_threads=1)
    assert app.codec_threads == 1
    data = np.random.default_rng(3).random(200_000, dtype=np.float32)  # ~2 MB of JSON text
    body = orjson.dumps(
        {"inputs": [{"name": "X", "shape": [data.size], "datatype": "FP32", "data": data.tolist()}]}
    )
    assert len(body) > 1 << 20  # over the size that goes off the event loop
    assert not _codec_threads_alive()  # none before the first large body

    async def scenario() -> tuple[int, bytes]:
        await app.registry.load_all()
        status, _, answer = await _Asgi(app).request("POST", "/v2/models/identity/infer", body)
        return status, answer

    status, answer = asyncio.run(scenario())
    assert status == 200
    out = orjson.loads(answer)["outputs"][0]
    assert np.array_equal(np.array(out["data"], dtype=np.float32), data)
    assert _codec_threads_alive() == ["oipcodec-codec_0"]  # one thread, as asked
    app.close()
    deadline = time.monotonic() + 10
    while _codec_threads_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _codec_threads_alive()


def test_codec_threads_default_and_bounds() -> None:
    from oipcodec.server.config import available_cpus

    assert create_app([Identity()]).codec_threads == available_cpus() >= 1
    with pytest.raises(ValueError, match="codec_threads must be at least 1, got 0"):
        create_app([Identity()], codec_threads=0)
    refused = pytest.raises(ValueError, match="codec_threads must be at least 1, got 0")
    with refused, background([Identity()], codec_threads=0):
        pass


# ------------------------------------------------------------------------------ ServerConfig


def test_server_config_defaults_are_serves() -> None:
    from oipcodec.server import ServerConfig
    from oipcodec.testing import BACKGROUND_DEFAULTS

    config = ServerConfig()
    assert (config.host, config.http_port, config.grpc_port, config.workers) == (
        "127.0.0.1", 8000, 8001, 1,
    )  # fmt: skip
    assert (config.http_protocol, config.codec_threads, config.log_level) == (
        "native", None, "info",
    )  # fmt: skip
    assert config.grpc_impl == "grpcio"
    assert (BACKGROUND_DEFAULTS.http_port, BACKGROUND_DEFAULTS.grpc_port) == (0, 0)
    assert BACKGROUND_DEFAULTS.log_level is None
    with pytest.raises(AttributeError):
        config.workers = 2  # type: ignore[misc]  # frozen
    assert config.replace(workers=3).workers == 3 and config.workers == 1
    assert ServerConfig(workers=4).codec_threads_per_process(8) == 2
    assert ServerConfig(workers=4).codec_threads_per_process(2) == 1
    assert ServerConfig(codec_threads=3).codec_threads_per_process(8) == 3


def test_server_settings_name_every_config_field_with_its_type() -> None:
    """ServerSettings (the typed keyword arguments of serve/Server/background) and ServerConfig
    list the same fields with the same types."""
    import typing

    from oipcodec.server.config import ServerConfig, ServerSettings

    assert typing.get_type_hints(ServerSettings) == typing.get_type_hints(ServerConfig)


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        ({"host": ""}, ValueError, "host must be an address or a host name"),
        ({"host": 1}, TypeError, "host must be a str, got int 1"),
        ({"http_port": 70000}, ValueError, "http_port must be 0 .* got 70000"),
        ({"grpc_port": -1}, ValueError, "grpc_port must be 0 .* got -1"),
        ({"http_port": "8000"}, TypeError, "http_port must be an int, got str '8000'"),
        ({"grpc_port": True}, TypeError, "grpc_port must be an int, got bool True"),
        ({"workers": 0}, ValueError, "workers must be >= 1, got 0"),
        ({"limits": {}}, TypeError, "limits must be a Limits, got dict"),
        ({"access_log": "yes"}, TypeError, "access_log must be a bool"),
        ({"log_level": "loud"}, ValueError, "log_level must be one of debug, info, .* 'loud'"),
        ({"malloc_top_pad": -5}, ValueError, "malloc_top_pad must be >= 0 bytes, got -5"),
        (
            {"http_protocol": "h2"},
            ValueError,
            "http_protocol must be one of oipcodec, native, httptools",
        ),
        ({"grpc_impl": "grpclib"}, ValueError, "grpc_impl must be one of grpcio, native, got"),
        ({"codec_threads": 0}, ValueError, "codec_threads must be at least 1, got 0"),
        ({"codec_threads": 1.5}, TypeError, "codec_threads must be an int, got float 1.5"),
    ],
)
def test_server_config_refuses_wrong_values(
    settings: dict[str, Any], error: type[Exception], message: str
) -> None:
    from oipcodec.server import ServerConfig

    with pytest.raises(error, match=message):
        ServerConfig(**settings)
    with pytest.raises(error, match=message):
        ServerConfig().replace(**settings)


def test_server_config_and_keywords_build_the_same_server() -> None:
    from oipcodec.server import Server, ServerConfig

    config = ServerConfig(http_port=0, grpc_port=None, http_protocol="h11", codec_threads=2)
    for server in (
        Server([Identity()], config=config),
        Server([Identity()], http_port=0, grpc_port=None, http_protocol="h11", codec_threads=2),
        Server([Identity()], config=config.replace(http_port=9), http_port=0),  # keyword wins
    ):
        assert server.config == config
        assert (server.http_port, server.grpc_port, server.app.codec_threads) == (0, None, 2)
    with pytest.raises(TypeError, match=r"unknown server setting.* htp_port; known: host"):
        Server([Identity()], htp_port=0)


def test_cli_refuses_a_wrong_setting_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    from oipcodec.cli import main

    assert main(["serve", "--workers", "0"]) == 2
    assert "oipcodec serve: workers must be >= 1, got 0" in capsys.readouterr().err


def test_background_lives_in_oipcodec_testing_and_its_old_name_warns() -> None:
    import oipcodec.server
    import oipcodec.server.runtime
    import oipcodec.testing

    with pytest.warns(DeprecationWarning, match="use oipcodec.testing.background"):
        assert oipcodec.server.background is oipcodec.testing.background
    assert not hasattr(oipcodec.server.runtime, "background")
    assert oipcodec.server.RunningServer is oipcodec.testing.RunningServer


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("RestApp", "oipcodec.server.frontends.rest_frontend"),
        ("create_app", "oipcodec.server.runtime"),
        ("ServerProcesses", "oipcodec.server.runtime"),
        ("ServerThread", "oipcodec.server.runtime"),
        ("check_ports", "oipcodec.server.runtime"),
        ("load_model_module", "oipcodec.server.runtime"),
        ("ModelRegistry", "oipcodec.server.registry"),
        ("available_cpus", "oipcodec.server.config"),
        ("HTTP_PROTOCOLS", "oipcodec.server.config"),
        ("AddSub", "oipcodec.server.demo"),
        ("Identity", "oipcodec.server.demo"),
        ("Simple", "oipcodec.server.demo"),
        ("SimpleString", "oipcodec.server.demo"),
        ("demo_models", "oipcodec.server.demo"),
    ],
)
def test_the_servers_former_public_names_warn_and_name_their_home(old: str, new: str) -> None:
    import importlib

    import oipcodec.server

    assert old not in oipcodec.server.__all__
    with pytest.warns(DeprecationWarning, match=f"use {new}.{old}"):
        value = getattr(oipcodec.server, old)
    assert value is getattr(importlib.import_module(new), old)


def test_the_servers_public_surface_is_what_a_user_writes_against() -> None:
    import oipcodec.server

    assert set(oipcodec.server.__all__) == {
        "Model", "TensorSpec", "DynamicBatching", "QueuePolicy", "ServerConfig", "serve", "Server", "RunningServer",
        "RequestError", "InvalidArgumentError", "NotFoundError", "UnavailableError",
        "UnsupportedError", "InternalError", "PayloadTooLargeError", "BodyTimeoutError",
    }  # fmt: skip


# ------------------------------------------------------------------------------ errors


def test_client_error_names_do_not_warn() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from oipcodec.client import RequestTimeoutError, ServerError
    from oipcodec import errors

    assert (ServerError, RequestTimeoutError) == (errors.ServerError, errors.RequestTimeoutError)


def test_status_table_round_trips() -> None:
    from oipcodec import errors

    for code, status in errors.HTTP_STATUS_FOR_CODE.items():
        assert errors.http_status_for(code) == status
        back = errors.grpc_code_for(status)
        assert errors.http_status_for(back) == status  # the first kind listed for the status
    for status, code in errors.GRPC_CODE_FOR_STATUS.items():
        if status not in (405, 429):  # HTTP-only: a wrong method, an overload's 429 option
            assert errors.http_status_for(code) == status
    assert errors.grpc_code_for(405) == "UNIMPLEMENTED"
    assert errors.grpc_code_for(429) == "UNAVAILABLE"  # as gRPC reads HTTP 429
    assert errors.grpc_code_for(418) == "UNKNOWN" and errors.http_status_for("UNKNOWN") == 500
    kinds = [
        errors.InvalidArgumentError, errors.NotFoundError, errors.UnavailableError,
        errors.UnsupportedError, errors.InternalError, errors.PayloadTooLargeError,
        errors.BodyTimeoutError,
    ]  # fmt: skip
    expected = [400, 404, 503, 501, 500, 413, 408]
    assert [kind.http_status for kind in kinds] == expected
    for kind in kinds:
        assert errors.grpc_code_for(kind.http_status) == kind.grpc_code
        assert issubclass(kind, errors.RequestError) and not issubclass(kind, ValueError)


def test_request_errors_pickle() -> None:
    import pickle

    from oipcodec import errors

    copy = pickle.loads(pickle.dumps(errors.NotFoundError("no model 'x'")))
    assert isinstance(copy, errors.NotFoundError) and copy.message == "no model 'x'"


def test_a_request_error_subclass_takes_its_status_from_the_table() -> None:
    from oipcodec.errors import RequestError

    class Exists(RequestError):
        grpc_code = "ALREADY_EXISTS"

    class Teapot(RequestError):
        grpc_code = "UNKNOWN"
        http_status = 418

    assert (Exists.http_status, Teapot.http_status) == (409, 418)
    with pytest.raises(TypeError, match="grpc_code 'NOPE' has no HTTP status"):

        class Nope(RequestError):
            grpc_code = "NOPE"


def test_cli_offers_the_http_protocols_and_grpc_impls_the_config_takes() -> None:
    from oipcodec.cli import build_parser
    from oipcodec.server.config import GRPC_IMPLS, HTTP_PROTOCOLS, ServerConfig

    commands = next(a for a in build_parser()._actions if a.dest == "command")
    serve = commands.choices["serve"]
    option = next(a for a in serve._actions if a.dest == "http_protocol")
    assert tuple(option.choices) == HTTP_PROTOCOLS
    assert option.default == ServerConfig().http_protocol == "native"
    option = next(a for a in serve._actions if a.dest == "grpc_impl")
    assert tuple(option.choices) == GRPC_IMPLS
    assert option.default == ServerConfig().grpc_impl


def test_importing_the_server_leaves_grpc_and_uvicorn_for_when_a_port_needs_them() -> None:
    import subprocess
    import sys

    code = (
        "import sys, oipcodec.server, oipcodec.server.runtime\n"
        "assert 'grpc' not in sys.modules and 'uvicorn' not in sys.modules, sorted(\n"
        "    m for m in ('grpc', 'uvicorn') if m in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
