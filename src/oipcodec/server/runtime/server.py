"""Running the server: REST (uvicorn) and gRPC (grpc.aio) on one event loop and one registry.

- :class:`Server`: start/stop from async code you own;
- :func:`serve`: block until SIGINT/SIGTERM (what ``oipcodec serve`` calls); ``workers=N``
  runs N processes that share the ports (SO_REUSEPORT), each with its own registry;
- :class:`ServerProcesses` / :class:`ServerThread`: a server in spawned processes / in a
  thread of this process, started and stopped by their owner (what
  :func:`oipcodec.testing.background` runs its servers with).

Each takes its settings as a :class:`~oipcodec.server.config.ServerConfig`, or as keyword
arguments naming its fields (which override those of a ``config`` given with them).
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
from typing import TYPE_CHECKING, Any

from oipcodec.server.config import HTTP_PROTOCOLS, ServerConfig, ServerSettings
from oipcodec.server.http import RestApp, available_cpus
from oipcodec.server.malloc import set_malloc_top_pad
from oipcodec.server.model import Model
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.repository import ModelRepository, models_offered, where_raised
from oipcodec.server.shm import SharedMemoryRegions
from oipcodec.server.stats import Statistics, metrics_directory, remove_directory

if TYPE_CHECKING:  # PEP 692 (typing.Unpack from 3.12); only read by type checkers
    from typing_extensions import Unpack

__all__ = [
    "HTTP_PROTOCOLS",
    "RunningServer",
    "Server",
    "ServerProcesses",
    "ServerThread",
    "check_ports",
    "load_model_module",
    "serve",
]

log = logging.getLogger("oipcodec.server")

Models = Iterable[Model] | ModelRegistry | None


def _config(config: ServerConfig | None, settings: ServerSettings) -> ServerConfig:
    """``config`` (default: the defaults) with the keyword ``settings`` applied."""
    config = ServerConfig() if config is None else config
    return config.replace(**settings) if settings else config


def load_model_module(module: str) -> list[Model]:
    """The models a module offers: its ``MODELS`` attribute, an iterable of :class:`Model`
    instances or a callable returning one.

    ``module`` is a dotted name (``my.models``), found on ``sys.path`` (``oipcodec serve``
    puts its working directory first there, as uvicorn does), or the path of a Python file
    (``my/models.py``): then the folders above it that are packages (hold an
    ``__init__.py``) make its dotted name, and the folder above them goes first on
    ``sys.path``, so the module imports as that name (relative imports work).

    Raises ``ValueError`` with a one-line message for a module that cannot be imported
    (naming the exception, and the file and line where the module's own code raised it), a
    module without ``MODELS``, and ``MODELS`` holding anything but Model instances (a class
    instead of an instance says so).
    """
    name = _module_name(module)
    try:
        imported = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (
            exc.name is not None
            and name.startswith(exc.name)
            and name[len(exc.name) :][:1] in ("", ".")
        ):
            raise ValueError(
                f"cannot import model module {module!r}: no module named {exc.name!r} on the "
                f"import path (run from the folder that holds it, or give the file path, e.g. "
                f"{name.replace('.', os.sep)}.py)"
            ) from None
        raise ValueError(f"cannot import model module {module!r}: {where_raised(exc)}") from None
    except Exception as exc:
        raise ValueError(f"cannot import model module {module!r}: {where_raised(exc)}") from None
    return models_offered(imported, name)


def _module_name(module: str) -> str:
    """The dotted name of ``module``, a dotted name or a ``.py`` file's path (whose package
    root then goes first on ``sys.path``)."""
    if not module.endswith(".py"):
        return module
    path = os.path.abspath(module)
    if not os.path.isfile(path):
        raise ValueError(f"cannot import model module {module!r}: no such file")
    folder, filename = os.path.split(path)
    parts = [filename[: -len(".py")]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return ".".join(parts)


def _registry(models: Models, config: ServerConfig) -> ModelRegistry:
    from oipcodec.server.demo import demo_models

    regions = SharedMemoryRegions() if config.shared_memory == "system" else None
    if isinstance(models, ModelRegistry):
        if regions is not None and models.shared_memory is None:
            models.shared_memory = regions
        return models
    if config.model_repository is not None:
        if models is not None:
            raise ValueError(
                "models given beside a model_repository: put each into a folder of the "
                "repository (docs/model-repository.md)"
            )
        repository = ModelRepository(
            config.model_repository, config.model_control, config.load_models
        )
        return ModelRegistry(shared_memory=regions, repository=repository)
    model_module = config.model_module
    listed = list(models) if models is not None else []
    if model_module is not None:
        listed += load_model_module(model_module)
    if models is None and model_module is None:
        listed = demo_models()
    return ModelRegistry(listed, shared_memory=regions)


def _bound(host: str, port: int, reuse_port: bool) -> socket.socket:
    """A non-blocking TCP socket bound to ``host:port``, not yet listening: the port is
    taken, and a client connecting is refused at once."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


