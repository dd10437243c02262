"""Errors a server answers with, and how each protocol spells them.

The classes are defined in :mod:`oipcodec.errors` (every exception of the package is) and
re-exported here: one class per outcome, each carrying the HTTP status Triton uses for it and
the gRPC status code name, both read from the one status table there (not found 404,
unavailable 503, unsupported 501, internal 500, anything else 400). A model's ``predict`` may
raise these to choose the answer; any other exception from a model is an internal error (500),
logged with its traceback on the server and answered with a one-line message.

The base class is :class:`~oipcodec.errors.RequestError` and the body timeout is
:class:`~oipcodec.errors.BodyTimeoutError`; their former names here, ``ServerError`` and
``RequestTimeoutError``, still work with a :class:`DeprecationWarning` (the client's errors
of those names are different classes).
"""

from __future__ import annotations

import warnings
from typing import Any

from oipcodec.errors import (
    BodyTimeoutError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OIPError,
    PayloadTooLargeError,
    RequestError,
    UnavailableError,
    UnsupportedError,
)

__all__ = [
    "BodyTimeoutError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "PayloadTooLargeError",
    "RequestError",
    "UnavailableError",
    "UnsupportedError",
    "from_exception",
]

#: Former names of this module and of :mod:`oipcodec.server`, kept as deprecated aliases.
_DEPRECATED: dict[str, type[RequestError]] = {
    "ServerError": RequestError,
    "RequestTimeoutError": BodyTimeoutError,
}


def _deprecated_name(module: str, name: str) -> type[RequestError]:
    """The class a former name stands for, with a :class:`DeprecationWarning` (for the
    ``__getattr__`` of this module and of :mod:`oipcodec.server`)."""
    try:
        new = _DEPRECATED[name]
    except KeyError:
        raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
    warnings.warn(
        f"{module}.{name} is deprecated: use {module}.{new.__name__} (also in oipcodec.errors); "
        f"oipcodec.client.{name} is the client's error of that name, a different class",
        DeprecationWarning,
        stacklevel=3,
    )
    return new


def __getattr__(name: str) -> Any:
    return _deprecated_name(__name__, name)


def from_exception(exc: BaseException) -> RequestError:
    """The :class:`~oipcodec.errors.RequestError` to answer for ``exc``: itself when it is one;
    a codec error (:class:`~oipcodec.OIPError`) is the client's fault (400); anything else is
    internal."""
    if isinstance(exc, RequestError):
        return exc
    if isinstance(exc, OIPError):
        return InvalidArgumentError(str(exc))
    return InternalError(f"internal error: {type(exc).__name__}: {exc}")
