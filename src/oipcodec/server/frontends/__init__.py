"""The front ends: one module per wire protocol, each over a model registry.

``rest_frontend`` (OIP REST, an ASGI app), ``grpc_frontend`` (OIP gRPC), ``trtis_frontend``
(the TensorRT Inference Server v1 API, HTTP routes and gRPC servicer), ``graphpipe_frontend``
and ``metrics_frontend`` (Prometheus). Each imports the core of :mod:`oipcodec.server` and the
shared ASGI helpers of ``_asgi`` only, never another front end, the transport or the runtime:
:mod:`oipcodec.server.runtime` decides which of them answers on which port.
"""
