"""`oipcodec bench`: the harness runs in --quick mode on a tiny payload set, and its
results.json, table and chart hold every path; plus its parts (payloads, chart, options)."""

from __future__ import annotations

import json
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec import InferResponse, cli, pb, rest
from oipcodec.bench import PATHS, PAYLOADS, chart, custom_payload
from oipcodec.bench.load import Measurement, measure_level, time_call
from oipcodec.bench.paths import codec_ops, peer_available, peers, same_values, supported
from oipcodec.bench.payloads import make_tensor
from oipcodec.bench.runner import _chart
from oipcodec.bench.table import TABLE_WIDTH, render_table
from oipcodec.bench.verdicts import best_and_tied
from oipcodec.bench.workload import echo_workload
from tests.support.peers import require_kserve, require_peer

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")


def _read_png(path: Path) -> tuple[int, int, bytes]:
    """Width, height and the decompressed image data of a PNG file, its chunks checked."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height, depth = struct.unpack(">IIB", chunks[0][1][:9])
    assert depth == 8
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(pixels) > height * width  # at least a byte a pixel (RGB or RGBA)
    return width, height, pixels


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    out = tmp_path_factory.mktemp("bench")
    import contextlib
    import io

    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        status = cli.main(
            ["bench", "--quick", "--payload", "small", "--concurrency", "1,2",
             "--duration", "0.1", "--output-dir", str(out)]
        )  # fmt: skip
    assert status == 0
    return json.loads((out / "results.json").read_text()), table.getvalue(), out


def test_quick_run_measures_every_path(quick_run: tuple[dict[str, Any], str, Path]) -> None:
    results, _, _ = quick_run
    implementations = ["native", "pure"] + (
        ["tritonclient"] if peer_available("tritonclient") else []
    )
    records = {(r["implementation"], r["path"]): r for r in results["results"]}
    for implementation in ("native", "pure"):
        for path in PATHS:
            record = records[(implementation, path)]
            assert record["error"] is None, record["error"]
            assert record["payload"] == "small"
            assert [e["concurrency"] for e in record["load"]] == [1, 2]
            for entry in record["load"]:
                assert entry["rps"] > 0 and entry["requests"] > 0 and entry["errors"] == 0
                assert entry["mb_per_s"] > 0
                assert 0 < entry["p50_ms"] <= entry["p90_ms"] <= entry["p99_ms"]
            codec = record["codec_us"]
            assert codec["client"] > 0 and codec["server"] > 0
            assert record["request_bytes"] > 0 and record["response_bytes"] > 0
    if "tritonclient" in implementations:
        triton = [r for r in results["results"] if r["implementation"] == "tritonclient"]
        measured = [r for r in triton if not r.get("unsupported")]
        assert {r["path"] for r in measured} == {
            "rest-json",
            "rest-binary",
            "rest-binary-gzip",
            "grpc-raw",
            "shm",
        }
        assert all(r["error"] is None and r["load"][-1]["rps"] > 0 for r in measured)
        assert {r["path"] for r in triton if r.get("unsupported")} == {
            "rest-json-nested",
            "grpc-typed",
            "v1-http-raw",
            "v1-grpc",
            "graphpipe",
        }
    kernels = {w["implementation"]: w.get("kernels") for w in results["workers"]}
    assert kernels["native"] == "native" and kernels["pure"] == "pure"
    # No best where the top rows are within each other's noise (a loaded machine).
    assert all(key.split("/")[0] in PATHS for key in results["best"].values())
    assert results["payloads"]["small"] == {**PAYLOADS["small"].as_dict()}
    assert not results["interrupted"]


def test_quick_run_kserve_rows(quick_run: tuple[dict[str, Any], str, Path]) -> None:
    """KServe's server codec on every path it takes, codec only (no KServe server given)."""
    require_kserve()
    results, table, _ = quick_run
    rows = {r["path"]: r for r in results["results"] if r["implementation"] == "kserve"}
    assert set(rows) == set(PATHS)
    assert "decompress" in rows.pop("rest-binary-gzip")["unsupported"]
    assert rows.pop("shm")["unsupported"] == "kserve has no shared-memory extension"
    for path in ("v1-http-raw", "v1-grpc"):
        assert rows.pop(path)["unsupported"] == "only oipcodec's client speaks the v1 API here"
    assert rows.pop("graphpipe")["unsupported"] == "kserve has no such path"
    for path, record in rows.items():
        assert record["error"] is None, (path, record["error"])
        assert record["load"] == [] and record["codec_only"].startswith("codec only")
        codec = record["codec_us"]
        assert codec["server_decode"] > 0 and codec["server_encode"] > 0
        assert codec["server"] == codec["server_decode"] + codec["server_encode"]
        assert "client" not in codec
        assert record["request_bytes"] > 0 and record["response_bytes"] > 0
    worker = next(w for w in results["workers"] if w["implementation"] == "kserve")
    assert worker["version"] and worker["url"] is None  # no server started for a peer's codec
    assert "KServe" in results["implementations"]["kserve"]
    assert not results["best"].get("small", "").endswith("/kserve")
    lines = [line for line in table.splitlines() if "kserve" in line]
    assert sum("codec only (no --url)" in line for line in lines) == 3
    assert sum("codec only (no --grpc-target)" in line for line in lines) == 2
    assert any("REST binary+gzip" in line and "not supported: KServe" in line for line in lines)
    assert any(line.startswith("kserve rows: that server's own codec") for line in lines)


