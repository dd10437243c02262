"""The native front end's inference answers against the Python protocol's, end to end.

Two real servers in threads, the same models: one on the native front end (every
``POST .../infer`` below reaches ``fastpath.Slot.infer``, checked per request), one on
oipcodec's Python protocol. Each request of a corpus (well-formed JSON written every way JSON
allows, every kind of malformed body, models that answer every kind of output and every kind
of bug) and of a hypothesis search (small valid requests, and byte-level mutations of them)
goes to both over a raw socket, and the whole answers (status line, headers, body; the
``date`` line aside) must be equal byte for byte; then the statistics' counts
(``/v2/models/stats``) and the counters of ``/metrics`` that are counts.

Both paths run the same Python pipeline today; this module guards any shortcut the native
side takes for small JSON requests (decoding, ``predict``, encoding, counting).
"""

from __future__ import annotations

import asyncio
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oipcodec import Tensor
from oipcodec.datatypes import DATATYPES
from oipcodec.server import InvalidArgumentError, Model, TensorSpec
from oipcodec.server.http11 import fastpath
from oipcodec.server.http11.native import native_protocol_available
from oipcodec.server.inference.fused import Fused
from oipcodec.server.model_config import DynamicBatching
from oipcodec.testing import RunningServer, background
from tests.server.http11.test_server_fastpath import (
    TIMEOUT,
    _counts,
    _python_path,
    _read_answer,
)

pytest.importorskip("uvicorn", reason="the server extra is not installed")

pytestmark = pytest.mark.skipif(
    not native_protocol_available(), reason="the native front end is not built"
)

# ----------------------------------------------------------------------------------- models

#: The declared models: name -> (datatype, shape of X and Y, what Y is of X).
_DECLARED: dict[str, tuple[str, list[int], Callable[[Any], Any]]] = {
    "fp32": ("FP32", [1, 16], lambda x: x - np.float32(0.5)),
    "int64": ("INT64", [-1, -1], lambda x: x - 1),
    "bool": ("BOOL", [-1], lambda x: ~x),
    "fp16": ("FP16", [1, -1], lambda x: x / np.float16(4)),
    "fp64": ("FP64", [-1, 16], lambda x: -x),
    "uint8": ("UINT8", [-1], lambda x: x + np.uint8(1)),
}


class Declared(Model):
    """X -> Y, both declared with one datatype and shape."""

    def __init__(self, name: str) -> None:
        datatype, shape, self.how = _DECLARED[name]
        super().__init__(
            name,
            inputs=[TensorSpec("X", datatype, shape)],
            outputs=[TensorSpec("Y", datatype, shape)],
        )

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"Y": self.how(inputs["X"])}


class Identity(Model):
    """No declaration: answers its inputs."""

    name = "identity"
    inputs = None
    outputs = None

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return dict(inputs)


class Optional(Model):
    """An optional input Z; the optional output W is answered only when Z is given."""

    name = "optional"
    inputs = (TensorSpec("X", "FP32", [-1]), TensorSpec("Z", "FP32", [-1], optional=True))
    outputs = (TensorSpec("Y", "FP32", [-1]), TensorSpec("W", "FP32", [-1], optional=True))

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        answer = {"Y": inputs["X"] + 1}
        if "Z" in inputs:
            answer["W"] = inputs["Z"] * 2
        return answer


