"""`oipcodec bench`: the harness runs in --quick mode on a tiny payload set, and its
results.json, table and chart hold every path; plus its parts (payloads, chart, options)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from peers import require_kserve, require_peer

from oipcodec import InferResponse, cli, pb, rest
from oipcodec.bench import PATHS, PAYLOADS, custom_payload, peers
from oipcodec.bench.chart import Bar, Panel, draw_chart, write_png
from oipcodec.bench.load import run_load, time_call
from oipcodec.bench.paths import codec_ops, peer_available, same_values, supported
from oipcodec.bench.payloads import make_tensor
from oipcodec.bench.runner import _chart, best_paths, render_table

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")


def _read_png(path: Path) -> tuple[int, int, bytes]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks[kind] = body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 2)
    pixels = zlib.decompress(chunks[b"IDAT"])
    assert len(pixels) == height * (1 + 3 * width)
    assert b"IEND" in chunks
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
        }
        assert all(r["error"] is None and r["load"][-1]["rps"] > 0 for r in measured)
        assert {r["path"] for r in triton if r.get("unsupported")} == {
            "rest-json-nested",
            "grpc-typed",
        }
    kernels = {w["implementation"]: w.get("kernels") for w in results["workers"]}
    assert kernels["native"] == "native" and kernels["pure"] == "pure"
    assert results["best"]["small"].split("/")[0] in PATHS
    assert results["payloads"]["small"] == {**PAYLOADS["small"].as_dict()}
    assert not results["interrupted"]


def test_quick_run_kserve_rows(quick_run: tuple[dict[str, Any], str, Path]) -> None:
    """KServe's server codec on every path it takes, codec only (no KServe server given)."""
    require_kserve()
    results, table, _ = quick_run
    rows = {r["path"]: r for r in results["results"] if r["implementation"] == "kserve"}
    assert set(rows) == set(PATHS)
    assert "decompress" in rows.pop("rest-binary-gzip")["unsupported"]
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
    assert not results["best"]["small"].endswith("/kserve")
    lines = [line for line in table.splitlines() if "kserve" in line]
    assert sum("codec only (no --url)" in line for line in lines) == 3
    assert sum("codec only (no --grpc-target)" in line for line in lines) == 2
    assert any("REST binary+gzip" in line and "not supported: KServe" in line for line in lines)
    assert any(line.startswith("kserve rows: that server's own codec") for line in lines)


def test_quick_run_table_and_chart(quick_run: tuple[dict[str, Any], str, Path]) -> None:
    results, table, out = quick_run
    assert "small (1x16 FP32)" in table
    assert "REST binary+gzip" in table and "gRPC typed" in table
    best_path, best_impl = results["best"]["small"].split("/")
    marked = [line for line in table.splitlines() if line.startswith("* ")]
    assert len(marked) == 1 and PATHS[best_path].label in marked[0] and best_impl in marked[0]
    width, height, pixels = _read_png(out / "throughput.png")
    assert width > 500 and height > 200
    assert len(set(pixels)) > 3  # not a blank image


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


def test_a_server_that_does_not_echo_is_an_error_not_a_fast_path(tmp_path: Path) -> None:
    results = _bench_our_server(
        tmp_path, "--model", "no_such_model", "--implementation", "native", "--path",
        "rest-json", "--payload", "small",
    )  # fmt: skip
    (record,) = results["results"]
    assert "404" in record["error"] and record["load"] == []


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
            codec_ops("kserve", PATHS[path], "identity", tensor)
    monkeypatch.setattr(peers, "server_codec", lambda *a: (lambda: [wrong.data], None))
    with pytest.raises(ValueError, match="mlserver's decode does not give the values sent"):
        codec_ops("mlserver", PATHS["rest-json"], "identity", tensor)


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

    result = run_load(make, 2, duration=5.0, max_requests=50, join_timeout=5.0)
    assert result.requests == 50 == calls["n"] and result.seconds < 5.0

    def failing() -> Any:
        def call() -> None:
            raise RuntimeError("boom")

        return call

    result = run_load(failing, 3, duration=0.05, max_requests=100, join_timeout=5.0)
    assert result.requests == 0 and result.errors == 3 and "boom" in (result.first_error or "")
    assert time_call(lambda: None, 0.01) >= 0


def test_chart_draws_bars(tmp_path: Path) -> None:
    bars = [Bar("REST binary native", 100.0, "100 req/s", (0, 0, 255), marked=True),
            Bar("gRPC raw pure", 50.0, "50 req/s", (255, 0, 0))]  # fmt: skip
    image = draw_chart("title", [Panel("small", bars)], "subtitle")
    blue = np.all(image == (0, 0, 255), axis=-1).sum()
    red = np.all(image == (255, 0, 0), axis=-1).sum()
    assert blue > 0 and red > 0 and abs(blue / red - 2) < 0.1  # bar length follows the value
    write_png(tmp_path / "c.png", image)
    width, height, _ = _read_png(tmp_path / "c.png")
    assert (height, width) == image.shape[:2]


def test_table_marks_the_best_and_shows_errors() -> None:
    def record(path: str, impl: str, rps: float | None, error: str | None = None) -> dict[str, Any]:
        load = [] if rps is None else [{"concurrency": 8, "requests": 10, "rps": rps,
                                        "mb_per_s": 1.0, "p50_ms": 1, "p90_ms": 2, "p99_ms": 3}]  # fmt: skip
        return {"payload": "small", "path": path, "implementation": impl, "load": load,
                "error": error, "codec_us": {"client": 5, "server": 6}}  # fmt: skip

    records = [record("rest-json", "native", 10), record("grpc-raw", "pure", 20),
               record("rest-binary", "native", 30, error="boom")]  # fmt: skip
    best = best_paths(records)
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
        "results": records, "best": best_paths(records), "options": {"concurrency": [1, 8]},
        "payloads": {"small": PAYLOADS["small"].as_dict()}, "oipcodec_version": "x",
        "machine": {"cpus": 2, "python": "3"}, "created": "now",
    }  # fmt: skip
    assert results["best"] == {}
    lines = render_table(results).splitlines()
    header = next(line for line in lines if "server us" in line)
    (codec_row,) = [line for line in lines if "codec only (no --url)" in line]
    assert len(codec_row) == len(header) and codec_row.endswith("1.2          -        321")
    assert any("REST binary" in line and "not supported: MLServer has no binary" in line
               for line in lines)  # fmt: skip
    assert any(line.startswith("mlserver rows:") for line in lines)
    assert not _chart(results, tmp_path / "none.png") and not (tmp_path / "none.png").exists()
    records.append({**base, "path": "grpc-raw", "implementation": "native", "load": [
        {"concurrency": 8, "requests": 5, "rps": 50.0}]})  # fmt: skip
    assert _chart(results, tmp_path / "some.png")
    assert _read_png(tmp_path / "some.png")[0] > 500
