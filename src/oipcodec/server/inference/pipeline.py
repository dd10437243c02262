"""The inference step: check a decoded request, run ``predict`` once, check and shape its
outputs (classification, shared memory), and count the request in the statistics.

Every front end calls :meth:`Pipeline.exchange` once per request, and the exchange's
:meth:`~Exchange.run` once; a model with ``dynamic_batching`` runs through its queue
(:mod:`.batching`), which calls back into :func:`call_predict` and :func:`failure`.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from oipcodec.errors import (
    InvalidArgumentError,
    RequestError,
    UnavailableError,
    request_error_for,
)
from oipcodec.server.config import OFF_LOOP_BYTES
from oipcodec.server.inference.batching import Batcher, check_batchable
from oipcodec.server.inference.checks import check_inputs, check_tensors, output_tensors
from oipcodec.server.inference.failure import failure
from oipcodec.server.inference.outputs import OutputPlan
from oipcodec.server.model import ASYNC_PREDICT, Arrays, Model
from oipcodec.server.queue_policy import Overload
from oipcodec.server.regions import Reader
from oipcodec.server.registry import ModelRegistry
from oipcodec.sharedmem import Location
from oipcodec.types import InferRequest, InferResponse, Parameters, Tensor

__all__ = [
    "TRANSPORT_PARAMETERS",
    "Exchange",
    "Pipeline",
    "Result",
    "answer_of",
    "call_predict",
    "timed_predict",
]

log = logging.getLogger("oipcodec.server")

#: Request and output parameters that steer the transport (binary extension), not the model:
#: they are not passed to ``predict`` nor echoed.
TRANSPORT_PARAMETERS = frozenset({"binary_data", "binary_data_output", "binary_data_size"})


@dataclass(slots=True)
class Result:
    """One request's answer and its ``time.perf_counter_ns`` readings."""

    response: InferResponse
    """The answer."""
    checked: int
    """When the request was checked, ready for ``predict``."""
    started: int
    """When ``predict`` started (``checked`` unless it queued: a worker thread, a batch)."""
    finished: int
    """When ``predict`` finished."""