class Rows(Model):
    """Batches of up to 4 rows, without dynamic batching: Y = A + B."""

    name = "rows"
    max_batch_size = 4
    inputs = (TensorSpec("A", "FP32", [-1, 4]), TensorSpec("B", "FP32", [-1, 4]))
    outputs = (TensorSpec("Y", "FP32", [-1, 4]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return {"Y": inputs["A"] + inputs["B"]}


class Writes(Model):
    """Adds 1 to its input in place (``writable_inputs``): a binary input is a copy then."""

    name = "writes"
    inputs = None
    outputs = None
    writable_inputs = True

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        x = inputs["X"]
        x += 1
        return {"Y": x}


def _raises(message: str) -> Any:
    raise RuntimeError(message)


def _refuses(message: str) -> Any:
    raise InvalidArgumentError(message)


_Y = TensorSpec("Y", "FP32", [-1])
_F4 = np.arange(6, dtype=np.float32) / 4
#: The models that answer one thing whatever they are given: name -> (declared outputs or
#: None, the answer of predict).
_ODD: dict[str, tuple[tuple[TensorSpec, ...] | None, Callable[[], Any]]] = {
    "raises": (None, lambda: _raises("the model broke")),
    "refuses": (None, lambda: _refuses("parameter 'k' is wrong")),
    "non_dict": (None, lambda: _F4),
    "none": (None, lambda: None),
    "empty": (None, lambda: {}),
    "a_list": ((_Y,), lambda: {"Y": [1, 2.5, -3]}),
    "a_bad_list": ((TensorSpec("Y", "INT32", [-1]),), lambda: {"Y": [1, 2.5]}),
    "strings_for_fp32": ((_Y,), lambda: {"Y": ["1"]}),
    "a_tensor": (None, lambda: {"T": Tensor("T", "INT16", (2, 1), np.array([[3], [-4]], "i2"))}),
    "a_renamed_tensor": ((_Y,), lambda: {"Y": Tensor("Q", "FP32", (2,), np.ones(2, "f4"))}),
    "fp64_for_fp32": ((_Y,), lambda: {"Y": np.array([0.1, 1e-50, 3.5], np.float64)}),
    "overflow_for_fp32": ((_Y,), lambda: {"Y": np.array([1e300])}),
    "int_for_fp32": ((_Y,), lambda: {"Y": np.arange(3)}),
    "wrong_shape": ((TensorSpec("Y", "FP32", [1, 16]),), lambda: {"Y": np.zeros(16, "f4")}),
    "missing": ((_Y, TensorSpec("W", "FP32", [-1])), lambda: {"Y": _F4}),
    "extra": ((_Y,), lambda: {"Y": _F4, "UNDECLARED": np.int8([1])}),
    "transposed": (None, lambda: {"T": np.arange(12, dtype=np.float32).reshape(3, 4).T}),
    "strided": (None, lambda: {"S": np.arange(20, dtype=np.int32)[::3]}),
    "scalars": (None, lambda: {"S": np.float32(1.5), "Z": np.array(3), "B": np.bool_(True)}),
    "declared_scalar": ((TensorSpec("S", "INT32", []),), lambda: {"S": np.int32(7)}),
    "non_finite": (None, lambda: {"Y": np.array([np.nan, np.inf, -np.inf, 1.0], "f4")}),
    "big_endian": (None, lambda: {"F": np.arange(4, dtype=">f4"), "I": np.arange(3, dtype=">i8")}),
    "fp16_out": (None, lambda: {"H": np.array([0.1, 65504, 6e-8], np.float16)}),
    "floats_printed": (None, lambda: {"F": np.array([0.1, 1e21, 1e-7, 5e-324, -0.0, 2**53])}),
    "float32_printed": (None, lambda: {"F": np.array([0.1, 1e21, 1e-7, 1e-45, 3e38], "f4")}),
    "ints_printed": (
        None,
        lambda: {"I": np.array([-(2**63), 2**63 - 1]), "U": np.uint64([2**64 - 1])},
    ),
    "bytes_out": (None, lambda: {"B": np.array([b"a", b'"\\', "é".encode()], dtype=object)}),
    "big": (None, lambda: {"OUT": np.arange(1 << 20, dtype=np.float32)}),
    "escaped_names": (
        None,
        lambda: {'a"b': _F4[:1], "c\\d": _F4[:2], "é✓": _F4[:3], "\n\t\x01": _F4[:1]},
    ),
}


class Odd(Model):
    """Takes anything and answers ``_ODD[name]``."""

    inputs = None

    def __init__(self, name: str) -> None:
        outputs, self.answer = _ODD[name]
        super().__init__(name, outputs=outputs)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:
        return self.answer()


class Batched(Model):
    """A dynamically batched X -> Y = 2 X (a negative X fails its batch)."""

    name = "batched"
    max_batch_size = 8
    dynamic_batching = DynamicBatching(max_queue_delay_microseconds=2000)
    inputs = (TensorSpec("X", "FP32", [-1, 4]),)
    outputs = (TensorSpec("Y", "FP32", [-1, 4]),)

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        if (inputs["X"] < 0).any():
            raise ValueError("a negative X")
        return {"Y": inputs["X"] * 2}


class BatchedIdentity(Identity):
    """No declaration, dynamically batched: answers its inputs."""

    name = "batched_identity"
    max_batch_size = 8
    dynamic_batching = DynamicBatching(max_queue_delay_microseconds=2000)


class BatchedWaits(Batched):
    """Batched, and its batches wait half a second for more requests."""

    name = "batched_waits"
    dynamic_batching = DynamicBatching(max_queue_delay_microseconds=500_000)


class Awaited(Model):
    """X -> Y = X + 1 (FP32 [-1, 4]), by an ``async def predict`` (``async``) or in a worker
    thread (``thread``); a negative X raises."""

    inputs = (TensorSpec("X", "FP32", [-1, 4]),)
    outputs = (TensorSpec("Y", "FP32", [-1, 4]),)

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.run_in_thread = name == "thread"

    def answer(self, inputs: dict[str, Any]) -> dict[str, Any]:
        if (inputs["X"] < 0).any():
            raise ValueError("a negative X")
        return {"Y": inputs["X"] + 1}

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        return self.answer(inputs)


class AsyncAwaited(Awaited):
    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return self.answer(inputs)


class Slow(Awaited):
    """Awaited as ``Awaited`` (``slow_thread``: in a worker thread), answering after 0.3 s: its
    client can go away first."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.run_in_thread = name == "slow_thread"

    def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.3)
        return self.answer(inputs)


class AsyncSlow(Slow):
    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        await asyncio.sleep(0.3)
        return self.answer(inputs)


def models() -> list[Model]:
    return [
        AsyncAwaited("async"),
        Awaited("thread"),
        Batched(),
        BatchedIdentity(),
        BatchedWaits(),
        *(Declared(name) for name in _DECLARED),
        Identity(),
        Optional(),
        Rows(),
        AsyncSlow("slow_async"),
        Slow("slow_thread"),
        Writes(),
        *(Odd(name) for name in _ODD),
    ]


# ---------------------------------------------------------------------------------- servers


class Calls:
    """Slot.infer, counted: the native server's inferences must reach it (not be handed over
    to the Python protocol, which would compare that protocol with itself)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answered = 0
        self.declined = 0

    def wrap(self, infer: Any) -> Any:
        def counted(slot: fastpath.Slot, body: Any, header_length: int) -> Any:
            answer = infer(slot, body, header_length)
            with self.lock:
                if answer is None:
                    self.declined += 1
                else:
                    self.answered += 1
            return answer

        return counted


CALLS = Calls()


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[RunningServer, RunningServer]]:
    def serving(protocol: str) -> Any:
        return background(
            models(), http_protocol=protocol, grpc_port=None, process=False, log_level="critical"
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fastpath.Slot, "infer", CALLS.wrap(fastpath.Slot.infer))
        with serving("native") as native, serving("oipcodec") as python:
            yield native, python


def _same_answer(
    servers: tuple[RunningServer, RunningServer],
    model: str,
    body: bytes,
    what: str = "",
    header_length: int = -1,
) -> bytes:
    """Both servers' answers to ``body`` POSTed to ``model``'s infer (with
    Inference-Header-Content-Length when ``header_length`` >= 0): equal, and the native one
    answered by Slot.infer. Returns the answer."""
    native, python = servers
    target = f"/v2/models/{model}/infer"
    before = CALLS.answered
    got = _python_path(native, "POST", target, body, header_length)
    assert CALLS.answered == before + 1, f"{what}: the native server handed it over"
    want = _python_path(python, "POST", target, body, header_length)
    assert got == want, what or body
    return got


#: The metrics that are counts: Triton's per model, oipcodec's per encoding path.
_COUNT_METRICS = (
    b"nv_inference_request_success{",
    b"nv_inference_request_failure{",
    b"nv_inference_count{",
    b"nv_inference_exec_count{",
    b"oipcodec_requests_total{",
    b"oipcodec_request_bytes_total{",
    b"oipcodec_response_bytes_total{",
)


def _metrics_counts(server: RunningServer) -> list[bytes]:
    """The samples of /metrics that are counts (times left out)."""
    text = _python_path(server, "GET", "/metrics", b"", -1).split(b"\r\n\r\n", 1)[1]
    return [line for line in text.splitlines() if line.startswith(_COUNT_METRICS)]


#: The models whose batches form by timing (their execution counts may differ).
_TIMED = ("batched", "batched_identity", "batched_waits")


def _same_statistics(servers: tuple[RunningServer, RunningServer]) -> None:
    """The statistics' counts and the count metrics are equal on both servers (the
    execution counts of the dynamically batched models aside)."""
    native, python = servers
    counts = []
    for server in servers:
        document = _python_path(server, "GET", "/v2/models/stats", b"", -1).split(b"\r\n\r\n")[1]
        counts.append(
            [
                (*c[:3], None if c[0] in _TIMED else c[3], c[4])
                for c in _counts(orjson.loads(document))
            ]
        )
    assert counts[0] == counts[1]
    counted = _metrics_counts(native)
    assert any(line.startswith(b'oipcodec_requests_total{path="json"} ') for line in counted)
    timed = tuple(b'nv_inference_exec_count{model="%s"' % m.encode() for m in _TIMED)
    assert [c for c in counted if not c.startswith(timed)] == [
        c for c in _metrics_counts(python) if not c.startswith(timed)
    ]


