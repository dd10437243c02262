"""The lifecycle: :class:`Server`, REST (uvicorn) and gRPC (grpc.aio) on one event loop and one
registry, started and stopped from async code you own; and the blocking run of one server in
this process's main thread that :func:`~oipcodec.server.runtime.serve` and each worker process
use (signals, uvloop when installed, the malloc pad).

Invariant: the ports are bound before any model loads (a port in use is reported first) and
listen only once the models are loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import socket
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from oipcodec.server.config import ServerConfig, ServerSettings
from oipcodec.server.inference import Pipeline
from oipcodec.server.queue_policy import Overload
from oipcodec.server.runtime.apps import create_rest_app, graphpipe_app, metrics_app
from oipcodec.server.runtime.loading import Models, _registry
from oipcodec.server.runtime.malloc import set_malloc_top_pad
from oipcodec.server.runtime.sockets import _BACKLOG, _bind, _grpc_address
from oipcodec.server.stats import Statistics

if TYPE_CHECKING:  # PEP 692 (typing.Unpack from 3.12); only read by type checkers
    from typing_extensions import Unpack

    from oipcodec.server.frontends.tracing import Tracing
    from oipcodec.server.registry import ModelRegistry

__all__ = ["Server"]

log = logging.getLogger("oipcodec.server")


def _config(config: ServerConfig | None, settings: ServerSettings) -> ServerConfig:
    """``config`` (default: the defaults) with the keyword ``settings`` applied."""
    config = ServerConfig() if config is None else config
    return config.replace(**settings) if settings else config


class _ProcessLines(logging.Filter):
    """Drops uvicorn's "Started/Finished server process [pid]": a process runs one uvicorn per
    port (REST, metrics, GraphPipe), and its own ready and stopped lines say it once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).endswith("server process [%d]")


_PROCESS_LINES = _ProcessLines()


def _uvicorn_server(app: Any, config: ServerConfig) -> Any:
    import uvicorn

    logging.getLogger("uvicorn.error").addFilter(_PROCESS_LINES)  # addFilter adds it once

    limits = config.limits
    http: Any = config.http_protocol
    if http in ("oipcodec", "native"):
        from oipcodec.server.http11 import BodyBudget, HttpProtocol
        from oipcodec.server.http11.native import NativeProtocol, native_protocol_available

        protocol: Any = HttpProtocol
        if http == "native" and native_protocol_available():
            protocol = NativeProtocol
        elif http == "native":
            log.warning("http_protocol 'native' needs the native kernels: using 'oipcodec'")
        http = functools.partial(
            protocol,
            body_timeout=limits.body_timeout_seconds,
            max_body_buffer=limits.max_body_bytes,
            body_budget=BodyBudget(config.body_budget_bytes()),
        )

    class _Uvicorn(uvicorn.Server):
        # The owner of the loop handles signals (Server / serve), not uvicorn.
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    settings = uvicorn.Config(
        app,
        http=http,
        # The app reads neither the client's address nor the scheme, so uvicorn's
        # X-Forwarded-* middleware would only add a layer to every request.
        proxy_headers=False,
        lifespan="off",
        access_log=config.access_log,
        log_config=None,
        server_header=False,
        timeout_graceful_shutdown=5,
    )
    return _Uvicorn(settings)


