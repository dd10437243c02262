"""``oipcodec.compat.tritonclient.install()`` against stock tritonclient: the same answers.

A differential test: every datatype and shape class, sent by tritonclient's HTTP and gRPC
clients, sync and aio, to ``oipcodec serve``'s identity model, once with install() and once
without, HTTP inputs and outputs both binary and JSON; the arrays (or the errors) must be the
same, dtype and element types included. Then tritonclient's decode of JSON answers the server
does not send (fallbacks to tritonclient), and uninstall() restoring the very same functions.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from tests.support.peers import require_peer
from tests.support.serve_process import run_serve

triton_http = require_peer("tritonclient.http")
triton_grpc = require_peer("tritonclient.grpc")
triton_utils = require_peer("tritonclient.utils")
ml_dtypes = require_peer("ml_dtypes")
pytest.importorskip("uvicorn", reason="the server extra is not installed")
http_aio = require_peer("tritonclient.http.aio")
grpc_aio = require_peer("tritonclient.grpc.aio")

from oipcodec.compat import tritonclient as compat  # noqa: E402

NUMERIC: dict[str, Any] = {
    "BOOL": np.bool_,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
    "BF16": ml_dtypes.bfloat16,
}
# tritonclient before r26.06 takes and gives BF16 as float32 (serialize_bf16_tensor truncates)
OLD_BF16 = hasattr(triton_utils, "serialize_bf16_tensor")
if OLD_BF16:
    NUMERIC["BF16"] = np.float32
SHAPES = {"scalar": (), "empty": (0,), "vector": (7,), "batch": (3, 5), "large": (200, 500)}
BYTES_VALUES: list[bytes | str] = [
    b"",
    b"a\x00b",
    b"\x00",
    b"\xff\xfe non-UTF-8",
    "é€😀",
    "plain",
    b"x" * 300,
]


def _values(datatype: str, shape: tuple[int, ...]) -> list[np.ndarray[Any, Any]]:
    """The arrays sent for one case: extremes and ordinary values (several arrays for BYTES:
    object arrays of bytes, of str, of mixed, and an ``S`` array)."""
    count = int(np.prod(shape))
    if datatype == "BYTES":
        cycle = [BYTES_VALUES[i % len(BYTES_VALUES)] for i in range(count)]
        utf8 = [v for v in BYTES_VALUES if isinstance(v, str) or _is_utf8(v)]
        arrays = [
            np.array([*cycle, None], dtype=object)[:-1].reshape(shape),
            np.array([*(utf8[i % len(utf8)] for i in range(count)), None], dtype=object)[
                :-1
            ].reshape(shape),
            np.array([b"ab\x00", b"c"][: max(count, 1)] * count, dtype="S")[:count].reshape(shape),
        ]
        return arrays
    dtype = np.dtype(NUMERIC[datatype])
    rng = np.random.default_rng(count)
    if datatype == "BOOL":
        flat = rng.integers(0, 2, count).astype(bool)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
        flat[: min(count, 2)] = [info.min, info.max][: min(count, 2)]
    else:
        flat = (rng.standard_normal(count) * 1e3).astype(dtype)
        special = [0.1, -0.0, 65504.0, 1e-7, 3.0]
        flat[: min(count, len(special))] = np.array(special[:count], dtype=dtype)
        if OLD_BF16 and datatype == "BF16":  # values BF16 holds, so the answers are the inputs
            flat = (flat.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    return [flat.reshape(shape)]


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@dataclass(frozen=True)
class Failed:
    """An error a call raised: its type and message."""

    kind: type[BaseException]
    message: str


def _outcome(call: Callable[[], Any]) -> Any:
    """What a call gives, or the error it raises as a :class:`Failed`."""
    try:
        return call()
    except Exception as exc:
        return Failed(type(exc), str(exc))


def _same(on: Any, off: Any, where: str) -> None:
    if isinstance(off, Failed) or isinstance(on, Failed):
        assert on == off, where
        return
    if off is None:
        assert on is None, where
        return
    assert isinstance(on, np.ndarray), (where, on)
    assert on.dtype == off.dtype and on.shape == off.shape, (where, on.dtype, off.dtype)
    if off.dtype == object:
        assert [type(v) for v in on.ravel()] == [type(v) for v in off.ravel()], where
        assert on.ravel().tolist() == off.ravel().tolist(), where
    else:
        assert on.tobytes() == off.tobytes(), where


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    yield from run_serve(tmp_path_factory.mktemp("serve"))


@pytest.fixture(autouse=True)
def _stock_after() -> Iterator[None]:
    yield
    compat.uninstall()


# --------------------------------------------------------------------------- the clients


def _http(address: str, array: np.ndarray[Any, Any], datatype: str, binary: bool,
          out_binary: bool) -> Any:  # fmt: skip
    client = triton_http.InferenceServerClient(address)
    try:
        tensor = triton_http.InferInput("X", list(array.shape), datatype)
        tensor.set_data_from_numpy(array, binary_data=binary)
        output = triton_http.InferRequestedOutput("X", binary_data=out_binary)
        return client.infer("identity", [tensor], outputs=[output]).as_numpy("X")
    finally:
        client.close()


def _http_aio(address: str, array: np.ndarray[Any, Any], datatype: str, binary: bool,
              out_binary: bool) -> Any:  # fmt: skip
    async def run() -> Any:
        client = http_aio.InferenceServerClient(address)
        try:
            tensor = http_aio.InferInput("X", list(array.shape), datatype)
            tensor.set_data_from_numpy(array, binary_data=binary)
            output = http_aio.InferRequestedOutput("X", binary_data=out_binary)
            result = await client.infer("identity", [tensor], outputs=[output])
            return result.as_numpy("X")
        finally:
            await client.close()

    return asyncio.run(run())


def _grpc(address: str, array: np.ndarray[Any, Any], datatype: str) -> Any:
    client = triton_grpc.InferenceServerClient(address)
    try:
        tensor = triton_grpc.InferInput("X", list(array.shape), datatype)
        tensor.set_data_from_numpy(array)
        return client.infer("identity", [tensor]).as_numpy("X")
    finally:
        client.close()


def _grpc_aio(address: str, array: np.ndarray[Any, Any], datatype: str) -> Any:
    async def run() -> Any:
        client = grpc_aio.InferenceServerClient(address)
        try:
            tensor = grpc_aio.InferInput("X", list(array.shape), datatype)
            tensor.set_data_from_numpy(array)
            return (await client.infer("identity", [tensor])).as_numpy("X")
        finally:
            await client.close()

    return asyncio.run(run())


CLIENTS = ["http", "http-aio", "grpc", "grpc-aio"]


def _calls(client: str, address: dict[str, str], array: Any, datatype: str
           ) -> dict[str, Callable[[], Any]]:  # fmt: skip
    """Every way this client sends the array: HTTP in each binary/JSON combination."""
    if client.startswith("http"):
        send = _http if client == "http" else _http_aio

        def one(binary: bool, out_binary: bool) -> Callable[[], Any]:
            return lambda: send(address["http"], array, datatype, binary, out_binary)

        return {
            f"in={'bin' if b else 'json'},out={'bin' if o else 'json'}": one(b, o)
            for b in (True, False)
            for o in (True, False)
        }
    send_grpc = _grpc if client == "grpc" else _grpc_aio
    return {"grpc": lambda: send_grpc(address["grpc"], array, datatype)}


@pytest.mark.parametrize("datatype", [*NUMERIC, "BYTES"])
@pytest.mark.parametrize("client", CLIENTS)
def test_same_answers_with_and_without_install(
    server: dict[str, str], client: str, datatype: str
) -> None:
    """The arrays an app gets (or the error it gets) are the same with install() as without,
    for every shape class and, over HTTP, binary and JSON inputs and outputs."""
    checked = 0
    for shape_name, shape in SHAPES.items():
        if client.endswith("aio") and shape_name == "large":
            continue  # the sync clients cover it; the aio clients share their codec paths
        for index, array in enumerate(_values(datatype, shape)):
            for mode, call in _calls(client, server, array, datatype).items():
                where = f"{client} {datatype} {shape_name} #{index} {mode}"
                compat.uninstall()
                off = _outcome(call)
                compat.install()
                on = _outcome(call)
                compat.uninstall()
                _same(on, off, where)
                checked += 1
    assert checked >= 4


def test_the_answers_are_the_inputs(server: dict[str, str]) -> None:
    """Not vacuous: with install() the identity model's answers are what was sent."""
    compat.install()
    for datatype in NUMERIC:
        for array in _values(datatype, SHAPES["batch"]):
            for binary in (True, False):
                if datatype == "BF16" and not binary:
                    continue
                # (old tritonclient reads a JSON BF16 answer, its shortest BF16 decimals, as
                # float32: binary answers for it)
                out_binary = OLD_BF16 and datatype == "BF16"
                got = _http(server["http"], array, datatype, binary, out_binary)
                assert got.dtype == array.dtype and got.tobytes() == array.tobytes(), datatype
            got = _grpc(server["grpc"], array, datatype)
            assert got.tobytes() == array.tobytes(), datatype
    framed = np.array([b"", b"a\x00b", b"\xff"], dtype=object)
    assert _grpc(server["grpc"], framed, "BYTES").tolist() == framed.tolist()
    assert _http(server["http"], framed, "BYTES", True, True).tolist() == framed.tolist()


