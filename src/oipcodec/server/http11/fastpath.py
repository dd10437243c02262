"""What the native HTTP/1.1 front end answers without the ASGI cycle: the Python half.

The native protocol (:mod:`oipcodec.server.http11.native`) matches a request's line
(``METHOD SP TARGET``, the bytes as sent) against :attr:`FastPath.routes`: a :data:`Probe` is
answered with its bytes and no Python call (health, readiness, server and model metadata); a
:class:`Slot` runs one inference with :meth:`Slot.infer`: a small JSON one by the fused
inference (:mod:`oipcodec.server.inference.fused`) when its model takes it, else the very code
the Python path runs (``RestApp._exchange``), so the answer and the statistics are the same.
Anything else (another route, a query string, an unusual header, shared memory) goes to the
Python path on the same connection.

An answer here is ``(status, headers, body)``: ``headers`` the ``name: value\\r\\n`` lines the
Python protocol writes after the server's default headers (``date``), ``content-length``
included, in the same order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from oipcodec.errors import UnavailableError
from oipcodec.server.config import OFF_LOOP_BYTES
from oipcodec.server.frontends._asgi import (
    BINARY,
    CLIENT_GONE,
    JSON,
    Answer,
    failed,
    framed,
)
from oipcodec.server.frontends.rest_frontend import RestApp
from oipcodec.server.inference.fused import Fused, Written
from oipcodec.server.model import Model
from oipcodec.server.resumed import Resumed
from oipcodec.sharedmem import Location
from oipcodec.types import InferResponse

__all__ = ["FastPath", "Probe", "Slot", "WireAnswer", "fast_path_of", "wire"]

#: An answer as the native protocol writes it: status, header lines, body.
WireAnswer = tuple[int, bytes, bytes]
#: A route answered from these bytes alone (no Python call).
Probe = WireAnswer

#: The bytes a model name or version may hold to get routes here: unreserved characters
#: (RFC 3986), which a client never escapes; any other name is routed by the Python path.
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
#: The server's probes: GET on these paths.
_SERVER_PROBES = ("/v2", "/v2/health/live", "/v2/health/ready")
_JSON_HEADERS: dict[bytes, bytes] = {}
#: The header line before ``content-length`` of a JSON answer, as :func:`wire` writes it.
_JSON_TYPE = b"content-type: %s\r\n" % JSON
_HEADER_LENGTH = b"inference-header-content-length"
#: The header line before ``inference-header-content-length`` of a binary answer.
_BINARY_TYPE = b"content-type: %s\r\n" % BINARY


def wire(answer: Answer) -> WireAnswer:
    """``answer`` framed as the Python protocol frames it (``Cycle._start_answer``): header
    names in lower case, ``content-length`` last, the body joined."""
    status, parts, headers = framed(answer)
    lines = b"".join([b"%s: %s\r\n" % (name.lower(), value) for name, value in headers])
    return status, lines, b"".join(parts)


class _InSharedMemory(BaseException):
    """A tensor of the request lives in shared memory: the request goes to the Python path.
    Not an Exception, so the exchange it leaves does not count it as refused."""


def _in_shared_memory(where: Location, tensor: str, kind: str, writable: bool) -> memoryview:
    """The fast path's shared-memory resolver: hands the request over before any copy."""
    raise _InSharedMemory


def _queues_or_awaits(model: Model) -> bool:
    """Whether running ``model`` waits on a future (``async def predict``, a worker thread, a
    dynamic batch): its requests become coroutines run as tasks; any other model's run ends
    in the call."""
    return model.dynamic_batching is not None or model.run_in_thread or model.is_async


