"""oipcodec.compat.mlserver against the installed MLServer (not a mock).

- the codec gives the arrays MLServer's NumpyCodec gives, for every datatype MLServer
  supports, on the payloads MLServer's own transports produce (REST JSON parsed and validated
  by MLServer's types, gRPC typed contents, gRPC raw contents unpacked by MLServer);
- BF16, which MLServer lacks; bad input raises an OIPError naming the input and element;
- end to end: a real ``mlserver start`` with models using the codec and oipcodec's transports,
  driven by the real tritonclient over HTTP JSON, HTTP binary and gRPC.

MLServer and KServe cannot share one environment: run these with the
``integration-mlserver`` extra installed (``OIPCODEC_REQUIRE_PEERS=mlserver`` makes a missing
MLServer an error instead of a skip).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import oipcodec
from oipcodec.compat import mlserver as compat
from tests.support.arrays import assert_same as _same
from tests.support.doc_recipes import DOCS, recipe
from tests.support.peers import require_peer
from tests.support.ports import free_ports
from tests.support.processes import http_status, running

mlserver = require_peer("mlserver")
ml_codecs = require_peer("mlserver.codecs")
ml_types = require_peer("mlserver.types")
ml_raw = require_peer("mlserver.raw")
ml_converters = require_peer("mlserver.grpc.converters")
ml_pb = require_peer("mlserver.grpc.dataplane_pb2")
ml_errors = require_peer("mlserver.errors")
ml_dtypes = require_peer("ml_dtypes")

NumpyCodec = ml_codecs.NumpyCodec
OIPCodec, OIPRequestCodec = compat.codecs()

# Every datatype of MLServer's Datatype enum (it has no BF16) but BYTES, with its numpy dtype.
NUMERIC = {
    "BOOL": np.bool_,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
}


def test_mlserver_supports_the_datatypes_tested() -> None:
    """The table above is MLServer's own: a new datatype there must be tested here."""
    assert {d.value for d in ml_types.Datatype} == {*NUMERIC, "BYTES"}


def _rest_input(name: str, datatype: str, shape: list[int], data: Any) -> Any:
    """A RequestInput as MLServer's REST endpoint makes it: the JSON body parsed by orjson
    (mlserver.rest.requests.Request.json) and validated into MLServer's InferenceRequest."""
    body = orjson.dumps(
        {"inputs": [{"name": name, "datatype": datatype, "shape": shape, "data": data}]}
    )
    return ml_types.InferenceRequest.model_validate(orjson.loads(body)).inputs[0]


def _arrays(datatype: str, allow_nan: bool = True) -> st.SearchStrategy[np.ndarray]:
    dtype = np.dtype(NUMERIC[datatype])
    elements = None
    if dtype.kind == "f":
        # JSON has no NaN/inf: MLServer (orjson) writes NaN as null, which both codecs read as NaN.
        elements = st.floats(width=dtype.itemsize * 8, allow_infinity=False, allow_nan=allow_nan)
    return hnp.arrays(
        dtype, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), elements=elements
    )


# ----------------------------------------------------------------------------- registry


def test_codecs_are_registered_under_their_content_type() -> None:
    base = require_peer("mlserver.codecs.base")
    assert base.find_input_codec(compat.CONTENT_TYPE) is OIPCodec
    assert base.find_request_codec(compat.CONTENT_TYPE) is OIPRequestCodec
    assert issubclass(OIPCodec, ml_codecs.InputCodec)
    assert issubclass(OIPRequestCodec, ml_codecs.RequestCodec)
    assert compat.OIPCodec is OIPCodec
    # Never picked by payload in place of NumpyCodec (MLServer would warn on every call).
    assert base.find_input_codec_by_payload(np.zeros(2)) is NumpyCodec
    assert OIPRequestCodec.can_encode({"a": np.zeros(2)})
    assert not OIPRequestCodec.can_encode([1, 2])


def test_mlserver_decode_request_input_uses_the_codec() -> None:
    request_input = _rest_input("x", "INT32", [2, 2], [1, 2, 3, 4])
    request_input.parameters = ml_types.Parameters(content_type="oip")
    decoded = ml_codecs.decode_request_input(request_input)
    _same(decoded, np.array([[1, 2], [3, 4]], np.int32))
    assert ml_codecs.get_decoded(request_input) is decoded


# ----------------------------------------------------------------------------- decode parity


@pytest.mark.parametrize("datatype", list(NUMERIC))
@settings(max_examples=40)
@given(data=st.data())
def test_rest_json_same_as_numpy_codec(datatype: str, data: st.DataObject) -> None:
    array = data.draw(_arrays(datatype))
    nested = data.draw(st.booleans())
    values = array.tolist() if nested else array.reshape(-1).tolist()
    request_input = _rest_input("x", datatype, list(array.shape), values)
    ours = OIPCodec.decode_input(request_input)
    _same(ours, NumpyCodec.decode_input(request_input))
    # the values sent, NaN as NaN (JSON null carries neither its sign nor its payload)
    assert ours.dtype == array.dtype and np.array_equal(
        ours, array, equal_nan=array.dtype.kind == "f"
    )