class Pipeline:
    """The inference step over a registry's models, shared by its front ends (:meth:`of`).

    Parameters
    ----------
    registry
        The models; the pipeline watches it (:class:`~oipcodec.server.registry.Watcher`).
    """

    def __init__(self, registry: ModelRegistry) -> None:
        self.registry = registry
        # (name, version) -> the ready model; forgotten whenever the registry changes.
        self._ready: dict[tuple[str, str], Model] = {}
        self._running: dict[int, int] = {}  # requests in flight per model (by id)
        self._drains: dict[int, asyncio.Future[None]] = {}  # the drains waiting for them to end
        self._batchers: dict[int, Batcher] = {}
        self.overload = Overload()  # the server's settings (ServerConfig) replace it
        _PIPELINES[registry] = self
        registry.watchers.append(self)

    @classmethod
    def of(cls, registry: ModelRegistry) -> Pipeline:
        """The pipeline of ``registry`` (made on first use)."""
        return _PIPELINES.get(registry) or cls(registry)

    # ------------------------------------------------------------------ what a front end calls

    def model(self, name: str, version: str | None = None) -> Model:
        """The ready model ``name`` (:meth:`ModelRegistry.get`, kept until the registry changes)."""
        key = (name, version or "")
        model = self._ready.get(key)
        if model is None:
            model = self._ready[key] = self.registry.get(name, version)
        return model

    def queues(self, model: Model) -> bool:
        """Whether requests to ``model`` may queue (its front end then watches for the client)."""
        return model.dynamic_batching is not None

    def exchange(self, path: str, request_bytes: int, model: Model | None = None) -> Exchange:
        """A request received now, the context manager around its decode, run and encode.

        Parameters
        ----------
        path
            The encoding path the statistics count it on (``json``, ``grpc_raw``...:
            :data:`~oipcodec.server.stats.PATHS`).
        request_bytes
            The request body's size.
        model
            The model, when the front end looked it up before decoding.
        """
        return Exchange(self, path, request_bytes, model)

    # ------------------------------------------------------------------ the step

    async def run(self, request: InferRequest, model: Model | None = None) -> Result:
        """Run one decoded request through its model, its inputs checked against the model's
        metadata before ``predict``: the answer holds the requested outputs (all when none are
        requested) and echoes the id; ``predict`` raising is re-raised as a
        :class:`RequestError` whose ``executed`` attribute is True.

        Parameters
        ----------
        request
            The decoded request; ``model_name`` / ``model_version`` pick the model when
            ``model`` is None.
        model
            The model the request names, already looked up.
        """
        name = request.model_name
        if not name:
            raise InvalidArgumentError("the request names no model")
        if model is None:
            model = self.model(name, request.model_version)
        elif self.registry.retired and model in self.registry.retired:
            raise UnavailableError(
                f"Request for unknown model: '{name}' version {model.version} was unloaded "
                "while the request was read"
            )
        batcher = None
        if model.dynamic_batching is not None:
            batcher = self.batcher_of(model, request.inputs)
        else:
            arrays = check_inputs(model, request.inputs)
        parameters = request.parameters
        if not TRANSPORT_PARAMETERS.isdisjoint(parameters):
            parameters = {k: v for k, v in parameters.items() if k not in TRANSPORT_PARAMETERS}
        requested = plan = None
        if request.outputs is not None:
            requested = [o.name for o in request.outputs]
            plan = OutputPlan.of(model, request.outputs, self.registry.shared_memory)
        produced: Any = None
        try:
            if batcher is not None:
                # This request's rows of every output (predict's errors come marked executed)
                produced, checked, started, finished = await self.queued(
                    batcher, request.inputs, parameters, requested
                )
            else:
                checked = time.perf_counter_ns()
                started, produced, finished = await self.predicted(
                    model, arrays, parameters, checked
                )
            response = answer_of(model, name, produced, requested, plan, request.inputs, request.id)
            return Result(response, checked, started, finished)
        except RequestError as exc:
            # Its own outputs failed their checks: its batch did run (as the batcher counted).
            if batcher is not None and produced is not None:
                exc.executed = True
            raise

    def batcher_of(self, model: Model, tensors: Sequence[Tensor]) -> Batcher:
        """The queue of ``model`` (which batches) for a request of these decoded inputs,
        once they pass the checks of a request that joins a batch."""
        check_batchable(model, tensors)
        check_tensors(model, tensors)
        return self._batcher(model)

    async def predicted(
        self, model: Model, arrays: Arrays, parameters: Parameters, checked: int
    ) -> tuple[int, Any, int]:
        """One checked request to ``model`` (which does not batch) through
        :func:`call_predict`, in flight until ``predict`` returned (an unload waits for it).

        Parameters
        ----------
        model
            The model.
        arrays
            Its inputs by name, checked.
        parameters
            Its parameters, without the transport ones.
        checked
            When it was checked.
        """
        key = self._admitted(model)
        try:
            return await call_predict(model, arrays, parameters, checked)
        finally:
            self._ended(key)

    async def queued(
        self,
        batcher: Batcher,
        tensors: Sequence[Tensor],
        parameters: Parameters,
        requested: Sequence[str] | None,
    ) -> tuple[Any, int, int, int]:
        """One checked request through ``batcher`` (:meth:`batcher_of`), in flight until it
        is answered: its rows of every output as ``predict`` returned them, when it was
        checked, when its batch started and when ``predict`` finished.

        Parameters
        ----------
        batcher
            The model's queue.
        tensors
            The request's inputs.
        parameters
            Its parameters, without the transport ones.
        requested
            The names of the outputs asked for; ``None``: all of them.
        """
        checked = time.perf_counter_ns()
        key = self._admitted(batcher.model)
        try:
            produced, started, finished = await batcher.submit(tensors, parameters, requested)
        finally:
            self._ended(key)
        return produced, checked, started, finished

    # ------------------------------------------------------------------ queues and drains

    def _batcher(self, model: Model) -> Batcher:
        """The queue of a model that batches (made on its first request)."""
        batcher = self._batchers.get(id(model))
        if batcher is None:
            # Only a ready model gets a queue: one unloading has closed its own already.
            if not self.registry.serves(model):
                raise UnavailableError(
                    f"Request for unknown model: '{model.name}' version {model.version} is "
                    "being unloaded"
                )
            statistics = self.registry.statistics
            record = None if statistics is None else statistics.of(model).batch
            batcher = Batcher(model, record, call_predict, failure, self.overload)
            self._batchers[id(model)] = batcher
        return batcher

    def _admitted(self, model: Model) -> int:
        """``model``'s key (its id), one more request in flight on it from now to its answer
        (an unload of the model waits for it: :meth:`drain`), once the overload limit admits
        it."""
        key = id(model)
        if model.max_queued_requests is not None or self.overload.max_queued_requests:
            self.overload.admit(model, self._running.get(key, 0))  # a model that does not batch
        self._running[key] = self._running.get(key, 0) + 1
        return key

    def _ended(self, key: int) -> None:
        """One request on the model of id ``key`` is over; the last wakes its drain."""
        left = self._running[key] - 1
        if left:
            self._running[key] = left
            return
        del self._running[key]
        if self._drains:
            waiter = self._drains.get(key)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    # ------------------------------------------------- told by the registry (Watcher's methods)

    def changed(self) -> None:
        self._ready.clear()

    async def drain(self, model: Model, timeout: float) -> int:  # queued requests count too
        key = id(model)
        if not self._running.get(key):
            return 0
        waiter = self._drains.get(key)
        if waiter is None:
            waiter = self._drains[key] = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
            pass
        finally:
            self._drains.pop(key, None)
        return self._running.get(key, 0)

    def retire(self, model: Model, reason: str) -> None:  # its queue refuses what waits
        batcher = self._batchers.pop(id(model), None)
        if batcher is not None:
            batcher.close(reason)


