"""Clients going away from a gRPC stream mid-way (issue 35, item 12): under load, ModelStreamInfer
and v1's StreamInfer logged grpcio's ExecuteBatchError traceback at ERROR for about one
disconnect in eight. A client leaving is not a fault of the server: at most a debug line."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from oipcodec import pb
from oipcodec.types import InferRequest, Tensor
from tests.support.serve_process import run_serve

grpc = pytest.importorskip("grpc")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

THREADS = 8
STREAMS = 300  # per thread: 2,400 disconnects in all


def _oip_request() -> bytes:
    x = Tensor.from_array("INPUT0", np.ones((1, 65536), np.float32))
    return pb.encode_request(InferRequest([x], model_name="identity"), raw=True)


def _v1_request() -> bytes:
    from oipcodec.proto import trtis_v1_pb2 as v1

    header = v1.InferRequestHeader(batch_size=1)
    for name in ("INPUT0", "INPUT1"):
        header.input.add(name=name, dims=[65536])
    raw = np.ones(65536, np.float32).tobytes()  # large answers: writes that wait on the client
    request = v1.InferRequest(model_name="add_sub", meta_data=header, raw_input=[raw, raw])
    return request.SerializeToString()


def _leave_streams(target: str, method: str, request: bytes, count: int, errors: list[str]) -> None:
    """Open ``count`` streams that send requests, read one answer and go away (the channel
    closed) while the server still has answers to write; a call that fails is put in
    ``errors`` (issue 47: the native server's GOAWAY failed other channels' calls)."""

    def slowly() -> Iterator[bytes]:
        for i in range(50):
            yield request
            if i % 3 == 2:
                time.sleep(0.01)

    for _ in range(count):
        channel = grpc.insecure_channel(target)
        try:
            next(channel.stream_stream(method)(slowly(), timeout=10))
        except grpc.RpcError as exc:
            errors.append(f"{exc.code()}: {exc.details()}")
        finally:
            channel.close()


def test_clients_leaving_streams_are_not_errors(tmp_path: Path) -> None:
    serving = run_serve(tmp_path, "--log-level", "info")
    address = next(serving)
    try:
        work = [
            ("/inference.GRPCInferenceService/ModelStreamInfer", _oip_request()),
            ("/nvidia.inferenceserver.GRPCService/StreamInfer", _v1_request()),
        ]
        errors: list[str] = []
        threads = [
            threading.Thread(
                target=_leave_streams, args=(address["grpc"], method, body, STREAMS, errors)
            )
            for method, body in work
            for _ in range(THREADS // 2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        # The server still answers a whole stream.
        with grpc.insecure_channel(address["grpc"]) as channel:
            method = channel.stream_stream("/inference.GRPCInferenceService/ModelStreamInfer")
            answers = list(method(iter([work[0][1]] * 3), timeout=30))
        assert len(answers) == 3
        assert errors == []
    finally:
        next(serving, None)
    log = (tmp_path / "serve.log").read_text(errors="replace")
    assert "Traceback" not in log and " ERROR " not in log, log[-4000:]
