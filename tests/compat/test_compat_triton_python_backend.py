"""``oipcodec.compat.triton_python_backend``: the Python backend's BYTES conversions on the kernels.

In-process, the replacements against the backend's own ``triton_python_backend_utils.py`` (it
imports only numpy, json and struct; the file comes from the Triton environment,
tools/triton_env.sh): same results on every element kind, same errors, install / uninstall.
With the real tritonserver, the model.py of docs/compat.md (with ``install()``) and the same
file without that line, side by side in one repository, called by the real tritonclient over
HTTP (binary and JSON) and gRPC: the answers must be byte-identical on empty strings, NUL bytes,
non-UTF-8, ``[batch, n]`` and 1-D shapes, and large tensors.
"""

from __future__ import annotations

import importlib.util
import struct
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from oipcodec.compat import triton_python_backend as tpb
from oipcodec.errors import BytesTensorError, DatatypeError, ShapeError
from tests.support.doc_recipes import DOCS, recipe
from tests.support.triton import Triton, triton_env, tritonserver

INSTALL_LINE = "triton_python_backend.install()\n"
# The two functions install() replaces on the utilities module.
UTILS_NAMES = ("serialize_byte_tensor", "deserialize_bytes_tensor")

# Object arrays of every element kind the stock loop handles (bytes as they are, anything else
# as str() in UTF-8), an S array (trailing NULs dropped), and shapes of every rank.
OBJECT_CASES: list[np.ndarray[Any, Any]] = [
    np.array([b"", b"a\x00b", b"\xff\xfe\x00", b"x" * 64], dtype=object),
    np.array(["h\u00e9llo", "", "\u2603"], dtype=object),
    np.array([1, 2.5, None, True, bytearray(b"ba"), np.bytes_(b"nb"), np.str_("ns")], dtype=object),
    np.array([[b"a", b"bb"], [b"", b"\x00"]], dtype=object),
    np.array([b"only"], dtype=object).reshape(1, 1, 1),
    np.array([b"z" * 100_000, b""], dtype=object),
    np.array([b"ab\x00\x00", b"\x00c", b""], dtype="S4"),
    np.array([[b"k" * 64] * 50] * 20, dtype=object),
]


