"""Small-request throughput and server CPU with tracing off and on (every request traced).

    python benchmarks/load/tracing_overhead.py [--requests 3000] [--rounds 4]

Each round starts ``oipcodec serve`` twice, without and with ``--trace`` (in the order off, on,
then on, off, ...), the traced one exporting over OTLP/HTTP to a receiver in this process that
answers every export and keeps nothing. Each server gets ``--requests`` small requests to the
identity model (one 1x16 FP32 input) one after another on one connection, per case (REST JSON,
REST binary, gRPC raw), as benchmarks/load/cpu_per_request.py sends them; reported: requests
per second and the server process's CPU per request (its exporter thread included), per round
and the medians.
"""

from __future__ import annotations

import argparse
import http.server
import os
import statistics
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_per_request import measure


class _Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def one_server(trace: bool, requests: int, endpoint: str) -> dict[str, tuple[float, float]]:
    """(requests per second, microseconds of server CPU per request) per case."""
    env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    return measure(requests, ["--trace"] if trace else [], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{sink.server_address[1]}"
    results: dict[str, dict[str, list[tuple[float, float]]]] = {"off": {}, "on": {}}
    for round_ in range(args.rounds):
        for name in ("off", "on") if round_ % 2 == 0 else ("on", "off"):
            figures = one_server(name == "on", args.requests, endpoint)
            for case, value in figures.items():
                results[name].setdefault(case, []).append(value)
            shown = {case: f"{rps:.0f}/s {cpu:.0f} us" for case, (rps, cpu) in figures.items()}
            print(name, shown, flush=True)
    for case in results["off"]:
        off, on = results["off"][case], results["on"][case]
        rps = [statistics.median(r for r, _ in runs) for runs in (off, on)]
        cpu = [statistics.median(c for _, c in runs) for runs in (off, on)]
        print(
            f"{case}: off {rps[0]:.0f}/s {cpu[0]:.0f} us, on {rps[1]:.0f}/s {cpu[1]:.0f} us "
            f"({rps[1] / rps[0] - 1:+.1%} throughput, {cpu[1] / cpu[0] - 1:+.1%} CPU)"
        )


if __name__ == "__main__":
    main()
