"""The OIP REST front end: a plain ASGI application (no web framework).

It runs under uvicorn (what ``oipcodec serve`` uses) or any ASGI server, and answers every
endpoint of the OIP REST protocol (health, server and model metadata, inference, the model
repository) and Triton's model configuration, statistics and ``/metrics`` (Prometheus) the way
Triton does:

- health: Triton's statuses (200, or 400 when not ready) with a small JSON body,
  ``{"live": true}`` / ``{"ready": true}`` / ``{"ready": false}``, as KServe's server sends:
  KServe's REST client reads that body (``is_server_live`` parses it), Triton's sends none and
  its clients, like oipcodec's, look at the status only; a ready model answers
  ``{"name": ..., "ready": true}``;
- errors: ``{"error": "<message>"}`` with Triton's status map (404 not found, 503 unavailable,
  501 unsupported, 500 internal, 400 anything else), 405 for a wrong method (with ``Allow``),
  413 for a body over the limit (decided from ``Content-Length`` before the body is read, or
  while reading a chunked body; Triton's default limit, 64 MB, counts inflated bytes too);
- infer: JSON and binary-extension bodies (``Inference-Header-Content-Length``), gzip/deflate
  request bodies, answers compressed when ``Accept-Encoding`` allows, ``binary_data`` per output
  and ``binary_data_output`` per request ("in Triton and KServe an output listed without
  binary_data stays JSON"), Triton's raw binary request (header value 0: the whole body is the
  one input of the model, and every output comes back binary), ``application/octet-stream``
  when the answer holds binary data, else ``application/json``.

No traceback reaches a client: an unexpected exception is logged with its traceback and
answered 500 with a one-line message.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson

from oipcodec import __version__, datatypes, rest
from oipcodec.errors import (
    BodyTimeoutError,
    DecodeError,
    InvalidArgumentError,
    LimitError,
    NotFoundError,
    OIPError,
    PayloadTooLargeError,
    RequestError,
)
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.raw import raw_to_array
from oipcodec.server import graphpipe as graphpipe_endpoint
from oipcodec.server.errors import from_exception
from oipcodec.server.metadata import EXTENSIONS, SERVER_NAME, extensions
from oipcodec.server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from oipcodec.server.metrics import render
from oipcodec.server.model import Model
from oipcodec.server.protocol import BODY_TIMEOUT_EXTENSION, BUFFERS_EXTENSION
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.shm import cuda_unsupported
from oipcodec.server.v1 import V1Frontend
from oipcodec.server.v1 import route as v1_route
from oipcodec.sharedmem import names_region
from oipcodec.types import InferRequest, InferResponse, Tensor

__all__ = ["EXTENSIONS", "RestApp", "available_cpus", "create_app"]

log = logging.getLogger("oipcodec.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: JSON text of at least this many bytes is parsed or written off the event loop.
_OFF_LOOP_BYTES = 1 << 20
#: The most a deflate stream inflates by: about 1032 bytes out per byte in.
_MAX_DEFLATE_RATIO = 1032
#: Answers smaller than this are joined into one body (one write beats several).
_JOIN_BELOW = 1 << 16

_T = TypeVar("_T")

_JSON = b"application/json"
_BINARY = b"application/octet-stream"
_HEADER_LENGTH = rest.HEADER_LENGTH.lower().encode()


class _ClientGone(Exception):
    """The client disconnected before its request body arrived."""


class _MethodNotAllowed(Exception):
    def __init__(self, allowed: str) -> None:
        self.allowed = allowed


#: Status, body (bytes, or the parts of a large answer for a server that takes buffers),
#: headers.
_Answer = tuple[int, bytes | list[bytes | memoryview], list[tuple[bytes, bytes]]]


def _json_answer(status: int, document: Any) -> _Answer:
    return status, orjson.dumps(document), [(b"content-type", _JSON)]


def _empty(status: int = 200) -> _Answer:
    return status, b"", []


#: The health answers: (status, body) by (endpoint, state); the bodies are KServe's.
_HEALTH = {
    (which, state): (200 if state else 400, orjson.dumps({which: state}))
    for which in ("live", "ready")
    for state in (True, False)
}


def _health(which: str, state: bool) -> _Answer:
    """``v2/health/live`` or ``v2/health/ready``: Triton's status, KServe's JSON body."""
    status, body = _HEALTH[which, state]
    return status, body, [(b"content-type", _JSON)]


class RestApp:
    """The ASGI application serving ``registry`` over the OIP REST protocol.

    ``limits`` bounds what a request may hold (``max_body_bytes`` is the 413 threshold).
    ``manage_models``: load every model on the ASGI lifespan startup and unload them on
    shutdown (for running the app under another ASGI server; ``oipcodec serve`` loads the
    models itself and shares them with gRPC). ``codec_threads``: how many threads parse and
    write large JSON bodies, and inflate compressed ones, off the event loop (default:
    :func:`available_cpus`); they start with the first such body and stop with :meth:`close`
    (or the lifespan shutdown).
    """

    def __init__(
        self,
        registry: ModelRegistry,
        *,
        limits: Limits = DEFAULT_LIMITS,
        manage_models: bool = True,
        server_name: str = SERVER_NAME,
        codec_threads: int | None = None,
        graphpipe_model: str | None = None,
    ) -> None:
        if codec_threads is not None and codec_threads < 1:
            raise ValueError(f"codec_threads must be at least 1, got {codec_threads}")
        self.codec_threads = codec_threads or available_cpus()
        self._executor: ThreadPoolExecutor | None = None
        self.registry = registry
        self.limits = limits
        self.manage_models = manage_models
        #: Serve only this model's GraphPipe endpoint, at ``/`` (``--graphpipe-port``).
        self.graphpipe_model = graphpipe_model
        #: False while starting and shutting down: health/ready answers 400.
        self.ready = not manage_models
        #: The v1 API's answers over the same models (``/api/...``).
        self.v1 = V1Frontend(
            registry, limits=limits, server_id=server_name, ready=lambda: self.ready
        )
        self._metadata = orjson.dumps(
            {
                "name": server_name,
                "version": __version__,
                "extensions": extensions(registry.shared_memory is not None),
            }
        )

    # ------------------------------------------------------------------ ASGI entry point

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1003})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self.manage_models:
                    await self.registry.load_all()
                self.ready = True
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.ready = False
                if self.manage_models:
                    await self.registry.unload_all()
                self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope["method"]
        path = _route_path(scope)
        try:
            status, body, headers = await self._route(method, path, scope, receive)
        except _ClientGone:
            return
        except _MethodNotAllowed as exc:
            status, body, headers = _json_answer(405, {"error": f"method {method} not allowed"})
            headers.append((b"allow", exc.allowed.encode()))
        except Exception as exc:
            status, body, headers = _error_answer(exc, method, path)
        parts = body if isinstance(body, list) else [body]
        headers.append((b"content-length", b"%d" % sum(len(part) for part in parts)))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        last = len(parts) - 1
        for index, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part, "more_body": index < last})

    # ------------------------------------------------------------------ routing

    async def _route(self, method: str, path: str, scope: Scope, receive: Receive) -> _Answer:
        parts = path.strip("/").split("/")
        if self.graphpipe_model is not None:
            if parts != [""]:
                raise NotFoundError(f"no endpoint {path}: this port serves GraphPipe at /")
            return await self._graphpipe(method, self.graphpipe_model, scope, receive)
        if len(parts) == 2 and parts[0] == "graphpipe":
            return await self._graphpipe(method, parts[1], scope, receive)
        if parts == ["metrics"]:
            _allow(method, "GET")
            return self._metrics()
        if parts[0] == "api":  # the TensorRT Inference Server v1 API
            return await v1_route(self, method, parts, scope, receive)
        if not parts or parts[0] != "v2":
            raise NotFoundError(f"no endpoint {path}")
        n = len(parts)
        if n == 2 and parts[1] == "models":  # KServe's list of models
            _allow(method, "GET")
            return _json_answer(200, {"models": self.registry.names()})
        if n == 3 and parts[1] == "models" and parts[2] == "stats":
            _allow(method, "GET")
            return _json_answer(200, self.registry.statistics_document())
        if n >= 3 and parts[1] == "models":
            name = parts[2]
            version = None
            rest_parts = parts[3:]
            if len(rest_parts) >= 2 and rest_parts[0] == "versions":
                version = rest_parts[1]
                rest_parts = rest_parts[2:]
            action = rest_parts[0] if len(rest_parts) == 1 else None
            if not rest_parts:
                _allow(method, "GET")
                return _json_answer(200, self.registry.metadata(name, version))
            if action == "infer":
                _allow(method, "POST")
                return await self._infer(scope, receive, name, version)
            if action == "config":
                _allow(method, "GET")
                return _json_answer(200, self.registry.config(name, version))
            if action == "stats":
                _allow(method, "GET")
                return _json_answer(200, self.registry.statistics_document(name, version))
            if action == "ready":
                _allow(method, "GET")
                if self.registry.is_ready(name, version):
                    return _json_answer(200, {"name": name, "ready": True})
                which = f"version {version} of " if version else ""
                return _json_answer(400, {"error": f"{which}model '{name}' is not ready"})
        elif n == 1:
            _allow(method, "GET")
            return 200, self._metadata, [(b"content-type", _JSON)]
        elif n == 3 and parts[1] == "health" and parts[2] in ("live", "ready"):
            _allow(method, "GET")
            return _health(parts[2], parts[2] == "live" or self.ready)
        elif n >= 3 and parts[1] == "repository":
            if n == 3 and parts[2] == "index":
                _allow(method, "POST")
                document = await self._json_body(scope, receive)
                ready = document.get("ready", False) if isinstance(document, dict) else False
                return _json_answer(200, self.registry.index(ready_only=ready is True))
            if n == 5 and parts[2] == "models" and parts[4] in ("load", "unload"):
                _allow(method, "POST")
                document = await self._json_body(scope, receive)
                if parts[4] == "load":
                    entries = document.get("parameters") if isinstance(document, dict) else None
                    await self.registry.load(
                        parts[3], entries if isinstance(entries, dict) else None
                    )
                else:
                    await self.registry.unload(parts[3])
                return _empty()
        elif (
            parts[1] in ("systemsharedmemory", "cudasharedmemory")
            and self.registry.shared_memory is not None
        ):
            answer = await self._shared_memory(method, parts, scope, receive)
            if answer is not None:
                return answer
        raise NotFoundError(f"no endpoint {path}")

    async def _shared_memory(
        self, method: str, parts: list[str], scope: Scope, receive: Receive
    ) -> _Answer | None:
        """The shared-memory extension's endpoints (Triton's paths), or None for another
        path: ``GET .../status``, ``POST .../register`` (system only: ``{"key", "offset",
        "byte_size"}``), ``POST .../unregister``, each for every region or for
        ``region/<name>``. CUDA shared memory is unsupported (no GPU): no region is ever
        registered, and registering one is a 501."""
        n = len(parts)
        if n == 3:
            name, action = "", parts[2]
        elif n == 5 and parts[2] == "region":
            name, action = parts[3], parts[4]
        else:
            return None
        regions = self.registry.shared_memory
        assert regions is not None
        cuda = parts[1] == "cudasharedmemory"
        if action == "status":
            _allow(method, "GET")
            if not cuda:
                return _json_answer(200, regions.status(name))
            if name:
                raise NotFoundError(f"Unable to find cuda shared memory region: '{name}'")
            return _json_answer(200, [])
        if action == "register" and name:
            _allow(method, "POST")
            document = await self._json_body(scope, receive)
            if cuda:
                raise cuda_unsupported(name)
            if not isinstance(document, dict):
                raise InvalidArgumentError(
                    'a register request is a JSON object {"key", "offset", "byte_size"}'
                )
            regions.register(
                name, document.get("key"), document.get("offset", 0), document.get("byte_size")
            )
            return _empty()
        if action == "unregister":
            _allow(method, "POST")
            await self._json_body(scope, receive)
            if not cuda:
                regions.unregister(name)
            return _empty()
        return None

    async def _graphpipe(self, method: str, name: str, scope: Scope, receive: Receive) -> _Answer:
        """GraphPipe's endpoint for model ``name`` (:mod:`oipcodec.server.graphpipe`): POST a
        Request flatbuffer, GET the metadata as JSON."""
        if method not in ("GET", "POST"):
            raise _MethodNotAllowed("GET, POST")
        model = self.registry.get(name)  # 404 / 503 before reading the body
        if method == "GET":
            return _json_answer(200, graphpipe_endpoint.metadata(model).document())
        body = await self._body(scope, dict(scope["headers"]), receive)
        status, parts, content_type = await graphpipe_endpoint.answer(
            self.registry, model, body, self.limits
        )
        buffers = BUFFERS_EXTENSION in scope.get("extensions", ())
        joined = not buffers or sum(len(part) for part in parts) < _JOIN_BELOW
        return status, b"".join(parts) if joined else parts, [(b"content-type", content_type)]

    def _metrics(self) -> _Answer:
        """``GET /metrics``: the Prometheus metrics of every process of the server."""
        statistics = self.registry.statistics
        if statistics is None:
            raise NotFoundError("no endpoint /metrics: metrics are off in this server")
        return 200, render(statistics.snapshot()), [(b"content-type", METRICS_CONTENT_TYPE)]

    # ------------------------------------------------------------------ request bodies

    async def _receive(self, scope: Scope, receive: Receive) -> MutableMapping[str, Any]:
        """The next part of a request body, waiting at most ``limits.body_timeout_seconds``.

        The wait is bounded by a timer that cancels this task, not by ``asyncio.wait_for``,
        which (before Python 3.12) wraps every call in a task of its own: 6% of the server's
        time on small JSON requests. A server that times out a stalled body itself (oipcodec's
        protocol, server/protocol.py, which hands over a whole body in one message) says so
        in the scope, and is left to it: a timer here would bound the whole body's time."""
        if BODY_TIMEOUT_EXTENSION in scope.get("extensions", ()):
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _ClientGone
            return message
        timeout = self.limits.body_timeout_seconds
        task = asyncio.current_task()
        assert task is not None
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            task.cancel()

        timer = asyncio.get_running_loop().call_later(timeout, expire)
        try:
            message = await receive()
        except asyncio.CancelledError:
            if not expired:
                raise
            if sys.version_info >= (3, 11):
                task.uncancel()
            raise BodyTimeoutError(
                f"the request body stopped arriving: nothing for {timeout:g} s"
            ) from None
        finally:
            timer.cancel()
        if message["type"] == "http.disconnect":
            raise _ClientGone
        return message

    async def _body(self, scope: Scope, headers: dict[bytes, bytes], receive: Receive) -> Any:
        """The whole request body (bytes, or a bytearray from oipcodec's protocol), refused
        with 413 as soon as it is known to be too large."""
        limit = self.limits.max_body_bytes
        declared = headers.get(b"content-length")
        length = None
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                raise InvalidArgumentError(f"invalid Content-Length {declared!r}") from None
            if length > limit:
                raise PayloadTooLargeError(_too_large(length, limit))
        message = await self._receive(scope, receive)
        chunk: bytes = message.get("body", b"")
        if not message.get("more_body", False):
            return chunk  # the common case: one message, no copy
        # The parts, joined once at the end: one copy, into memory that is not zeroed first
        # (filling a buffer of the announced size part by part cost 4% more of the server's
        # time on 3 MB bodies).
        chunks = [chunk]
        total = len(chunk)
        bound = limit if length is None else length
        while message.get("more_body", False) and total <= bound:
            message = await self._receive(scope, receive)
            chunk = message.get("body", b"")
            chunks.append(chunk)
            total += len(chunk)
        if length is not None and total > length:
            raise InvalidArgumentError("the body is longer than its Content-Length")
        if total > limit:
            more = message.get("more_body", False)
            raise PayloadTooLargeError(_too_large(total, limit, "at least " if more else ""))
        return b"".join(chunks)

    async def _json_body(self, scope: Scope, receive: Receive) -> Any:
        body = await self._body(scope, dict(scope["headers"]), receive)
        if not body.strip():
            return {}
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise InvalidArgumentError(f"invalid JSON in the request body: {exc.msg}") from None

    # ------------------------------------------------------------------ inference

    async def _infer(
        self, scope: Scope, receive: Receive, name: str, version: str | None
    ) -> _Answer:
        model = self.registry.get(name, version)  # 404 / 503 before reading the body
        headers = dict(scope["headers"])
        body: Any = await self._body(scope, headers, receive)
        stats = self.registry.statistics
        if stats is None:
            return (await self._run(model, headers, body, name, version, scope))[0]
        received = time.perf_counter_ns()
        try:
            answer, request, checked, started, finished = await self._run(
                model, headers, body, name, version, scope
            )
        except Exception as exc:
            stats.refused(model, _path_of(headers), received, exc, len(body))
            raise
        sent = answer[1]
        stats.answered(
            model,
            _path_of(headers),
            request.inputs,
            received,
            (checked, started, finished),
            len(body),
            len(sent) if isinstance(sent, bytes) else sum(len(part) for part in sent),
        )
        return answer

    async def _run(
        self,
        model: Model,
        headers: dict[bytes, bytes],
        body: Any,
        name: str,
        version: str | None,
        scope: Scope,
    ) -> tuple[_Answer, InferRequest, int, int, int]:
        """Decode, run and encode one inference: the answer, the request, and when the
        request was checked and ``predict`` started and finished."""
        encoding = _content_encoding(headers)
        if encoding is not None:
            inflate_limit = self.limits.max_decompressed_bytes
            try:
                # What it may inflate to (deflate packs at most about 1032:1) sizes the work:
                # anything but a tiny body is inflated in a codec thread, so a bomb does not
                # hold the event loop.
                body = await self._codec(
                    min(len(body) * _MAX_DEFLATE_RATIO, inflate_limit),
                    rest.decompress,
                    body,
                    encoding.decode("latin-1"),
                    inflate_limit,
                )
            except LimitError as exc:
                raise PayloadTooLargeError(f"{exc} {LIMIT_SETTING}") from None
        header_length = headers.get(_HEADER_LENGTH)
        if header_length is not None and header_length.strip() == b"0":
            request = self._raw_request(model, body, name, version)
            binary: bool | set[str] = True
        else:
            # The JSON part's length bounds the parse work (binary parts become views).
            text = len(body) if header_length is None else min(_int_or(header_length, 0), len(body))
            request = await self._codec(
                text,
                rest.decode_request,
                body,
                None if header_length is None else header_length.decode("latin-1"),
                model_name=name,
                model_version=version,
                limits=self.limits,
                shared_memory=self.registry.resolver,
            )
            binary = rest.binary_outputs(request)
        response, checked, started, finished = await self.registry.execute(request, model)
        # JSON text is about twice the bytes of the tensors written as JSON.
        as_json = sum(
            t.data.nbytes
            for t in response.outputs
            if binary is not True
            and (binary is False or t.name not in binary)
            and not names_region(t.parameters)
        )
        answer = await self._codec(
            2 * as_json,
            self._infer_answer,
            response,
            binary,
            headers.get(b"accept-encoding"),
            BUFFERS_EXTENSION in scope.get("extensions", ()),
        )
        return answer, request, checked, started, finished

    async def _codec(self, size: int, call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``call(*args, **kwargs)``, a codec step over about ``size`` bytes of JSON text: run
        here when small, in one of the app's codec threads when large, so that the event loop
        goes on serving other connections meanwhile (the kernels release the GIL while they
        run). A 3 MB image as JSON is about 2 ms of kernel work each way, which the loop's
        thread then spends on other requests' I/O (one process: 118 -> 164 req/s in
        benchmarks/load/load_server.py); small steps stay here, as the hand-over to a thread costs
        tens of microseconds. The pool has one thread per CPU: the event loop's default
        executor (cpu_count + 4 threads) ran more 3 MB codec steps at once than there are
        cores, and served 9% fewer image requests (means of 6 alternating runs, 199 -> 217
        req/s on 2 cores)."""
        if size < _OFF_LOOP_BYTES:
            return call(*args, **kwargs)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                self.codec_threads, thread_name_prefix="oipcodec-codec"
            )
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, functools.partial(call, *args, **kwargs)
        )

    def close(self) -> None:
        """Stop the codec threads once the steps given to them are done (a later large body
        starts them again)."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False)

    def _infer_answer(
        self,
        response: InferResponse,
        binary: bool | set[str],
        accept: bytes | None,
        buffers: bool,
    ) -> _Answer:
        """The answer to an inference; ``buffers``: the server takes bytes-like body parts,
        so a large answer's tensors go out as they are instead of joined into one body."""
        parts, header_length = rest.encode_response_parts(response, binary=binary)
        body: bytes | list[bytes | memoryview] = parts
        encoding = _accepted_encoding(accept)
        if encoding is not None or not buffers or sum(len(p) for p in parts) < _JOIN_BELOW:
            body = b"".join(parts)
        headers: list[tuple[bytes, bytes]] = []
        if header_length is None:
            headers.append((b"content-type", _JSON))
        else:
            headers.append((b"content-type", _BINARY))
            headers.append((_HEADER_LENGTH, str(header_length).encode()))
        if encoding is not None:
            assert isinstance(body, bytes)
            body = rest.compress(body, encoding)
            headers.append((b"content-encoding", encoding.encode()))
        return 200, body, headers

    def _raw_request(self, model: Model, body: Any, name: str, version: str | None) -> InferRequest:
        """Triton's raw binary request: the body is the bytes of the model's only input,
        whose datatype and shape come from the model metadata (one ``-1`` is deduced from
        the body's size)."""
        if model.inputs is None or len(model.inputs) != 1:
            count = "any number of" if model.inputs is None else str(len(model.inputs))
            raise InvalidArgumentError(
                f"a raw binary request ({rest.HEADER_LENGTH}: 0) needs a model with exactly "
                f"one input; model '{name}' takes {count} inputs"
            )
        spec = model.inputs[0]
        shape = _raw_shape(spec.name, spec.datatype, spec.shape, body)
        try:
            array = raw_to_array(body, spec.datatype, shape, limits=self.limits)
        except OIPError as exc:
            raise exc.for_tensor(spec.name, "input") from None
        tensor = Tensor(spec.name, spec.datatype, shape, array)
        return InferRequest([tensor], model_name=name, model_version=version)


