"""The peer servers' codecs (the ``kserve`` and ``mlserver`` implementations): what KServe's
and MLServer's servers do to a request as oipcodec's client writes it, and to the identity
model's answer, called in-process so that their server codec time per request stands next to
oipcodec's.

Decode is the request's wire bytes to the numpy arrays a model holds; encode is those arrays,
given back as the identity model's outputs, to the answer's wire bytes. Each step is the
peer's own code, as its server runs it (``_kserve`` and ``_mlserver`` list the calls). The
paths and datatypes a peer's server cannot take are named by :func:`unsupported`. A peer is
timed in a worker process of its own: KServe's, MLServer's and tritonclient's protobuf modules
all register ``inference.*`` in protobuf's default pool, so no two share a process.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Callable
from typing import Any

from oipcodec import pb, rest
from oipcodec.bench.encoding import EncodingPath
from oipcodec.bench.paths.base import CodecOps, same_values
from oipcodec.bench.paths.oip import wire
from oipcodec.bench.workload import Workload

__all__ = [
    "SERVER_PEERS",
    "ServerCodec",
    "codec_ops",
    "installed",
    "server_codec",
    "unsupported",
]

#: Peers measured on the server side: their codecs in-process, their servers end to end only
#: when ``--url`` / ``--grpc-target`` point at one.
SERVER_PEERS = ("kserve", "mlserver")

#: decode: request wire bytes -> the model's input arrays; encode: -> (answer, JSON length).
ServerCodec = tuple[Callable[[], list[Any]], Callable[[], tuple[bytes, int | None]]]


def installed(peer: str) -> bool:
    """Whether ``peer`` can be imported here, found without importing it (KServe's protobuf
    module would claim ``inference.*`` in the default pool of the calling process)."""
    return importlib.util.find_spec(peer) is not None


def unsupported(peer: str, path: EncodingPath, datatype: str) -> str | None:
    """None when ``peer``'s server takes ``datatype`` on ``path``, else why not."""
    json_body = path.protocol == "rest" and not path.binary
    if peer == "kserve":
        if path.compression is not None:
            return "KServe's server does not decompress request bodies"
        if datatype == "BF16":
            return "KServe has no BF16"
        if datatype == "FP16" and json_body:
            return "KServe refuses FP16 in JSON"
    elif peer == "mlserver":
        if path.protocol == "rest" and path.binary:
            return "MLServer has no binary tensor data extension"
        if datatype == "BF16":
            return "MLServer has no BF16"
    return None


def server_codec(peer: str, protocol: str, model: str, body: bytes,
                 header_length: int | None) -> ServerCodec:  # fmt: skip
    """``peer``'s server decode and encode for one request: ``body`` is the REST body
    (``header_length`` as the Inference-Header-Content-Length header) or the gRPC message."""
    if peer == "kserve":
        return _kserve(protocol, model, body, header_length)
    if peer == "mlserver":
        return _mlserver(protocol, model, body)
    raise ValueError(f"no server codec for {peer!r}")


def codec_ops(peer: str, path: EncodingPath, workload: Workload) -> CodecOps:
    """``peer``'s server decode and encode of the request oipcodec's client writes on ``path``,
    checked once: the model gets the values sent, and the answer, read back by oipcodec,
    holds them (else ValueError)."""
    (tensor,) = workload.inputs  # an echo workload: supported() keeps the others away
    sent = wire(path, workload)
    decode, encode = server_codec(peer, path.protocol, workload.model, sent.body,
                                  sent.header_length)  # fmt: skip
    if not same_values(tensor, decode()[0]):
        raise ValueError(f"{peer}'s decode does not give the values sent")
    answer, answer_length = encode()
    if path.protocol == "rest":
        received = rest.decode_response(answer, answer_length).outputs[0].data
    else:
        received = pb.decode_response(answer).outputs[0].data
    if not same_values(tensor, received):
        raise ValueError(f"{peer}'s answer does not hold the values sent")
    return CodecOps(None, None, decode, encode, len(sent.body), len(answer))


# ------------------------------------------------------------------------------ KServe