@pytest.fixture(scope="module")
def stock() -> ModuleType:
    """The backend's own ``triton_python_backend_utils``, imported from its file."""
    path = (
        Path(triton_env()["OIPCODEC_TRITON_BACKENDS"]) / "python" / "triton_python_backend_utils.py"
    )
    spec = importlib.util.spec_from_file_location("triton_python_backend_utils", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("array", OBJECT_CASES, ids=range(len(OBJECT_CASES)))
def test_serialize_gives_the_stock_bytes(stock: ModuleType, array: np.ndarray[Any, Any]) -> None:
    got = tpb.serialize_byte_tensor(array)
    assert type(got) is bytes  # the stub takes the buffer itself: an array holding it is 8 bytes
    assert got == stock.serialize_byte_tensor(array)
    assert np.asarray(got).nbytes == len(got)


def test_serialize_edges_as_stock(stock: ModuleType) -> None:
    for empty in (np.array([], dtype=object), np.empty((2, 0), dtype=object)):
        assert tpb.serialize_byte_tensor(empty) == stock.serialize_byte_tensor(empty) == ()
    numbers = np.arange(3)
    assert tpb.serialize_byte_tensor(numbers) is stock.serialize_byte_tensor(numbers) is None
    lone_surrogate = np.array(["\ud800"], dtype=object)
    with pytest.raises(UnicodeEncodeError):
        stock.serialize_byte_tensor(lone_surrogate)
    with pytest.raises(UnicodeEncodeError):
        tpb.serialize_byte_tensor(lone_surrogate)


@pytest.mark.parametrize("array", OBJECT_CASES, ids=range(len(OBJECT_CASES)))
def test_deserialize_gives_the_stock_array(stock: ModuleType, array: np.ndarray[Any, Any]) -> None:
    # What the stub passes: a 1-D uint8 array over the request's framed buffer.
    framed = np.frombuffer(stock.serialize_byte_tensor(array), dtype=np.uint8)
    want = stock.deserialize_bytes_tensor(framed)
    got = tpb.deserialize_bytes_tensor(framed)
    assert got.dtype == want.dtype == np.object_
    assert got.shape == want.shape
    assert [type(e) for e in got] == [bytes] * got.size
    assert got.tolist() == want.tolist()
    assert got.reshape(array.shape).shape == array.shape


def test_deserialize_empty_and_malformed_as_stock(stock: ModuleType) -> None:
    empty = np.empty(0, dtype=np.uint8)
    assert (
        tpb.deserialize_bytes_tensor(empty).tolist()
        == stock.deserialize_bytes_tensor(empty).tolist()
        == []
    )
    assert tpb.deserialize_bytes_tensor(empty).dtype == np.object_
    for bad in (b"\x01\x00", b"\x05\x00\x00\x00abc", b"\x00\x00\x00\x00\x09"):
        with pytest.raises(struct.error):
            stock.deserialize_bytes_tensor(np.frombuffer(bad, dtype=np.uint8))
        with pytest.raises(struct.error):  # BytesTensorError is one
            tpb.deserialize_bytes_tensor(np.frombuffer(bad, dtype=np.uint8))
    with pytest.raises(BytesTensorError, match="offset"):
        tpb.deserialize_bytes_tensor(b"\x05\x00\x00\x00abc")


def test_install_and_uninstall_on_the_utils_module(stock: ModuleType) -> None:
    originals = (stock.serialize_byte_tensor, stock.deserialize_bytes_tensor)
    assert not tpb.installed(stock)
    tpb.uninstall(stock)  # nothing to undo
    tpb.install(stock)
    tpb.install(stock)  # idempotent: the originals are not lost
    try:
        assert tpb.installed(stock)
        assert stock.serialize_byte_tensor is tpb.serialize_byte_tensor
        assert stock.deserialize_bytes_tensor is tpb.deserialize_bytes_tensor
    finally:
        tpb.uninstall(stock)
    assert (stock.serialize_byte_tensor, stock.deserialize_bytes_tensor) == originals
    assert not tpb.installed(stock)


def test_install_and_uninstall_from_threads_keep_the_originals() -> None:
    """install() and uninstall() called at once from several threads, 400 rounds: whatever
    the order, one uninstall() at the end gives back the backend's own functions (without the
    lock, two installs at once saved each other's replacements as the originals). The module
    stands for the stub's utilities: install() reads and writes only its two names."""
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race shows
    try:
        lost = 0
        for _ in range(400):
            module = ModuleType(tpb.UTILS_MODULE)
            originals = {name: (lambda *args, _name=name: _name) for name in UTILS_NAMES}
            vars(module).update(originals)
            start = threading.Barrier(4)

            def churn(
                first: Any, second: Any, module: ModuleType = module, start: Any = start
            ) -> None:
                start.wait()
                for _ in range(3):
                    first(module)
                    second(module)

            threads = [
                threading.Thread(target=churn, args=pair)
                for pair in [(tpb.install, tpb.uninstall)] * 2 + [(tpb.uninstall, tpb.install)] * 2
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            tpb.uninstall(module)
            lost += any(getattr(module, name) is not originals[name] for name in UTILS_NAMES)
    finally:
        sys.setswitchinterval(switch)
    assert lost == 0, f"the backend's own functions were lost in {lost} of 400 rounds"


def test_install_outside_the_stub_names_the_module() -> None:
    if importlib.util.find_spec(tpb.UTILS_MODULE) is not None:
        pytest.skip("triton_python_backend_utils is importable here")
    with pytest.raises(ModuleNotFoundError, match="triton_python_backend_utils"):
        tpb.install()


def test_helpers_for_a_models_own_buffers() -> None:
    array = np.array([[b"a", b""], [b"\x00", b"\xff" * 3]], dtype=object)
    framed = tpb.bytes_array_to_framed(array)
    assert framed == b"".join(struct.pack("<I", len(e)) + e for e in array.ravel())
    assert tpb.framed_to_bytes_array(framed, (2, 2)).tolist() == array.tolist()
    assert tpb.framed_to_bytes_array(framed).tolist() == array.ravel().tolist()
    assert tpb.bytes_array_to_framed(np.empty((0, 3), dtype=object)) == b""
    assert tpb.framed_to_bytes_array(b"", [0, 3]).shape == (0, 3)
    with pytest.raises(BytesTensorError, match="4"):
        tpb.framed_to_bytes_array(framed, (3, 2))  # 4 elements where 6 are expected
    with pytest.raises(BytesTensorError):
        tpb.framed_to_bytes_array(framed, (1, 3))  # more elements than the shape holds
    with pytest.raises(ShapeError, match="negative"):
        tpb.framed_to_bytes_array(framed, (-1, 4))
    with pytest.raises(DatatypeError, match="float32"):
        tpb.bytes_array_to_framed(np.zeros(3, dtype=np.float32))


# ----------------------------------------------------------------------------- the real server

BATCHED = "texts"  # the page's config: max_batch_size 8, requests [batch, n]
FLAT = "flat"  # max_batch_size 0, requests [n]
FLAT_CONFIG = """backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
"""


def _repository(root: Path) -> Path:
    """Four models: the page's model.py with install() and the same file without that line,
    each with the page's batched config and with a 1-D one."""
    files, _ = recipe("compat.md", "Triton's Python backend")
    model, config = files["model.py"], files["config.pbtxt"]
    assert INSTALL_LINE in model
    stock_model = model.replace(INSTALL_LINE, "")
    for name, text, cfg in (
        (BATCHED, model, config),
        (BATCHED + "_stock", stock_model, config),
        (FLAT, model, FLAT_CONFIG),
        (FLAT + "_stock", stock_model, FLAT_CONFIG),
    ):
        (root / name / "1").mkdir(parents=True)
        (root / name / "config.pbtxt").write_text(cfg)
        (root / name / "1" / "model.py").write_text(text)
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Triton, Path]]:
    if not (DOCS / "compat.md").is_file():
        pytest.skip("docs/ is not next to tests/")
    root = tmp_path_factory.mktemp("tpb")
    log = root / "triton.log"
    with tritonserver(_repository(root / "repo"), log) as triton:
        yield triton, log


