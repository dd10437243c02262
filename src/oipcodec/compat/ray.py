"""oipcodec's server on Ray Serve: OIP REST and gRPC, each replica decoding with oipcodec.

One Serve deployment runs on every replica the front ends of ``oipcodec serve`` over one model
registry: the REST app as its ingress and the handlers of ``inference.GRPCInferenceService``
as its gRPC methods, so decoding, limits and error answers are those of ``oipcodec serve``;
Ray Serve adds the replicas, their placement, autoscaling and restarts. :func:`build_app`
builds the application (:func:`app_builder` for ``serve run``), :func:`grpc_options` Serve's
gRPC options. :data:`GRPC_SERVICER_FUNCTION` registers ``ModelInfer`` without a request
deserializer, so Serve's proxy forwards the message's bytes and each replica decodes them
into views. Each answer of ``infer`` names its replica in the ``"ray_replica"`` parameter
unless ``tag_replica=False``.

Needs Ray Serve (the ``integration-ray`` extra); importing this module imports ``ray.serve``.
Starting it, several models, and what Serve's proxy copies: docs/distributed.md, "Ray Serve".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc
from ray import serve
from ray.serve.config import gRPCOptions

from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.server import Model
from oipcodec.server.demo import demo_models
from oipcodec.server.frontends.grpc_frontend import InferenceServicer
from oipcodec.server.frontends.rest_frontend import RestApp
from oipcodec.server.inference import Pipeline, Result
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.runtime import create_rest_app, load_model_module
from oipcodec.types import InferRequest

__all__ = [
    "GRPC_SERVICER_FUNCTION",
    "REPLICA_PARAMETER",
    "OIPServer",
    "add_inference_service_to_server",
    "app_builder",
    "build_app",
    "grpc_options",
]

#: The import path to list in ``gRPCOptions.grpc_servicer_functions``.
GRPC_SERVICER_FUNCTION = "oipcodec.compat.ray.add_inference_service_to_server"

#: The answer parameter naming the replica that computed it.
REPLICA_PARAMETER = "ray_replica"

#: RPC name -> InferenceServicer method, the RPCs a replica answers.
_RPCS = {
    "ServerLive": "server_live",
    "ServerReady": "server_ready",
    "ModelReady": "model_ready",
    "ServerMetadata": "server_metadata",
    "ModelMetadata": "model_metadata",
    "ModelInfer": "model_infer",
    "ModelConfig": "model_config",
    "ModelStatistics": "model_statistics",
    "RepositoryIndex": "repository_index",
    "RepositoryModelLoad": "repository_model_load",
    "RepositoryModelUnload": "repository_model_unload",
}


def add_inference_service_to_server(servicer: Any, server: Any) -> None:
    """Register ``inference.GRPCInferenceService`` on ``server`` (Serve's gRPC proxy calls this
    with a placeholder servicer and keeps only each method's request deserializer).

    The method table is oipcodec's own (:meth:`InferenceServicer.handler`): ``ModelInfer``
    has no deserializer, so the proxy hands the replica the message's bytes.

    Parameters
    ----------
    servicer
        Serve's placeholder servicer (not used).
    server
        The grpc server.
    """
    handler = InferenceServicer(ModelRegistry()).handler()
    # Serve's proxy rewrites the table of the first handler it is given (a grpc
    # method_handlers_generic_handler, keyed "/service/method"); only the RPCs a replica
    # answers are offered.
    table = handler._method_handlers
    for path in list(table):
        if path.rpartition("/")[2] not in _RPCS:
            del table[path]
    server.add_generic_rpc_handlers((handler,))


def grpc_options(port: int = 9000, **options: Any) -> gRPCOptions:
    """Serve's ``gRPCOptions`` with the OIP service registered (:data:`GRPC_SERVICER_FUNCTION`
    added to ``grpc_servicer_functions``); other keyword arguments are passed on.

    Parameters
    ----------
    port
        The gRPC proxy's port.
    **options
        Passed on to ``gRPCOptions``.
    """
    functions = list(options.pop("grpc_servicer_functions", ()))
    if GRPC_SERVICER_FUNCTION not in functions:
        functions.append(GRPC_SERVICER_FUNCTION)
    return gRPCOptions(port=port, grpc_servicer_functions=functions, **options)


class _ReplicaPipeline(Pipeline):
    """An inference step whose answers name the replica that computed them."""

    def __init__(self, registry: ModelRegistry, replica: str | None) -> None:
        super().__init__(registry)
        self.replica = replica

    async def run(self, request: InferRequest, model: Model | None = None) -> Result:
        result = await super().run(request, model)
        if self.replica is not None:
            result.response.parameters[REPLICA_PARAMETER] = self.replica
        return result


class _Serialized:
    """An answer already in protobuf bytes: Serve's replica calls ``SerializeToString`` on
    what a gRPC method returns, and the proxy sends that as it is."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def SerializeToString(self) -> bytes:
        return self.data