# ----------------------------------------------------------------------------------- corpus


def _x(values: Any, datatype: str = "FP32", shape: Any = None, name: str = "X") -> dict[str, Any]:
    shape = [1, len(values)] if shape is None else shape
    return {"name": name, "shape": shape, "datatype": datatype, "data": values}


def _body(*inputs: dict[str, Any], **extra: Any) -> bytes:
    return orjson.dumps({"inputs": list(inputs), **extra})


F16 = [i / 8 for i in range(16)]
PLAIN = _body(_x(F16))
#: PLAIN by hand, so that one piece can change at a time.
HAND = b'{"inputs":[{"name":"X","shape":[1,16],"datatype":"FP32","data":[%s]}]%s}'
DATA = b",".join(b"%r" % v for v in F16)


def _hand(data: bytes = DATA, tail: bytes = b"") -> bytes:
    return HAND % (data, tail)


#: (what it is, model, body)
CORPUS: list[tuple[str, str, bytes]] = [
    ("plain", "fp32", PLAIN),
    ("by hand", "fp32", _hand()),
    ("integers for FP32", "fp32", _hand(b",".join(b"%d" % i for i in range(16)))),
    (
        "numbers every way",
        "fp32",
        _hand(
            b"0,-0,0.0,-0.0e0,1E2,1e+2,1.5e-3,3.4028235e38,1e-45,7e-46,123456789,0.1,2.5,-1,1e0,2"
        ),
    ),
    ("1e400", "fp32", _hand(b"1e400" + b",1" * 15)),
    ("-1e400", "fp64", _body(_x([1.0] * 16, "FP64")).replace(b"[1.0,", b"[-1e400,", 1)),
    ("1e-400", "fp32", _hand(b"1e-400" + b",1" * 15)),
    ("3.5e38 overflows FP32", "fp32", _hand(b"3.5e38" + b",1" * 15)),
    ("NaN literal", "fp32", _hand(b"NaN" + b",1" * 15)),
    ("Infinity literal", "fp32", _hand(b"Infinity" + b",1" * 15)),
    ("leading zero", "fp32", _hand(b"01" + b",1" * 15)),
    ("leading dot", "fp32", _hand(b".5" + b",1" * 15)),
    ("plus sign", "fp32", _hand(b"+1" + b",1" * 15)),
    ("id", "fp32", _body(_x(F16), id="request-1")),
    ("id with escapes", "fp32", _hand(tail=b',"id":"a\\"b\\\\c\\n\\u0041\\/\\t"')),
    ("id non-ASCII", "fp32", _body(_x(F16), id="é✓𝄞")),
    ("id non-ASCII escaped", "fp32", _hand(tail=b',"id":"\\u00e9\\ud834\\udd1e"')),
    ("id lone surrogate", "fp32", _hand(tail=b',"id":"\\ud834"')),
    ("id empty", "fp32", _body(_x(F16), id="")),
    ("id a number", "fp32", _hand(tail=b',"id":5')),
    ("id null", "fp32", _hand(tail=b',"id":null')),
    ("id with a control byte", "fp32", _hand(tail=b',"id":"a\x01b"')),
    ("parameters {}", "fp32", _body(_x(F16), parameters={})),
    ("parameters", "fp32", _body(_x(F16), parameters={"a": 1, "b": "x", "c": True, "d": 2.5})),
    ("parameters not an object", "fp32", _body(_x(F16), parameters=[1])),
    ("tensor parameters {}", "fp32", _body({**_x(F16), "parameters": {}})),
    ("tensor parameters", "fp32", _body({**_x(F16), "parameters": {"k": "v"}})),
    ("outputs", "fp32", _body(_x(F16), outputs=[{"name": "Y"}])),
    ("outputs with parameters", "fp32", _body(_x(F16), outputs=[{"name": "Y", "parameters": {}}])),
    (
        "outputs binary",
        "fp32",
        _body(_x(F16), outputs=[{"name": "Y", "parameters": {"binary_data": True}}]),
    ),
    ("binary_data_output", "fp32", _body(_x(F16), parameters={"binary_data_output": True})),
    ("outputs empty", "fp32", _body(_x(F16), outputs=[])),
    ("outputs unknown", "fp32", _body(_x(F16), outputs=[{"name": "NOPE"}])),
    ("outputs twice", "fp32", _body(_x(F16), outputs=[{"name": "Y"}, {"name": "Y"}])),
    ("outputs without name", "fp32", _body(_x(F16), outputs=[{}])),
    (
        "keys reordered",
        "fp32",
        orjson.dumps(
            {
                "id": "z",
                "inputs": [{"data": F16, "datatype": "FP32", "shape": [1, 16], "name": "X"}],
                "parameters": {},
            }
        ),
    ),
    (
        "keys reordered 2",
        "fp32",
        orjson.dumps(
            {
                "outputs": [{"name": "Y"}],
                "inputs": [{"shape": [1, 16], "name": "X", "data": F16, "datatype": "FP32"}],
            }
        ),
    ),
    (
        "whitespace",
        "fp32",
        b' \t\r\n{ \n"inputs" :\t[ {\r"name" : "X" , "shape" : [ 1 , 16 ] ,'
        b' "datatype":"FP32" , "data" : [ ' + DATA.replace(b",", b" ,\n ") + b" ] } ] ,"
        b' "id" : "w" } \r\n\t ',
    ),
    ("escaped key", "fp32", _hand().replace(b'"name"', b'"n\\u0061me"')),
    (
        "escaped keys",
        "fp32",
        _hand().replace(b'"data"', b'"\\u0064ata"').replace(b'"inputs"', b'"input\\u0073"'),
    ),
    ("escaped name", "fp32", _hand().replace(b'"X"', b'"\\u0058"')),
    ("escaped datatype", "fp32", _hand().replace(b'"FP32"', b'"FP\\u00332"')),
    ("duplicate name", "fp32", _hand().replace(b'"name":"X"', b'"name":"Q","name":"X"')),
    ("duplicate data", "fp32", _hand().replace(b'"data":[', b'"data":[1],"data":[')),
    ("duplicate inputs", "fp32", PLAIN[:-1] + b',"inputs":[]}'),
    ("duplicate id", "fp32", _hand(tail=b',"id":"a","id":"b"')),
    ("extra members", "fp32", _body({**_x(F16), "extra": [1, {"a": None}]}, foo="bar", bar=[[]])),
    ("wrong datatype", "fp32", _body(_x(F16, "FP64"))),
    ("unknown datatype", "fp32", _body(_x(F16, "FP33"))),
    ("lower-case datatype", "fp32", _body(_x(F16, "fp32"))),
    ("datatype not a string", "fp32", _hand().replace(b'"FP32"', b"32")),
    ("shape mismatch", "fp32", _body(_x(F16, shape=[16, 1]))),
    ("shape mismatch 2", "fp32", _body(_x(F16, shape=[2, 8]))),
    ("too few elements", "fp32", _body(_x(F16[:15], shape=[1, 16]))),
    ("too many elements", "fp32", _body(_x([*F16, 1.0], shape=[1, 16]))),
    ("negative dim", "fp32", _body(_x(F16, shape=[-1, 16]))),
    ("shape of floats", "fp32", _body(_x(F16, shape=[1.0, 16.0]))),
    ("shape a string", "fp32", _body(_x(F16, shape="1,16"))),
    ("nested data", "fp32", _body(_x([F16], shape=[1, 16]))),
    ("nested by row", "fp64", _body(_x([F16, F16], "FP64", [2, 16]))),
    ("ragged data", "fp64", _body(_x([F16, F16[:8]], "FP64", [2, 16]))),
    ("too deep", "fp32", _body(_x([[F16]], shape=[1, 16]))),
    ("a string element", "fp32", _body(_x([*F16[:15], "1"]))),
    ("a null element", "fp32", _body(_x([*F16[:15], None]))),
    ("a bool element", "fp32", _body(_x([*F16[:15], True]))),
    ("an object element", "fp32", _body(_x([*F16[:15], {}]))),
    ("data not a list", "fp32", _body(_x(1.5, shape=[1, 16]))),
    ("no data", "fp32", _hand().replace(b',"data":[' + DATA + b"]", b"")),
    ("no name", "fp32", _hand().replace(b'"name":"X",', b"")),
    ("no shape", "fp32", _hand().replace(b'"shape":[1,16],', b"")),
    ("no datatype", "fp32", _hand().replace(b'"datatype":"FP32",', b"")),
    ("empty inputs", "fp32", _body()),
    ("no inputs", "fp32", b'{"id":"x"}'),
    ("inputs an object", "fp32", b'{"inputs":{"name":"X"}}'),
    ("an input not an object", "fp32", b'{"inputs":[1]}'),
    ("unknown input", "fp32", _body(_x(F16), _x([1.0], name="Q"))),
    ("input twice", "fp32", _body(_x(F16), _x(F16))),
    ("trailing garbage", "fp32", PLAIN + b"x"),
    ("trailing NUL", "fp32", PLAIN + b"\x00"),
    ("trailing whitespace", "fp32", PLAIN + b" \n"),
    ("two documents", "fp32", PLAIN + PLAIN),
    ("truncated", "fp32", PLAIN[:-1]),
    ("non-UTF-8 in id", "fp32", _hand(tail=b',"id":"\xff\xfe"')),
    ("non-UTF-8 in a key", "fp32", _hand(tail=b',"\xc3":1')),
    ("overlong UTF-8", "fp32", _hand(tail=b',"id":"\xc0\xaf"')),
    ("non-UTF-8 outside strings", "fp32", PLAIN[:-1] + b"\xff}"),
    ("UTF-8 BOM", "fp32", b"\xef\xbb\xbf" + PLAIN),
    ("empty body", "fp32", b""),
    ("null", "fp32", b"null"),
    ("a list", "fp32", b"[]"),
    ("{}", "fp32", b"{}"),
    ("trailing dot", "fp32", _hand(b"1." + b",1" * 15)),
    ("deep nesting", "fp32", b"[" * 5000 + b"]" * 5000),
    ("deep data", "fp32", _hand(b"[" * 3000 + b"]" * 3000)),
    (
        "deep parameters",
        "fp32",
        _hand(tail=b',"parameters":{"a":' + b'{"a":' * 2000 + b"1" + b"}" * 2001),
    ),
    ("deep extra member", "fp32", _hand(tail=b',"x":' + b"[" * 2000 + b"]" * 2000)),
    ("int64", "int64", _body(_x([-(2**63), 2**63 - 1, 0, 5], "INT64", [2, 2]))),
    ("int64 floats", "int64", _body(_x([1.0, 2.0], "INT64"))),
    ("int64 fractional", "int64", _body(_x([1.5, 2.0], "INT64"))),
    ("int64 exponent", "int64", _body(_x([1.0], "INT64")).replace(b"1.0", b"1e3")),
    (
        "int64 out of range",
        "int64",
        _body(_x([0], "INT64")).replace(b"[0]", b"[9223372036854775808]"),
    ),
    (
        "int64 below range",
        "int64",
        _body(_x([0], "INT64")).replace(b"[0]", b"[-9223372036854775809]"),
    ),
    ("int64 huge", "int64", _body(_x([0], "INT64")).replace(b"[0]", b"[1" + b"0" * 40 + b"]")),
    ("int64 -0", "int64", _body(_x([0], "INT64")).replace(b"[0]", b"[-0]")),
    ("int64 shape with 0", "int64", _body(_x([], "INT64", [0, 16]))),
    ("int64 shape with 0 and data", "int64", _body(_x([1], "INT64", [0, 1]))),
    ("uint8", "uint8", _body(_x([0, 1, 254, 255], "UINT8", [4]))),
    ("uint8 256", "uint8", _body(_x([256], "UINT8", [1]))),
    ("uint8 -1", "uint8", _body(_x([-1], "UINT8", [1]))),
    ("uint8 empty", "uint8", _body(_x([], "UINT8", [0]))),
    ("bool", "bool", _body(_x([True, False, True], "BOOL", [3]))),
    ("bool as 0/1", "bool", _body(_x([0, 1], "BOOL", [2]))),
    ("bool as strings", "bool", _body(_x(["true"], "BOOL", [1]))),
    ("fp16", "fp16", _body(_x([0.1, 65504, 6e-8, -2.5], "FP16"))),
    ("fp16 overflow", "fp16", _body(_x([70000.0], "FP16"))),
    ("fp16 tiny", "fp16", _body(_x([1e-9], "FP16"))),
    ("fp64", "fp64", _body(_x([0.1, 1e308, 5e-324, -0.0] * 4, "FP64"))),
    ("fp64 two rows", "fp64", _body(_x([0.5] * 32, "FP64", [2, 16]))),
    ("versioned fp32", "fp32/versions/1", PLAIN),
    ("identity", "identity", _body(_x([1, 2], "INT32"), _x([0.5], "FP64", name="D"))),
    ("identity scalar", "identity", _body(_x([3], "INT16", []))),
    ("identity bytes", "identity", _body(_x(["a", "é", '"\\'], "BYTES", [3]))),
    ("identity bool", "identity", _body(_x([True], "BOOL", [1]))),
    ("identity fp16", "identity", _body(_x([0.1], "FP16", [1]))),
    ("identity uint64", "identity", _body(_x([2**64 - 1], "UINT64", [1]))),
    ("identity bf16", "identity", _body(_x([0.1], "BF16", [1]))),
    ("identity no inputs", "identity", _body()),
    (
        "identity escaped names",
        "identity",
        _body(
            _x([1], "INT8", [1], 'a"b'),
            _x([2], "INT8", [1], "c\\d"),
            _x([3], "INT8", [1], "é✓"),
            _x([4], "INT8", [1], "\x7f\x1f"),
        ),
    ),
    (
        "identity name escaped in the request",
        "identity",
        _body(_x([1], "INT8", [1], "P")).replace(b'"P"', b'"\\u00e9\\n"'),
    ),
    (
        "identity outputs subset",
        "identity",
        _body(_x([1], "INT8", [1], "A"), _x([2], "INT8", [1], "B"), outputs=[{"name": "B"}]),
    ),
    (
        "identity outputs unknown",
        "identity",
        _body(_x([1], "INT8", [1], "A"), outputs=[{"name": "Q"}]),
    ),
    ("optional", "optional", _body(_x([1.0, 2.0], shape=[2]))),
    ("optional with Z", "optional", _body(_x([1.0], shape=[1]), _x([3.0], shape=[1], name="Z"))),
    ("optional only Z", "optional", _body(_x([3.0], shape=[1], name="Z"))),
    (
        "optional W asked, not given",
        "optional",
        _body(_x([1.0], shape=[1]), outputs=[{"name": "W"}]),
    ),
    (
        "optional W asked",
        "optional",
        _body(_x([1.0], shape=[1]), _x([2.0], shape=[1], name="Z"), outputs=[{"name": "W"}]),
    ),
    (
        "rows",
        "rows",
        _body(_x([1.0] * 8, shape=[2, 4], name="A"), _x([2.0] * 8, shape=[2, 4], name="B")),
    ),
    (
        "rows nested",
        "rows",
        _body(_x([[1.0] * 4], shape=[1, 4], name="A"), _x([[2.0] * 4], shape=[1, 4], name="B")),
    ),
    ("rows zero", "rows", _body(_x([], shape=[0, 4], name="A"), _x([], shape=[0, 4], name="B"))),
    (
        "rows over the batch",
        "rows",
        _body(_x([1.0] * 20, shape=[5, 4], name="A"), _x([1.0] * 20, shape=[5, 4], name="B")),
    ),
    (
        "rows batches differ",
        "rows",
        _body(_x([1.0] * 4, shape=[1, 4], name="A"), _x([1.0] * 8, shape=[2, 4], name="B")),
    ),
    ("rows one missing", "rows", _body(_x([1.0] * 4, shape=[1, 4], name="A"))),
    *((name, name, PLAIN) for name in _ODD),
    ("identity large", "identity", _body(_x(list(range(4000)), "INT32", [4000]))),
    # The largest body the native side keeps (MAX_FAST_BODY in _native/http11.pyx).
    (
        "a body of 64 KiB",
        "fp32",
        _body(_x(F16), id="")[:-1] + b" " * (65536 - len(PLAIN) - 8) + b"}",
    ),
]
assert len(CORPUS[-1][2]) == 65536

