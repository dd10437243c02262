"""`oipcodec bench --model NAME` on models that are not the identity: the request is built from
the model's metadata (its datatypes and shapes, ``--shape`` for ``-1`` dimensions, a batching
model's batch dimension, ``--input-data`` values), every path carries it, each answer is
checked against the declared outputs, and the first error's message is in the table."""

from __future__ import annotations

import base64
import contextlib
import io
import itertools
import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import oipcodec
from oipcodec import cli
from oipcodec.bench import PATHS, PAYLOADS, runner
from oipcodec.bench.paths import peer_available, peers
from oipcodec.bench.table import render_table
from oipcodec.bench.workload import (
    Output,
    WorkloadError,
    check_answer,
    echo_workload,
    model_workload,
    parse_shape,
    read_input_data,
)
from tests.support.bench_models import bench_models

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")

#: The score model's metadata as the server gives it (the unit tests build requests from it).
SCORE = {
    "name": "score",
    "inputs": [
        {"name": "IDS", "datatype": "INT32", "shape": [-1, 4]},
        {"name": "WEIGHTS", "datatype": "FP32", "shape": [4]},
    ],
    "outputs": [
        {"name": "SCORE", "datatype": "FP32", "shape": [-1]},
        {"name": "LABEL", "datatype": "BYTES", "shape": [-1]},
    ],
}


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    """The bench test models, served with the shared-memory extension (the shm path)."""
    from oipcodec.testing import background

    with background(bench_models(), log_level="critical", shared_memory="system") as running:
        yield running


def _bench(server: Any, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str, str]:
    """``oipcodec bench --url --grpc-target ARGS`` at concurrency 1, short windows: the exit
    status, results.json (empty when none was written), the table and stderr."""
    table, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(table), contextlib.redirect_stderr(errors):
        status = cli.main(
            ["bench", "--url", server.http_url, "--grpc-target", server.grpc_address, *args,
             "--concurrency", "1", "--duration", "0.05", "--no-chart",
             "--output-dir", str(tmp_path)]
        )  # fmt: skip
    written = tmp_path / "results.json"
    results = json.loads(written.read_text()) if written.exists() else {}
    return status, results, table.getvalue(), errors.getvalue()


def _stats(server: Any, model: str) -> int:
    """The server's count of successful inferences of ``model``."""
    with urllib.request.urlopen(f"{server.http_url}/v2/models/{model}/stats") as answer:
        (entry,) = json.loads(answer.read())["model_stats"]
    return int(entry["inference_stats"]["success"]["count"])


def test_two_datatypes_and_a_variable_dimension_on_every_path(server: Any, tmp_path: Path) -> None:
    """INT32 [-1, 4] (sized by --shape) and FP32 [4] in, FP32 and BYTES out: every path of
    oipcodec's clients and tritonclient's carries the generated request and is measured."""
    implementations = ["native"] + (["tritonclient"] if peer_available("tritonclient") else [])
    codecs = [peer for peer in peers.SERVER_PEERS if peers.installed(peer)]
    before = _stats(server, "score")
    status, results, table, errors = _bench(
        server, tmp_path, "--model", "score", "--shape", "IDS:3,4",
        *[arg for impl in implementations + codecs for arg in ("--implementation", impl)],
    )  # fmt: skip
    assert status == 0, errors
    # A peer server's codec is timed on the identity model's payloads only: not run here.
    assert list(results["implementations"]) == implementations
    for peer in codecs:
        assert "identity model's payloads only" in results["skipped"][peer]
    assert results["payloads"] == {
        "score": {
            "datatype": "INT32+FP32",
            "shape": [3, 4],
            "description": "generated from the model's metadata: IDS 3x4 INT32, WEIGHTS 4 FP32",
            "inputs": [
                {"name": "IDS", "datatype": "INT32", "shape": [3, 4]},
                {"name": "WEIGHTS", "datatype": "FP32", "shape": [4]},
            ],
            "outputs": SCORE["outputs"],
        }
    }
    assert results["model_metadata"]["inputs"] == SCORE["inputs"]
    measured = [r for r in results["results"] if not r.get("unsupported")]
    assert {r["path"] for r in measured if r["implementation"] == "native"} == set(PATHS)
    if "tritonclient" in implementations:
        assert {r["path"] for r in measured if r["implementation"] == "tritonclient"} == {
            "rest-json", "rest-binary", "rest-binary-gzip", "grpc-raw", "shm",
        }  # fmt: skip
    for record in measured:
        assert record["error"] is None, (record["implementation"], record["path"], record["error"])
        assert record["payload"] == "score"
        assert record["payload_bytes"] == 3 * 4 * 4 + 4 * 4
        (load,) = record["load"]
        assert load["requests"] > 0 and load["errors"] == 0 and load["rps"] > 0
        assert record["codec_us"]["client"] > 0
    # Every request measured reached the model (plus a probe and a check per row).
    sent = sum(r["load"][0]["requests"] for r in measured)
    assert _stats(server, "score") - before >= sent
    assert "model score (IDS 3x4 INT32, WEIGHTS 4 FP32); latency" in table
    assert "model score declares its inputs" in errors