#: The listen backlog of the REST and metrics sockets.
_BACKLOG = 2048


def _bind(host: str, port: int, reuse_port: bool, kind: str) -> socket.socket:
    """:func:`_bound`, its error naming the port and what it was for."""
    try:
        return _bound(host, port, reuse_port)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        address = _grpc_address(host, port)
        raise OSError(exc.errno, f"cannot listen for {kind} on {address}: {reason}") from None


#: The ports of a configuration: what each is for and the ``oipcodec serve`` option setting it.
_PORTS = (("HTTP", "http_port", "--http-port"), ("gRPC", "grpc_port", "--grpc-port"))


def check_ports(config: ServerConfig) -> None:
    """Raise ``OSError`` naming the first port of ``config`` (HTTP, gRPC, metrics, GraphPipe) that
    another socket listens on, and the ``oipcodec serve`` option that sets it: what ``oipcodec
    serve`` checks before it loads any model. A port of 0 or ``None`` is not checked."""
    ports = [(kind, getattr(config, field), option) for kind, field, option in _PORTS]
    if config.metrics:
        ports.append(("metrics", config.metrics_port, "--metrics-port"))
    ports.append(("GraphPipe", config.graphpipe_port, "--graphpipe-port"))
    for kind, port, option in ports:
        if port:
            try:
                _bind(config.host, port, False, kind).close()
            except OSError as exc:
                raise OSError(exc.errno, f"{exc.strerror} (set by {option})") from None


