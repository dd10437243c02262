"""Dynamic batching: the requests of a model queue, and ``predict`` runs once per batch.

A model opts in with a :class:`~oipcodec.server.model.DynamicBatching` (its ``dynamic_batching``
attribute, or a repository configuration's). :class:`Batcher` is one model's queue and the
task that runs its batches, one at a time and in order of arrival (Triton's semantics, the
details in docs/batching.md), under Triton's queue policy (:mod:`oipcodec.server.queue_policy`:
a bounded queue per priority level, higher levels first, a timeout per request). The pipeline
feeds it decoded requests, and gives it the one
``predict`` call and failure path of the server. Each input of a batch is one buffer (the
previous batch's when nothing refers to it any more): every request copies its rows into it
(:meth:`~oipcodec.types.Tensor.into`), and gets back its own rows of every output as views of
what ``predict`` returned.
"""

# Invariant: a request's failure to write its rows fails that request alone; ``predict``
# raising fails every request of that batch with the same error.

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec._deprecated import moved
from oipcodec.errors import InternalError, InvalidArgumentError, RequestError, UnavailableError
from oipcodec.server.model import Model
from oipcodec.server.queue_policy import (
    QUEUE_FULL,
    TIMED_OUT,
    TRITON_OVERLOAD,
    Overload,
    schedule,
)
from oipcodec.types import Parameters, Tensor

__all__ = ["BatchRecorder", "Batcher", "check_batchable"]

log = logging.getLogger("oipcodec.server")

#: What a request gets back: its rows of every output, when its batch started (taken from
#: the queue) and when ``predict`` finished (``perf_counter_ns`` readings).
Result = tuple[dict[str, Any], int, int]
#: Told of every batch that ran: rows, requests answered, and the nanoseconds spent writing
#: the inputs, in ``predict``, and splitting the outputs (None: predict raised).
BatchRecorder = Callable[[int, int, int, int, int, bool], None]
#: The pipeline's ``predict`` call (``call_predict``): (started, produced, finished).
Predict = Callable[[Model, dict[str, Any], Parameters], Awaitable[tuple[int, Any, int]]]
#: The pipeline's failure path (``failure``): an exception as the error a request answers.
Failure = Callable[[Model, Exception, bool], RequestError]


@dataclass(slots=True, eq=False)
class _Waiting:
    """A request in the queue."""

    key: tuple[Any, ...]
    tensors: Sequence[Tensor]
    rows: int
    parameters: Parameters
    future: asyncio.Future[Result]
    queued: int
    #: Its place in the queue: its priority level (1 first; 0 without levels), then whether
    #: its time ran out and it was delayed (behind the level's others).
    rank: tuple[int, bool] = (0, False)
    #: The call that ends its time in the queue, or None.
    timer: asyncio.TimerHandle | None = None


def check_batchable(model: Model, tensors: Sequence[Tensor]) -> None:
    """What a request that joins a dynamic batch must be, beyond the checks of any request
    (from the tensors' names and shapes alone: their data is not read): at least one input,
    each with a batch dimension, none named twice.

    Parameters
    ----------
    model
        The model.
    tensors
        The request's inputs.
    """
    if not tensors:
        raise InvalidArgumentError(
            f"a request to model '{model.name}', which batches, needs at least one input"
        )
    for tensor in tensors:
        if not tensor.shape:
            raise InvalidArgumentError(
                f"input '{tensor.name}' of model '{model.name}' is a scalar; the model "
                "batches, so every input's first dimension is its batch size"
            )
    if len({t.name for t in tensors}) != len(tensors):
        raise InvalidArgumentError(
            f"a request to model '{model.name}' names an input more than once"
        )


def batch_key(
    tensors: Sequence[Tensor], parameters: Parameters, requested: Sequence[str] | None
) -> tuple[Any, ...]:
    """What must be equal for two requests to share a batch: each input's name, datatype
    and shape after the batch dimension, the parameters (with their types: ``1`` and
    ``True`` differ) and the outputs asked for.

    Parameters
    ----------
    tensors
        The request's inputs (each has the same first dimension).
    parameters
        The request's parameters.
    requested
        The names of the outputs asked for; ``None``: all of them.
    """
    inputs = tuple(sorted((t.name, t.datatype, t.shape[1:]) for t in tensors))
    given = tuple(sorted((k, type(v).__name__, v) for k, v in parameters.items()))
    return inputs, given, None if requested is None else tuple(requested)