def test_a_variable_dimension_without_shape_is_one_clear_line(server: Any, tmp_path: Path) -> None:
    status, results, _, errors = _bench(
        server, tmp_path, "--model", "score", "--implementation", "native", "--path", "rest-json"
    )
    assert status == 2 and results == {}
    assert errors.splitlines()[-1] == (
        "oipcodec bench: input 'IDS' has a variable dimension ([-1, 4]): give its size with "
        "--shape IDS:16,4"
    )


def test_a_batching_model_gets_batch_one_without_shape(server: Any, tmp_path: Path) -> None:
    """max_batch_size 4, read from the model's configuration: the batch dimension is 1 (or
    --batch-size) and the rest comes from the metadata; FP16 and BYTES inputs."""
    status, results, _, errors = _bench(
        server, tmp_path, "--model", "batched", "--batch-size", "2", "--implementation",
        "native", "--path", "rest-binary", "--path", "grpc-typed",
    )  # fmt: skip
    assert status == 0, errors
    assert results["payloads"]["batched"]["inputs"] == [
        {"name": "X", "datatype": "FP16", "shape": [2, 3]},
        {"name": "TEXT", "datatype": "BYTES", "shape": [2, 1]},
    ]
    assert results["model_metadata"]["max_batch_size"] == 4
    assert all(r["error"] is None and r["load"][0]["rps"] > 0 for r in results["results"])


def test_a_batching_model_over_grpc_alone(server: Any, tmp_path: Path) -> None:
    """--grpc-target without --url: max_batch_size is read over gRPC (ModelConfig), so the
    batch dimension is not taken for a shape the request must fill."""
    table, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(table), contextlib.redirect_stderr(errors):
        status = cli.main(
            ["bench", "--grpc-target", server.grpc_address, "--model", "batched",
             "--implementation", "native", "--path", "grpc-raw", "--concurrency", "1",
             "--duration", "0.05", "--no-chart", "--output-dir", str(tmp_path)]
        )  # fmt: skip
    assert status == 0, errors.getvalue()
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["model_metadata"]["max_batch_size"] == 4
    assert results["payloads"]["batched"]["inputs"][0]["shape"] == [1, 3]