def _uvicorn_server(app: Any, config: ServerConfig) -> Any:
    import uvicorn

    limits = config.limits
    http: Any = config.http_protocol
    if http == "oipcodec":
        from oipcodec.server.protocol import BodyBudget, HttpProtocol

        http = functools.partial(
            HttpProtocol,
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
        self.host = config.host
        self.http_port = config.http_port
        self.grpc_port = config.grpc_port
        self.metrics_port = config.metrics_port
        self.graphpipe_port = config.graphpipe_port
        self.limits = config.limits
        self.reuse_port = reuse_port
        self.access_log = config.access_log
        self.http_protocol = config.http_protocol
        self.app = RestApp(
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
            from oipcodec.server.grpc_service import create_grpc_server

            self._grpc, self._servicer = create_grpc_server(
                self.registry,
                limits=self.limits,
                reuse_port=self.reuse_port,
                server_name=self.server_name,
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
            self._http, self._http_task = await self._uvicorn(self.app, self._socket)
        if self._metrics_socket is not None and self.registry.statistics is not None:
            from oipcodec.server.metrics import MetricsApp

            self._metrics, self._metrics_task = await self._uvicorn(
                MetricsApp(self.registry.statistics), self._metrics_socket
            )
        if self._graphpipe_socket is not None:
            graphpipe_app = RestApp(
                self.registry,
                limits=self.limits,
                manage_models=False,
                graphpipe_model=self.config.graphpipe_model,
            )
            self._graphpipe, self._graphpipe_task = await self._uvicorn(
                graphpipe_app, self._graphpipe_socket
            )
        if self._grpc is not None:
            await self._grpc.start()
        self.app.ready = True
        log.info(
            "oipcodec server ready: HTTP %s, gRPC %s, metrics %s, models %s (pid %d)",
            f"{self.host}:{self.http_port}" if self.http_port is not None else "off",
            f"{self.host}:{self.grpc_port}" if self.grpc_port is not None else "off",
            f"{self.host}:{self.metrics_port}" if self.metrics_port is not None else "off",
            ", ".join(m.name for m in self.registry.models()) or "none",
            os.getpid(),
        )

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


# ---------------------------------------------------------------------------------- processes


@dataclass
class _Spec:
    """What a worker process needs to build its server (must pickle)."""

    models: Any
    config: ServerConfig
    reuse_port: bool
    #: Where the processes keep their statistics (server/stats.py), summed by whichever
    #: answers a statistics request or a scrape.
    metrics_dir: str | None = None


def _worker_main(spec: _Spec, conn: Connection) -> None:
    if spec.config.log_level is not None:
        _configure_logging(spec.config.log_level)
    try:
        server = Server(
            spec.models,
            config=spec.config,
            reuse_port=spec.reuse_port,
            metrics_dir=spec.metrics_dir,
        )
        _run_blocking(server, spec.config.malloc_top_pad, conn)
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


class ServerProcesses:
    """``config.workers`` server processes (spawned: ``models`` must pickle) sharing their
    ports, each with its own copy of the models.

    :meth:`start` returns once every process listens (the ports are then in
    :attr:`http_port` / :attr:`grpc_port`, a free one picked for a port of 0), or raises
    ``RuntimeError`` when one failed to start or did not within ``timeout`` seconds;
    :meth:`stop` stops them and unloads their models. A process also stops when its parent
    dies. ``config.codec_threads`` default: the CPUs this process may use divided among the
    processes. Several processes keep their statistics in files of a temporary directory
    that this object makes and removes, so every figure covers them all.
    """

    def __init__(self, models: Models, config: ServerConfig, timeout: float = 60.0) -> None:
        threads = config.codec_threads_per_process(available_cpus())
        config = config.replace(codec_threads=threads)
        self.spec = _Spec(models, config, config.workers > 1)
        self.count = config.workers
        self.timeout = timeout
        self.processes: list[Any] = []
        self.conns: list[Connection] = []
        self.http_port: int | None = None
        self.grpc_port: int | None = None
        self.metrics_port: int | None = None
        self.graphpipe_port: int | None = None
        self._holders: list[socket.socket] = []

    def start(self) -> None:
        spec = self.spec
        if self.count > 1:
            config = spec.config
            http_port, h1 = _reserve(config.host, config.http_port, True)
            grpc_port, h2 = _reserve(config.host, config.grpc_port, True)
            metrics_port, h3 = _reserve(config.host, config.metrics_port, True)
            graphpipe_port, h4 = _reserve(config.host, config.graphpipe_port, True)
            spec.config = config.replace(
                http_port=http_port,
                grpc_port=grpc_port,
                metrics_port=metrics_port,
                graphpipe_port=graphpipe_port,
            )
            self._holders = [h for h in (h1, h2, h3, h4) if h is not None]
            if config.metrics:
                spec.metrics_dir = metrics_directory()
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
                self.http_port, self.grpc_port, self.metrics_port, self.graphpipe_port = message[
                    1:5
                ]
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
        if self.spec.metrics_dir is not None:
            remove_directory(self.spec.metrics_dir)
            self.spec.metrics_dir = None

    def wait(self, stopping: threading.Event) -> int:
        """Block until ``stopping`` is set or a worker exits; returns the exit status."""
        while not stopping.is_set():
            if any(not p.is_alive() for p in self.processes):
                log.error("a server process exited; stopping the others")
                return 1
            stopping.wait(0.5)
        return 0


def serve(
    models: Models = None, *, config: ServerConfig | None = None, **settings: Unpack[ServerSettings]
) -> int:
    """Serve until SIGINT or SIGTERM; returns an exit status: 0 after a clean stop, 2 when the
    server cannot start (a port in use, logged in one line naming it), 1 when a worker
    process failed.

    ``config`` (or keyword arguments naming its fields, e.g. ``serve(models,
    http_port=9000)``, which override those of ``config``): see
    :class:`~oipcodec.server.config.ServerConfig`. ``workers > 1`` starts that many processes
    sharing the ports with SO_REUSEPORT (Linux, BSD); each has its own copy of the models
    (``models`` must then pickle, or come from ``model_module``), so repository load/unload
    reaches only the process that got the request. ``log_level=None`` leaves logging as the
    caller configured it. ``malloc_top_pad``: bytes of freed memory each glibc malloc arena of
    the serving process keeps for the next request
    (:func:`oipcodec.server.malloc.set_malloc_top_pad`; 0 leaves malloc as it is).
    ``codec_threads``: threads per process for large JSON bodies (default: the CPUs this
    process may use divided among the ``workers``, at least 1).
    """
    config = _config(config, settings)
    if config.log_level is not None:
        _configure_logging(config.log_level)
    if config.workers == 1:
        server = Server(models, config=config)
        try:
            _run_blocking(server, config.malloc_top_pad)
        except OSError as exc:  # a port in use, an address that is not ours
            log.error("cannot start the server: %s", exc)
            return 2
        return 0
    pool = ServerProcesses(models, config, timeout=60.0)
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
            return 2
        log.info(
            "%d server processes on HTTP %s, gRPC %s",
            config.workers,
            pool.http_port,
            pool.grpc_port,
        )
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
    #: The metrics port (``metrics_port`` set), else ``None``: the metrics are then at
    #: ``/metrics`` on the REST port.
    metrics_port: int | None = None
    #: The GraphPipe port (``graphpipe_port`` set), else ``None``.
    graphpipe_port: int | None = None

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


class ServerThread:
    """A :class:`Server` on its own event loop in a daemon thread of this process.

    :meth:`start` returns once it listens (its ports are then in :attr:`http_port` /
    :attr:`grpc_port`), or raises ``RuntimeError`` when it failed to start or did not within
    ``timeout`` seconds; :meth:`stop` stops it and unloads its models. ``config.workers``
    must be 1; ``log_level`` and ``malloc_top_pad`` are left to the process's owner.
    """

    def __init__(self, models: Models, config: ServerConfig, timeout: float = 60.0) -> None:
        if config.workers != 1:
            raise ValueError("workers > 1 needs processes (ServerProcesses), not a thread")
        self.server = Server(models, config=config)
        self.timeout = timeout
        self._started = threading.Event()
        self._failure: list[BaseException] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="oipcodec-server", daemon=True)

    @property
    def http_port(self) -> int | None:
        return self.server.http_port

    @property
    def grpc_port(self) -> int | None:
        return self.server.grpc_port

    @property
    def metrics_port(self) -> int | None:
        return self.server.metrics_port

    @property
    def graphpipe_port(self) -> int | None:
        return self.server.graphpipe_port

    def _run(self) -> None:
        loop = _new_loop()
        asyncio.set_event_loop(loop)
        stop = asyncio.Event()
        self._loop, self._stop = loop, stop

        async def main() -> None:
            await self.server.start()
            self._started.set()
            try:
                await stop.wait()
            finally:
                await self.server.stop()

        try:
            loop.run_until_complete(main())
        except BaseException as exc:
            self._failure.append(exc)
        finally:
            self._started.set()
            loop.close()

    def start(self) -> None:
        self._thread.start()
        if not self._started.wait(self.timeout) or self._failure:
            if self._failure:
                failure = self._failure[0]
                raise RuntimeError(f"the server failed to start: {failure}") from failure
            raise RuntimeError("the server did not start in time")

    def stop(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        self._thread.join(self.timeout)


def __getattr__(name: str) -> Any:
    # background moved to oipcodec.testing (it imports this module: imported on first use).
    if name == "background":
        from oipcodec.testing import background

        return background
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