def test_quick_run_table_and_chart(quick_run: tuple[dict[str, Any], str, Path]) -> None:
    results, table, out = quick_run
    assert "small (1x16 FP32)" in table
    assert "REST binary+gzip" in table and "gRPC typed" in table
    marked = [line for line in table.splitlines() if line.startswith("* ")]
    if "small" not in results["best"]:  # the top rows within noise of each other: no best
        assert not marked
    else:
        best_path, best_impl = results["best"]["small"].split("/")
        assert len(marked) == 1 and PATHS[best_path].label in marked[0]
        assert best_impl in marked[0]
    if chart.missing() is not None:  # an install without the bench extra: a note, no chart
        assert chart.missing() in table and not (out / "throughput.png").exists()
        return
    assert f"{out / 'throughput.png'}" in table
    width, height, pixels = _read_png(out / "throughput.png")
    assert width > 500 and height > 200
    assert len(set(pixels)) > 3  # not a blank image


def test_without_matplotlib_the_run_goes_on_without_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No matplotlib: one line says the chart is skipped; table and results.json as always."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    status = cli.main(
        ["bench", "--quick", "--payload", "small", "--path", "rest-binary", "--implementation",
         "native", "--concurrency", "1", "--duration", "0.05", "--output-dir", str(tmp_path)]
    )  # fmt: skip
    assert status == 0
    out = capsys.readouterr().out
    lines = out.replace(str(tmp_path), "<out>").splitlines()
    notes = [line for line in lines if "matplotlib" in line or "chart" in line]
    assert notes == ["no chart: matplotlib is not installed (pip install 'oipcodec[bench]')"]
    assert "REST binary" in out and "wrote <out>/results.json (" in lines[-1]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["results"][0]["load"][0]["rps"] > 0
    assert not (tmp_path / "throughput.png").exists()


def _bench_our_server(tmp_path: Path, *args: str) -> dict[str, Any]:
    """``oipcodec bench ARGS`` against a running embedded server (given by --url and
    --grpc-target), short windows at concurrency 1, no chart; its results.json."""
    from oipcodec.testing import background

    with background(log_level="critical") as server:
        status = cli.main(
            ["bench", "--url", server.http_url, "--grpc-target", server.grpc_address, *args,
             "--concurrency", "1", "--duration", "0.05", "--no-chart",
             "--output-dir", str(tmp_path)]
        )  # fmt: skip
    assert status == 0
    results: dict[str, Any] = json.loads((tmp_path / "results.json").read_text())
    return results