@pytest.mark.parametrize("datatype", [*NUMERIC, "BYTES"])
@settings(max_examples=25)
@given(data=st.data())
def test_rest_route_request_same_as_mlserver_rest(datatype: str, data: st.DataObject) -> None:
    """What the installed REST route hands to MLServer (rest.decode_request +
    to_mlserver_request) decodes, with NumpyCodec and with OIPCodec, to what MLServer's own REST
    path (orjson + pydantic + NumpyCodec) gives for the same JSON body."""
    if datatype == "BYTES":
        texts = data.draw(st.lists(st.text(max_size=5), min_size=1, max_size=8))
        array = np.array([t.encode() for t in texts], dtype=object)
    else:  # oipcodec writes NaN as the token NaN, which MLServer's orjson refuses
        array = data.draw(_arrays(datatype, allow_nan=False))
    tensor = oipcodec.Tensor("x", datatype, array.shape, array)
    body = oipcodec.rest.encode_request(oipcodec.InferRequest([tensor]), binary=False)[0]
    theirs = NumpyCodec.decode_input(
        ml_types.InferenceRequest.model_validate(orjson.loads(body)).inputs[0]
    )
    routed = compat.to_mlserver_request(oipcodec.rest.decode_request(body), bytes_as_str=True)
    request_input = routed.inputs[0]
    if datatype == "BYTES":
        assert request_input.data.root == texts  # str, as MLServer's REST path gives them
        assert NumpyCodec.decode_input(request_input).tolist() == theirs.tolist()
        assert OIPCodec.decode_input(request_input).tolist() == array.tolist()
    else:
        _same(NumpyCodec.decode_input(request_input), theirs)
        _same(OIPCodec.decode_input(request_input), theirs)


@pytest.mark.parametrize("datatype", list(NUMERIC))
@settings(max_examples=40)
@given(data=st.data())
def test_grpc_raw_and_typed_same_as_numpy_codec(datatype: str, data: st.DataObject) -> None:
    dtype = np.dtype(NUMERIC[datatype])
    # the raw path carries every value, NaN and inf included
    array = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5)))
    shape = list(array.shape)
    raw = array.astype(dtype.newbyteorder("<")).tobytes()
    # MLServer's raw path: struct.unpack into a list (mlserver.raw.unpack)
    elem = ml_types.RequestInput.model_construct(name="x", shape=shape, datatype=datatype, data=[])
    theirs = NumpyCodec.decode_input(
        ml_types.RequestInput(
            name="x", shape=shape, datatype=datatype, data=ml_raw.unpack(elem, raw)
        )
    )
    from_list = OIPCodec.decode_input(
        ml_types.RequestInput(
            name="x", shape=shape, datatype=datatype, data=ml_raw.unpack(elem, raw)
        )
    )
    from_raw = OIPCodec.decode_input(
        ml_types.RequestInput.model_construct(name="x", shape=shape, datatype=datatype, data=raw)
    )
    _same(from_list, theirs)
    _same(from_raw, theirs)
    assert not from_raw.flags.writeable  # a view of the raw contents, not a copy
    if datatype != "FP16":  # MLServer sends FP16 typed contents as bytes_contents (broken)
        contents = ml_pb.InferTensorContents(
            **{ml_converters._FIELDS[ml_types.Datatype(datatype)]: array.reshape(-1).tolist()}
        )
        typed = ml_types.RequestInput.model_construct(
            name="x", shape=shape, datatype=datatype,
            data=ml_converters.InferTensorContentsConverter.to_types(contents),
        )  # fmt: skip
        if dtype.kind != "f" or not np.isnan(array).any():
            _same(OIPCodec.decode_input(typed), NumpyCodec.decode_input(typed))


def test_grpc_converter_raw_contents_through_the_kernels() -> None:
    """install_grpc(): MLServer's own ModelInferRequestConverter reads raw_input_contents with
    the kernels (zero-copy arrays; BYTES stay a list of bytes), with NumpyCodec's results."""
    compat.install_grpc()
    floats = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    words = [b"ab", b"cd", b"ef"]
    message = ml_pb.ModelInferRequest(
        model_name="m",
        inputs=[
            ml_pb.ModelInferRequest.InferInputTensor(name="f", datatype="FP32", shape=[3, 4]),
            ml_pb.ModelInferRequest.InferInputTensor(name="b", datatype="BYTES", shape=[3]),
        ],
        raw_input_contents=[floats.tobytes(), oipcodec.kernels.serialize_bytes(words)],
    )
    request = ml_converters.ModelInferRequestConverter.to_types(message)
    f, b = request.inputs
    assert isinstance(f.data.root, np.ndarray)
    assert b.data.root == words
    _same(OIPCodec.decode_input(f), floats)
    _same(NumpyCodec.decode_input(f), floats)
    assert OIPCodec.decode_input(b).tolist() == words
    # NumpyCodec cannot read it: it wants every element as long as the last dimension (3).


def test_grpc_converter_refuses_bad_raw_contents() -> None:
    compat.install_grpc()
    message = ml_pb.ModelInferRequest(
        model_name="m",
        inputs=[ml_pb.ModelInferRequest.InferInputTensor(name="f", datatype="FP32", shape=[3])],
        raw_input_contents=[b"\x00" * 11],
    )
    with pytest.raises(
        ml_errors.InferenceError, match=r"input 'f': expected 12 bytes for 3 FP32 elements.*got 11"
    ):
        ml_converters.ModelInferRequestConverter.to_types(message)


