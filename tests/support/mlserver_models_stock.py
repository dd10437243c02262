"""An MLServer runtime that never imports oipcodec (MLServer as it ships), for the tests of
oipcodec's clients against a stock MLServer in tests/compat/test_compat_mlserver.py."""

from __future__ import annotations

from mlserver import MLModel
from mlserver.codecs import NumpyRequestCodec
from mlserver.types import InferenceRequest, InferenceResponse, ResponseOutput


class Identity(MLModel):
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


class CodecIdentity(MLModel):
    """An identity written the way MLServer's documentation writes models: NumpyRequestCodec
    reads the request and writes the answer, naming the output itself (``output-0``)."""

    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        array = NumpyRequestCodec.decode_request(payload)
        return NumpyRequestCodec.encode_response(self.name, array)
