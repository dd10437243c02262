"""The model repository against a careless operator and a hostile client (issue 35, items 5-9):
configuration overrides checked against the protobuf field ranges, a replaced model freed by
reference counting alone, unload that drains the requests in flight, labels files confined to
the model's folder, model folders that are symlinks out of the repository, names and version
folders that are not what they seem, and a status that answers despite an unloaded folder.

In-process tests drive the registry; the others run a real server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import gc
import http.client
import urllib.parse
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec.proto import trtis_v1_pb2 as v1pb
from oipcodec.server.inference import Pipeline
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.repository import ModelRepository
from oipcodec.testing import RunningServer, background
from oipcodec.types import InferRequest, Tensor

pytest.importorskip("uvicorn", reason="the server extra is not installed")
grpc = pytest.importorskip("grpc")
pytest.importorskip("tritonclient.grpc")
import tritonclient.grpc as grpcclient  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

from oipcodec.proto import trtis_v1_pb2_grpc as v1grpc  # noqa: E402

TIMEOUT = 30.0

ADD_MODEL = """
from oipcodec.server import Model, TensorSpec


class AddOne(Model):
    inputs = [TensorSpec("X", "FP32", [-1])]
    outputs = [TensorSpec("Y", "FP32", [-1])]

    def predict(self, inputs, parameters):
        return {"Y": inputs["X"] + 1}
"""

BIG_MODEL = """
import numpy as np

from oipcodec.server import Model, TensorSpec

WEIGHTS_BYTES = 8 << 20


