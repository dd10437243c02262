"""oipcodec.compat.kserve against the installed KServe: the same arrays as KServe's own codecs
on the same payloads (REST JSON, binary extension, gRPC raw and typed), both directions, and a
KServe custom model served by KServe's own FastAPI endpoints and data plane."""

from __future__ import annotations

import json
import uuid
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import oipcodec
from oipcodec import DecodeError, InferRequest, InferResponse, Tensor, rest
from oipcodec.compat import kserve as compat
from tests.support.peers import require_kserve, require_peer

kserve = require_kserve()
fastapi = require_peer("fastapi")
testclient = require_peer("starlette.testclient")

from kserve.protocol import infer_type as it  # noqa: E402
from kserve.protocol.grpc import grpc_predict_v2_pb2 as kpb  # noqa: E402
from kserve.protocol.rest.v2_datamodels import InferenceRequest  # noqa: E402

# KServe's datatypes (kserve.utils.numpy_codec): no BF16; FP16 only in binary / raw form.
DTYPES = {
    "BOOL": np.dtype(bool), "INT8": np.dtype("i1"), "INT16": np.dtype("i2"),
    "INT32": np.dtype("i4"), "INT64": np.dtype("i8"), "UINT8": np.dtype("u1"),
    "UINT16": np.dtype("u2"), "UINT32": np.dtype("u4"), "UINT64": np.dtype("u8"),
    "FP16": np.dtype("f2"), "FP32": np.dtype("f4"), "FP64": np.dtype("f8"),
}  # fmt: skip
ALL = [*DTYPES, "BYTES"]
JSON_TYPES = [d for d in ALL if d != "FP16"]
EXAMPLES = settings(max_examples=40)


def arrays(
    datatype: str, *, finite: bool = True, utf8: bool = True, min_side: int = 0
) -> st.SearchStrategy[Any]:
    shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=min_side, max_side=4)
    if datatype == "BYTES":
        element = st.text(max_size=8).map(str.encode) if utf8 else st.binary(max_size=8)
        return shapes.flatmap(
            lambda shape: st.lists(element, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))
            .map(lambda values: np.array([*values, None], dtype=object)[:-1].reshape(shape))
        )  # fmt: skip
    dtype = DTYPES[datatype]
    elements = None
    if dtype.kind == "f":
        elements = st.floats(
            width=dtype.itemsize * 8, allow_nan=not finite, allow_infinity=not finite
        )
    return hnp.arrays(dtype, shapes, elements=elements)


def _same(ours: np.ndarray, theirs: np.ndarray, datatype: str) -> None:
    """Identical arrays; KServe gives JSON/REST BYTES as str, oipcodec as bytes (UTF-8)."""
    ours = np.asarray(ours)
    assert ours.shape == theirs.shape
    if datatype == "BYTES":
        assert ours.dtype == object
        expected = [v.encode() if isinstance(v, str) else v for v in theirs.ravel().tolist()]
        assert ours.ravel().tolist() == expected
    else:
        assert ours.dtype == theirs.dtype
        assert ours.tobytes() == np.ascontiguousarray(theirs).tobytes()


def _kserve_input(name: str, array: np.ndarray, datatype: str, binary: bool) -> Any:
    infer_input = it.InferInput(name, list(array.shape), datatype)
    infer_input.set_data_from_numpy(array, binary_data=binary)
    return infer_input


def _ours(array: np.ndarray, datatype: str) -> InferRequest:
    return InferRequest([Tensor("X", datatype, array.shape, array)], id="7", model_name="m")


# ----------------------------------------------------------------------------- REST JSON


