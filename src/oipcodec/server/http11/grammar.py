"""The HTTP/1.1 request grammar: request lines, header and trailer lines, chunk-size lines.

Pure functions and patterns, no I/O (after h11). Where RFC 9112 leaves a choice, the choice
is llhttp's (uvicorn's httptools parser), so that a proxy parsing with llhttp and this server
never disagree on where a request ends; docs/serving.md#the-http11-transport lists the choices
and ``fuzz/fuzz_http_framing.py`` checks them differentially.
"""

from __future__ import annotations

import http
import re
import urllib.parse

__all__ = [
    "BAD_NAME",
    "BAD_VALUE",
    "CHUNK_SIZE",
    "CRLF",
    "MAX_CHUNK_LINE",
    "STATUS_LINES",
    "TRAILER_LINE",
    "BadRequest",
    "Head",
    "status_line",
    "tokens",
]

_TCHAR = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]"
_TOKEN = _TCHAR + rb"+"
#: The request methods llhttp (uvicorn's httptools parser) knows for HTTP/1.x; any other
#: token is answered 501, as RFC 9110 9.1 says for a method the server does not recognise.
_METHODS = frozenset(
    b"DELETE GET HEAD POST PUT CONNECT OPTIONS TRACE COPY LOCK MKCOL MOVE PROPFIND PROPPATCH "
    b"SEARCH UNLOCK BIND REBIND UNBIND ACL REPORT MKACTIVITY CHECKOUT MERGE M-SEARCH NOTIFY "
    b"SUBSCRIBE UNSUBSCRIBE PATCH PURGE MKCALENDAR LINK UNLINK SOURCE PRI QUERY".split()
)
#: A request target as llhttp reads one: origin-form (and anything after ``*``) of visible
#: ASCII, or a scheme of letters, ``://``, an authority of llhttp's server characters and a
#: path or query of visible ASCII (no bytes over 0x7e, no controls, no space).
_TARGET = rb"(?:[/*][!-~]*|[A-Za-z]+://[-!$%&'()*+,.0-9:;=@A-Z\[\]_a-z~]*(?:[/?][!-~]*)?)"
_REQUEST_LINE = re.compile(rb"(" + _TOKEN + rb") +(" + _TARGET + rb") +HTTP/1\.([01])")
_ANY_VERSION = re.compile(rb"(" + _TOKEN + rb") +" + _TARGET + rb" +HTTP/\d+(\.\d+)?")
#: Header lines, each ending in CRLF: a token, a colon, a value of visible characters, spaces
#: and tabs (obs-fold continuation lines do not match: RFC 9112 5.2 lets a server reject them).
_HEADER_LINES = re.compile(rb"(?:" + _TOKEN + rb":[\t\x20-\x7e\x80-\xff]*\r\n)*")
#: One trailer field line (without its CRLF): the same grammar as a header line.
TRAILER_LINE = re.compile(_TOKEN + rb":[\t\x20-\x7e\x80-\xff]*")
BAD_NAME = re.compile(rb"[^!#$%&'*+.^_`|~0-9A-Za-z-]")
BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
#: A chunk-size line as llhttp reads it: hex digits, then extensions ``;name[=value]``, the
#: value a token, a quoted-string or (llhttp) token characters then a quoted-string, with no
#: whitespace anywhere (RFC 9112 7.1.1 allows BWS around ``;`` and ``=``; llhttp does not,
#: and neither do we). A name may be empty only before ``=`` or another ``;``.
_CHUNK_EXT = (
    rb";(?:" + _TCHAR + rb"+|(?=[=;]))"
    rb"(?:=" + _TCHAR + rb"*(?:\"(?:[\t !#-\[\]-~\x80-\xff]|\\[\t -~\x80-\xff])*\")?)?"
)
CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]+)(?:" + _CHUNK_EXT + rb")*")
_AUTHORITY = b"-!$%&'()*+,.0123456789:;=@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~"
CRLF = frozenset(b"\r\n")
#: Content-Length must fit in 64 bits, as chunk sizes (16 hex digits); llhttp refuses larger.
_MAX_LENGTH = 1 << 64

#: Longest chunk-size line or trailer section of a chunked body.
MAX_CHUNK_LINE = 1 << 12


def status_line(status: int) -> bytes:
    try:
        phrase = http.HTTPStatus(status).phrase.encode()
    except ValueError:
        phrase = b""
    return b"HTTP/1.1 %d %s\r\n" % (status, phrase)


