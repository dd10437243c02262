"""Inference statistics, in one place: what the statistics endpoints, the gRPC ModelStatistics
RPC and the Prometheus metrics (frontends/metrics_frontend.py) all read.

Invariant: every count is a 64-bit slot in memory that only its own process writes, from the
event loop's thread, so recording a request is a few integer additions with no lock (an
answered request: one kernel call, ``count_success``). A server of several processes gives
each a file of slots in one directory, and a reader sums every process's file, so each figure
covers the whole server whichever process answers (the design of prometheus_client's
multiprocess mode, without its per-value files); one process maps anonymous memory, private
to it. Blocks of slots per model version (:data:`MODEL_FIELDS`), per batch size
(:data:`BATCH_FIELDS`) and per encoding path (:data:`PATH_FIELDS`) are added on first use,
their layout in a small JSON file beside the counters. What each figure means (Triton's names):
docs/observability.md.
"""

from __future__ import annotations

import logging
import mmap
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from oipcodec.errors import OverloadedError, UnavailableError
from oipcodec.kernels import count_success, slot_layout
from oipcodec.server.model import Model
from oipcodec.types import Tensor

__all__ = [
    "BATCH_FIELDS",
    "MODEL_FIELDS",
    "MODEL_FIGURES",
    "PATHS",
    "PATH_FIELDS",
    "ModelStats",
    "PathStats",
    "Snapshot",
    "Statistics",
    "model_figures",
    "statistics_document",
]

log = logging.getLogger("oipcodec.server")

_LAYOUT = slot_layout()
#: The slots of a model version's block. Figures that follow from others are not counted
#: per request: a request is one execution of one row unless ``extra_rows`` (rows beyond the
#: first, of a batching model), ``failed_executions`` (predict raised) or ``merged`` (requests
#: that ran in a dynamic batch with others, beyond its first) say otherwise; ``rejected``
#: counts the failures that were refusals for overload (a full queue, a queue timeout).
MODEL_FIELDS = _LAYOUT.model
#: The slots of a (model version, batch size) block.
BATCH_FIELDS = _LAYOUT.batch
#: The slots of an encoding path's block.
PATH_FIELDS = _LAYOUT.path
#: The figures of a model version (:func:`model_figures`), what the documents are made of.
MODEL_FIGURES = (
    "success_count",
    "success_ns",
    "fail_count",
    "fail_ns",
    "queue_ns",
    "compute_input_ns",
    "compute_infer_ns",
    "compute_output_ns",
    "inference_count",
    "execution_count",
    "last_inference_ms",
    "failed_executions",
    "rejected",
)
#: The encoding paths: a REST body as JSON, with the binary tensor data extension (a raw
#: binary body included), compressed (gzip/deflate, whatever is inside); a gRPC request with
#: raw_input_contents, or with typed contents only; the TensorRT Inference Server v1 API over
#: HTTP and gRPC; GraphPipe.
PATHS = (
    "json",
    "binary",
    "compressed",
    "grpc_raw",
    "grpc_typed",
    "v1_http",
    "v1_grpc",
    "graphpipe",
)

# The slot indices within a model block that Python writes or reads (the kernel has its own).
_SUCCESS, _FAIL, _FAIL_NS, _FAILED_EXECUTIONS, _EXTRA_ROWS, _LAST, _MERGED, _REJECTED = (
    MODEL_FIELDS.index(name)
    for name in (
        "success_count",
        "fail_count",
        "fail_ns",
        "failed_executions",
        "extra_rows",
        "last_inference",
        "merged",
        "rejected",
    )
)

#: Slots a process may use (8 bytes each, in memory mapped from its file or anonymous; a page
#: is only backed by memory once written).
CAPACITY = 1 << 16
#: Slots at the end of the map where blocks go once the rest is full (written, never read).
_OVERFLOW = 64
#: Batch sizes recorded per model version, at most (a model that declares no batch size but
#: whose requests vary in rows would otherwise add a block per size).
_MAX_BATCH_BLOCKS = 64

# perf_counter_ns + this = nanoseconds since the epoch. The last_inference slot holds a
# perf_counter_ns reading (cheaper than the time of day per request), converted when read: the
# clock is the system's monotonic clock, one for every process.
_EPOCH_OFFSET = time.time_ns() - time.perf_counter_ns()

_COUNTERS = ".counters"
_KEYS = ".keys.json"