class Big(Model):
    inputs = [TensorSpec("X", "FP32", [-1])]
    outputs = [TensorSpec("Y", "FP32", [-1])]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weights = np.ones(WEIGHTS_BYTES // 4, dtype=np.float32)

    def predict(self, inputs, parameters):
        return {"Y": inputs["X"] + self.weights[0]}
"""


@pytest.fixture
def no_gc() -> Iterator[None]:
    """The cyclic collector off, as the HTTP tests run: what is freed is freed by reference
    counting alone."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _request(name: str) -> InferRequest:
    data = np.arange(3, dtype=np.float32)
    return InferRequest([Tensor.from_array("X", data)], model_name=name)


async def _alive(refs: list[weakref.ref[Any]], seconds: float = 2.0) -> list[Any]:
    """The referents still alive once the worker threads that ran the hooks have let go of
    them (a worker drops its call a moment after the loop has its result)."""
    for _ in range(int(seconds / 0.01)):
        if all(ref() is None for ref in refs):
            break
        await asyncio.sleep(0.01)
    return [ref for ref in refs if ref() is not None]


# ------------------------------------------------------------------ item 6: reloads are freed


@pytest.mark.parametrize("infer", [False, True])
@pytest.mark.parametrize("offered", ["class", "MODEL"])
def test_a_replaced_model_is_freed_without_the_cyclic_collector(
    tmp_path: Path, no_gc: None, infer: bool, offered: str
) -> None:
    (tmp_path / "big").mkdir()
    code = BIG_MODEL + ('\nMODEL = Big(name="big")\n' if offered == "MODEL" else "")
    (tmp_path / "big" / "model.py").write_text(code)

    async def run() -> None:
        registry = ModelRegistry(repository=ModelRepository(tmp_path, "explicit", ["big"]))
        await registry.load_all()
        seen = []
        for _ in range(3):
            model = registry.get("big")
            seen.append(weakref.ref(model))
            if infer:
                with Pipeline.of(registry).exchange("json", 10, model) as exchange:
                    response = await exchange.run(_request("big"))
                    exchange.sent(10)
                assert response.outputs[0].name == "Y"
                del exchange, response
            del model
            await registry.load("big")
        await registry.unload("big")
        alive = await _alive(seen)
        assert not alive, f"{len(alive)} replaced models still alive"
        if infer:
            document = registry.statistics_document()
            assert document["model_stats"] == [] or all(
                s["name"] == "big" for s in document["model_stats"]
            )

    asyncio.run(run())


# ------------------------------------------------------------------ item 7: unload drains

SLOW_MODEL = """
import asyncio

from oipcodec.server import Model, TensorSpec

EVENTS = []


class Slow(Model):
    inputs = [TensorSpec("X", "FP32", [-1])]
    outputs = [TensorSpec("Y", "FP32", [-1])]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.release = asyncio.Event()
        self.entered = 0
        self.unloaded = False

    async def predict(self, inputs, parameters):
        self.entered += 1
        await self.release.wait()
        if self.unloaded:
            raise RuntimeError("predict ran after unload")
        return {"Y": inputs["X"] + GENERATION}

    async def unload(self):
        EVENTS.append(("unload", GENERATION, self.entered))
        self.unloaded = True
"""


@pytest.mark.parametrize("change", ["unload", "reload"])
def test_unload_drains_the_requests_in_flight(tmp_path: Path, change: str) -> None:
    (tmp_path / "slow").mkdir()
    code = tmp_path / "slow" / "model.py"
    code.write_text("GENERATION = 1\n" + SLOW_MODEL)

    async def run() -> None:
        registry = ModelRegistry(repository=ModelRepository(tmp_path, "explicit", ["slow"]))
        await registry.load_all()
        first: Any = registry.get("slow")
        events = type(first).predict.__globals__["EVENTS"]
        running = [
            asyncio.create_task(Pipeline.of(registry).run(_request("slow"))) for _ in range(4)
        ]
        for _ in range(100):
            await asyncio.sleep(0)
        assert first.entered == 4
        code.write_text("GENERATION = 2\n" + SLOW_MODEL)
        if change == "unload":
            changing = asyncio.create_task(registry.unload("slow"))
        else:
            changing = asyncio.create_task(registry.load("slow"))
        # The change goes as far as it can without the 4 requests: an unload at once, a
        # reload until the new version serves (bounded: a loaded machine imports slowly).
        await asyncio.sleep(0.005)
        for _ in range(2000):
            if change == "unload" or registry.get("slow") is not first:
                break
            await asyncio.sleep(0.005)
        # New requests see the new state at once; the old model is not unloaded yet.
        if change == "unload":
            with pytest.raises(Exception, match="unloaded"):
                registry.get("slow")
        else:
            second: Any = registry.get("slow")
            assert second is not first
            second.release.set()
            response = (await Pipeline.of(registry).run(_request("slow"))).response
            assert list(response.outputs[0].data) == [2.0, 3.0, 4.0]
        assert events == [] and not changing.done()
        first.release.set()
        answers = await asyncio.gather(*running)
        for result in answers:  # all 4 finished on the model they started on
            response = result.response
            assert list(response.outputs[0].data) == [1.0, 2.0, 3.0]
        await asyncio.wait_for(changing, 5)
        assert events == [("unload", 1, 4)]

    asyncio.run(run())


def test_unload_waits_for_a_stuck_predict_at_most_drain_timeout(tmp_path: Path) -> None:
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "model.py").write_text("GENERATION = 1\n" + SLOW_MODEL)

    async def run() -> None:
        registry = ModelRegistry(repository=ModelRepository(tmp_path, "explicit", ["slow"]))
        registry.drain_timeout = 0.2
        await registry.load_all()
        stuck: Any = registry.get("slow")
        running = asyncio.create_task(Pipeline.of(registry).run(_request("slow")))
        await asyncio.sleep(0.01)
        await asyncio.wait_for(registry.unload("slow"), 5)
        assert stuck.unloaded
        stuck.release.set()
        with pytest.raises(Exception, match="predict ran after unload"):
            await running

    asyncio.run(run())


# ------------------------------------------------------------------ item 9: names and folders


def _names_repository(root: Path) -> Path:
    """good (loaded), idle (never loaded) and digits (version folders 1 and '²', which
    isdigit() calls a digit and int() refuses)."""
    for name in ("good", "idle"):
        (root / name).mkdir()
        (root / name / "model.py").write_text(ADD_MODEL)
    (root / "digits" / "1").mkdir(parents=True)
    (root / "digits" / "1" / "model.py").write_text(ADD_MODEL)
    (root / "digits" / "\u00b2").mkdir()
    (root / "digits" / "\u00b2" / "model.py").write_text("raise RuntimeError('not a version')\n")
    return root


@pytest.fixture(scope="module")
def names_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _names_repository(tmp_path_factory.mktemp("names"))


@pytest.fixture(scope="module")
def names_server(names_root: Path) -> Iterator[RunningServer]:
    with background(
        model_repository=str(names_root),
        model_control="explicit",
        load_models=("good", "digits"),
        log_level="critical",
    ) as running:
        yield running


