"""The composition root: which front end answers on which port.

The REST port serves the OIP REST app with the v1 API (``/api/``), GraphPipe
(``/graphpipe/<model>``), ``/metrics`` and Triton's generate extension mounted beside it; the
gRPC port serves the OIP service and the v1 ``GRPCService``; the metrics and GraphPipe ports
serve their own small apps.
Only this module wires front ends together: each of them knows the registry, never another.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.server.frontends.generate_frontend import GenerateRoutes
from oipcodec.server.frontends.graphpipe_frontend import GraphPipeApp, GraphPipeRoutes
from oipcodec.server.frontends.metrics_frontend import MetricsApp, MetricsRoutes
from oipcodec.server.frontends.rest_frontend import RestApp
from oipcodec.server.frontends.trtis_frontend import V1Frontend, V1Routes
from oipcodec.server.metadata import SERVER_NAME
from oipcodec.server.model import Model
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.runtime.sockets import _BACKLOG, _bind
from oipcodec.server.stats import Statistics

if TYPE_CHECKING:
    from oipcodec.server.frontends.grpc_frontend import InferenceServicer
    from oipcodec.server.frontends.tracing import Tracing

__all__ = ["create_app", "create_grpc_server", "create_rest_app", "graphpipe_app", "metrics_app"]

log = logging.getLogger("oipcodec.server")


def create_rest_app(
    registry: ModelRegistry,
    *,
    limits: Limits = DEFAULT_LIMITS,
    manage_models: bool = True,
    server_name: str = SERVER_NAME,
    codec_threads: int | None = None,
) -> RestApp:
    """The REST port's app: the OIP REST app with the v1 API, GraphPipe and ``/metrics``
    mounted beside it (arguments as :class:`RestApp`)."""
    app = RestApp(
        registry,
        limits=limits,
        manage_models=manage_models,
        server_name=server_name,
        codec_threads=codec_threads,
    )
    v1 = V1Frontend(registry, limits=limits, server_id=server_name, ready=lambda: app.ready)
    app.mounts.update(
        {
            "api": V1Routes(v1),
            "graphpipe": GraphPipeRoutes(registry, limits),
            "metrics": MetricsRoutes(registry),
        }
    )
    app.generate = GenerateRoutes(registry, limits, elsewhere=app._route)
    return app


def create_app(
    models: Iterable[Model] | ModelRegistry | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    manage_models: bool = True,
    codec_threads: int | None = None,
) -> RestApp:
    """An ASGI application serving ``models`` (default: the demo models), e.g.
    ``uvicorn.run(create_app([MyModel()]))``. Models are loaded on the lifespan startup;
    ``codec_threads`` as :class:`RestApp`."""
    from oipcodec.server.demo import demo_models

    if isinstance(models, ModelRegistry):
        registry = models
    else:
        registry = ModelRegistry(demo_models() if models is None else models)
    return create_rest_app(
        registry, limits=limits, manage_models=manage_models, codec_threads=codec_threads
    )


def graphpipe_app(registry: ModelRegistry, model: str, limits: Limits) -> GraphPipeApp:
    """The GraphPipe port's app: ``model``'s endpoint at ``/``."""
    return GraphPipeApp(registry, model, limits)


def metrics_app(statistics: Statistics) -> MetricsApp:
    """The metrics port's app: ``GET /metrics``."""
    return MetricsApp(statistics)


def create_grpc_server(
    registry: ModelRegistry,
    *,
    limits: Limits = DEFAULT_LIMITS,
    reuse_port: bool = False,
    options: list[tuple[str, Any]] | None = None,
    server_name: str = SERVER_NAME,
    tracing: Tracing | None = None,
    grpc_impl: str = "grpcio",
) -> tuple[Any, InferenceServicer]:
    """A ``grpc.aio.Server`` (or, with ``grpc_impl="native"``, a
    :class:`~oipcodec.server.h2.grpc_server.NativeGrpcServer`) serving ``registry`` over the
    OIP and the v1 API (no port added yet), and the OIP servicer.

    Messages up to ``limits.max_body_bytes`` are accepted (larger ones get
    RESOURCE_EXHAUSTED). ``reuse_port`` lets several processes share a port
    (SO_REUSEPORT); it is off by default so that a port in use is an error. ``options``:
    more grpcio channel arguments (grpcio's server only). ``server_name`` is the name in the
    server metadata. ``tracing``: the server traces (the TraceSetting RPC, and the
    propagation metadata of the inference RPCs). ``grpc_impl``: one of
    :data:`~oipcodec.server.config.GRPC_IMPLS`; ``"native"`` without the native build
    falls back to grpcio with a warning.
    """
    # grpcio is imported when a gRPC port is served, not with the package.
    import grpc

    from oipcodec.server.frontends.grpc_frontend import InferenceServicer
    from oipcodec.server.frontends.trtis_frontend import add_to_server

    servicer = InferenceServicer(registry, limits=limits, server_name=server_name)
    server: Any = None
    if grpc_impl == "native":
        from oipcodec.server.h2.grpc_server import NativeGrpcServer, native_grpc_available

        if native_grpc_available():
            server = NativeGrpcServer(
                max_receive_message_length=limits.max_body_bytes,
                bind=lambda host, port: _bind(host, port, reuse_port, "gRPC"),
                backlog=_BACKLOG,
            )
        else:
            log.warning("grpc_impl 'native' needs the native kernels: using 'grpcio'")
    if server is None:
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", limits.max_body_bytes),
                ("grpc.max_send_message_length", -1),
                ("grpc.so_reuseport", 1 if reuse_port else 0),
                *(options or []),
            ]
        )
    handler = servicer.handler()
    server.add_generic_rpc_handlers(
        (handler,) if tracing is None else tracing.grpc_handlers(handler)
    )
    ready: Callable[[], bool] = lambda: servicer.ready  # noqa: E731
    add_to_server(V1Frontend(registry, limits=limits, server_id=server_name, ready=ready), server)
    return server, servicer