# --------------------------------------------------------------------------- JSON answers


def _json_cases() -> dict[str, bytes]:
    def answer(datatype: str, shape: list[int], data: str) -> bytes:
        return (
            f'{{"model_name":"m","outputs":[{{"name":"o","datatype":"{datatype}",'
            f'"shape":{shape},"data":{data}}}]}}'
        ).encode()

    return {
        "floats": answer("FP32", [2, 2], "[0.1,-2.5e-3,1e30,3]"),
        "nested": answer("INT64", [2, 2], "[[1,2],[3,-9223372036854775808]]"),
        "nan": answer("FP64", [3], "[NaN,Infinity,-Infinity]"),
        "bool": answer("BOOL", [2], "[true,false]"),
        "bool as integers": answer("BOOL", [2], "[1,0]"),
        "floats for integers": answer("INT32", [2], "[1.5,2.0]"),
        "out of range": answer("INT8", [1], "[300]"),
        "shape mismatch": answer("FP32", [3], "[1,2]"),
        "bytes": answer("BYTES", [2], '["a","\\u00e9"]'),
        "bf16": answer("BF16", [2], "[1.5,2]"),
        "fp16": answer("FP16", [], "[0.333]"),
        "unknown datatype": answer("FP8", [1], "[1]"),
        "no data": b'{"model_name":"m","outputs":[{"name":"o","datatype":"FP32","shape":[1]}]}',
        "no outputs": b'{"model_name":"m"}',
        "not JSON": b'{"model_name":',
        "not UTF-8": b'{"model_name":"\xff","outputs":[]}',
    }


