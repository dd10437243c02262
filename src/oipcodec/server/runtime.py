"""Running the server: REST (uvicorn) and gRPC (grpc.aio) on one event loop and one registry.

- :class:`Server`: start/stop from async code you own;
- :func:`serve`: block until SIGINT/SIGTERM (what ``oipcodec serve`` calls); ``workers=N``
  runs N processes that share the ports (SO_REUSEPORT), each with its own registry;
- :func:`background`: a context manager that starts a server on free ports in a subprocess
  (default) or a thread and stops it cleanly on exit, for tests and benchmarks.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.server.http import RestApp, available_cpus
from oipcodec.server.malloc import (
    DEFAULT_MALLOC_TOP_PAD,
    check_malloc_top_pad,
    set_malloc_top_pad,
)
from oipcodec.server.model import Model
from oipcodec.server.registry import ModelRegistry

__all__ = [
    "HTTP_PROTOCOLS",
    "RunningServer",
    "Server",
    "background",
    "load_model_module",
    "serve",
]

log = logging.getLogger("oipcodec.server")

Models = Iterable[Model] | ModelRegistry | None

#: The HTTP/1.1 implementations the REST server can run on: oipcodec's own protocol for
#: uvicorn (server/protocol.py: a request body is received into one buffer), or uvicorn's.
HTTP_PROTOCOLS = ("oipcodec", "httptools", "h11")


def _codec_threads(requested: int | None, workers: int) -> int:
    """Codec threads per process: as requested, or the CPUs divided among the processes."""
    if requested is None:
        return max(1, available_cpus() // max(1, workers))
    if requested < 1:
        raise ValueError(f"codec_threads must be at least 1, got {requested}")
    return requested


def _check_http_protocol(name: str) -> None:
    if name not in HTTP_PROTOCOLS:
        raise ValueError(f"http_protocol must be one of {', '.join(HTTP_PROTOCOLS)}, got {name!r}")


def load_model_module(module: str) -> list[Model]:
    """The models a module offers: its ``MODELS`` attribute, an iterable of :class:`Model`
    instances or a callable returning one."""
    imported = importlib.import_module(module)
    offered = getattr(imported, "MODELS", None)
    if offered is None:
        raise ValueError(
            f"module {module!r} has no MODELS: define MODELS = [MyModel(), ...] "
            "(or a function MODELS() returning them)"
        )
    if callable(offered):
        offered = offered()
    models = list(offered)
    for model in models:
        if not isinstance(model, Model):
            raise TypeError(f"{module}.MODELS holds {model!r}, not an oipcodec.server.Model")
    return models


def _registry(models: Models, model_module: str | None) -> ModelRegistry:
    from oipcodec.server.demo import demo_models

    if isinstance(models, ModelRegistry):
        return models
    listed = list(models) if models is not None else []
    if model_module is not None:
        listed += load_model_module(model_module)
    if models is None and model_module is None:
        listed = demo_models()
    return ModelRegistry(listed)


def _listen(host: str, port: int, reuse_port: bool) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        sock.listen(2048)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _uvicorn_server(app: RestApp, access_log: bool, http_protocol: str, limits: Limits) -> Any:
    import uvicorn

    http: Any = http_protocol
    if http_protocol == "oipcodec":
        from oipcodec.server.protocol import HttpProtocol

        http = functools.partial(
            HttpProtocol,
            body_timeout=limits.body_timeout_seconds,
            max_body_buffer=limits.max_body_bytes,
        )

    class _Uvicorn(uvicorn.Server):
        # The owner of the loop handles signals (Server / serve), not uvicorn.
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    config = uvicorn.Config(
        app,
        http=http,
        # The app reads neither the client's address nor the scheme, so uvicorn's
        # X-Forwarded-* middleware would only add a layer to every request.
        proxy_headers=False,
        lifespan="off",
        access_log=access_log,
        log_config=None,
        server_header=False,
        timeout_graceful_shutdown=5,
    )
    return _Uvicorn(config)


class Server:
    """The REST and gRPC servers over one model registry, on the running event loop.

    ``models``: Model instances or a :class:`ModelRegistry`; with neither ``models`` nor
    ``model_module`` the demo models are served. A port of 0 picks a free one (read the
    actual ports from :attr:`http_port` / :attr:`grpc_port` after :meth:`start`); ``None``
    disables that protocol. ``limits.max_body_bytes`` is the largest request body (413) and
    gRPC message accepted. ``http_protocol``: one of :data:`HTTP_PROTOCOLS`, the HTTP/1.1
    implementation under uvicorn (default: oipcodec's own, server/protocol.py).
    ``codec_threads``: threads for large JSON bodies (see :class:`RestApp`; default: one per
    CPU this process may use).
    """

    def __init__(
        self,
        models: Models = None,
        *,
        host: str = "127.0.0.1",
        http_port: int | None = 8000,
        grpc_port: int | None = 8001,
        limits: Limits = DEFAULT_LIMITS,
        model_module: str | None = None,
        reuse_port: bool = False,
        access_log: bool = False,
        http_protocol: str = "oipcodec",
        codec_threads: int | None = None,
    ) -> None:
        _check_http_protocol(http_protocol)
        self.registry = _registry(models, model_module)
        self.host = host
        self.http_port = http_port
        self.grpc_port = grpc_port
        self.limits = limits
        self.reuse_port = reuse_port
        self.access_log = access_log
        self.http_protocol = http_protocol
        self.app = RestApp(
            self.registry, limits=limits, manage_models=False, codec_threads=codec_threads
        )
        self._http: Any = None
        self._http_task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        self._grpc: Any = None
        self._servicer: Any = None

    async def start(self) -> None:
        """Load the models, then start listening. On failure (a port in use...) whatever
        was started is stopped again before the error propagates."""
        try:
            await self._start()
        except BaseException:
            with contextlib.suppress(Exception):
                await self.stop(grace=0)
            raise

    async def _start(self) -> None:
        await self.registry.load_all()
        if self.http_port is not None:
            self._socket = _listen(self.host, self.http_port, self.reuse_port)
            self.http_port = self._socket.getsockname()[1]
            self._http = _uvicorn_server(self.app, self.access_log, self.http_protocol, self.limits)
            self._http_task = asyncio.create_task(self._http.serve(sockets=[self._socket]))
            while not self._http.started:
                if self._http_task.done():
                    self._http_task.result()  # raises what stopped it
                    raise RuntimeError("the HTTP server stopped while starting")
                await asyncio.sleep(0.01)
        if self.grpc_port is not None:
            from oipcodec.server.grpc_service import create_grpc_server

            self._grpc, self._servicer = create_grpc_server(
                self.registry, limits=self.limits, reuse_port=self.reuse_port
            )
            address = _grpc_address(self.host, self.grpc_port)
            try:
                port = self._grpc.add_insecure_port(address)
            except RuntimeError as exc:
                raise OSError(f"cannot listen for gRPC on {address}: {exc}") from None
            if port == 0:
                raise OSError(f"cannot listen for gRPC on {address}")
            self.grpc_port = port
            await self._grpc.start()
        self.app.ready = True
        log.info(
            "oipcodec server ready: HTTP %s, gRPC %s, models %s (pid %d)",
            f"{self.host}:{self.http_port}" if self.http_port is not None else "off",
            f"{self.host}:{self.grpc_port}" if self.grpc_port is not None else "off",
            ", ".join(m.name for m in self.registry.models()) or "none",
            os.getpid(),
        )

    async def stop(self, grace: float = 5.0) -> None:
        """Stop accepting, let requests in flight finish (up to ``grace`` seconds), unload."""
        self.app.ready = False
        if self._servicer is not None:
            self._servicer.ready = False
        if self._grpc is not None:
            await self._grpc.stop(grace)
            self._grpc = None
        if self._http is not None and self._http_task is not None:
            self._http.should_exit = True
            await self._http_task
            self._http = self._http_task = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        self.app.close()
        await self.registry.unload_all()
        log.info("oipcodec server stopped (pid %d)", os.getpid())

    async def run_until(self, stop: asyncio.Event) -> None:
        """Start, wait for ``stop`` to be set, stop."""
        await self.start()
        try:
            await stop.wait()
        finally:
            await self.stop()


def _grpc_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _run_blocking(server: Server, malloc_top_pad: int, on_started: Any = None) -> None:
    """Run ``server`` on a new event loop in this (main) thread until SIGINT/SIGTERM, or
    until ``on_started`` (a Connection) is readable: the parent's stop request or its exit.
    The process is the server's, so its malloc is tuned for it first (server/malloc.py)."""
    set_malloc_top_pad(malloc_top_pad)
    loop = _new_loop()
    asyncio.set_event_loop(loop)
    stop = asyncio.Event()
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)

        async def main() -> None:
            await server.start()
            if on_started is not None:
                on_started.send(("started", server.http_port, server.grpc_port, os.getpid()))
                loop.add_reader(on_started.fileno(), stop.set)
            try:
                await stop.wait()
            finally:
                if on_started is not None:
                    loop.remove_reader(on_started.fileno())
                await server.stop()

        loop.run_until_complete(main())
    finally:
        loop.close()
        asyncio.set_event_loop(None)


