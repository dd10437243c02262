"""``serve``: run a server until SIGINT or SIGTERM, in this process or in worker processes."""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING

from oipcodec.server.config import ServerConfig, ServerSettings
from oipcodec.server.runtime.loading import Models
from oipcodec.server.runtime.processes import ServerProcesses
from oipcodec.server.runtime.server import Server, _config, _configure_logging, _run_blocking

if TYPE_CHECKING:  # PEP 692 (typing.Unpack from 3.12); only read by type checkers
    from typing_extensions import Unpack

__all__ = ["serve"]

log = logging.getLogger("oipcodec.server")


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
    (:func:`oipcodec.server.runtime.malloc.set_malloc_top_pad`; 0 leaves malloc as it is).
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
    with _noting_signals() as signals:
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
            return pool.wait(signals)
        finally:
            pool.stop()


@contextlib.contextmanager
def _noting_signals() -> Iterator[list[int]]:
    """SIGINT and SIGTERM appended to the list yielded; the previous handlers back after.

    The handler only appends: a handler runs on the main thread between two of its steps, so
    one that takes a lock (``threading.Event.set``) deadlocks when the signal lands while that
    thread holds the lock (``Event.wait`` does, around each of its timeouts)."""
    signals: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, frame: signals.append(signum))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield signals
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
