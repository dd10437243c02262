"""What a client call raises when the codec is not at fault: the server said no, the call
timed out, or the server could not be reached.

All are :class:`ClientError`, an :class:`~oipcodec.OIPError` (so also a ``ValueError``);
codec errors (:class:`~oipcodec.EncodeError` for inputs that cannot be sent,
:class:`~oipcodec.DecodeError` for an answer that does not parse) pass through unchanged.
"""

from __future__ import annotations

from oipcodec.errors import OIPError

__all__ = [
    "GRPC_CODE_FOR_STATUS",
    "HTTP_STATUS_FOR_CODE",
    "ClientError",
    "RequestTimeoutError",
    "ServerConnectionError",
    "ServerError",
]

#: The HTTP status Triton answers for each gRPC status code (WIRE-NOTES.md, "Errors").
HTTP_STATUS_FOR_CODE = {
    "INVALID_ARGUMENT": 400,
    "NOT_FOUND": 404,
    "UNAVAILABLE": 503,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "RESOURCE_EXHAUSTED": 413,
    "FAILED_PRECONDITION": 400,
    "ALREADY_EXISTS": 409,
    "PERMISSION_DENIED": 403,
    "UNAUTHENTICATED": 401,
}
#: The gRPC status code name for an HTTP status (the inverse map; other statuses: UNKNOWN).
GRPC_CODE_FOR_STATUS = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    413: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    409: "ALREADY_EXISTS",
}


class ClientError(OIPError):
    """A client call failed for a reason outside the codec. ``url`` names the server (an
    HTTP URL or a gRPC target)."""

    def __init__(self, reason: str, *, url: str | None = None) -> None:
        self.url = url
        super().__init__(reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_client_error, (type(self), self.reason, self.url))


def _rebuild_client_error(cls: type[ClientError], reason: str, url: str | None) -> ClientError:
    error = ClientError.__new__(cls)
    ClientError.__init__(error, reason, url=url)
    return error


class ServerError(ClientError):
    """The server answered with an error.

    ``status`` is the HTTP status (over gRPC: Triton's status for the gRPC code, e.g. 404 for
    NOT_FOUND; ``None`` for an error message inside a ModelStreamInfer stream), ``code`` the
    gRPC status code name (over HTTP: the name for the status, e.g. ``"NOT_FOUND"``), and
    ``message`` the server's own message (the ``error`` of its JSON body, or the gRPC details).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "UNKNOWN",
        url: str | None = None,
    ) -> None:
        self.message = message
        self.status = status
        self.code = code
        where = f" from {url}" if url else ""
        label = f"HTTP {status} {code}" if status is not None else code
        ClientError.__init__(self, f"{label}{where}: {message}", url=url)

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_server_error,
            (type(self), self.message, self.status, self.code, self.url),
        )


def _rebuild_server_error(
    cls: type[ServerError], message: str, status: int | None, code: str, url: str | None
) -> ServerError:
    return cls(message, status=status, code=code, url=url)


class RequestTimeoutError(ClientError):
    """No answer within the call's timeout (HTTP) or deadline (gRPC DEADLINE_EXCEEDED)."""


class ServerConnectionError(ClientError):
    """The server could not be reached, or the connection broke before an answer came."""