def test_grpc_converter_writes_raw_output_contents() -> None:
    compat.install_grpc()
    array = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    for data in (array, array.reshape(-1).tolist()):  # array-backed or NumpyCodec's list
        response = ml_types.InferenceResponse(
            model_name="m",
            outputs=[ml_types.ResponseOutput(name="y", shape=[2, 3], datatype="FP32", data=data)],
        )
        message = ml_converters.ModelInferResponseConverter.from_types(response, use_raw=True)
        assert message.raw_output_contents[0] == array.tobytes()
        typed = ml_converters.ModelInferResponseConverter.from_types(
            ml_types.InferenceResponse(
                model_name="m",
                outputs=[
                    ml_types.ResponseOutput(name="y", shape=[2, 3], datatype="FP32", data=data)
                ],
            )
        )
        assert list(typed.outputs[0].contents.fp32_contents) == array.reshape(-1).tolist()


@settings(max_examples=100)
@given(st.lists(st.text(max_size=6), min_size=1, max_size=12))
def test_bytes_from_json_same_values_as_numpy_codec(texts: list[str]) -> None:
    """BYTES from JSON strings: oipcodec gives an object array of UTF-8 bytes, NumpyCodec a
    U array of the same strings."""
    request_input = _rest_input("s", "BYTES", [len(texts)], texts)
    ours = OIPCodec.decode_input(request_input)
    assert ours.dtype == object and ours.shape == (len(texts),)
    assert [x.decode("utf-8") for x in ours] == texts
    # numpy U arrays drop trailing NULs: NumpyCodec loses them, oipcodec keeps them
    theirs = NumpyCodec.decode_input(request_input).tolist()
    assert [x.decode("utf-8").rstrip("\x00") for x in ours] == theirs


@settings(max_examples=100)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.lists(st.binary(min_size=n, max_size=n), min_size=n, max_size=n)
    )
)
def test_bytes_elements_same_as_numpy_codec(words: list[bytes]) -> None:
    """BYTES as bytes (MLServer's gRPC raw and typed paths): NumpyCodec reads them as an
    S<shape[-1]> array, so only shape [n] with n-byte elements works there; oipcodec reads any
    lengths, into an object array of the same bytes."""
    request_input = ml_types.RequestInput(
        name="s", shape=[len(words)], datatype="BYTES", data=words
    )
    ours = OIPCodec.decode_input(request_input)
    theirs = NumpyCodec.decode_input(request_input)
    assert ours.dtype == object and ours.shape == theirs.shape
    assert b"".join(ours.tolist()) == theirs.tobytes()  # S arrays drop trailing NULs in tolist


def test_bf16_from_floats_and_raw() -> None:
    values = np.array([1.0, -2.5, 3.140625, 1e-3, 65504.0, np.inf], np.float32)
    expected = values.astype(ml_dtypes.bfloat16)
    from_json = compat.decode_data(values.tolist(), "BF16", [2, 3])
    from_raw = compat.decode_data(expected.tobytes(), "BF16", [2, 3])
    _same(from_json, expected.reshape(2, 3))
    _same(from_raw, expected.reshape(2, 3))
    output = OIPCodec.encode_output("y", expected.reshape(2, 3), as_list=False)
    assert output.datatype == "BF16" and output.data.root.dtype == ml_dtypes.bfloat16
    assert (
        OIPCodec.encode_output("y", expected.reshape(2, 3), as_list=True).data.root
        == expected.astype(np.float32).tolist()
    )


# ----------------------------------------------------------------------------- encode parity


@pytest.mark.parametrize("datatype", list(NUMERIC))
@settings(max_examples=30)
@given(data=st.data())
def test_encode_output_same_as_numpy_codec(datatype: str, data: st.DataObject) -> None:
    dtype = np.dtype(NUMERIC[datatype])
    array = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)))
    ours = OIPCodec.encode_output("y", array, as_list=True).model_dump()
    theirs = NumpyCodec.encode_output("y", array).model_dump()
    assert ours.pop("parameters") == {"content_type": "oip"}
    assert theirs.pop("parameters") == {"content_type": "np"}
    assert json.dumps(ours) == json.dumps(theirs)  # NaN is None in both
    lazy = OIPCodec.encode_output("y", array, as_list=False)
    assert lazy.data.root is array and lazy.shape == theirs["shape"]
    _same(compat.decode_output(lazy), array.reshape(theirs["shape"]))


def test_encode_bytes_and_strings() -> None:
    ours = OIPCodec.encode_output("s", np.array(["a", "bé"]), as_list=True)
    theirs = NumpyCodec.encode_output("s", np.array(["a", "bé"]))
    assert ours.data.root == theirs.data.root == [b"a", "bé".encode()]
    assert ours.datatype == theirs.datatype == "BYTES" and ours.shape == theirs.shape == [2, 1]


