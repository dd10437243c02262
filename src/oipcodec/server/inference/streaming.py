"""The streaming run: one request, any number of responses (Triton's decoupled models).

A decoupled model's ``predict`` is a generator (sync or async) that yields one mapping of
outputs per response; :class:`Responses` pulls them one at a time, each only when the front
end has written the previous (a slow reader pauses the model: nothing queues), and closes
the generator when the client goes away (the model sees ``GeneratorExit`` at its ``yield``,
or ``CancelledError`` at an ``await``; its ``finally`` runs either way). A model whose
``predict`` returns a mapping answers once, as a stream of one final response.

No response sender object is offered (Triton's Python backend has one): a generator gives
the pause and the cancellation by itself, where a sender would need a queue of its own with
a bound and a separate cancelled flag (docs/streaming.md#from-tritons-response-sender).

Statistics: a stream counts as one request, as Triton counts a decoupled request (one
``success`` in the inference statistics when its last response is written, ``compute_infer``
from the first pull to the end of the generator); Triton's per-response ``response_stats``
are not kept.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Iterator
from typing import Any

from oipcodec.errors import InvalidArgumentError, UnavailableError, UnsupportedError
from oipcodec.server.inference.checks import check_inputs, output_tensors
from oipcodec.server.inference.failure import failure
from oipcodec.server.inference.outputs import OutputPlan
from oipcodec.server.inference.pipeline import TRANSPORT_PARAMETERS, Exchange, Result, call_predict
from oipcodec.server.model import Model
from oipcodec.types import InferRequest, InferResponse

__all__ = ["FINAL_PARAMETER", "Responses", "decoupled_refused"]

#: The response parameter that marks a stream's last response for its request (Triton's).
FINAL_PARAMETER = "triton_final_response"

_DONE = object()


def decoupled_refused(where: str) -> UnsupportedError:
    """The refusal of a decoupled model on a unary endpoint, in Triton's words (``where``:
    ``ModelInfer RPC`` or ``HTTP end point``)."""
    return UnsupportedError(f"{where} doesn't support models with decoupled transaction policy")


class Responses:
    """The responses of one request, pulled one at a time with :meth:`next`; always end it
    with :meth:`aclose` (``async with`` does).

    Parameters
    ----------
    exchange
        The request's exchange (:meth:`Pipeline.exchange`): it counts the stream once, when
        its ``with`` block ends.
    request
        The decoded request.
    model
        The model it names, already looked up (else looked up by name).
    """

    __slots__ = (
        "_checked",
        "_exchange",
        "_gen",
        "_key",
        "_last",
        "_model",
        "_pipeline",
        "_plan",
        "_request",
        "_requested",
        "_started",
        "_step",
        "_thread",
        "count",
        "single",
    )

    def __init__(self, exchange: Exchange, request: InferRequest, model: Model | None) -> None:
        pipeline = exchange._pipeline
        name = request.model_name
        if not name:
            raise InvalidArgumentError("the request names no model")
        if model is None:
            model = exchange.model or pipeline.model(name, request.model_version)
        if pipeline.registry.retired and model in pipeline.registry.retired:
            raise UnavailableError(
                f"Request for unknown model: '{name}' version {model.version} was unloaded "
                "while the request was read"
            )
        exchange.model = model
        exchange.inputs = request.inputs
        self._exchange = exchange
        self._pipeline = pipeline
        self._model = model
        self._request = request
        self._requested = None if request.outputs is None else [o.name for o in request.outputs]
        self._plan = (
            None
            if request.outputs is None
            else OutputPlan.of(model, request.outputs, pipeline.registry.shared_memory)
        )
        self._gen: Any = None
        self._thread = False
        # A step of a plain generator in a worker thread, while it runs (it cannot be
        # interrupted: the generator is closed when it ends).
        self._step: asyncio.Future[Any] | None = None
        self._key = 0
        self._checked = self._started = 0
        self._last: InferResponse | None = None
        #: The responses pulled so far.
        self.count = 0
        #: ``predict`` returned one mapping: its response is the request's last (Triton marks
        #: it final), with no empty final response after it.
        self.single = False

    async def __aenter__(self) -> Responses:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _open(self) -> None:
        """Check the inputs and call ``predict`` (in flight from here: an unload drains it)."""
        model, request = self._model, self._request
        arrays = check_inputs(model, request.inputs)
        parameters = request.parameters
        if not TRANSPORT_PARAMETERS.isdisjoint(parameters):
            parameters = {k: v for k, v in parameters.items() if k not in TRANSPORT_PARAMETERS}
        self._checked = time.perf_counter_ns()
        self._key = id(model)
        running = self._pipeline._running
        running[self._key] = running.get(self._key, 0) + 1
        self._started, produced, _ = await call_predict(model, arrays, parameters, self._checked)
        if inspect.isasyncgen(produced) or isinstance(produced, Iterator):
            self._gen = produced
            self._thread = not inspect.isasyncgen(produced) and model.run_in_thread
        else:  # one answer: a stream of one
            self._gen = iter((produced,))
            self.single = True

    async def next(self) -> InferResponse | None:
        """The next response, or None when the model has no more; the model's error is
        raised as :func:`~oipcodec.server.inference.failure.failure` makes it."""
        if self._gen is None:
            if self.count or self._checked:
                raise RuntimeError("the responses were closed")
            await self._open()
        gen = self._gen
        try:
            if inspect.isasyncgen(gen):
                produced = await gen.__anext__()
            elif self._thread:
                loop = asyncio.get_running_loop()
                self._step = loop.run_in_executor(None, next, gen, _DONE)
                produced = await asyncio.shield(self._step)  # a cancel leaves it running
                self._step = None
            else:
                produced = next(gen, _DONE)
        except StopAsyncIteration:
            produced = _DONE
        except Exception as exc:
            raise failure(self._model, exc) from None
        if produced is _DONE:
            self._finish()
            return None
        return self._response(produced)

    def _response(self, produced: Any) -> InferResponse:
        model, request = self._model, self._request
        if not hasattr(produced, "items"):
            raise failure(
                model,
                TypeError(
                    f"model '{model.name}' predict yielded {type(produced).__name__}, not a dict"
                ),
            )
        outputs = output_tensors(model, produced, self._requested, request.inputs)
        if self._plan is not None:
            outputs = self._plan.apply(model, outputs)
        self.count += 1
        self._last = InferResponse(model.name, outputs, id=request.id, model_version=model.version)
        return self._last

    def empty_final(self) -> InferResponse:
        """The empty response that only says the request's stream is over (Triton's
        ``enable_empty_final_response``): the request id and the model's name, no version
        (as the real Triton server sends it, tests/compat/test_compat_triton_streaming.py)."""
        return InferResponse(
            self._model.name, [], id=self._request.id, parameters={FINAL_PARAMETER: True}
        )

    def _finish(self) -> None:
        """The generator ended: the exchange counts one answered request."""
        if self._exchange.result is None:
            last = self._last or self.empty_final()
            self._exchange.result = Result(
                last, self._checked, self._started, time.perf_counter_ns()
            )

    async def aclose(self) -> None:
        """Close the model's generator (it sees ``GeneratorExit``) and end the request; a
        step running in a worker thread is let finish first."""
        gen, self._gen = self._gen, None
        key, self._key = self._key, 0
        step, self._step = self._step, None
        if step is not None and not step.done():
            step.add_done_callback(lambda done: self._close(gen, key, done))
        else:
            if inspect.isasyncgen(gen):
                try:
                    await gen.aclose()
                except Exception as exc:
                    failure(self._model, exc)  # logged; the client is gone or answered
            self._close(gen, key)

    def _close(self, gen: Any, key: int, step: asyncio.Future[Any] | None = None) -> None:
        """Close a plain generator, and leave the model's requests in flight (after its
        ``step`` in a worker thread, whose error is read here: no one else awaits it)."""
        if step is not None and not step.cancelled():
            step.exception()
        try:
            if inspect.isgenerator(gen):
                gen.close()
        except Exception as exc:
            failure(self._model, exc)  # logged; the client is gone or already answered
        finally:
            if key:
                self._pipeline._ended(key)
