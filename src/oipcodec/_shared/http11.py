"""What the HTTP/1.1 head parser twins (``oipcodec._native.http11``, ``oipcodec._pure.http11``)
share: the three answers of :func:`parse_head` and its contract.

The parser reads a strict subset of RFC 9112 (csrc/oipcodec/http/head.h states it): a
request head in the subset is "fast", one that may still become one is "partial", anything
else "other", which the Python protocol (oipcodec.server.http11) reads as llhttp does. It
never refuses a request itself.
"""

from __future__ import annotations

__all__ = ["CONTRACTS", "HEAD_FAST", "HEAD_OTHER", "HEAD_PARTIAL"]

# What parse_head answers; the native kernel returns head.h's OIP_HTTP_* (the same values).
C_CONSTANTS = ("HEAD_PARTIAL", "HEAD_FAST", "HEAD_OTHER")
HEAD_PARTIAL = 0
HEAD_FAST = 1
HEAD_OTHER = 2

CONTRACTS = {
    "parse_head": """The request head at the start of ``data`` (any bytes-like object), read in
the fast path's strict subset of RFC 9112 (csrc/oipcodec/http/head.h).

Returns ``(kind, head_length, line_length, content_length, header_length, keep_alive,
v10)``: ``kind`` is ``HEAD_FAST`` (a complete head in the subset), ``HEAD_PARTIAL`` (no
empty line yet, nothing outside the subset so far) or ``HEAD_OTHER``; for a fast head,
``head_length`` is its length through the empty line, ``data[:line_length]`` is its
``METHOD SP TARGET``, ``content_length`` and ``header_length``
(Inference-Header-Content-Length) are -1 when absent, ``keep_alive`` is llhttp's
``should_keep_alive`` and ``v10`` whether it is HTTP/1.0. Otherwise the numbers are 0, 0, -1,
-1, False, False.""",
}
