"""locate_data: finding tensor data arrays in an OIP JSON body, on both implementations."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oipcodec.errors import DecodeError

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
tensors = st.lists(
    st.fixed_dictionaries(
        {"name": st.text(max_size=4)}, optional={"data": json_values, "x": json_values}
    ),
    max_size=4,
)
bodies = st.fixed_dictionaries(
    {},
    optional={"inputs": tensors, "outputs": tensors, "id": json_values, "parameters": json_values},
)


def expected_spans(text: bytes, doc: dict) -> list[tuple[int, int, str]]:
    """(section, index, value) of every data member, for comparison with the found spans."""
    out = []
    for section, key in ((0, "inputs"), (1, "outputs")):
        for index, tensor in enumerate(doc.get(key, [])):
            if "data" in tensor:
                out.append((section, index, tensor["data"]))
    return out


@given(doc=bodies, indent=st.sampled_from([None, 1]), ascii_only=st.booleans())
@settings(max_examples=200)
def test_finds_every_data_value(impl, doc: dict, indent: int | None, ascii_only: bool) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only).encode()
    found = impl.locate_data(text)
    assert [a for _, _, a, _ in found] == sorted(a for _, _, a, _ in found)  # in text order
    located = sorted((s, i, json.loads(text[a:b])) for s, i, a, b in found)
    assert located == sorted(expected_spans(text, doc), key=lambda x: x[:2])


@given(doc=bodies, cut=st.integers(0, 400), flip=st.integers(0, 400), byte=st.integers(0, 255))
@settings(max_examples=300)
def test_twins_agree_on_damaged_bodies(both, doc: dict, cut: int, flip: int, byte: int) -> None:
    text = bytearray(json.dumps(doc).encode())
    if text:
        text[flip % len(text)] = byte
    damaged = bytes(text[: max(0, len(text) - cut % (len(text) + 1))])
    outcomes = []
    for kernels in both:
        try:
            outcomes.append(("ok", kernels.locate_data(damaged)))
        except DecodeError as exc:
            outcomes.append(("error", str(exc)))
    assert outcomes[0] == outcomes[1]


def test_brackets_and_quotes_inside_strings(impl) -> None:
    body = b'{"inputs":[{"data":["]", "[[", "\\"]", "\\\\", "x\\\\\\"]"],"name":"s"}]}'
    ((_, _, start, end),) = impl.locate_data(body)
    assert json.loads(body[start:end]) == ["]", "[[", '"]', "\\", 'x\\"]']


def test_sections_and_indexes(impl) -> None:
    body = b'{"outputs":[{"name":"o","data":[[1],[2]]}],"inputs":[{"name":"a"},{"data":[],"name":"b"}]}'
    assert [(s, i, body[a:b]) for s, i, a, b in impl.locate_data(body)] == [
        (1, 0, b"[[1],[2]]"),
        (0, 1, b"[]"),
    ]


def test_data_elsewhere_is_not_a_tensor(impl) -> None:
    body = (
        b'{"parameters":{"data":[1]},"inputs":[{"parameters":{"data":[2]},"name":"x"}],"data":[3]}'
    )
    assert impl.locate_data(body) == []


def test_escaped_key_is_left_to_the_envelope_parser(impl) -> None:
    assert impl.locate_data(b'{"inputs":[{"d\\u0061ta":[1]}]}') == []


def test_any_buffer_and_whitespace(impl) -> None:
    body = b' \n{ "inputs" : [ { "data" : [ 1 , 2 ] } ] } \t'
    for kind in (bytes, bytearray, memoryview):
        ((_, _, start, end),) = impl.locate_data(kind(body))
        assert body[start:end] == b"[ 1 , 2 ]"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", r"byte offset 0: JSON ends early: expected a JSON object"),
        (b"[]", r"byte offset 0: invalid JSON: expected a JSON object, got '\['"),
        (b'{"inputs":[{"data":[[1,2]}', r"byte offset 26: JSON ends early: unbalanced brackets"),
        (b'{"inputs":[{"data":"abc}]}', r"JSON ends early: unterminated string"),
        (b'{"inputs" [', r"byte offset 10: invalid JSON: expected ':', got '\['"),
        (b'{"a":1 "b":2}', r"expected ',' or '}'"),
        (b'{"inputs":[{"data":1} {}]}', r"expected ',' or '\]'"),
        (b'{"a":}', r"byte offset 5: invalid JSON: expected a JSON value, got '}'"),
        (b'{"a":1} x', r"byte offset 8: invalid JSON: expected the end of the JSON text, got 'x'"),
        (b"{1:2}", r"expected a string"),
    ],
)
def test_malformed(impl, body: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        impl.locate_data(body)


def test_not_a_buffer(impl) -> None:
    with pytest.raises(DecodeError, match="body must be a bytes-like object"):
        impl.locate_data(["x"])
