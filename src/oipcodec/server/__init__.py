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
(a module whose ``MODELS`` lists the models). :func:`background` runs a server for the length
of a ``with`` block (tests, benchmarks). Needs the ``server`` extra (uvicorn, grpcio).
"""

from oipcodec.server.demo import AddSub, Identity, Simple, SimpleString, demo_models
from oipcodec.server.errors import (
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PayloadTooLargeError,
    RequestTimeoutError,
    ServerError,
    UnavailableError,
    UnsupportedError,
)
from oipcodec.server.http import RestApp, available_cpus, create_app
from oipcodec.server.model import Model, TensorSpec
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.runtime import (
    HTTP_PROTOCOLS,
    RunningServer,
    Server,
    background,
    load_model_module,
    serve,
)

__all__ = [
    "HTTP_PROTOCOLS",
    "AddSub",
    "Identity",
    "InternalError",
    "InvalidArgumentError",
    "Model",
    "ModelRegistry",
    "NotFoundError",
    "PayloadTooLargeError",
    "RequestTimeoutError",
    "RestApp",
    "RunningServer",
    "Server",
    "ServerError",
    "Simple",
    "SimpleString",
    "TensorSpec",
    "UnavailableError",
    "UnsupportedError",
    "available_cpus",
    "background",
    "create_app",
    "demo_models",
    "load_model_module",
    "serve",
]