@pytest.mark.parametrize("datatype", JSON_TYPES)
@EXAMPLES
@given(data=st.data())
def test_rest_json_request_same_arrays_as_kserve(datatype: str, data: st.DataObject) -> None:
    array = data.draw(arrays(datatype))
    body, header_length = rest.encode_request(_ours(array, datatype), binary=False)
    assert header_length is None
    # KServe's path for a JSON body: FastAPI's json.loads, pydantic, from_inference_request
    theirs = it.InferRequest.from_inference_request(
        InferenceRequest.model_validate(json.loads(body)), "m"
    )
    expected = theirs.inputs[0].as_numpy()
    ours = compat.request_from_rest(body, model_name="m")
    assert isinstance(ours, it.InferRequest)
    _same(ours.inputs[0].data, expected, datatype)
    _same(compat.to_oip_request(theirs).inputs[0].data, expected, datatype)
    assert ours.id == theirs.id == "7"


@pytest.mark.parametrize("datatype", JSON_TYPES)
@EXAMPLES
@given(data=st.data())
def test_rest_json_response_same_arrays_as_kserve(datatype: str, data: st.DataObject) -> None:
    array = data.draw(arrays(datatype))
    response = it.InferResponse("1", "m", [it.InferOutput("Y", list(array.shape), datatype, array)])
    body, header_length = compat.response_to_rest(response)
    assert header_length is None
    theirs = it.InferResponse.from_rest(orjson.loads(body))  # KServe's REST client
    _same(array, theirs.outputs[0].as_numpy(), datatype)
    kserve_body, _ = response.to_rest()  # and what KServe's server writes, read by ours
    ours = compat.response_from_rest(orjson.dumps(kserve_body))
    _same(ours.outputs[0].data, array, datatype)


# ----------------------------------------------------------------------------- REST binary


@pytest.mark.parametrize("datatype", ALL)
@EXAMPLES
@given(data=st.data())
def test_rest_binary_request_same_arrays_as_kserve(datatype: str, data: st.DataObject) -> None:
    # not empty: KServe's to_rest takes empty raw data (b"", falsy) for missing binary data
    array = data.draw(arrays(datatype, min_side=1))
    kserve_request = it.InferRequest("m", [_kserve_input("X", array, datatype, True)], "7")
    body, header_length = kserve_request.to_rest()  # what KServe's client sends
    theirs = it.InferRequest.from_bytes(body, header_length, "m")  # what its server reads
    expected = theirs.inputs[0].as_numpy()
    ours = compat.request_from_rest(body, header_length, model_name="m")
    _same(ours.inputs[0].data, expected, datatype)
    _same(ours.inputs[0].data, array, datatype)
    assert not ours.inputs[0].data.flags.writeable or datatype == "BYTES"  # a view of the body
    # ours -> KServe's server
    body, header_length = compat.request_to_rest(ours)
    again = it.InferRequest.from_bytes(body, header_length, "m").inputs[0].as_numpy()
    _same(ours.inputs[0].data, again, datatype)


@pytest.mark.parametrize("datatype", ALL)
@EXAMPLES
@given(data=st.data())
def test_rest_binary_response_same_arrays_as_kserve(datatype: str, data: st.DataObject) -> None:
    array = data.draw(arrays(datatype))
    response = it.InferResponse(
        "1", "m", [it.InferOutput("Y", list(array.shape), datatype, array)],
        use_binary_outputs=True,
    )  # fmt: skip
    body, header_length = compat.response_to_rest(response)
    assert header_length is not None
    theirs = it.InferResponse.from_bytes(body, header_length)
    _same(array, theirs.outputs[0].as_numpy(), datatype)
    kserve_body, kserve_length = response.to_rest()
    _same(compat.response_from_rest(kserve_body, kserve_length).outputs[0].data, array, datatype)