def _kserve(protocol: str, model: str, body: bytes, header_length: int | None) -> ServerCodec:
    """KServe 0.21 (``kserve.protocol``). The model reads its input and answers as KServe's own
    model servers do, with ``kserve.utils.utils.get_predict_input`` and
    ``get_predict_response``: an array, or the list of strings of BYTES in JSON, and outputs in
    binary when the request asked.

    - REST JSON: ``json.loads`` and pydantic ``InferenceRequest`` (FastAPI's body), then
      ``InferRequest.from_inference_request``; the answer's ``to_rest()`` dict through
      ``InferenceResponse.model_validate`` (the v2 infer endpoint), FastAPI's
      ``jsonable_encoder`` and ``JSONResponse``.
    - REST binary: ``InferRequest.from_bytes``; the answer's ``to_rest()`` bytes.
    - gRPC: ``ModelInferRequest.FromString`` and ``InferRequest.from_grpc`` (the servicer's
      ``ModelInfer``); ``to_grpc().SerializeToString()``.
    """
    from kserve.protocol.infer_type import InferRequest
    from kserve.utils.utils import get_predict_input, get_predict_response

    if protocol == "grpc":
        from kserve.protocol.grpc.grpc_predict_v2_pb2 import ModelInferRequest

        def parse() -> Any:
            return InferRequest.from_grpc(ModelInferRequest.FromString(body))

    elif header_length is not None:

        def parse() -> Any:
            return InferRequest.from_bytes(body, header_length, model)

    else:
        from kserve.protocol.rest.v2_datamodels import InferenceRequest

        def parse() -> Any:
            return InferRequest.from_inference_request(
                InferenceRequest.model_validate(json.loads(body)), model
            )

    def decode() -> list[Any]:
        return [get_predict_input(parse())]

    request = parse()
    (result,) = decode()

    if protocol == "grpc":

        def encode() -> tuple[bytes, int | None]:
            answer = get_predict_response(request, result, model)
            return answer.to_grpc().SerializeToString(), None

        return decode, encode

    from fastapi.encoders import jsonable_encoder
    from kserve.protocol.rest.v2_datamodels import InferenceResponse
    from starlette.responses import JSONResponse

    def encode_rest() -> tuple[bytes, int | None]:
        content, json_length = get_predict_response(request, result, model).to_rest()
        if isinstance(content, bytes):
            return content, json_length
        validated = InferenceResponse.model_validate(content)
        return bytes(JSONResponse(jsonable_encoder(validated)).body), None

    return decode, encode_rest


# ------------------------------------------------------------------------------ MLServer


def _mlserver(protocol: str, model: str, body: bytes) -> ServerCodec:
    """MLServer 1.7 (``mlserver``): a model that decodes with ``NumpyCodec`` (``StringCodec``
    for BYTES) and answers with the same codec's ``encode_output``.

    - REST JSON: ``orjson.loads`` (its ``Request.json``) and pydantic
      ``InferenceRequest.model_validate`` (FastAPI's body); the ``InferenceResponse`` dumped as
      its routes do (``mode="json"``, ``exclude_unset``, ``exclude_none``) and written by
      ``encode_to_json_bytes`` (its ``Response.render``).
    - gRPC: ``ModelInferRequest.FromString`` and ``ModelInferRequestConverter.to_types`` (raw
      contents through ``mlserver.raw.inject_raw``); ``ModelInferResponseConverter.from_types``,
      raw when the request was (the servicer's ``_GetReturnRaw``), ``SerializeToString()``.
    """

    # Imported by name: MLServer has no stubs (and cannot share an environment with KServe).
    def module(name: str) -> Any:
        return importlib.import_module(f"mlserver.{name}")

    codecs, types = module("codecs"), module("types")

    def codec(request_input: Any) -> Any:
        return codecs.StringCodec if request_input.datatype == "BYTES" else codecs.NumpyCodec

    if protocol == "grpc":
        converters = module("grpc.converters")
        message_type = module("grpc.dataplane_pb2").ModelInferRequest

        def parse() -> Any:
            return converters.ModelInferRequestConverter.to_types(message_type.FromString(body))

        servicer = module("grpc.servicers").InferenceServicer
        use_raw = servicer._GetReturnRaw(message_type.FromString(body))
    else:
        import orjson

        def parse() -> Any:
            return types.InferenceRequest.model_validate(orjson.loads(body))

    def decode() -> list[Any]:
        return [codec(item).decode_input(item) for item in parse().inputs]

    request = parse()
    arrays = decode()

    def answer() -> Any:
        outputs = [
            codec(item).encode_output(item.name, array)
            for item, array in zip(request.inputs, arrays, strict=True)
        ]
        return types.InferenceResponse(model_name=model, id=request.id, outputs=outputs)

    if protocol == "grpc":

        def encode() -> tuple[bytes, int | None]:
            response = converters.ModelInferResponseConverter.from_types(answer(), use_raw=use_raw)
            return response.SerializeToString(), None

        return decode, encode

    encode_to_json_bytes = module("codecs.json").encode_to_json_bytes

    def encode_rest() -> tuple[bytes, int | None]:
        content = answer().model_dump(mode="json", exclude_unset=True, exclude_none=True)
        return encode_to_json_bytes(content), None

    return decode, encode_rest