_BINARY_HEAD = orjson.dumps(
    {
        "inputs": [
            {
                "name": "X",
                "shape": [1, 16],
                "datatype": "FP32",
                "parameters": {"binary_data_size": 64},
            }
        ]
    }
)
#: Requests with Inference-Header-Content-Length: (what, model, body, header length).
HEADED = [
    ("binary input", "fp32", _BINARY_HEAD + np.arange(16, dtype="f4").tobytes(), len(_BINARY_HEAD)),
    ("binary input, short", "fp32", _BINARY_HEAD + bytes(63), len(_BINARY_HEAD)),
    ("header length of all the JSON", "fp32", PLAIN, len(PLAIN)),
    ("header length inside the JSON", "fp32", PLAIN, 10),
    ("raw binary", "uint8", bytes(range(7)), 0),
    ("raw binary, two inputs", "rows", bytes(32), 0),
]


def _binary(
    *inputs: tuple[str, str, Any, bool], tail: bytes = b"", **extra: Any
) -> tuple[bytes, int]:
    """A body with the binary data extension: inputs (name, datatype, array, in binary), the
    request's other members (``outputs``, ``parameters``, ``id``), then ``tail``."""
    entries, parts = [], []
    for name, datatype, array, in_binary in inputs:
        entry: dict[str, Any] = {"name": name, "shape": list(array.shape), "datatype": datatype}
        if in_binary:
            raw = array.astype(array.dtype.newbyteorder("<")).tobytes()
            entry["parameters"] = {"binary_data_size": len(raw)}
            parts.append(raw)
        else:
            entry["data"] = array.ravel().tolist()
        entries.append(entry)
    head = orjson.dumps({"inputs": entries, **extra})
    return head + b"".join(parts) + tail, len(head)