def test_response_to_rest_follows_requested_outputs() -> None:
    a, b = np.arange(4, dtype=np.int32), np.ones(2, np.float64)
    request = it.InferRequest(
        "m", [], request_outputs=[it.RequestedOutput("B", {"binary_data": True}), it.RequestedOutput("A")]
    )  # fmt: skip
    response = compat.from_oip_response(
        InferResponse("m", [Tensor.from_array("A", a), Tensor.from_array("B", b)]), request=request
    )
    body, header_length = compat.response_to_rest(response)
    decoded = rest.decode_response(body, header_length)
    assert [t.name for t in decoded.outputs] == ["B", "A"]
    kserve_body, kserve_length = response.to_rest()  # KServe makes the same choices
    theirs = it.InferResponse.from_bytes(kserve_body, kserve_length)
    assert [o.name for o in theirs.outputs] == ["B", "A"]
    assert "binary_data_size" in orjson.loads(body[:header_length])["outputs"][0]["parameters"]
    assert "data" in orjson.loads(body[:header_length])["outputs"][1]
    request.request_outputs.append(it.RequestedOutput("C"))
    with pytest.raises(DecodeError, match="'C'"):
        compat.response_to_rest(compat.from_oip_response(response_as_ours(a, b), request=request))


def response_as_ours(a: np.ndarray, b: np.ndarray) -> InferResponse:
    return InferResponse("m", [Tensor.from_array("A", a), Tensor.from_array("B", b)])


# ----------------------------------------------------------------------------- gRPC


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "typed"])
@pytest.mark.parametrize("datatype", ALL)
@EXAMPLES
@given(data=st.data())
def test_grpc_request_same_arrays_as_kserve(datatype: str, raw: bool, data: st.DataObject) -> None:
    if datatype == "FP16" and not raw:
        return  # FP16 has no typed contents field
    array = data.draw(arrays(datatype))
    kserve_input = _kserve_input("X", array, datatype, raw)
    message = it.InferRequest("m", [kserve_input], "7").to_grpc()  # KServe's client
    theirs = it.InferRequest.from_grpc(message)  # KServe's servicer
    expected = theirs.inputs[0].as_numpy()
    for given_ in (message, message.SerializeToString()):
        ours = compat.request_from_grpc(given_)
        _same(ours.inputs[0].data, expected, datatype)
    assert ours.from_grpc and ours.use_binary_outputs
    assert compat.request_from_grpc(message).use_binary_outputs is raw
    _same(compat.to_oip_request(theirs).inputs[0].data, expected, datatype)
    # ours -> KServe's servicer
    again = it.InferRequest.from_grpc(compat.request_to_grpc(ours, raw=raw))
    assert isinstance(compat.request_to_grpc(ours), kpb.ModelInferRequest)
    _same(again.inputs[0].as_numpy(), expected, datatype)


@pytest.mark.parametrize("datatype", ALL)
@EXAMPLES
@given(data=st.data())
def test_grpc_response_same_arrays_as_kserve(datatype: str, data: st.DataObject) -> None:
    array = data.draw(arrays(datatype))
    response = it.InferResponse("1", "m", [it.InferOutput("Y", list(array.shape), datatype, array)])
    message = compat.response_to_grpc(response)
    assert isinstance(message, kpb.ModelInferResponse)
    theirs = it.InferResponse.from_grpc(message).outputs[0].as_numpy()  # KServe's client
    _same(theirs, array, datatype)
    if datatype == "FP16":  # KServe's to_grpc tests an FP16 array's truth value: give bytes
        response.outputs[0].set_data_from_numpy(array, binary_data=True)
    kserve_message = response.to_grpc()  # typed contents (FP16: raw), as KServe answers
    _same(compat.response_from_grpc(kserve_message).outputs[0].data, array, datatype)


