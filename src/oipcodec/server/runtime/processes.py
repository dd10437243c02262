"""Worker processes: ``config.workers`` spawned servers sharing their ports (SO_REUSEPORT)."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import pickle
import socket
import sys
import types
from collections.abc import Iterator, Sized
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
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
        launch = _launch_context(spec)
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
                with launch():
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
                    process.join(5)
                    rerun = launch is not _bare_main  # the script re-ran: its message is above
                    raise RuntimeError(
                        f"server process {process.pid} exited while starting"
                        f" (exit code {process.exitcode})"
                        + (" after re-running __main__ for its models" if rerun else "")
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
        """Stop the processes (each unloads its models), at most ``timeout`` seconds each."""
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.send(("stop",))
        for process in self.processes:
            process.join(timeout)
            if process.is_alive():
                log.warning("server process %d did not stop in %g s: SIGTERM", process.pid, timeout)
                process.terminate()
                process.join(5)
            if process.is_alive():
                log.warning("server process %d ignored SIGTERM for 5 s: SIGKILL", process.pid)
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

    def wait(self, stopping: Sized) -> int:
        """Block until ``stopping`` is not empty (the list a signal handler appends to) or a
        worker exits; returns the exit status."""
        sentinels = [process.sentinel for process in self.processes]
        while not stopping:
            # A signal's handler runs inside this wait, which then goes on for the rest of
            # its 0.1 s before ``stopping`` is looked at again.
            if multiprocessing.connection.wait(sentinels, timeout=0.1):
                log.error("a server process exited; stopping the others")
                return 1
        return 0


# A spawned process re-runs the caller's main module (its ``__file__`` or ``__spec__`` travels
# in the preparation data) so that classes defined there unpickle; in a script without an
# ``if __name__ == "__main__":`` guard that re-runs the script, whose ``background()`` then fails
# in 72 lines. Decision: when the models pickle without ``__main__`` (the demo models, models of
# a module: every case but a class defined in the script) the process starts with a bare
# ``__main__``, so no guard is needed and start-up skips the script; models defined in
# ``__main__`` keep the re-run (it works under a guard), and without a file to re-run (``python
# -c``, a notebook) are refused in one line, since no process could import them.
_NOT_IMPORTABLE = (
    "{what} is defined in __main__ and has no file a server process could import it from:"
    " move it to a module, or run the server in a thread (background(..., process=False))"
)
_UNGUARDED = (
    "the server process re-ran {path} to import the models defined there, and it started a"
    ' server again: put the code that starts it under `if __name__ == "__main__":`, move the'
    " models to a module, or run the server in a thread (background(..., process=False))"
)


def _launch_context(spec: _Spec) -> Any:
    """How to start a worker for ``spec``: with ``__main__`` hidden from spawn when ``spec``
    pickles without it (see above), else as spawn does; raises ``RuntimeError`` in one line
    when ``spec`` needs a ``__main__`` that no process can import."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # This is a worker re-running the caller's script, which started a server again.
        main = sys.modules.get("__mp_main__")  # where spawn runs the script
        path = getattr(main, "__file__", None) or "the script"
        raise SystemExit("oipcodec: " + _UNGUARDED.format(path=path))
    with _bare_main():
        try:
            ForkingPickler.dumps(spec)
            return _bare_main
        except (pickle.PicklingError, AttributeError, TypeError):
            pass
    ForkingPickler.dumps(spec)  # a model that cannot pickle at all raises here, as in start()
    if not _main_reruns(sys.modules.get("__main__")):
        raise RuntimeError(_NOT_IMPORTABLE.format(what=_main_name(spec)))
    return contextlib.nullcontext


def _main_reruns(main: object) -> bool:
    """Whether spawn re-runs ``main`` in a child: by its module name (``python -m``; spawn
    skips a ``pkg.__main__``), else by its file (``python file.py``)."""
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None:
        return not (name == "__main__" or name.endswith(".__main__"))
    return getattr(main, "__file__", None) is not None


def _main_name(spec: _Spec) -> str:
    """What in ``spec.models`` comes from ``__main__`` (for the error message)."""
    models = spec.models if isinstance(spec.models, (list, tuple)) else []
    for model in models:
        if type(model).__module__ == "__main__":
            return f"model class {type(model).__qualname__!r}"
    return "something the models refer to"


@contextlib.contextmanager
def _bare_main() -> Iterator[None]:
    """``sys.modules["__main__"]`` is an empty module for the block: spawn then sends no main
    module to re-run, and pickling anything defined in the real one fails."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main