# ---------------------------------------------------------------------------------- processes


@dataclass
class _Spec:
    """What a worker process needs to build its server (must pickle)."""

    models: Any
    model_module: str | None
    host: str
    http_port: int | None
    grpc_port: int | None
    limits: Limits
    reuse_port: bool
    access_log: bool
    log_level: str | None = None
    malloc_top_pad: int = DEFAULT_MALLOC_TOP_PAD
    http_protocol: str = "oipcodec"
    codec_threads: int | None = None


def _worker_main(spec: _Spec, conn: Connection) -> None:
    if spec.log_level is not None:
        _configure_logging(spec.log_level)
    try:
        server = Server(
            spec.models,
            host=spec.host,
            http_port=spec.http_port,
            grpc_port=spec.grpc_port,
            limits=spec.limits,
            model_module=spec.model_module,
            reuse_port=spec.reuse_port,
            access_log=spec.access_log,
            http_protocol=spec.http_protocol,
            codec_threads=spec.codec_threads,
        )
        _run_blocking(server, spec.malloc_top_pad, conn)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        if isinstance(exc, OSError):  # a port in use...: one readable line is enough
            log.error("cannot start the server: %s", exc)
        elif not isinstance(exc, (KeyboardInterrupt, SystemExit)):
            log.exception("server process failed")
        raise SystemExit(1) from None