def test_the_first_error_of_a_broken_model_is_in_the_table(server: Any, tmp_path: Path) -> None:
    implementations = ["native"] + (["tritonclient"] if peer_available("tritonclient") else [])
    status, results, table, errors = _bench(
        server, tmp_path, "--model", "broken", "--path", "rest-binary", "--path", "grpc-raw",
        *[arg for impl in implementations for arg in ("--implementation", impl)],
    )  # fmt: skip
    # Every row failed: results.json and the table all the same, then one line and exit 2.
    assert status == 2
    line = errors.splitlines()[-1]
    assert line.startswith("oipcodec bench: every row of rest-binary, grpc-raw failed; the ")
    assert "the weights file is missing (bench test)" in line
    lines = table.splitlines()
    rows = [  # a row with its continuation lines (the table wraps a message at 100 columns)
        " ".join([line, *(more.strip() for more in itertools.takewhile(
            lambda s: s.startswith("      "), lines[i + 1 :]))])
        for i, line in enumerate(lines) if "REST binary" in line or "gRPC raw" in line
    ]  # fmt: skip
    assert len(rows) == 2 * len(implementations)
    for line in rows:
        assert "error: " in line and "the weights file is missing (bench test)" in line
    for record in results["results"]:
        assert "the weights file is missing (bench test)" in record["error"]
        assert record["load"] == []


def test_an_identity_that_names_its_output_itself(server: Any, tmp_path: Path) -> None:
    """A model that answers the echoed input as ``output-0`` (MLServer's codecs name their
    outputs so) is measured, not an error: its one output is the input back."""
    implementations = ["native"] + (["tritonclient"] if peer_available("tritonclient") else [])
    status, results, table, _ = _bench(
        server, tmp_path, "--model", "renamed", "--payload", "small", "--path",
        "rest-json,rest-binary,grpc-raw",
        *[arg for impl in implementations for arg in ("--implementation", impl)],
    )  # fmt: skip
    assert status == 0 and "error:" not in table, table
    for record in results["results"]:
        assert record["error"] is None and record["load"][0]["rps"] > 0, record
        assert not record["load"][0].get("errors"), record


def test_input_data_file(server: Any, tmp_path: Path) -> None:
    """perf_analyzer's JSON: a plain (nested) list whose one variable dimension follows from
    its length, {"content", "shape"}, and {"b64"}; two requests sent round robin."""
    weights = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    document = {
        "data": [
            {"IDS": [[1, 2, 3, 4], [5, 6, 7, 8]], "WEIGHTS": {"content": weights.tolist()}},
            {
                "IDS": {"content": list(range(12)), "shape": [3, 4]},
                "WEIGHTS": {"b64": base64.b64encode(weights.tobytes()).decode()},
            },
        ]
    }
    data = tmp_path / "input.json"
    data.write_text(json.dumps(document))
    status, results, _, errors = _bench(
        server, tmp_path / "out", "--model", "score", "--input-data", str(data),
        "--implementation", "native", "--path", "rest-json", "--path", "grpc-raw",
        "--path", "shm",
    )  # fmt: skip
    assert status == 0, errors
    # shm: the output regions hold the larger answer too (3 rows after 2).
    assert results["payloads"]["score"]["inputs"][0]["shape"] == [2, 4]
    for record in results["results"]:
        assert record["error"] is None and record["load"][0]["requests"] > 0


def test_input_data_that_does_not_fit_is_one_clear_line(server: Any, tmp_path: Path) -> None:
    data = tmp_path / "input.json"
    data.write_text(json.dumps({"data": [{"IDS": [1, 2, 3], "WEIGHTS": [1, 2, 3, 4]}]}))
    status, _, _, errors = _bench(
        server, tmp_path / "out", "--model", "score", "--input-data", str(data),
        "--implementation", "native", "--path", "rest-json",
    )  # fmt: skip
    assert status == 2
    assert "--input-data data[0] input 'IDS': 3 values" in errors.splitlines()[-1]


