"""The statistics counting kernel: count_success on both implementations, against a
reference written with Python integers on a list; its bounds, buffer and argument checks
(nothing written before an error); wrapping past int64; the buffer and references it takes,
released on every path."""

from __future__ import annotations

import contextlib
import gc
import re
import sys
import tracemalloc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oipcodec import kernels

SLOTS = 40
MODEL, PATH, BATCH = 0, 13, 18  # the blocks' offsets used below (widths 13, 5, 4)
LAYOUT = kernels.load("pure").slot_layout()
INT64 = st.integers(-(1 << 63), (1 << 63) - 1)


def reference(slots: list[int], model: int, path: int, batch: int, *values: int) -> list[int]:
    """``slots`` after one count, from the contract's text, field by field by name."""
    rows, received, checked, started, finished, encoded, request_bytes, response_bytes = values
    out = list(slots)
    m = dict(zip(LAYOUT.model, range(model, model + 13), strict=True))
    p = dict(zip(LAYOUT.path, range(path, path + 5), strict=True))
    adds = {
        m["success_count"]: 1,
        m["success_ns"]: encoded - received,
        m["queue_ns"]: started - checked,
        m["compute_input_ns"]: checked - received,
        m["compute_infer_ns"]: finished - started,
        m["compute_output_ns"]: encoded - finished,
        m["extra_rows"]: rows - 1,
        p["requests"]: 1,
        p["request_bytes"]: request_bytes,
        p["response_bytes"]: response_bytes,
        p["decode_ns"]: checked - received,
        p["encode_ns"]: encoded - finished,
    }
    if batch != -1:
        b = dict(zip(LAYOUT.batch, range(batch, batch + 4), strict=True))
        adds[b["count"]] = 1
        adds[b["compute_input_ns"]] = checked - received
        adds[b["compute_infer_ns"]] = finished - started
        adds[b["compute_output_ns"]] = encoded - finished
    for index, value in adds.items():
        out[index] = ((out[index] + value + (1 << 63)) % (1 << 64)) - (1 << 63)
    out[m["last_inference"]] = received
    return out


def fresh(count: int = SLOTS) -> memoryview:
    return memoryview(bytearray(8 * count)).cast("q")


def test_counts_each_block_as_the_contract_says(impl: Any) -> None:
    slots = fresh()
    expected = [0] * SLOTS
    for args in [
        (MODEL, PATH, BATCH, 3, 100, 110, 115, 150, 170, 1000, 50),
        (MODEL, PATH, -1, 1, 200, 204, 204, 250, 251, 7, 9),
        (MODEL, PATH + 22, BATCH, 0, 300, 301, 302, 303, 304, 5, 6),  # another path, 0 rows
    ]:
        impl.count_success(slots, *args)
        expected = reference(expected, *args)
    assert list(slots) == expected
    assert slots[MODEL] == 3 and slots[BATCH] == 2 and slots[PATH] == 2 and slots[PATH + 22] == 1


@given(st.lists(st.tuples(*[INT64] * 8), min_size=1, max_size=4), st.booleans())
def test_twins_agree_with_the_reference_and_wrap_as_int64(
    calls: list[tuple[int, ...]], batched: bool
) -> None:
    native, pure = kernels.load("native"), kernels.load("pure")
    slots = [fresh(), fresh()]
    expected = [0] * SLOTS
    batch = BATCH if batched else -1
    for values in calls:
        for impl, s in zip((native, pure), slots, strict=True):
            impl.count_success(s, MODEL, PATH, batch, *values)
        expected = reference(expected, MODEL, PATH, batch, *values)
    assert list(slots[0]) == list(slots[1]) == expected


