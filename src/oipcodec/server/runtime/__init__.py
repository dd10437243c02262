"""Running the server: which front end on which port, sockets, the lifecycle, workers.

- :class:`Server`: REST (uvicorn) and gRPC (grpc.aio) on the running event loop and one
  registry, started and stopped from async code you own;
- :func:`serve`: block until SIGINT/SIGTERM (what ``oipcodec serve`` calls); ``workers=N``
  runs N processes that share the ports (SO_REUSEPORT), each with its own registry;
- :class:`ServerProcesses` / :class:`ServerThread`: a server in spawned processes / in a
  thread of this process (what :func:`oipcodec.testing.background` runs);
- :mod:`~oipcodec.server.runtime.apps`: the composition root, the only module that wires
  front ends together.

Each takes its settings as a :class:`~oipcodec.server.config.ServerConfig`, or as keyword
arguments naming its fields (which override those of a ``config`` given with them).
"""

from oipcodec.server.runtime.apps import create_app, create_grpc_server, create_rest_app
from oipcodec.server.runtime.entry import serve
from oipcodec.server.runtime.loading import Models, load_model_module
from oipcodec.server.runtime.processes import ServerProcesses
from oipcodec.server.runtime.server import Server
from oipcodec.server.runtime.sockets import check_ports
from oipcodec.server.runtime.thread import RunningServer, ServerThread

__all__ = [
    "Models",
    "RunningServer",
    "Server",
    "ServerProcesses",
    "ServerThread",
    "check_ports",
    "create_app",
    "create_grpc_server",
    "create_rest_app",
    "load_model_module",
    "serve",
]
