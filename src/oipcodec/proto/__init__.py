"""The Open Inference Protocol gRPC API: ``open_inference_grpc.proto`` and its generated modules.

- :mod:`oipcodec.proto.open_inference_grpc_pb2`: the messages (``ModelInferRequest``, ...);
- :mod:`oipcodec.proto.open_inference_grpc_pb2_grpc`: the ``GRPCInferenceService`` stub and
  servicer (needs grpcio: ``pip install "oipcodec[grpc]"``).

The generated modules are committed; ``python -m oipcodec.proto.regenerate`` rewrites them from
the .proto (needs grpcio-tools, in the ``dev`` extra), and tests/codecs/test_proto.py fails when
they drift. Their descriptors live in a private descriptor pool, not protobuf's default one, so they
coexist in one process with tritonclient's and KServe's own ``inference.*`` classes (same
message names, which the default pool refuses to hold twice). The wire format is the same.

- :mod:`oipcodec.proto.trtis_v1_pb2` / :mod:`oipcodec.proto.trtis_v1_pb2_grpc`: the TensorRT
  Inference Server v1 API (``nvidia.inferenceserver.*``: ``InferRequestHeader``,
  ``RequestStatus``, ``ServerStatus``, the ``GRPCService``), from ``trtis_v1.proto``, also in a
  private pool, beside tensorrtserver's own classes.
"""
