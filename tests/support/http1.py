"""HTTP/1.1 answers read off a raw socket by h11, for the tests that write their requests as
raw bytes (often deliberately malformed) and must see the answers as a client would.

Only the reading goes through h11: the test sends its bytes itself. h11 needs to know the
request an answer belongs to (the answer to a HEAD has no body), so each read starts a fresh
h11 client connection, tells it of a stand-in request of that method (its bytes are thrown
away), and feeds it the bytes left over from the previous read first: pipelined answers and
an interim 1xx followed by the final answer are read one at a time.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

import h11

#: Any answer head the tests see is far smaller; h11's default (16 KiB) would do as well.
MAX_HEAD = 1 << 20


@dataclass
class Response:
    """One answer as h11 read it: header names in lower case, values decoded as Latin-1, the
    body with its framing (Content-Length, chunked coding or the close) taken off."""

    http_version: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def read_response(
    sock: socket.socket, pending: bytes = b"", *, method: str = "GET"
) -> tuple[Response, bytes]:
    """The next answer on ``sock`` to a request of ``method``, and the bytes received after it.

    ``pending`` holds bytes received earlier but not read yet (what the last call returned).
    An interim answer (1xx) is returned on its own, without a body. A connection closed
    before the first byte of an answer raises EOFError; closed inside one, or an answer h11
    finds malformed, h11.RemoteProtocolError. Every recv keeps the socket's timeout.
    """
    conn = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
    conn.send(h11.Request(method=method, target="/", headers=[("Host", "test")]))
    conn.send(h11.EndOfMessage())
    if pending:  # (h11 takes b"" for the end of the stream)
        conn.receive_data(pending)
    head: h11.Response | None = None
    parts: list[bytes] = []
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = sock.recv(1 << 16)
            if not data and head is None and not conn.trailing_data[0]:
                raise EOFError("the server closed the connection before an answer")
            conn.receive_data(data)
        elif isinstance(event, h11.InformationalResponse):
            return _response(event, b""), conn.trailing_data[0]
        elif isinstance(event, h11.Response):
            head = event
        elif isinstance(event, h11.Data):
            parts.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            return _response(head, b"".join(parts)), conn.trailing_data[0]


def _response(head: h11.InformationalResponse | h11.Response, body: bytes) -> Response:
    return Response(
        http_version=head.http_version.decode("ascii"),
        status=head.status_code,
        headers=[(name.decode("latin-1"), value.decode("latin-1")) for name, value in head.headers],
        body=body,
    )
