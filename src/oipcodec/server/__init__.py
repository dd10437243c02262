"""A minimal, fast Open Inference Protocol server built on oipcodec's codecs::

    from oipcodec.server import Model, TensorSpec, serve

    class Double(Model):
        name = "double"
        inputs = [TensorSpec("X", "FP32", [-1])]
        outputs = [TensorSpec("Y", "FP32", [-1])]

        def predict(self, inputs, parameters):
            return {"Y": inputs["X"] * 2}

    serve([Double()], http_port=8000, grpc_port=8001)  # or: oipcodec serve

REST and gRPC share one model registry; the rooms (front ends, the HTTP/1.1 transport, the
runtime, the core) are described in docs/design.md#the-server. Needs the ``server`` extra.
"""

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
from oipcodec.server.config import ServerConfig
from oipcodec.server.model import DynamicBatching, Model, TensorSpec
from oipcodec.server.queue_policy import QueuePolicy
from oipcodec.server.runtime import RunningServer, Server, serve

__all__ = [
    "BodyTimeoutError",
    "DynamicBatching",
    "InternalError",
    "InvalidArgumentError",
    "Model",
    "NotFoundError",
    "PayloadTooLargeError",
    "QueuePolicy",
    "RequestError",
    "RunningServer",
    "Server",
    "ServerConfig",
    "TensorSpec",
    "UnavailableError",
    "UnsupportedError",
    "serve",
]

#: Names this package exported before it kept to what a user writes against; each still
#: works for one release, with a DeprecationWarning naming its home (CHANGELOG.md).
#: ServerError and RequestTimeoutError were the server's names of these errors; the client's
#: errors of those names are other classes.
__getattr__ = moved(
    __name__,
    {
        "HTTP_PROTOCOLS": "oipcodec.server.config:HTTP_PROTOCOLS",
        "AddSub": "oipcodec.server.demo:AddSub",
        "Identity": "oipcodec.server.demo:Identity",
        "Simple": "oipcodec.server.demo:Simple",
        "SimpleString": "oipcodec.server.demo:SimpleString",
        "demo_models": "oipcodec.server.demo:demo_models",
        "ModelRegistry": "oipcodec.server.registry:ModelRegistry",
        "RestApp": "oipcodec.server.frontends.rest_frontend:RestApp",
        "available_cpus": "oipcodec.server.config:available_cpus",
        "create_app": "oipcodec.server.runtime:create_app",
        "ServerProcesses": "oipcodec.server.runtime:ServerProcesses",
        "ServerThread": "oipcodec.server.runtime:ServerThread",
        "check_ports": "oipcodec.server.runtime:check_ports",
        "load_model_module": "oipcodec.server.runtime:load_model_module",
        "background": "oipcodec.testing:background",
        "batching": "oipcodec.server.inference.batching",
        "classification": "oipcodec.server.inference.classification",
        "ServerError": "oipcodec.errors:RequestError",
        "RequestTimeoutError": "oipcodec.errors:BodyTimeoutError",
    },
)