def _reserve(host: str, port: int | None, reuse_port: bool) -> tuple[int | None, Any]:
    """Pick the port for workers that will share it: a free one when ``port`` is 0, held by a
    bound (not listening) SO_REUSEPORT socket so nobody else takes it meanwhile."""
    if port != 0 or not reuse_port:
        return port, None
    family, kind, proto, _, address = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0]
    holder = socket.socket(family, kind, proto)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    holder.bind(address)
    return holder.getsockname()[1], holder


class _Workers:
    """N server processes sharing their ports."""

    def __init__(self, spec: _Spec, workers: int, timeout: float) -> None:
        self.spec = spec
        self.count = workers
        self.timeout = timeout
        self.processes: list[Any] = []
        self.conns: list[Connection] = []
        self.http_port: int | None = None
        self.grpc_port: int | None = None
        self._holders: list[socket.socket] = []

    def start(self) -> None:
        spec = self.spec
        if self.count > 1:
            spec.reuse_port = True
            spec.http_port, h1 = _reserve(spec.host, spec.http_port, True)
            spec.grpc_port, h2 = _reserve(spec.host, spec.grpc_port, True)
            self._holders = [h for h in (h1, h2) if h is not None]
        context = multiprocessing.get_context("spawn")
        try:
            for index in range(self.count):
                parent, child = context.Pipe()
                process = context.Process(
                    target=_worker_main,
                    args=(spec, child),
                    name=f"oipcodec-server-{index}",
                    daemon=True,
                )
                process.start()
                child.close()
                self.processes.append(process)
                self.conns.append(parent)
            for conn, process in zip(self.conns, self.processes, strict=True):
                if not conn.poll(self.timeout):
                    raise RuntimeError(f"server process {process.pid} did not start in time")
                try:
                    message = conn.recv()
                except EOFError:
                    raise RuntimeError(
                        f"server process {process.pid} exited while starting"
                    ) from None
                if message[0] != "started":
                    raise RuntimeError(f"server process failed to start: {message[1]}")
                self.http_port, self.grpc_port = message[1], message[2]
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout: float = 10.0) -> None:
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.send(("stop",))
        for process in self.processes:
            process.join(timeout)
            if process.is_alive():
                process.terminate()
                process.join(5)
            if process.is_alive():
                process.kill()
                process.join()
        for conn in self.conns:
            conn.close()
        for holder in self._holders:
            holder.close()
        self.processes, self.conns, self._holders = [], [], []

    def wait(self, stopping: threading.Event) -> int:
        """Block until ``stopping`` is set or a worker exits; returns the exit status."""
        while not stopping.is_set():
            if any(not p.is_alive() for p in self.processes):
                log.error("a server process exited; stopping the others")
                return 1
            stopping.wait(0.5)
        return 0


