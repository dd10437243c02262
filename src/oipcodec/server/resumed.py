"""A coroutine started outside any task, continued by one: what the native front ends share.

Both native front ends (HTTP/1.1's fast path, the HTTP/2 gRPC server) run a handler's coroutine
with one ``send(None)`` in the connection's own call, so that a model that answers at once
costs no task; only one that stops on a future becomes a task, through :class:`Resumed`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

__all__ = ["Resumed"]

T = TypeVar("T")


class Resumed(Generic[T]):
    """The rest of a coroutine that stopped on a future outside any task: awaiting this hands
    that future to the awaiting task, then drives the coroutine on, in ``context`` when given
    (the one its first step ran in; default: the awaiting task's)."""

    __slots__ = ("_context", "_coroutine", "_waiting")

    def __init__(
        self,
        coroutine: Coroutine[Any, Any, T],
        waiting: Any,
        context: contextvars.Context | None = None,
    ) -> None:
        self._coroutine = coroutine
        self._waiting = waiting
        self._context = context

    def __await__(self) -> Generator[Any, Any, T]:
        coroutine, waiting, context = self._coroutine, self._waiting, self._context
        send, throw = coroutine.send, coroutine.throw
        while True:
            try:
                value = yield waiting
            except BaseException as exc:  # the task cancelled: on into the coroutine
                try:
                    waiting = throw(exc) if context is None else context.run(throw, exc)
                except StopIteration as done:
                    return done.value
                continue
            try:
                waiting = send(value) if context is None else context.run(send, value)
            except StopIteration as done:
                return done.value