class Server:
    """The REST and gRPC servers over one model registry, on the running event loop.

    ``models``: Model instances or a :class:`ModelRegistry`; with neither ``models`` nor
    ``config.model_module`` the demo models are served. ``config`` (or keyword arguments
    naming its fields): see :class:`~oipcodec.server.config.ServerConfig`; a port of 0 picks a
    free one (read the actual ports from :attr:`http_port` / :attr:`grpc_port` after
    :meth:`start`), ``None`` disables that protocol; ``workers``, ``log_level`` and
    ``malloc_top_pad`` are for the process running it (:func:`serve`), not read here;
    ``codec_threads`` default: one per CPU this process may use. ``reuse_port``: share the
    ports with other processes (SO_REUSEPORT). ``metrics_dir``: the directory where the
    processes of one server keep their statistics (server/stats.py; default: this process's
    own, in memory); ``config.metrics`` False counts nothing.
    """

    def __init__(
        self,
        models: Models = None,
        *,
        config: ServerConfig | None = None,
        reuse_port: bool = False,
        metrics_dir: str | None = None,
        **settings: Unpack[ServerSettings],
    ) -> None:
        config = _config(config, settings)
        self.config = config
        self.registry = _registry(models, config)
        if not config.metrics:
            self.registry.statistics = None
        elif metrics_dir is not None or self.registry.statistics is None:
            self.registry.statistics = Statistics(metrics_dir)
        overload = Overload(config.max_queued_requests, config.overload_retry_after)
        Pipeline.of(self.registry).overload = overload
        self.host = config.host
        self.http_port = config.http_port
        self.grpc_port = config.grpc_port
        self.metrics_port = config.metrics_port
        self.graphpipe_port = config.graphpipe_port
        self.limits = config.limits
        self.reuse_port = reuse_port
        self.access_log = config.access_log
        self.http_protocol = config.http_protocol
        # Before the REST app, whose metadata lists the trace extension.
        self.tracing = _tracing(self.registry) if config.trace else None
        self.app = create_rest_app(
            self.registry,
            limits=config.limits,
            manage_models=False,
            codec_threads=config.codec_threads,
            server_name=config.server_name,
        )
        self.server_name = config.server_name
        self._http: Any = None
        self._http_task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        self._grpc: Any = None
        self._servicer: Any = None
        self._metrics: Any = None
        self._metrics_task: asyncio.Task[None] | None = None
        self._metrics_socket: socket.socket | None = None
        self._graphpipe: Any = None
        self._graphpipe_task: asyncio.Task[None] | None = None
        self._graphpipe_socket: socket.socket | None = None

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
        # The ports are taken first, so a port in use is reported before any model loads;
        # they listen once the models are loaded (until then a client is refused at once).
        if self.http_port is not None:
            self._socket = _bind(self.host, self.http_port, self.reuse_port, "HTTP")
            self.http_port = self._socket.getsockname()[1]
        if self.metrics_port is not None and self.registry.statistics is not None:
            self._metrics_socket = _bind(self.host, self.metrics_port, self.reuse_port, "metrics")
            self.metrics_port = self._metrics_socket.getsockname()[1]
        if self.graphpipe_port is not None:
            self._graphpipe_socket = _bind(
                self.host, self.graphpipe_port, self.reuse_port, "GraphPipe"
            )
            self.graphpipe_port = self._graphpipe_socket.getsockname()[1]
        if self.grpc_port is not None:
            from oipcodec.server.runtime.apps import create_grpc_server

            self._grpc, self._servicer = create_grpc_server(
                self.registry,
                limits=self.limits,
                reuse_port=self.reuse_port,
                server_name=self.server_name,
                tracing=self.tracing,
                grpc_impl=self.config.grpc_impl,
            )
            address = _grpc_address(self.host, self.grpc_port)
            try:
                port = self._grpc.add_insecure_port(address)
            except RuntimeError as exc:
                raise OSError(f"cannot listen for gRPC on {address}: {exc}") from None
            if port == 0:
                raise OSError(f"cannot listen for gRPC on {address} (is the port in use?)")
            self.grpc_port = port
        await self.registry.load_all()
        for sock in (self._socket, self._metrics_socket, self._graphpipe_socket):
            if sock is not None:
                sock.listen(_BACKLOG)
        if self._socket is not None:
            app = self.app if self.tracing is None else self.tracing.asgi(self.app, self.limits)
            self._http, self._http_task = await self._uvicorn(app, self._socket)
        if self._metrics_socket is not None and self.registry.statistics is not None:
            self._metrics, self._metrics_task = await self._uvicorn(
                metrics_app(self.registry.statistics), self._metrics_socket
            )
        if self._graphpipe_socket is not None:
            assert self.config.graphpipe_model is not None  # ServerConfig checks both go together
            app = graphpipe_app(self.registry, self.config.graphpipe_model, self.limits)
            self._graphpipe, self._graphpipe_task = await self._uvicorn(app, self._graphpipe_socket)
        if self._grpc is not None:
            await self._grpc.start()
        self.app.ready = True
        log.info(
            "oipcodec server ready: HTTP %s, gRPC %s, metrics %s, models %s (pid %d)",
            f"{self.host}:{self.http_port}" if self.http_port is not None else "off",
            f"{self.host}:{self.grpc_port}" if self.grpc_port is not None else "off",
            self._metrics_where(),
            ", ".join(m.name for m in self.registry.models()) or "none",
            os.getpid(),
        )

    def _metrics_where(self) -> str:
        """Where /metrics answers, for the start-up line: its own port, the REST port, or off."""
        if self.registry.statistics is None:
            return "off"
        rest = "HTTP's /metrics" if self.http_port is not None else None
        if self.metrics_port is not None:
            return f"{self.host}:{self.metrics_port}" + (f" and {rest}" if rest else "")
        return f"at {rest}" if rest else "off"

    async def _uvicorn(self, app: Any, sock: socket.socket) -> tuple[Any, asyncio.Task[None]]:
        """A uvicorn server running ``app`` on ``sock``, once it has started."""
        server = _uvicorn_server(app, self.config)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                task.result()  # raises what stopped it
                raise RuntimeError("the HTTP server stopped while starting")
            await asyncio.sleep(0.01)
        return server, task

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
        if self._metrics is not None and self._metrics_task is not None:
            self._metrics.should_exit = True
            await self._metrics_task
            self._metrics = self._metrics_task = None
        if self._graphpipe is not None and self._graphpipe_task is not None:
            self._graphpipe.should_exit = True
            await self._graphpipe_task
            self._graphpipe = self._graphpipe_task = None
        for sock in (self._socket, self._metrics_socket, self._graphpipe_socket):
            if sock is not None:
                sock.close()
        self._socket = self._metrics_socket = self._graphpipe_socket = None
        self.app.close()
        if self.registry.shared_memory is not None:
            self.registry.shared_memory.close()
        await self.registry.unload_all()
        if self.tracing is not None:  # the spans still waiting sent (blocks up to its timeout)
            await asyncio.get_running_loop().run_in_executor(None, self.tracing.shutdown)
            self.tracing = None
        log.info("oipcodec server stopped (pid %d)", os.getpid())

    async def run_until(self, stop: asyncio.Event) -> None:
        """Start, wait for ``stop`` to be set, stop."""
        await self.start()
        try:
            await stop.wait()
        finally:
            await self.stop()


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _run_blocking(server: Server, malloc_top_pad: int, on_started: Any = None) -> None:
    """Run ``server`` on a new event loop in this (main) thread until SIGINT/SIGTERM, or
    until ``on_started`` (a Connection) is readable: the parent's stop request or its exit.
    The process is the server's, so its malloc is tuned for it first (runtime/malloc.py)."""
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
                ports = (
                    server.http_port,
                    server.grpc_port,
                    server.metrics_port,
                    server.graphpipe_port,
                )
                on_started.send(("started", *ports, os.getpid()))
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


def _tracing(registry: ModelRegistry) -> Tracing:
    """The server's traces, installed on its pipeline (``trace=True``)."""
    try:
        from oipcodec.server.frontends.tracing import Tracing
    except ImportError as exc:
        raise RuntimeError(
            f"trace=True needs OpenTelemetry: pip install 'oipcodec[tracing]' ({exc})"
        ) from None
    return Tracing(registry).install()


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s",
        stream=sys.stderr,
    )
