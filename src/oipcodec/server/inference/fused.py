"""The inference step fused with the REST codec, for the small requests the native HTTP/1.1
front end answers (JSON, or with the binary data extension): a body read by one kernel call
(``decode_inputs``), ``predict`` called, the answer written by another (``encode_outputs``),
and the statistics counted in place.

A :class:`Fused` is made per model (:meth:`Fused.of`, None for a decoupled one).
Its call gives None before anything ran or was counted for a body the kernel does not take,
so the caller decodes it with the general codec, which answers as it always does, errors
included. After ``predict`` it never hands back: what the answer kernel does not write (an
output to convert or refuse, a large answer) and an exception of ``predict`` are finished by
the general step's own code (:func:`~oipcodec.server.inference.pipeline.answer_of`, the
:class:`~oipcodec.server.inference.pipeline.Exchange`), in a coroutine. A ``predict`` that
is awaited (async, in a worker thread, a dynamic batch) is reached through the general
step's own calls (:meth:`Pipeline.predicted`, :meth:`Pipeline.queued`), in one coroutine.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from oipcodec import datatypes, kernels
from oipcodec.errors import RequestError
from oipcodec.limits import Limits
from oipcodec.server.config import OFF_LOOP_BYTES
from oipcodec.server.inference.failure import failure
from oipcodec.server.inference.pipeline import Pipeline, Result, answer_of, timed_predict
from oipcodec.server.model import Model
from oipcodec.server.stats import ModelStats, Statistics
from oipcodec.types import InferResponse, Tensor

__all__ = ["Encoder", "Fused", "Watch", "Written"]

#: How the front end encodes an answer the kernel did not write (with the general encoder, in
#: a codec thread when large; the outputs asked in binary): to its status, body and headers.
Answer = tuple[int, Any, list[tuple[bytes, bytes]]]
Encoder = Callable[[InferResponse, "bool | set[str]"], Awaitable[Answer]]
#: An answer the kernel wrote: its JSON body, or ``(body, header_length)`` in binary.
Written = bytes | tuple[bytes, int]
#: What a request waiting in a model's queue waits through (the front end's: it ends the wait,
#: as an error of the request, when the client goes away).
Watch = Callable[[Coroutine[Any, Any, Any]], Coroutine[Any, Any, Any]]

_now = time.perf_counter_ns


def _plan(model: Model, limits: Limits) -> kernels.FusedPlan | None:
    """The kernels' plan for ``model``, or None when it is decoupled or a declared tensor is
    not of a fixed width."""
    if model.decoupled:
        return None
    inputs = None if model.inputs is None else [(s.name, s.datatype, s.shape) for s in model.inputs]
    outputs = None
    if model.outputs is not None:
        outputs = [(s.name, s.datatype, s.shape, s.optional) for s in model.outputs]
    # The general path encodes an answer of this many bytes of arrays or more in a thread.
    return kernels.fused_plan(
        model.name, model.version, inputs, outputs, limits, (OFF_LOOP_BYTES - 1) // 2
    )


def _rows(arrays: dict[str, Any], most: int) -> tuple[tuple[Any, ...], int] | None:
    """The first input (or none) and the request's batch size (-1: its inputs have no
    dimension), or None when the inputs differ in batch size or it is over ``most``."""
    rows = {array.shape[0] for array in arrays.values() if array.ndim}
    if len(rows) > 1 or (rows and max(rows) > most):
        return None
    first = next(iter(arrays.values()), None)
    if first is None:
        return (), -1
    return (first,), first.shape[0] if first.ndim else -1


def _outputs_of(produced: Any, rows: int) -> bool:
    """Whether every output ``predict`` returned has the request's ``rows``."""
    return type(produced) is dict and all(
        getattr(value, "ndim", 0) and value.shape[0] == rows for value in produced.values()
    )