class Slot:
    """The inference route of one model name (and version, when the path gives one)."""

    __slots__ = ("_app", "_awaits", "_fused", "_model", "_queues", "name", "path", "version")

    def __init__(self, app: RestApp, name: str, version: str | None) -> None:
        self._app = app
        self.name = name
        self.version = version
        #: The path as the Python path logs it.
        self.path = f"/v2/models/{name}" + (f"/versions/{version}" if version else "") + "/infer"
        self._model: Model | None = None
        self._awaits = self._queues = False
        self._fused: Fused | None = None

    def infer(
        self, body: Any, header_length: int
    ) -> WireAnswer | Coroutine[Any, Any, WireAnswer] | asyncio.Task[WireAnswer] | None:
        """Answer one ``POST .../infer``, or None to hand it to the Python path (nothing was
        counted then); when the answer waits on a future, a coroutine (a wait in a model's
        queue: run it as a task, cancelled if the client goes away) or a task (left to
        finish, whatever the client does).

        Parameters
        ----------
        body
            The request body (exactly Content-Length bytes, a view of the
            connection's read buffer, released after the call: copied here, not kept).
        header_length
            ``Inference-Header-Content-Length``, or -1 when absent.
        """
        app = self._app
        size = len(body)
        if size >= OFF_LOOP_BYTES or size > app.limits.max_body_bytes:
            return None  # decoded in a codec thread, or answered 413: the Python path's work
        try:
            model = app.pipeline.model(self.name, self.version)
        except Exception as exc:
            return wire(failed(exc, "POST", self.path))
        if model is not self._model:
            self._model, self._awaits = model, _queues_or_awaits(model)
            self._queues = app.pipeline.queues(model)
            self._fused = Fused.of(app.pipeline, model, app.limits, self._encode)
        if header_length > 0:
            # The body copied, as the Python protocol hands over a bytearray of its own:
            # binary inputs are views of it, which a model may keep past the call, while the
            # native side reuses its buffer at once
            # (docs/measurements.md#the-native-front-ends-python-half).
            body = bytearray(body)
        if header_length != 0 and self._fused is not None:
            # A small request in two kernel calls around predict (inference/fused.py).
            fused = self._fused(body, header_length, _unless_gone)
            if isinstance(fused, (bytes, tuple)):
                return _written(fused)
            if fused is not None:
                return _answered(fused, self.path) if self._queues else self._run(fused)
        if header_length <= 0:  # (a binary body was copied above)
            body = bytearray(body)
        headers = _JSON_HEADERS if header_length < 0 else {_HEADER_LENGTH: b"%d" % header_length}
        if self._awaits:
            if not self._queues:
                work = app._exchange(model, headers, body, self.name, self.version, False, None)
                return _to_the_end(work, self.path)
            return _queued(app, model, headers, body, self.name, self.version, self.path)
        return self._run(
            app._exchange(
                model, headers, body, self.name, self.version, False, None, _in_shared_memory
            )
        )

    def _run(
        self, work: Coroutine[Any, Any, Answer | Written]
    ) -> WireAnswer | asyncio.Task[WireAnswer] | None:
        """``work``'s answer if it ends without waiting, else its rest as a coroutine."""
        try:
            waiting = work.send(None)
        except StopIteration as done:
            return _written(done.value)
        except _InSharedMemory:
            return None
        except Exception as exc:
            return wire(failed(exc, "POST", self.path))
        # A large answer is encoded in a codec thread, an awaited predict waits: the rest
        # runs as a task.
        return _to_the_end(Resumed(work, waiting), self.path)

    def _encode(
        self, response: InferResponse, binary: bool | set[str]
    ) -> Coroutine[Any, Any, Answer]:
        """The general encoder of the fused inference's answers (no compression)."""
        return self._app._encoded(response, binary, None, False)


def _written(answer: Answer | Written) -> WireAnswer:
    """``answer`` framed as :func:`wire` frames the general encoder's: as it is when the fused
    inference's kernel wrote it (JSON, or binary with its header length), else by ``wire``."""
    if isinstance(answer, bytes):
        return 200, _JSON_TYPE + b"content-length: %d\r\n" % len(answer), answer
    if len(answer) == 2:
        body, head = answer
        lines = _BINARY_TYPE + b"%s: %d\r\ncontent-length: %d\r\n"
        return 200, lines % (_HEADER_LENGTH, head, len(body)), body
    return wire(answer)


async def _answered(work: Any, path: str) -> WireAnswer:
    """The answer of an inference that waits on a future, or its error answer (a request
    whose client went away: logged as that, then its task ends cancelled)."""
    try:
        return _written(await work)
    except Exception as exc:
        answer = wire(failed(exc, "POST", path))
        if isinstance(exc, _Gone):
            raise asyncio.CancelledError from None
        return answer


def _to_the_end(work: Any, path: str) -> asyncio.Task[WireAnswer]:
    """:func:`_answered` as a task of its own, which the native protocol leaves to finish when
    the client goes away (it cancels only the coroutines it runs itself: a wait in a queue,
    :func:`_queued`, :func:`_unless_gone`): the request is counted answered, as the Python
    protocol lets the app finish."""
    return asyncio.get_running_loop().create_task(_answered(work, path))


class _Gone(UnavailableError):
    """The error of a fused request whose task was cancelled while it waited in a queue."""


