"""The TensorRT Inference Server v1 paths (HTTP raw and gRPC), oipcodec's client only: the
typed identity models the embedded server serves for them, the caller, and the round trip's
codec calls."""

from __future__ import annotations

from typing import Any

from oipcodec import datatypes
from oipcodec import trtis_v1 as trtis
from oipcodec.bench.encoding import EncodingPath
from oipcodec.bench.paths.base import Caller, CodecOps, as_tensors
from oipcodec.bench.paths.oip import OurClients
from oipcodec.bench.payloads import INPUT
from oipcodec.bench.workload import Workload
from oipcodec.server.model import Arrays, Model, TensorSpec
from oipcodec.types import InferResponse, Tensor

__all__ = ["V1_RANKS", "V1Identity", "caller", "codec_ops", "v1_model_name", "v1_models"]


class V1Identity(Model):
    """The identity of one datatype and rank, declared, as the v1 API needs (its requests
    name no datatype); it does not batch, so v1 dims are the whole shape."""

    platform = "oipcodec_python"

    def __init__(self, datatype: str, rank: int) -> None:
        spec = TensorSpec(INPUT, datatype, [-1] * rank)
        super().__init__(f"v1_identity_{datatype.lower()}_{rank}d", inputs=[spec], outputs=[spec])

    def predict(self, inputs: Arrays, parameters: Any) -> Arrays:
        return inputs


#: The ranks the typed identity models cover.
V1_RANKS = (1, 2, 3, 4)


def v1_models() -> list[Model]:
    """A :class:`V1Identity` for every datatype v1 has (all but BF16) and rank 1 to 4: the
    embedded server's models for the v1 paths."""
    return [
        V1Identity(name, rank)
        for name in datatypes.DATATYPES
        if name != "BF16"
        for rank in V1_RANKS
    ]


def v1_model_name(tensor: Tensor) -> str:
    """The typed identity model a v1 path sends ``tensor`` to."""
    rank = len(tensor.shape)
    if rank not in V1_RANKS:
        raise ValueError(f"the v1 paths send tensors of rank 1 to 4, not {rank}")
    return f"v1_identity_{tensor.datatype.lower()}_{rank}d"


def caller(ours: OurClients, path: EncodingPath, workload: Workload,
           inputs: list[Tensor]) -> Caller:  # fmt: skip
    """oipcodec's v1 client (HTTP or gRPC): the identity payload goes to the typed identity
    model of its datatype and rank (a v1 request names no datatype), a model's generated
    request to the model itself. Answers as Tensors, for the workload's checks."""
    client = ours.v1_http if path.protocol == "rest" else ours.v1_grpc
    if client is None:
        raise ValueError(f"no {'REST URL' if path.protocol == 'rest' else 'gRPC target'}")
    model = v1_model_name(inputs[0]) if workload.echo else workload.model
    values = {t.name: t.data for t in inputs}
    batch = inputs[0].shape[0] if workload.batching else None

    def call_v1() -> Any:
        return as_tensors(client.infer(model, values, batch_size=batch).outputs.items())

    return call_v1


def codec_ops(workload: Workload) -> CodecOps:
    """The v1 round trip over HTTP (the gRPC path's header is the same message, in binary):
    the client writes the text header and joins the raw body; the server parses the header
    and splits the body into views, then writes the answer's header as text; the client parses
    it and reads the outputs."""
    from oipcodec.client.trtis_client import build_header, read_outputs
    from oipcodec.proto import trtis_v1_pb2 as v1pb

    tensor = workload.inputs[0]
    spec = trtis.InputSpec(INPUT, tensor.datatype, tuple(-1 for _ in tensor.shape))
    output: Any = v1pb.ModelOutput(name=INPUT)
    output.data_type = trtis.v1_datatype(tensor.datatype)
    config = v1pb.ModelConfig(output=[output])
    inputs = {INPUT: tensor.data}

    def client_encode() -> tuple[str, bytes]:
        header, raws = build_header(inputs, None, None)
        return trtis.request_header_text(header), b"".join(raws)

    text, body = client_encode()

    def server_decode() -> Any:
        header = trtis.parse_request_header(text)
        return trtis.decode_inputs(header, body, [spec], 0)

    response = InferResponse("v1_identity", server_decode())

    def server_encode() -> tuple[str, list[Any]]:
        header, parts = trtis.encode_response(response, batch_size=1, batched=False)
        return trtis.response_header_text(header), parts

    answer_text, parts = server_encode()
    answer = b"".join(parts)

    def client_decode() -> Any:
        header = trtis.parse_response_header(answer_text)
        return read_outputs(header, [answer], config, False)

    return CodecOps(
        client_encode,
        client_decode,
        server_decode,
        server_encode,
        len(text) + len(body),
        2 * len(answer_text) + len(answer),  # NV-InferResponse, and appended to the body
    )