def test_against_a_running_server(tmp_path: Path) -> None:
    results = _bench_our_server(
        tmp_path, "--implementation", "native", "--path", "rest-binary", "--path", "grpc-raw",
        "--shape", "2,8", "--datatype", "FP16",
    )  # fmt: skip
    assert [(r["payload"], r["path"]) for r in results["results"]] == [
        ("custom", "rest-binary"), ("custom", "grpc-raw"),
    ]  # fmt: skip
    assert all(r["error"] is None and r["load"][0]["rps"] > 0 for r in results["results"])
    assert results["payloads"]["custom"]["datatype"] == "FP16"
    assert not (tmp_path / "throughput.png").exists()


def test_a_model_the_server_lacks_is_an_error_not_a_fast_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its metadata is read before the sweep: the server's 404, in one line, exit 2."""
    from oipcodec.testing import background

    with background(log_level="critical") as server:
        status = cli.main(
            ["bench", "--url", server.http_url, "--model", "no_such_model", "--implementation",
             "native", "--path", "rest-json", "--payload", "small", "--no-chart",
             "--output-dir", str(tmp_path)]
        )  # fmt: skip
    assert status == 2 and not (tmp_path / "results.json").exists()
    (line,) = capsys.readouterr().err.splitlines()
    assert "'no_such_model'" in line and "404" in line, line


def test_kserve_against_a_server_given_is_measured_end_to_end(tmp_path: Path) -> None:
    """With --url / --grpc-target a peer's rows get requests/s (oipcodec's native client
    sending; here to our server, as a stand-in for a KServe one) and keep their codec times."""
    require_kserve()
    results = _bench_our_server(
        tmp_path, "--implementation", "kserve", "--path", "rest-binary", "--path",
        "grpc-typed", "--path", "rest-binary-gzip", "--payload", "small",
    )  # fmt: skip
    by_path = {r["path"]: r for r in results["results"]}
    assert by_path["rest-binary-gzip"]["unsupported"]
    for path in ("rest-binary", "grpc-typed"):
        record = by_path[path]
        assert record["error"] is None and "codec_only" not in record
        assert record["load"][0]["rps"] > 0 and record["codec_us"]["server"] > 0


@pytest.mark.parametrize("peer", peers.SERVER_PEERS)
def test_peer_server_codec_rows(peer: str, tmp_path: Path) -> None:
    """A peer server's rows, from its worker (the peer is never imported here: MLServer's and
    tritonclient's protobuf modules cannot share a process): on every path it takes, its
    decode gave the model the values sent and its answer held them (the worker checks both,
    else the row is an error), with positive codec times; the others say why not."""
    if not peers.installed(peer):
        require_peer(peer)  # skips, or fails where OIPCODEC_REQUIRE_PEERS names the peer
    status = cli.main(
        ["bench", "--quick", "--implementation", peer, "--payload", "tokens", "--payload",
         "strings", "--payload", "logits_bf16", "--no-chart", "--output-dir", str(tmp_path)]
    )  # fmt: skip
    assert status == 0
    results = json.loads((tmp_path / "results.json").read_text())
    records = results["results"]
    assert len(records) == 3 * len(PATHS)
    for record in records:
        reason = supported(peer, PATHS[record["path"]], results["payloads"][record["payload"]]
                           ["datatype"])  # fmt: skip
        if reason is not None:
            assert record["unsupported"] == reason and "codec_us" not in record
            continue
        assert record["error"] is None, record
        assert record["codec_us"]["server_decode"] > 0 and record["codec_us"]["server_encode"] > 0
        assert record["codec_only"] and record["load"] == []
    assert all(r.get("unsupported") for r in records if r["payload"] == "logits_bf16")
    taken = {"kserve": 5, "mlserver": 4}[peer]  # paths x (tokens, strings)
    assert sum(not r.get("unsupported") for r in records) == 2 * taken
    assert results["workers"][0]["version"]


