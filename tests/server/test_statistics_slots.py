"""The statistics' slots (oipcodec.server.stats): one form in every mode, 64-bit slots in
memory that the ``count_success`` kernel writes, private to the process that made them; the
blocks an answered request is counted in, a batching model's batch size's included."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from oipcodec.server import DynamicBatching
from oipcodec.server.demo import Identity
from oipcodec.server.stats import CAPACITY, Statistics, model_statistics

ROWS = np.zeros((3, 2), dtype=np.float32)


@pytest.fixture(params=["one process", "a directory"])
def statistics(request: pytest.FixtureRequest, tmp_path: Path) -> Statistics:
    return Statistics(None if request.param == "one process" else tmp_path)


def test_slots_are_int64_in_memory_in_every_mode(statistics: Statistics) -> None:
    assert statistics.slots.format == "q" and len(statistics.slots) == CAPACITY
    assert not statistics.slots.readonly


def test_an_answer_is_counted_in_its_model_path_and_batch_blocks(statistics: Statistics) -> None:
    batching = Identity(name="b", max_batch_size=4)
    stats = statistics.of(batching)
    stats.succeeded(statistics.paths["binary"], [ROWS], 100, 110, 115, 150, 170, 1000, 50)
    stats.succeeded(statistics.paths["binary"], [ROWS[:1]], 200, 210, 210, 230, 260, 10, 5)
    entry = model_statistics("b", "1", statistics.snapshot())
    assert entry["inference_count"] == 4 and entry["execution_count"] == 2
    inference = entry["inference_stats"]
    assert inference["success"] == {"count": 2, "ns": 70 + 60}
    assert inference["queue"]["ns"] == 5
    assert inference["compute_infer"]["ns"] == 35 + 20
    assert [(b["batch_size"], b["compute_output"]) for b in entry["batch_stats"]] == [
        (1, {"count": 1, "ns": 30}),
        (3, {"count": 1, "ns": 20}),
    ]
    assert statistics.snapshot()[("path", "binary")] == [2, 1010, 55, 20, 50]


def test_a_dynamic_batching_model_leaves_the_batch_blocks_to_its_batches() -> None:
    statistics = Statistics()
    model = Identity(name="d", max_batch_size=4)
    model.dynamic_batching = DynamicBatching()
    statistics.of(model).succeeded(statistics.paths["json"], [ROWS], 1, 2, 3, 4, 5, 6, 7)
    snapshot = statistics.snapshot()
    assert model_statistics("d", "1", snapshot)["inference_count"] == 3
    assert [key for key in snapshot if key[0] == "batch"] == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_process_counts_into_its_own_copy() -> None:
    """A child forked after the counters were made (a worker of a pre-fork server) writes
    its copy only: the parent's figures stay its own."""
    statistics = Statistics()
    model = Identity(name="f")
    statistics.of(model).succeeded(statistics.paths["json"], [], 1, 2, 2, 3, 4, 5, 6)
    pid = os.fork()
    if pid == 0:  # the child: count 10 more and leave at once
        for _ in range(10):
            statistics.of(model).succeeded(statistics.paths["json"], [], 1, 2, 2, 3, 4, 5, 6)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert statistics.snapshot()[("model", "f", "1")][0] == 1


def test_blocks_past_the_capacity_go_to_the_overflow_slots(
    statistics: Statistics, caplog: pytest.LogCaptureFixture
) -> None:
    """Past CAPACITY, a new block is counted in the last slots (never read) and said once."""
    statistics._next = CAPACITY - 70
    model = Identity(name="late")
    stats = statistics.of(model)
    assert stats.base == CAPACITY - 64
    assert "no room left for ('model', 'late', '1')" in caplog.text
    stats.succeeded(statistics.paths["json"], [], 1, 2, 2, 3, 4, 5, 6)  # in bounds: no error