_X16 = np.arange(16, dtype="f4").reshape(1, 16) / 4
_BIN_Y = {"outputs": [{"name": "Y", "parameters": {"binary_data": True}}]}
_BIN_ALL = {"parameters": {"binary_data_output": True}}
_I6 = np.arange(-3, 3).reshape(2, 3)
_MIXED = (
    ("A", "FP32", _X16, True),
    ("K", "INT64", _I6, False),
    ("B", "BOOL", np.array([True, False, True]), True),
    ("H", "FP16", np.array([[0.5, -2.0]], np.float16), True),
)
_AB = (("A", "FP32", _X16.reshape(4, 4), True), ("B", "FP32", -_X16.reshape(4, 4), True))
#: Small binary requests, which the fused inference answers: (what, model, (body, header
#: length)).
BINARY = [
    ("binary, Y in binary", "fp32", _binary(("X", "FP32", _X16, True), **_BIN_Y)),
    ("binary, all in binary", "fp32", _binary(("X", "FP32", _X16, True), **_BIN_ALL)),
    ("binary, all, and an id", "fp32", _binary(("X", "FP32", _X16, True), id="r1", **_BIN_ALL)),
    (
        "binary, Y listed in JSON",
        "fp32",
        _binary(("X", "FP32", _X16, True), outputs=[{"name": "Y", "parameters": {}}], **_BIN_ALL),
    ),
    (
        "binary, binary_data false",
        "fp32",
        _binary(
            ("X", "FP32", _X16, True), outputs=[{"name": "Y", "parameters": {"binary_data": False}}]
        ),
    ),
    ("binary, JSON answer", "fp32", _binary(("X", "FP32", _X16, True))),
    ("binary, JSON input, binary answer", "fp32", _binary(("X", "FP32", _X16, False), **_BIN_Y)),
    ("binary, several inputs", "identity", _binary(*_MIXED, id="m", **_BIN_ALL)),
    (
        "binary, several inputs, two listed",
        "identity",
        _binary(
            *_MIXED,
            outputs=[{"name": "H", "parameters": {"binary_data": True}}, {"name": "K"}],
        ),
    ),
    (
        "binary, bool",
        "bool",
        _binary(("X", "BOOL", np.array([True, False, False]), True), **_BIN_Y),
    ),
    ("binary, fp16", "fp16", _binary(("X", "FP16", np.ones((1, 5), np.float16), True), **_BIN_Y)),
    ("binary, int64 -1 dims", "int64", _binary(("X", "INT64", _I6, True), **_BIN_ALL)),
    ("binary, rows", "rows", _binary(*_AB, **_BIN_Y)),
    (
        "binary, rows over the batch",
        "rows",
        _binary(
            ("A", "FP32", np.ones((5, 4), "f4"), True), ("B", "FP32", np.ones((5, 4), "f4"), True)
        ),
    ),
    (
        "binary, optional left out",
        "optional",
        _binary(("X", "FP32", _X16.ravel(), True), **_BIN_ALL),
    ),
    ("binary, Y not declared", "fp32", _binary(("X", "FP32", _X16, True), outputs=[{"name": "Z"}])),
    (
        "binary, an output not produced",
        "identity",
        _binary(
            ("X", "FP32", _X16, True),
            outputs=[{"name": "NOPE", "parameters": {"binary_data": True}}],
        ),
    ),
    ("binary, writable inputs", "writes", _binary(("X", "FP32", _X16, True), **_BIN_Y)),
    ("binary, trailing bytes", "fp32", _binary(("X", "FP32", _X16, True), tail=b"\0")),
    ("binary, bool byte 2", "bool", _binary(("X", "BOOL", np.array([1, 2], "u1"), True))),
    ("binary, wrong datatype", "fp32", _binary(("X", "FP64", _X16.astype("f8"), True))),
    *((f"binary, {name}", name, _binary(("X", "FP32", _X16, True), **_BIN_ALL)) for name in _ODD),
]
_ONE = _binary(("X", "FP32", _X16, True))
BINARY += [
    ("binary, size not the shape's", "fp32", (_ONE[0].replace(b":64}", b":60}"), _ONE[1])),
    ("binary, size past the body", "fp32", (_ONE[0].replace(b":64}", b":68}"), _ONE[1])),
    ("binary, short body", "fp32", (_ONE[0][:-4], _ONE[1])),
    ("binary, header length past the body", "fp32", (_ONE[0], len(_ONE[0]) + 1)),
    ("binary, header length inside the head", "fp32", (_ONE[0], _ONE[1] - 1)),
    ("binary, header length in the data", "fp32", (_ONE[0], _ONE[1] + 4)),
]


