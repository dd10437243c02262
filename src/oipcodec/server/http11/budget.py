"""The body budget: the bytes of request-body buffers a server's connections may reserve.

One :class:`BodyBudget` per server, shared by its connections (docs/serving.md#the-body-budget).
"""

from __future__ import annotations

__all__ = ["BUDGET_BODIES", "BodyBudget"]

#: The default budget of a server's body buffers, in units of its ``max_body_buffer``.
BUDGET_BODIES = 4


class BodyBudget:
    """The bytes of Content-Length body buffers that a server's connections may hold while
    their bodies are still arriving, all connections together (``limit``).

    A buffer is reserved, whole, when the app asks for a body that has not all arrived yet,
    and given back when its last byte arrives (from then on it holds bytes the client sent,
    not a claim) or when it is released unfilled (the client went away, 408, 400, the
    server closed the connection). A body that would take the reserved bytes past ``limit``
    is not refused and does not wait: it is handed to the app in pieces as they arrive, as
    uvicorn does, so its memory is what the client has sent. ``reserved`` is what is held
    now, ``peak`` the most ever held, ``overflows`` how many bodies came in pieces because
    of the limit.
    """

    __slots__ = ("limit", "overflows", "peak", "reserved")

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"a body budget must be >= 0 bytes, got {limit}")
        self.limit = limit
        self.reserved = 0
        self.peak = 0
        self.overflows = 0

    def take(self, size: int) -> bool:
        """Reserve ``size`` bytes if the limit allows; False (and nothing reserved) if not."""
        if self.reserved + size > self.limit:
            self.overflows += 1
            return False
        self.reserved += size
        self.peak = max(self.peak, self.reserved)
        return True

    def give(self, size: int) -> None:
        """Give back ``size`` bytes reserved by :meth:`take`."""
        self.reserved -= size