#: A block's key: ("model", name, version), ("batch", name, version, size) or ("path", path).
Key = tuple[Any, ...]
#: Summed figures: each key's slots, added over every process (``last_inference``: the
#: latest).
Snapshot = dict[Key, list[int]]


class ModelStats:
    """The counters of one model version in this process; the inference step's exchange
    (:class:`oipcodec.server.inference.Exchange`) calls :meth:`succeeded` or :meth:`failed`
    once per inference request, which also count the request on its encoding path
    (:class:`PathStats`)."""

    __slots__ = ("_batches", "_owner", "_slots", "base", "batching", "dynamic", "name", "version")

    def __init__(self, owner: Statistics, model: Model, base: int) -> None:
        self._owner = owner
        self._slots = owner.slots
        self._batches: dict[int, int] = {}
        self.name = model.name
        self.version = model.version
        #: A model that batches has a block per batch size; one that does not executes every
        #: request as a batch of 1, so its batch statistics are its totals.
        self.batching = model.max_batch_size > 0
        #: A model that batches dynamically: its batch blocks count the batches
        #: (:meth:`batch`), not the requests.
        self.dynamic = model.dynamic_batching is not None
        self.base = base

    def succeeded(
        self,
        path: PathStats,
        inputs: Sequence[Tensor],
        received: int,
        checked: int,
        started: int,
        finished: int,
        encoded: int,
        request_bytes: int,
        response_bytes: int,
    ) -> None:
        """One answered request: its encoding path and inputs; body received, request
        decoded and checked, predict started, predict finished, answer encoded
        (``perf_counter_ns`` readings); its bytes in and out.

        One kernel call writes every slot."""
        rows, batch = self.batch_of(inputs) if self.batching else (1, -1)
        count_success(
            self._slots,
            self.base,
            path.base,
            batch,
            rows,
            received,
            checked,
            started,
            finished,
            encoded,
            request_bytes,
            response_bytes,
        )

    def batch_of(self, inputs: Sequence[Any]) -> tuple[int, int]:
        """A batching model's request of ``inputs`` (tensors or arrays): its batch size, and
        the block it is counted in (-1: none; a dynamic batch's is :meth:`batch`'s)."""
        rows = inputs[0].shape[0] if inputs and inputs[0].shape else 1
        return rows, -1 if self.dynamic else self._batch_block(rows)

    def batch(
        self,
        rows: int,
        requests: int,
        input_ns: int,
        infer_ns: int,
        output_ns: int,
        succeeded: bool,
    ) -> None:
        """One dynamic batch of ``rows`` made of ``requests`` that ran (their answers are
        counted by :meth:`succeeded` or :meth:`failed`): one execution, a batch-size block
        entry when ``predict`` succeeded."""
        if requests > 1:
            self._slots[self.base + _MERGED] += requests - 1
        batch = self._batch_block(rows) if succeeded else -1
        if batch >= 0:
            s = self._slots
            s[batch] += 1
            s[batch + 1] += input_ns
            s[batch + 2] += infer_ns
            s[batch + 3] += output_ns

    def _batch_block(self, rows: int) -> int:
        """The block of batch size ``rows`` (added on first use), -1 past the most kept."""
        batch = self._batches.get(rows)
        if batch is None:
            if len(self._batches) >= _MAX_BATCH_BLOCKS:
                return -1
            batch = self._owner.block(("batch", self.name, self.version, rows), len(BATCH_FIELDS))
            self._batches[rows] = batch
        return batch

    def failed(
        self, path: PathStats, received: int, executed: bool, request_bytes: int, rejected: bool
    ) -> None:
        """One refused request, received at ``received``; ``executed``: predict ran (and
        raised); ``rejected``: refused for overload."""
        s, b = self._slots, self.base
        s[b + _FAIL] += 1
        if rejected:
            s[b + _REJECTED] += 1
        s[b + _FAIL_NS] += time.perf_counter_ns() - received
        s[b + _LAST] = received
        if executed:
            s[b + _FAILED_EXECUTIONS] += 1
        path.record(request_bytes)


class PathStats:
    """The counters of one encoding path in this process (an answered request is counted
    by :meth:`ModelStats.succeeded`)."""

    __slots__ = ("_slots", "base", "path")

    def __init__(self, owner: Statistics, path: str, base: int) -> None:
        self._slots = owner.slots
        self.path = path
        self.base = base

    def record(self, request_bytes: int) -> None:
        """One inference request on this path that got no answer."""
        s, b = self._slots, self.base
        s[b] += 1
        s[b + 1] += request_bytes