def test_the_corpus_is_answered_alike(servers: tuple[RunningServer, RunningServer]) -> None:
    statuses = set()
    for what, model, body in CORPUS:
        answer = _same_answer(servers, model, body, what)
        statuses.add(answer[9:12])
    assert {b"200", b"400", b"500"} <= statuses
    for what, model, body, header_length in HEADED:
        _same_answer(servers, model, body, what, header_length)
    _same_statistics(servers)


def test_small_binary_requests_are_answered_alike(
    servers: tuple[RunningServer, RunningServer],
) -> None:
    statuses = set()
    for what, model, (body, header_length) in BINARY:
        answer = _same_answer(servers, model, body, what, header_length)
        statuses.add(answer[9:12])
    assert {b"200", b"400", b"500"} <= statuses
    _same_statistics(servers)
    counted = _metrics_counts(servers[0])
    assert any(line.startswith(b'oipcodec_requests_total{path="binary"} ') for line in counted)


def _pipelined(server: RunningServer, requests: list[tuple[str, str, bytes]]) -> list[bytes]:
    """The answers to ``requests`` written in one send on one connection, read in order,
    each without its date line."""
    stream = b"".join(
        b"POST /v2/models/%s/infer HTTP/1.1\r\nhost: test\r\ncontent-length: %d\r\n\r\n%s"
        % (model.encode(), len(body), body)
        for _, model, body in requests
    )
    answers = []
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=TIMEOUT) as sock:
        sock.sendall(stream)
        received = b""
        for _ in requests:
            answer, received = _read_answer(sock, received)
            answers.append(answer)
    return answers


def test_the_corpus_pipelined_on_one_connection_is_answered_alike(
    servers: tuple[RunningServer, RunningServer],
) -> None:
    """Every request of the corpus in one write: the native side answers them from one read
    buffer, in order (a large answer, encoded in a thread, among them)."""
    native, python = servers
    before = CALLS.answered
    got = _pipelined(native, CORPUS)
    assert CALLS.answered == before + len(CORPUS), "the native server handed some over"
    for (what, _, _), answer, want in zip(CORPUS, got, _pipelined(python, CORPUS), strict=True):
        assert answer == want, what
    _same_statistics(servers)


# ------------------------------------------------------------------------------- hypothesis

#: What hypothesis writes for each declared model: name -> (datatype, values).
_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "FP32": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "FP16": st.floats(width=16, allow_nan=False, allow_infinity=False),
    "FP64": st.floats(allow_nan=False, allow_infinity=False),
    "INT64": st.integers(-(2**63), 2**63 - 1),
    "UINT8": st.integers(0, 255),
    "BOOL": st.booleans(),
    "INT32": st.integers(-(2**31), 2**31 - 1),
}
_NAMES = st.text(st.characters(codec="utf-8"), max_size=4)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, bytes]:
    """A request of the corpus, or a small valid request to one of the declared models (or the
    identity or optional model) written by orjson or by the json module (spaces, ASCII
    escapes); its bytes mutated or not."""
    if draw(st.integers(0, 3)) == 0:
        _, model, body = draw(st.sampled_from(CORPUS))
    else:
        model, body = draw(_valid())
    for _ in range(draw(st.integers(0, 2))):
        if not body:
            break
        at = draw(st.integers(0, len(body) - 1))
        how = draw(st.sampled_from(["replace", "delete", "insert", "truncate"]))
        byte = bytes([draw(st.integers(0, 255))])
        if how == "replace":
            body = body[:at] + byte + body[at + 1 :]
        elif how == "delete":
            body = body[:at] + body[at + 1 :]
        elif how == "insert":
            body = body[:at] + byte + body[at:]
        else:
            body = body[:at]
    return model, body


