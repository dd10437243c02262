"""The native HTTP/1.1 front end (issue 45): the fast path in C, oipcodec's protocol behind it.

:class:`NativeProtocol` is what uvicorn runs for ``http_protocol="native"``, made with the
same arguments as :class:`~oipcodec.server.http11.HttpProtocol`. Per read, it answers every
complete request in the buffer that is in the fast path, in order and with one write: the head
read by csrc/oipcodec/http/head.h (a strict subset of RFC 9112, each accepted head checked
against llhttp by tools/http11_fuzz.py), its ``METHOD SP TARGET`` matched byte for byte
against the app's :class:`~oipcodec.server.http11.fastpath.FastPath` routes, a probe answered
from bytes kept ready, an inference by one ``Slot.infer`` call (an awaiting model: a task).

At the first request that is anything else, once the answers it owes are written, the
connection is handed to :class:`~oipcodec.server.http11.HttpProtocol` for good, with the bytes
not consumed yet: a head outside the subset or over 8 KiB, a body over 64 KiB (MAX_FAST_HEAD,
MAX_FAST_BODY in _native/http11.pyx), a route not in the table (a query string, HEAD, any other
path), a request the slot declines, and a request (head or body) not complete PIECE_WAIT after
the first read that left it incomplete (so a slow client meets the Python protocol's head and
body timeouts, 408 and 431, unchanged, that much later). With uvicorn's access
log on, or an app without a fast path, every connection is handed over at once. The
keep-alive wait (``timeout_keep_alive``) is kept as the Python protocol keeps it.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
from typing import Any

from oipcodec.server.http11.grammar import STATUS_LINES
from oipcodec.server.http11.protocol import HttpProtocol

__all__ = ["NativeProtocol", "native_protocol_available"]

access_log = logging.getLogger("uvicorn.access")

#: Whether the native front end is built (without it, the Python protocol serves).
_BUILT = importlib.util.find_spec("oipcodec._native.http11") is not None


def _fast_path_of(app: Any) -> Any:
    """fastpath.fast_path_of(app), imported when first needed (it imports the REST app)."""
    return importlib.import_module("oipcodec.server.http11.fastpath").fast_path_of(app)


def native_protocol_available() -> bool:
    """Whether the native front end is built (and the pure kernels are not chosen)."""
    from oipcodec import kernels

    return _BUILT and kernels.IMPLEMENTATION == "native"


if _BUILT:
    from oipcodec._native.http11 import Connection

    class NativeProtocol(Connection, asyncio.BufferedProtocol):
        """One connection: the fast path, then (for good) the Python protocol. Takes
        :class:`HttpProtocol`'s arguments; ``fast_path`` (a FastPath, or None: hand every
        connection over) defaults to the app's."""

        __slots__ = ()  # (the Connection's fields are C members)

        def __init__(
            self,
            config: Any,
            server_state: Any,
            app_state: dict[str, Any] | None = None,
            _loop: asyncio.AbstractEventLoop | None = None,
            *,
            fast_path: Any = ...,
            **options: Any,
        ) -> None:
            if not config.loaded:
                config.load()
            if config.access_log and access_log.hasHandlers():
                fast_path = None  # the Python protocol logs each request
            elif fast_path is ...:
                fast_path = _fast_path_of(config.loaded_app)
            super().__init__(
                config,
                server_state,
                app_state,
                _loop,
                fast_path=fast_path,
                make_python=HttpProtocol,
                status_lines=STATUS_LINES,
                **options,
            )

else:
    NativeProtocol = HttpProtocol  # type: ignore[assignment,misc]
