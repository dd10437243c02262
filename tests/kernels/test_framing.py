"""BYTES length-prefix framing: serialize_bytes / deserialize_bytes on both implementations."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oipcodec.errors import DatatypeError, DecodeError, EncodeError, ShapeError

elements = st.lists(st.binary(max_size=40), max_size=40)


def frame(items: list[bytes]) -> bytes:
    """The wire form written the obvious way, as the reference."""
    return b"".join(struct.pack("<I", len(x)) + x for x in items)


@given(items=elements)
@settings(max_examples=200, deadline=None)
def test_round_trip_matches_reference(impl, items: list[bytes]) -> None:
    wire = impl.serialize_bytes(items)
    assert wire == frame(items)
    out = impl.deserialize_bytes(wire, len(items))
    assert out.dtype == object and out.shape == (len(items),)
    assert out.tolist() == items
    assert impl.deserialize_bytes(wire).tolist() == items


@given(items=st.lists(st.text(max_size=20), max_size=30))
@settings(max_examples=100, deadline=None)
def test_str_elements_are_utf8(impl, items: list[str]) -> None:
    encoded = [s.encode("utf-8") for s in items]
    assert impl.serialize_bytes(items) == frame(encoded)
    # numpy U cells lose trailing NULs, as numpy itself reads them back.
    stripped = [s.rstrip("\x00").encode("utf-8") for s in items]
    assert impl.serialize_bytes(np.array(items, dtype="U")) == frame(stripped)


@given(data=st.binary(max_size=64), count=st.none() | st.integers(0, 6))
@settings(max_examples=300, deadline=None)
def test_twins_agree_on_arbitrary_buffers(both, data: bytes, count: int | None) -> None:
    native, pure = both
    results = []
    for kernels in (native, pure):
        try:
            results.append(("ok", kernels.deserialize_bytes(data, count).tolist()))
        except DecodeError as exc:
            results.append((type(exc).__name__, str(exc)))
    assert results[0] == results[1]


def test_any_shape_is_flattened_row_major(impl) -> None:
    grid = np.array([[b"a", b"bb"], [b"ccc", b""]], dtype=object)
    expected = frame([b"a", b"bb", b"ccc", b""])
    assert impl.serialize_bytes(grid) == expected
    assert impl.serialize_bytes(np.asfortranarray(grid)) == expected
    assert impl.serialize_bytes(grid.tolist()) == expected
    assert impl.serialize_bytes(grid.T.copy().T) == expected
    assert impl.serialize_bytes(grid[::-1, ::-1]) == frame([b"", b"ccc", b"bb", b"a"])


def test_fixed_width_s_arrays_strip_trailing_nuls(impl) -> None:
    cells = np.array([[b"a\x00b", b"xy"], [b"", b"\x00z"]], dtype="S4")
    expected = frame([b"a\x00b", b"xy", b"", b"\x00z"])
    assert impl.serialize_bytes(cells) == expected
    assert impl.serialize_bytes(np.asfortranarray(cells)) == expected
    assert impl.serialize_bytes(cells[:, ::-1]) == frame([b"xy", b"a\x00b", b"\x00z", b""])
    assert impl.serialize_bytes(np.array([], dtype="S3")) == b""


def test_mixed_element_kinds(impl) -> None:
    values = [b"raw", "text", bytearray(b"ba"), memoryview(b"mv"), np.bytes_(b"nb"), np.str_("ns")]
    assert impl.serialize_bytes(values) == frame([b"raw", b"text", b"ba", b"mv", b"nb", b"ns"])


def test_scalar_and_empty(impl) -> None:
    assert impl.serialize_bytes(b"one") == frame([b"one"])
    assert impl.serialize_bytes("one") == frame([b"one"])
    assert impl.serialize_bytes([]) == b""
    assert impl.deserialize_bytes(b"", 0).shape == (0,)
    assert impl.deserialize_bytes(b"").shape == (0,)
    assert impl.deserialize_bytes(frame([b""] * 3), 3).tolist() == [b""] * 3


def test_large_and_binary_elements(impl) -> None:
    big = bytes(range(256)) * 4096  # 1 MiB with every byte value, NULs included
    wire = impl.serialize_bytes([big, b"\x00", big[:7]])
    assert impl.deserialize_bytes(wire, 3).tolist() == [big, b"\x00", big[:7]]


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_any_buffer_is_accepted(impl, kind) -> None:
    wire = frame([b"ab", b"c"])
    assert impl.deserialize_bytes(kind(wire), 2).tolist() == [b"ab", b"c"]


def test_numpy_and_strided_buffers(impl) -> None:
    wire = frame([b"ab", b"cdef"])
    assert impl.deserialize_bytes(np.frombuffer(wire, np.uint8)).tolist() == [b"ab", b"cdef"]
    padded = np.zeros(2 * len(wire), np.uint8)
    padded[::2] = np.frombuffer(wire, np.uint8)
    assert impl.deserialize_bytes(padded[::2]).tolist() == [b"ab", b"cdef"]
    assert impl.deserialize_bytes(memoryview(padded)[::2]).tolist() == [b"ab", b"cdef"]


def test_decoded_elements_do_not_alias_the_buffer(impl) -> None:
    wire = bytearray(frame([b"abc"]))
    out = impl.deserialize_bytes(wire, 1)
    wire[4:7] = b"xyz"
    assert out[0] == b"abc"


@pytest.mark.parametrize(
    ("wire", "count", "message"),
    [
        (
            b"\x02\x00",
            None,
            r"element 0 at byte offset 0: BYTES length prefix needs 4 bytes, only 2 left",
        ),
        (
            frame([b"ab"]) + b"\x01",
            None,
            r"element 1 at byte offset 6: .*needs 4 bytes, only 1 left",
        ),
        (b"\x05\x00\x00\x00abc", None, r"element 0 at byte offset 0: .*says 5 bytes, only 3 left"),
        (
            frame([b"a", b"b"]) + b"\xff\xff\xff\xff",
            None,
            r"element 2 at byte offset 10: .*says 4294967295",
        ),
        (
            frame([b"a", b"b"]),
            1,
            r"byte offset 5: unexpected additional data: 5 bytes after the 1 expected",
        ),
        (
            frame([b"a", b"b"]),
            3,
            r"byte offset 10: expected 3 BYTES elements, the buffer holds only 2",
        ),
        (b"", 1, r"expected 1 BYTES elements, the buffer holds only 0"),
    ],
)
def test_malformed_framing_names_element_and_offset(impl, wire, count, message) -> None:
    with pytest.raises(DecodeError, match=message):
        impl.deserialize_bytes(wire, count)


@pytest.mark.parametrize("count", [-1, 1.5, True, "2"])
def test_bad_count(impl, count) -> None:
    with pytest.raises(DecodeError, match="count must be None or a non-negative integer"):
        impl.deserialize_bytes(b"", count)


def test_not_a_buffer(impl) -> None:
    with pytest.raises(DecodeError, match="buffer must be a bytes-like object, got list"):
        impl.deserialize_bytes([1, 2, 3])


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([b"ok", 3], r"element 1: BYTES elements must be bytes or str, got int"),
        ([None], r"element 0: BYTES elements must be bytes or str, got NoneType"),
        (["ok", "\ud800"], r"element 1: str element is not encodable as UTF-8"),
        (np.arange(3), r"got a numpy int64 array"),
        ([[b"a"], [b"b", b"c"]], r"element 0: BYTES elements must be bytes or str, got list"),
    ],
)
def test_unencodable_elements(impl, values, message) -> None:
    with pytest.raises(EncodeError, match=message):
        impl.serialize_bytes(values)


def test_matches_tritonclient_byte_for_byte(impl) -> None:
    # tritonclient takes object and S arrays (U arrays it refuses; we encode them as UTF-8).
    utils = pytest.importorskip("tritonclient.utils")
    rng = np.random.default_rng(7)
    items = [rng.bytes(int(n)) for n in rng.integers(0, 30, size=200)]
    for array in (
        np.array(items, dtype=object).reshape(20, 10),
        np.array([s.hex() for s in items], dtype=object),
        np.array([s.hex() for s in items], dtype="S"),
        np.array(["ünï", "cödé", ""], dtype=object),
    ):
        expected = utils.serialize_byte_tensor(array).item()  # a 0-d object array of bytes
        wire = impl.serialize_bytes(array)
        assert wire == expected
        peer = utils.deserialize_bytes_tensor(wire)
        assert impl.deserialize_bytes(wire, array.size).tolist() == peer.tolist()


# ---- bytes_offsets: the zero-copy form ---------------------------------------------------------


@given(items=elements, count_known=st.booleans())
@settings(max_examples=200, deadline=None)
def test_bytes_offsets_agree_with_deserialize(impl, items: list[bytes], count_known: bool) -> None:
    wire = frame(items)
    count = len(items) if count_known else None
    offsets, lengths = impl.bytes_offsets(wire, count)
    assert offsets.dtype == lengths.dtype == np.int64
    assert offsets.shape == lengths.shape == (len(items),)
    view = memoryview(wire)
    sliced = [bytes(view[o : o + n]) for o, n in zip(offsets, lengths, strict=True)]
    assert sliced == items == impl.deserialize_bytes(wire, count).tolist()


@given(data=st.binary(max_size=64), count=st.none() | st.integers(0, 6))
@settings(max_examples=300, deadline=None)
def test_bytes_offsets_fail_exactly_like_deserialize(impl, data: bytes, count: int | None) -> None:
    outcomes = []
    for call in (impl.deserialize_bytes, impl.bytes_offsets):
        try:
            call(data, count)
            outcomes.append("ok")
        except DecodeError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_bytes_offsets_many_elements_without_count(impl) -> None:
    # More elements than the native scan's first guess at a capacity, so its list grows.
    items = [bytes([k % 251]) * (k % 5) for k in range(20_000)]
    wire = frame(items)
    offsets, lengths = impl.bytes_offsets(wire)
    assert lengths.tolist() == [len(x) for x in items]
    assert offsets[-1] == len(wire) - lengths[-1]
    assert impl.deserialize_bytes(wire).tolist() == items


@pytest.mark.parametrize("wire", [b"\x02\x00", b"\x05\x00\x00\x00abc", frame([b"a"]) + b"\x01"])
def test_bytes_offsets_errors(impl, wire) -> None:
    with pytest.raises(DecodeError, match=r"element \d+ at byte offset \d+"):
        impl.bytes_offsets(wire)


# ---- serialize_bytes reads object arrays in place ------------------------------------------------


def test_object_array_is_neither_changed_nor_leaked(impl) -> None:
    import sys

    payload = b"payload-" * 64  # large enough for the native copy to run without the GIL
    mutable = bytearray(b"mutable")
    values = np.array([payload, "text", mutable, memoryview(b"view")] * 50, dtype=object)
    snapshot = values.copy()
    before = [sys.getrefcount(x) for x in (payload, mutable)]
    for _ in range(20):
        wire = impl.serialize_bytes(values)
    assert wire == frame([payload, b"text", b"mutable", b"view"] * 50)
    assert [sys.getrefcount(x) for x in (payload, mutable)] == before
    assert all(a is b for a, b in zip(values, snapshot, strict=True))


def test_non_contiguous_object_arrays(impl) -> None:
    grid = np.array([[b"a", b"bb", b"ccc"], [b"d", b"", b"f"]], dtype=object)
    assert impl.serialize_bytes(grid[:, ::2]) == frame([b"a", b"ccc", b"d", b"f"])
    assert impl.serialize_bytes(grid.T) == frame([b"a", b"d", b"bb", b"", b"ccc", b"f"])


def test_concurrent_calls_on_shared_inputs(impl) -> None:
    import threading

    rng = np.random.default_rng(11)
    small = np.array([rng.bytes(int(n)) for n in rng.integers(0, 20, 5_000)], dtype=object)
    large = np.array([rng.bytes(int(n)) for n in rng.integers(300, 900, 500)], dtype=object)
    wire = impl.serialize_bytes(small)
    calls = [
        lambda: impl.serialize_bytes(small),
        lambda: impl.serialize_bytes(large),
        lambda: impl.deserialize_bytes(wire, small.size).tolist(),
        lambda: [a.tolist() for a in impl.bytes_offsets(wire)],
    ]
    expected = [call() for call in calls]
    results: list[list[object]] = [[] for _ in range(8)]
    barrier = threading.Barrier(8)

    def worker(slot: int) -> None:
        barrier.wait()
        for _ in range(3):
            results[slot].append([call() for call in calls])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(slot == [expected] * 3 for slot in results)


# ---- deserialize_bytes(out=): straight into a batch buffer's rows ---------------------------


def test_deserialize_into_rows(impl) -> None:
    framed = impl.serialize_bytes([b"a", b"", b"xyz", b"\x00\x01"])
    batch = np.full((4, 2), b"-", dtype=object)
    assert impl.deserialize_bytes(framed, out=batch[1:3]) is not None
    assert batch.tolist() == [[b"-", b"-"], [b"a", b""], [b"xyz", b"\x00\x01"], [b"-", b"-"]]
    flat = np.empty(4, dtype=object)
    assert impl.deserialize_bytes(framed, 4, out=flat) is flat


@pytest.mark.parametrize(
    "out, count, error, message",
    [
        (np.empty(3, dtype=object), None, DecodeError, "5 bytes after the 3 expected"),
        (np.empty(5, dtype=object), None, DecodeError, "expected 5 BYTES elements"),
        (np.empty(4, dtype=object), 3, ShapeError, "out holds 4 elements; count is 3"),
        (np.empty(4, dtype="S3"), None, DatatypeError, "out has dtype |S3"),
        (np.empty((4, 2), dtype=object)[:, 0], None, DecodeError, "C-contiguous"),
    ],
)
def test_deserialize_into_refuses(impl, out, count, error, message) -> None:
    framed = impl.serialize_bytes([b"a", b"", b"xyz", b"q"])
    before = out.tolist()
    with pytest.raises(error) as caught:
        impl.deserialize_bytes(framed, count, out=out)
    assert message in str(caught.value)
    assert out.tolist() == before  # checked in full before any cell is written
