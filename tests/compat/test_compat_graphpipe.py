"""The real GraphPipe Python client (``graphpipe`` 1.0.4 on PyPI: graphpipe.remote and
graphpipe.convert, on flatbuffers 1.x) against oipcodec's server.

graphpipe 1.0.4 pins flatbuffers==1.9 and an old requests, so it lives in an environment of its
own (see docs/graphpipe.md, "Testing with GraphPipe's client"); without it this module skips.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oipcodec.testing import RunningServer
from tests.support.graphpipe_models import graphpipe_server
from tests.support.peers import require_peer

pytest.importorskip("uvicorn", reason="the server extra is not installed")
remote = require_peer("graphpipe.remote")
convert = require_peer("graphpipe.convert")

#: Every type the client maps (its convert.t_to_np), but String.
DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"]
DTYPES += ["float16", "float32", "float64"]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with graphpipe_server() as running:
        yield running


def url(server: RunningServer, model: str) -> str:
    return f"{server.http_url}/graphpipe/{model}"


def test_metadata(server: RunningServer) -> None:
    uri = url(server, "gp_pair")
    meta = remote.metadata(uri)
    assert meta.Name() == b"gp_pair" and meta.Server() == b"oipcodec"
    assert remote.get_input_names(uri) == ["A", "B"]
    assert remote.get_output_names(uri) == ["DOUBLE", "COUNT", "CONFIG"]
    assert remote.get_input_shapes(uri) == [[None, 2], [None]]
    assert remote.get_output_shapes(uri) == [[None, 2], [1], [1]]
    assert remote.get_input_types(uri) == [np.dtype(np.float32), np.dtype(object)]
    assert remote.get_output_types(uri) == [
        np.dtype(np.float32),
        np.dtype(np.int64),
        np.dtype(object),
    ]


@pytest.mark.parametrize("dtype", DTYPES)
def test_execute_every_numeric_type(server: RunningServer, dtype: str) -> None:
    array = (np.arange(24) % 100).astype(dtype).reshape(2, 3, 4)
    out = remote.execute(url(server, "gp_echo"), array, input_name="x")
    assert out.dtype == array.dtype and out.shape == array.shape
    assert out.tolist() == array.tolist()


def test_float_specials_survive(server: RunningServer) -> None:
    array = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], dtype=np.float32)
    out = remote.execute(url(server, "gp_echo"), array, input_name="x")
    assert out.tobytes() == array.tobytes()


@pytest.mark.parametrize(
    "strings",
    [
        np.array([b"", b"abc", b"a\0b"], dtype=object),
        np.array(["é", "日本語", ""]),
        np.array([[b"x", b"yy"], [b"", b"\xff\xfe"]], dtype=object),
    ],
)
def test_execute_strings(server: RunningServer, strings: np.ndarray[Any, Any]) -> None:
    out = remote.execute(url(server, "gp_echo"), strings, input_name="s")
    want = [s.encode() if isinstance(s, str) else s for s in strings.reshape(-1).tolist()]
    # The client reads String tensors into a numpy "S" array (numpy drops trailing NULs).
    assert out.shape == strings.shape
    assert out.reshape(-1).tolist() == want


def test_zero_size_tensors(server: RunningServer) -> None:
    uri = url(server, "gp_echo")
    empty = np.zeros((0, 3), np.float32)
    outs = remote.execute_multi(uri, [empty, np.zeros(0, np.int64)], ["e", "f"], None)
    assert [o.shape for o in outs] == [(0, 3), (0,)]
    out = remote.execute(uri, np.array([], dtype=object).reshape(0, 2), input_name="s")
    assert out.shape == (0, 2)


def test_several_inputs_and_outputs_with_selection_and_config(server: RunningServer) -> None:
    uri = url(server, "gp_pair")
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    b = np.array([b"p", b"q", b"r"], dtype=object)
    double, count, config = remote.execute_multi(uri, [a, b], None, None, config="cfg")
    np.testing.assert_array_equal(double, a * 2)
    assert count.tolist() == [3] and config.tolist() == [b"cfg"]
    count, double = remote.execute_multi(uri, [b, a], ["B", "A"], ["COUNT", "DOUBLE"])
    assert count.tolist() == [3] and double.shape == (2, 2)
    only = remote.execute(url(server, "gp_echo"), np.ones((1, 2), np.float32), "x", "x")
    assert only.tolist() == [[1.0, 1.0]]


def test_the_graphpipe_port(server: RunningServer) -> None:
    uri = f"http://{server.host}:{server.graphpipe_port}"
    assert remote.get_input_names(uri) == ["A", "B"]
    a = np.ones((3, 2), np.float32)
    (double,) = remote.execute_multi(uri, [a, np.array([b"x"], object)], None, ["DOUBLE"])
    assert double.tolist() == (a * 2).tolist()


@pytest.mark.parametrize(
    ("model", "inputs", "names", "message"),
    [
        ("gp_pair", [np.ones((2, 3), np.float32)], ["A"], "input 'A' of model 'gp_pair' has shape"),
        ("gp_pair", [np.ones((1, 2), np.float32)], ["Z"], "unexpected inference input 'Z'"),
        ("gp_pair", [np.ones((1, 2), np.bool_)], ["A"], None),
        ("gp_broken", [np.ones(1, np.float32)], ["x"], "the model broke"),
        ("gp_echo", [np.ones(1, np.float32)], None, "declares no inputs: name them"),
    ],
)
def test_server_errors_reach_the_caller(
    server: RunningServer,
    model: str,
    inputs: list[Any],
    names: list[str] | None,
    message: str | None,
) -> None:
    if message is None:  # a bool array: the client itself has no GraphPipe type for it
        with pytest.raises(KeyError):
            remote.execute_multi(url(server, model), inputs, names, None)
        return
    with pytest.raises(Exception, match=message):
        remote.execute_multi(url(server, model), inputs, names, None)


def test_an_unknown_model_is_an_http_error(server: RunningServer) -> None:
    requests = require_peer("requests")
    with pytest.raises(requests.HTTPError, match="404"):
        remote.metadata(url(server, "nope"))
