"""decode_request(..., defer_json=True): JSON data kept as text and parsed on first use or
straight into a batch buffer's rows (DeferredTensor), on both kernel implementations."""

from __future__ import annotations

import pickle
import tracemalloc
from typing import Any

import ml_dtypes
import numpy as np
import orjson
import pytest

from oipcodec import rest
from oipcodec.errors import DatatypeError, DecodeError, LimitError, ShapeError
from oipcodec.limits import Limits
from oipcodec.sharedmem import Location, parameters_for
from oipcodec.types import InferRequest, Tensor

ARRAYS = {
    "FP32": np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
    "FP64": np.arange(6, dtype=np.float64).reshape(2, 3) / 7,
    "FP16": (np.arange(6, dtype=np.float16) / 3).reshape(2, 3),
    "BF16": (np.arange(6) / 3).astype(ml_dtypes.bfloat16).reshape(2, 3),
    "INT64": np.array([[-(2**63), 0, 2**63 - 1], [1, 2, 3]], dtype=np.int64),
    "UINT8": np.arange(6, dtype=np.uint8).reshape(2, 3),
    "BOOL": np.array([[True, False, True], [False, False, True]]),
    "BYTES": np.array([[b"a", b"", b"\xc3\xa9"], [b'"q"', b"x\ny", b"z"]], dtype=object),
}


def _body(inputs: list[Tensor], binary: Any = False) -> tuple[bytes, int | None]:
    return rest.encode_request(InferRequest(inputs, model_name="m"), binary=binary)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype == object:
        return a.shape == b.shape and a.tolist() == b.tolist()
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_default_decode_is_eager(impl: Any) -> None:
    body, _ = _body([Tensor.from_array("x", ARRAYS["FP32"])])
    (tensor,) = rest.decode_request(body, kernels=impl).inputs
    assert type(tensor) is Tensor


@pytest.mark.parametrize("datatype", sorted(ARRAYS))
def test_data_parses_on_first_access(impl: Any, datatype: str) -> None:
    array = ARRAYS[datatype]
    body, _ = _body([Tensor.from_array("x", array)])
    eager = rest.decode_request(body, kernels=impl).inputs[0]
    (tensor,) = rest.decode_request(body, kernels=impl, defer_json=True).inputs
    assert isinstance(tensor, rest.DeferredTensor) and isinstance(tensor, Tensor)
    assert (tensor.name, tensor.datatype, tensor.shape) == ("x", datatype, (2, 3))
    assert not tensor.parsed
    assert _same(tensor.data, eager.data)
    assert tensor.parsed and tensor.data is tensor.data  # cached


@pytest.mark.parametrize("datatype", sorted(ARRAYS))
def test_into_parses_into_the_rows(impl: Any, datatype: str) -> None:
    array = ARRAYS[datatype]
    body, _ = _body([Tensor.from_array("x", array)])
    (tensor,) = rest.decode_request(body, kernels=impl, defer_json=True).inputs
    batch = np.zeros((5, 3), dtype=array.dtype)
    tensor.into(batch[2:4])
    assert not tensor.parsed  # nothing of its own was kept
    assert _same(batch[2:4], array)
    assert _same(batch[[0, 1, 4]], np.zeros((3, 3), dtype=array.dtype))
    assert _same(tensor.data, array)  # data still works afterwards (parsed again)
    again = np.zeros((2, 3), dtype=array.dtype)
    tensor.into(again)  # parsed: a copy
    assert _same(again, array)


def test_bf16_into_float32_rows(impl: Any) -> None:
    array = ARRAYS["BF16"]
    body, _ = _body([Tensor.from_array("x", array)])
    (tensor,) = rest.decode_request(body, kernels=impl, defer_json=True).inputs
    out = np.empty((2, 3), np.float32)
    tensor.into(out)
    assert _same(out, array.astype(np.float32))


