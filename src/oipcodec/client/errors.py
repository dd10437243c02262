"""What a client call raises when the codec is not at fault: the server said no, the call
timed out, or the server could not be reached.

All are :class:`ClientError`, an :class:`~oipcodec.OIPError` (so also a ``ValueError``);
codec errors (:class:`~oipcodec.EncodeError` for inputs that cannot be sent,
:class:`~oipcodec.DecodeError` for an answer that does not parse) pass through unchanged.
The classes and the status table are defined in :mod:`oipcodec.errors` (every exception of
the package is); this module re-exports them under the names they always had here.
"""

from __future__ import annotations

from oipcodec.errors import (
    GRPC_CODE_FOR_STATUS,
    HTTP_STATUS_FOR_CODE,
    ClientError,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
)

__all__ = [
    "GRPC_CODE_FOR_STATUS",
    "HTTP_STATUS_FOR_CODE",
    "ClientError",
    "RequestTimeoutError",
    "ServerConnectionError",
    "ServerError",
]
