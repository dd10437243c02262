"""MLServer runtimes for tests/compat/test_compat_mlserver.py (imported by a real ``mlserver start``).

``OIPIdentity`` is the recipe of docs/compat.md: the runtime's module calls ``install()`` when MLServer
imports it, the model settings select the ``"oip"`` request codec, and ``predict`` answers every
input as an output of the same name. ``PlainIdentity`` is an ordinary MLServer model that knows
nothing of oipcodec (it echoes ``RequestInput.data``), to show that models which do not use the
codec keep working behind oipcodec's REST and gRPC transports.
"""

from __future__ import annotations

from typing import Any

from mlserver import MLModel
from mlserver.errors import InferenceError
from mlserver.types import InferenceRequest, InferenceResponse, ResponseOutput

from oipcodec.compat import mlserver as oip_mlserver

oip_mlserver.install()


class OIPIdentity(MLModel):
    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        arrays: Any = self.decode_request(payload)  # content_type "oip" in model-settings.json
        if not isinstance(arrays, dict):
            raise InferenceError(f"the oip request codec was not used: got {type(arrays)}")
        response = oip_mlserver.OIPRequestCodec.encode_response(self.name, arrays, self.version)
        for output in response.outputs:
            # NumpyCodec's shape rule (which the codec follows) answers [N] as [N, 1].
            output.shape = list(arrays[output.name].shape)
        return response


class PlainIdentity(MLModel):
    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        return InferenceResponse(
            model_name=self.name,
            outputs=[
                ResponseOutput(name=i.name, shape=i.shape, datatype=i.datatype, data=i.data)
                for i in payload.inputs
            ],
        )