async def _unless_gone(wait: Coroutine[Any, Any, Any]) -> Any:
    """The fused inference's ``wait`` in a model's queue, whose task cancelled (the client
    went away) ends it as the Python path's ``while_connected`` does: with the request's error,
    in its exchange (counted refused, logged), then cancelled; without a task of its own."""
    try:
        return await wait
    except asyncio.CancelledError:
        raise _Gone(CLIENT_GONE) from None


async def _queued(
    app: RestApp,
    model: Model,
    headers: dict[bytes, bytes],
    body: Any,
    name: str,
    version: str | None,
    path: str,
) -> WireAnswer:
    """The answer of a request to a model that batches. Its task cancelled (the client went
    away) while it waits in the queue, it leaves the queue and is counted refused, as the
    Python path does when ASGI's ``receive`` says ``http.disconnect``."""
    gone: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()

    async def receive() -> dict[str, str]:
        return await gone

    work = asyncio.ensure_future(
        _answered(app._exchange(model, headers, body, name, version, False, receive), path)
    )
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        if not gone.done():
            gone.set_result({"type": "http.disconnect"})
        await asyncio.wait((work,))
        raise


class FastPath:
    """The routes of one :class:`RestApp` the native protocol answers itself, rebuilt when a
    model is loaded, unloaded or replaced and when the app's readiness flips.

    Parameters
    ----------
    app
        The REST application; the fast path watches its registry and its ``ready`` flag.
    """

    def __init__(self, app: RestApp) -> None:
        self.app = app
        #: Bumped whenever :attr:`routes` changed (a plain attribute: the native protocol reads
        #: it once per read from the socket, and :attr:`routes` only when it moved).
        self.generation = 0
        self._routes: dict[bytes, Probe | Slot] | None = None
        app.registry.watchers.append(self)
        app.ready_watchers.append(self.changed)

    @property
    def routes(self) -> dict[bytes, Probe | Slot]:
        """``METHOD SP TARGET`` (bytes as sent) -> a :data:`Probe` or a :class:`Slot`; built
        when first read after a change, so that loading many models builds it once."""
        routes = self._routes
        if routes is None:
            routes = self._routes = self._build()
        return routes

    def _probe(self, routes: dict[bytes, Probe | Slot], path: str) -> None:
        """``GET path``'s answer, as the Python path gives it now, unless it is an error."""
        route = self.app._route("GET", path, {}, _no_body)
        try:
            route.send(None)
        except StopIteration as done:
            routes[b"GET " + path.encode()] = wire(done.value)
        except Exception:
            return  # errors (an unknown version...) are the Python path's to answer and log
        else:  # every probe's route answers without waiting
            route.close()
            raise RuntimeError(f"GET {path} waited")

    def _build(self) -> dict[bytes, Probe | Slot]:
        routes: dict[bytes, Probe | Slot] = {}
        for path in _SERVER_PROBES:
            self._probe(routes, path)
        registry = self.app.registry
        for model in registry.models():
            for version in (None, model.version):
                if not _SAFE.issuperset(model.name.encode()) or not _SAFE.issuperset(
                    model.version.encode()
                ):
                    continue
                base = f"/v2/models/{model.name}"
                if version is not None:
                    base += f"/versions/{version}"
                self._probe(routes, base)
                self._probe(routes, base + "/ready")
                # A decoupled model's /infer is refused by the Python path (one answer).
                if model.decoupled:
                    continue
                if registry.serves(model) and registry.get(model.name, version) is model:
                    routes[b"POST " + base.encode() + b"/infer"] = Slot(
                        self.app, model.name, version
                    )
        return routes

    # ------------------------------------------------- told by the registry (Watcher's methods)

    def changed(self) -> None:
        self._routes = None
        self.generation += 1

    async def drain(self, model: Model, timeout: float) -> int:
        return 0  # its requests run through the pipeline, which counts them

    def retire(self, model: Model, reason: str) -> None:
        pass


async def _no_body() -> Any:
    raise RuntimeError("a probe reads no body")


def fast_path_of(app: Any) -> FastPath | None:
    """The fast path of ``app`` (made on first use, kept on it), or None when ``app`` is not a
    :class:`RestApp` (every request then goes to the Python path)."""
    if not isinstance(app, RestApp):
        return None
    fast: FastPath | None = app.fast_path
    if fast is None:
        fast = app.fast_path = FastPath(app)
    return fast
