"""Fixtures of the server tests: tritonclient's HTTP and gRPC clients of the module's
``server`` fixture (each module that uses them runs its own server, with its own models).
tritonclient is imported when a test asks for a client, so the modules that need no client
run without it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from oipcodec.testing import RunningServer

#: Seconds a client waits for a connection or an answer.
CLIENT_TIMEOUT = 30.0


@pytest.fixture(scope="module")
def http(server: RunningServer) -> Iterator[Any]:
    """tritonclient.http's client of ``server`` (4 connections, for async_infer)."""
    httpclient = pytest.importorskip("tritonclient.http")
    client = httpclient.InferenceServerClient(
        server.http_address,
        connection_timeout=CLIENT_TIMEOUT,
        network_timeout=CLIENT_TIMEOUT,
        concurrency=4,
    )
    yield client
    client.close()


@pytest.fixture(scope="module")
def grpc(server: RunningServer) -> Iterator[Any]:
    """tritonclient.grpc's client of ``server``."""
    grpcclient = pytest.importorskip("tritonclient.grpc")
    client = grpcclient.InferenceServerClient(server.grpc_address)
    yield client
    client.close()
