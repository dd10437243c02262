"""Start a KServe ModelServer script (``tests/support/kserve_models_*.py``) as a process of its
own for a test module, on free 127.0.0.1 ports, and always stop it."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.support.ports import free_ports
from tests.support.processes import http_status, running

STARTUP_SECONDS = 60


def _port_open(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


def run_kserve(
    script: Path,
    model: str,
    log_dir: Path,
    *,
    loopback: Path | None = None,
    args: tuple[str, ...] = (),
) -> Iterator[dict[str, str]]:
    """Run ``script`` (with ``args``) and KServe's ``--http_port`` / ``--grpc_port`` (one worker), through
    the runner ``loopback`` (tests/support/kserve_loopback.py) when given, until ``model`` is
    ready on REST and the gRPC port is open (at most 60 s), then yield ``{"http": host:port,
    "grpc": host:port, "log": path, "pid": pid}``; the process is stopped afterwards."""
    http_port, grpc_port = free_ports(2)
    command = [
        sys.executable, *([str(loopback)] if loopback else []), str(script), *args,
        "--http_port", str(http_port), "--grpc_port", str(grpc_port), "--workers", "1",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    addresses = {"http": f"127.0.0.1:{http_port}", "grpc": f"127.0.0.1:{grpc_port}"}

    def ready() -> bool:
        model_ready = http_status(f"http://{addresses['http']}/v2/models/{model}/ready") == 200
        return model_ready and _port_open(addresses["grpc"])

    log_path = log_dir / "kserve.log"
    with running(command, ready, log_path, startup_seconds=STARTUP_SECONDS, env=env) as process:
        yield {**addresses, "log": str(log_path), "pid": str(process.pid)}


def _listening(port: int) -> set[str]:
    """The local addresses of the listening TCP sockets on ``port`` (Linux /proc/net)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as file:
            next(file)
            for line in file:
                local, state = line.split()[1], line.split()[3]
                address, _, hex_port = local.partition(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.add(address)
    return found


def assert_loopback_only(server: dict[str, str]) -> None:
    """The server's REST and gRPC ports listen on 127.0.0.1 only (IPv4, or the IPv4-mapped
    IPv6 form gRPC uses); Linux only (/proc/net)."""
    loopback = {"0100007F", "0000000000000000FFFF00000100007F"}
    for key in ("http", "grpc"):
        addresses = _listening(int(server[key].rpartition(":")[2]))
        assert addresses and addresses <= loopback, (key, addresses)