def create_app(
    models: Iterable[Model] | ModelRegistry | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    manage_models: bool = True,
    codec_threads: int | None = None,
) -> RestApp:
    """An ASGI application serving ``models`` (default: the demo models), e.g.
    ``uvicorn.run(create_app([MyModel()]))``. Models are loaded on the lifespan startup;
    ``codec_threads`` as :class:`RestApp`."""
    from oipcodec.server.demo import demo_models

    if isinstance(models, ModelRegistry):
        registry = models
    else:
        registry = ModelRegistry(demo_models() if models is None else models)
    return RestApp(
        registry, limits=limits, manage_models=manage_models, codec_threads=codec_threads
    )


def _error_answer(exc: Exception, method: str, path: str) -> _Answer:
    """The answer to a request that failed with ``exc``, logged.

    A function of its own so that no frame that is in the traceback of ``exc`` keeps a
    reference to ``exc`` (its RequestError may be ``exc`` itself): that cycle would keep the
    failed request's frames, and the request body and inflated bytes in them, alive until
    the cycle collector runs."""
    error = from_exception(exc)
    if isinstance(exc, (RequestError, OIPError)):
        log.info("%s %s -> %d: %s", method, path, error.http_status, error.message)
    else:
        log.exception("%s %s failed", method, path)
    headers = [(b"content-type", _JSON)]
    if isinstance(error, BodyTimeoutError):
        headers.append((b"connection", b"close"))  # the rest of the body never came
    return error.http_status, rest.error_body(error.message), headers


