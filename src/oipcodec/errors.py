"""Every exception of oipcodec, in one tree under :class:`OIPError` (as msgspec's).

::

    OIPError                      the root: catch it to catch anything oipcodec raises
    ├── DecodeError, EncodeError, DatatypeError, ShapeError   codec errors, also ValueError
    │   └── LimitError (a DecodeError), BytesTensorError (also struct.error)
    ├── ClientError               a client call failed outside the codec (not a ValueError)
    │   └── ServerError, RequestTimeoutError (TimeoutError), ServerConnectionError
    │       (ConnectionError)
    ├── RequestError              what a server answers a request with (a model may raise it)
    └── RepositoryError (ValueError), WorkloadError (ValueError), BenchError

A message says where (tensor, element index, byte offset) and what was expected; the codec
names the tensor with :meth:`OIPError.for_tensor`. The status table maps each error kind (a
gRPC code name) to its HTTP status, for every protocol. docs/api/errors.md.
"""

from __future__ import annotations

import struct

__all__ = [
    "GRPC_CODE_FOR_STATUS",
    "HTTP_STATUS_FOR_CODE",
    "AlreadyExistsError",
    "BenchError",
    "BodyTimeoutError",
    "BytesTensorError",
    "ClientError",
    "DatatypeError",
    "DecodeError",
    "EncodeError",
    "InternalError",
    "InvalidArgumentError",
    "LimitError",
    "NotFoundError",
    "OIPError",
    "OverloadedError",
    "PayloadTooLargeError",
    "RepositoryError",
    "RequestError",
    "RequestTimeoutError",
    "ServerConnectionError",
    "ServerError",
    "ShapeError",
    "UnavailableError",
    "UnsupportedError",
    "WorkloadError",
    "grpc_code_for",
    "http_status_for",
    "request_error_for",
]

# ----------------------------------------------------------------------------- status table

#: The HTTP status for each error kind, a gRPC status code name: Triton's map (not found 404,
#: unavailable 503, unsupported 501, internal 500, a bad request 400...). Several kinds may
#: share a status; the first one listed for a status is the kind that status stands for.
HTTP_STATUS_FOR_CODE: dict[str, int] = {
    "INVALID_ARGUMENT": 400,
    "NOT_FOUND": 404,
    "UNAVAILABLE": 503,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "RESOURCE_EXHAUSTED": 413,
    "DEADLINE_EXCEEDED": 408,
    "FAILED_PRECONDITION": 400,
    "ALREADY_EXISTS": 409,
    "PERMISSION_DENIED": 403,
    "UNAUTHENTICATED": 401,
}

#: The error kind (gRPC status code name) an HTTP status stands for: the inverse of
#: :data:`HTTP_STATUS_FOR_CODE` (the first kind listed for a status), 405 (a method the
#: endpoint does not take) as UNIMPLEMENTED, and 429 (an overloaded server's answer when it is
#: asked to: :class:`OverloadedError`) as UNAVAILABLE, gRPC's own reading of 429. Other
#: statuses: :func:`grpc_code_for` says UNKNOWN.
GRPC_CODE_FOR_STATUS: dict[int, str] = {405: "UNIMPLEMENTED", 429: "UNAVAILABLE"}
for _code, _status in HTTP_STATUS_FOR_CODE.items():
    GRPC_CODE_FOR_STATUS.setdefault(_status, _code)
del _code, _status


def http_status_for(code: str, default: int = 500) -> int:
    """The HTTP status for a gRPC status code name.

    Parameters
    ----------
    code
        The gRPC status code name (``"NOT_FOUND"``...).
    default
        The answer for a code the table does not list (e.g. UNKNOWN).
    """
    return HTTP_STATUS_FOR_CODE.get(code, default)


def grpc_code_for(status: int, default: str = "UNKNOWN") -> str:
    """The gRPC status code name for an HTTP status.

    Parameters
    ----------
    status
        The HTTP status.
    default
        The answer for a status the table does not list.
    """
    return GRPC_CODE_FOR_STATUS.get(status, default)


# ----------------------------------------------------------------------------- the root