def test_grpc_parameters_both_ways() -> None:
    message = kpb.ModelInferRequest(
        model_name="m", id="x",
        parameters={"s": kpb.InferParameter(string_param="v"), "i": kpb.InferParameter(int64_param=-3),
                    "b": kpb.InferParameter(bool_param=True)},
        inputs=[{"name": "X", "datatype": "INT32", "shape": [1], "contents": {"int_contents": [5]},
                 "parameters": {"p": kpb.InferParameter(int64_param=1)}}],
        outputs=[{"name": "Y", "parameters": {"binary_data": kpb.InferParameter(bool_param=True)}}],
    )  # fmt: skip
    ours = compat.to_oip_request(it.InferRequest.from_grpc(message))
    assert ours.parameters == {"s": "v", "i": -3, "b": True}
    assert ours.inputs[0].parameters == {"p": 1}
    assert ours.outputs is not None and ours.outputs[0].parameters == {"binary_data": True}
    back = compat.request_to_grpc(compat.from_oip_request(ours))
    assert back.parameters["i"].int64_param == -3 and back.parameters["s"].string_param == "v"
    assert back.outputs[0].parameters["binary_data"].bool_param is True


def test_bf16_passes_through_kserve_grpc() -> None:
    ml_dtypes = require_peer("ml_dtypes")
    array = np.array([[1.5, -2.0]], ml_dtypes.bfloat16)
    response = compat.from_oip_response(InferResponse("m", [Tensor.from_array("Y", array)]))
    message = response.to_grpc()  # KServe's own writer sends the raw bytes
    assert message.raw_output_contents[0] == array.tobytes()
    decoded = compat.to_oip_response(compat.response_from_grpc(message)).outputs[0].data
    assert decoded.dtype == array.dtype and decoded.tobytes() == array.tobytes()
    body, header_length = compat.response_to_rest(response, binary=True)
    assert rest.decode_response(body, header_length).outputs[0].data.tobytes() == array.tobytes()


# ----------------------------------------------------------------------------- answering KServe


def _answer(kserve_request: Any, datatype: str = "FP32") -> Any:
    """What a model on the adapter returns: every input doubled (BYTES and BOOL echoed), by
    ``from_oip_response``."""
    request = compat.to_oip_request(kserve_request)
    outputs = [
        Tensor(f"out_{t.name}", t.datatype, t.shape, t.data if t.datatype in ("BYTES", "BOOL")
               else t.data * 2)
        for t in request.inputs
    ]  # fmt: skip
    return compat.from_oip_response(
        InferResponse("m", outputs, id=request.id), request=kserve_request
    )


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "typed"])
@pytest.mark.parametrize("datatype", ALL)
def test_grpc_answer_goes_through_kserve_to_grpc(raw: bool, datatype: str) -> None:
    """An answer to a request KServe decoded from gRPC (``InferRequest.from_grpc``, what its
    servicer does) passes KServe's own ``to_grpc``: the outputs hold raw bytes. Before, they held
    arrays and ``to_grpc`` failed on a raw request ("The truth value of an array ... is
    ambiguous"). Shapes of 0, 1 and several elements; no id in the request: a UUID4."""
    for shape in [(0,), (1,), (2, 3)]:
        count = int(np.prod(shape))
        if datatype == "BYTES":
            array = np.array([b"ab", b"", b"c", b"d", b"e", b"f"][:count], dtype=object)
        else:
            array = np.arange(1, count + 1).astype(DTYPES[datatype])
        array = array.reshape(shape)
        request = InferRequest([Tensor("X", datatype, shape, array)], model_name="m")
        message = kpb.ModelInferRequest.FromString(oipcodec.pb.encode_request(request, raw=raw))
        answer = _answer(it.InferRequest.from_grpc(message)).to_grpc()
        assert uuid.UUID(answer.id).version == 4
        decoded = compat.to_oip_response(compat.response_from_grpc(answer)).output("out_X").data
        expected = array if datatype in ("BYTES", "BOOL") else array * 2
        _same(decoded, expected.astype(array.dtype), datatype)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "json"])