def _call(
    server: RunningServer, method: str, path: str, body: bytes = b"", headers: Any = None
) -> tuple[int, dict[str, str], bytes]:
    host, port = server.http_address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    try:
        connection.request(method, path, body=body or None, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


LONG = "m" * 256  # one byte over a folder name's limit


@pytest.mark.grpc
def test_a_long_name_is_refused_on_every_endpoint(
    names_server: RunningServer, names_root: Path
) -> None:
    name = urllib.parse.quote(LONG)
    secret = str(names_root).encode()
    body = b'{"inputs": [{"name": "X", "shape": [1], "datatype": "FP32", "data": [1]}]}'
    for method, path, data in [
        ("GET", f"/v2/models/{name}", b""),
        ("GET", f"/v2/models/{name}/ready", b""),
        ("GET", f"/v2/models/{name}/config", b""),
        ("GET", f"/v2/models/{name}/stats", b""),
        ("POST", f"/v2/models/{name}/infer", body),
        ("POST", f"/v2/repository/models/{name}/load", b"{}"),
        ("POST", f"/v2/repository/models/{name}/unload", b"{}"),
        ("GET", f"/api/status/{name}", b""),
        ("POST", f"/api/modelcontrol/load/{name}", b""),
        ("POST", f"/api/modelcontrol/unload/{name}", b""),
    ]:
        status, headers, answer = _call(names_server, method, path, data)
        assert status in (400, 404), (path, status, answer[:300])
        assert secret not in answer and secret not in str(headers).encode(), path
        if path.startswith("/api/"):  # v1: the status code is in NV-Status
            code = text_format.Parse(headers["nv-status"], v1pb.RequestStatus()).code
            assert code in (v1pb.NOT_FOUND, v1pb.INVALID_ARG, v1pb.UNAVAILABLE), (path, code)
    header = 'batch_size: 1 input { name: "X" dims: 1 } output { name: "Y" }'
    status, headers, answer = _call(
        names_server, "POST", f"/api/infer/{name}", b"\0" * 4, {"NV-InferRequest": header}
    )
    assert status in (400, 404) and secret not in answer
    client = grpcclient.InferenceServerClient(names_server.grpc_address)
    try:
        for call in (
            lambda: client.is_model_ready(LONG),
            lambda: client.get_model_metadata(LONG),
            lambda: client.get_model_config(LONG),
            lambda: client.load_model(LONG),
            lambda: client.unload_model(LONG),
            lambda: client.infer(LONG, [grpcclient.InferInput("X", [1], "FP32")]),
        ):
            try:
                call()
            except InferenceServerException as exc:
                assert exc.status() in ("StatusCode.NOT_FOUND", "StatusCode.INVALID_ARGUMENT")
                assert str(names_root) not in exc.message()
    finally:
        client.close()
    channel = grpc.insecure_channel(names_server.grpc_address)
    try:
        stub = v1grpc.GRPCServiceStub(channel)
        answer = stub.Status(v1pb.StatusRequest(model_name=LONG), timeout=TIMEOUT)
        assert answer.request_status.code == v1pb.NOT_FOUND
        control = stub.ModelControl(
            v1pb.ModelControlRequest(model_name=LONG, type=v1pb.ModelControlRequest.LOAD),
            timeout=TIMEOUT,
        )
        assert control.request_status.code in (v1pb.NOT_FOUND, v1pb.INVALID_ARG)
        assert str(names_root) not in control.request_status.msg
    finally:
        channel.close()


@pytest.mark.grpc
def test_status_answers_with_a_folder_not_loaded(names_server: RunningServer) -> None:
    status, headers, body = _call(names_server, "GET", "/api/status")
    assert status == 200, headers
    document = text_format.Parse(body, v1pb.ServerStatus())
    assert document.model_status["good"].version_status[1].ready_state == v1pb.MODEL_READY
    idle = document.model_status["idle"].version_status[1]
    assert idle.ready_state == v1pb.MODEL_UNAVAILABLE
    assert "not loaded" in idle.ready_state_reason.message
    channel = grpc.insecure_channel(names_server.grpc_address)
    try:
        stub = v1grpc.GRPCServiceStub(channel)
        answer = stub.Status(v1pb.StatusRequest(), timeout=TIMEOUT)
        assert answer.request_status.code == v1pb.SUCCESS, answer.request_status
        models = answer.server_status.model_status
        assert models["idle"].version_status[1].ready_state == v1pb.MODEL_UNAVAILABLE
        assert models["good"].version_status[1].ready_state == v1pb.MODEL_READY
        one = stub.Status(v1pb.StatusRequest(model_name="idle"), timeout=TIMEOUT)
        assert one.request_status.code == v1pb.SUCCESS
    finally:
        channel.close()


@pytest.mark.grpc
def test_a_version_folder_that_is_no_number_is_skipped(names_server: RunningServer) -> None:
    client = grpcclient.InferenceServerClient(names_server.grpc_address)
    try:
        assert client.is_model_ready("digits", "1")
        client.load_model("digits")  # explicit mode: a load reads the folders again
        assert client.is_model_ready("digits", "1")
    finally:
        client.close()


@pytest.mark.grpc
def test_a_version_folder_that_is_no_number_in_control_mode_none(tmp_path: Path) -> None:
    root = _names_repository(tmp_path)
    with background(model_repository=str(root), log_level="critical") as running:
        client = grpcclient.InferenceServerClient(running.grpc_address)
        try:
            assert client.is_model_ready("digits", "1")
            assert client.is_model_ready("good")
        finally:
            client.close()


def test_a_load_error_shows_no_server_path(tmp_path: Path) -> None:
    (tmp_path / "syntax").mkdir()
    (tmp_path / "syntax" / "model.py").write_text("open(__file__ + '.weights')\n")
    with pytest.raises(ValueError) as caught:
        ModelRepository(tmp_path).read("syntax")
    assert "syntax/model.py.weights" in str(caught.value)
    assert str(tmp_path) not in str(caught.value)


# ------------------------------------------------------------------ item 8: labels and symlinks

LABELED_CONFIG = """{
  "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [-1],
              "label_filename": "%s"}]
}
"""


def _labeled(root: Path, label_filename: str) -> Path:
    folder = root / "labeled"
    folder.mkdir(exist_ok=True)
    (folder / "model.py").write_text(ADD_MODEL)
    (folder / "config.json").write_text(LABELED_CONFIG % label_filename)
    return folder


@pytest.mark.parametrize(
    ("label_filename", "expected"),
    [
        ("/etc/passwd", "relative to the model's folder"),
        ("../outside.txt", "without '..'"),
        ("sub/../../outside.txt", "without '..'"),
        ("link.txt", "leads out of the model's folder"),
        ("fifo", "not a regular file"),
        ("/dev/zero", "relative to the model's folder"),
        ("zero", "leads out of the model's folder"),
        ("huge.txt", "more than 16777216"),
        ("missing.txt", "cannot read the labels file"),
    ],
)
def test_a_labels_file_stays_inside_the_model_folder(
    tmp_path: Path, label_filename: str, expected: str
) -> None:
    import os

    root = tmp_path / "repository"
    root.mkdir()
    folder = _labeled(root, label_filename)
    (tmp_path / "outside.txt").write_text("root:x:0:0\n")
    (folder / "link.txt").symlink_to(tmp_path / "outside.txt")
    os.mkfifo(folder / "fifo")  # opening it for reading would wait for a writer for ever
    (folder / "zero").symlink_to("/dev/zero")
    with open(folder / "huge.txt", "wb") as huge:
        huge.truncate((16 << 20) + 1)
    with pytest.raises(ValueError) as caught:
        ModelRepository(root).read("labeled")
    message = str(caught.value)
    assert "labeled" in message and expected in message
    assert str(root) not in message  # the reason is shown to clients


def test_a_labels_file_inside_the_folder_is_read(tmp_path: Path) -> None:
    folder = _labeled(tmp_path, "labels/classes.txt")
    (folder / "labels").mkdir()
    (folder / "labels" / "classes.txt").write_text("zero\none\n")
    (model,) = ModelRepository(tmp_path).read("labeled").models
    assert model.class_labels("Y") == (b"zero", b"one")


def test_a_model_folder_linked_from_outside_is_refused_unless_allowed(tmp_path: Path) -> None:
    root = tmp_path / "repository"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "model.py").write_text(ADD_MODEL)
    (root / "linked").symlink_to(elsewhere)
    (root / "inside").mkdir()
    (root / "inside" / "model.py").write_text(ADD_MODEL)
    (root / "alias").symlink_to(root / "inside")  # a link within the repository: served
    with pytest.raises(ValueError, match=r"linked is a symlink leading out of the model reposi"):
        ModelRepository(root).read("linked")
    assert ModelRepository(root).read("alias").models[0].name == "alias"
    allowed = ModelRepository(root, allow_symlinks=True)
    assert allowed.read("linked").models[0].name == "linked"
    # the code alone linked from outside is refused too
    (root / "code").mkdir()
    (root / "code" / "model.py").symlink_to(elsewhere / "model.py")
    with pytest.raises(ValueError, match=r"code/model.py is a symlink leading out"):
        ModelRepository(root).read("code")


