"""The alternative: KServe's own ModelServer, with oipcodec's adapter as its codec.

KServe's ModelServer (REST on 8080, gRPC on 8081: its defaults) serves a ``kserve.Model``
whose ``predict`` reads the request through :mod:`oipcodec.compat.kserve` (arrays, no
per-element work) and whose data plane decodes binary-extension REST bodies with oipcodec
(``patch_dataplane``). Run it with ``python kserve_model.py --model_name doubler`` (the image
of Dockerfile.kserve does).
"""

from __future__ import annotations

import argparse
from typing import Any

import kserve

from oipcodec import InferResponse, Tensor
from oipcodec.compat import kserve as oip_kserve


class Doubler(kserve.Model):
    """Y = 2 X, for any number of FP32 values (the model of models.py, as a kserve.Model)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.ready = True

    def predict(self, payload: Any, headers: Any = None, response_headers: Any = None) -> Any:
        request = oip_kserve.to_oip_request(payload)
        x = request.input("X").data
        response = InferResponse(self.name, [Tensor.from_array("Y", x * 2)], id=request.id)
        return oip_kserve.from_oip_response(response, request=payload)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(parents=[kserve.model_server.parser])
    args, _ = parser.parse_known_args()
    server = kserve.ModelServer()
    oip_kserve.patch_dataplane(server.dataplane)
    server.start([Doubler(args.model_name)])
