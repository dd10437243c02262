"""The v1 header text reader (``scan_request_header``) on both implementations: what it
reads, it reads as google.protobuf's text_format does; everything else it leaves (``None``);
native and pure agree; hostile text ends in linear time."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import text_format
from hypothesis import given, settings
from hypothesis import strategies as st

from oipcodec.proto import trtis_v1_pb2 as pb


def as_message(scanned: Any) -> Any:
    fields, inputs, outputs = scanned
    header = pb.InferRequestHeader(**fields)
    for item in inputs:
        header.input.add(**item)
    for item in outputs:
        output = header.output.add(name=item.get("name", ""))
        if "cls" in item:
            output.cls.count = item["cls"]
    return header


def reference(text: str) -> Any:
    try:
        return text_format.Parse(text, pb.InferRequestHeader())
    except text_format.ParseError:
        return None


def test_reads_the_plain_form(impl: Any) -> None:
    text = (
        'batch_size: 2 input { name: "INPUT0" dims: 16 dims: -1 batch_byte_size: 128 } '
        'input: { name: "caf\u00e9" }\noutput { name: "OUTPUT1" cls: { count: 3 } } '
        "id: 18446744073709551615 correlation_id: 0 flags: 4294967295"
    )
    scanned = impl.scan_request_header(text)
    assert scanned == (
        {"batch_size": 2, "id": 2**64 - 1, "correlation_id": 0, "flags": 2**32 - 1},
        [
            {"name": "INPUT0", "dims": [16, -1], "batch_byte_size": 128},
            {"name": "caf\u00e9", "dims": []},
        ],
        [{"name": "OUTPUT1", "cls": 3}],
    )
    assert as_message(scanned) == reference(text)
    assert impl.scan_request_header("") == ({}, [], [])
    assert impl.scan_request_header(" input {} output {} ") == ({}, [{"dims": []}], [{}])


@pytest.mark.parametrize(
    "text",
    [
        "batch_size: 1, id: 2",  # separators
        "# comment\nbatch_size: 1",
        'input { name: "a\\tb" }',  # an escape
        "input < >",
        "input { dims: [1, 2] }",
        "batch_size: 0x1",
        "batch_size: 010",
        "batch_size: 1 batch_size: 1",
        'input { name: "a" name: "b" }',
        "output { cls { count: 1 } cls { count: 2 } }",
        "batch_size: 4294967296",
        "batch_size: -1",
        "id: 18446744073709551616",
        "input { dims: 9223372036854775808 }",
        "input { dims: -9223372036854775809 }",
        "unknown: 1",
        "batch_size 1",
        "input { name: 'single' }",
        "batch_size: 1\u00a0",  # non-ASCII white space
        'input { name: "x" ',
        "batch_size: 1.0",
        "batch_size: 1e3",
        "batch_sizeX: 1",
    ],
)
def test_leaves_other_text_to_text_format(impl: Any, text: str) -> None:
    assert impl.scan_request_header(text) is None


def test_boundaries_of_int64_dims(impl: Any) -> None:
    text = "input { dims: 9223372036854775807 dims: -9223372036854775808 dims: -0 }"
    scanned = impl.scan_request_header(text)
    assert scanned[1][0]["dims"] == [2**63 - 1, -(2**63), 0]
    assert as_message(scanned) == reference(text)


@pytest.mark.parametrize(
    "text",
    ["a" * 50000 + "\x01", "batch_b" + "y" * 20000 + "\x15", "dims: 1 " * 20000 + "#"],
)
def test_hostile_text_ends(impl: Any, text: str) -> None:
    assert impl.scan_request_header(text) is None


ALPHABET = st.sampled_from(
    [
        "batch_size", "input", "output", "name", "dims", "batch_byte_size", "cls", "count",
        "id", "flags", "correlation_id", "x", ":", "{", "}", " ", "\n", "\t", '"', "\\", "-",
        "0", "1", "9", "18446744073709551616", "4294967296", ",", "#", "<", ">", "[", "]",
        ".", "\u00e9", "\u00a0", "'",
    ]
)  # fmt: skip


@settings(max_examples=400)
@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_agrees_with_text_format_and_the_twin(both: Any, text: str) -> None:
    native, pure = both
    ours = pure.scan_request_header(text)
    try:
        theirs = native.scan_request_header(text)
    except AttributeError:  # native not built: the pure answer alone
        theirs = ours
    assert ours == theirs
    if ours is not None:
        assert as_message(ours) == reference(text)


@settings(max_examples=200)
@given(st.builds(pb.InferRequestHeader, batch_size=st.integers(0, 2**32 - 1)), st.data())
def test_reads_what_text_format_writes(impl: Any, header: Any, data: Any) -> None:
    for _ in range(data.draw(st.integers(0, 3))):
        item = header.input.add(name=data.draw(st.text(max_size=5)))
        item.dims.extend(data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3)))
        item.batch_byte_size = data.draw(st.integers(0, 2**64 - 1))
    header.id = data.draw(st.integers(0, 2**64 - 1))
    text = text_format.MessageToString(header, as_one_line=True)
    scanned = impl.scan_request_header(text)
    if scanned is not None:  # names with escapes go to text_format
        assert as_message(scanned) == header


def response_reference(text: str) -> Any:
    try:
        return text_format.Parse(text, pb.InferResponseHeader())
    except text_format.ParseError:
        return None


def as_response(scanned: Any) -> Any:
    fields, outputs = scanned
    return pb.InferResponseHeader(
        output=[pb.InferResponseHeader.Output(**item) for item in outputs], **fields
    )


@settings(max_examples=200)
@given(st.data())
def test_response_reads_what_text_format_writes(impl: Any, data: Any) -> None:
    header = pb.InferResponseHeader(
        model_name=data.draw(st.text(max_size=5)),
        model_version=data.draw(st.integers(-(2**63), 2**63 - 1)),
        batch_size=data.draw(st.integers(0, 2**32 - 1)),
        id=data.draw(st.integers(0, 2**64 - 1)),
    )
    for _ in range(data.draw(st.integers(0, 3))):
        output = header.output.add(name=data.draw(st.text(max_size=5)))
        if data.draw(st.booleans()):
            output.raw.dims.extend(
                data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3))
            )
            output.raw.batch_byte_size = data.draw(st.integers(0, 2**64 - 1))
    text = text_format.MessageToString(header, as_one_line=data.draw(st.booleans()))
    scanned = impl.scan_response_header(text)
    if scanned is not None:  # names with escapes go to text_format
        assert as_response(scanned) == header


@pytest.mark.parametrize(
    "text",
    [
        'output { name: "c" batch_classes { cls { idx: 1 value: 0.5 } } }',  # floats
        "model_version: 9223372036854775808",
        "batch_size: 4294967296",
        'model_name: "a" model_name: "b"',
        "output { raw { batch_byte_size: 1 batch_byte_size: 2 } }",
        "id: -1",
        "output { raw { dims: [1] } }",
    ],
)
def test_response_leaves_other_text(impl: Any, text: str) -> None:
    assert impl.scan_response_header(text) is None


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(
            ["model_name", "model_version", "batch_size", "output", "raw", "dims", "name",
             "batch_byte_size", "id", ":", "{", "}", " ", '"', "-", "0", "7", "x", "\\", "."]
        ),
        max_size=30,
    ).map("".join)
)  # fmt: skip
def test_response_agrees_with_text_format_and_the_twin(both: Any, text: str) -> None:
    native, pure = both
    ours = pure.scan_response_header(text)
    try:
        theirs = native.scan_response_header(text)
    except AttributeError:
        theirs = ours
    assert ours == theirs
    if ours is not None:
        assert as_response(ours) == response_reference(text)
