"""A model repository on disk (``oipcodec serve --model-repository``), driven by the real
tritonclient over HTTP and gRPC: the index of the folders, load (which reads an edited model
afresh) and unload, a broken folder listed UNAVAILABLE with its reason, the configuration
files (config.json and config.pbtxt), Triton's model control modes (explicit: only the named
models at start; none: every model, load and unload refused), the settings that go together
and those that do not, and the command itself.

Every test writes its own repository into a temporary folder; the servers run in
subprocesses on free ports of 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import py_compile
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec.server import ServerConfig
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.repository import ModelRepository
from oipcodec.testing import RunningServer, background
from tests.support.ports import free_ports
from tests.support.serve_process import answers_ready, serve_process

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("tritonclient.http")
pytest.importorskip("tritonclient.grpc")
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

# ------------------------------------------------------------------------------ the repository

ADD_MODEL = """
from oipcodec.server import Model, TensorSpec

from . import helpers


class AddOne(Model):
    inputs = [TensorSpec("X", "FP32", [-1])]
    outputs = [TensorSpec("Y", "FP32", [-1])]

    def predict(self, inputs, parameters):
        return {"Y": inputs["X"] + helpers.AMOUNT}
"""

ADD_CONFIG = """{
  "name": "add_one",
  "max_batch_size": 4,
  "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [3]}],
  "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [3],
              "label_filename": "labels.txt"}],
  "parameters": {"origin": {"string_value": "config.json"}},
  "instance_group": [{"count": 1, "kind": "KIND_CPU"}]
}
"""

ECHO_MODEL = """
from oipcodec.server import Model


class Echo(Model):
    name = "named_in_code"
    inputs = None
    outputs = None

    def predict(self, inputs, parameters):
        return dict(inputs)


MODEL = Echo()
"""

SCALE_MODEL = """
from oipcodec.server import Model


class Scale(Model):
    def predict(self, inputs, parameters):
        return {"OUT": inputs["IN"] * int(self.config_parameters["factor"])}
"""

SCALE_CONFIG = """
name: "scale"
backend: "python"
input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]
parameters { key: "factor" value: { string_value: "3" } }
dynamic_batching { }
"""


def make_repository(root: Path) -> Path:
    """add_one (version folders 1 and 2, config.json, a labels file, a helper module beside
    its code), echo (no version folder, MODEL), scale (config.pbtxt declares its tensors),
    broken (its code fails to import) and empty (its code holds no model)."""
    (root / "add_one" / "1").mkdir(parents=True)
    (root / "add_one" / "1" / "model.py").write_text("raise RuntimeError('version 1 is old')\n")
    (root / "add_one" / "2").mkdir()
    (root / "add_one" / "2" / "model.py").write_text(ADD_MODEL)
    (root / "add_one" / "2" / "helpers.py").write_text("AMOUNT = 1\n")
    (root / "add_one" / "config.json").write_text(ADD_CONFIG)
    (root / "add_one" / "labels.txt").write_text("zero\none\ntwo\n")
    (root / "echo").mkdir()
    (root / "echo" / "model.py").write_text(ECHO_MODEL)
    (root / "scale").mkdir()
    (root / "scale" / "model.py").write_text(SCALE_MODEL)
    (root / "scale" / "config.pbtxt").write_text(SCALE_CONFIG)
    (root / "broken").mkdir()
    (root / "broken" / "model.py").write_text("import a_module_nobody_has\n")
    (root / "empty").mkdir()
    (root / "empty" / "model.py").write_text("VALUE = 1\n")
    (root / ".hidden").mkdir()  # not a model
    return root


def _index(client: Any) -> dict[str, tuple[str, str, str]]:
    """The repository index by name: (version, state, reason), from either client."""
    rows = client.get_model_repository_index()
    if isinstance(rows, list):  # HTTP: a list of dicts
        return {r["name"]: (r.get("version", ""), r.get("state", ""), r.get("reason", "")) for r in rows}  # fmt: skip
    return {m.name: (m.version, m.state, m.reason) for m in rows.models}


def _infer_add(client: Any, module: Any, values: list[float]) -> np.ndarray[Any, Any]:
    data = np.array([values], dtype=np.float32)
    tensor = module.InferInput("X", list(data.shape), "FP32")
    tensor.set_data_from_numpy(data)
    result = client.infer("add_one", [tensor])
    out: np.ndarray[Any, Any] = result.as_numpy("Y")
    return out


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository of the module's server."""
    return make_repository(tmp_path_factory.mktemp("repository"))


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[RunningServer]:
    """Model control explicit, add_one and broken loaded at start."""
    with background(
        model_repository=str(root),
        model_control="explicit",
        load_models=("add_one", "broken"),
        log_level="critical",
    ) as running:
        yield running