@pytest.mark.parametrize("case", list(_json_cases()))
def test_json_answers_decode_as_tritonclient_does(case: str) -> None:
    """tritonclient's as_numpy, get_response and get_output on JSON answers, the ones the
    kernel decodes and the ones it leaves to tritonclient (and its errors)."""
    body = _json_cases()[case]

    def read() -> Any:
        result = triton_http.InferResult.from_response_body(body)
        return (_outcome(lambda: result.as_numpy("o")), _outcome(lambda: result.as_numpy("o")),
                _outcome(result.get_response), _outcome(lambda: result.as_numpy("absent")))  # fmt: skip

    off = _outcome(read)
    compat.install()
    on = _outcome(read)
    compat.uninstall()
    if isinstance(off, Failed):
        assert on == off
        return
    for got, want in zip(on[:2], off[:2], strict=True):
        if isinstance(want, np.ndarray) and want.dtype.kind == "f":
            assert np.array_equal(got, want, equal_nan=True) and got.dtype == want.dtype
        else:
            _same(got, want, case)
    assert repr(on[2]) == repr(off[2]) and on[3] is off[3] is None


def test_repeated_as_numpy_gives_a_new_array() -> None:
    """As in tritonclient, a caller changing one answer does not change the next."""
    compat.install()
    result = triton_http.InferResult.from_response_body(_json_cases()["floats"])
    first = result.as_numpy("o")
    first[...] = 0
    assert result.as_numpy("o")[0, 0] == np.float32(0.1)