def test_rest_answer_without_id_passes_kserve_validation(binary: bool) -> None:
    """A REST request without ``id``: the answer's is a UUID4 string, which KServe's REST
    answer model (``InferenceResponse``, pydantic) requires; the outputs stay arrays, which
    KServe's ``to_rest`` writes in the form asked."""
    from kserve.protocol.rest.v2_datamodels import InferenceResponse

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    body, header_length = rest.encode_request(
        InferRequest([Tensor.from_array("X", x)]), binary=binary
    )
    kserve_request = compat.request_from_rest(body, header_length, model_name="m")
    response = _answer(kserve_request)
    assert isinstance(response.outputs[0].data, np.ndarray)
    written, json_length = response.to_rest()
    if json_length is None:
        InferenceResponse.model_validate(written)  # what KServe's endpoint does with a dict
        header = written
    else:
        header = orjson.loads(written[:json_length])
    assert uuid.UUID(header["id"]).version == 4


def test_decoded_response_keeps_a_missing_id() -> None:
    """Client side, a response without id stays without one (as KServe's ``from_rest``)."""
    body = b'{"model_name":"m","outputs":[{"name":"Y","shape":[1],"datatype":"INT8","data":[1]}]}'
    assert compat.response_from_rest(body).id is None
    message = oipcodec.pb.encode_response(InferResponse("m", [Tensor.from_array("Y", np.ones(1))]))
    assert compat.response_from_grpc(message).id is None


# ----------------------------------------------------------------------------- errors


def test_truncated_binary_names_input_and_offset() -> None:
    array = np.arange(6, dtype=np.float32)
    body, header_length = it.InferRequest("m", [_kserve_input("X", array, "FP32", True)]).to_rest()
    with pytest.raises(
        DecodeError, match=r"input 'X'.*byte offset \d+|unexpected size for input 'X'"
    ) as exc:
        compat.request_from_rest(body[:-3], header_length, model_name="m")
    assert exc.value.offset is not None


def test_bad_json_element_names_input_element_and_offset() -> None:
    body = b'{"inputs":[{"name":"X","shape":[3],"datatype":"INT8","data":[1,2,300]}]}'
    with pytest.raises(DecodeError) as exc:
        compat.request_from_rest(body, model_name="m")
    assert exc.value.tensor == "X" and exc.value.index == 2
    assert exc.value.offset == body.index(b"300")


@pytest.mark.parametrize(
    ("data", "match"),
    [([1, 2], "shape \\[3\\] holds 3 elements but data has 2"), ([1, 2, 1.5], "element 2")],
)
def test_kserve_list_data_checked(data: list[Any], match: str) -> None:
    request = it.InferRequest("m", [it.InferInput("X", [3], "INT32", data)])
    with pytest.raises(oipcodec.OIPError, match=match) as exc:
        compat.to_oip_request(request)
    assert exc.value.tensor == "X"


def test_raw_contents_checked() -> None:
    message = kpb.ModelInferRequest(
        model_name="m", inputs=[{"name": "S", "datatype": "BYTES", "shape": [2]}],
        raw_input_contents=[b"\x01\x00\x00\x00a\x05\x00\x00\x00bc"],
    )  # fmt: skip
    with pytest.raises(DecodeError) as exc:
        compat.request_from_grpc(message)
    assert exc.value.tensor == "S" and exc.value.index == 1
    with pytest.raises(DecodeError, match=r"input 'S'.*element 1 at byte offset 5"):
        compat.to_oip_request(it.InferRequest.from_grpc(message))


def test_parameter_without_value_refused() -> None:
    request = it.InferRequest("m", [], parameters={"p": kpb.InferParameter()})
    with pytest.raises(DecodeError, match="parameter 'p' has no value"):
        compat.to_oip_request(request)


def test_import_without_kserve_needs_no_kserve() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['kserve'] = None\n"
        "import oipcodec.compat.kserve as k\n"
        "try:\n    k.from_oip_request(None)\nexcept ImportError:\n    print('lazy')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "lazy"


# ----------------------------------------------------------------------------- a KServe model