def test_binary_and_shared_memory_inputs_stay_views(impl: Any) -> None:
    region = bytearray(ARRAYS["INT64"].tobytes())
    where = Location("r", len(region), 0)
    inputs = [
        Tensor.from_array("json", ARRAYS["FP32"]),
        Tensor.from_array("bin", ARRAYS["FP64"]),
        Tensor.from_array("shm", ARRAYS["INT64"], parameters_for(where)),
    ]
    body, length = _body(inputs, binary=["bin"])

    def resolve(where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        return memoryview(region).toreadonly()

    request = rest.decode_request(
        body, length, kernels=impl, defer_json=True, shared_memory=resolve
    )
    json_input, binary, shm = request.inputs
    assert isinstance(json_input, rest.DeferredTensor)
    assert type(binary) is Tensor and type(shm) is Tensor
    assert not binary.data.flags.owndata and np.shares_memory(shm.data, np.frombuffer(region))
    out = np.empty((2, 3), np.float64)
    binary.into(out)  # the one copy
    assert _same(out, ARRAYS["FP64"])


BAD = [
    ('{"inputs":[{"name":"x","shape":[3],"datatype":"INT32","data":[1,2,"z"]}]}', None),
    ('{"inputs":[{"name":"x","shape":[3],"datatype":"UINT8","data":[1,2,256]}]}', None),
    ('{"inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[[1,2],[3]]}]}', None),
    ('{"inputs":[{"name":"x","shape":[2],"datatype":"FP32","data":[1,2,3]}]}', None),
    ('{"inputs":[{"name":"x","shape":[2],"datatype":"FP32","data":[1e39,2]}]}', None),
    ('{"inputs":[{"name":"x","shape":[2],"datatype":"BYTES","data":["a",1]}]}', None),
    ('{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[[[[1]]]]}]}', None),
    ('{"inputs":[{"name":"x","shape":[2],"datatype":"BYTES","data":["abcdefgh","a"]}]}', 4),
    # "data" written with an escape: the envelope parser reads it (offsets count from 0)
    ('{"inputs":[{"name":"x","shape":[2],"datatype":"INT8","d\\u0061ta":[1,999]}]}', None),
]


@pytest.mark.parametrize("body, max_bytes", BAD)
def test_errors_are_the_eager_ones(impl: Any, body: str, max_bytes: int | None) -> None:
    """The deferred parse raises what the eager decode raises: class, message, location."""
    limits = Limits(max_depth=3, max_bytes_element=max_bytes or Limits().max_bytes_element)
    with pytest.raises(DecodeError) as eager:
        rest.decode_request(body.encode(), kernels=impl, limits=limits)
    assert eager.value.tensor == "x"
    request = rest.decode_request(body.encode(), kernels=impl, limits=limits, defer_json=True)
    (tensor,) = request.inputs
    for use in ("data", "into"):
        with pytest.raises(DecodeError) as deferred:
            if use == "data":
                tensor.data  # noqa: B018
            else:
                tensor.into(np.empty(tensor.shape, _dtype(tensor.datatype)))
        assert type(deferred.value) is type(eager.value), use
        assert str(deferred.value) == str(eager.value), use
        assert (deferred.value.index, deferred.value.offset) == (
            eager.value.index,
            eager.value.offset,
        )


def _dtype(datatype: str) -> Any:
    return {"INT32": np.int32, "UINT8": np.uint8, "FP32": np.float32, "INT8": np.int8}.get(
        datatype, object
    )


def test_envelope_errors_and_limits_stay_at_decode(impl: Any) -> None:
    """Shapes, datatypes and the element budget are checked by decode_request itself."""
    too_many = Limits(max_request_elements=5)
    body, _ = _body([Tensor.from_array("x", ARRAYS["FP32"])])
    with pytest.raises(LimitError, match="more than the limit of 5 elements"):
        rest.decode_request(body, kernels=impl, limits=too_many, defer_json=True)
    small, _ = _body([Tensor.from_array("a", np.zeros(3, np.int8))])
    bad_datatype = body.replace(b'"FP32"', b'"FP33"')
    with pytest.raises(DecodeError, match="FP33"):
        rest.decode_request(bad_datatype, kernels=impl, defer_json=True)
    request = rest.decode_request(small, kernels=impl, defer_json=True)
    assert request.inputs[0].shape == (3,)


def test_the_budget_counts_deferred_tensors(impl: Any) -> None:
    """Two 6-element inputs against a 10-element budget: refused at decode, not parsed."""
    body, _ = _body(
        [Tensor.from_array("x", ARRAYS["FP32"]), Tensor.from_array("y", ARRAYS["INT64"])]
    )
    with pytest.raises(LimitError, match="limit of 10 elements"):
        rest.decode_request(
            body, kernels=impl, limits=Limits(max_request_elements=10), defer_json=True
        )


def test_into_refuses_another_shape(impl: Any) -> None:
    body, _ = _body([Tensor.from_array("x", ARRAYS["INT64"])])
    (tensor,) = rest.decode_request(body, kernels=impl, defer_json=True).inputs
    with pytest.raises(ShapeError, match=r"input 'x': out has shape \[3, 2\], the tensor \[2, 3\]"):
        tensor.into(np.empty((3, 2), np.int64))
    with pytest.raises(DatatypeError, match="input 'x': out has dtype float32"):
        tensor.into(np.empty((2, 3), np.float32))  # the kernel's dtype check, named
    with pytest.raises(DatatypeError, match="input 'x': out must be a numpy array, got list"):
        tensor.into([0] * 6)  # type: ignore[arg-type]
    plain = Tensor.from_array("p", ARRAYS["INT64"])
    with pytest.raises(ShapeError, match="tensor 'p'"):
        plain.into(np.empty((6,), np.int64))


def test_pickles_as_a_plain_tensor(impl: Any) -> None:
    body, _ = _body([Tensor.from_array("x", ARRAYS["FP32"])])
    (tensor,) = rest.decode_request(body, kernels=impl, defer_json=True).inputs
    back = pickle.loads(pickle.dumps(tensor))
    assert type(back) is Tensor and _same(back.data, ARRAYS["FP32"])


def test_text_is_the_data_span(impl: Any) -> None:
    body, _ = _body([Tensor.from_array("x", np.array([1, 2], np.int32))])
    (tensor,) = rest.decode_request(body, kernels=impl, defer_json=True).inputs
    assert isinstance(tensor, rest.DeferredTensor)
    assert orjson.loads(bytes(tensor.text)) == [1, 2]


# ---- allocations: no array of the request's own between the body and the batch ------------

ROWS = 256


def _peak(call: Any) -> int:
    """The most memory traced (tracemalloc: numpy reports its arrays to it) during call()."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "dtype, datatype",
    [(np.float32, "FP32"), (np.int64, "INT64"), (np.float16, "FP16"), (np.bool_, "BOOL")],
)
def test_into_allocates_no_tensor_sized_array(impl: Any, dtype: Any, datatype: str) -> None:
    """Decoding with defer_json and parsing into preallocated rows allocates a small fraction
    of the tensor's bytes; the eager decode then a copy allocates the whole tensor once more.
    The native kernel only: the pure twin converts through temporary arrays by design."""
    if impl.IMPLEMENTATION != "native":
        pytest.skip("the pure twin builds temporary arrays (it is the readable reference)")
    array = (np.arange(ROWS * 1024) % 97).astype(dtype).reshape(ROWS, 1024)
    body, _ = _body([Tensor.from_array("x", array)])
    batch = np.zeros((2 * ROWS, 1024), dtype)
    rows = batch[ROWS:]

    def deferred() -> None:
        request = rest.decode_request(body, kernels=impl, defer_json=True)
        request.inputs[0].into(rows)

    def eager() -> None:
        request = rest.decode_request(body, kernels=impl)
        request.inputs[0].into(rows)

    deferred()  # warm up (imports, caches)
    eager()
    assert _same(rows, array)
    rows[:] = 0
    peak_deferred = _peak(deferred)
    assert _same(rows, array)
    peak_eager = _peak(eager)
    assert peak_eager >= array.nbytes  # the request's own array
    assert peak_deferred < array.nbytes // 8, (peak_deferred, array.nbytes)