# ------------------------------------------------------------------------------ explicit mode


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_index_lists_every_folder(http: Any, grpc: Any, protocol: str) -> None:
    index = _index(http if protocol == "http" else grpc)
    assert index["add_one"] == ("2", "READY", "")
    assert index["echo"] == ("", "UNAVAILABLE", "not loaded")
    assert index["empty"] == ("", "UNAVAILABLE", "not loaded")
    assert index["broken"][:2] == ("", "UNAVAILABLE")
    assert (
        index["broken"][2]
        == "broken/model.py: ModuleNotFoundError: No module named 'a_module_nobody_has'"
    )
    assert ".hidden" not in index


def test_ready_only_index(http: Any) -> None:
    names = {row["name"] for row in http.get_model_repository_index()}
    assert {"add_one", "broken", "echo", "empty", "scale"} <= names
    assert not http.is_model_ready("echo")


def test_highest_version_with_its_configuration(http: Any, grpc: Any) -> None:
    assert http.get_model_metadata("add_one")["versions"] == ["2"]
    config = http.get_model_config("add_one")
    assert config["max_batch_size"] == 4
    assert config["input"][0]["dims"] == [3]
    assert config["parameters"] == {"origin": {"string_value": "config.json"}}
    assert grpc.get_model_metadata("add_one").inputs[0].shape == [-1, 3]
    np.testing.assert_array_equal(_infer_add(http, httpclient, [1, 2, 3]), [[2, 3, 4]])
    np.testing.assert_array_equal(_infer_add(grpc, grpcclient, [0, 0, 9]), [[1, 1, 10]])


def test_shape_of_the_configuration_is_checked(http: Any) -> None:
    with pytest.raises(InferenceServerException, match=r"expects \[-1, 3\]"):
        _infer_add(http, httpclient, [1, 2])


def test_labels_file_of_the_configuration(http: Any) -> None:
    data = np.array([[5, 1, 0]], dtype=np.float32)
    tensor = httpclient.InferInput("X", [1, 3], "FP32")
    tensor.set_data_from_numpy(data)
    asked = httpclient.InferRequestedOutput("Y", class_count=1)
    result = http.infer("add_one", [tensor], outputs=[asked])
    assert result.as_numpy("Y").tolist() == [[b"6.000000:0:zero"]]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_load_infer_unload(http: Any, grpc: Any, protocol: str) -> None:
    client = http if protocol == "http" else grpc
    module = httpclient if protocol == "http" else grpcclient
    client.load_model("echo")
    try:
        assert client.is_model_ready("echo")
        # the folder names the model, whatever its code says
        assert _index(client)["echo"] == ("1", "READY", "")
        data = np.array([1, 2], dtype=np.int64)
        tensor = module.InferInput("A", [2], "INT64")
        tensor.set_data_from_numpy(data)
        np.testing.assert_array_equal(client.infer("echo", [tensor]).as_numpy("A"), data)
    finally:
        client.unload_model("echo")
    assert not client.is_model_ready("echo")
    assert _index(client)["echo"] == ("", "UNAVAILABLE", "unloaded")
    tensor = module.InferInput("A", [1], "INT64")
    tensor.set_data_from_numpy(np.array([1], dtype=np.int64))
    with pytest.raises(InferenceServerException, match="'echo' has no available versions"):
        client.infer("echo", [tensor])