def test_embedded_server_demo_model(tmp_path: Path) -> None:
    """Without --url, the embedded server's demo model ``simple`` (INT32 [-1, 16], batching):
    the native worker reads the metadata, the pure worker is given it."""
    table, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(table), contextlib.redirect_stderr(errors):
        status = cli.main(
            ["bench", "--quick", "--model", "simple", "--implementation", "native",
             "--implementation", "pure", "--path", "rest-binary", "--concurrency", "1",
             "--duration", "0.05", "--no-chart", "--output-dir", str(tmp_path)]
        )  # fmt: skip
    assert status == 0, errors.getvalue()
    results = json.loads((tmp_path / "results.json").read_text())
    assert [i["shape"] for i in results["payloads"]["simple"]["inputs"]] == [[1, 16], [1, 16]]
    assert [r["implementation"] for r in results["results"]] == ["native", "pure"]
    assert all(r["error"] is None and r["load"][0]["rps"] > 0 for r in results["results"])
    said = errors.getvalue()
    # The header names the model, and the line after the first worker what it is sent.
    assert "oipcodec bench: model simple x 1 path x " in said
    assert "model simple declares its inputs: each request is generated from its metadata" in said
    assert "else" not in said.split("oipcodec bench: ")[1].splitlines()[0]


def test_model_module_in_the_embedded_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--model-module: the embedded server serves the module's models too (found in the
    working directory, as `oipcodec serve` finds it), and --model measures one of them."""
    # The workers import this oipcodec wherever they start (a relative PYTHONPATH would not
    # survive the change of directory).
    source = str(Path(oipcodec.__file__).parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([source, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.chdir(Path(__file__).parents[1] / "support")
    status = cli.main(
        ["bench", "--quick", "--model-module", "bench_models", "--model", "score", "--shape",
         "IDS:2,4", "--implementation", "native", "--path", "grpc-raw", "--path", "shm",
         "--concurrency", "1", "--duration", "0.05", "--no-chart", "--output-dir", str(tmp_path)]
    )  # fmt: skip
    assert status == 0, capsys.readouterr().err
    results = json.loads((tmp_path / "results.json").read_text())
    assert [r["path"] for r in results["results"]] == ["grpc-raw", "shm"]
    assert all(r["error"] is None and r["load"][0]["rps"] > 0 for r in results["results"])
    assert results["payloads"]["score"]["inputs"][0]["shape"] == [2, 4]
    assert cli.main(["bench", "--model-module", "x", "--url", "http://127.0.0.1:1"]) == 2
    assert "--model-module is for the embedded server" in capsys.readouterr().err
    status = cli.main(
        ["bench", "--model-module", "no_such_module", "--implementation", "native", "--path",
         "rest-json", "--output-dir", str(tmp_path / "none")]
    )  # fmt: skip
    assert status == 2
    last = capsys.readouterr().err.splitlines()[-1]  # one line naming the module
    assert last.startswith("oipcodec bench: the embedded server did not start: ")
    assert "'no_such_module'" in last


def test_results_list_only_what_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An implementation skipped (not installed) is not under the implementations of
    results.json; the progress line counts in the singular."""
    monkeypatch.setattr(runner, "peer_available", lambda name: name != "mlserver")
    status = cli.main(
        ["bench", "--quick", "--payload", "small", "--path", "rest-binary", "--implementation",
         "native", "--implementation", "mlserver", "--concurrency", "1", "--duration", "0.05",
         "--no-chart", "--output-dir", str(tmp_path)]
    )  # fmt: skip
    assert status == 0
    err = capsys.readouterr().err
    assert "oipcodec bench: 1 payload x 1 path x native, closed loop at concurrency [1]" in err
    assert "mlserver is not installed, skipped: pip install mlserver" in err
    results = json.loads((tmp_path / "results.json").read_text())
    assert list(results["implementations"]) == ["native"]
    assert results["options"]["implementations"] == ["native"]
    assert results["skipped"] == {"mlserver": "not installed"}
    assert [w["implementation"] for w in results["workers"]] == ["native"]


# ------------------------------------------------------------------------------ the parts


def test_parse_shape() -> None:
    assert parse_shape("IDS:3,4") == ("IDS", (3, 4))
    assert parse_shape("a:b:2") == ("a:b", (2,))  # the name may hold a colon
    for bad, message in (("3,4", "NAME:d1"), ("X:3,a", "integers"), ("X:-1", "non-negative")):
        with pytest.raises(ValueError, match=message):
            parse_shape(bad)