class OIPError(Exception):
    """The root of every oipcodec error; the codec's are also ``ValueError``.

    Parameters
    ----------
    reason
        The message without the location prefix (kept as ``reason``).
    tensor, index, offset
        The location when it is known (else ``None``): the tensor's name, the element's index,
        the byte offset.
    kind
        The tensor's role in messages: ``"input"``, ``"output"`` or ``"tensor"``.
    """

    def __init__(
        self,
        reason: str,
        *,
        tensor: str | None = None,
        index: int | None = None,
        offset: int | None = None,
        kind: str = "tensor",
    ) -> None:
        self.reason = reason
        self.tensor = tensor
        self.index = index
        self.offset = offset
        self.kind = kind
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = []
        if self.tensor is not None:
            where.append(f"{self.kind} '{self.tensor}'")
        if self.index is not None and self.offset is not None:
            where.append(f"element {self.index} at byte offset {self.offset}")
        elif self.index is not None:
            where.append(f"element {self.index}")
        elif self.offset is not None:
            where.append(f"byte offset {self.offset}")
        return ": ".join([*where, self.reason])

    def for_tensor(self, name: str, kind: str = "tensor", offset_base: int = 0) -> OIPError:
        """The same error, of the same class, located in tensor ``name``.

        Parameters
        ----------
        name
            The tensor's name.
        kind
            The role in messages: ``"input"``, ``"output"`` or ``"tensor"``.
        offset_base
            Added to the byte offset: where the text the error's offset counts from starts in a
            larger body.
        """
        offset = None if self.offset is None else self.offset + offset_base
        return type(self)(self.reason, tensor=name, index=self.index, offset=offset, kind=kind)

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only arguments need help to survive pickling (multiprocess servers).
        return (
            _rebuild,
            (type(self), self.reason, self.tensor, self.index, self.offset, self.kind),
        )


def _rebuild(
    cls: type[OIPError],
    reason: str,
    tensor: str | None,
    index: int | None,
    offset: int | None,
    kind: str,
) -> OIPError:
    return cls(reason, tensor=tensor, index=index, offset=offset, kind=kind)


# ----------------------------------------------------------------------------- codec errors


class DecodeError(OIPError, ValueError):
    """Bytes or text received from the wire do not form what the protocol says they must."""


class EncodeError(OIPError, ValueError):
    """A value cannot be written in the requested wire form (wrong type, out of range...)."""


class LimitError(DecodeError):
    """A request exceeds a configured limit (size, element count, depth...).

    Raised before any memory is allocated for the oversized part.
    """


class DatatypeError(OIPError, ValueError):
    """An unknown OIP datatype name, or a numpy dtype that no OIP datatype carries."""


class ShapeError(OIPError, ValueError):
    """An invalid shape (negative or non-integer dimension), or data whose element count does
    not match its shape."""


class BytesTensorError(DecodeError, struct.error):
    """A malformed framed BYTES buffer: a :class:`DecodeError` that is also the
    ``struct.error`` tritonclient raises for it (:mod:`oipcodec.compat.tritonclient`)."""


# ----------------------------------------------------------------------------- client errors


class ClientError(OIPError):
    """A client call failed for a reason outside the codec.

    Not a ``ValueError``: the call's arguments were fine.

    Parameters
    ----------
    reason
        What went wrong.
    url
        The server: an HTTP URL or a gRPC target.
    """

    def __init__(self, reason: str, *, url: str | None = None) -> None:
        self.url = url
        super().__init__(reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_client_error, (type(self), self.reason, self.url))


def _rebuild_client_error(cls: type[ClientError], reason: str, url: str | None) -> ClientError:
    error = cls.__new__(cls)  # OSError subclasses refuse BaseException.__new__
    ClientError.__init__(error, reason, url=url)
    return error


class ServerError(ClientError):
    """The server answered a client call with an error.

    The message reads ``HTTP 404 NOT_FOUND from URL: ...`` or ``gRPC NOT_FOUND from TARGET:
    ...``, as each protocol names its statuses.

    Parameters
    ----------
    message
        The server's own message (the ``error`` of its JSON body, or the gRPC details).
    status
        The HTTP status (over gRPC: Triton's status for the gRPC code, e.g. 404 for
        NOT_FOUND; ``None`` for an error message inside a ModelStreamInfer stream).
    code
        The gRPC status code name (over HTTP: the name for the status, e.g. ``"NOT_FOUND"``).
    url
        The server.
    protocol
        ``"http"`` or ``"grpc"``.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "UNKNOWN",
        url: str | None = None,
        protocol: str = "http",
    ) -> None:
        self.message = message
        self.status = status
        self.code = code
        self.protocol = protocol
        where = f" from {url}" if url else ""
        if protocol == "grpc":
            label = f"gRPC {code}"
        else:
            label = f"HTTP {status} {code}" if status is not None else code
        ClientError.__init__(self, f"{label}{where}: {message}", url=url)

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_server_error,
            (type(self), self.message, self.status, self.code, self.url, self.protocol),
        )


def _rebuild_server_error(
    cls: type[ServerError],
    message: str,
    status: int | None,
    code: str,
    url: str | None,
    protocol: str = "http",
) -> ServerError:
    return cls(message, status=status, code=code, url=url, protocol=protocol)


class RequestTimeoutError(ClientError, TimeoutError):
    """No answer within the call's timeout (HTTP) or deadline (gRPC DEADLINE_EXCEEDED)."""


class ServerConnectionError(ClientError, ConnectionError):
    """The server could not be reached, or the connection broke before an answer came."""


# ----------------------------------------------------------------------------- server errors


