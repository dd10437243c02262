"""The inference step, in one room: every front end (REST, gRPC, TRTIS v1, GraphPipe) hands it
each decoded request once, through a :class:`Pipeline`'s :class:`Exchange`, and encodes the
:class:`Result`.

It imports the core (the flat modules of :mod:`oipcodec.server`, the codecs, the kernels),
never a front end, the HTTP/1.1 transport or the runtime; the registry tells it when models
change and retire (:class:`~oipcodec.server.registry.Watcher`). docs/design.md#the-server.
"""

from oipcodec.server.inference.checks import check_inputs, output_tensors
from oipcodec.server.inference.pipeline import TRANSPORT_PARAMETERS, Exchange, Pipeline, Result
from oipcodec.server.registry import ModelRegistry
from oipcodec.types import InferRequest, InferResponse

__all__ = [
    "TRANSPORT_PARAMETERS",
    "Exchange",
    "Pipeline",
    "Result",
    "check_inputs",
    "output_tensors",
]


async def infer(registry: ModelRegistry, request: InferRequest) -> InferResponse:
    """The former ``ModelRegistry.infer`` (deprecated): ``request`` run through the registry's
    pipeline, uncounted in the statistics as before; the answer alone."""
    return (await Pipeline.of(registry).run(request)).response