def test_names_are_taken_as_a_list_or_repeated(tmp_path: Path) -> None:
    """--implementation a,b as --concurrency 1,8 takes a list (and --path, --payload too)."""
    args = ["--quick", "--payload", "small", "--concurrency", "1", "--duration", "0.05",
            "--no-chart", "--no-peers"]  # fmt: skip
    parser = cli.build_parser()
    listed = parser.parse_args(["bench", *args, "--implementation", "native,pure",
                                "--path", "rest-json,grpc-raw", "--payload", "strings"])  # fmt: skip
    repeated = parser.parse_args(["bench", *args, "--implementation", "native",
                                  "--implementation", "pure", "--path", "rest-json",
                                  "--path", "grpc-raw", "--payload", "strings"])  # fmt: skip
    for parsed in (listed, repeated):
        assert parsed.implementation == ["native", "pure"]
        assert parsed.path == ["rest-json", "grpc-raw"]
        assert parsed.payload == ["small", "strings"]
    status = cli.main(["bench", *args, "--implementation", "native,pure", "--path",
                       "rest-binary", "--output-dir", str(tmp_path)])  # fmt: skip
    assert status == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert [r["implementation"] for r in results["results"]] == ["native", "pure"]


def test_an_unknown_name_in_a_list_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["bench", "--implementation", "native,bogus"])
    assert "--implementation: unknown ['bogus']; choose from native, pure" in (
        capsys.readouterr().err
    )


def test_cli_refuses_a_second_plain_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "--shape", "4", "--shape", "5"]) == 2
    assert "give it once" in capsys.readouterr().err
    assert cli.main(["bench", "--shape", "X:a"]) == 2
    assert "--shape 'X:a'" in capsys.readouterr().err


def test_model_workload_generates_declared_datatypes_and_shapes() -> None:
    workload = model_workload(SCORE, {"IDS": (5, 4)})
    assert workload is not None and not workload.echo
    ids, weights = workload.inputs
    assert (ids.name, ids.datatype, ids.shape, ids.data.dtype) == ("IDS", "INT32", (5, 4),
                                                                    np.int32)  # fmt: skip
    assert (weights.shape, weights.data.dtype) == ((4,), np.float32)
    again = model_workload(SCORE, {"IDS": (5, 4)})
    assert again is not None and np.array_equal(again.inputs[0].data, ids.data)  # deterministic
    assert workload.output_names == ["SCORE", "LABEL"]
    assert model_workload({"name": "identity", "inputs": []}) is None  # an echo model