#: The pipeline of each registry.
_PIPELINES: weakref.WeakKeyDictionary[ModelRegistry, Pipeline] = weakref.WeakKeyDictionary()


class Exchange:
    """One inference request of a front end, counted once in the statistics: answered when
    the ``with`` block ends after :meth:`run` and :meth:`sent`, refused when it raises.

    Parameters
    ----------
    pipeline
        The pipeline that makes it (:meth:`Pipeline.exchange`).
    path
        The encoding path the statistics count it on.
    request_bytes
        The request body's size.
    model
        The model, when the front end looked it up before decoding.
    """

    __slots__ = (
        "_on_loop",
        "_pipeline",
        "_reader",
        "inputs",
        "model",
        "path",
        "received",
        "request_bytes",
        "response_bytes",
        "result",
    )

    def __init__(
        self, pipeline: Pipeline, path: str, request_bytes: int, model: Model | None
    ) -> None:
        self._pipeline = pipeline
        self.path = path
        self.request_bytes = request_bytes
        self.model = model
        self.received = time.perf_counter_ns()
        self.result: Result | None = None
        self.inputs: Sequence[Tensor] = ()
        self.response_bytes = 0
        self._reader: Reader | None = None
        self._on_loop = True

    def shared_memory(self, where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
        """The request's :data:`~oipcodec.sharedmem.Resolver`: a ``Reader`` made on its first
        tensor in shared memory, whose copies count against the budget until the exchange
        ends (on the loop a large one raises ``CopyOffLoop``: see :meth:`off_loop`)."""
        if self._reader is None:
            copy_below = OFF_LOOP_BYTES if self._on_loop else None
            self._reader = Reader(self._pipeline.registry.shared_memory, copy_below)
        return self._reader(where, tensor, kind, writable)

    def off_loop(self) -> None:
        """The decode runs in a worker thread from now on (copies of any size): after a
        :class:`~oipcodec.server.regions.CopyOffLoop`, or before a large decode."""
        self._on_loop = False
        if self._reader is not None:
            self._reader.off_loop()

    async def run(self, request: InferRequest, model: Model | None = None) -> InferResponse:
        """The pipeline's answer to ``request`` (:meth:`Pipeline.run`); ``model``: the model
        it names, already looked up (else the exchange's, else looked up)."""
        if model is not None:
            self.model = model
        elif self.model is None and request.model_name:  # else run refuses it
            self.model = self._pipeline.model(request.model_name, request.model_version)
        self.inputs = request.inputs
        self.result = await self._pipeline.run(request, self.model)
        return self.result.response

    def sent(self, response_bytes: int) -> None:
        """The answer is encoded: ``response_bytes`` long."""
        self.response_bytes = response_bytes

    def __enter__(self) -> Exchange:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._reader is not None:  # on every path: its copies leave the budget
            self._reader.release()
        stats = self._pipeline.registry.statistics  # the registry's, whenever it is set
        if stats is None:
            return
        if exc is not None:
            if isinstance(exc, Exception):  # not when cancelled: no answer of a request
                stats.refused(self.model, self.path, self.received, exc, self.request_bytes)
            return
        result = self.result
        if result is not None:  # else no inference ran (GraphPipe's metadata request)
            assert self.model is not None
            timings = (result.checked, result.started, result.finished)
            stats.answered(
                self.model,
                self.path,
                self.inputs,
                self.received,
                timings,
                self.request_bytes,
                self.response_bytes,
            )


# ---------------------------------------------------------------------- predict


async def call_predict(
    model: Model, arrays: Arrays, parameters: Parameters, checked: int | None = None
) -> tuple[int, Any, int]:
    """Call ``model.predict`` for one request or one dynamic batch: when it started
    (``checked``, or when a worker thread took the call), what it returned, when it finished.
    Its errors are raised marked ``executed`` (:func:`failure`).

    Parameters
    ----------
    model
        The model.
    arrays
        Its inputs by name.
    parameters
        The request's parameters, without the transport ones.
    checked
        When the request was checked; None for a batch.
    """
    try:
        predict = model.predict  # Model.is_async's answer is kept per predict method
        is_async = ASYNC_PREDICT.get(getattr(predict, "__func__", timed_predict))
        if is_async is None:  # not asked yet, or predict is not a method
            is_async = model.is_async
        # A batch's plain predict runs in a thread: on the loop no request could join its queue.
        if not is_async and (checked is None or model.run_in_thread):
            loop = asyncio.get_running_loop()
            started, produced = await loop.run_in_executor(
                None, timed_predict, model, arrays, parameters
            )
        else:
            started, produced = timed_predict(model, arrays, parameters)
            if checked is not None:
                started = checked
            if is_async:
                produced = await produced
    except Exception as exc:
        raise failure(model, exc) from None
    return started, produced, time.perf_counter_ns()


def answer_of(
    model: Model,
    name: str,
    produced: Any,
    requested: Sequence[str] | None,
    plan: OutputPlan | None,
    inputs: Sequence[Tensor],
    request_id: str | None,
) -> InferResponse:
    """The answer to a request to model ``name`` from what ``predict`` returned: its outputs
    checked (:func:`output_tensors`; ``inputs``: the request's), ``plan`` applied, the
    request's id echoed."""
    if not hasattr(produced, "items"):
        kind = type(produced).__name__
        raise request_error_for(TypeError(f"model '{name}' predict returned {kind}, not a dict"))
    outputs = output_tensors(model, produced, requested, inputs)
    if plan is not None:
        outputs = plan.apply(model, outputs)
    return InferResponse(name, outputs, id=request_id, model_version=model.version)


def timed_predict(model: Model, arrays: Arrays, parameters: Parameters) -> tuple[int, Any]:
    """When ``predict`` was called, and what it returned: the server's one call of it."""
    return time.perf_counter_ns(), model.predict(arrays, parameters)
