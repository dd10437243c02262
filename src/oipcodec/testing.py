"""Helpers for testing models and clients against a real oipcodec server.

:func:`background` runs a server on free ports for the length of a ``with`` block::

    from oipcodec.testing import background

    def test_double() -> None:
        with background([Double()]) as server:
            with HttpClient(server.http_url) as client:
                assert client.infer("double", {"X": np.ones(4, np.float32)}) ...

It needs the ``server`` extra (uvicorn, grpcio). ``oipcodec.server.background``, its former
name, still finds it for one release with a DeprecationWarning.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from oipcodec.server.config import ServerConfig, ServerSettings
from oipcodec.server.runtime import (
    Models,
    RunningServer,
    ServerProcesses,
    ServerThread,
)

if TYPE_CHECKING:  # PEP 692 (typing.Unpack from 3.12); only read by type checkers
    from typing_extensions import Unpack

__all__ = ["RunningServer", "background"]

#: What :func:`background` runs with when no ``config`` is given: free ports, and the
#: caller's logging left as it is.
BACKGROUND_DEFAULTS = ServerConfig(http_port=0, grpc_port=0, log_level=None)


@contextlib.contextmanager
def background(
    models: Models = None,
    *,
    config: ServerConfig | None = None,
    process: bool = True,
    timeout: float = 60.0,
    **settings: Unpack[ServerSettings],
) -> Iterator[RunningServer]:
    """Run a server (free ports by default) for the duration of a ``with`` block::

        with background() as server:
            client = tritonclient.http.InferenceServerClient(server.http_address)

    Either way (process or thread) the server is stopped, and its models unloaded, when the
    block exits; a subprocess also stops if this process dies.

    Parameters
    ----------
    models
        The models to serve, as :func:`oipcodec.server.serve` takes them (default: the demo
        models).
    config
        The settings (default: :data:`BACKGROUND_DEFAULTS`, free ports and no logging set up).
    process
        ``True``: run the server in ``workers`` subprocesses (spawned: ``models`` must pickle),
        which keeps the caller's process free of grpc's and the server's state; they do not
        re-run the caller's script, unless the models are defined in it (then it needs an
        ``if __name__ == "__main__":`` guard). ``False``: in a thread of this process.
    timeout
        Seconds to wait for the server to start (and, in a thread, to stop).
    **settings
        :class:`~oipcodec.server.config.ServerConfig` fields applied over ``config``
        (``background(models, http_port=None)``). ``malloc_top_pad`` and ``log_level`` apply
        to the subprocesses (as :func:`~oipcodec.server.serve`), never to the caller's process.
    """
    config = BACKGROUND_DEFAULTS if config is None else config
    if settings:
        config = config.replace(**settings)
    runner: ServerProcesses | ServerThread
    if process:
        runner = ServerProcesses(models, config, timeout)
    else:
        runner = ServerThread(models, config, timeout)
    runner.start()
    try:
        yield RunningServer(
            config.host,
            runner.http_port,
            runner.grpc_port,
            runner.metrics_port,
            runner.graphpipe_port,
        )
    finally:
        runner.stop()