def test_request_codec_round_trip() -> None:
    arrays = {"a": np.arange(6, dtype=np.int64).reshape(2, 3), "b": np.ones((1, 2), np.float16)}
    request = OIPRequestCodec.encode_request(arrays, as_list=True)
    request = ml_types.InferenceRequest.model_validate(request.model_dump())  # through pydantic
    decoded = OIPRequestCodec.decode_request(request)
    assert list(decoded) == ["a", "b"]
    for name in arrays:
        _same(decoded[name], arrays[name])
    response = OIPRequestCodec.encode_response("m", np.zeros((2, 2), np.float32), "1", as_list=True)
    assert [o.name for o in response.outputs] == ["output-1"]
    _same(OIPRequestCodec.decode_response(response)["output-1"], np.zeros((2, 2), np.float32))


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("datatype", "shape", "data", "error", "pattern"),
    [
        (
            "INT32",
            [3],
            [1, 2.5, 3],
            oipcodec.DecodeError,
            r"input 'x': element 1: .*INT32, got float 2.5",
        ),
        ("INT8", [2], [1, 300], oipcodec.DecodeError, r"input 'x': element 1: .*300"),
        ("BOOL", [2], [True, 1], oipcodec.DecodeError, r"input 'x': element 1: "),
        ("FP32", [2, 2], [[1.0, 2.0], [3.0]], oipcodec.errors.ShapeError, r"input 'x': "),
        (
            "FP32",
            [3],
            [1.0, 2.0],
            oipcodec.errors.ShapeError,
            r"input 'x': shape \[3\] holds 3 elements but data has 2",
        ),
        ("FP32", [2], [1.0, "a"], oipcodec.DecodeError, r"input 'x': element 1: "),
        ("BYTES", [2], ["a", 5], oipcodec.DecodeError, r"input 'x': element 1: "),
        ("UINT8", [-1], [], oipcodec.errors.ShapeError, r"input 'x': .*non-negative"),
    ],
)
def test_bad_input_names_input_and_element(
    datatype: str, shape: list[int], data: Any, error: type[Exception], pattern: str
) -> None:
    request_input = ml_types.RequestInput.model_construct(
        name="x", datatype=datatype, shape=shape, data=data
    )
    with pytest.raises(error, match=pattern) as info:
        OIPCodec.decode_input(request_input)
    assert isinstance(info.value, oipcodec.OIPError)
    assert info.value.tensor == "x"


def test_bad_raw_bytes_name_the_input() -> None:
    request_input = ml_types.RequestInput.model_construct(
        name="r", datatype="FP64", shape=[2], data=b"\x00" * 9
    )
    with pytest.raises(oipcodec.DecodeError, match=r"input 'r': expected 16 bytes .* got 9"):
        OIPCodec.decode_input(request_input)
    with pytest.raises(oipcodec.EncodeError, match=r"output 'y': .*complex"):
        OIPCodec.encode_output("y", np.zeros(2, np.complex64))


# ----------------------------------------------------------------------------- end to end

MODELS_DIR = Path(__file__).resolve().parents[1] / "support"
STARTUP_SECONDS = 90


def _mlserver_command() -> list[str]:
    script = Path(sys.executable).with_name("mlserver")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from mlserver.cli.main import main; main()"]


@pytest.fixture(scope="module", params=[None, 0], ids=["workers-default", "workers-0"])
def server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[dict[str, str]]:
    """A real ``mlserver start`` with the models of tests/support/mlserver_models.py: with
    MLServer's default parallel inference workers (the model in a worker process, requests
    pickled to it), and with ``parallel_workers: 0`` (the model in the server process, handed
    the transports' arrays themselves)."""
    models = {
        "oip": {
            "implementation": "mlserver_models.OIPIdentity",
            "parameters": {"content_type": "oip"},
        },
        "plain": {"implementation": "mlserver_models.PlainIdentity"},
    }
    yield from _mlserver(tmp_path_factory.mktemp("mlserver"), models, request.param)