@pytest.mark.parametrize(
    ("model", "path", "batch", "named"),
    [
        (-1, PATH, BATCH, "the model block at slot -1 (13 slots)"),
        (SLOTS - 12, PATH, BATCH, f"the model block at slot {SLOTS - 12} (13 slots)"),
        (MODEL, -1, BATCH, "the path block at slot -1 (5 slots)"),
        (MODEL, SLOTS - 4, BATCH, f"the path block at slot {SLOTS - 4} (5 slots)"),
        (MODEL, PATH, -2, "the batch block at slot -2 (4 slots)"),
        (MODEL, PATH, SLOTS - 3, f"the batch block at slot {SLOTS - 3} (4 slots)"),
        (MODEL, PATH, 1 << 62, f"the batch block at slot {1 << 62} (4 slots)"),
    ],
)
def test_a_block_outside_the_buffer_is_refused_before_any_write(
    impl: Any, model: int, path: int, batch: int, named: str
) -> None:
    slots = fresh()
    with pytest.raises(IndexError, match=re.escape(f"{named} is outside the buffer's {SLOTS}")):
        impl.count_success(slots, model, path, batch, 2, 1, 2, 3, 4, 5, 6, 7)
    assert not any(slots)


def test_the_last_blocks_that_fit_are_counted(impl: Any) -> None:
    slots = fresh()
    impl.count_success(slots, SLOTS - 22, SLOTS - 9, SLOTS - 4, 1, 1, 2, 3, 4, 5, 6, 7)
    assert slots[SLOTS - 22] == slots[SLOTS - 9] == slots[SLOTS - 4] == 1


@pytest.mark.parametrize(
    ("slots", "expected"),
    [
        (bytes(8 * SLOTS), "is read-only; expected a writable one"),
        (memoryview(bytearray(8 * SLOTS)).toreadonly(), "is read-only; expected a writable one"),
        (memoryview(bytearray(16 * SLOTS)).cast("q")[::2], "is strided; expected a contiguous one"),
        (bytearray(8 * SLOTS + 3), f"is {8 * SLOTS + 3} bytes; expected whole 8-byte slots"),
    ],
)
def test_a_buffer_that_is_not_writable_int64_slots_is_refused(
    impl: Any, slots: Any, expected: str
) -> None:
    with pytest.raises(TypeError, match=f"statistics slots: the buffer {expected}"):
        impl.count_success(slots, MODEL, PATH, -1, 1, 1, 2, 3, 4, 5, 6, 7)


def test_a_buffer_at_any_address_is_counted(impl: Any) -> None:
    raw = bytearray(8 * SLOTS + 1)
    impl.count_success(memoryview(raw)[1:], MODEL, PATH, BATCH, 2, 10, 20, 30, 40, 50, 6, 7)
    slots = memoryview(bytes(raw[1:])).cast("q")
    assert list(slots) == reference([0] * SLOTS, MODEL, PATH, BATCH, 2, 10, 20, 30, 40, 50, 6, 7)


@pytest.mark.parametrize("value", [1 << 63, -(1 << 63) - 1])
def test_an_argument_past_int64_is_refused_before_any_write(impl: Any, value: int) -> None:
    slots = fresh()
    with pytest.raises(OverflowError):
        impl.count_success(slots, MODEL, PATH, BATCH, 1, 1, 2, 3, 4, 5, 6, value)
    with pytest.raises(TypeError):
        impl.count_success(slots, MODEL, PATH, BATCH, 1.5, 1, 2, 3, 4, 5, 6, 7)
    assert not any(slots)


def test_native_releases_the_buffer_and_references_on_every_path() -> None:
    native = kernels.load("native")
    raw = bytearray(8 * SLOTS)
    calls = [
        (MODEL, PATH, BATCH, 2),  # counted
        (MODEL, PATH, SLOTS, 2),  # IndexError
        (MODEL, PATH, BATCH, 1 << 64),  # OverflowError, before the buffer is taken
    ]
    for args in calls * 3:
        with contextlib.suppress(IndexError, OverflowError):
            native.count_success(raw, *args, 1, 2, 3, 4, 5, 6, 7)
    gc.collect()
    before = sys.getrefcount(raw)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            for args in calls:
                with contextlib.suppress(IndexError, OverflowError):
                    native.count_success(raw, *args, 1, 2, 3, 4, 5, 6, 7)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(raw) == before
    assert grown < 4096
    raw.extend(b"\0" * 8)  # no buffer export left: a bytearray with one cannot be resized
    assert len(raw) == 8 * SLOTS + 8