class Batcher:
    """The queue of one model's requests and the task that runs its batches.

    Parameters
    ----------
    model
        The model, with its ``dynamic_batching`` policy and a ``max_batch_size`` above 0.
    record
        Told of every batch (the statistics), or None.
    predict
        The pipeline's call of ``predict``.
    fail
        The pipeline's failure path: an exception as the error a request answers.
    overload
        The server's answer to a full queue (503, or 429 with ``Retry-After``).
    """

    def __init__(
        self,
        model: Model,
        record: BatchRecorder | None,
        predict: Predict,
        fail: Failure,
        overload: Overload = TRITON_OVERLOAD,
    ) -> None:
        policy = model.dynamic_batching
        assert policy is not None and model.max_batch_size > 0
        self.model = model
        self.policy = policy
        self.overload = overload
        self.max_rows = model.max_batch_size
        self.preferred = frozenset(policy.preferred_batch_size)
        self.delay_ns = policy.max_queue_delay_microseconds * 1000
        self._record = record
        self._predict = predict
        self._fail_with = fail
        self._queue: deque[_Waiting] = deque()
        self._arrived = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed: str | None = None
        # The last batch buffer of each input (by name, dtype and row shape), for the next
        # batch to reuse once nothing refers to it any more.
        self._spare: dict[tuple[Any, ...], np.ndarray[Any, Any]] = {}
        self._alone: dict[tuple[Any, ...], int] = {}

    def __len__(self) -> int:
        """Requests queued (a request whose batch runs is no longer counted)."""
        return len(self._queue)

    def waiting(self, level: int) -> int:
        """Requests queued at priority ``level`` whose clients still wait.

        Parameters
        ----------
        level
            The priority level (1 is served first).
        """
        return sum(1 for w in self._queue if w.rank[0] == level and not w.future.done())

    async def submit(
        self,
        tensors: Sequence[Tensor],
        parameters: Parameters,
        requested: Sequence[str] | None,
    ) -> Result:
        """Queue one checked request and wait for its batch: its rows of every output, when
        its batch started and when ``predict`` finished. A caller cancelled while waiting (its
        client went away) leaves the queue: its rows are not in the batch.

        Parameters
        ----------
        tensors
            The request's inputs (each has the same first dimension, at most
            ``max_batch_size``).
        parameters
            The request's parameters (``priority`` and ``timeout`` steer its queue).
        requested
            The names of the outputs asked for; ``None``: all of them.
        """
        level, policy, timeout, parameters = schedule(self.policy, self.model.name, parameters)
        if self._closed is not None:
            raise UnavailableError(self._closed)
        rows = tensors[0].shape[0]
        if rows > self.max_rows:
            # Checked against this queue's limit, not the model's: a configuration override
            # changes the model's while this queue drains with the limit it was made with.
            raise InvalidArgumentError(
                f"inputs of model '{self.model.name}' have a batch size of {rows}, more than "
                f"the {self.max_rows} rows of the batch queue the request joins (the model's "
                "max_batch_size when the queue was made; it is being reconfigured)"
            )
        limit = policy.max_queue_size
        if limit and len(self._queue) >= limit and self.waiting(level) >= limit:
            where = f" at priority level {level}" if level else ""
            raise self.overload.refusal(
                f"{QUEUE_FULL}: model '{self.model.name}' has {limit} requests queued{where} "
                "(max_queue_size)"
            )
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        key = batch_key(tensors, parameters, requested)
        waiting = _Waiting(key, tensors, rows, parameters, future, time.perf_counter_ns())
        waiting.rank = (level, False)
        self._enqueue(waiting)
        if timeout:
            waiting.timer = loop.call_later(
                timeout / 1e6, self._expire, waiting, timeout, policy.timeout_action
            )
        self._arrived.set()
        if self._task is None or self._task.done():  # first request, or the loop ended it
            self._task = loop.create_task(self._run(), name=f"batcher {self.model.name}")
        return await future

    def close(self, reason: str) -> None:
        """Refuse what is queued with :class:`UnavailableError`, and later requests alike; a
        batch already running finishes, then the task ends.

        Parameters
        ----------
        reason
            The refusal's message.
        """
        self._closed = reason
        while self._queue:
            waiting = self._queue.popleft()
            if waiting.timer is not None:
                waiting.timer.cancel()
            if not waiting.future.done():
                waiting.future.set_exception(UnavailableError(reason))
        self._arrived.set()  # an idle task wakes to end

    def _enqueue(self, waiting: _Waiting) -> None:
        """Queue ``waiting`` behind every request of its rank or before it: in order of
        arrival within a priority level, the levels in order (1 first)."""
        queue = self._queue
        at = len(queue)
        while at and queue[at - 1].rank > waiting.rank:
            at -= 1
        queue.insert(at, waiting)

    def _expire(self, waiting: _Waiting, timeout: int, action: str) -> None:
        """The time of a request still queued ran out (a batch that takes it stops its timer):
        REJECT answers it, without running the model; DELAY queues it behind its level."""
        waiting.timer = None
        if waiting.future.done():  # its client went away
            return
        self._queue.remove(waiting)
        if action == "DELAY":
            waiting.rank = (waiting.rank[0], True)
            self._enqueue(waiting)
        else:
            waiting.future.set_exception(
                self.overload.refusal(
                    f"{TIMED_OUT}: the request waited {timeout} microseconds in the queue of "
                    f"model '{self.model.name}' (its timeout)"
                )
            )
        self._arrived.set()  # the head may have changed

    # ------------------------------------------------------------------ the task

    async def _run(self) -> None:
        queue = self._queue
        while self._closed is None:
            while queue and queue[0].future.done():  # its client went away
                queue.popleft()
            if not queue:
                self._arrived.clear()
                await self._arrived.wait()
                continue
            count, closed = self._plan()
            if not closed:
                wait = (queue[0].queued + self.delay_ns - time.perf_counter_ns()) / 1e9
                if wait > 0:
                    self._arrived.clear()
                    # asyncio's TimeoutError: not the builtin before Python 3.11
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._arrived.wait(), wait)
                    continue
            batch = [queue.popleft() for _ in range(count)]
            for waiting in batch:
                if waiting.timer is not None:  # its time in the queue is over
                    waiting.timer.cancel()
            try:
                await self._execute(batch)
                # A batch that awaited nothing (all its requests failed writing their rows)
                # must still let the loop serve others: this task never runs twice unyielding.
                await asyncio.sleep(0)
            except asyncio.CancelledError:  # the event loop is closing
                for waiting in batch:
                    if not waiting.future.done():
                        waiting.future.set_exception(
                            UnavailableError(f"model '{self.model.name}': the server stopped")
                        )
                raise
            except Exception as exc:  # a bug here must not leave requests waiting for ever
                log.exception("model %r: a batch failed", self.model.name)
                error = InternalError(f"model '{self.model.name}': the batch failed: {exc}")
                for waiting in batch:
                    if not waiting.future.done():
                        waiting.future.set_exception(copy.copy(error))

    def _plan(self) -> tuple[int, bool]:
        """How many requests from the head of the queue make the next batch, and whether it
        is closed (else it may wait for more, until the head's delay is over).

        The batch takes the requests that follow the head with its key, until one of another
        key (run in order: it closes the batch) or one that does not fit in
        ``max_batch_size`` rows. It is closed at ``max_batch_size`` rows, or at the largest
        preferred size it reaches (the requests after that wait for the next batch). A head
        too large to fit makes a batch alone: the count is never 0 for a queue that is not
        empty, or the task would loop without end."""
        queue = self._queue
        key = queue[0].key
        rows = count = best = 0
        closed = False
        for waiting in queue:
            if waiting.future.done():
                count += 1  # dropped when the batch is written
                continue
            if waiting.key != key or rows + waiting.rows > self.max_rows:
                closed = True
                if not rows:  # the head alone is over the limit (submit refuses that)
                    count += 1
                break
            rows += waiting.rows
            count += 1
            if rows in self.preferred:
                best = count
            if rows == self.max_rows:
                return count, True
        if best:
            return best, True
        return count, closed

    async def _execute(self, batch: list[_Waiting]) -> None:
        """Write the requests' rows into one buffer per input, run ``predict`` once, and give
        every request its rows of every output."""
        model = self.model
        started = time.perf_counter_ns()
        live = [w for w in batch if not w.future.done()]
        if not live:
            return
        total = sum(w.rows for w in live)
        buffers = {t.name: self._buffer(t, total) for t in live[0].tensors}
        # The requests come decoded: their rows are copies, made here.
        placed, at, failures = _assemble(live, buffers)
        for waiting, exc in failures:
            if not waiting.future.done():
                waiting.future.set_exception(self._fail_with(model, exc, False))
        if not placed:
            return
        arrays = {name: buffer[:at] for name, buffer in buffers.items()}
        parameters = placed[0][0].parameters
        assembled = time.perf_counter_ns()
        try:
            _, produced, finished = await self._predict(model, arrays, parameters)
        except RequestError as exc:  # marked executed
            finished = time.perf_counter_ns()
            self._fail(placed, exc, started, assembled, finished)
            return
        try:
            outputs = _batch_outputs(model, produced, at)
        except RequestError as exc:
            exc.executed = True
            self._fail(placed, exc, started, assembled, finished)
            return
        answered = 0
        for waiting, first in placed:
            if waiting.future.done():  # cancelled while predict ran
                continue
            rows = {name: _rows(value, first, waiting.rows) for name, value in outputs.items()}
            waiting.future.set_result((rows, started, finished))
            answered += 1
        if self._record is not None and answered:
            split = time.perf_counter_ns()
            self._record(at, answered, assembled - started, finished - assembled,
                         split - finished, True)  # fmt: skip

    def _buffer(self, tensor: Tensor, rows: int) -> np.ndarray[Any, Any]:
        """An uninitialised array of ``rows`` rows for input ``tensor`` of a batch: the
        previous batch's when no array refers to it any more (its reference count shows no
        view: the model and the answers let go of it) and it has room, else a new one, kept
        for the next batch. BYTES buffers are never kept, as they would hold the previous
        batch's objects alive."""
        dtype = _numpy_dtype(tensor.datatype)
        shape = (rows, *tensor.shape[1:])
        if dtype.hasobject:
            return np.empty(shape, dtype)
        key = (tensor.name, dtype, shape[1:])
        spare = self._spare.get(key)
        # Compared with its count when it was new, taken the same way (the interpreter's
        # own references differ between Python versions, not between the two readings).
        if spare is not None and len(spare) >= rows and sys.getrefcount(spare) <= self._alone[key]:
            return spare[:rows]
        if len(self._spare) >= _MAX_SPARE and key not in self._spare:
            self._spare.clear()  # inputs of many shapes: keep the latest only
            self._alone.clear()
        buffer = np.empty(shape, dtype)
        self._spare[key] = buffer
        self._alone[key] = sys.getrefcount(buffer)
        return buffer

    def _fail(
        self,
        placed: list[tuple[_Waiting, int]],
        error: RequestError,
        started: int,
        assembled: int,
        finished: int,
    ) -> None:
        failed = 0
        for waiting, _ in placed:
            if not waiting.future.done():
                # a copy each: one exception raised in many tasks would gather their frames
                waiting.future.set_exception(copy.copy(error))
                failed += 1
        if self._record is not None and failed:
            rows = sum(w.rows for w, _ in placed)
            self._record(rows, failed, assembled - started, finished - assembled, 0, False)


