"""Worker processes: ``config.workers`` spawned servers sharing their ports (SO_REUSEPORT)."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import socket
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from oipcodec.server.config import ServerConfig, available_cpus
from oipcodec.server.runtime.loading import Models
from oipcodec.server.runtime.server import Server, _configure_logging, _run_blocking
from oipcodec.server.runtime.sockets import _reserve
from oipcodec.server.stats import metrics_directory, remove_directory

__all__ = ["ServerProcesses"]

log = logging.getLogger("oipcodec.server")


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