def test_peer_paths_not_supported() -> None:
    paths = PATHS
    assert supported("kserve", paths["rest-binary-gzip"], "FP32") is not None
    assert supported("kserve", paths["grpc-raw"], "BF16") is not None
    assert supported("kserve", paths["rest-json"], "FP16") is not None
    assert supported("kserve", paths["rest-binary"], "FP16") is None
    assert supported("kserve", paths["rest-json-nested"], "BYTES") is None
    assert supported("mlserver", paths["rest-binary"], "FP32") is not None
    assert supported("mlserver", paths["rest-binary-gzip"], "FP32") is not None
    assert supported("mlserver", paths["grpc-typed"], "BF16") is not None
    assert supported("mlserver", paths["grpc-raw"], "BYTES") is None
    assert supported("native", paths["rest-binary-gzip"], "BF16") is None


def test_v1_paths() -> None:
    """The v1 paths: oipcodec's clients only, no BF16 (v1 has none), and a codec round trip
    that gives the payload back through the typed identity model's declared datatype."""
    from oipcodec.bench.paths import codec_ops, v1_model_name, v1_models

    for name in ("v1-http-raw", "v1-grpc"):
        assert supported("native", PATHS[name], "FP32") is None
        assert supported("pure", PATHS[name], "BYTES") is None
        assert supported("native", PATHS[name], "BF16") == "the v1 API has no BF16"
        assert supported("tritonclient", PATHS[name], "FP32") is not None
    names = {model.name for model in v1_models()}
    for payload in ("small", "image", "strings", "tokens"):
        tensor = make_tensor(PAYLOADS[payload])
        assert v1_model_name(tensor) in names
        ops = codec_ops(
            "native", PATHS["v1-http-raw"], echo_workload(PAYLOADS[payload], "identity")
        )
        assert ops.client_encode and ops.client_decode and ops.server_decode and ops.server_encode
        (decoded,) = ops.server_decode()
        np.testing.assert_array_equal(decoded.data, tensor.data)
        np.testing.assert_array_equal(ops.client_decode().outputs["INPUT0"], tensor.data)
        assert ops.request_bytes > tensor.data.nbytes // 2


def test_a_peer_codec_that_answers_wrong_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    tensor = make_tensor(PAYLOADS["small"])
    wrong = make_tensor(PAYLOADS["small"], seed=1)

    def fake(peer: str, protocol: str, model: str, body: bytes, header_length: Any) -> Any:
        def decode() -> list[Any]:
            return [tensor.data]

        def encode() -> tuple[bytes, int | None]:
            if protocol == "grpc":
                return pb.encode_response(InferResponse(model, [wrong])), None
            return rest.encode_response(InferResponse(model, [wrong]))

        return decode, encode

    monkeypatch.setattr(peers, "server_codec", fake)
    for path in ("rest-json", "grpc-raw"):
        with pytest.raises(ValueError, match="kserve's answer does not hold the values sent"):
            codec_ops("kserve", PATHS[path], echo_workload(PAYLOADS["small"], "identity"))
    monkeypatch.setattr(peers, "server_codec", lambda *a: (lambda: [wrong.data], None))
    with pytest.raises(ValueError, match="mlserver's decode does not give the values sent"):
        codec_ops("mlserver", PATHS["rest-json"], echo_workload(PAYLOADS["small"], "identity"))


def test_cli_refuses_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "--shape", "4,a", "--datatype", "FP16"]) == 2
    assert "--shape" in capsys.readouterr().err
    assert cli.main(["bench", "--shape", "4", "--datatype", "FP17"]) == 2
    with pytest.raises(SystemExit):
        cli.main(["bench", "--concurrency", "0"])
    with pytest.raises(SystemExit):
        cli.main(["bench", "--payload", "nope"])


# ------------------------------------------------------------------------------ parts


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_payload_tensors(name: str) -> None:
    payload = PAYLOADS[name]
    tensor = make_tensor(payload)
    assert tensor.datatype == payload.datatype and tensor.shape == payload.shape
    assert same_values(tensor, tensor.data)
    assert same_values(make_tensor(payload), make_tensor(payload).data)  # deterministic


def test_custom_payload() -> None:
    payload = custom_payload("4,128", "FP16")
    assert (payload.name, payload.datatype, payload.shape) == ("custom", "FP16", (4, 128))
    assert make_tensor(payload).data.dtype == np.float16
    assert custom_payload("3x2", "BYTES").shape == (3, 2)
    with pytest.raises(ValueError):
        custom_payload("-1,2", "FP32")