def test_configuration_in_protobuf_text(grpc: Any) -> None:
    grpc.load_model("scale")
    try:
        metadata = grpc.get_model_metadata("scale")
        assert [(t.name, t.datatype, list(t.shape)) for t in metadata.inputs] == [
            ("IN", "INT32", [-1])
        ]
        tensor = grpcclient.InferInput("IN", [2], "INT32")
        tensor.set_data_from_numpy(np.array([2, 5], dtype=np.int32))
        assert grpc.infer("scale", [tensor]).as_numpy("OUT").tolist() == [6, 15]
    finally:
        grpc.unload_model("scale")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_edited_model_is_read_again(http: Any, grpc: Any, root: Path, protocol: str) -> None:
    client = http if protocol == "http" else grpc
    module = httpclient if protocol == "http" else grpcclient
    code = root / "add_one" / "2" / "model.py"
    helpers = root / "add_one" / "2" / "helpers.py"
    try:
        # A bytecode cache of the code loaded at start (as an import writes it where
        # PYTHONDONTWRITEBYTECODE is unset), then an edit of the same size and mtime: the
        # cache would not see it, only a fresh compile does.
        py_compile.compile(str(helpers), cfile=importlib.util.cache_from_source(str(helpers)))
        stat = helpers.stat()
        helpers.write_text("AMOUNT = 5\n")
        os.utime(helpers, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        client.load_model("add_one")
        np.testing.assert_array_equal(_infer_add(client, module, [1, 2, 3]), [[6, 7, 8]])
        code.write_text(ADD_MODEL.replace("+ helpers.AMOUNT", "* 10"))
        client.load_model("add_one")
        np.testing.assert_array_equal(_infer_add(client, module, [1, 2, 3]), [[10, 20, 30]])
    finally:
        helpers.write_text("AMOUNT = 1\n")
        code.write_text(ADD_MODEL)
        client.load_model("add_one")
    np.testing.assert_array_equal(_infer_add(client, module, [1, 2, 3]), [[2, 3, 4]])


def test_load_with_a_configuration_override(http: Any) -> None:
    try:
        http.load_model("add_one", config='{"max_batch_size": 2}')
        assert http.get_model_config("add_one")["max_batch_size"] == 2
    finally:
        http.load_model("add_one")  # the folder's configuration again
    assert http.get_model_config("add_one")["max_batch_size"] == 4


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_failed_reload_keeps_the_model_in_use(
    http: Any, grpc: Any, root: Path, protocol: str
) -> None:
    client = http if protocol == "http" else grpc
    module = httpclient if protocol == "http" else grpcclient
    code = root / "add_one" / "2" / "model.py"
    try:
        code.write_text(ADD_MODEL + "\ndef unfinished(:\n")
        with pytest.raises(
            InferenceServerException,
            match=r"failed to load 'add_one': add_one/2/model.py: SyntaxError",
        ):
            client.load_model("add_one")
        np.testing.assert_array_equal(_infer_add(client, module, [1, 2, 3]), [[2, 3, 4]])
    finally:
        code.write_text(ADD_MODEL)


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_broken_and_empty_folders(http: Any, grpc: Any, root: Path, protocol: str) -> None:
    client = http if protocol == "http" else grpc
    with pytest.raises(InferenceServerException, match="a_module_nobody_has"):
        client.load_model("broken")
    with pytest.raises(InferenceServerException, match=r"empty/model\.py holds no model"):
        client.load_model("empty")
    assert _index(client)["empty"][1:] == (
        "UNAVAILABLE",
        "empty/model.py holds no model: define MODEL = MyModel(), MODELS = [MyModel()] or "
        "one oipcodec.server.Model subclass",
    )
    with pytest.raises(InferenceServerException, match="unknown model; the model repository"):
        client.load_model("nowhere")


def test_broken_folder_repaired(http: Any, root: Path) -> None:
    code = root / "broken" / "model.py"
    try:
        code.write_text(ECHO_MODEL)
        http.load_model("broken")
        assert _index(http)["broken"] == ("1", "READY", "")
    finally:
        code.write_text("import a_module_nobody_has\n")
        http.unload_model("broken")
    assert _index(http)["broken"][1:] == ("UNAVAILABLE", "unloaded")


def test_model_files_in_a_load_request_are_refused(http: Any) -> None:
    with pytest.raises(InferenceServerException, match="model files in a load request"):
        http.load_model("echo", files={"file:1/model.py": b"MODEL = None"})


# ------------------------------------------------------------------------------ none mode


@pytest.mark.grpc
def test_none_mode_loads_everything_and_refuses_control(tmp_path: Path) -> None:
    root = make_repository(tmp_path)
    with background(model_repository=str(root), log_level="critical") as running:
        http = httpclient.InferenceServerClient(running.http_address)
        grpc = grpcclient.InferenceServerClient(running.grpc_address)
        try:
            index = _index(grpc)
            assert {name for name, row in index.items() if row[1] == "READY"} == {
                "add_one",
                "echo",
                "scale",
            }
            assert "holds no model" in index["empty"][2]
            for client in (http, grpc):
                for action in (client.load_model, client.unload_model):
                    with pytest.raises(InferenceServerException) as caught:
                        action("echo")
                    assert "explicit model load / unload is not allowed if polling is enabled" in (
                        caught.value.message()
                    )
            assert http.is_model_ready("echo")
        finally:
            http.close()
            grpc.close()


def test_every_model_at_start_in_explicit_mode(tmp_path: Path) -> None:
    root = make_repository(tmp_path)
    with background(
        model_repository=str(root), model_control="explicit", load_models=("*",), log_level=None
    ) as running:
        http = httpclient.InferenceServerClient(running.http_address)
        try:
            ready = {r["name"] for r in http.get_model_repository_index() if r.get("state") == "READY"}  # fmt: skip
            assert ready == {"add_one", "echo", "scale"}
        finally:
            http.close()


def test_several_workers_each_read_the_repository(tmp_path: Path) -> None:
    root = make_repository(tmp_path)
    with background(model_repository=str(root), workers=2, log_level="critical") as running:
        http = httpclient.InferenceServerClient(running.http_address)
        try:
            for _ in range(4):  # new connections: either worker may answer
                np.testing.assert_array_equal(_infer_add(http, httpclient, [1, 1, 1]), [[2, 2, 2]])
                http.close()
                http = httpclient.InferenceServerClient(running.http_address)
        finally:
            http.close()


# ------------------------------------------------------------------------------ in-process


def test_sys_modules_hold_only_the_import_in_use(tmp_path: Path) -> None:
    root = make_repository(tmp_path)
    prefix = "oipcodec_repository_"

    def imported() -> list[str]:
        return sorted(name for name in sys.modules if name.startswith(prefix))

    before = imported()

    async def run() -> None:
        registry = ModelRegistry(repository=ModelRepository(root, "explicit", ["add_one"]))
        await registry.load_all()
        first = imported()
        assert len(first) == len(before) + 3  # the package, model and helpers
        await registry.load("add_one")
        await registry.load("add_one")
        again = imported()
        assert len(again) == len(first) and again != first
        with pytest.raises(Exception, match="a_module_nobody_has"):
            await registry.load("broken")
        assert imported() == again
        await registry.unload("add_one")
        assert imported() == before
        await registry.load("echo")
        await registry.unload_all()
        assert imported() == before

    asyncio.run(run())


def test_config_names_another_model(tmp_path: Path) -> None:
    root = make_repository(tmp_path)
    (root / "echo" / "config.json").write_text('{"name": "other"}')
    with pytest.raises(ValueError, match="names model 'other'; it must be the folder's name"):
        ModelRepository(root).read("echo")
    (root / "echo" / "config.pbtxt").write_text('name: "echo"')
    with pytest.raises(ValueError, match=r"both config\.json and config\.pbtxt"):
        ModelRepository(root).read("echo")


def test_class_instead_of_instance(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.py").write_text(ECHO_MODEL.replace("MODEL = Echo()", "MODEL = Echo"))
    with pytest.raises(ValueError, match=r"m/model.py: MODEL is a class .*not an instance"):
        ModelRepository(tmp_path).read("m")


def test_settings_that_do_not_go_together(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot be used together"):
        ServerConfig(model_repository=str(tmp_path), model_module="tests.support.server_models")
    with pytest.raises(ValueError, match="is not a directory"):
        ServerConfig(model_repository=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="load_models needs model_control 'explicit'"):
        ServerConfig(model_repository=str(tmp_path), load_models=("a",))
    with pytest.raises(ValueError, match="needs a model_repository"):
        ServerConfig(model_control="explicit")
    with pytest.raises(ValueError, match="model_control must be one of none, explicit"):
        ServerConfig(model_repository=str(tmp_path), model_control="poll")
    config = ServerConfig(model_repository=str(tmp_path), model_control="explicit", load_models=["a"])  # type: ignore[arg-type]  # fmt: skip
    assert config.load_models == ("a",)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--model-module", "tests.support.server_models"], "cannot be used together"),
        (["--load-model", "a"], "--load-model needs --model-control explicit"),
    ],
)
def test_command_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], expected: str
) -> None:
    from oipcodec.cli import main

    assert main(["serve", "--model-repository", str(tmp_path), *arguments]) == 2
    assert expected in capsys.readouterr().err