def test_the_log_says_which_models_run_on_the_kernels(server: tuple[Triton, Path]) -> None:
    log = server[1].read_text(errors="replace")
    for name in (BATCHED, FLAT):
        assert f"{name}: oipcodec kernels installed: True" in log, log[-3000:]
        assert f"{name}_stock: oipcodec kernels installed: False" in log, log[-3000:]


SERVER_CASES: dict[str, tuple[str, np.ndarray[Any, Any]]] = {
    "batched_edges": (
        BATCHED,
        np.array(
            [[b"", b"a\x00b", b"\xff\xfe", b"\x00"], [b"x" * 64, b"", b"\x80abc", b"\x00\x00"]],
            dtype=object,
        ),
    ),
    "batched_one_row": (BATCHED, np.array([[b"\xc3\x28", b"plain"]], dtype=object)),
    "flat_edges": (FLAT, np.array([b"", b"\x00", b"\xff" * 5, b"ok", b""], dtype=object)),
    "flat_empty": (FLAT, np.array([], dtype=object)),
    "batched_empty_rows": (BATCHED, np.empty((2, 0), dtype=object)),
    "flat_large": (FLAT, np.array([bytes([i % 256]) * 64 for i in range(20_000)], dtype=object)),
    "flat_large_element": (FLAT, np.array([b"\x00\xff" * 500_000, b"", b"e"], dtype=object)),
    "batched_large": (
        BATCHED,
        np.array([[b"%05d" % i + b"\x00" * 59 for i in range(2_000)]] * 8, dtype=object),
    ),
}