def _route_path(scope: Scope) -> str:
    """The path to route on: ``path`` without the ``root_path`` prefix.

    ASGI servers and routers put the mount prefix in ``root_path`` and keep it in ``path`` as
    well (uvicorn's ``--root-path``, Starlette's ``Mount``), so the app strips it itself; a
    path that does not start with it is taken as it is (a proxy that already removed it).
    """
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root) :] or "/"
    return path


def _allow(method: str, allowed: str) -> None:
    if method != allowed:
        raise _MethodNotAllowed(allowed)


#: What sets the body limit, named in every 413 answer.
LIMIT_SETTING = "(oipcodec serve --max-body-bytes, Limits.max_body_bytes)"


def _too_large(size: int, limit: int, qualifier: str = "") -> str:
    return (
        f"request body of {qualifier}{size} bytes is larger than the limit of {limit} bytes "
        f"{LIMIT_SETTING}"
    )


def available_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the system has one, else
    the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _content_encoding(headers: dict[bytes, bytes]) -> bytes | None:
    """The request body's ``Content-Encoding``, unless there is none (or ``identity``)."""
    encoding = headers.get(b"content-encoding")
    if encoding is None or encoding.strip().lower() in (b"", b"identity"):
        return None
    return encoding


def _path_of(headers: dict[bytes, bytes]) -> str:
    """The encoding path of a REST inference request, for the per-path statistics."""
    if _content_encoding(headers) is not None:
        return "compressed"
    return "json" if _HEADER_LENGTH not in headers else "binary"