class Fused:
    """One model's fused inference (see the module).

    Parameters
    ----------
    pipeline
        The pipeline the model is served by (its registry's statistics, its overload limit).
    model
        The model.
    plan
        Its plan (:meth:`of` makes both).
    encode
        The front end's general encoder, for the answers the kernel does not write.
    """

    __slots__ = ("_counters", "_encode", "_pipeline", "_plan", "_waits", "model")

    def __init__(
        self, pipeline: Pipeline, model: Model, plan: kernels.FusedPlan, encode: Encoder
    ) -> None:
        self._pipeline = pipeline
        self.model = model
        self._plan = plan
        self._encode = encode
        # Resolved once per Statistics: its slots, the model's block, the paths' blocks.
        self._counters: tuple[Statistics, ModelStats, memoryview, int, dict[str, int]] | None = None
        #: Its ``predict`` is awaited (async, or in a worker thread): the request's rest is a
        #: coroutine, as it is for a model that batches.
        self._waits = model.is_async or model.run_in_thread

    @classmethod
    def of(cls, pipeline: Pipeline, model: Model, limits: Limits, encode: Encoder) -> Fused | None:
        """``model``'s fused inference, or None when the model is not one it takes."""
        plan = _plan(model, limits)
        return None if plan is None else cls(pipeline, model, plan, encode)

    def __call__(
        self, body: Any, header_length: int = -1, watch: Watch | None = None
    ) -> Written | Coroutine[Any, Any, Answer | Written] | None:
        """The answer to the request ``body`` (counted): its JSON body, or ``(body,
        header_length)`` when outputs are sent in binary; or None (nothing done); or a
        coroutine that finishes it with the general step's code (its answer, or its error
        raised: counted either way), as it always is for a model that batches.
        ``header_length``: Inference-Header-Content-Length, -1 when absent (a binary
        request's ``body`` is the server's own copy: its inputs are views of it); ``watch``:
        what a request waiting in a model's queue waits through (the front end's, which ends
        the wait when the client goes away)."""
        received = _now()
        decoded = kernels.decode_inputs(body, self._plan, header_length)
        if decoded is None:
            return None
        arrays, request_id, requested, binary = decoded
        path = "json" if header_length < 0 else "binary"
        model = self.model
        if model.dynamic_batching is not None:
            # Its rows are copied into the batch: the batcher's own checks and copy.
            tensors = [
                Tensor.checked(name, datatypes.from_numpy(array.dtype), array.shape, array, {})
                for name, array in arrays.items()
            ]
            request = (path, len(body), received, (), request_id, requested, binary)
            return self._waited(request, tensors, -1, watch)
        first: tuple[Any, ...] = ()  # the first input, which the statistics read rows from
        rows = -1
        if model.max_batch_size > 0:  # one batch size, within the model's (checks.py)
            batch = _rows(arrays, model.max_batch_size)
            if batch is None:
                return None
            first, rows = batch
        if header_length > 0 and model.writable_inputs:  # (checks.check_inputs' copies)
            arrays = {n: a if a.flags.writeable else a.copy() for n, a in arrays.items()}
        finish = (path, len(body), received, first, request_id, requested, binary)
        if self._waits:
            return self._waited(finish, arrays, rows, None)
        # Not admitted against the overload limit (max_queued_requests): while this predict
        # runs on the loop no other request of the model is in flight, so a limit (at least 1)
        # always admits it, as the general step's admission does (Pipeline.predicted).
        try:
            checked, produced = timed_predict(model, arrays, {})
        except Exception as exc:
            return self._finish(finish, 0, 0, None, exc)
        finished = _now()
        answer = None
        chosen = _chosen(produced, requested)
        if chosen is not None and (rows < 0 or _outputs_of(chosen, rows)):
            answer = kernels.encode_outputs(self._plan, request_id, chosen, binary)
        if answer is None:
            return self._finish(finish, checked, finished, produced)
        statistics = self._pipeline.registry.statistics
        if statistics is not None:
            counters = self._counters
            if counters is None or counters[0] is not statistics:
                counters = self._counters = _counters(statistics, model)
            _, model_stats, slots, base, paths = counters
            size, block = model_stats.batch_of(first) if model_stats.batching else (1, -1)
            kernels.count_success(
                slots,
                base,
                paths[path],
                block,
                size,
                received,
                checked,
                checked,
                finished,
                _now(),
                len(body),
                len(answer if isinstance(answer, bytes) else answer[0]),
            )
        return answer

    async def _waited(
        self,
        request: tuple[str, int, int, tuple[Any, ...], str | None, list[str] | None, Any],
        inputs: Any,
        rows: int,
        watch: Watch | None,
    ) -> Answer | Written:
        """A ``request`` (as :meth:`_finish` takes it) whose ``predict`` is awaited, as the
        general step runs it: ``inputs`` (its tensors) through the queue of a model that
        batches (:meth:`Pipeline.queued`, waited for through ``watch``), else ``inputs`` (its
        arrays) to ``predict`` (:meth:`Pipeline.predicted`; ``rows``: its batch size, -1
        for none); its answer written by the kernel when it can be."""
        path, size, received, first, request_id, requested, binary = request
        pipeline = self._pipeline
        model = self.model
        batched = model.dynamic_batching is not None
        if batched:
            first = inputs  # (the statistics read the rows of a tensor as of an array)
        with pipeline.exchange(path, size, model) as exchange:
            exchange.received = received
            exchange.inputs = first
            if batched:
                wait = pipeline.queued(pipeline.batcher_of(model, inputs), inputs, {}, requested)
                produced, checked, started, finished = await (
                    wait if watch is None else watch(wait)
                )
            else:
                checked = _now()
                started, produced, finished = await pipeline.predicted(model, inputs, {}, checked)
            chosen = _chosen(produced, requested)
            answer = None
            if chosen is not None and (rows < 0 or _outputs_of(chosen, rows)):
                answer = kernels.encode_outputs(self._plan, request_id, chosen, binary)
            if answer is None:  # the general step's end
                try:
                    response = answer_of(
                        model, model.name, produced, requested, None, first, request_id
                    )
                except RequestError as exc:
                    if batched:  # its batch did run (as Pipeline.run marks it)
                        exc.executed = True
                    raise
                exchange.result = Result(response, checked, started, finished)
                general = await self._encode(response, binary)
                exchange.sent(len(general[1]))
                return general
        statistics = pipeline.registry.statistics  # (the exchange counted nothing)
        if statistics is not None:
            written = len(answer if isinstance(answer, bytes) else answer[0])
            timings = (checked, started, finished)
            statistics.answered(model, path, first, received, timings, size, written)
        return answer

    async def _finish(
        self,
        request: tuple[str, int, int, tuple[Any, ...], str | None, list[str] | None, Any],
        checked: int,
        finished: int,
        produced: Any,
        error: Exception | None = None,
    ) -> Answer:
        """The general step's end of a ``request`` (its path, size, arrival, first input, id,
        requested outputs and those asked in binary) whose ``predict`` returned ``produced``
        or raised ``error``."""
        path, size, received, inputs, request_id, requested, binary = request
        with self._pipeline.exchange(path, size, self.model) as exchange:
            exchange.received = received
            exchange.inputs = inputs
            if error is not None:
                raise failure(self.model, error) from None
            response = answer_of(
                self.model, self.model.name, produced, requested, None, inputs, request_id
            )
            exchange.result = Result(response, checked, checked, finished)
            answer = await self._encode(response, binary)
            exchange.sent(len(answer[1]))
        return answer


def _counters(
    statistics: Statistics, model: Model
) -> tuple[Statistics, ModelStats, memoryview, int, dict[str, int]]:
    """What the call counts ``model``'s answers with in ``statistics``."""
    model_stats = statistics.of(model)
    paths = {name: stats.base for name, stats in statistics.paths.items()}
    return statistics, model_stats, statistics.slots, model_stats.base, paths


def _chosen(produced: Any, requested: list[str] | None) -> Any:
    """What ``predict`` returned, cut to the ``requested`` outputs in their order (None when
    one is missing: the general step names it)."""
    if requested is None:
        return produced
    if type(produced) is not dict:
        return None
    try:
        return {name: produced[name] for name in requested}
    except KeyError:
        return None