@pytest.fixture(scope="module")
def stock_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A real ``mlserver start`` whose model never imports oipcodec: MLServer as it ships."""
    models = {"identity": {"implementation": "mlserver_models_stock.Identity"}}
    yield from _mlserver(tmp_path_factory.mktemp("mlserver_stock"), models)


def _mlserver(
    root: Path, models: dict[str, dict[str, Any]], parallel_workers: int | None = None
) -> Iterator[dict[str, str]]:
    """``mlserver start`` on free 127.0.0.1 ports (metrics off, ``parallel_workers`` when
    given, everything else MLServer's defaults: one parallel inference worker) with ``models``
    (name -> model-settings), until every model is ready; always terminated."""
    http_port, grpc_port = free_ports(2)
    settings_json = {
        "host": "127.0.0.1",
        "http_port": http_port,
        "grpc_port": grpc_port,
        "metrics_endpoint": None,
        "load_models_at_startup": True,
    }
    if parallel_workers is not None:
        settings_json["parallel_workers"] = parallel_workers
    (root / "settings.json").write_text(json.dumps(settings_json))
    for name, model in models.items():
        (root / name).mkdir()
        (root / name / "model-settings.json").write_text(json.dumps({"name": name, **model}))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(MODELS_DIR), env.get("PYTHONPATH")]))
    command = [*_mlserver_command(), "start", str(root)]
    with _running(command, root, env, http_port, list(models)) as process:
        yield {
            "http": f"127.0.0.1:{http_port}",
            "grpc": f"127.0.0.1:{grpc_port}",
            "log": str(root / "mlserver.log"),
            "pid": str(process.pid),
        }


def _running(
    command: list[str], cwd: Path, env: dict[str, str], http_port: int, models: list[str]
) -> Any:
    """``command`` (an ``mlserver start``) run in ``cwd`` (output in ``cwd/mlserver.log``)
    until every model of ``models`` is ready on ``http_port``; stopped on exit."""
    base = f"http://127.0.0.1:{http_port}"

    def ready() -> bool:
        return all(http_status(f"{base}/v2/models/{name}/ready") == 200 for name in models)

    log_path = cwd / "mlserver.log"
    return running(command, ready, log_path, startup_seconds=STARTUP_SECONDS, cwd=cwd, env=env)


def _payloads() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    payloads: dict[str, np.ndarray] = {
        "BOOL": rng.integers(0, 2, (2, 3)).astype(np.bool_),
        "BYTES": np.array([[b"a", b""], [b"\x00z\x01", "é".encode()]], dtype=object),
    }
    for name, dtype in NUMERIC.items():
        if name == "BOOL":
            continue
        if np.dtype(dtype).kind == "f":
            payloads[name] = (rng.standard_normal((2, 3)) * 100).astype(dtype)
        else:
            info = np.iinfo(dtype)
            payloads[name] = rng.integers(info.min, info.max, (2, 3), dtype=dtype, endpoint=True)
    payloads["BF16"] = rng.standard_normal((2, 3)).astype(ml_dtypes.bfloat16)
    return payloads


PAYLOADS = _payloads()


def _grpc_infer(
    server: dict[str, str],
    model: str,
    arrays: dict[str, np.ndarray],
    tmp_path: Path,
    outputs_named: list[str] | None = None,
) -> dict[str, np.ndarray] | str:
    """tritonclient.grpc in a process of its own (tests/support/mlserver_grpc_client.py says why):
    the outputs (named as the inputs unless ``outputs_named``), or the error message of a
    refused request."""
    from tests.support import mlserver_grpc_client

    inputs, outputs = tmp_path / "inputs.npz", tmp_path / "outputs.npz"
    mlserver_grpc_client.save(str(inputs), arrays)
    subprocess.run(
        [
            sys.executable,
            mlserver_grpc_client.__file__,
            server["grpc"],
            model,
            str(inputs),
            str(outputs),
            ",".join(outputs_named or []),
        ],
        check=True,
        timeout=60,
    )
    error = Path(str(outputs) + ".error")
    if error.exists():
        return error.read_text()
    return mlserver_grpc_client.load(str(outputs))


def _infer(
    server: dict[str, str], model: str, path: str, arrays: dict[str, np.ndarray], tmp_path: Path
) -> dict[str, np.ndarray]:
    """The outputs (named as the inputs) of one request sent by the real tritonclient."""
    if path == "grpc":
        answer = _grpc_infer(server, model, arrays, tmp_path)
        assert not isinstance(answer, str), answer
        return answer
    http = require_peer("tritonclient.http")
    utils = require_peer("tritonclient.utils")
    binary = path == "http-binary"
    inputs = []
    for name, array in arrays.items():
        datatype = "BYTES" if array.dtype == object else utils.np_to_triton_dtype(array.dtype)
        tensor = http.InferInput(name, list(array.shape), datatype)
        tensor.set_data_from_numpy(array, binary_data=binary)
        inputs.append(tensor)
    outputs = [http.InferRequestedOutput(name, binary_data=binary) for name in arrays]
    client = http.InferenceServerClient(
        server["http"], network_timeout=30.0, connection_timeout=10.0
    )
    try:
        result = client.infer(model, inputs, outputs=outputs, timeout=30)
    finally:
        client.close()
    return {name: result.as_numpy(name) for name in arrays}


PATHS = ["http-json", "http-binary", "grpc"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("model", ["oip", "plain"])
def test_end_to_end_every_datatype(
    server: dict[str, str], model: str, path: str, tmp_path: Path
) -> None:
    """Every datatype, every encoding path, through a real ``mlserver start``: the ``oip`` model
    decodes with the codec; the ``plain`` one is an ordinary MLServer model behind oipcodec's
    transports. HTTP binary works at all only thanks to them (MLServer has no binary extension)."""
    arrays = {f"in_{name.lower()}": array for name, array in PAYLOADS.items()}
    if path == "http-json" or model == "plain":
        # tritonclient refuses BF16 in JSON (as Triton does); an ordinary model builds a
        # validated ResponseOutput, and MLServer's types have no BF16.
        del arrays["in_bf16"]
    result = _infer(server, model, path, arrays, tmp_path)
    for name, array in arrays.items():
        got = result[name]
        if array.dtype == object:
            # tritonclient hands JSON strings back as str (as it does from Triton)
            as_bytes = [x.encode() if isinstance(x, str) else x for x in got.reshape(-1)]
            assert got.shape == array.shape and as_bytes == array.reshape(-1).tolist(), name
        else:
            _same(got, array)


def test_end_to_end_large_fp32(server: dict[str, str], tmp_path: Path) -> None:
    array = np.random.default_rng(1).standard_normal((64, 1024)).astype(np.float32)
    for path in PATHS:
        _same(_infer(server, "oip", path, {"x": array}, tmp_path)["x"], array)


def test_end_to_end_bad_input_names_the_input_and_element(
    server: dict[str, str], tmp_path: Path
) -> None:
    body = orjson.dumps(
        {"inputs": [{"name": "x", "datatype": "INT32", "shape": [3], "data": [1, 2.5, 3]}]}
    )
    request = urllib.request.Request(
        f"http://{server['http']}/v2/models/oip/infer", data=body, method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=30)
    assert info.value.code == 400
    message = orjson.loads(info.value.read())["error"]
    assert message.startswith("input 'x': element 1 at byte offset "), message
    # gRPC: raw contents one byte short (MLServer itself would fail in struct.unpack)
    arrays = {"x": np.zeros(4, np.float32), "x.truncate": np.array(1)}
    answer = _grpc_infer(server, "oip", arrays, tmp_path)
    assert isinstance(answer, str) and "input 'x': expected 16 bytes" in answer, answer


def test_end_to_end_binary_data_must_be_a_boolean(server: dict[str, str]) -> None:
    """The REST route follows ``oipcodec serve``'s rule (:func:`oipcodec.rest.binary_outputs`):
    a ``binary_data`` that is not a boolean is a 400 naming the output, not taken as false."""
    body = orjson.dumps(
        {
            "inputs": [{"name": "x", "datatype": "FP32", "shape": [2], "data": [1.0, 2.0]}],
            "outputs": [{"name": "x", "parameters": {"binary_data": "yes"}}],
        }
    )
    request = urllib.request.Request(
        f"http://{server['http']}/v2/models/oip/infer", data=body, method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=30)
    assert info.value.code == 400
    message = orjson.loads(info.value.read())["error"]
    assert message == "output 'x': parameter 'binary_data' must be a boolean, got 'yes'"


@pytest.mark.parametrize("path", PATHS)
def test_end_to_end_unknown_model_keeps_mlserver_errors(
    server: dict[str, str], path: str, tmp_path: Path
) -> None:
    if path == "grpc":
        answer = _grpc_infer(server, "nope", {"x": np.zeros((1, 2), np.float32)}, tmp_path)
        assert isinstance(answer, str) and "not found" in answer, answer
        return
    utils = require_peer("tritonclient.utils")
    with pytest.raises(utils.InferenceServerException, match="not found"):
        _infer(server, "nope", path, {"x": np.zeros((1, 2), np.float32)}, tmp_path)


# ----------------------------------------------------------------------------- the recipe


@pytest.mark.skipif(not (DOCS / "compat.md").is_file(), reason="docs/ is not next to tests/")
def test_the_documented_recipe_with_mlserver_defaults(tmp_path: Path) -> None:
    """The recipe of docs/compat.md as written: its three files in a fresh folder and
    ``mlserver start .`` run there, so MLServer's defaults apply (one parallel inference
    worker; before the uvloop pin every worker died at start and no model loaded). Only the
    ports move, to free ones, through MLServer's environment variables (the recipe's
    settings.json sets none). Called by the real tritonclient: REST JSON, REST binary, gRPC."""
    files, shell = recipe("compat.md", "MLServer")
    assert sorted(files) == ["model-settings.json", "runtime.py", "settings.json"]
    assert json.loads(files["settings.json"]) == {"host": "127.0.0.1"}
    assert shell[-1] == "mlserver start ."
    # what this venv holds
    assert (
        shell[0]
        == 'pip install "path/to/oipcodec[integration-mlserver]"   # your checkout of oipcodec'
    )
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    http_port, grpc_port, metrics_port = free_ports(3)
    env = {
        **os.environ,
        "MLSERVER_HTTP_PORT": str(http_port),
        "MLSERVER_GRPC_PORT": str(grpc_port),
        "MLSERVER_METRICS_PORT": str(metrics_port),
    }
    command = [*_mlserver_command(), *shell[-1].split()[1:]]
    with _running(command, tmp_path, env, http_port, ["doubler"]) as process:
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        if children.exists():  # Linux: the inference worker is a child process
            assert children.read_text().split(), "no parallel inference worker"
        server = {"http": f"127.0.0.1:{http_port}", "grpc": f"127.0.0.1:{grpc_port}"}
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        for binary in (False, True):
            http = require_peer("tritonclient.http")
            tensor = http.InferInput("INPUT0", [3, 4], "FP32")
            tensor.set_data_from_numpy(x, binary_data=binary)
            wanted = [http.InferRequestedOutput("OUTPUT0", binary_data=binary)]
            client = http.InferenceServerClient(server["http"], network_timeout=30.0)
            try:
                result = client.infer("doubler", [tensor], outputs=wanted, timeout=30)
            finally:
                client.close()
            _same(result.as_numpy("OUTPUT0"), x * 2)
        answer = _grpc_infer(server, "doubler", {"INPUT0": x}, tmp_path, ["OUTPUT0"])
        assert not isinstance(answer, str), answer
        _same(answer["OUTPUT0"], x * 2)
    log = (tmp_path / "mlserver.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-4000:]


# ----------------------------------------------------------------------------- MLServer's client


@pytest.fixture(scope="module")
def oipcodec_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``oipcodec serve`` (its demo models), the command, on free 127.0.0.1 ports."""
    from tests.support.serve_process import run_serve

    yield from run_serve(tmp_path_factory.mktemp("serve"))


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_mlserver_infer_against_oipcodec_serve(
    oipcodec_server: dict[str, str], tmp_path: Path, binary: bool
) -> None:
    """MLServer's only client, ``mlserver infer`` (batch inference from a file of V2 requests,
    sent with tritonclient.http.aio; it makes no health or metadata call), against
    ``oipcodec serve``: every request answered, ids kept, outputs right."""
    a, b = list(range(16)), [3] * 16
    inputs = [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": a},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": b},
    ]
    lines = [orjson.dumps({"id": f"r{i}", "inputs": inputs}) for i in range(4)]
    (tmp_path / "in.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    command = [
        *_mlserver_command(), "infer", "--url", oipcodec_server["http"], "--model-name", "simple",
        "--input-data-path", str(tmp_path / "in.jsonl"),
        "--output-data-path", str(tmp_path / "out.jsonl"), "--workers", "2", "--retries", "1",
        *(["--binary-data"] if binary else []),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    answers = [orjson.loads(line) for line in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    assert sorted(answer["id"] for answer in answers) == [f"r{i}" for i in range(4)]
    for answer in answers:
        outputs = {output["name"]: output["data"] for output in answer["outputs"]}
        assert outputs == {"OUTPUT0": [x + 3 for x in a], "OUTPUT1": [x - 3 for x in a]}


# ----------------------------------------------------------------------------- our clients


def test_http_client_against_stock_mlserver(stock_server: dict[str, str]) -> None:
    """oipcodec.client.HttpClient with MLServer as it ships: JSON bodies work for every
    datatype MLServer has; a binary body, which stock MLServer cannot read, surfaces as a
    ServerError carrying MLServer's status instead of a hang or a decode error."""
    from oipcodec.client import HttpClient, ServerError

    arrays = {f"in_{name.lower()}": a for name, a in PAYLOADS.items() if name != "BF16"}
    client = HttpClient(f"http://{stock_server['http']}", timeout=30)
    try:
        response = client.infer("identity", arrays, binary=False)
        for name, array in arrays.items():
            got = response.output(name).data
            if array.dtype == object:
                assert got.reshape(-1).tolist() == array.reshape(-1).tolist(), name
            else:
                _same(got.reshape(array.shape), array)
        with pytest.raises(ServerError) as raised:
            client.infer("identity", {"x": np.zeros(4, np.float32)}, binary=True)
        assert raised.value.status is not None and raised.value.status >= 400
    finally:
        client.close()


def test_grpc_client_against_stock_mlserver(stock_server: dict[str, str]) -> None:
    """oipcodec.client.GrpcClient with MLServer as it ships, raw and typed input contents,
    every datatype MLServer has. MLServer answers with raw_output_contents and, on every
    output, an empty typed contents message, which the decoder accepts (nothing is mixed)."""
    from oipcodec.client import GrpcClient

    arrays = {f"in_{name.lower()}": a for name, a in PAYLOADS.items() if name != "BF16"}
    client = GrpcClient(stock_server["grpc"], timeout=30)
    try:
        for raw in (True, False):
            response = client.infer("identity", arrays, raw=raw)
            for name, array in arrays.items():
                got = response.output(name).data
                if array.dtype == object:
                    assert got.reshape(-1).tolist() == array.reshape(-1).tolist(), name
                else:
                    _same(got.reshape(array.shape), array)
    finally:
        client.close()


# ----------------------------------------------------------------------------- the host's guards

API_KEY = "secret"


class Echo(mlserver.MLModel):  # type: ignore[misc]
    """Answers every input as it came (MLServer's registry imports it by its path)."""

    async def predict(self, payload: Any) -> Any:
        outputs = [
            ml_types.ResponseOutput(name=i.name, shape=i.shape, datatype=i.datatype, data=i.data)
            for i in payload.inputs
        ]
        return ml_types.InferenceResponse(model_name=self.name, outputs=outputs)


def _guarded_mlserver_apps() -> tuple[Any, Any]:
    """MLServer's own FastAPI app (``mlserver.rest.app.create_app``, a real DataPlane and model
    registry holding an echo model) with the guards a host that wraps ``create_app`` puts on
    it: a dependency on the infer routes refusing a request without ``X-API-Key`` (401) and a
    middleware refusing one without ``X-Tenant`` (403). Two such apps on one data plane (its
    metrics are process-wide): stock, and with ``install_rest``."""
    import asyncio

    from fastapi import Depends, Header, HTTPException, Request
    from fastapi.responses import JSONResponse
    from fastapi.routing import APIRoute
    from mlserver.handlers import DataPlane, ModelRepositoryHandlers
    from mlserver.registry import MultiModelRegistry
    from mlserver.repository import SchemalessModelRepository
    from mlserver.rest.app import create_app
    from mlserver.settings import ModelSettings, Settings

    async def api_key(x_api_key: str | None = Header(default=None)) -> None:
        if x_api_key != API_KEY:
            raise HTTPException(401, "an API key is required")

    async def tenant(request: Request, call_next: Any) -> Any:
        if request.url.path.endswith("/infer") and "x-tenant" not in request.headers:
            return JSONResponse({"error": "no tenant"}, 403)
        return await call_next(request)

    settings = Settings(metrics_endpoint=None)
    registry = MultiModelRegistry()
    asyncio.run(registry.load(ModelSettings(name="echo", implementation=Echo)))
    data_plane = DataPlane(settings, registry)
    handlers = ModelRepositoryHandlers(SchemalessModelRepository("."), registry)
    apps = []
    for patched in (False, True):
        app = create_app(settings, data_plane, handlers)
        routes = app.router.routes
        for index, route in enumerate(routes):
            if isinstance(route, APIRoute) and route.path.endswith("/infer"):
                routes[index] = type(route)(
                    route.path, route.endpoint, methods=list(route.methods),
                    dependencies=[Depends(api_key)],
                )  # fmt: skip
        app.middleware("http")(tenant)
        if patched:
            compat.install_rest(app, data_plane)
        apps.append(app)
    return apps[0], apps[1]


@pytest.fixture(scope="module")
def guarded() -> Iterator[dict[str, str]]:
    """``{"stock": host:port, "patched": host:port}``: the two guarded apps under uvicorn."""
    from tests.compat.test_compat_asgi import serving

    stock_app, patched_app = _guarded_mlserver_apps()
    with serving(stock_app) as stock, serving(patched_app) as ours:
        yield {"stock": stock, "patched": ours}


def _post(address: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"http://{address}/v2/models/echo/infer", data=body, method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_install_rest_keeps_the_hosts_guards(guarded: dict[str, str]) -> None:
    """Stock and patched answer alike while a guard refuses (the same status and body); with
    both headers both answer the tensor, and a gzip body, which only oipcodec's route reads,
    is answered behind the guards too."""
    import gzip

    x = np.arange(6, dtype=np.int32)
    body, _ = oipcodec.rest.encode_request(
        oipcodec.InferRequest([oipcodec.Tensor.from_array("x", x)]), binary=False
    )
    json_type = {"Content-Type": "application/json"}
    for headers, status in (
        (json_type, 403),
        ({**json_type, "X-API-Key": API_KEY}, 403),
        ({**json_type, "X-Tenant": "t"}, 401),
        ({**json_type, "X-Tenant": "t", "X-API-Key": "wrong"}, 401),
        ({**json_type, "X-Tenant": "t", "Content-Encoding": "gzip"}, 401),
    ):
        sent = gzip.compress(body) if "Content-Encoding" in headers else body
        answers = {name: _post(address, sent, headers) for name, address in guarded.items()}
        assert answers["stock"][0] == answers["patched"][0] == status, answers
        assert orjson.loads(answers["stock"][1]) == orjson.loads(answers["patched"][1])
    headers = {**json_type, "X-Tenant": "t", "X-API-Key": API_KEY}
    for address in guarded.values():
        status, answer = _post(address, body, headers)
        assert status == 200, answer
        assert orjson.loads(answer)["outputs"][0]["data"] == x.tolist()
    status, answer = _post(
        guarded["patched"], gzip.compress(body), {**headers, "Content-Encoding": "gzip"}
    )
    assert status == 200, answer
    assert oipcodec.rest.decode_response(answer).output("x").data.tolist() == x.tolist()


def test_soak_with_gzip_bodies(guarded: dict[str, str]) -> None:
    """A bounded soak of ``install_rest``'s route behind the host's guards: 240 requests from 4
    threads, valid bodies (JSON and binary, plain and gzip) mixed with gzip bombs (the inflate
    limit, not JSON), truncated gzip streams, bodies that are not V2 requests and requests
    without the key. Every valid one is answered 200 with its tensor, every other 4xx; the app
    still answers health and inference at the end."""
    import gzip

    from tests.support.adapter_soak import GZIP_BOMB, soak

    address = guarded["patched"]
    x = np.arange(12, dtype=np.int32)
    request = oipcodec.InferRequest([oipcodec.Tensor.from_array("x", x)])
    guards = {"X-Tenant": "t", "X-API-Key": API_KEY}
    zipped = {"Content-Encoding": "gzip"}
    json_body, _ = oipcodec.rest.encode_request(request, binary=False)
    binary_body, length = oipcodec.rest.encode_request(request, binary=True)
    binary = {**guards, oipcodec.rest.HEADER_LENGTH: str(length)}
    valid = [
        (json_body, guards),
        (binary_body, binary),
        (gzip.compress(json_body), {**guards, **zipped}),
        (gzip.compress(binary_body), {**binary, **zipped}),
    ]
    bad = [
        (GZIP_BOMB, {**guards, **zipped}),
        (gzip.compress(json_body)[:-9], {**guards, **zipped}),
        (b'{"inputs":"x"}', guards),
        (gzip.compress(json_body), {"X-Tenant": "t", **zipped}),
    ]
    for good, (status, answer) in soak(lambda b, h: _post(address, b, h), valid, bad):
        if good:
            assert status == 200, answer[:200]
        else:
            assert 400 <= status < 500, (status, answer[:200])
    assert http_status(f"http://{address}/v2/health/live") == 200
    status, answer = _post(address, *valid[3])
    assert status == 200, answer
