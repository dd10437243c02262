"""A minimal, fast Open Inference Protocol server built on oipcodec's codecs.

REST (a plain ASGI app under uvicorn) and gRPC (grpcio's asyncio server) share one model
registry. Write a model::

    from oipcodec.server import Model, TensorSpec, serve

    class Double(Model):
        name = "double"
        inputs = [TensorSpec("X", "FP32", [-1])]
        outputs = [TensorSpec("Y", "FP32", [-1])]

        def predict(self, inputs, parameters):
            return {"Y": inputs["X"] * 2}

    serve([Double()], http_port=8000, grpc_port=8001)

or run ``oipcodec serve`` (the demo models) / ``oipcodec serve --model-module my.models``
(a module whose ``MODELS`` lists the models). The settings of a run (host, ports, workers,
limits, HTTP protocol, codec threads, malloc pad...) are one :class:`ServerConfig`, which
``serve(config=...)``, :class:`Server` and the CLI share; keyword arguments naming its fields
work too. :func:`oipcodec.testing.background` runs a server for the length of a ``with``
block (tests, benchmarks); ``oipcodec.server.background`` is the same function, a plain alias.
Needs the ``server`` extra (uvicorn, grpcio).

Errors a model raises to choose the answer (:class:`InvalidArgumentError`,
:class:`NotFoundError`...; base :class:`RequestError`) are defined in :mod:`oipcodec.errors`,
with the one table of HTTP statuses and gRPC codes both front ends answer with.
``ServerError`` and ``RequestTimeoutError`` here are deprecated aliases of
:class:`RequestError` and :class:`BodyTimeoutError` (the client's classes of those names are
others).

The layer: the server turns wire bytes into model calls and back. It may import the codecs
(:mod:`oipcodec.rest`, :mod:`oipcodec.pb`, :mod:`oipcodec.raw`, :mod:`oipcodec.types`,
:mod:`oipcodec.datatypes`, :mod:`oipcodec.sharedmem`), the kernels through them or through
the public functions of :mod:`oipcodec.kernels` where no codec has one (receive buffers,
counting BYTES elements),
:mod:`oipcodec.errors`, :mod:`oipcodec.limits` and :mod:`oipcodec.proto`; never
:mod:`oipcodec.client`, :mod:`oipcodec.compat` or :mod:`oipcodec.bench`, and no ``_private``
name of another layer.
:mod:`oipcodec.testing` and :mod:`oipcodec.compat` build on it, not the other way round.
"""

from typing import TYPE_CHECKING, Any

from oipcodec._deprecated import moved
from oipcodec.errors import (
    BodyTimeoutError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PayloadTooLargeError,
    RequestError,
    UnavailableError,
    UnsupportedError,
)
from oipcodec.server.config import HTTP_PROTOCOLS, ServerConfig
from oipcodec.server.demo import AddSub, Identity, Simple, SimpleString, demo_models

if TYPE_CHECKING:
    from oipcodec.testing import background
from oipcodec.server.http import RestApp, available_cpus, create_app
from oipcodec.server.model import Model, TensorSpec
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.runtime import (
    RunningServer,
    Server,
    ServerProcesses,
    ServerThread,
    check_ports,
    load_model_module,
    serve,
)

__all__ = [
    "HTTP_PROTOCOLS",
    "AddSub",
    "BodyTimeoutError",
    "Identity",
    "InternalError",
    "InvalidArgumentError",
    "Model",
    "ModelRegistry",
    "NotFoundError",
    "PayloadTooLargeError",
    "RequestError",
    "RestApp",
    "RunningServer",
    "Server",
    "ServerConfig",
    "ServerProcesses",
    "ServerThread",
    "Simple",
    "SimpleString",
    "TensorSpec",
    "UnavailableError",
    "UnsupportedError",
    "available_cpus",
    "background",
    "check_ports",
    "create_app",
    "demo_models",
    "load_model_module",
    "serve",
]


def _background(name: str) -> Any:
    if name == "background":
        # A plain alias of oipcodec.testing.background, which imports this package (so it is
        # imported on first use, not here).
        from oipcodec.testing import background

        return background
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The former names of RequestError and BodyTimeoutError (the client's have those names).
__getattr__ = moved(
    __name__,
    {
        "ServerError": "oipcodec.errors:RequestError",
        "RequestTimeoutError": "oipcodec.errors:BodyTimeoutError",
    },
    _background,
)
