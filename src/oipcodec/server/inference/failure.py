"""The server's one failure path: what a model's request answers when ``predict`` raises,
or when it cannot be written into its dynamic batch (a :class:`RequestError` the model raised
stays itself; anything else is an internal error naming the model, logged with its
traceback; no traceback reaches a client).
"""

from __future__ import annotations

import logging

from oipcodec.errors import RequestError, request_error_for
from oipcodec.server.model import Model

__all__ = ["failure"]

log = logging.getLogger("oipcodec.server")


def failure(model: Model, exc: Exception, executed: bool = True) -> RequestError:
    """What a model's request failing with ``exc`` answers: a :class:`RequestError` raised
    stays itself; anything else is an internal error naming the model. ``executed``:
    ``predict`` raised it (marked so for the statistics), else writing the request into its
    dynamic batch did.

    Parameters
    ----------
    model
        The model.
    exc
        What was raised.
    executed
        Whether ``predict`` ran.
    """
    error = request_error_for(exc)
    if error.http_status >= 500 and not isinstance(exc, RequestError):
        if executed:
            log.error("model %r failed", model.name, exc_info=exc)
            hint = ""
            if "read-only" in str(exc) and not model.writable_inputs:
                hint = (
                    " (its inputs are read-only views of the request: set writable_inputs = "
                    "True on the model to get writable copies)"
                )
            error = type(error)(f"model '{model.name}' failed: {type(exc).__name__}: {exc}{hint}")
        else:
            log.error("model %r: writing a request into its batch failed", model.name, exc_info=exc)
            error = type(error)(f"model '{model.name}': {type(exc).__name__}: {exc}")
    if executed:
        error.executed = True
    return error