def test_the_symlink_option_from_the_command_line(tmp_path: Path) -> None:
    from oipcodec.cli import _repository_settings, build_parser

    parser = build_parser()
    args = parser.parse_args(
        ["serve", "--model-repository", str(tmp_path), "--allow-repository-symlinks"]
    )
    assert _repository_settings(args)["allow_repository_symlinks"] is True
    args = parser.parse_args(["serve", "--model-repository", str(tmp_path)])
    assert _repository_settings(args)["allow_repository_symlinks"] is False
    args = parser.parse_args(["serve", "--allow-repository-symlinks"])
    with pytest.raises(ValueError, match="need --model-repository"):
        _repository_settings(args)


@pytest.mark.grpc
def test_a_linked_folder_in_a_running_server(tmp_path: Path) -> None:
    root = tmp_path / "repository"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "model.py").write_text(ADD_MODEL)
    (root / "linked").symlink_to(tmp_path / "elsewhere")
    for allow in (False, True):
        with background(
            model_repository=str(root),
            allow_repository_symlinks=allow,
            log_level="critical",
        ) as running:
            client = grpcclient.InferenceServerClient(running.grpc_address)
            try:
                assert client.is_model_ready("linked") is allow
                if not allow:
                    (row,) = client.get_model_repository_index().models
                    assert "--allow-repository-symlinks" in row.reason
            finally:
                client.close()