#: Spare batch buffers one model keeps, at most (one per input and row shape in use).
_MAX_SPARE = 16


def _numpy_dtype(datatype: str) -> np.dtype[Any]:
    row = datatypes.get(datatype)
    # BF16 without ml_dtypes: float32, as the decoders give it
    return row.numpy_dtype if row.numpy_dtype is not None else np.dtype(np.float32)


def _assemble(
    live: list[_Waiting], buffers: dict[str, np.ndarray[Any, Any]]
) -> tuple[list[tuple[_Waiting, int]], int, list[tuple[_Waiting, Exception]]]:
    """Write each request's inputs into its rows of ``buffers``, in order: the requests
    placed with their first row, the rows written, and the requests whose rows could not be
    written (each fails alone; the next request writes where it would have)."""
    placed: list[tuple[_Waiting, int]] = []
    failures: list[tuple[_Waiting, Exception]] = []
    at = 0
    for waiting in live:
        end = at + waiting.rows
        try:
            for tensor in waiting.tensors:
                tensor.into(buffers[tensor.name][at:end])
        except Exception as exc:
            failures.append((waiting, exc))
            continue
        placed.append((waiting, at))
        at = end
    return placed, at, failures


def _batch_outputs(model: Model, produced: Any, rows: int) -> dict[str, Any]:
    """What ``predict`` returned for a batch of ``rows``, each output an array (or a
    :class:`Tensor`) whose first dimension is ``rows``; else an :class:`InternalError` naming
    the model and the output."""
    if not isinstance(produced, Mapping):
        raise InternalError(
            f"model '{model.name}' predict returned {type(produced).__name__}, not a dict"
        )
    outputs: dict[str, Any] = {}
    for name, value in produced.items():
        if isinstance(value, Tensor):
            data = value.data
            if data.shape != value.shape:
                data = data.reshape(value.shape)
            value = Tensor(value.name, value.datatype, value.shape, data, value.parameters)
            shape = value.shape
        else:
            value = value if isinstance(value, np.ndarray) else np.asarray(value)
            shape = value.shape
        if not shape or shape[0] != rows:
            got = f"{shape[0]} rows (first dimension)" if shape else "a scalar"
            raise InternalError(
                f"model '{model.name}' returned output '{name}' with {got} for a batch of "
                f"{rows} rows"
            )
        outputs[name] = value
    return outputs


def _rows(value: Any, first: int, count: int) -> Any:
    """Rows ``first`` to ``first + count`` of one output: a view, never a copy."""
    if isinstance(value, Tensor):
        part = value.data[first : first + count]
        return Tensor(value.name, value.datatype, part.shape, part, dict(value.parameters))
    return value[first : first + count]


#: ``model_failure`` became the pipeline's one failure path (one release, with a warning).
__getattr__ = moved(__name__, {"model_failure": "oipcodec.server.inference.failure:failure"})