class _Aborted(Exception):
    """A gRPC handler ended the call with a status (already set on Serve's context)."""


class _Context:
    """What :class:`InferenceServicer` needs of a ``grpc.aio.ServicerContext``, over Serve's
    ``RayServegRPCContext``: ``abort`` sets the status, which Serve's proxy answers with."""

    def __init__(self, context: Any) -> None:
        self._context = context

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        self._context.set_code(code)
        self._context.set_details(details)
        raise _Aborted(details)


def _on_full_path(app: RestApp) -> Callable[..., Any]:
    """``app``, routing on the whole path: Serve's route prefix (``root_path``) is cleared."""

    async def full_path(scope: Any, receive: Any, send: Any) -> None:
        if scope.get("root_path"):
            scope = {**scope, "root_path": ""}
        await app(scope, receive, send)

    return full_path


def _rpc(name: str, method: str) -> Callable[..., Any]:
    async def call(self: _OIPServer, request: Any, grpc_context: Any) -> Any:
        answer = await getattr(self._servicer, method)(request, _Context(grpc_context))
        return _Serialized(answer) if isinstance(answer, bytes) else answer

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"The {name} RPC of inference.GRPCInferenceService."
    return call


class _OIPServer:
    """One replica: the OIP REST app (the ingress) and the OIP gRPC methods over one registry.

    ``models``: Model instances (pickled to the replicas), or ``model_module``: the module
    whose ``MODELS`` the replica loads (as ``oipcodec serve --model-module``); neither: the
    demo models. ``limits`` bound every request as in ``oipcodec serve``; ``codec_threads``:
    the threads that parse large JSON bodies off the event loop (default 1: a replica is
    usually given one CPU or less). The models load when the replica starts (the ASGI
    lifespan) and unload when it stops. ``full_path``: route on the whole request path
    (for an application whose route prefix is a model's path, ``/v2/models/<name>``), not on
    the path under Serve's route prefix (its ``root_path``).
    """

    def __init__(
        self,
        models: Sequence[Model] | None = None,
        model_module: str | None = None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        codec_threads: int = 1,
        tag_replica: bool = True,
        full_path: bool = False,
    ) -> None:
        if models is not None and model_module is not None:
            raise ValueError("give models or model_module, not both")
        if model_module is not None:
            models = load_model_module(model_module)
        replica = serve.get_replica_context().replica_id.unique_id if tag_replica else None
        self.registry = ModelRegistry(demo_models() if models is None else list(models))
        _ReplicaPipeline(self.registry, replica)  # the pipeline of this registry's front ends
        self._rest = create_rest_app(self.registry, limits=limits, codec_threads=codec_threads)
        self._servicer = InferenceServicer(self.registry, limits=limits)
        self._full_path = full_path

    def __serve_build_asgi_app__(self) -> Callable[..., Any]:
        return _on_full_path(self._rest) if self._full_path else self._rest


for _name, _method in _RPCS.items():
    setattr(_OIPServer, _name, _rpc(_name, _method))

#: The Serve deployment (``OIPServer.options(num_replicas=...).bind(...)``).
OIPServer = serve.deployment(name="oipcodec")(serve.ingress()(_OIPServer))


