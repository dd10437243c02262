"""docs/compat.md's KServe recipe with an identity model: ``patch_dataplane`` on the server and
a ``kserve.Model`` whose ``predict`` goes through oipcodec's adapter (``to_oip_request``, then
``from_oip_response``: arrays in, arrays out), the model tests/support/kserve_models_stock.py
writes with KServe's own API (``as_numpy``, ``set_data_from_numpy``). For
benchmarks/load/kserve_adapter.py and tests/compat/test_compat_kserve_route.py.

Run as ``python tests/support/kserve_models_recipe.py --http_port P --grpc_port Q``.
"""

from __future__ import annotations

import argparse
from typing import Any

import kserve
from kserve.model_server import parser as kserve_parser
from kserve_models_stock import _loopback_only

from oipcodec import InferResponse
from oipcodec.compat import kserve as oip_kserve


class Identity(kserve.Model):
    """Echoes every input as an output of the same name, datatype and shape."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.ready = True

    def load(self) -> bool:
        self.ready = True
        return self.ready

    def predict(self, payload: Any, headers: Any = None, response_headers: Any = None) -> Any:
        request = oip_kserve.to_oip_request(payload)
        response = InferResponse(self.name, list(request.inputs), id=request.id)
        return oip_kserve.from_oip_response(response, request=payload)


def main() -> None:
    args, _ = argparse.ArgumentParser(parents=[kserve_parser]).parse_known_args()
    _loopback_only()
    server = kserve.ModelServer(
        http_port=args.http_port, grpc_port=args.grpc_port, workers=1, enable_docs_url=False
    )
    oip_kserve.patch_dataplane(server.dataplane)
    server.start([Identity("identity")])


if __name__ == "__main__":
    main()
