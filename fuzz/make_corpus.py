"""Write the seed corpus in fuzz/corpus/<harness>/ (committed; rerun after a format change).

Seeds are valid inputs made by oipcodec's own encoders, in each harness's input layout (see
the harness docstrings), plus hand-made malformed ones: truncations, lying length prefixes,
huge shapes, deep nesting. Files are small (a few hundred bytes at most). Crash inputs that
fuzzing finds are added to the corpus by hand under a ``regress-`` name, so that
tests/hardening/test_fuzz_corpus.py replays them on every test run.

    python fuzz/make_corpus.py
"""

from __future__ import annotations

import hashlib
import struct
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import oipcodec  # noqa: E402
from oipcodec import graphpipe, pb, rest  # noqa: E402
from oipcodec.datatypes import DATATYPES  # noqa: E402

NAMES = [*DATATYPES, "FP8"]


def sample(datatype: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    if datatype == "BYTES":
        return np.array([b"a" * (i % 3) + b"\xc3\xa9" for i in range(n)], dtype=object).reshape(
            shape
        )
    if datatype == "BOOL":
        return (np.arange(n) % 2 == 0).reshape(shape)
    if datatype == "BF16":
        return (np.arange(n, dtype=np.float32) * 0.5 - 1).reshape(shape)
    dtype = DATATYPES[datatype].numpy_dtype
    values = np.arange(n) - (n // 2 if dtype.kind != "u" else 0)
    if dtype.kind == "f":
        values = values * 0.25
    return values.astype(dtype).reshape(shape)


def shape_bytes(shape: tuple[int, ...], small_depth: bool = False) -> bytes:
    return bytes([len(shape) | (4 if small_depth else 0), *shape])


def json_to_array_seeds() -> list[bytes]:
    seeds = []
    for i, name in enumerate(DATATYPES):
        for shape, nested in (((3,), False), ((2, 2), True), ((2, 2), False), ((), False)):
            text = oipcodec.kernels.array_to_json(sample(name, shape), name, nested=nested)
            seeds.append(bytes([i]) + shape_bytes(shape) + text)
    fp32, int8, byt = NAMES.index("FP32"), NAMES.index("INT8"), NAMES.index("BYTES")
    seeds += [
        bytes([fp32]) + shape_bytes((2,)) + b"[NaN, -Infinity]",
        bytes([fp32]) + shape_bytes((2,)) + b"[1e400, 3.5e38]",
        bytes([fp32]) + shape_bytes((3,)) + b"[1.00000005960464477539062500000001,-0.0,1e-46]",
        bytes([int8]) + shape_bytes((2, 3)) + b"[[1,2,3],[4,5]]",
        bytes([int8]) + shape_bytes((2,)) + b"[300, 1.0]",
        bytes([int8, 1, 255]) + b"[]",  # shape [2**31-1] with an empty text
        bytes([fp32, 1, 254]) + b"[1]",  # shape [2**40]: over the limit
        bytes([fp32, 1 | 4, 1]) + b"[[[[[1]]]]]",  # deeper than max_depth=2
        bytes([byt]) + shape_bytes((3,)) + b'["\\ud83d\\ude00", "\\ud800", "\\u0000"]',
        bytes([byt]) + shape_bytes((1,)) + b'["\xff"]',
        bytes([len(NAMES) - 1]) + shape_bytes((1,)) + b"[1]",
    ]
    return seeds


def framing_seeds() -> list[bytes]:
    items = [b"", b"a", b"hello", b"\x00\xff" * 4]
    wire = oipcodec.kernels.serialize_bytes(np.array(items, dtype=object))
    return [
        bytes([0]) + wire,
        bytes([len(items) + 1]) + wire,
        bytes([len(items)]) + wire,  # trailing data
        bytes([len(items) + 2]) + wire,  # too few
        bytes([255]) + wire,  # count 2**40
        bytes([0]) + wire[:-1],
        bytes([0]) + b"\x01\x00",  # truncated prefix
        bytes([2]) + b"\xff\xff\xff\xff" + b"x",  # a prefix claiming 4 GB
        bytes([0]) + b"\x00\x00\x00\x00" * 16,
    ]


def halffloat_seeds() -> list[bytes]:
    values = np.array([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, 6e-8, 65504], np.float32)
    fp16, bf16 = oipcodec.kernels.pack_fp16(values), oipcodec.kernels.pack_bf16(values)
    return [
        bytes([0, 0, 0]) + fp16,
        bytes([0, 9, 1]) + fp16,
        bytes([1, 0, 0]) + bf16,
        bytes([1, 9, 1]) + bf16,
        bytes([2, 0, 0]) + bf16,
        bytes([2, 255, 0]) + bf16,
        bytes([0, 0, 0]) + fp16[:-1],
        bytes([1, 3, 0]) + bf16,
    ]


def requests() -> list[oipcodec.InferRequest]:
    out = []
    for name in DATATYPES:
        tensor = oipcodec.Tensor("INPUT0", name, (2, 2), sample(name, (2, 2)))
        out.append(
            oipcodec.InferRequest(
                [tensor],
                outputs=[oipcodec.RequestedOutput("OUT", {"binary_data": True})],
                id="7",
                parameters={"p": 1, "q": "x", "r": 0.5, "s": True},
            )
        )
    tensors = [
        oipcodec.Tensor("A", "FP32", (3,), sample("FP32", (3,))),
        oipcodec.Tensor("B", "BYTES", (2,), sample("BYTES", (2,))),
        oipcodec.Tensor("C", "INT64", (0, 2), np.zeros((0, 2), np.int64)),
    ]
    out.append(oipcodec.InferRequest(tensors, model_name="m", model_version="1"))
    return out


def responses() -> list[oipcodec.InferResponse]:
    return [
        oipcodec.InferResponse("m", r.inputs, id=r.id, model_version="2", parameters=r.parameters)
        for r in requests()
    ]


def rest_seeds(kind: str) -> list[bytes]:
    encode = rest.encode_request if kind == "request" else rest.encode_response
    seeds = []
    for message in requests() if kind == "request" else responses():
        for binary in (False, True):
            body, header = encode(message, binary=binary)  # type: ignore[arg-type]
            if header is None:
                seeds += [b"\x00" + body, b"\x02" + body, b"\x04" + body]
            else:
                seeds += [b"\x01" + struct.pack("<I", header) + body]
                seeds += [b"\x03" + struct.pack("<I", header) + body]
    doc = b'{"model_name":"m","inputs":[],"outputs":[]}'
    seeds += [
        b"\x00" + doc,
        b"\x00" + b'{"inputs":[{"name":"x","datatype":"FP32","shape":[1099511627776],"data":[]}]}',
        b"\x00" + b'{"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":' + b"[" * 200,
        b"\x01\x10\x00\x00\x00"
        + b'{"inputs":[{"name":"x","datatype":"BYTES","shape":[1],'
        + b'"parameters":{"binary_data_size":5}}]}\xff\xff\xff\xffx',
        b"\x10" + b"\x78\x9c" + b"\x00" * 8,  # a broken deflate stream
        b"\x00"
        + b'{"inputs":[{"name":"x","datatype":"FP32","shape":[2],"data":[1,2],"data":[3]}]}',
    ]
    return seeds


def pb_seeds(kind: str) -> list[bytes]:
    seeds = []
    encode = pb.encode_request if kind == "request" else pb.encode_response
    for message in requests() if kind == "request" else responses():
        for raw in (True, False):
            body = encode(message, raw=raw)  # type: ignore[arg-type]
            seeds += [b"\x00" + body, b"\x01" + body]
    body = encode(requests()[-1] if kind == "request" else responses()[-1])  # type: ignore[arg-type]
    seeds += [b"\x00" + body[:-3], b"\x00" + body[: len(body) // 2]]
    # A tensor declaring shape [2**40] (field 5 inputs/outputs, shape field 3, packed varints).
    tensor = b"\x0a\x01x\x12\x04FP32\x1a\x06" + bytes([0x80, 0x80, 0x80, 0x80, 0x80, 0x20])
    seeds.append(b"\x00" + bytes([5 << 3 | 2, len(tensor)]) + tensor)
    seeds.append(b"\x00" + b"\x0a\xff\xff\xff\xff\x0f")  # a length prefix claiming 4 GB
    return seeds


def graphpipe_seeds() -> list[bytes]:
    """GraphPipe flatbuffers of every root (byte 0: limits in bits 0-1, root in bits 2-3),
    whole and cut, and a few hostile ones."""
    seeds = []
    arrays = [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([b"", b"a\0b", "é".encode()], dtype=object),
        np.zeros((0, 2), np.int64),
        np.array(7, dtype=np.uint8),
    ]
    request = b"".join(graphpipe.encode_request(arrays, ["a", "b", "c", "d"], ["y"], "cfg"))
    response = graphpipe.encode_response(arrays, [(400, "input 'a': bad")])
    meta = graphpipe.encode_metadata_response(
        graphpipe.MetadataResponse(
            "m", "1", "s", "d", [graphpipe.IOMetadata("x", "FP32", (-1, 3))], []
        )
    )
    for root, body in (
        (0, request),
        (1, response),
        (2, meta),
        (0, graphpipe.encode_metadata_request()),
    ):
        seeds += [bytes([root << 2]) + body, bytes([root << 2 | 1]) + body]
        seeds += [bytes([root << 2]) + body[: len(body) // 2], bytes([root << 2]) + body[:-1]]
    seeds.append(b"\x00" + struct.pack("<II", 8, 0))  # root offset past the end
    seeds.append(b"\x00" + struct.pack("<Ii", 4, -100) + bytes(8))  # vtable outside
    return seeds


def http_framing_seeds() -> list[bytes]:
    """Byte streams of one connection: valid requests and the framing vectors (the list is
    in the harness, which also replays it when there is no corpus folder)."""
    from fuzz_http_framing import SEEDS

    return SEEDS


def v1_request_seeds() -> list[bytes]:
    """v1 requests in fuzz_v1_request's layout: valid ones for each model kind (text and
    binary headers), and malformed ones (a body a byte short or long, a huge dims, a batch
    over the limit, text that needs text_format, text that does not parse)."""
    from oipcodec.proto import trtis_v1_pb2 as v1pb

    def case(flags: int, header: bytes, body: bytes) -> bytes:
        return bytes([flags]) + struct.pack("<H", len(header)) + header + body

    simple = (
        b'batch_size: 2 input { name: "INPUT0" dims: 16 } '
        b'input { name: "INPUT1" dims: 16 batch_byte_size: 128 } output { name: "OUTPUT0" }'
    )
    pair = bytes(range(128)) * 2
    framed = oipcodec.kernels.serialize_bytes([b"a", b"", b"bc", b"\xc3\xa9"])
    strings = b'batch_size: 1 input { name: "S" batch_byte_size: %d }' % len(framed)
    binary = v1pb.InferRequestHeader(batch_size=2)
    binary.input.add(name="X", dims=[3])
    seeds = [
        case(0x08, simple, pair),
        case(0x08, simple, pair[:-1]),
        case(0x08, simple, pair + b"\x00"),
        case(0x09, simple, pair),  # tight limits
        case(0x0C, binary.SerializeToString(), bytes(24)),
        case(0x18, b'batch_size: 2 input { name: "X" dims: 3 }', bytes(24)),
        case(0x18, b'batch_size: 1 input { name: "X" dims: 1099511627776 }', b""),
        case(0x28, strings, framed),
        case(0x28, strings, framed[:-1]),
        case(0x38, b'batch_size: 3 input { name: "B" }', b"\x00\x01\x02"),
        case(0x30, b'batch_size: 1 input { name: "B" dims: 2 }', b"\x00\x01"),  # no batching
        case(0x08, b"batch_size: 9", b""),
        case(0x08, b'input { name: "INPUT0" shared_memory { name: "r" } } batch_size: 1', b""),
        case(0x08, b'batch_size: 0x2 input < name: "INPUT0" dims: [16] >', bytes(128)),
        case(0x08, b'# comment\ninput { name: "IN\\x50UT0" }, batch_size: 1', bytes(64)),
        case(0x08, b'batch_size: 1 input { name: "INPUT0" ', b""),
        case(0x08, b"batch_size: 1 batch_size: 2", b""),
        case(0x08, b"batch_size: 010 flags: 4294967296", b""),
        case(0x0C, b"\x0a\xff\xff\xff\x0f", b""),  # binary: a length prefix past the end
    ]
    return seeds


HARNESSES = {
    "json_to_array": json_to_array_seeds,
    "deserialize_bytes": framing_seeds,
    "bytes_offsets": lambda: [
        s[:1] + bytes([i % 4]) + s[1:] for i, s in enumerate(framing_seeds())
    ],
    "halffloat": halffloat_seeds,
    "locate_data": lambda: [s[1:] for s in rest_seeds("request") if s[0] in (0, 2)],
    "rest_request": lambda: rest_seeds("request"),
    "rest_response": lambda: rest_seeds("response"),
    "pb_request": lambda: pb_seeds("request"),
    "pb_response": lambda: pb_seeds("response"),
    "http_framing": lambda: list(http_framing_seeds()),
    "v1_request": v1_request_seeds,
    "graphpipe_request": graphpipe_seeds,
}


def main() -> None:
    for harness, make in HARNESSES.items():
        folder = HERE / "corpus" / harness
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("seed-*"):
            old.unlink()
        for data in make():
            digest = hashlib.sha1(data).hexdigest()[:12]
            (folder / f"seed-{digest}").write_bytes(data)
        print(f"{harness}: {len(list(folder.glob('seed-*')))} seeds")


if __name__ == "__main__":
    main()