def build_app(
    models: Sequence[Model] | None = None,
    model_module: str | None = None,
    *,
    num_replicas: int | str | None = None,
    autoscaling_config: Mapping[str, Any] | None = None,
    ray_actor_options: Mapping[str, Any] | None = None,
    max_ongoing_requests: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    codec_threads: int = 1,
    tag_replica: bool = True,
    full_path: bool = False,
    name: str = "oipcodec",
) -> Any:
    """A Serve application of :class:`OIPServer` (for ``serve.run``): ``num_replicas``
    replicas (default 1) or an ``autoscaling_config``, each with ``ray_actor_options``
    (e.g. ``{"num_cpus": 1}``); the other arguments go to each replica (see
    :class:`OIPServer`; ``full_path`` for an application per model).

    Parameters
    ----------
    models, model_module
        Model instances (pickled to the replicas), or the module whose ``MODELS`` each replica
        loads; neither: the demo models.
    num_replicas
        How many replicas (default 1).
    autoscaling_config
        Serve's autoscaling, instead of ``num_replicas``.
    ray_actor_options
        Each replica's (e.g. ``{"num_cpus": 1}``).
    max_ongoing_requests
        Serve's bound on each replica's requests in flight.
    limits
        Bound every request, as in ``oipcodec serve``.
    codec_threads
        The threads that parse large JSON bodies off a replica's event loop.
    tag_replica
        Answers name the replica that computed them.
    full_path
        Route on the whole request path, for an application per model (route prefix
        ``/v2/models/<name>``).
    name
        The deployment's name.
    """
    options: dict[str, Any] = {"name": name}
    if num_replicas is not None:
        options["num_replicas"] = num_replicas
    if autoscaling_config is not None:
        options["autoscaling_config"] = dict(autoscaling_config)
    if ray_actor_options is not None:
        options["ray_actor_options"] = dict(ray_actor_options)
    if max_ongoing_requests is not None:
        options["max_ongoing_requests"] = max_ongoing_requests
    return OIPServer.options(**options).bind(
        models,
        model_module,
        limits=limits,
        codec_threads=codec_threads,
        tag_replica=tag_replica,
        full_path=full_path,
    )


def app_builder(args: Mapping[str, str]) -> Any:
    """Serve's application builder (``serve run oipcodec.compat.ray:app_builder KEY=VALUE``
    or ``import_path`` in a ``serve deploy`` config): ``model_module`` (default: the demo
    models), ``num_replicas``, ``num_cpus`` (per replica), ``max_ongoing_requests``,
    ``codec_threads``, ``max_body_bytes``.

    Parameters
    ----------
    args
        The ``KEY=VALUE`` arguments above, as Serve passes them.
    """
    known = {
        "model_module",
        "num_replicas",
        "num_cpus",
        "max_ongoing_requests",
        "codec_threads",
        "max_body_bytes",
    }
    unknown = sorted(set(args) - known)
    if unknown:
        raise ValueError(f"unknown arguments {unknown}: expected some of {sorted(known)}")

    def number(key: str, kind: Callable[[str], Any]) -> Any:
        value = args.get(key)
        if value is None:
            return None
        try:
            return kind(str(value))
        except ValueError:
            raise ValueError(f"{key} must be a number, got {value!r}") from None

    num_replicas = args.get("num_replicas")
    # "auto" is Serve's own autoscaling default.
    replicas = num_replicas if num_replicas in (None, "auto") else number("num_replicas", int)
    num_cpus = number("num_cpus", float)
    max_body = number("max_body_bytes", int)
    return build_app(
        model_module=args.get("model_module"),
        num_replicas=replicas,
        ray_actor_options=None if num_cpus is None else {"num_cpus": num_cpus},
        max_ongoing_requests=number("max_ongoing_requests", int),
        codec_threads=number("codec_threads", int) or 1,
        limits=DEFAULT_LIMITS if max_body is None else Limits(max_body_bytes=max_body),
    )