STATUS_LINES = {status: status_line(status) for status in range(100, 600)}


def tokens(value: bytes) -> set[bytes]:
    """The elements of a comma-separated header value, in lower case."""
    return {t.strip(b" \t") for t in value.lower().split(b",")}


class BadRequest(Exception):
    """A request the protocol answers itself (and then closes the connection)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Head:
    """A parsed request head."""

    __slots__ = ("chunked", "close", "continue_", "headers", "length", "method", "target", "v10")

    def __init__(self, head: bytes) -> None:
        line_end = head.find(b"\r\n")
        request_line = head if line_end < 0 else head[:line_end]
        match = _REQUEST_LINE.fullmatch(request_line) or _ANY_VERSION.fullmatch(request_line)
        if match is None:
            raise BadRequest(400, "malformed HTTP request line")
        if match.group(1) not in _METHODS:
            raise BadRequest(501, f"unknown method {match.group(1).decode('ascii')!r}")
        if match.re is _ANY_VERSION:
            raise BadRequest(505, "only HTTP/1.0 and HTTP/1.1 are served")
        self.method = match.group(1).decode("ascii")
        self.target = match.group(2)
        self.v10 = match.group(3) == b"0"
        lines = b"" if line_end < 0 else head[line_end + 2 :] + b"\r\n"
        if _HEADER_LINES.fullmatch(lines) is None:
            raise BadRequest(400, "malformed HTTP header line")
        headers = []
        length: int | None = None
        codings: list[bytes] | None = None  # each Transfer-Encoding element, empty ones too
        connection = b""
        self.continue_ = False
        for line in lines.split(b"\r\n")[:-1]:
            name, _, raw = line.partition(b":")
            name = name.lower()
            value = raw.strip(b" \t")
            headers.append((name, value))
            if name == b"content-length":
                if not value.isdigit() or len(value.lstrip(b"0")) > 20 or int(value) >= _MAX_LENGTH:
                    shown = value[:40].decode("latin-1")
                    raise BadRequest(400, f"invalid Content-Length {shown!r}")
                if length is not None:  # RFC 9110 8.6 allows either; llhttp refuses both
                    same = "different" if int(value) != length else "identical"
                    raise BadRequest(400, f"two {same} Content-Length headers")
                length = int(value)
            elif name == b"transfer-encoding":
                # (a tab after a coding makes it another coding for llhttp: only spaces go)
                codings = (codings or []) + [
                    c.lstrip(b" \t").rstrip(b" ").lower() for c in raw.split(b",")
                ]
            elif name == b"connection":
                connection += b"," + value.lower()
            elif name == b"expect" and value.lower() == b"100-continue":
                self.continue_ = True
        self.headers = headers
        self.chunked = codings is not None
        if codings is not None:
            if length is not None:
                raise BadRequest(400, "a request with both Content-Length and Transfer-Encoding")
            if self.v10:
                raise BadRequest(400, "Transfer-Encoding in an HTTP/1.0 request")
            named = [c for c in codings if c]
            if not named:
                raise BadRequest(400, "an empty Transfer-Encoding")
            if b"chunked" in codings and codings.index(b"chunked") != len(codings) - 1:
                raise BadRequest(400, "chunked is not the final transfer coding")
            if named != [b"chunked"]:
                raise BadRequest(501, "the only transfer coding served is chunked")
        self.length = 0 if length is None and codings is None else length
        self.close = self.v10 or b"close" in tokens(connection)

    def path(self) -> tuple[str, bytes, bytes]:
        """The target's path (percent-decoded), raw path and query string."""
        target = self.target
        if not target.startswith(b"/"):
            scheme, sep, rest = target.partition(b"://")  # absolute-form (from a proxy)
            if target == b"*":
                return "*", b"*", b""
            if not sep or scheme.lower() not in (b"http", b"https"):
                raise BadRequest(400, "malformed request target")
            end = len(rest) - len(rest.lstrip(_AUTHORITY))  # the path or query after it
            target = rest[end:] if rest[end:].startswith(b"/") else b"/" + rest[end:]
        raw, _, query = target.partition(b"?")
        raw = raw.partition(b"#")[0]
        path = raw.decode("latin-1")
        if "%" in path:
            path = urllib.parse.unquote(path, encoding="latin-1")
        return path, raw, query