def serve(
    models: Models = None,
    *,
    host: str = "127.0.0.1",
    http_port: int | None = 8000,
    grpc_port: int | None = 8001,
    workers: int = 1,
    model_module: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    access_log: bool = False,
    log_level: str | None = "info",
    malloc_top_pad: int = DEFAULT_MALLOC_TOP_PAD,
    http_protocol: str = "oipcodec",
    codec_threads: int | None = None,
) -> int:
    """Serve until SIGINT or SIGTERM; returns an exit status.

    ``workers > 1`` starts that many processes sharing the ports with SO_REUSEPORT (Linux,
    BSD); each has its own copy of the models (``models`` must then pickle, or come from
    ``model_module``), so repository load/unload reaches only the process that got the
    request. ``log_level=None`` leaves logging as the caller configured it.
    ``malloc_top_pad``: bytes of freed memory each glibc malloc arena of the serving
    process keeps for the next request (:func:`oipcodec.server.malloc.set_malloc_top_pad`;
    0 leaves malloc as it is). ``http_protocol``: see :class:`Server`. ``codec_threads``:
    threads per process for large JSON bodies (default: the CPUs this process may use divided
    among the ``workers``, at least 1).
    """
    if log_level is not None:
        _configure_logging(log_level)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    check_malloc_top_pad(malloc_top_pad)
    _check_http_protocol(http_protocol)
    codec_threads = _codec_threads(codec_threads, workers)
    if workers == 1:
        server = Server(
            models,
            host=host,
            http_port=http_port,
            grpc_port=grpc_port,
            limits=limits,
            model_module=model_module,
            access_log=access_log,
            http_protocol=http_protocol,
            codec_threads=codec_threads,
        )
        try:
            _run_blocking(server, malloc_top_pad)
        except OSError as exc:  # a port in use, an address that is not ours
            log.error("cannot start the server: %s", exc)
            return 1
        return 0
    spec = _Spec(
        models, model_module, host, http_port, grpc_port, limits, True, access_log, log_level,
        malloc_top_pad, http_protocol, codec_threads,
    )  # fmt: skip
    pool = _Workers(spec, workers, timeout=60.0)
    # Signals are taken before the workers start: they serve requests before this process has
    # heard from all of them, and a SIGTERM in that window must still stop everything cleanly.
    stopping = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda signum, frame: stopping.set())
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        try:
            pool.start()
        except RuntimeError as exc:
            log.error("cannot start the server: %s", exc)
            return 1
        log.info("%d server processes on HTTP %s, gRPC %s", workers, pool.http_port, pool.grpc_port)
        return pool.wait(stopping)
    finally:
        pool.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s",
        stream=sys.stderr,
    )


