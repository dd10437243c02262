"""benchmarks/load/native_http.py and the wrk helpers it shares with granian_rsgi.py: wrk's
p99 read from its --latency report in each unit it prints, the --connections and --case
options, and one short real wrk run at 64 connections against a server on 127.0.0.1 (the
figures of full runs are in docs/measurements.md)."""

from __future__ import annotations

import importlib
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

LOAD = Path(__file__).resolve().parents[2] / "benchmarks" / "load"

# wrk 4.1's --latency report (a run against `oipcodec serve --http-protocol native`).
REPORT = """Running 3s test @ http://127.0.0.1:40001/v2/models/identity/infer
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.10ms    1.02ms  21.37ms   91.20%
    Req/Sec    15.71k     1.10k   17.30k    80.00%
  Latency Distribution
     50%    3.93ms
     75%    4.21ms
     90%    4.80ms
     99%    {p99}
  46880 requests in 3.00s, 13.41MB read
Requests/sec:  15626.71
Transfer/sec:      4.47MB
"""


@pytest.fixture(scope="module")
def scripts() -> Iterator[tuple[ModuleType, ModuleType]]:
    """(granian_rsgi, native_http), imported as the scripts run: benchmarks/load on sys.path."""
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(LOAD))
        yield importlib.import_module("granian_rsgi"), importlib.import_module("native_http")


@pytest.mark.parametrize(
    ("shown", "micros"), [("812.00us", 812.0), ("9.54ms", 9540.0), ("1.20s", 1.2e6)]
)
def test_the_p99_is_read_in_each_unit(scripts: Any, shown: str, micros: float) -> None:
    assert scripts[0].wrk_p99(REPORT.format(p99=shown)) == pytest.approx(micros)


def test_a_report_without_a_99_line_is_refused(scripts: Any) -> None:
    report = "\n".join(line for line in REPORT.splitlines() if "99%" not in line)
    with pytest.raises(SystemExit, match="no 99% line"):
        scripts[0].wrk_p99(report)


def test_connections_and_cases_are_options(scripts: Any) -> None:
    parse = scripts[1].arguments().parse_args
    assert (parse([]).connections, parse([]).case) == (8, None)
    args = parse(["--connections", "64", "--case", "json", "--case", "image-bin"])
    assert (args.connections, args.case) == (64, ["json", "image-bin"])
    with pytest.raises(SystemExit):
        parse(["--case", "no-such-case"])


class _Ready(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not on PATH")
def test_wrk_runs_at_64_connections(scripts: Any) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ready)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        case = ("GET", "/v2/health/ready", b"", {})
        with tempfile.TemporaryDirectory() as directory:
            count, p99 = scripts[0].wrk(port, case, 1, directory, connections=64)
        assert count > 0 and p99 > 0
    finally:
        server.shutdown()
        server.server_close()
