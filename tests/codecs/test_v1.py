"""oipcodec.trtis_v1: the TensorRT Inference Server v1 codec on both kernel implementations: header
text both ways against google.protobuf's text_format (the fast reader and writer give exactly
its result), raw bodies split into views with every size checked, STRING framing, classes,
status codes, and hostile headers and bodies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from google.protobuf import text_format
from hypothesis import given, settings
from hypothesis import strategies as st

import oipcodec
from oipcodec import InferResponse, Tensor
from oipcodec import trtis_v1 as v1
from oipcodec.errors import (
    DecodeError,
    InvalidArgumentError,
    LimitError,
    NotFoundError,
    UnavailableError,
    UnsupportedError,
)
from oipcodec.kernels import serialize_bytes
from oipcodec.limits import Limits
from oipcodec.proto import trtis_v1_pb2 as pb

SIMPLE = [v1.InputSpec("INPUT0", "INT32", (-1, 16)), v1.InputSpec("INPUT1", "INT32", (-1, 16))]
STRINGS = [v1.InputSpec("INPUT0", "BYTES", (-1, 16))]
HEADER = (
    'batch_size: 2 input { name: "INPUT0" dims: 16 batch_byte_size: 128 } '
    'input { name: "INPUT1" dims: 16 } output { name: "OUTPUT0" } '
    'output { name: "OUTPUT1" cls { count: 3 } } id: 7 correlation_id: 9 flags: 1'
)


def reference(text: str) -> Any:
    return text_format.Parse(text, pb.InferRequestHeader())


# ----------------------------------------------------------------------------- header text


@pytest.mark.parametrize(
    "text",
    [
        HEADER,
        "",
        "batch_size: 1",
        'input: { name: "x" dims: 0 dims: -1 }',  # ':' before '{'; negative dims parse
        'input { name: "x" }, output { name: "y" }; batch_size: 3',  # separators
        'input { name: "x" dims: [1, 2] }',  # list syntax: text_format's path
        'input < name: "x" >',  # angle brackets: text_format's path
        'input { name: "caf\\303\\251" }',  # escapes: text_format's path
        "# a comment\nbatch_size: 1",
        "batch_size: 0x10",
        "batch_size: 010",  # octal in text_format
        'output { name: "o" cls { count: 0 } }',
    ],
)
def test_header_text_matches_text_format(text: str) -> None:
    assert v1.parse_request_header(text) == reference(text)
    assert v1.parse_request_header(text.encode()) == reference(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("batch_size: 1 foo: 2", 'no field named "foo"'),
        ('input { name: "x" ', 'Expected "}"'),
        ("batch_size: 4294967296", "out of range"),  # uint32
        ("batch_size: 1099511627776", "out of range"),  # a batch of 2**40
        ("batch_size: 1 batch_size: 2", "multiple"),
        ("batch_size: -1", "batch_size"),
        ('input { name: "x" name: "y" }', "multiple"),
        ("batch_size: 1.5", "batch_size"),
        ('input { name: "x" dims: 99999999999999999999 }', "out of range"),
        ('output { name: "y" cls { count: 1 extra: 2 } }', 'no field named "extra"'),
    ],
)
def test_header_text_errors_are_text_formats(text: str, words: str) -> None:
    with pytest.raises(DecodeError, match=v1.REQUEST_HEADER) as info:
        v1.parse_request_header(text)
    assert words in str(info.value)
    with pytest.raises(text_format.ParseError):
        reference(text)


#: Texts not in the plain form, each built of ``n`` repeats: each once made the regex
#: backtrack over the ways to split a long name, exponentially in ``n``.
_HOSTILE_TEXTS = {
    "long name": lambda n: 'batch_size: 2 input { name: "x" batch_b' + "y" * n + "\x15",
    "long word": lambda n: "a" * n + "\x01",
    "many words": lambda n: "a " * n + "\x01",
    "many fields": lambda n: "dims: 1 " * n + "#",
}

#: The child process: the best of 5 timings of refusing the text at n and at 8n repeats.
_TIME_REFUSALS = """
import importlib, sys, time
from oipcodec.errors import DecodeError

# this test module and the codec by the names they have in the parent
codec, tests = (importlib.import_module(name) for name in sys.argv[3:5])
build, n = tests._HOSTILE_TEXTS[sys.argv[1]], int(sys.argv[2])