class Doubler(kserve.Model):  # the recipe of the module docstring
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.seen: list[Any] = []
        self.ready = True

    def predict(self, payload: Any, headers: Any = None, response_headers: Any = None) -> Any:
        request = compat.to_oip_request(payload)
        x = request.input("INPUT0").data
        self.seen.append(type(payload.inputs[0].data))
        response = InferResponse(self.name, [Tensor.from_array("OUTPUT0", x * 2)], id=request.id)
        return compat.from_oip_response(response, request=payload)


@pytest.fixture(scope="module")
def kserve_app() -> Any:
    from kserve.model_repository import ModelRepository
    from kserve.protocol.dataplane import DataPlane
    from kserve.protocol.model_repository_extension import ModelRepositoryExtension
    from kserve.protocol.rest.server import RESTServer

    repository = ModelRepository()
    model = Doubler("doubler")
    repository.update(model)
    dataplane = compat.patch_dataplane(DataPlane(model_registry=repository))
    server = RESTServer(
        "kserve.model_server:app", dataplane, ModelRepositoryExtension(repository), 0
    )
    app = fastapi.FastAPI()
    server._register_endpoints(app)  # KServe's own endpoints and error handlers, on a fresh app
    server._add_exception_handlers(app)
    with testclient.TestClient(app) as client:
        yield client, model


def _post(client: Any, request: InferRequest, binary: bool) -> Any:
    body, header_length = rest.encode_request(request, binary=binary)
    headers = {"content-type": "application/octet-stream" if binary else "application/json"}
    if header_length is not None:
        headers[rest.HEADER_LENGTH] = str(header_length)
    return client.post("/v2/models/doubler/infer", content=body, headers=headers)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "json"])
def test_custom_model_in_kserve(kserve_app: Any, binary: bool) -> None:
    client, model = kserve_app
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    answer = _post(client, InferRequest([Tensor.from_array("INPUT0", x)], id="r1"), binary)
    assert answer.status_code == 200, answer.text
    length = answer.headers.get(rest.HEADER_LENGTH)
    response = rest.decode_response(answer.content, length)
    assert response.id == "r1"
    np.testing.assert_array_equal(response.output("OUTPUT0").data, x * 2)
    # the patched REST route hands JSON and binary bodies to the model as arrays, not lists
    assert model.seen[-1] is np.ndarray


def test_custom_model_in_kserve_bad_binary_is_400(kserve_app: Any) -> None:
    client, _ = kserve_app
    body, header_length = rest.encode_request(
        InferRequest([Tensor.from_array("INPUT0", np.ones(4, np.float32))])
    )
    answer = client.post(
        "/v2/models/doubler/infer",
        content=body[:-1],
        headers={
            rest.HEADER_LENGTH: str(header_length),
            "content-type": "application/octet-stream",
        },
    )
    assert answer.status_code == 400
    assert "INPUT0" in answer.json()["error"]


def test_an_unpatched_dataplane_keeps_kserves_route(kserve_app: Any) -> None:
    """The hook patch_dataplane puts into KServe's endpoint registration serves only the data
    planes it patched: another server of the same process keeps KServe's own JSON path."""
    from kserve.model_repository import ModelRepository
    from kserve.protocol.dataplane import DataPlane
    from kserve.protocol.model_repository_extension import ModelRepositoryExtension
    from kserve.protocol.rest.server import RESTServer

    repository = ModelRepository()
    model = Doubler("doubler")
    repository.update(model)
    server = RESTServer(
        "kserve.model_server:app",
        DataPlane(model_registry=repository),
        ModelRepositoryExtension(repository),
        0,
    )
    app = fastapi.FastAPI()
    server._register_endpoints(app)
    server._add_exception_handlers(app)
    x = np.arange(4, dtype=np.float32)
    with testclient.TestClient(app) as client:
        answer = _post(client, InferRequest([Tensor.from_array("INPUT0", x)]), binary=False)
    assert answer.status_code == 200, answer.text
    assert model.seen == [list]  # FastAPI's lists, as stock KServe gives them