class Statistics:
    """The counters of this process, and the reader of every process's.

    ``directory``: where the processes of one server keep their counter files (this process
    writes ``<pid>.counters`` and ``<pid>.keys.json`` there); ``None``: this process only,
    in anonymous memory of the same :data:`CAPACITY` (one form of slots for the kernel).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = None if directory is None else Path(directory)
        self._keys_path: Path | None = None
        size = CAPACITY * 8
        if self.directory is None:
            self._map = _private_map(size)
        else:
            stem = self.directory / str(os.getpid())
            with open(f"{stem}{_COUNTERS}", "w+b") as file:
                file.truncate(size)
                self._map = mmap.mmap(file.fileno(), size)
            self._keys_path = Path(f"{stem}{_KEYS}")
        #: The int64 slots of this process (what ``count_success`` writes).
        self.slots = memoryview(self._map).cast("q")
        self._blocks: dict[Key, int] = {}
        self._next = 0
        # Keyed by name, version and whether it batches, never by the Model: a replaced
        # model's memory must return by reference counting, not wait for these counters.
        self._models: dict[tuple[str, str, bool, bool], ModelStats] = {}
        self.paths = {
            path: PathStats(self, path, self.block(("path", path), len(PATH_FIELDS)))
            for path in PATHS
        }
        if self._keys_path is not None:
            self._write_keys()

    # ------------------------------------------------------------------ writing

    def of(self, model: Model) -> ModelStats:
        """The counters of ``model`` (its name and version; added on first use)."""
        key = (
            model.name,
            model.version,
            model.max_batch_size > 0,
            model.dynamic_batching is not None,
        )
        stats = self._models.get(key)
        if stats is None:
            base = self.block(("model", model.name, model.version), len(MODEL_FIELDS))
            stats = self._models[key] = ModelStats(self, model, base)
        return stats

    def answered(
        self,
        model: Model,
        path: str,
        inputs: Sequence[Tensor],
        received: int,
        timings: tuple[int, int, int],
        request_bytes: int,
        response_bytes: int,
    ) -> None:
        """One request of any front end answered on encoding ``path``, its answer encoded
        now: ``timings`` are the inference step's (checked, started, finished) readings."""
        self.of(model).succeeded(
            self.paths[path],
            inputs,
            received,
            *timings,
            time.perf_counter_ns(),
            request_bytes,
            response_bytes,
        )

    def refused(
        self, model: Model | None, path: str, received: int, exc: BaseException, request_bytes: int
    ) -> None:
        """One request of any front end refused with ``exc`` on encoding ``path``; counted on
        the path alone when it named no known ``model``."""
        if model is None:
            self.paths[path].record(request_bytes)
        else:
            executed = getattr(exc, "executed", False)
            rejected = isinstance(exc, OverloadedError)
            self.of(model).failed(self.paths[path], received, executed, request_bytes, rejected)

    def block(self, key: Key, width: int) -> int:
        """The offset of a new block of ``width`` zeroed slots for ``key``."""
        offset = self._blocks.get(key)
        if offset is not None:
            return offset
        offset = self._next
        if offset + width > CAPACITY - _OVERFLOW:
            log.warning("statistics: no room left for %s; it is not counted", key)
            return CAPACITY - _OVERFLOW
        self._next += width
        self._blocks[key] = offset
        if self._keys_path is not None:
            self._write_keys()
        return offset

    def _write_keys(self) -> None:
        assert self._keys_path is not None
        layout = [[*key, offset] for key, offset in self._blocks.items()]
        partial = self._keys_path.with_suffix(".partial")
        partial.write_bytes(orjson.dumps(layout))
        os.replace(partial, self._keys_path)

    # ------------------------------------------------------------------ reading

    def snapshot(self) -> Snapshot:
        """Every block's figures, summed over the server's processes."""
        total: Snapshot = {}
        for layout, slots in self._sources():
            for key, offset in layout:
                width = _WIDTHS[key[0]]
                values = list(slots[offset : offset + width])
                mine = total.get(key)
                if mine is None:
                    total[key] = values
                    continue
                latest = max(mine[_LAST], values[_LAST]) if key[0] == "model" else 0
                for index, value in enumerate(values):
                    mine[index] += value
                if key[0] == "model":
                    mine[_LAST] = latest  # a time, not a count
        return total

    def _sources(self) -> Iterator[tuple[list[tuple[Key, int]], memoryview]]:
        if self.directory is None:
            yield list(self._blocks.items()), self.slots
            return
        for keys in sorted(self.directory.glob(f"*{_KEYS}")):
            counters = keys.with_name(keys.name[: -len(_KEYS)] + _COUNTERS)
            try:
                layout = [(tuple(row[:-1]), row[-1]) for row in orjson.loads(keys.read_bytes())]
                used = max((offset + _WIDTHS[key[0]] for key, offset in layout), default=0)
                with open(counters, "rb") as file:
                    data = file.read(used * 8)
            except (OSError, ValueError):
                continue  # a process writing its first layout, or gone with its directory
            if len(data) == used * 8:
                yield layout, memoryview(data).cast("q")


