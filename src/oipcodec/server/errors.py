"""Errors a server answers with, and how each protocol spells them.

One exception class per outcome, each carrying the HTTP status Triton uses for it and the gRPC
status code name: WIRE-NOTES.md, "Errors: ... Triton's status map: not found 404, unavailable
503, unsupported 501, internal 500, anything else 400". A model's ``predict`` may raise these
to choose the answer; any other exception from a model is an internal error (500), logged with
its traceback on the server and answered with a one-line message.
"""

from __future__ import annotations

from oipcodec.errors import OIPError

__all__ = [
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "PayloadTooLargeError",
    "RequestTimeoutError",
    "ServerError",
    "UnavailableError",
    "UnsupportedError",
    "from_exception",
]


class ServerError(Exception):
    """An error answered to the client: HTTP status ``http_status`` with body
    ``{"error": message}``, or gRPC status ``grpc_code`` (a ``grpc.StatusCode`` member name)
    with the message as details."""

    http_status = 400
    grpc_code = "INVALID_ARGUMENT"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgumentError(ServerError):
    """The request is malformed or does not fit the model (400, INVALID_ARGUMENT)."""


class NotFoundError(ServerError):
    """No such model, version or endpoint (404, NOT_FOUND)."""

    http_status = 404
    grpc_code = "NOT_FOUND"


class UnavailableError(ServerError):
    """The model exists but is not loaded, or the server is shutting down (503, UNAVAILABLE)."""

    http_status = 503
    grpc_code = "UNAVAILABLE"


class UnsupportedError(ServerError):
    """A protocol feature this server does not implement (501, UNIMPLEMENTED)."""

    http_status = 501
    grpc_code = "UNIMPLEMENTED"


class InternalError(ServerError):
    """The model failed (500, INTERNAL)."""

    http_status = 500
    grpc_code = "INTERNAL"


class PayloadTooLargeError(ServerError):
    """The request body is larger than the configured limit (413, RESOURCE_EXHAUSTED)."""

    http_status = 413
    grpc_code = "RESOURCE_EXHAUSTED"


class RequestTimeoutError(ServerError):
    """The request body stopped arriving (408, DEADLINE_EXCEEDED); the connection is closed."""

    http_status = 408
    grpc_code = "DEADLINE_EXCEEDED"


def from_exception(exc: BaseException) -> ServerError:
    """The :class:`ServerError` to answer for ``exc``: itself when it is one; a codec error
    (:class:`~oipcodec.OIPError`) is the client's fault (400); anything else is internal."""
    if isinstance(exc, ServerError):
        return exc
    if isinstance(exc, OIPError):
        return InvalidArgumentError(str(exc))
    return InternalError(f"internal error: {type(exc).__name__}: {exc}")
