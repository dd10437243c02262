"""GraphPipe requests: oipcodec.graphpipe (native, pure) vs GraphPipe's own conversion.

The peer is ``graphpipe.convert`` (graphpipe 1.0.4: serialize_infer_request,
deserialize_request) where it imports, which is only in an environment of its own (it needs
flatbuffers 1.x; docs/graphpipe.md). Elsewhere the peer is the same code reproduced below on
the installed ``flatbuffers`` runtime (only the runtime's ``EndVector`` changed signature), and
its id says so: ``flatbuffers-runtime``.

Encode cases start from numpy arrays and end with the request's bytes; decode cases start from
those bytes and end with numpy arrays (a String tensor an array of bytes), as a server needs
them. Cases: one [1, 3, 224, 224] FP32 image and 10k strings of 8-40 bytes.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

from oipcodec import graphpipe

try:
    from graphpipe import convert as _convert

    PEER = "graphpipe"
except ImportError:  # pragma: no cover - depends on the environment
    _convert = None
    PEER = "flatbuffers-runtime"

IMAGE = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
_rng = np.random.default_rng(1)
STRINGS = np.array(
    [_rng.bytes(int(n)) for n in _rng.integers(8, 41, 10_000)], dtype=object
)  # fmt: skip
CASES = {"image": IMAGE, "strings": STRINGS}


# ------------------------------------------------------------------- the peer, reproduced


class _Reproduction:
    """graphpipe.convert's make_infer_request / deserialize_request on the flatbuffers
    runtime, field slots as its generated classes use them."""

    def __init__(self) -> None:
        import flatbuffers
        from flatbuffers import number_types as N
        from flatbuffers.table import Table

        self.flatbuffers, self.N, self.Table = flatbuffers, N, Table

    def _tensor(self, builder: Any, array: np.ndarray) -> int:
        builder.StartVector(8, array.ndim, 8)
        for dim in array.shape[::-1]:
            builder.PrependInt64(dim)
        shape = builder.EndVector()
        if array.dtype.kind in "SUaO":
            strings = [builder.CreateString(s) for s in array.flat[::-1]]
            builder.StartVector(4, array.size, 4)
            for s in strings:
                builder.PrependUOffsetTRelative(s)
            data = builder.EndVector()
        else:
            n = array.nbytes
            builder.StartVector(1, n, 1)
            builder.head = builder.head - n
            array = np.ascontiguousarray(array)
            dst = (ctypes.c_char * n).from_buffer(builder.Bytes, builder.head)
            ctypes.memmove(dst, array.__array_interface__["data"][0], n)
            data = builder.EndVector()
        builder.StartObject(4)
        builder.PrependUOffsetTRelativeSlot(1, shape, 0)
        if array.dtype.kind in "SUaO":
            builder.PrependUint8Slot(0, 12, 0)
            builder.PrependUOffsetTRelativeSlot(3, data, 0)
        else:
            builder.PrependUint8Slot(0, graphpipe.TYPE_OF_DATATYPE[_datatype(array)], 0)
            builder.PrependUOffsetTRelativeSlot(2, data, 0)
        return int(builder.EndObject())

    def serialize_infer_request(self, inputs: list[np.ndarray], names: list[str]) -> bytes:
        builder = self.flatbuffers.Builder(sum(a.nbytes for a in inputs) + 1024)
        config = builder.CreateString("")
        tensors = [self._tensor(builder, t) for t in inputs[::-1]]
        builder.StartVector(4, len(tensors), 4)
        for t in tensors:
            builder.PrependUOffsetTRelative(t)
        tensors_fb = builder.EndVector()
        vectors = []
        for group in (names, []):
            strs = [builder.CreateString(s) for s in group[::-1]]
            builder.StartVector(4, len(strs), 4)
            for s in strs:
                builder.PrependUOffsetTRelative(s)
            vectors.append(builder.EndVector())
        builder.StartObject(4)
        builder.PrependUOffsetTRelativeSlot(0, config, 0)
        builder.PrependUOffsetTRelativeSlot(2, tensors_fb, 0)
        builder.PrependUOffsetTRelativeSlot(1, vectors[0], 0)
        builder.PrependUOffsetTRelativeSlot(3, vectors[1], 0)
        infer = builder.EndObject()
        builder.StartObject(2)
        builder.PrependUint8Slot(0, 1, 0)
        builder.PrependUOffsetTRelativeSlot(1, infer, 0)
        builder.Finish(builder.EndObject())
        return bytes(builder.Output())

    def deserialize_request(self, buf: bytes) -> list[np.ndarray]:
        N, Table = self.N, self.Table
        buf = bytearray(buf)
        root = Table(buf, self.flatbuffers.encode.Get(N.UOffsetTFlags.packer_type, buf, 0))
        infer = Table(bytearray(), 0)
        root.Union(infer, root.Offset(6))
        o = infer.Offset(8)
        start, count = infer.Vector(o), infer.VectorLen(o)
        out = []
        for i in range(count):
            tensor = Table(buf, infer.Indirect(start + 4 * i))
            shape = tensor.GetVectorAsNumpy(N.Int64Flags, tensor.Offset(6))
            kind = tensor.Get(N.Uint8Flags, tensor.Pos + tensor.Offset(4))
            if kind == 12:
                o = tensor.Offset(10)
                first, n = tensor.Vector(o), tensor.VectorLen(o)
                strs = [tensor.String(first + 4 * j) for j in range(n)]
                out.append(np.array(strs).reshape(shape))
            else:
                dtype = graphpipe.DATATYPE_OF_TYPE[kind]
                data = tensor.GetVectorAsNumpy(N.Uint8Flags, tensor.Offset(8))
                out.append(data.view(_dtype(dtype)).reshape(shape))
        return out


def _datatype(array: np.ndarray) -> str:
    from oipcodec import datatypes

    return datatypes.datatype_of(array)


def _dtype(datatype: str) -> np.dtype[Any]:
    from oipcodec import datatypes

    return datatypes.to_numpy(datatype)


def _peer_ops() -> tuple[Any, Any]:
    """(encode(array) -> bytes, decode(bytes) -> arrays) of the peer."""
    if _convert is not None:

        def encode(array: np.ndarray) -> bytes:
            return bytes(_convert.serialize_infer_request(_convert.InferReq(None, [array], ["x"])))

        def decode(body: bytes) -> list[np.ndarray]:
            return list(_convert.deserialize_request(body).input_tensors)

        return encode, decode
    try:
        reproduction = _Reproduction()
    except ImportError:  # pragma: no cover - depends on the environment
        return None, None
    return (lambda array: reproduction.serialize_infer_request([array], ["x"])), (
        reproduction.deserialize_request
    )


PEER_ENCODE, PEER_DECODE = _peer_ops()
IMPLS = ["native", "pure", PEER]


def _ours(impl: str, native: Any, pure: Any) -> Any:
    return native if impl == "native" else pure


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_decode_request(benchmark: Any, case: str, impl: str, native: Any, pure: Any) -> None:
    array = CASES[case]
    body = b"".join(graphpipe.encode_request([array], ["x"]))
    benchmark.group = f"graphpipe decode {case}"
    if impl == PEER:
        if PEER_DECODE is None:
            pytest.skip("neither graphpipe nor the flatbuffers runtime is installed")
        (got,) = benchmark(PEER_DECODE, body)
    else:
        kernels = _ours(impl, native, pure)
        if not hasattr(kernels, "read_flatbuffer"):
            pytest.skip("the native flatbuf kernel is not built")
        (tensor,) = benchmark(graphpipe.decode_request, body, kernels=kernels).inputs
        got = tensor.data
    assert got.shape == array.shape and got.reshape(-1)[0] == array.reshape(-1)[0]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_encode_request(benchmark: Any, case: str, impl: str, native: Any, pure: Any) -> None:
    array = CASES[case]
    benchmark.group = f"graphpipe encode {case}"
    if impl == PEER:
        if PEER_ENCODE is None:
            pytest.skip("neither graphpipe nor the flatbuffers runtime is installed")
        body = benchmark(PEER_ENCODE, array)
    else:
        kernels = _ours(impl, native, pure)
        if not hasattr(kernels, "write_flatbuffer"):
            pytest.skip("the native flatbuf kernel is not built")

        def encode() -> bytes:
            return b"".join(graphpipe.encode_request([array], ["x"], kernels=kernels))

        body = benchmark(encode)
    (tensor,) = graphpipe.decode_request(body).inputs
    assert tensor.data.shape == array.shape
