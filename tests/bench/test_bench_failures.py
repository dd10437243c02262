"""How ``oipcodec bench`` fails: against a real ``oipcodec serve``, a model it does not serve is
one line and exit 2 before any sweep (not a row per path, nor a 404 read as a missing
extension); so is a closed port; and a run of which a path's every row failed exits 2."""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from oipcodec import cli
from tests.support.ports import free_ports
from tests.support.serve_process import run_serve

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    yield from run_serve(tmp_path_factory.mktemp("serve"))


def _bench(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """``oipcodec bench ARGS`` on one path, short: the exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(
            ["bench", *args, "--implementation", "native", "--payload", "small",
             "--concurrency", "1", "--duration", "0.05", "--no-chart", "--timeout", "5",
             "--output-dir", str(tmp_path)]
        )  # fmt: skip
    return status, out.getvalue(), err.getvalue()


def test_a_model_the_server_does_not_serve(serve: dict[str, str], tmp_path: Path) -> None:
    for where in (["--url", f"http://{serve['http']}", "--path", "rest-binary"],
                  ["--grpc-target", serve["grpc"], "--path", "grpc-raw"]):  # fmt: skip
        status, out, err = _bench(tmp_path, *where, "--model", "nope")
        assert status == 2, (out, err)
        (line,) = err.splitlines()
        assert line.startswith("oipcodec bench: ") and "'nope'" in line, line
        assert "binary tensor data" not in line and out == ""
        assert not (tmp_path / "results.json").exists()


def test_a_served_model_passes_the_check(serve: dict[str, str], tmp_path: Path) -> None:
    status, out, err = _bench(tmp_path, "--url", f"http://{serve['http']}", "--path", "rest-json")
    assert status == 0, err
    (record,) = json.loads((tmp_path / "results.json").read_text())["results"]
    assert record["error"] is None and record["load"][0]["rps"] > 0
    # --url alone: the gRPC paths' absence and what x pure compares are said up front.
    assert "the gRPC paths are not measured: give --grpc-target" in out
    assert "x pure here compares the client's kernels only" in out
    # oipcodec serve exports no process_cpu_seconds_total: a server on this machine has its
    # CPU read from /proc, found by its listening socket.
    if os.path.exists("/proc/net/tcp"):
        assert record["load"][0]["server_cpu_us"] is not None


def test_a_closed_port(tmp_path: Path) -> None:
    (port,) = free_ports(1)
    for where in (["--url", f"http://127.0.0.1:{port}", "--path", "rest-json"],
                  ["--grpc-target", f"127.0.0.1:{port}", "--path", "grpc-raw"]):  # fmt: skip
        status, out, err = _bench(tmp_path, *where)
        assert status == 2, (out, err)
        (line,) = err.splitlines()
        assert line.startswith(f"oipcodec bench: {where[1]}: model 'identity': "), line
        assert out == ""


def _record(path: str, implementation: str, **fields: Any) -> dict[str, Any]:
    return {"path": path, "implementation": implementation, "error": None, **fields}


def test_failed_paths() -> None:
    """A path fails when every row of it that ran is an error; a row the implementation or
    server does not take does not count; a run with no rows fails when a worker did."""
    from oipcodec.bench.runner import failed_paths

    fine = _record("rest-json", "native")
    broken = _record("grpc-raw", "native", error="StatusCode.INTERNAL: boom\n  more")
    refused = _record("grpc-raw", "tritonclient", unsupported="not supported by this server")
    workers = [{"implementation": "native"}]
    assert failed_paths({"results": [fine], "workers": workers}) is None
    assert failed_paths({"results": [fine, refused], "workers": workers}) is None
    reason = failed_paths({"results": [fine, broken, refused], "workers": workers})
    assert reason == "every row of grpc-raw failed; the first: StatusCode.INTERNAL: boom more"
    half = [broken, _record("grpc-raw", "pure")]
    assert failed_paths({"results": half, "workers": workers}) is None
    assert failed_paths({"results": [], "workers": workers}) is None
    crashed = [{"implementation": "native", "error": "worker exited with status 1"}]
    assert failed_paths({"results": [], "workers": crashed}) == (
        "no row was measured: native: worker exited with status 1"
    )


@contextlib.contextmanager
def _not_a_protocol_server() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that answers every request 200 with an HTML page."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html>a web page</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_answer_that_is_not_the_protocol(tmp_path: Path) -> None:
    with _not_a_protocol_server() as url:
        status, out, err = _bench(tmp_path, "--url", url, "--path", "rest-json")
    assert status == 2, (out, err)
    (line,) = err.splitlines()
    assert line.startswith(f"oipcodec bench: {url}: model 'identity': "), line
    assert out == "" and not (tmp_path / "results.json").exists()