def _int_or(text: bytes, default: int) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def _accepted_encoding(accept: bytes | None) -> str | None:
    """gzip or deflate when ``Accept-Encoding`` allows one (the highest q wins; ties go to
    the first listed), else None."""
    if not accept:
        return None
    best, best_q = None, 0.0
    for item in accept.decode("latin-1").split(","):
        token, _, params = item.partition(";")
        token = token.strip().lower()
        if token not in ("gzip", "deflate"):
            continue
        q = 1.0
        key, _, value = params.strip().partition("=")
        if key.strip().lower() == "q":
            try:
                q = float(value)
            except ValueError:
                q = 0.0
        if q > best_q:
            best, best_q = token, q
    return best


def _raw_shape(name: str, datatype: str, shape: tuple[int, ...], body: Any) -> tuple[int, ...]:
    """The declared shape, with its one ``-1`` deduced from the byte count of ``body``."""
    free = [i for i, d in enumerate(shape) if d == -1]
    if not free:
        return shape
    if len(free) > 1:
        raise InvalidArgumentError(
            f"a raw binary request cannot infer input '{name}' of shape {list(shape)}: "
            "more than one dimension is -1"
        )
    row = datatypes.get(datatype)
    known = math.prod(d for d in shape if d != -1)
    size = len(memoryview(body))
    if row.is_bytes:
        from oipcodec import kernels

        try:
            count = len(kernels.deserialize_bytes(body))
        except DecodeError as exc:
            raise exc.for_tensor(name, "input") from None
    else:
        if size % row.itemsize:
            raise InvalidArgumentError(
                f"input '{name}': {size} bytes is not a whole number of {datatype} elements"
            )
        count = size // row.itemsize
    if known == 0 or count % known:
        raise InvalidArgumentError(
            f"input '{name}': {count} {datatype} elements do not fill shape {list(shape)}"
        )
    return tuple(count // known if d == -1 else d for d in shape)