@st.composite
def _valid(draw: st.DrawFn) -> tuple[str, bytes]:
    import json

    model = draw(st.sampled_from([*_DECLARED, "identity", "optional"]))
    if model in _DECLARED:
        datatype, declared, _ = _DECLARED[model]
        shape = [d if d >= 0 else draw(st.integers(0, 3)) for d in declared]
        name = "X"
    else:
        datatype = "FP32" if model == "optional" else draw(st.sampled_from(sorted(_VALUES)))
        shape = [draw(st.integers(0, 4))]
        name = "X" if model == "optional" else draw(_NAMES)
    count = math.prod(shape)
    data = draw(st.lists(_VALUES[datatype], min_size=count, max_size=count))
    document: dict[str, Any] = {
        "inputs": [{"name": name, "shape": shape, "datatype": datatype, "data": data}]
    }
    if model == "optional" and draw(st.booleans()):
        z = draw(st.lists(_VALUES["FP32"], max_size=3))
        document["inputs"].append({"name": "Z", "shape": [len(z)], "datatype": "FP32", "data": z})
    if draw(st.booleans()):
        document["id"] = draw(_NAMES)
    if draw(st.booleans()):
        document["parameters"] = draw(
            st.dictionaries(
                _NAMES, st.one_of(st.integers(-5, 5), _NAMES, st.booleans()), max_size=2
            )
        )
    if draw(st.booleans()):
        document["outputs"] = [{"name": name if model == "identity" else "Y"}]
    if draw(st.booleans()):
        body = orjson.dumps(document)
    else:
        body = json.dumps(
            document, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1]))
        ).encode()
    return model, body


@given(request=requests())
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_requests_hypothesis_writes_are_answered_alike(
    servers: tuple[RunningServer, RunningServer], request: tuple[str, bytes]
) -> None:
    _same_answer(servers, *request)


@st.composite
def binary_requests(draw: st.DrawFn) -> tuple[str, bytes, int]:
    """A valid request (:func:`_valid`) with some inputs moved to the binary part, outputs
    asked in binary or not, its header length right or a little off, its bytes mutated or
    not."""
    model, body = draw(_valid())
    document = orjson.loads(body)
    parts = []
    for entry in document["inputs"]:
        if draw(st.booleans()):
            dtype = np.dtype(DATATYPES[entry["datatype"]].numpy_dtype).newbyteorder("<")
            raw = np.array(entry.pop("data"), dtype).tobytes()
            entry["parameters"] = {"binary_data_size": len(raw)}
            parts.append(raw)
    if draw(st.booleans()):
        document["parameters"] = {"binary_data_output": draw(st.booleans())}
    if "outputs" in document and draw(st.booleans()):
        document["outputs"][0]["parameters"] = {"binary_data": draw(st.booleans())}
    head = orjson.dumps(document)
    body = head + b"".join(parts)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + bytes([draw(st.integers(0, 255))]) + body[at + 1 :]
    return model, body, len(head) + draw(st.sampled_from([0, 0, 0, -1, 1, 4]))


@given(request=binary_requests())
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_binary_requests_hypothesis_writes_are_answered_alike(
    servers: tuple[RunningServer, RunningServer], request: tuple[str, bytes, int]
) -> None:
    model, body, header_length = request
    _same_answer(servers, model, body, header_length=header_length)


def test_the_statistics_after_hypothesis_are_alike(
    servers: tuple[RunningServer, RunningServer],
) -> None:
    _same_statistics(servers)


# -------------------------------------------------------------------------------- found here


@pytest.mark.xfail(
    strict=True,
    reason="rest.py: orjson's UTF-8 error is answered at byte offset 0 and as 'surrogates not "
    "allowed', not at the offset of the invalid byte",
)
@pytest.mark.parametrize("bad", [b"\xff\xfe", b"\xc0\xaf"])
def test_a_body_that_is_not_utf8_is_answered_with_the_offset_of_the_bad_byte(
    servers: tuple[RunningServer, RunningServer], bad: bytes
) -> None:
    body = _hand(tail=b',"id":"' + bad + b'"')
    answer = _same_answer(servers, "fp32", body, "not UTF-8")
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert b"byte offset %d:" % body.index(bad) in answer
    assert b"surrogates" not in answer


# ------------------------------------------------------------------------------ tritonclient


def test_tritonclient_is_answered_by_the_native_server(
    servers: tuple[RunningServer, RunningServer],
) -> None:
    httpclient = pytest.importorskip("tritonclient.http")
    x = np.arange(16, dtype=np.float32).reshape(1, 16) / 3
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    for server in servers:
        before = CALLS.answered
        client = httpclient.InferenceServerClient(server.http_address)
        try:
            tensor = httpclient.InferInput("X", [1, 16], "FP32")
            tensor.set_data_from_numpy(x, binary_data=False)
            out = [httpclient.InferRequestedOutput("Y", binary_data=False)]
            answer = client.infer("fp32", [tensor], outputs=out, request_id="t1")
            np.testing.assert_array_equal(answer.as_numpy("Y"), x - np.float32(0.5))
            assert answer.get_response()["id"] == "t1"
            inputs = []
            for name, value in (("A", a), ("B", a + 1)):
                inputs.append(httpclient.InferInput(name, [2, 4], "FP32"))
                inputs[-1].set_data_from_numpy(value, binary_data=False)
            answer = client.infer("rows", inputs)
            np.testing.assert_array_equal(answer.as_numpy("Y"), a * 2 + 1)
            b = np.array([[True, False]])
            tensor = httpclient.InferInput("X", [2], "BOOL")
            tensor.set_data_from_numpy(b[0], binary_data=False)
            answer = client.infer(
                "bool", [tensor], outputs=[httpclient.InferRequestedOutput("Y", binary_data=False)]
            )
            np.testing.assert_array_equal(answer.as_numpy("Y"), ~b[0])
        finally:
            client.close()
        if server is servers[0]:
            assert CALLS.answered == before + 3, "tritonclient's requests were handed over"
    _same_statistics(servers)


# --------------------------------------------------------------------------- dynamic batching

