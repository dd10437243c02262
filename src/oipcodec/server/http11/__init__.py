"""The HTTP/1.1 transport: grammar (no I/O), body budget, asyncio protocol, ASGI request cycle.

It imports nothing else of :mod:`oipcodec.server` (the kernels' receive buffers only), so it
can be read, fuzzed and replaced on its own; docs/serving.md#the-http11-transport says what it
does per RFC 9112.
"""

from oipcodec.server.http11.budget import BUDGET_BODIES, BodyBudget
from oipcodec.server.http11.protocol import BODY_TIMEOUT_EXTENSION, BUFFERS_EXTENSION, HttpProtocol

__all__ = [
    "BODY_TIMEOUT_EXTENSION",
    "BUDGET_BODIES",
    "BUFFERS_EXTENSION",
    "BodyBudget",
    "HttpProtocol",
]
