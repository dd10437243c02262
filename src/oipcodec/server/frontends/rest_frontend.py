"""The OIP REST front end: a plain ASGI application (no web framework) over a model registry.

It answers every endpoint of the OIP REST protocol (health, server and model metadata,
inference, the model repository, shared memory) and Triton's model configuration and
statistics the way Triton does: Triton's statuses and error map, KServe's health bodies, JSON
and binary-extension bodies, gzip/deflate both ways, Triton's raw binary request. Other front
ends' routes (v1 API, GraphPipe, /metrics) are mounted on it by the runtime, never built here.
docs/serving.md#what-the-server-speaks and docs/protocol.md give each endpoint's answers.

No traceback reaches a client: an unexpected exception is logged with its traceback and
answered 500 with a one-line message.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson

from oipcodec import __version__, datatypes, rest
from oipcodec.errors import (
    DecodeError,
    InvalidArgumentError,
    LimitError,
    NotFoundError,
    OIPError,
    PayloadTooLargeError,
)
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.raw import raw_to_array
from oipcodec.server.config import OFF_LOOP_BYTES, available_cpus
from oipcodec.server.frontends._asgi import (
    BINARY,
    JOIN_BELOW,
    JSON,
    LIMIT_SETTING,
    Answer,
    Receive,
    Route,
    Scope,
    Send,
    allow,
    empty,
    json_answer,
    read_body,
    respond,
)
from oipcodec.server.frontends._asgi import while_connected as _while_connected
from oipcodec.server.inference import Exchange, Pipeline
from oipcodec.server.inference.streaming import decoupled_refused
from oipcodec.server.metadata import BUFFERS_EXTENSION, SERVER_NAME, extensions
from oipcodec.server.model import Model
from oipcodec.server.regions import CopyOffLoop, cuda_unsupported
from oipcodec.server.registry import ModelRegistry
from oipcodec.sharedmem import Resolver, names_region
from oipcodec.types import InferRequest, InferResponse, Tensor

__all__ = ["RestApp"]

#: The most a deflate stream inflates by: about 1032 bytes out per byte in.
_MAX_DEFLATE_RATIO = 1032

_T = TypeVar("_T")

_HEADER_LENGTH = rest.HEADER_LENGTH.lower().encode()


#: The health answers: (status, body) by (endpoint, state); the bodies are KServe's.
_HEALTH = {
    (which, state): (200 if state else 400, orjson.dumps({which: state}))
    for which in ("live", "ready")
    for state in (True, False)
}


def _health(which: str, state: bool) -> Answer:
    """``v2/health/live`` or ``v2/health/ready``: Triton's status, KServe's JSON body."""
    status, body = _HEALTH[which, state]
    return status, body, [(b"content-type", JSON)]


class RestApp:
    """The ASGI application serving a model registry over the OIP REST protocol.

    Parameters
    ----------
    registry
        The models served.
    limits
        What a request may hold (``max_body_bytes`` is the 413 threshold).
    manage_models
        Load every model on the ASGI lifespan startup and unload them on shutdown (for
        running the app under another ASGI server; ``oipcodec serve`` loads the models itself
        and shares them with gRPC).
    server_name
        The server's name in the server metadata (``GET /v2``).
    codec_threads
        How many threads parse and write large JSON bodies, and inflate compressed ones, off
        the event loop (default: :func:`~oipcodec.server.config.available_cpus`); they start
        with the first such body and stop with :meth:`close` (or the lifespan shutdown).
    mounts
        Other front ends' routes on this port, by the first segment of their paths (``api``:
        the v1 API, ``graphpipe``, ``metrics``).
    """

    def __init__(
        self,
        registry: ModelRegistry,
        *,
        limits: Limits = DEFAULT_LIMITS,
        manage_models: bool = True,
        server_name: str = SERVER_NAME,
        codec_threads: int | None = None,
        mounts: Mapping[str, Route] | None = None,
    ) -> None:
        if codec_threads is not None and codec_threads < 1:
            raise ValueError(f"codec_threads must be at least 1, got {codec_threads}")
        self.codec_threads = codec_threads or available_cpus()
        self._executor: ThreadPoolExecutor | None = None
        self.registry = registry
        self.pipeline = Pipeline.of(registry)
        self.limits = limits
        self.manage_models = manage_models
        #: Called when :attr:`ready` flips (the native front end rebuilds its probes' answers).
        self.ready_watchers: list[Callable[[], None]] = []
        #: The native front end's routes over this app (http11/fastpath.py), made on first use.
        self.fast_path: Any = None
        self._ready = not manage_models
        #: Other front ends' routes on this port, by the first segment of their paths
        #: (``api``: the v1 API, ``graphpipe``, ``metrics``), set by the runtime.
        self.mounts: dict[str, Route] = dict(mounts or {})
        self.generate: Any = None  # Triton's generate extension (an ASGI app: it streams)
        self._metadata = orjson.dumps(
            {
                "name": server_name,
                "version": __version__,
                "extensions": extensions(registry.shared_memory is not None, registry),
            }
        )

    @property
    def ready(self) -> bool:
        """False while starting and shutting down: health/ready answers 400."""
        return self._ready

    @ready.setter
    def ready(self, value: bool) -> None:
        if value != self._ready:
            self._ready = value
            for watcher in self.ready_watchers:
                watcher()

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
        if self.generate is not None and scope["path"].endswith(("/generate", "/generate_stream")):
            return await self.generate(scope, receive, send)
        await respond(
            scope, receive, send, lambda method, path: self._route(method, path, scope, receive)
        )

    # ------------------------------------------------------------------ routing

    async def _route(self, method: str, path: str, scope: Scope, receive: Receive) -> Answer:
        parts = path.strip("/").split("/")
        mount = self.mounts.get(parts[0])
        if mount is not None:
            return await mount(method, path, parts, scope, receive)
        if not parts or parts[0] != "v2":
            raise NotFoundError(f"no endpoint {path}")
        n = len(parts)
        if n == 2 and parts[1] == "models":  # KServe's list of models
            allow(method, "GET")
            return json_answer(200, {"models": self.registry.names()})
        if n == 3 and parts[1] == "models" and parts[2] == "stats":
            allow(method, "GET")
            return json_answer(200, self.registry.statistics_document())
        if n >= 3 and parts[1] == "models":
            name = parts[2]
            version = None
            rest_parts = parts[3:]
            if len(rest_parts) >= 2 and rest_parts[0] == "versions":
                version = rest_parts[1]
                rest_parts = rest_parts[2:]
            action = rest_parts[0] if len(rest_parts) == 1 else None
            if not rest_parts:
                allow(method, "GET")
                return json_answer(200, self.registry.metadata(name, version))
            if action == "infer":
                allow(method, "POST")
                return await self._infer(scope, receive, name, version)
            if action == "config":
                allow(method, "GET")
                return json_answer(200, self.registry.config(name, version))
            if action == "stats":
                allow(method, "GET")
                return json_answer(200, self.registry.statistics_document(name, version))
            if action == "ready":
                allow(method, "GET")
                if self.registry.is_ready(name, version):
                    return json_answer(200, {"name": name, "ready": True})
                which = f"version {version} of " if version else ""
                return json_answer(400, {"error": f"{which}model '{name}' is not ready"})
        elif n == 1:
            allow(method, "GET")
            return 200, self._metadata, [(b"content-type", JSON)]
        elif n == 3 and parts[1] == "health" and parts[2] in ("live", "ready"):
            allow(method, "GET")
            return _health(parts[2], parts[2] == "live" or self.ready)
        elif n >= 3 and parts[1] == "repository":
            if n == 3 and parts[2] == "index":
                allow(method, "POST")
                document = await self._json_body(scope, receive)
                ready = document.get("ready", False) if isinstance(document, dict) else False
                return json_answer(200, self.registry.index(ready_only=ready is True))
            if n == 5 and parts[2] == "models" and parts[4] in ("load", "unload"):
                allow(method, "POST")
                document = await self._json_body(scope, receive)
                if parts[4] == "load":
                    entries = document.get("parameters") if isinstance(document, dict) else None
                    await self.registry.load(
                        parts[3], entries if isinstance(entries, dict) else None
                    )
                else:
                    await self.registry.unload(parts[3])
                return empty()
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
    ) -> Answer | None:
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
            allow(method, "GET")
            if not cuda:
                return json_answer(200, regions.status(name))
            if name:
                raise NotFoundError(f"Unable to find cuda shared memory region: '{name}'")
            return json_answer(200, [])
        if action == "register" and name:
            allow(method, "POST")
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
            return empty()
        if action == "unregister":
            allow(method, "POST")
            await self._json_body(scope, receive)
            if not cuda:
                regions.unregister(name)
            return empty()
        return None

    # ------------------------------------------------------------------ request bodies

    async def _json_body(self, scope: Scope, receive: Receive) -> Any:
        body = await read_body(scope, dict(scope["headers"]), receive, self.limits)
        if not body.strip():
            return {}
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise InvalidArgumentError(f"invalid JSON in the request body: {exc.msg}") from None

    # ------------------------------------------------------------------ inference

    async def _infer(
        self, scope: Scope, receive: Receive, name: str, version: str | None
    ) -> Answer:
        model = self.pipeline.model(name, version)  # 404 / 503 before reading the body
        if model.decoupled:
            raise decoupled_refused("HTTP end point")
        headers = dict(scope["headers"])
        body: Any = await read_body(scope, headers, receive, self.limits)
        buffers = BUFFERS_EXTENSION in scope.get("extensions", ())
        return await self._exchange(model, headers, body, name, version, buffers, receive)

    async def _exchange(
        self,
        model: Model,
        headers: Mapping[bytes, bytes],
        body: Any,
        name: str,
        version: str | None,
        buffers: bool,
        receive: Receive | None,
        shared_memory: Resolver | None = None,
    ) -> Answer:
        """One inference whose body was read, counted once in the statistics: the Python
        path's and the native front end's (:mod:`oipcodec.server.http11.fastpath`).
        ``headers``: by lower-case name (content-encoding, accept-encoding and
        inference-header-content-length are read); ``buffers``: the server takes an answer's
        body as parts; ``receive``: watched for the client going away while the request waits
        in a model's queue (None: the caller watches); ``shared_memory``: what resolves a
        tensor in shared memory (default: the exchange's reader)."""
        encoding = _content_encoding(headers)
        with self.pipeline.exchange(_path_of(headers, encoding), len(body), model) as exchange:
            run = self._run(
                exchange,
                headers,
                encoding,
                body,
                name,
                version,
                buffers,
                shared_memory or exchange.shared_memory,
            )
            if receive is not None and self.pipeline.queues(model):
                run = _while_connected(receive, run)
            answer = await run
            sent = answer[1]
            exchange.sent(len(sent) if isinstance(sent, bytes) else sum(len(p) for p in sent))
        return answer

    async def _run(
        self,
        exchange: Exchange,
        headers: Mapping[bytes, bytes],
        encoding: bytes | None,
        body: Any,
        name: str,
        version: str | None,
        buffers: bool,
        shared_memory: Resolver,
    ) -> Answer:
        """Decode, run and encode one inference (``encoding``: the body's, or None)."""
        model = exchange.model
        assert model is not None
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
            if text >= OFF_LOOP_BYTES:
                exchange.off_loop()  # decoded in a codec thread: copies of any size there
            decode = rest.decode_request
            given = None if header_length is None else header_length.decode("latin-1")
            # (arguments, not a functools.partial: making one costs more than the call)
            options: dict[str, Any] = {
                "model_name": name,
                "model_version": version,
                "limits": self.limits,
                "shared_memory": shared_memory,
            }
            try:
                # On the loop, a large copy out of shared memory stops the decode first
                # (a small decode is called here: no coroutine of _codec per request)...
                request = (
                    decode(body, given, **options)
                    if text < OFF_LOOP_BYTES
                    else await self._codec(text, decode, body, given, **options)
                )
            except CopyOffLoop:  # ...and it runs again in a codec thread
                exchange.off_loop()
                request = await self._codec(OFF_LOOP_BYTES, decode, body, given, **options)
            binary = rest.binary_outputs(request)
        response = await exchange.run(request, model)
        return await self._encoded(response, binary, headers.get(b"accept-encoding"), buffers)

    async def _encoded(
        self, response: InferResponse, binary: bool | set[str], accept: bytes | None, buffers: bool
    ) -> Answer:
        """:meth:`_infer_answer`, in a codec thread when the answer is large."""
        # JSON text is about twice the bytes of the tensors written as JSON.
        as_json = 0
        if binary is not True:  # (a loop, not a generator: this runs for every request)
            for t in response.outputs:
                if (binary is False or t.name not in binary) and not (
                    t.parameters and names_region(t.parameters)
                ):
                    as_json += t.data.nbytes
        if 2 * as_json < OFF_LOOP_BYTES:
            return self._infer_answer(response, binary, accept, buffers)
        return await self._codec(2 * as_json, self._infer_answer, response, binary, accept, buffers)

    async def _codec(self, size: int, call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``call(*args, **kwargs)``, a codec step over about ``size`` bytes of JSON text: run
        here when small, in one of the app's codec threads when large, so that the event loop
        goes on serving other connections meanwhile (the kernels release the GIL while they
        run); small steps stay here, as the hand-over to a thread costs tens of microseconds.
        The pool has one thread per CPU, not the loop's default executor (cpu_count + 4),
        which ran more large steps at once than there are cores and served fewer requests
        (docs/measurements.md#rest-front-end)."""
        if size < OFF_LOOP_BYTES:
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
    ) -> Answer:
        """The answer to an inference; ``buffers``: the server takes bytes-like body parts,
        so a large answer's tensors go out as they are instead of joined into one body."""
        parts, header_length = rest.encode_response_parts(response, binary=binary)
        body: bytes | list[bytes | memoryview] = parts
        encoding = _accepted_encoding(accept)
        if encoding is not None or not buffers or sum(len(p) for p in parts) < JOIN_BELOW:
            body = b"".join(parts)
        headers: list[tuple[bytes, bytes]] = []
        if header_length is None:
            headers.append((b"content-type", JSON))
        else:
            headers.append((b"content-type", BINARY))
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


def _content_encoding(headers: Mapping[bytes, bytes]) -> bytes | None:
    """The request body's ``Content-Encoding``, unless there is none (or ``identity``)."""
    encoding = headers.get(b"content-encoding")
    if encoding is None or encoding.strip().lower() in (b"", b"identity"):
        return None
    return encoding


def _path_of(headers: Mapping[bytes, bytes], encoding: bytes | None) -> str:
    """The encoding path of a REST inference request whose body's ``encoding`` is that, for
    the per-path statistics."""
    if encoding is not None:
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