def test_command_refuses_control_without_repository(capsys: pytest.CaptureFixture[str]) -> None:
    from oipcodec.cli import main

    assert main(["serve", "--model-control", "explicit"]) == 2
    assert "need --model-repository" in capsys.readouterr().err


def test_control_choices_are_the_modes() -> None:
    from oipcodec.cli import build_parser
    from oipcodec.server.repository import MODEL_CONTROL_MODES

    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    serve = commands.choices["serve"]  # type: ignore[index]
    option = next(a for a in serve._actions if a.dest == "model_control")
    assert tuple(option.choices) == MODEL_CONTROL_MODES


# ------------------------------------------------------------------------------ the command


def test_serve_a_repository_from_the_command(tmp_path: Path) -> None:
    make_repository(tmp_path / "models")
    http_port, grpc_port = free_ports(2)
    arguments = ["--model-repository", "models", "--http-port", str(http_port)]
    arguments += ["--grpc-port", str(grpc_port)]
    ready = answers_ready(f"127.0.0.1:{http_port}")
    with serve_process(*arguments, cwd=tmp_path, ready=ready) as process:
        client = httpclient.InferenceServerClient(f"127.0.0.1:{http_port}")
        try:
            np.testing.assert_array_equal(_infer_add(client, httpclient, [1, 2, 3]), [[2, 3, 4]])
        finally:
            client.close()
        os.kill(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    failures = [line for line in output.splitlines() if "failed to load" in line]
    assert len(failures) == 2, output
    assert failures[0].endswith(
        "failed to load 'broken': broken/model.py: ModuleNotFoundError: "
        "No module named 'a_module_nobody_has'"
    )
    assert "empty/model.py holds no model" in failures[1]
    assert "Traceback" not in output
    assert "ignored what oipcodec does not read: instance_group" in output


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ('{"input": [{"name": "X", "data_type": "TYPE_FOO"}]}', r"echo/config\.json: .*TYPE_FOO"),
        ('{"input": [{"name": "X", "dims": [1]}]}', r"echo/config\.json: input 'X': no data_type"),
        (
            '{"input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [-2]}]}',
            r"echo/config\.json: tensor 'X': shape dimensions are >= 0, or -1",
        ),
        ("[1]", r"echo/config\.json: not a JSON object"),
        ("{", r"echo/config\.json: Expecting property name"),
    ],
)
def test_configuration_errors_name_the_file(tmp_path: Path, config: str, expected: str) -> None:
    root = make_repository(tmp_path)
    (root / "echo" / "config.json").write_text(config)
    with pytest.raises(ValueError, match=expected):
        ModelRepository(root).read("echo")


def test_models_of_one_folder(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    code = ECHO_MODEL.replace("MODEL = Echo()", "MODELS = [Echo(), Echo(version='2')]")
    (tmp_path / "m" / "model.py").write_text(code)
    with pytest.raises(ValueError, match="MODELS holds 2 models; a model folder serves one"):
        ModelRepository(tmp_path).read("m")
    (tmp_path / "m" / "model.py").write_text(code.replace(", Echo(version='2')", ""))
    loaded = ModelRepository(tmp_path).read("m")
    assert [(m.name, m.version) for m in loaded.models] == [("m", "1")]


def test_the_repository_finder_leaves_importlib_invalidate_caches_working() -> None:
    import importlib

    from oipcodec.server import repository

    repository._install_finder()
    repository._install_finder()  # once only
    assert sum(finder is repository._FINDER for finder in sys.meta_path) == 1
    importlib.invalidate_caches()  # a class on sys.meta_path made this a TypeError
