"""A KServe ModelServer with an identity model, written with KServe's public API only and never
importing oipcodec (KServe as it ships), for tests/compat/test_compat_kserve_server.py.

Run as ``python tests/support/kserve_models_stock.py --http_port P --grpc_port Q`` (KServe's own
command-line arguments; ``--workers`` stays 1: one process, no forked uvicorn workers).

KServe 0.21 cannot be told which address to listen on: RESTServer builds its uvicorn.Config
with ``host="0.0.0.0"`` and GRPCServer binds ``"[::]:<port>"`` (kserve/protocol/rest/server.py,
kserve/protocol/grpc/server.py). :func:`_loopback_only` narrows both to 127.0.0.1 and touches
nothing else, so the endpoints, codecs and data plane under test are KServe's own.
"""

from __future__ import annotations

import argparse
from typing import Any

import kserve
from kserve import InferOutput, InferRequest, InferResponse
from kserve.model_server import parser as kserve_parser

HOST = "127.0.0.1"


class Identity(kserve.Model):
    """Echoes every input as an output of the same name, datatype and shape, the way KServe's
    own ``get_predict_response`` builds a V2 answer (binary or JSON as the request asked, the
    requested outputs only)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.ready = True

    def load(self) -> bool:
        self.ready = True
        return self.ready

    async def predict(
        self,
        payload: InferRequest,
        headers: dict[str, str] | None = None,
        response_headers: dict[str, str] | None = None,
    ) -> InferResponse:
        outputs = []
        for infer_input in payload.inputs:
            output = InferOutput(infer_input.name, list(infer_input.shape), infer_input.datatype)
            output.set_data_from_numpy(
                infer_input.as_numpy(), binary_data=payload.use_binary_outputs
            )
            outputs.append(output)
        return InferResponse(
            response_id=payload.id or "",
            model_name=self.name,
            infer_outputs=outputs,
            use_binary_outputs=payload.use_binary_outputs,
            requested_outputs=payload.request_outputs,
        )


def _loopback_only() -> None:
    """Bind KServe's REST and gRPC servers to 127.0.0.1 instead of every interface: the
    ``uvicorn`` and ``aio`` names of KServe's two server modules are swapped for proxies that
    change the listen address only."""
    import grpc.aio
    import uvicorn
    from kserve.protocol.grpc import server as grpc_server
    from kserve.protocol.rest import server as rest_server

    class Config(uvicorn.Config):
        def __init__(self, app: Any, **kwargs: Any) -> None:
            super().__init__(app, **{**kwargs, "host": HOST})

    def aio_server(*args: Any, **kwargs: Any) -> Any:
        server = grpc.aio.server(*args, **kwargs)
        bind = server.add_insecure_port
        # "[::]:<port>" -> "127.0.0.1:<port>", whatever host KServe wrote
        server.add_insecure_port = lambda address: bind(f"{HOST}:{address.rpartition(':')[2]}")
        return server

    class Proxy:
        def __init__(self, module: Any, **replaced: Any) -> None:
            self._module, self._replaced = module, replaced

        def __getattr__(self, name: str) -> Any:
            return self._replaced.get(name) or getattr(self._module, name)

    rest_server.uvicorn = Proxy(uvicorn, Config=Config)
    grpc_server.aio = Proxy(grpc.aio, server=aio_server)


def main() -> None:
    args, _ = argparse.ArgumentParser(parents=[kserve_parser]).parse_known_args()
    _loopback_only()
    kserve.ModelServer(
        http_port=args.http_port, grpc_port=args.grpc_port, workers=1, enable_docs_url=False
    ).start([Identity("identity")])


if __name__ == "__main__":
    main()