def best(text):
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(20):
            try:
                codec.parse_request_header(text)
            except DecodeError:
                pass
            else:
                raise SystemExit("accepted: " + text[:40])
        times.append(time.perf_counter() - start)
    return min(times)

print(best(build(n)), best(build(8 * n)))
"""


@pytest.mark.parametrize("name", sorted(_HOSTILE_TEXTS))
def test_header_text_refused_in_linear_time(name: str) -> None:
    """A text that is not in the plain form splits into tokens one way only, so the reader
    gives up in time linear in its length: refusing 8 times the text takes at most 24 times
    as long (a quadratic reader takes 64 times, a backtracking one does not finish; the child
    process is stopped after 120 s so that fails too instead of hanging)."""
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(oipcodec.__file__).parents[1]), str(root)]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _TIME_REFUSALS, name, "2000", v1.__name__, __name__],
        capture_output=True, text=True, timeout=120, env=env, cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    small, large = map(float, done.stdout.split())
    assert large <= 24 * small + 0.005, (small, large)


def test_header_not_utf8() -> None:
    with pytest.raises(DecodeError, match="not UTF-8"):
        v1.parse_request_header(b'input { name: "\xff" }')


def test_binary_header_both_ways() -> None:
    header = reference(HEADER)
    assert v1.parse_request_header(header.SerializeToString(), binary=True) == header
    with pytest.raises(DecodeError, match="does not parse"):
        v1.parse_request_header(b"\x0a\xff\xff", binary=True)


_NAME = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=6)
_U32 = st.integers(0, 2**32 - 1)


@st.composite
def headers(draw: Any) -> Any:
    header = pb.InferRequestHeader(batch_size=draw(_U32), id=draw(st.integers(0, 2**64 - 1)))
    for _ in range(draw(st.integers(0, 3))):
        item = header.input.add(name=draw(_NAME))
        item.dims.extend(draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3)))
        item.batch_byte_size = draw(st.integers(0, 2**64 - 1))
    for _ in range(draw(st.integers(0, 2))):
        item = header.output.add(name=draw(_NAME))
        if draw(st.booleans()):
            item.cls.count = draw(_U32)
    return header


@settings(max_examples=200)
@given(headers(), st.booleans())
def test_any_header_round_trips_through_text(header: Any, one_line: bool) -> None:
    """Whatever text_format writes (names with quotes and non-ASCII included), the reader
    gives back the same message."""
    text = text_format.MessageToString(header, as_one_line=one_line)
    assert v1.parse_request_header(text) == header
    assert v1.request_header_text(header) == text_format.MessageToString(header, as_one_line=True)


@settings(max_examples=200)
@given(
    st.text(alphabet='{}:"\\ batch_sizeinputnamedimsoutputclscount0123456789-,;#\n', max_size=60)
)
def test_any_text_gives_text_formats_answer(text: str) -> None:
    try:
        expected = reference(text)
    except text_format.ParseError:
        with pytest.raises(DecodeError):
            v1.parse_request_header(text)
    else:
        assert v1.parse_request_header(text) == expected


@pytest.mark.parametrize("name", ["OUTPUT0", 'quo"te', "back\\slash", "caf\u00e9", "tab\t", ""])
def test_response_header_text_is_text_formats(name: str) -> None:
    header = pb.InferResponseHeader(id=3, model_name="m", model_version=2, batch_size=4)
    output = header.output.add(name=name)
    output.raw.dims.extend([4, -1, 0])
    output.raw.batch_byte_size = 64
    header.output.add(name="empty").raw.SetInParent()
    classes = pb.InferResponseHeader(model_name="m")
    classes.output.add(name="c").batch_classes.add().cls.add(idx=1, value=0.5, label="x")
    for message in (header, classes, pb.InferResponseHeader()):
        expected = text_format.MessageToString(message, as_one_line=True)
        assert v1.response_header_text(message) == expected
        assert v1.parse_response_header(expected) == message
        assert v1.parse_response_header(message.SerializeToString(), binary=True) == message


# ----------------------------------------------------------------------------- bodies


def test_decode_inputs_batched_views(impl: Any) -> None:
    a = np.arange(32, dtype=np.int32).reshape(2, 16)
    b = -a
    body = a.tobytes() + b.tobytes()
    tensors = v1.decode_inputs(reference(HEADER), body, SIMPLE, 8, kernels=impl)
    assert [t.name for t in tensors] == ["INPUT0", "INPUT1"]
    assert [t.shape for t in tensors] == [(2, 16), (2, 16)]
    np.testing.assert_array_equal(tensors[0].data, a)
    np.testing.assert_array_equal(tensors[1].data, b)
    assert not tensors[0].data.flags.writeable  # a view of the body, not a copy
    assert np.shares_memory(tensors[1].data, np.frombuffer(body, np.uint8))


def test_decode_inputs_split_buffers_and_model_dims(impl: Any) -> None:
    header = reference('batch_size: 1 input { name: "INPUT1" } input { name: "INPUT0" }')
    one = np.ones((1, 16), np.int32)
    tensors = v1.decode_inputs(
        header, [one.tobytes(), (2 * one).tobytes()], SIMPLE, 8, kernels=impl
    )
    assert [t.name for t in tensors] == ["INPUT1", "INPUT0"]
    np.testing.assert_array_equal(tensors[1].data, 2 * one)


def test_decode_inputs_not_batching(impl: Any) -> None:
    specs = [v1.InputSpec("X", "FP32", (2, -1))]
    header = reference('batch_size: 1 input { name: "X" dims: 2 dims: 3 }')
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    (tensor,) = v1.decode_inputs(header, data.tobytes(), specs, 0, kernels=impl)
    assert tensor.shape == (2, 3)
    np.testing.assert_array_equal(tensor.data, data)
    with pytest.raises(DecodeError, match="does not batch"):
        v1.decode_inputs(reference("batch_size: 2"), b"", specs, 0)


def test_decode_strings(impl: Any) -> None:
    values = [b"he\x00llo", b"", "\u00e9".encode()] * 2
    framed = serialize_bytes(values)
    specs = [v1.InputSpec("S", "BYTES", (-1, 3))]
    header = reference(f'batch_size: 2 input {{ name: "S" batch_byte_size: {len(framed)} }}')
    (tensor,) = v1.decode_inputs(header, framed, specs, 4, kernels=impl)
    assert tensor.data.tolist() == [values[:3], values[3:]]
    missing = reference('batch_size: 2 input { name: "S" }')
    with pytest.raises(DecodeError, match="'S' is TYPE_STRING: its batch_byte_size is required"):
        v1.decode_inputs(missing, framed, specs, 4, kernels=impl)
    short = reference(f'batch_size: 1 input {{ name: "S" batch_byte_size: {len(framed)} }}')
    with pytest.raises(DecodeError, match="'S'"):  # 6 elements framed, 3 declared
        v1.decode_inputs(short, framed, specs, 4, kernels=impl)


@pytest.mark.parametrize(
    ("text", "body_bytes", "words"),
    [
        ('batch_size: 1 input { name: "INPUT0" dims: 16 }', 63, "'INPUT0': expected 64 bytes"),
        ('batch_size: 1 input { name: "INPUT0" dims: 16 }', 65, "1 bytes after the last input"),
        ('batch_size: 1 input { name: "INPUT0" dims: 8 }', 32, None),  # shape: the model's job
        ('batch_size: 9 input { name: "INPUT0" }', 9 * 64, "batch_size 9 is out of range"),
        ('batch_size: 0 input { name: "INPUT0" }', 0, "batch_size 0 is out of range"),
        ('batch_size: 1 input { name: "NOPE" }', 64, "unexpected inference input 'NOPE'"),
        (
            'batch_size: 1 input { name: "INPUT0" } input { name: "INPUT0" }',
            128,
            "appears more than once",
        ),
        ('batch_size: 1 input { name: "INPUT0" dims: -1 }', 64, "non-negative"),
        (
            'batch_size: 1 input { name: "INPUT0" dims: 16 batch_byte_size: 60 }',
            64,
            "batch_byte_size 60 disagrees",
        ),
    ],
)
def test_hostile_bodies(impl: Any, text: str, body_bytes: int, words: str | None) -> None:
    header = reference(text)
    if words is None:
        (tensor,) = v1.decode_inputs(header, bytes(body_bytes), SIMPLE, 8, kernels=impl)
        assert tensor.shape == (1, 8)
        return
    with pytest.raises(DecodeError, match=words):
        v1.decode_inputs(header, bytes(body_bytes), SIMPLE, 8, kernels=impl)


def test_huge_dims_refused_before_allocation(impl: Any) -> None:
    """A 40-byte header declaring 2**40 elements is refused without allocating."""
    header = reference(f'batch_size: 1 input {{ name: "INPUT0" dims: {2**40} }}')
    with pytest.raises(LimitError, match=r"input 'INPUT0'.*more than the limit"):
        v1.decode_inputs(header, b"", [v1.InputSpec("INPUT0", "FP32", (-1, -1))], 8)
    many = pb.InferRequestHeader(batch_size=1)
    for i in range(5):
        many.input.add(name=f"x{i}")
    with pytest.raises(DecodeError, match="5 inputs, more than the limit of 4"):
        v1.decode_inputs(many, b"", SIMPLE, 8, limits=Limits(max_tensors=4))


def test_shared_memory_and_raw_input_count() -> None:
    header = reference('batch_size: 1 input { name: "INPUT0" shared_memory { name: "r" } }')
    with pytest.raises(UnsupportedError, match="input 'INPUT0': v1 shared memory"):
        v1.decode_inputs(header, b"", SIMPLE, 8)
    with pytest.raises(UnsupportedError, match="output 'y'"):
        v1.requested(reference('output { name: "y" shared_memory { name: "r" } }'))
    two = reference('batch_size: 1 input { name: "INPUT0" } input { name: "INPUT1" }')
    with pytest.raises(DecodeError, match="2 inputs in the header but 1 raw_input"):
        v1.decode_inputs(two, [b""], SIMPLE, 8)


def test_requested_outputs() -> None:
    assert v1.requested(reference("batch_size: 1")) == (None, {})
    names, classes = v1.requested(reference(HEADER))
    assert names == ["OUTPUT0", "OUTPUT1"] and classes == {"OUTPUT1": 3}
    with pytest.raises(DecodeError, match="cls count must be at least 1"):
        v1.requested(reference('output { name: "y" cls { } }'))
    with pytest.raises(DecodeError, match="'y' is requested twice"):
        v1.requested(reference('output { name: "y" } output { name: "y" }'))


# ----------------------------------------------------------------------------- responses


def test_encode_response_raw_and_classes(impl: Any) -> None:
    scores = np.array([[0.1, 0.7, 0.2], [0.9, 0.0, 0.5]], dtype=np.float32)
    response = InferResponse(
        "m",
        [Tensor("RAW", "FP32", [2, 3], scores), Tensor("CLS", "FP32", [2, 3], scores)],
        model_version="3",
    )
    header, parts = v1.encode_response(
        response,
        batch_size=2,
        batched=True,
        classes={"CLS": 2},
        labels={"CLS": (b"cat", b"dog")},
        request_id=11,
        kernels=impl,
    )
    assert (header.id, header.model_name, header.model_version, header.batch_size) == (
        11,
        "m",
        3,
        2,
    )
    assert list(header.output[0].raw.dims) == [3]
    assert header.output[0].raw.batch_byte_size == 24 == len(parts[0])
    assert bytes(parts[0]) == scores.tobytes() and len(parts) == 1
    rows = [
        [(c.idx, round(c.value, 6), c.label) for c in r.cls] for r in header.output[1].batch_classes
    ]
    assert rows == [[(1, 0.7, "dog"), (2, 0.2, "")], [(0, 0.9, "cat"), (2, 0.5, "")]]


def _classes_by_objects(values: np.ndarray, count: int, labels: list[bytes]) -> Any:
    """The classes as the codec built them before: one protobuf Class per class."""
    indices, best = oipcodec.kernels.top_k(values, count)
    output = pb.InferResponseHeader.Output(name="C")
    for row_indices, row_values in zip(indices.tolist(), best.tolist(), strict=True):
        output.batch_classes.add(
            cls=[
                pb.InferResponseHeader.Output.Class(
                    idx=i,
                    value=float(v),
                    label=labels[i].decode("utf-8", "replace") if i < len(labels) else "",
                )
                for i, v in zip(row_indices, row_values, strict=True)
            ]
        )
    return output


@pytest.mark.parametrize(
    ("dtype", "labels"),
    [
        ("bits", []),
        ("float64", [b"zero", b'o"ne', b"", b"\xc3\xa9t\xc3\xa9", b"\xff", b"x y", b"a\\b"]),
        ("int32", [b"a"] * 3),
        ("bool", []),
    ],
)
@pytest.mark.parametrize("count", [1, 3, 2**32 - 1])
def test_encode_response_classes_are_text_formats(
    impl: Any, dtype: str, labels: list[bytes], count: int
) -> None:
    """The classes, laid out in wire form and written as text from the ranked arrays, are the
    message and the text text_format gives for one protobuf Class per class: every float32
    (random bit patterns: NaN, infinities, subnormals, -0.0), escaped labels, a count over
    the class count."""
    rng = np.random.default_rng(3)
    if dtype == "bits":
        values: Any = rng.integers(0, 2**32, (3, 3000), dtype=np.uint64).astype(np.uint32)
        values = values.view(np.float32)
        values[0, :8] = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, 0.9, 1e16]
    elif dtype == "float64":
        values = rng.random((2, 40))
    elif dtype == "int32":
        values = np.arange(-5, 5, dtype=np.int32).reshape(2, 5)
    else:
        values = np.array([[True, False, True]])
    response = InferResponse("m", [Tensor.from_array("C", values)], model_version="1")
    header, parts, line = v1.encode_response_text(
        response,
        batch_size=len(values),
        batched=True,
        classes={"C": count},
        labels={"C": labels},
        kernels=impl,
    )
    expected = _classes_by_objects(values, count, labels)
    assert text_format.MessageToString(header.output[0]) == text_format.MessageToString(expected)
    assert line == text_format.MessageToString(header, as_one_line=True)
    ranked = len(header.output[0].batch_classes[0].cls)
    assert ranked == min(count, values.shape[1])
    assert parts == []


def test_short_response_header() -> None:
    scores = np.arange(6, dtype=np.float32).reshape(1, 6)
    response = InferResponse(
        "m", [Tensor("RAW", "FP32", [1, 6], scores), Tensor("CLS", "FP32", [1, 6], scores)]
    )
    header, _ = v1.encode_response(response, batch_size=1, batched=True, classes={"CLS": 9})
    assert not v1.classes_in_body(header)
    short = v1.short_response_header(header)
    assert v1.classes_in_body(short)
    assert len(short.output[1].batch_classes) == 0 and short.output[0] == header.output[0]
    assert v1.response_header_text(short) == text_format.MessageToString(short, as_one_line=True)


def test_encode_response_strings_not_batched(impl: Any) -> None:
    values = np.array([b"a", b"bc"], dtype=object)
    response = InferResponse("m", [Tensor("S", "BYTES", [2], values)], model_version="x")
    header, parts = v1.encode_response(response, batch_size=1, batched=False, kernels=impl)
    assert header.model_version == 0  # not a number
    assert list(header.output[0].raw.dims) == [2]
    assert bytes(parts[0]) == serialize_bytes([b"a", b"bc"])
    with pytest.raises(InvalidArgumentError, match="'S' is TYPE_STRING"):
        v1.encode_response(response, batch_size=1, batched=False, classes={"S": 1})


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (NotFoundError("x"), pb.NOT_FOUND),
        (UnavailableError("x"), pb.UNAVAILABLE),
        (UnsupportedError("x"), pb.UNSUPPORTED),
        (InvalidArgumentError("x"), pb.INVALID_ARG),
        (DecodeError("x"), pb.INVALID_ARG),
        (RuntimeError("x"), pb.INTERNAL),
    ],
)
def test_status_codes(error: Exception, code: int) -> None:
    assert v1.code_for(error) == code
    message = v1.status(code, 'say "hi"', "srv", 4)
    assert text_format.Parse(v1.status_text(message), pb.RequestStatus()) == message
    assert "\n" not in v1.status_text(message)


def test_datatypes_and_versions() -> None:
    assert v1.v1_datatype("BYTES") == pb.TYPE_STRING == 13
    assert v1.v1_datatype("BOOL") == 1 and v1.v1_datatype("FP64") == 12
    with pytest.raises(DecodeError, match="BF16 has no v1"):
        v1.v1_datatype("BF16")
    assert [v1.version_text(v) for v in (None, -1, 0, 3, "", "2", "-1", "x")] == [
        None, None, None, "3", None, "2", None, "x",
    ]  # fmt: skip