def test_model_workload_refusals() -> None:
    with pytest.raises(WorkloadError, match=r"give its size with --shape IDS:16,4"):
        model_workload(SCORE)
    with pytest.raises(WorkloadError, match=r"--shape names NOPE, not an input"):
        model_workload(SCORE, {"NOPE": (1,)})
    with pytest.raises(WorkloadError, match=r"--shape IDS:3,5 does not fit its declared"):
        model_workload(SCORE, {"IDS": (3, 5)})
    batching = {**SCORE, "max_batch_size": 8}
    workload = model_workload(batching, {"IDS": (4,)}, batch_size=3)  # without the batch
    assert workload is not None and workload.inputs[0].shape == (3, 4)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"WEIGHTS": [1, 2, 3, 4]}, "input 'IDS': missing"),
        ({"IDS": [1, 2, 3, 4], "WEIGHTS": [1, 2, 3, 4], "X": [1]}, "names X, not an input"),
        ({"IDS": [2**40, 0, 0, 0], "WEIGHTS": [1, 2, 3, 4]}, "not INT32"),
        ({"IDS": [1.5, 0, 0, 0], "WEIGHTS": [1, 2, 3, 4]}, "not INT32"),
        ({"IDS": {"content": [1] * 8, "shape": [2, 5]}, "WEIGHTS": [1] * 4}, "does not fit"),
        ({"IDS": {"content": [1] * 8, "shape": [4, 4]}, "WEIGHTS": [1] * 4}, "do not fill"),
        ({"IDS": {"b64": "AAA"}, "WEIGHTS": [1] * 4}, "not base64"),
        ({"IDS": {"b64": "AAAA"}, "WEIGHTS": [1] * 4}, "3 bytes, not a whole number"),
        ({"IDS": {"data": 1}, "WEIGHTS": [1] * 4}, "'content' or 'b64'"),
        ({"IDS": "text", "WEIGHTS": [1] * 4}, "expected a list"),
    ],
)
def test_input_data_refusals(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        model_workload(SCORE, input_data=[entry])


def test_input_data_values_and_bytes() -> None:
    metadata = {
        "name": "m",
        "inputs": [{"name": "T", "datatype": "BYTES", "shape": [-1]}],
        "outputs": [],
    }
    workload = model_workload(metadata, input_data=[{"T": ["a", "bc"]}, {"T": ["d"]}])
    assert workload is not None and len(workload.requests) == 2
    assert workload.requests[0][0].data.tolist() == [b"a", b"bc"]
    assert workload.requests[1][0].shape == (1,)
    with pytest.raises(WorkloadError, match="BYTES values must be strings"):
        model_workload(metadata, input_data=[{"T": [1]}])
    with pytest.raises(WorkloadError, match="'b64' is not supported for BYTES"):
        model_workload(metadata, input_data=[{"T": {"b64": "AAAA"}}])


def test_read_input_data_refusals(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="No such file"):
        read_input_data(str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    for text, message in (
        ("{", "not JSON"),
        ('{"data": []}', "a non-empty list of requests"),
        ('[{"X": [1]}]', "a non-empty list of requests"),
        ('{"data": [[{"X": [1]}]]}', "sequences of requests are not supported"),
    ):
        bad.write_text(text)
        with pytest.raises(WorkloadError, match=message):
            read_input_data(str(bad))


def test_check_answer() -> None:
    workload = model_workload(SCORE, {"IDS": (2, 4)})
    assert workload is not None
    score = Output("SCORE", "FP32", (2,), np.zeros(2, np.float32))
    label = Output("LABEL", "BYTES", (2,), np.array([b"a", b"b"], dtype=object))
    check_answer(workload, [score, label])
    with pytest.raises(ValueError, match=r"the answer has no output 'LABEL' \(it has SCORE\)"):
        check_answer(workload, [score])
    with pytest.raises(ValueError, match="output 'SCORE' is FP64, declared FP32"):
        check_answer(workload, [score._replace(datatype="FP64"), label])
    with pytest.raises(ValueError, match=r"output 'SCORE' has shape \[2, 1\], declared \[-1\]"):
        check_answer(workload, [score._replace(shape=(2, 1)), label])
    echo = echo_workload(PAYLOADS["small"], "identity")
    assert echo.echo and echo.output_names == ["INPUT0"] and echo.answer == echo.inputs


def test_table_shows_the_first_error_of_a_window_that_partly_failed() -> None:
    record: dict[str, Any] = {
        "payload": "small", "path": "rest-binary", "implementation": "native", "error": None,
        "payload_bytes": 64, "request_bytes": 10, "response_bytes": 10, "codec_us": {},
        "load": [{"concurrency": 1, "requests": 5, "rps": 50.0, "errors": 1,
                  "first_error": "ServerError: HTTP 500\n  model 'x' failed: out of memory"}],
    }  # fmt: skip
    results = {
        "results": [record],
        "options": {"concurrency": [1]},
        "best": {},
        "payloads": {"small": PAYLOADS["small"].as_dict()},
    }
    lines = render_table(results).splitlines()
    index = next(i for i, line in enumerate(lines) if "REST binary" in line)
    assert lines[index + 1] == (
        "    1 failed request, the first: ServerError: HTTP 500 model 'x' failed: out of memory"
    )
