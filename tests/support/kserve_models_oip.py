"""The KServe recipe of docs/compat.md (and of ``oipcodec.compat.kserve``'s docstring), served by
a real ``kserve.ModelServer`` for tests/compat/test_compat_kserve_recipe.py.

Run as ``python tests/support/kserve_models_oip.py --http_port P --grpc_port Q`` (KServe's own
command-line arguments). ``Doubler`` is the recipe's model as written there; the data plane is
patched with ``patch_dataplane`` as the recipe does. The only addition is the listen address,
narrowed to 127.0.0.1 by the stock helper's :func:`_loopback_only` (KServe itself listens on
every interface).
"""

from __future__ import annotations

import argparse
from typing import Any

import kserve
from kserve.model_server import parser as kserve_parser
from kserve_models_stock import _loopback_only

from oipcodec import InferResponse, Tensor
from oipcodec.compat import kserve as oip_kserve


class Doubler(kserve.Model):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.ready = True

    def predict(self, payload: Any, headers: Any = None, response_headers: Any = None) -> Any:
        request = oip_kserve.to_oip_request(payload)  # any KServe InferRequest -> oipcodec's
        y = Tensor.from_array("OUTPUT0", request.input("INPUT0").data * 2)
        return oip_kserve.from_oip_response(
            InferResponse(self.name, [y], id=request.id), request=payload
        )


def main() -> None:
    args, _ = argparse.ArgumentParser(parents=[kserve_parser]).parse_known_args()
    _loopback_only()
    server = kserve.ModelServer(
        http_port=args.http_port, grpc_port=args.grpc_port, workers=1, enable_docs_url=False
    )
    oip_kserve.patch_dataplane(server.dataplane)  # binary REST bodies straight to arrays
    server.start([Doubler("doubler")])


if __name__ == "__main__":
    main()