def test_unload_drains_a_model_given_in_code() -> None:
    """The same drain for models given to the server directly (no repository)."""
    namespace: dict[str, Any] = {}
    exec(compile("GENERATION = 1\n" + SLOW_MODEL, "slow_model", "exec"), namespace)
    model = namespace["Slow"](name="slow")

    async def run() -> None:
        registry = ModelRegistry([model])
        await registry.load_all()
        running = [
            asyncio.create_task(Pipeline.of(registry).run(_request("slow"))) for _ in range(4)
        ]
        for _ in range(100):
            await asyncio.sleep(0)
        unloading = asyncio.create_task(registry.unload("slow"))
        await asyncio.sleep(0.05)
        assert not registry.is_ready("slow") and not unloading.done()
        assert namespace["EVENTS"] == []
        model.release.set()
        for result in await asyncio.gather(*running):
            response = result.response
            assert list(response.outputs[0].data) == [1.0, 2.0, 3.0]
        await asyncio.wait_for(unloading, 5)
        assert namespace["EVENTS"] == [("unload", 1, 4)]
        await registry.load("slow")  # loaded again: served again
        model.unloaded = False
        assert (await Pipeline.of(registry).run(_request("slow"))).response.outputs[0].name == "Y"

    asyncio.run(run())


SLEEPY_MODEL = """
import asyncio
import os

from oipcodec.server import Model, TensorSpec


class Sleepy(Model):
    inputs = [TensorSpec("X", "FP32", [-1])]
    outputs = [TensorSpec("Y", "FP32", [-1])]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.alive = True

    async def predict(self, inputs, parameters):
        await asyncio.sleep(0.5)
        if not self.alive:
            raise RuntimeError("predict ran after unload")
        return {"Y": inputs["X"] + 1}

    async def unload(self):
        self.alive = False
"""


def test_unload_drains_in_a_running_server(tmp_path: Path) -> None:
    """4 HTTP requests inside an async predict when the unload arrives: all 4 answered 200,
    and the unload answered once they are."""
    import threading
    import time

    (tmp_path / "sleepy").mkdir()
    (tmp_path / "sleepy" / "model.py").write_text(SLEEPY_MODEL)
    body = b'{"inputs": [{"name": "X", "shape": [1], "datatype": "FP32", "data": [1]}]}'
    with background(
        model_repository=str(tmp_path),
        model_control="explicit",
        load_models=("sleepy",),
        log_level="critical",
    ) as running:
        answers: list[int] = []

        def infer() -> None:
            answers.append(_call(running, "POST", "/v2/models/sleepy/infer", body)[0])

        threads = [threading.Thread(target=infer) for _ in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(0.2)  # the 4 are inside predict
        started = time.monotonic()
        status, _, answer = _call(running, "POST", "/v2/repository/models/sleepy/unload", b"{}")
        waited = time.monotonic() - started
        for thread in threads:
            thread.join(TIMEOUT)
        assert status == 200, answer
        assert answers == [200] * 4
        assert waited > 0.1  # it waited for them
        after = _call(running, "POST", "/v2/models/sleepy/infer", body)
        assert after[0] == 503 and b"unloaded" in after[2]