def test_correctly_rounded_where_tritonclient_rounds_twice() -> None:
    """The one documented difference: a JSON number is read straight to float32 here, to
    float64 and then float32 by tritonclient, which differs on a value just past a halfway
    point (docs/compat.md)."""
    body = (
        b'{"model_name":"m","outputs":[{"name":"o","datatype":"FP32","shape":[1],'
        b'"data":[1.000000059604644775390625001]}]}'
    )
    assert triton_http.InferResult.from_response_body(body).as_numpy("o")[0] == 1.0
    compat.install()
    got = triton_http.InferResult.from_response_body(body).as_numpy("o")[0]
    assert got == np.nextafter(np.float32(1), np.float32(2))


def test_results_made_while_installed_work_after_uninstall() -> None:
    compat.install()
    result = triton_http.InferResult.from_response_body(_json_cases()["floats"])
    compat.uninstall()
    assert result.get_response()["outputs"][0]["data"] == [0.1, -2.5e-3, 1e30, 3]
    assert result.as_numpy("o").dtype == np.float32


# --------------------------------------------------------------------------- install itself


FRAMING = ("serialize_byte_tensor", "deserialize_bytes_tensor", "serialize_bf16_tensor",
           "deserialize_bf16_tensor")  # fmt: skip


def _bindings() -> dict[tuple[str, str], Any]:
    found: dict[tuple[str, str], Any] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("tritonclient"):
            for attr in FRAMING:
                if attr in vars(module):
                    found[(name, attr)] = vars(module)[attr]
    for cls in (triton_http.InferInput, triton_http.InferResult, triton_grpc.InferInput,
                triton_grpc.InferResult):  # fmt: skip
        for attr in ("set_data_from_numpy", "__init__", "as_numpy", "_result"):
            found[(cls.__qualname__ + cls.__module__, attr)] = vars(cls).get(attr)
    return found


def test_uninstall_restores_the_very_same_functions() -> None:
    before = _bindings()
    assert not compat.installed()
    compat.install()
    compat.install()  # idempotent
    assert compat.installed()
    during = _bindings()
    assert (
        during[("tritonclient.utils", "serialize_byte_tensor")]
        is not before[("tritonclient.utils", "serialize_byte_tensor")]
    )
    # every binding of the two functions in tritonclient's modules is replaced
    for key, value in before.items():
        if key[1] in FRAMING:
            assert during[key] is not value, key
    compat.uninstall()
    compat.uninstall()  # idempotent
    assert not compat.installed()
    after = _bindings()
    assert after.keys() == before.keys()
    for key, value in before.items():
        assert after[key] is value, key


def test_framing_functions_fall_back_to_tritonclients_errors() -> None:
    """On input the kernels refuse, tritonclient's own error (type and message)."""
    stock_serialize = triton_utils.serialize_byte_tensor
    stock_deserialize = triton_utils.deserialize_bytes_tensor
    cases: list[tuple[Callable[[Any], Any], Callable[[Any], Any], Any]] = []
    compat.install()
    ours_serialize = triton_utils.serialize_byte_tensor
    ours_deserialize = triton_utils.deserialize_bytes_tensor
    for bad in (b"\x05\x00\x00\x00ab", b"\x01\x00", bytearray(b"\x01\x00\x00\x00a")):
        cases.append((ours_deserialize, stock_deserialize, bad))
    for tensor in (np.array(["\ud800"], dtype=object), np.array([1.0]), np.array(["u"]),
                   np.array([bytearray(b"x"), 3, None], dtype=object)):  # fmt: skip
        cases.append((ours_serialize, stock_serialize, tensor))
    for ours, stock, value in cases:
        want = _outcome(functools.partial(stock, value))
        got = _outcome(functools.partial(ours, value))
        if isinstance(want, Failed):
            assert got == want, value
        else:
            _same(np.asarray(got), np.asarray(want), repr(value))