def test_same_values_sees_a_difference() -> None:
    tensor = make_tensor(PAYLOADS["small"])
    other = tensor.data.copy()
    other.flat[3] = np.nextafter(other.flat[3], np.float32(np.inf))
    assert not same_values(tensor, other)
    strings = make_tensor(PAYLOADS["strings"])
    changed = strings.data.copy()
    changed[0] = b"?"
    assert not same_values(strings, changed)


def test_load_is_bounded_and_counts_errors() -> None:
    calls = {"n": 0}

    def make() -> Any:
        def call() -> None:
            calls["n"] += 1

        return call

    result = measure_level(make, Measurement(interval=0.05, max_trials=3), concurrency=2)
    assert len(result.windows) == 3 and 0 < len(result.spans) <= calls["n"]

    def failing() -> Any:
        def call() -> None:
            raise RuntimeError("boom")

        return call

    result = measure_level(failing, Measurement(interval=0.05, max_trials=3), concurrency=3)
    assert not result.spans and result.errors == 3 and "boom" in (result.first_error or "")
    assert time_call(lambda: None, 0.01) >= 0


def _chart_results() -> dict[str, Any]:
    """A results document: native and pure end to end, tritonclient with a path it cannot
    take and one that failed, KServe codec only (no --url), on two payloads."""

    def load(rps: float) -> list[dict[str, Any]]:
        return [{"concurrency": 1, "rps": rps / 4, "p50_ms": 0.5, "p99_ms": 1.0},
                {"concurrency": 8, "rps": rps, "p50_ms": 2.0, "p99_ms": 9.0}]  # fmt: skip

    records: list[dict[str, Any]] = []
    for payload, scale in (("small", 1.0), ("tokens", 0.01)):
        base = {"payload": payload, "error": None, "load": []}
        records += [
            {**base, "path": "rest-json", "implementation": "native", "load": load(2000 * scale),
             "codec_us": {"client": 40.0, "server": 50.0}},
            {**base, "path": "rest-binary", "implementation": "native", "load": load(3000),
             "codec_us": {"client": 20.0, "server": 25.0}},
            {**base, "path": "rest-json", "implementation": "pure", "load": load(300 * scale),
             "codec_us": {"client": 400.0, "server": 500.0}},
            {**base, "path": "rest-json-nested", "implementation": "tritonclient",
             "unsupported": "tritonclient has no such path"},
            {**base, "path": "rest-json", "implementation": "tritonclient", "error": "boom"},
            {**base, "path": "rest-json", "implementation": "kserve", "codec_only":
             "codec only (no --url)", "codec_us": {"server": 700.0 / scale}},
            {**base, "path": "rest-binary-gzip", "implementation": "kserve",
             "unsupported": "KServe's server does not decompress request bodies"},
        ]  # fmt: skip
    return {
        "oipcodec_version": "9.9", "created": "2026-01-02 03:04:05", "interrupted": False,
        "machine": {"cpus": 2, "platform": "Linux-x86_64", "python": "3.11.7"},
        "options": {"concurrency": [1, 8], "quick": True}, "results": records,
        "payloads": {name: PAYLOADS[name].as_dict() for name in ("small", "tokens")},
        "best": best_and_tied(records)[0],
    }  # fmt: skip