def _http(triton: Triton, model: str, array: np.ndarray[Any, Any], binary: bool) -> tuple[Any, ...]:
    import tritonclient.http as http

    client = http.InferenceServerClient(triton.http, network_timeout=120.0)
    try:
        tensor = http.InferInput("INPUT0", list(array.shape), "BYTES")
        tensor.set_data_from_numpy(array, binary_data=binary)
        wanted = [http.InferRequestedOutput("OUTPUT0", binary_data=binary)]
        result = client.infer(model, [tensor], outputs=wanted)
        output = result.get_output("OUTPUT0")
        got = result.as_numpy("OUTPUT0")
        return output["datatype"], output["shape"], got.dtype, got.tolist()
    finally:
        client.close()


def _grpc(triton: Triton, model: str, array: np.ndarray[Any, Any]) -> tuple[Any, ...]:
    import tritonclient.grpc as grpc

    client = grpc.InferenceServerClient(triton.grpc)
    try:
        tensor = grpc.InferInput("INPUT0", list(array.shape), "BYTES")
        tensor.set_data_from_numpy(array)
        result = client.infer(model, [tensor], client_timeout=120.0)
        output = result.get_output("OUTPUT0")
        got = result.as_numpy("OUTPUT0")
        return output.datatype, list(output.shape), got.dtype, got.tolist()
    finally:
        client.close()


@pytest.mark.parametrize("transport", ["http_binary", "http_json", "grpc"])
@pytest.mark.parametrize("case", list(SERVER_CASES))
def test_answers_identical_with_and_without_install(
    server: tuple[Triton, Path], transport: str, case: str
) -> None:
    pytest.importorskip("tritonclient.http")
    pytest.importorskip("tritonclient.grpc")
    model, array = SERVER_CASES[case]
    if transport == "http_json":
        # JSON carries BYTES as text: tritonclient refuses non-UTF-8 there, with or without us
        ascii_only = [e.decode("latin-1").encode("ascii", "replace") for e in array.ravel()]
        array = np.array(ascii_only, dtype=object).reshape(array.shape)
    triton = server[0]

    def call(name: str) -> tuple[Any, ...]:
        if transport == "grpc":
            return _grpc(triton, name, array)
        return _http(triton, name, array, binary=transport == "http_binary")

    with_kernels, stock = call(model), call(model + "_stock")
    assert with_kernels == stock
    datatype, shape, dtype, values = with_kernels
    assert (datatype, shape, dtype) == ("BYTES", list(array.shape), np.object_)
    if transport != "http_json":
        # tritonclient's JSON path gives str and loses NULs, with or without us: that transport
        # is held to the stock model's answer only
        assert values == array.tolist()


# ----------------------------------------------------------------------------- BF16 over DLPack

BF16_CONFIG = """backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_BF16 dims: [ -1, -1 ] } ]
output [
  { name: "OUTPUT0" data_type: TYPE_BF16 dims: [ -1, -1 ] },
  { name: "WIDE" data_type: TYPE_FP32 dims: [ -1, -1 ] },
  { name: "DOUBLED" data_type: TYPE_BF16 dims: [ -1, -1 ] }
]
"""

# The stub has no numpy form for BF16: the helpers read and write it over DLPack.
BF16_MODEL = """
import numpy as np
import triton_python_backend_utils as pb_utils
from oipcodec.compat import triton_python_backend as tpb


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            values = tpb.bf16_to_numpy(pb_utils.get_input_tensor_by_name(request, "INPUT0"))
            wide = values.astype(np.float32)
            outputs = [
                tpb.bf16_tensor("OUTPUT0", values),
                pb_utils.Tensor("WIDE", wide),
                tpb.bf16_tensor("DOUBLED", wide * 2),
            ]
            responses.append(pb_utils.InferenceResponse(outputs))
        return responses
"""


