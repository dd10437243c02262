"""Deprecated: the client's errors are in :mod:`oipcodec.errors` (and :mod:`oipcodec.client`)."""

import warnings

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

warnings.warn(
    "oipcodec.client.errors is deprecated and will be removed in the next release: "
    "use oipcodec.errors",
    DeprecationWarning,
    stacklevel=2,
)
