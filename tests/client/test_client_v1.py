"""oipcodec.client.trtis_client against a real ``oipcodec serve``: RAW and CLASS outputs over HTTP and
gRPC, batching and not, TYPE_STRING, status and model control, and failures as ServerError
with the v1 code."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.errors import ServerError
from oipcodec.server.demo import AddSub, Simple, SimpleString
from oipcodec.testing import RunningServer, background
from tests.support.classify_models import LABELS, Scores

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("grpc")
from oipcodec.client.trtis_client import V1GrpcClient, V1HttpClient

A = np.arange(32, dtype=np.int32).reshape(2, 16)
B = np.ones((2, 16), dtype=np.int32)


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    models = [Simple(), SimpleString(), AddSub(), Scores("scores", 8, {"LABELED": LABELS})]
    with background(models, log_level="critical") as running:
        yield running


@pytest.fixture(params=["http", "grpc"])
def client(request: pytest.FixtureRequest, server: RunningServer) -> Iterator[Any]:
    if request.param == "http":
        made: Any = V1HttpClient(server.http_url, timeout=30)
    else:
        made = V1GrpcClient(server.grpc_address, timeout=30)
    with made:
        yield made


def test_health_and_status(client: Any) -> None:
    assert client.live() and client.ready()
    status = client.status("simple")
    assert list(status.model_status) == ["simple"]
    assert status.model_status["simple"].config.max_batch_size == 8


def test_simple_batched_raw_and_classes(client: Any) -> None:
    result = client.infer(
        "simple", {"INPUT0": A, "INPUT1": B}, {"OUTPUT0": None, "OUTPUT1": 2}, batch_size=2
    )
    np.testing.assert_array_equal(result.outputs["OUTPUT0"], A + B)
    assert result.outputs["OUTPUT0"].shape == (2, 16)
    # OUTPUT1 = A - B; each batch row is ranked apart (class indices 0..15 in each)
    ranked = [[(i, v) for i, v, _ in row] for row in result.classes["OUTPUT1"]]
    assert ranked == [[(15, 14.0), (14, 13.0)], [(15, 30.0), (14, 29.0)]]
    every = client.infer("simple", {"INPUT0": A[:1], "INPUT1": B[:1]}, batch_size=1)
    assert sorted(every.outputs) == ["OUTPUT0", "OUTPUT1"]
    np.testing.assert_array_equal(every.outputs["OUTPUT1"], A[:1] - B[:1])


def test_strings_labels_and_not_batching(client: Any) -> None:
    values = np.array([[str(i).encode() for i in range(16)]], dtype=object)
    result = client.infer("simple_string", {"INPUT0": values, "INPUT1": values}, batch_size=1)
    assert result.outputs["OUTPUT0"].tolist() == [[str(2 * i).encode() for i in range(16)]]
    x = np.array([[0.2, 0.7, 0.1]], dtype=np.float32)
    labeled = client.infer("scores", {"X": x}, {"LABELED": 1}, batch_size=1)
    assert labeled.classes["LABELED"] == [[(1, pytest.approx(0.7), LABELS[1])]]
    a = np.arange(5, dtype=np.float32)
    sums = client.infer("add_sub", {"INPUT0": a, "INPUT1": a}, ["OUTPUT0"])  # no batching
    np.testing.assert_array_equal(sums.outputs["OUTPUT0"], 2 * a)


def test_failures(client: Any) -> None:
    with pytest.raises(ServerError, match="'nope'") as info:
        client.infer("nope", {"INPUT0": A})
    assert info.value.code == "NOT_FOUND"
    with pytest.raises(ServerError, match="batch_size 9") as info:
        many = np.zeros((9, 16), np.int32)
        client.infer("simple", {"INPUT0": many, "INPUT1": many}, batch_size=9)
    assert info.value.code == "INVALID_ARG"
    with pytest.raises(ValueError, match="first dimension is the batch, 3"):
        client.infer("simple", {"INPUT0": A, "INPUT1": B}, batch_size=3)


def test_model_control_http(server: RunningServer) -> None:
    with V1HttpClient(server.http_url, timeout=30) as client:
        client.unload_model("add_sub")
        with pytest.raises(ServerError) as info:
            client.infer("add_sub", {"INPUT0": np.zeros(2, np.float32)})
        assert info.value.code == "UNAVAILABLE"
        client.load_model("add_sub")
        with pytest.raises(ServerError, match="'nope'"):
            client.load_model("nope")
