"""What the HTTP front ends share: the ASGI types, the one answer type, 405, request bodies.

An answer is ``(status, body, headers)``: the body is bytes, or the parts of a large answer
for a server that takes bytes-like parts (the ``oipcodec.buffers`` scope extension). A route
raises :class:`MethodNotAllowed` for a wrong method; :func:`respond` answers it 405 with
``Allow``, and any other exception with its status and a one-line JSON error (no traceback
reaches a client).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping, Sequence
from typing import Any, TypeVar

import orjson

from oipcodec import rest
from oipcodec.errors import (
    BodyTimeoutError,
    InvalidArgumentError,
    OIPError,
    OverloadedError,
    PayloadTooLargeError,
    RequestError,
    UnavailableError,
    request_error_for,
)
from oipcodec.limits import Limits
from oipcodec.server.metadata import BODY_TIMEOUT_EXTENSION, BUFFERS_EXTENSION

log = logging.getLogger("oipcodec.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: Status, body (bytes, or the parts of a large answer for a server that takes buffers),
#: headers.
Answer = tuple[int, bytes | list[bytes | memoryview], list[tuple[bytes, bytes]]]
#: A route mounted under a first path segment: ``(method, path, parts, scope, receive)``,
#: ``parts`` being the path's segments.
Route = Callable[[str, str, Sequence[str], Scope, Receive], Awaitable[Answer]]

JSON = b"application/json"
BINARY = b"application/octet-stream"
#: Answers smaller than this are joined into one body (one write beats several).
JOIN_BELOW = 1 << 16
#: What sets the body limit, named in every 413 answer.
LIMIT_SETTING = "(oipcodec serve --max-body-bytes, Limits.max_body_bytes)"


class ClientGone(Exception):
    """The client disconnected before its request body arrived."""


class MethodNotAllowed(Exception):
    def __init__(self, allowed: str) -> None:
        self.allowed = allowed


def allow(method: str, allowed: str) -> None:
    if method != allowed:
        raise MethodNotAllowed(allowed)


def json_answer(status: int, document: Any) -> Answer:
    return status, orjson.dumps(document), [(b"content-type", JSON)]


def empty(status: int = 200) -> Answer:
    return status, b"", []


def joined(parts: list[bytes | memoryview], scope: Scope) -> bytes | list[bytes | memoryview]:
    """``parts`` as they are when the server takes bytes-like parts and they are large, else
    joined into one body."""
    if BUFFERS_EXTENSION not in scope.get("extensions", ()) or (
        sum(len(part) for part in parts) < JOIN_BELOW
    ):
        return b"".join(parts)
    return parts


def too_large(size: int, limit: int, qualifier: str = "") -> str:
    return (
        f"request body of {qualifier}{size} bytes is larger than the limit of {limit} bytes "
        f"{LIMIT_SETTING}"
    )


def route_path(scope: Scope) -> str:
    """The path to route on: ``path`` without the ``root_path`` prefix.

    ASGI servers and routers put the mount prefix in ``root_path`` and keep it in ``path`` as
    well (uvicorn's ``--root-path``, Starlette's ``Mount``), so the app strips it itself; a
    path that does not start with it is taken as it is (a proxy that already removed it).
    """
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root) :] or "/"
    return path


async def respond(
    scope: Scope, receive: Receive, send: Send, route: Callable[[str, str], Awaitable[Answer]]
) -> None:
    """Answer one HTTP request with ``route(method, path)``: 405 for
    :class:`MethodNotAllowed`, an error answer for any other exception, nothing when the
    client went away."""
    method: str = scope["method"]
    path = route_path(scope)
    try:
        answer = await route(method, path)
    except ClientGone:
        return
    except Exception as exc:
        answer = failed(exc, method, path)
    status, parts, headers = framed(answer)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    last = len(parts) - 1
    for index, part in enumerate(parts):
        await send({"type": "http.response.body", "body": part, "more_body": index < last})


def failed(exc: Exception, method: str, path: str) -> Answer:
    """The answer to a route that raised ``exc``: 405 with ``Allow`` for
    :class:`MethodNotAllowed`, else :func:`error_answer`."""
    if isinstance(exc, MethodNotAllowed):
        status, body, headers = json_answer(405, {"error": f"method {method} not allowed"})
        headers.append((b"allow", exc.allowed.encode()))
        return status, body, headers
    return error_answer(exc, method, path)


def framed(answer: Answer) -> tuple[int, list[bytes | memoryview], list[tuple[bytes, bytes]]]:
    """An answer as it is sent: its status, its body's parts, its headers with
    ``content-length`` last (every HTTP front end frames its answers with this one call)."""
    status, body, headers = answer
    if isinstance(body, list):
        parts, size = body, sum(len(part) for part in body)
    else:  # the common small answer: no generator
        parts, size = [body], len(body)
    headers.append((b"content-length", b"%d" % size))
    return status, parts, headers


def error_answer(exc: Exception, method: str, path: str) -> Answer:
    """The answer to a request that failed with ``exc``, logged.

    A function of its own so that no frame that is in the traceback of ``exc`` keeps a
    reference to ``exc`` (its RequestError may be ``exc`` itself): that cycle would keep the
    failed request's frames, and the request body and inflated bytes in them, alive until
    the cycle collector runs."""
    error = request_error_for(exc)
    if isinstance(exc, (RequestError, OIPError)):
        log.info("%s %s -> %d: %s", method, path, error.http_status, error.message)
    else:
        log.exception("%s %s failed", method, path)
    headers = [(b"content-type", JSON)]
    if isinstance(error, BodyTimeoutError):
        headers.append((b"connection", b"close"))  # the rest of the body never came
    elif isinstance(error, OverloadedError) and error.retry_after is not None:
        headers.append((b"retry-after", b"%d" % error.retry_after))
    return error.http_status, rest.error_body(error.message), headers


async def receive_part(scope: Scope, receive: Receive, limits: Limits) -> Message:
    """The next part of a request body, waiting at most ``limits.body_timeout_seconds``.

    The wait is bounded by a timer that cancels this task, not by ``asyncio.wait_for``, which
    (before Python 3.12) wraps every call in a task of its own, a cost that shows on small
    requests (docs/measurements.md#rest-front-end). A server that times out a stalled body
    itself (the ``oipcodec.body_timeout`` scope extension) hands over a whole body in one
    message and is left to it: a timer here would bound the whole body's time."""
    if BODY_TIMEOUT_EXTENSION in scope.get("extensions", ()):
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        return message
    timeout = limits.body_timeout_seconds
    task = asyncio.current_task()
    assert task is not None
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    timer = asyncio.get_running_loop().call_later(timeout, expire)
    try:
        message = await receive()
    except asyncio.CancelledError:
        if not expired:
            raise
        if sys.version_info >= (3, 11):
            task.uncancel()
        raise BodyTimeoutError(
            f"the request body stopped arriving: nothing for {timeout:g} s"
        ) from None
    finally:
        timer.cancel()
    if message["type"] == "http.disconnect":
        raise ClientGone
    return message


async def read_body(
    scope: Scope, headers: dict[bytes, bytes], receive: Receive, limits: Limits
) -> Any:
    """The whole request body (bytes, or a bytearray from oipcodec's protocol), refused with
    413 as soon as it is known to be too large."""
    limit = limits.max_body_bytes
    declared = headers.get(b"content-length")
    length = None
    if declared is not None:
        try:
            length = int(declared)
        except ValueError:
            raise InvalidArgumentError(f"invalid Content-Length {declared!r}") from None
        if length > limit:
            raise PayloadTooLargeError(too_large(length, limit))
    message = await receive_part(scope, receive, limits)
    chunk: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        return chunk  # the common case: one message, no copy
    # The parts, joined once at the end: one copy, into memory that is not zeroed first
    # (filling a buffer of the announced size part by part costs more on large bodies:
    # docs/measurements.md#rest-front-end).
    chunks = [chunk]
    total = len(chunk)
    bound = limit if length is None else length
    while message.get("more_body", False) and total <= bound:
        message = await receive_part(scope, receive, limits)
        chunk = message.get("body", b"")
        chunks.append(chunk)
        total += len(chunk)
    if length is not None and total > length:
        raise InvalidArgumentError("the body is longer than its Content-Length")
    if total > limit:
        more = message.get("more_body", False)
        raise PayloadTooLargeError(too_large(total, limit, "at least " if more else ""))
    return b"".join(chunks)


_T = TypeVar("_T")


#: The error of a request whose client went away while it waited in a model's queue.
CLIENT_GONE = "the client went away before its answer was ready"


async def while_connected(receive: Receive, work: Coroutine[Any, Any, _T]) -> _T:
    """``work``, cancelled if the client goes away first (ASGI's ``http.disconnect``, which
    ``receive`` gives once the body was read): a request waiting in a dynamic batch's queue
    then leaves it, and a generate request stops its model. Only where the wait may be long:
    it costs a task per request."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(receive())
    try:
        await asyncio.wait((task, watcher), return_when=asyncio.FIRST_COMPLETED)
        if not task.done() and watcher.result().get("type") == "http.disconnect":
            task.cancel()
            raise UnavailableError(CLIENT_GONE)
        return await task
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