def test_chart_panels(tmp_path: Path) -> None:
    """Per payload: requests/s and latency on log axes, the server codecs apart and hatched; one
    legend; the machine and date in the title; a PNG of a sensible size."""
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    results = _chart_results()
    pyplot = "matplotlib.pyplot" in sys.modules
    figure = chart.draw_chart(results)
    assert figure is not None
    # Drawn on an Agg canvas of its own: pyplot (and with it a global backend) left alone.
    assert pyplot or "matplotlib.pyplot" not in sys.modules
    texts = [t.get_text() for sub in figure.subfigs for t in sub.texts]
    assert any("oipcodec 9.9 bench (--quick)" in t for t in texts)
    assert any(all(s in t for s in ("2 CPUs", "Linux-x86_64", "Python 3.11.7", "2026-01-02"))
               for t in texts)  # fmt: skip
    (legend,) = [leg for sub in figure.subfigs for leg in sub.legends]
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:4] == ["native", "pure", "tritonclient", "kserve"]
    assert "codec only" in labels[4]
    rows = figure.subfigs[1:]
    assert [row._suptitle.get_text() for row in rows] == ["small (1x16 FP32)",
                                                          "tokens (8x512 INT64)"]  # fmt: skip
    colours = {to_hex(p.get_facecolor()) for p in legend.get_patches()[:4]}
    assert len(colours) == 4  # one colour per implementation
    for row, scale in zip(rows, (1.0, 0.01), strict=True):
        throughput, latency, codec = row.axes
        assert throughput.get_xscale() == latency.get_xscale() == codec.get_xscale() == "log"
        assert "requests/s at concurrency 8" in throughput.get_xlabel()
        bars = [p for p in throughput.patches if p.get_width() > 0]
        # The bars' lengths are the figures at concurrency 8; no KServe among them.
        assert sorted(p.get_width() for p in bars) == sorted([300 * scale, 2000 * scale, 3000])
        assert all(not p.get_hatch() for p in bars + list(latency.patches))
        assert {t.get_text() for t in throughput.texts} >= {
            "tritonclient: not supported", "tritonclient: error"}  # fmt: skip
        assert not any("kserve" in t.get_text() for t in throughput.texts)
        assert sorted(p.get_width() for p in latency.patches) == [2.0] * 3  # p50
        served = sorted(p.get_width() for p in codec.patches)
        assert served == sorted([25.0, 50.0, 500.0, 700.0 / scale])
        assert all(p.get_hatch() for p in codec.patches)
        assert "kserve: not supported" in {t.get_text() for t in codec.texts}
    chart.write_chart(results, tmp_path / "c.png")
    width, height, pixels = _read_png(tmp_path / "c.png")
    assert 1000 < width < 3000 and 400 < height < 3000
    assert len(set(pixels)) > 3