_B4 = np.arange(12, dtype="f4").reshape(3, 4) / 2
#: Requests to the dynamically batched models: (what, model, (body, header length), whether
#: the fused inference takes it: its kernel decodes it).
BATCHED = [
    ("one row", "batched", (_body(_x([1, 2, 3, 4], shape=[1, 4])), -1), True),
    (
        "three rows, an id",
        "batched",
        (_body(_x(_B4.ravel().tolist(), shape=[3, 4]), id="r"), -1),
        True,
    ),
    ("Y asked in binary", "batched", _binary(("X", "FP32", _B4, True), **_BIN_Y), True),
    ("all in binary", "batched", _binary(("X", "FP32", _B4[:1], False), **_BIN_ALL), True),
    ("nine rows", "batched", (_body(_x([0.5] * 36, shape=[9, 4])), -1), True),
    ("two batch sizes", "batched_identity", _binary(*_AB[:1], ("C", "FP32", _X16, True)), True),
    ("a scalar", "batched_identity", (_body(_x([1], shape=[])), -1), True),
    ("predict raises", "batched", (_body(_x([-1, 2, 3, 4], shape=[1, 4])), -1), True),
    (
        "an input it does not declare",
        "batched",
        (_body(_x([1] * 4, shape=[1, 4], name="Z")), -1),
        False,
    ),
    (
        "a priority",
        "batched",
        (_body(_x([1] * 4, shape=[1, 4]), parameters={"priority": 1}), -1),
        False,
    ),
    ("any datatype", "batched_identity", _binary(*_MIXED[1:3]), True),
    ("int64 rows", "batched_identity", (_body(_x([1, -2, 3], "INT64", [3, 1])), -1), True),
    ("the outputs named", "batched_identity", (_body(_x(F16), outputs=[{"name": "X"}]), -1), True),
    ("an output it lacks", "batched_identity", (_body(_x(F16), outputs=[{"name": "Q"}]), -1), True),
    *(
        entry
        for model in ("async", "thread")
        for entry in [
            (f"{model}: one row", model, (_body(_x([1, 2, 3, 4], shape=[1, 4])), -1), True),
            (f"{model}: binary", model, _binary(("X", "FP32", _B4, True), **_BIN_Y), True),
            (f"{model}: raises", model, (_body(_x([-1, 2, 3, 4], shape=[1, 4])), -1), True),
            (
                f"{model}: an output it lacks",
                model,
                (_body(_x([1] * 4, shape=[1, 4]), outputs=[{"name": "Q"}]), -1),
                False,
            ),
            (
                f"{model}: a parameter",
                model,
                (_body(_x([1] * 4, shape=[1, 4]), parameters={"p": 1}), -1),
                False,
            ),
        ]
    ),
]


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the models of the requests the fused inference awaited, in order."""
    names: list[str] = []
    queued = Fused._waited

    def counted(fused: Fused, *args: Any) -> Any:
        names.append(fused.model.name)
        return queued(fused, *args)

    monkeypatch.setattr(Fused, "_waited", counted)
    return names


def test_dynamically_batched_requests_are_answered_alike(
    servers: tuple[RunningServer, RunningServer], taken: list[str]
) -> None:
    statuses = set()
    for what, model, (body, header_length), fused in BATCHED:
        before = len(taken)
        answer = _same_answer(servers, model, body, what, header_length)
        assert len(taken) == before + fused, what
        statuses.add(answer[9:12])
    assert {b"200", b"400", b"500"} <= statuses
    _same_statistics(servers)


def test_concurrent_requests_to_a_batched_model_are_answered_alike(
    servers: tuple[RunningServer, RunningServer], taken: list[str]
) -> None:
    """Six connections at once, each with 20 requests pipelined: batches form of several."""
    streams = [
        [
            ("", "batched", _body(_x([c, i, c + i, 1] * (1 + i % 3), shape=[1 + i % 3, 4])))
            for i in range(20)
        ]
        for c in range(6)
    ]
    answers = []
    for server in servers:
        got: dict[int, list[bytes]] = {}

        def send(c: int, server: RunningServer = server, got: dict[int, list[bytes]] = got) -> None:
            got[c] = _pipelined(server, streams[c])

        threads = [threading.Thread(target=send, args=(c,)) for c in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT)
        answers.append(got)
    assert len(taken) == 120  # every native request by the fused inference
    for c in range(6):
        assert answers[0][c] == answers[1][c]
        assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers[0][c])
    _same_statistics(servers)
    document = orjson.loads(
        _python_path(servers[0], "GET", "/v2/models/batched/stats", b"", -1).split(b"\r\n\r\n")[1]
    )
    stats = document["model_stats"][0]
    assert stats["execution_count"] < stats["inference_stats"]["success"]["count"]


def _failures(server: RunningServer, model: str, kind: str = "fail") -> int:
    """How many requests to ``model`` the statistics count as ``kind`` (fail, success)."""
    target = f"/v2/models/{model}/stats"
    document = orjson.loads(_python_path(server, "GET", target, b"", -1).split(b"\r\n\r\n")[1])
    return int(document["model_stats"][0]["inference_stats"][kind]["count"])


def test_a_client_gone_while_its_request_waits_in_the_queue_is_counted_alike(
    servers: tuple[RunningServer, RunningServer], taken: list[str]
) -> None:
    body = _body(_x([1, 2, 3, 4], shape=[1, 4]))
    request = b"POST /v2/models/batched_waits/infer HTTP/1.1\r\nhost: test\r\n"
    request += b"content-length: %d\r\n\r\n%s" % (len(body), body)
    for server in servers:
        with socket.create_connection(("127.0.0.1", server.http_port), timeout=TIMEOUT) as sock:
            sock.sendall(request)
            time.sleep(0.1)  # queued, its batch waiting for more
    deadline = time.monotonic() + TIMEOUT
    while any(_failures(s, "batched_waits") < 1 for s in servers):
        assert time.monotonic() < deadline, "the request was not counted refused"
        time.sleep(0.05)
    assert taken == ["batched_waits"]
    time.sleep(0.6)  # its batch's delay over: it ran without the request
    _same_statistics(servers)


@pytest.mark.parametrize("model", ["slow_async", "slow_thread"])
def test_a_client_gone_while_its_answer_is_awaited_is_counted_answered_alike(
    servers: tuple[RunningServer, RunningServer], taken: list[str], model: str
) -> None:
    """The request runs to its end on both servers (the Python protocol lets the app finish;
    the native one runs it in a task the connection's end does not cancel)."""
    body = _body(_x([1, 2, 3, 4], shape=[1, 4]))
    request = b"POST /v2/models/%s/infer HTTP/1.1\r\nhost: test\r\n" % model.encode()
    request += b"content-length: %d\r\n\r\n%s" % (len(body), body)
    for server in servers:
        with socket.create_connection(("127.0.0.1", server.http_port), timeout=TIMEOUT) as sock:
            sock.sendall(request)
            time.sleep(0.05)  # taken, its predict waiting
    deadline = time.monotonic() + TIMEOUT
    while any(_failures(s, model, "success") < 1 for s in servers):
        assert time.monotonic() < deadline, "the request was not counted answered"
        time.sleep(0.05)
    assert taken == [model]
    _same_statistics(servers)