class RequestError(OIPError):
    """An error a server answers a request with.

    HTTP status :attr:`http_status` with body ``{"error": message}``, or gRPC status
    :attr:`grpc_code` (a ``grpc.StatusCode`` member name) with the message as details. A model's
    ``predict`` raises a subclass to choose the answer; any other exception from a model is
    answered as an :class:`InternalError`. The status comes from the one table,
    :data:`HTTP_STATUS_FOR_CODE`, for the class's :attr:`grpc_code`.

    Parameters
    ----------
    message
        The answer's message.
    """

    #: The error kind: a gRPC status code name.
    grpc_code = "INVALID_ARGUMENT"
    #: The HTTP status for :attr:`grpc_code`.
    http_status = HTTP_STATUS_FOR_CODE[grpc_code]
    #: Set by the server when the model's ``predict`` raised this (it ran: an execution in the
    #: inference statistics).
    executed = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "http_status" not in cls.__dict__:
            if cls.grpc_code not in HTTP_STATUS_FOR_CODE:
                raise TypeError(
                    f"{cls.__name__}: grpc_code {cls.grpc_code!r} has no HTTP status in "
                    "oipcodec.errors.HTTP_STATUS_FOR_CODE; set http_status as well"
                )
            cls.http_status = HTTP_STATUS_FOR_CODE[cls.grpc_code]

    def __init__(self, message: str) -> None:
        OIPError.__init__(self, message)
        self.message = message

    def for_tensor(self, name: str, kind: str = "tensor", offset_base: int = 0) -> RequestError:
        """The same answer, its message naming tensor ``name``.

        An ``except OIPError`` that locates codec errors may meet a RequestError too.

        Parameters
        ----------
        name, kind, offset_base
            As in :meth:`OIPError.for_tensor`.
        """
        return type(self)(f"{kind} '{name}': {self.message}")

    def __reduce__(self) -> tuple[object, ...]:
        # As BaseException's: the one argument, then the attributes (``executed``...).
        return (type(self), (self.message,), self.__dict__)


class InvalidArgumentError(RequestError):
    """The request is malformed or does not fit the model (400, INVALID_ARGUMENT)."""


class NotFoundError(RequestError):
    """No such model, version or endpoint (404, NOT_FOUND)."""

    grpc_code = "NOT_FOUND"


class UnavailableError(RequestError):
    """The model exists but is not loaded, or the server is shutting down (503, UNAVAILABLE)."""

    grpc_code = "UNAVAILABLE"


class OverloadedError(UnavailableError):
    """A request refused for want of room: its model's queue is full, or its time in the queue
    ran out (Triton's answer: 503, UNAVAILABLE).

    Parameters
    ----------
    message
        The answer's message.
    retry_after
        Seconds a client should wait before it tries again (the server's
        ``overload_retry_after``): then the HTTP answer is 429 Too Many Requests with a
        ``Retry-After`` header, which many clients and gateways back off on; None: 503, as
        Triton answers. Over gRPC the code stays UNAVAILABLE.
    """

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        if retry_after is not None:
            self.http_status = 429


class UnsupportedError(RequestError):
    """A protocol feature this server does not implement (501, UNIMPLEMENTED)."""

    grpc_code = "UNIMPLEMENTED"


class InternalError(RequestError):
    """The model failed (500, INTERNAL)."""

    grpc_code = "INTERNAL"


class PayloadTooLargeError(RequestError):
    """The request body is larger than the configured limit (413, RESOURCE_EXHAUSTED)."""

    grpc_code = "RESOURCE_EXHAUSTED"


class BodyTimeoutError(RequestError):
    """The request body stopped arriving (408, DEADLINE_EXCEEDED); the connection is closed."""

    grpc_code = "DEADLINE_EXCEEDED"


class AlreadyExistsError(RequestError):
    """A shared-memory region name that is already registered (409, ALREADY_EXISTS, as
    Triton)."""

    grpc_code = "ALREADY_EXISTS"


def request_error_for(exc: BaseException) -> RequestError:
    """The :class:`RequestError` a server answers for an exception.

    Parameters
    ----------
    exc
        Itself when it is a RequestError; another :class:`OIPError` (a codec error) is the
        client's fault (400); anything else is internal (500).
    """
    if isinstance(exc, RequestError):
        return exc
    if isinstance(exc, OIPError):
        return InvalidArgumentError(str(exc))
    return InternalError(f"internal error: {type(exc).__name__}: {exc}")


# ----------------------------------------------------------------------------- loading, bench


class RepositoryError(OIPError, ValueError):
    """A model folder that cannot be served; the message is one line saying why."""


class WorkloadError(OIPError, ValueError):
    """A benchmark request cannot be built for the model: says which input and which option
    to give."""


class BenchError(OIPError):
    """A benchmark run cannot go on (a model's request cannot be built): one line for the
    user."""
