"""A server in a thread of this process (what :func:`oipcodec.testing.background` runs), and
where a running server listens."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from oipcodec.server.config import ServerConfig
from oipcodec.server.runtime.loading import Models
from oipcodec.server.runtime.server import Server, _new_loop
from oipcodec.server.runtime.sockets import _grpc_address

__all__ = ["RunningServer", "ServerThread"]


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
