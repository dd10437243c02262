"""The listening sockets: binding (a port in use named by its option), ports shared by workers."""

from __future__ import annotations

import socket
from typing import Any

from oipcodec.server.config import ServerConfig

__all__ = ["check_ports"]


def _bound(host: str, port: int, reuse_port: bool) -> socket.socket:
    """A non-blocking TCP socket bound to ``host:port``, not yet listening: the port is
    taken, and a client connecting is refused at once."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


#: The listen backlog of the REST and metrics sockets.
_BACKLOG = 2048


def _bind(host: str, port: int, reuse_port: bool, kind: str) -> socket.socket:
    """:func:`_bound`, its error naming the port and what it was for."""
    try:
        return _bound(host, port, reuse_port)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        address = _grpc_address(host, port)
        raise OSError(exc.errno, f"cannot listen for {kind} on {address}: {reason}") from None


#: The ports of a configuration: what each is for and the ``oipcodec serve`` option setting it.
_PORTS = (("HTTP", "http_port", "--http-port"), ("gRPC", "grpc_port", "--grpc-port"))


def check_ports(config: ServerConfig) -> None:
    """Raise ``OSError`` naming the first port of ``config`` (HTTP, gRPC, metrics, GraphPipe) that
    another socket listens on, and the ``oipcodec serve`` option that sets it: what ``oipcodec
    serve`` checks before it loads any model. A port of 0 or ``None`` is not checked."""
    ports = [(kind, getattr(config, field), option) for kind, field, option in _PORTS]
    if config.metrics:
        ports.append(("metrics", config.metrics_port, "--metrics-port"))
    ports.append(("GraphPipe", config.graphpipe_port, "--graphpipe-port"))
    for kind, port, option in ports:
        if port:
            try:
                _bind(config.host, port, False, kind).close()
            except OSError as exc:
                raise OSError(exc.errno, f"{exc.strerror} (set by {option})") from None


def _grpc_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _reserve(host: str, port: int | None, reuse_port: bool) -> tuple[int | None, Any]:
    """Pick the port for workers that will share it: a free one when ``port`` is 0, held by a
    bound (not listening) SO_REUSEPORT socket so nobody else takes it meanwhile."""
    if port != 0 or not reuse_port:
        return port, None
    family, kind, proto, _, address = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0]
    holder = socket.socket(family, kind, proto)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    holder.bind(address)
    return holder.getsockname()[1], holder