@pytest.fixture(scope="module")
def bf16_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Triton]:
    root = tmp_path_factory.mktemp("tpb_bf16")
    (root / "repo" / "bf16" / "1").mkdir(parents=True)
    (root / "repo" / "bf16" / "config.pbtxt").write_text(BF16_CONFIG)
    (root / "repo" / "bf16" / "1" / "model.py").write_text(BF16_MODEL)
    with tritonserver(root / "repo", root / "triton.log") as triton:
        yield triton


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_bf16_in_and_out_of_a_python_model(bf16_server: Triton, transport: str) -> None:
    pytest.importorskip("grpc")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from oipcodec import Tensor
    from oipcodec.client import GrpcClient, HttpClient

    special = [0.0, -0.0, 1.0, -2.5, 3.140625, 1e-40, 3.0e38, np.inf, -np.inf]
    values = np.array(special + [float(i) / 7 for i in range(27)], dtype=np.float32).reshape(4, 9)
    sent = values.astype(ml_dtypes.bfloat16)
    inputs = [Tensor("INPUT0", "BF16", sent.shape, sent)]
    if transport == "http":
        with HttpClient(f"http://{bf16_server.http}") as http:
            answer = http.infer("bf16", inputs)
    else:
        with GrpcClient(bf16_server.grpc) as grpc:
            answer = grpc.infer("bf16", inputs)
    identity, wide, doubled = (answer.output(n) for n in ("OUTPUT0", "WIDE", "DOUBLED"))
    assert identity.datatype == doubled.datatype == "BF16" and wide.datatype == "FP32"
    assert list(identity.shape) == list(wide.shape) == [4, 9]
    bits = sent.view(np.uint16)
    assert np.array_equal(np.asarray(identity.data).view(np.uint16), bits)  # every bit, -0.0 too
    assert np.array_equal(np.asarray(wide.data).view(np.uint32), bits.astype(np.uint32) << 16)
    with np.errstate(over="ignore"):  # 3e38 doubled is inf, in the model too
        twice = (sent.astype(np.float32) * 2).astype(ml_dtypes.bfloat16)
    assert np.array_equal(np.asarray(doubled.data).view(np.uint16), twice.view(np.uint16))


def test_bf16_helpers_refuse_what_is_not_bf16() -> None:
    with pytest.raises(DatatypeError, match=r"'OUT'.*int32"):
        tpb.bf16_tensor("OUT", np.arange(3, dtype=np.int32))
    # the capsule check the input side makes: a float32 capsule is not relabelled
    capsule = np.zeros(2, dtype=np.float32).__dlpack__()
    with pytest.raises(DatatypeError, match="code 2, 32 bits"):
        tpb._relabel(capsule, tpb._KDL_BFLOAT, tpb._KDL_UINT, "tensor 'IN': expected BF16")


def test_the_benchmark_gives_the_rows_the_adapters_script_reads() -> None:
    # A smoke test of benchmarks/load/triton_python_backend.py (its own server): the row
    # layout, never a speed.
    triton_env()
    from benchmarks.load.triton_python_backend import run_triton_python_backend

    rows = run_triton_python_backend(rounds=1, seconds=1.0)
    assert [(r["peer"], r["path"], r["payload"]) for r in rows] == [
        ("triton-python-backend", "http", "bytes 1000x64"),
        ("triton-python-backend", "grpc", "bytes 1000x64"),
    ]
    for row in rows:
        for key in ("without_infer_s", "with_infer_s", "ratio", "without_p99_us", "with_p50_us"):
            assert row[key] > 0, row