def _private_map(size: int) -> mmap.mmap:
    """``size`` bytes of anonymous memory, zeroed, backed page by page once written, and not
    shared with a process this one forks (a child's counters start from its parent's)."""
    if hasattr(mmap, "MAP_PRIVATE"):
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return mmap.mmap(-1, size)  # Windows: memory of this process only


_WIDTHS = {"model": len(MODEL_FIELDS), "batch": len(BATCH_FIELDS), "path": len(PATH_FIELDS)}


def metrics_directory() -> str:
    """A new directory for the counter files of one server's processes."""
    return tempfile.mkdtemp(prefix="oipcodec-metrics-")


def remove_directory(directory: str) -> None:
    """Remove a :func:`metrics_directory` and the files in it (gone already: nothing)."""
    shutil.rmtree(directory, ignore_errors=True)


# ---------------------------------------------------------------------------------- documents


def _duration(count: int, ns: int) -> dict[str, int]:
    return {"count": count, "ns": ns}


def model_figures(slots: list[int]) -> dict[str, int]:
    """A model block's slots as the figures of :data:`MODEL_FIGURES`."""
    success = slots[_SUCCESS]
    figures = dict(zip(MODEL_FIELDS, slots, strict=True))
    figures["inference_count"] = success + slots[_EXTRA_ROWS]
    figures["execution_count"] = success + slots[_FAILED_EXECUTIONS] - slots[_MERGED]
    last = slots[_LAST]
    figures["last_inference_ms"] = (last + _EPOCH_OFFSET) // 1_000_000 if last else 0
    return {name: figures[name] for name in MODEL_FIGURES}


def model_statistics(name: str, version: str, snapshot: Snapshot) -> dict[str, Any]:
    """One ``model_stats`` entry of Triton's statistics answer, from ``snapshot``."""
    f = model_figures(snapshot.get(("model", name, version)) or [0] * len(MODEL_FIELDS))
    success = f["success_count"]
    batches = sorted(
        (key[3], values)
        for key, values in snapshot.items()
        if key[0] == "batch" and key[1] == name and key[2] == version
    )
    if not batches and success:  # a model that does not batch: every execution is of 1
        totals = [f[n] for n in ("compute_input_ns", "compute_infer_ns", "compute_output_ns")]
        batches = [(1, [success, *totals])]
    return {
        "name": name,
        "version": version,
        "last_inference": f["last_inference_ms"],
        "inference_count": f["inference_count"],
        "execution_count": f["execution_count"],
        "inference_stats": {
            "success": _duration(success, f["success_ns"]),
            "fail": _duration(f["fail_count"], f["fail_ns"]),
            "queue": _duration(success, f["queue_ns"]),
            "compute_input": _duration(success, f["compute_input_ns"]),
            "compute_infer": _duration(success, f["compute_infer_ns"]),
            "compute_output": _duration(success, f["compute_output_ns"]),
            "cache_hit": _duration(0, 0),
            "cache_miss": _duration(0, 0),
        },
        "batch_stats": [
            {
                "batch_size": size,
                "compute_input": _duration(values[0], values[1]),
                "compute_infer": _duration(values[0], values[2]),
                "compute_output": _duration(values[0], values[3]),
            }
            for size, values in batches
        ],
    }


def statistics_document(
    statistics: Statistics | None, versions: list[tuple[str, str]]
) -> dict[str, Any]:
    """Triton's statistics answer (``GET /v2/models[/<name>[/versions/<v>]]/stats``) for the
    model ``versions`` (name, version pairs), summed over the server's processes."""
    if statistics is None:
        raise UnavailableError("inference statistics are off in this server (metrics=False)")
    snapshot = statistics.snapshot()
    return {"model_stats": [model_statistics(n, v, snapshot) for n, v in versions]}
