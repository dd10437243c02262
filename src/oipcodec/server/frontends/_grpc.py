"""What the gRPC front ends share: a client leaving a stream is no fault of the server.

grpcio is imported only when a stream handler fails, so a process that serves no gRPC port
(and imports a front end for its HTTP routes) never loads it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Iterator

log = logging.getLogger("oipcodec.server")

__all__ = ["client_gone"]


@functools.cache
def _gone() -> tuple[type[BaseException], ...]:
    """What grpcio raises on a write into a stream whose client has gone: its core's failed
    batch (named only in its private cygrpc module), or its usage error once the call is
    finished."""
    import grpc
    from grpc._cython import cygrpc

    return (cygrpc.ExecuteBatchError, grpc.aio.UsageError)


@contextlib.contextmanager
def client_gone(where: str) -> Iterator[None]:
    """Around a streaming handler: a client that goes away mid-stream ends it with one debug
    line instead of grpcio's traceback at ERROR."""
    try:
        yield
    except Exception as exc:  # the except clause's class is known only once grpcio is loaded
        if not isinstance(exc, _gone()):
            raise
        log.debug("%s: the client went away (%s)", where, type(exc).__name__)