def test_chart_without_peers_has_two_columns(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    results = _chart_results()
    results["results"] = [r for r in results["results"] if r["implementation"] != "kserve"]
    figure = chart.draw_chart(results)
    assert figure is not None
    assert [len(row.axes) for row in figure.subfigs[1:]] == [2, 2]
    assert _chart(results, tmp_path / "c.png")
    assert _read_png(tmp_path / "c.png")[0] > 500


def test_table_marks_the_best_and_shows_errors() -> None:
    def record(path: str, impl: str, rps: float | None, error: str | None = None) -> dict[str, Any]:
        load = [] if rps is None else [{"concurrency": 8, "requests": 10, "rps": rps,
                                        "mb_per_s": 1.0, "p50_ms": 1, "p90_ms": 2, "p99_ms": 3}]  # fmt: skip
        return {"payload": "small", "path": path, "implementation": impl, "load": load,
                "error": error, "codec_us": {"client": 5, "server": 6}}  # fmt: skip

    records = [record("rest-json", "native", 10), record("grpc-raw", "pure", 20),
               record("rest-binary", "native", 30, error="boom")]  # fmt: skip
    best = best_and_tied(records)[0]
    assert best == {"small": "grpc-raw/pure"}
    table = render_table({
        "results": records, "best": best, "options": {"concurrency": [8]},
        "payloads": {"small": PAYLOADS["small"].as_dict()},
    })  # fmt: skip
    lines = table.splitlines()
    assert any(line.startswith("* gRPC raw") and "pure" in line for line in lines)
    assert any("REST binary" in line and "error: boom" in line for line in lines)


def test_table_and_chart_with_peer_rows_without_throughput(tmp_path: Path) -> None:
    base: dict[str, Any] = {"payload": "small", "load": [], "error": None}
    records: list[dict[str, Any]] = [
        {**base, "path": "rest-json", "implementation": "mlserver", "codec_only":
         "codec only (no --url)", "codec_us": {"server": 321.0}, "request_bytes": 500,
         "response_bytes": 700},
        {**base, "path": "rest-binary", "implementation": "mlserver",
         "unsupported": "MLServer has no binary tensor data extension"},
    ]  # fmt: skip
    results = {
        "results": records, "best": best_and_tied(records)[0], "options": {"concurrency": [1, 8]},
        "payloads": {"small": PAYLOADS["small"].as_dict()}, "oipcodec_version": "x",
        "machine": {"cpus": 2, "python": "3"}, "created": "now",
    }  # fmt: skip
    assert results["best"] == {}
    lines = render_table(results, wide=True).splitlines()
    header = next(line for line in lines if "server us" in line)
    (codec_row,) = [line for line in lines if "codec only (no --url)" in line]
    assert len(codec_row) == len(header) and codec_row.endswith("1.2          -        321")
    assert any("REST binary" in line and "not supported: MLServer has no binary" in line
               for line in lines)  # fmt: skip
    assert any(line.startswith("mlserver rows:") for line in lines)
    assert not _chart(results, tmp_path / "none.png") and not (tmp_path / "none.png").exists()
    pytest.importorskip("matplotlib")
    records.append({**base, "path": "grpc-raw", "implementation": "native", "load": [
        {"concurrency": 8, "requests": 5, "rps": 50.0}]})  # fmt: skip
    assert _chart(results, tmp_path / "some.png")
    assert _read_png(tmp_path / "some.png")[0] > 500


def test_quick_run_shared_memory_rows(quick_run: tuple[dict[str, Any], str, Path]) -> None:
    """The shm path: measured end to end for oipcodec's clients (and tritonclient's with its
    shared-memory utilities), a request of a few hundred bytes whatever the tensor, one
    memcpy of the payload timed beside it, the closing note, and nothing left in /dev/shm."""
    results, table, _ = quick_run
    rows = [r for r in results["results"] if r["path"] == "shm"]
    measured = [r for r in rows if not r.get("unsupported")]
    assert {r["implementation"] for r in measured} >= {"native", "pure"}
    for record in measured:
        assert record["error"] is None, record["error"]
        assert record["load"][-1]["rps"] > 0
        assert 0 < record["request_bytes"] < 1000 and 0 < record["response_bytes"] < 1000
        assert record["codec_us"]["memcpy"] > 0
    notes = [line for line in table.splitlines() if line.startswith("shared memory, small ")]
    assert {line.split()[3].rstrip(",") for line in notes} == {
        r["implementation"] for r in measured
    }
    lines = table.splitlines()
    for note in notes:  # a line per path under the note, each within the table's width
        below = lines[lines.index(note) + 1 : lines.index(note) + 4]
        assert [line.split()[0] for line in below] == ["shared", "REST", "gRPC"]
    assert "one memcpy of its 64 bytes" in table
    assert max(len(line) for line in lines if not line.startswith("wrote ")) <= TABLE_WIDTH
    if os.path.isdir("/dev/shm"):
        assert not [n for n in os.listdir("/dev/shm") if n.startswith("oipcodec-bench-")]


def test_shared_memory_codec_ops_round_trip() -> None:
    """In-process, the shm path's codec calls move the values through the regions: the
    server's decode reads the input as a view of the input region, the client's decode reads
    the answer as a view of the output region."""
    from oipcodec.bench.paths import release

    tensor = make_tensor(PAYLOADS["image"])
    try:
        ops = codec_ops("native", PATHS["shm"], echo_workload(PAYLOADS["image"], "identity"))
        assert ops.client_encode is not None and ops.client_decode is not None
        assert ops.server_decode is not None and ops.server_encode is not None
        ops.client_encode()
        request = ops.server_decode()
        assert same_values(tensor, request.inputs[0].data)
        assert not request.inputs[0].data.flags.writeable
        ops.server_encode()
        assert same_values(tensor, ops.client_decode().outputs[0].data)
        assert ops.request_bytes < 1000 and ops.response_bytes < 1000
    finally:
        release()
