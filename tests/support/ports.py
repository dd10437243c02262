"""Free TCP ports on 127.0.0.1, for a server a test starts (or for an address nobody serves)."""

from __future__ import annotations

import socket


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1, for a peer server to listen on."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def free_port() -> int:
    """One free TCP port on 127.0.0.1."""
    return free_ports(1)[0]