def test_install_takes_the_kernel_paths() -> None:
    """Not vacuous: with install() the JSON encode is the kernel's text, a JSON answer's
    as_numpy never parses the document with rapidjson, and the framing is the kernel's."""
    import rapidjson

    array = np.array([[0.1, 2.0]], dtype=np.float32)
    tensor = triton_http.InferInput("X", [1, 2], "FP32")
    compat.install()
    tensor.set_data_from_numpy(array, binary_data=False)
    data = tensor._get_tensor()["data"]
    assert isinstance(data, rapidjson.RawJSON) and data.value == "[0.1,2.0]"
    body, _ = triton_http.InferenceServerClient.generate_request_body([tensor])
    assert b'"data":[0.1,2.0]' in body
    result = triton_http.InferResult.from_response_body(_json_cases()["floats"])
    assert result.as_numpy("o").shape == (2, 2)
    assert "_result" not in vars(result)  # tritonclient's parse did not run
    assert result.get_output("o")["shape"] == [2, 2]  # ... until the app asks for the document
    assert "_result" in vars(result)
    serialize = triton_grpc._infer_input.serialize_byte_tensor
    assert serialize.__wrapped__ is compat.serialize_byte_tensor
    assert triton_http._infer_result.deserialize_bytes_tensor.__wrapped__ is (
        compat.deserialize_bytes_tensor
    )


@pytest.mark.skipif(not OLD_BF16, reason="tritonclient r26.06 and later have no BF16 helpers")
def test_bf16_helpers_of_older_tritonclient_bit_for_bit() -> None:
    """tritonclient before r26.06: serialize_bf16_tensor / deserialize_bf16_tensor replaced
    by vectorized twins, the same bytes and arrays on every bit pattern (signalling NaNs
    quieted as tritonclient's Python floats quiet them) and the same errors."""
    serialize, deserialize = (
        triton_utils.serialize_bf16_tensor,
        triton_utils.deserialize_bf16_tensor,
    )
    compat.install()
    assert triton_utils.serialize_bf16_tensor is not serialize
    assert triton_grpc._infer_result.deserialize_bf16_tensor is not deserialize
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**32, 20_000, dtype=np.uint64).astype(np.uint32)
    special = np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0x7F800000, 0x7FBFFFFF, 0x80000000,
                        1, 0x7F7FFFFF], dtype=np.uint32)  # fmt: skip
    floats = np.concatenate([bits, special, bits | np.uint32(0x7F800000)]).view(np.float32)
    for tensor in (floats.reshape(-1, 4), floats[::3], np.float32(2.5).reshape(()),
                   np.zeros((0, 3), np.float32)):  # fmt: skip
        ours, stock = triton_utils.serialize_bf16_tensor(tensor), serialize(tensor)
        assert ours.shape == stock.shape and ours.dtype == stock.dtype
        assert ours.tolist() == stock.tolist()
    buffer = rng.integers(0, 256, 40_000, dtype=np.uint8).tobytes() + b"\x80\x7f\x81\x7f"
    for encoded in (buffer, memoryview(buffer)[2:], b""):
        ours, stock = triton_utils.deserialize_bf16_tensor(encoded), deserialize(encoded)
        assert ours.shape == stock.shape and ours.dtype == stock.dtype
        assert ours.tobytes() == stock.tobytes()
    for bad_tensor in (np.array([1.0]), np.array([1], dtype=">f4"), np.array(["x"])):
        ours_call = functools.partial(triton_utils.serialize_bf16_tensor, bad_tensor)
        assert _outcome(ours_call) == _outcome(functools.partial(serialize, bad_tensor))
    assert _outcome(lambda: triton_utils.deserialize_bf16_tensor(b"\x00")) == _outcome(
        lambda: deserialize(b"\x00")
    )


def test_a_failed_install_leaves_nothing_patched(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _bindings()

    def broken(*args: Any) -> None:
        raise RuntimeError("no")

    monkeypatch.setattr(compat, "_install_http", broken)
    with pytest.raises(RuntimeError):
        compat.install()
    assert not compat.installed()
    after = _bindings()
    assert all(after[key] is value for key, value in before.items())