# ---------------------------------------------------------------------------------- background


@dataclass(frozen=True)
class RunningServer:
    """Where a :func:`background` server listens."""

    host: str
    http_port: int | None
    grpc_port: int | None

    @property
    def http_address(self) -> str:
        """``host:port`` of the REST endpoint (what tritonclient.http takes as ``url``)."""
        return f"{self.host}:{self.http_port}"

    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    @property
    def grpc_address(self) -> str:
        """``host:port`` of the gRPC endpoint (tritonclient.grpc's ``url``)."""
        return _grpc_address(self.host, self.grpc_port or 0)


@contextlib.contextmanager
def background(
    models: Models = None,
    *,
    host: str = "127.0.0.1",
    http_port: int | None = 0,
    grpc_port: int | None = 0,
    process: bool = True,
    workers: int = 1,
    model_module: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    log_level: str | None = None,
    timeout: float = 60.0,
    malloc_top_pad: int = DEFAULT_MALLOC_TOP_PAD,
    http_protocol: str = "oipcodec",
    codec_threads: int | None = None,
) -> Iterator[RunningServer]:
    """Run a server (free ports by default) for the duration of a ``with`` block::

        with background() as server:
            client = tritonclient.http.InferenceServerClient(server.http_address)

    ``process=True`` (the default) runs it in ``workers`` subprocesses (spawned: ``models``
    must pickle), which keeps the caller's process free of grpc's and the server's state;
    ``process=False`` runs it in a thread of this process. Either way it is stopped, and its
    models unloaded, when the block exits; a subprocess also stops if this process dies.
    ``malloc_top_pad`` is applied in the subprocesses (as :func:`serve`), never to the
    caller's process. ``http_protocol`` and ``codec_threads``: see :func:`serve`.
    """
    check_malloc_top_pad(malloc_top_pad)
    _check_http_protocol(http_protocol)
    codec_threads = _codec_threads(codec_threads, workers)
    if process:
        spec = _Spec(
            models, model_module, host, http_port, grpc_port, limits, workers > 1, False,
            log_level, malloc_top_pad, http_protocol, codec_threads,
        )  # fmt: skip
        pool = _Workers(spec, workers, timeout)
        pool.start()
        try:
            yield RunningServer(host, pool.http_port, pool.grpc_port)
        finally:
            pool.stop()
        return
    if workers != 1:
        raise ValueError("workers > 1 needs process=True")
    server = Server(
        models,
        host=host,
        http_port=http_port,
        grpc_port=grpc_port,
        limits=limits,
        model_module=model_module,
        http_protocol=http_protocol,
        codec_threads=codec_threads,
    )
    started = threading.Event()
    failure: list[BaseException] = []
    state: dict[str, Any] = {}

    def run() -> None:
        loop = _new_loop()
        asyncio.set_event_loop(loop)
        stop = asyncio.Event()
        state["loop"], state["stop"] = loop, stop

        async def main() -> None:
            await server.start()
            started.set()
            try:
                await stop.wait()
            finally:
                await server.stop()

        try:
            loop.run_until_complete(main())
        except BaseException as exc:
            failure.append(exc)
        finally:
            started.set()
            loop.close()

    thread = threading.Thread(target=run, name="oipcodec-server", daemon=True)
    thread.start()
    if not started.wait(timeout) or failure:
        if failure:
            raise RuntimeError(f"the server failed to start: {failure[0]}") from failure[0]
        raise RuntimeError("the server did not start in time")
    try:
        yield RunningServer(host, server.http_port, server.grpc_port)
    finally:
        state["loop"].call_soon_threadsafe(state["stop"].set)
        thread.join(timeout)
