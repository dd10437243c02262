"""granian's RSGI interface as a front end of the inference pipeline, against ``oipcodec serve``
and nginx: requests per second and server CPU per small request, alternating.

    pip install granian rloop   # not a dependency of oipcodec; the script stops without it
    python benchmarks/load/granian_rsgi.py [--rounds 3] [--seconds 5]

It serves the demo models (``identity``) through :class:`RsgiApp`: one RSGI coroutine per
request over the same :class:`~oipcodec.server.registry.ModelRegistry` and
:class:`~oipcodec.server.inference.Pipeline` as the REST front end, answering ``POST
/v2/models/{name}/infer`` (JSON and binary-extension bodies, via :mod:`oipcodec.rest`) and
``GET /v2/health/ready``, nothing else. Serve it alone with
``granian --interface rsgi benchmarks.load.granian_rsgi:app``.

Each round starts, one after another, nginx (one process, ``return 200`` with a body the size
of each answer), ``oipcodec serve``, and granian with each ``--loop`` given; each answers once
checked against the Python path's answer, then ``wrk -t1 -c8 --latency`` for ``--seconds``
per case (small REST JSON, small REST binary, health). It reports requests/s, the server's CPU
(user + system of the process and its children, from /proc; Linux) per request and wrk's p99,
per round and the median. Needs ``wrk`` and ``nginx`` on PATH. docs/measurements.md has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import importlib.util
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from oipcodec import rest
from oipcodec.errors import OIPError, RequestError, request_error_for
from oipcodec.limits import DEFAULT_LIMITS
from oipcodec.server.demo import demo_models
from oipcodec.server.inference import Pipeline
from oipcodec.server.registry import ModelRegistry

_JSON = [("content-type", "application/json")]
_READY = orjson.dumps({"ready": True})


class RsgiApp:
    """The RSGI application: inference and readiness over the demo models' pipeline."""

    def __init__(self) -> None:
        self.registry = ModelRegistry(demo_models())
        self.pipeline = Pipeline.of(self.registry)

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.run_until_complete(self.registry.load_all())

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.run_until_complete(self.registry.unload_all())

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        parts = scope.path.split("/")
        if scope.method == "GET" and scope.path == "/v2/health/ready":
            proto.response_bytes(200, _JSON, _READY)
        elif scope.method == "POST" and len(parts) == 5 and parts[1:3] == ["v2", "models"]:
            try:
                status, headers, body = await self._infer(scope, proto, parts[3])
            except (OIPError, RequestError) as exc:
                error = request_error_for(exc)
                status, headers, body = error.http_status, _JSON, rest.error_body(error.message)
            proto.response_bytes(status, headers, body)
        else:
            proto.response_bytes(404, _JSON, b'{"error":"no endpoint"}')

    async def _infer(
        self, scope: Any, proto: Any, name: str
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        model = self.pipeline.model(name)
        body = await proto()
        header_length = scope.headers.get(rest.HEADER_LENGTH.lower())
        path = "json" if header_length is None else "binary"
        with self.pipeline.exchange(path, len(body), model) as exchange:
            request = rest.decode_request(
                body, header_length, model_name=name, limits=DEFAULT_LIMITS
            )
            response = await exchange.run(request, model)
            answer, length = rest.encode_response(response, binary=rest.binary_outputs(request))
            exchange.sent(len(answer))
        if length is None:
            return 200, _JSON, answer
        headers = [("content-type", "application/octet-stream")]
        return 200, [*headers, (rest.HEADER_LENGTH, str(length))], answer


app = RsgiApp()

# ---------------------------------------------------------------------- the measurement

TICK = os.sysconf("SC_CLK_TCK")
INFER = "/v2/models/identity/infer"
HEALTH = "/v2/health/ready"


def _cases() -> dict[str, tuple[str, str, bytes, dict[str, str]]]:
    """case -> (method, path, body, headers): the requests of cpu_per_request.py."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from cpu_per_request import _HEAD, BINARY_BODY, JSON_BODY

    return {
        "json": ("POST", INFER, JSON_BODY, {"Content-Type": "application/json"}),
        "binary": ("POST", INFER, BINARY_BODY, {rest.HEADER_LENGTH: str(len(_HEAD))}),
        "health": ("GET", HEALTH, b"", {}),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) of ``pid`` and its living descendants."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / TICK
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += times.get(current, 0.0)
        todo += [child for child, parent in parents.items() if parent == current]
    return total


def ask(port: int, case: tuple[str, str, bytes, dict[str, str]]) -> tuple[int, bytes]:
    method, path, body, headers = case
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body or None, headers)
    answer = connection.getresponse()
    data = answer.read()
    connection.close()
    return answer.status, data


def wait_for(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            status, _ = ask(port, _cases()["health"])
            if status == 200:
                return
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the server {server.args!r} did not start")
        time.sleep(0.2)


def nginx_command(port: int, answers: dict[str, bytes], directory: str) -> list[str]:
    """nginx, one process, answering each case with a body of its answer's size."""
    json_body = "x" * len(answers["json"])
    binary_body = "x" * len(answers["binary"])
    config = f"""
master_process off; worker_processes 1; daemon off; error_log stderr error;
pid {directory}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  access_log off; client_body_temp_path {directory};
  server {{
    listen 127.0.0.1:{port};
    location = {HEALTH} {{ default_type application/json; return 200 '{answers["health"].decode()}'; }}
    location = {INFER} {{
      default_type application/json;
      if ($http_inference_header_content_length) {{ return 200 '{binary_body}'; }}
      return 200 '{json_body}';
    }}
  }}
}}
"""
    Path(directory, "nginx.conf").write_text(config)
    return ["nginx", "-p", directory, "-c", f"{directory}/nginx.conf"]


#: wrk --latency's unit suffixes, in microseconds.
_UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6}


def wrk_p99(out: str) -> float:
    """The 99th percentile latency (µs) of wrk --latency's report ``out``."""
    found = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
    if found is None:
        raise SystemExit(f"no 99% line in wrk's report:\n{out}")
    return float(found.group(1)) * _UNITS[found.group(2)]


def wrk(
    port: int,
    case: tuple[str, str, bytes, dict[str, str]],
    seconds: int,
    directory: str,
    connections: int = 8,
) -> tuple[int, float]:
    """(requests answered, p99 latency in µs) of ``wrk -t1 -c<connections> --latency``."""
    method, path, body, headers = case
    Path(directory, "body").write_bytes(body)
    lines = [f'wrk.method = "{method}"']
    if body:
        lines.append(
            f'local f = io.open("{directory}/body", "rb"); wrk.body = f:read("*a"); f:close()'
        )
    lines += [f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items()]
    Path(directory, "case.lua").write_text("\n".join(lines) + "\n")
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            "--latency",
            f"-d{seconds}s",
            "-s",
            f"{directory}/case.lua",
            f"http://127.0.0.1:{port}{path}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r"(\d+) requests in", out)
    if found is None or "Non-2xx" in out:
        raise SystemExit(f"non-2xx answers from port {port}:\n{out}")
    return int(found.group(1)), wrk_p99(out)


def measure(
    name: str,
    command: list[str],
    port: int,
    expected: dict[str, bytes] | None,
    seconds: int,
    directory: str,
    cases: dict[str, tuple[str, str, bytes, dict[str, str]]] | None = None,
    connections: int = 8,
) -> dict[str, tuple[float, float, float]]:
    """(requests/s, CPU µs per request, p99 µs) of each case (default: :func:`_cases`) on a
    server started for them, its answers first checked against ``expected`` (None: not
    checked), with wrk's ``connections``."""
    cases = _cases() if cases is None else cases
    server = subprocess.Popen(
        command, cwd=directory if name == "nginx" else None, stdout=subprocess.DEVNULL
    )
    try:
        wait_for(port, server)
        wrk(port, next(iter(cases.values())), 1, directory, connections)  # warm
        figures = {}
        for case_name, case in cases.items():
            if expected is not None:
                status, data = ask(port, case)
                if status != 200 or data != expected[case_name]:
                    raise SystemExit(f"{name} {case_name}: {status} {data[:200]!r}")
            before, started = tree_cpu(server.pid), time.monotonic()
            count, p99 = wrk(port, case, seconds, directory, connections)
            cpu, elapsed = tree_cpu(server.pid) - before, time.monotonic() - started
            figures[case_name] = (count / elapsed, cpu / count * 1e6, p99)
        return figures
    finally:
        server.terminate()
        server.wait(10)


#: A server to measure: its command, its cases (None: all), whether its answers are checked.
Server = tuple[list[str], "dict[str, tuple[str, str, bytes, dict[str, str]]] | None", bool]


def alternate(
    servers: dict[str, Server],
    rounds: int,
    port: int,
    expected: dict[str, bytes],
    seconds: int,
    directory: str,
    connections: int = 8,
) -> None:
    """Measure every server once a round (in the reverse order every other round), then
    print each case's medians."""
    results: dict[str, dict[str, list[tuple[float, float, float]]]] = {n: {} for n in servers}
    names = list(servers)
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            command, cases, check = servers[name]
            figures = measure(
                name,
                command,
                port,
                expected if check else None,
                seconds,
                directory,
                cases,
                connections,
            )
            for case, value in figures.items():
                results[name].setdefault(case, []).append(value)
            shown = {
                case: f"{v[0]:.0f}/s {v[1]:.1f}us p99 {v[2]:.0f}us" for case, v in figures.items()
            }
            print(name, shown, flush=True)
    print(f"wrk -t1 -c{connections}; medians of {rounds} rounds (each round's in brackets)")
    print("server          case        req/s     CPU us/request (runs)   p99 us (runs)")
    for name in names:
        for case, values_ in results[name].items():
            rps = statistics.median(v[0] for v in values_)
            cpu = statistics.median(v[1] for v in values_)
            p99 = statistics.median(v[2] for v in values_)
            runs = ", ".join(f"{v[1]:.1f}" for v in values_)
            p99s = ", ".join(f"{v[2]:.0f}" for v in values_)
            print(f"{name:15} {case:10} {rps:9.0f} {cpu:8.1f} ({runs}) {p99:9.0f} ({p99s})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument(
        "--loop", action="append", help="granian loops (default: uvloop, rloop, asyncio)"
    )
    args = parser.parse_args()
    if importlib.util.find_spec("granian") is None:
        raise SystemExit("granian is not installed: pip install granian rloop")
    for tool in ("wrk", "nginx"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not on PATH (apt-get install wrk nginx-light)")
    root = str(Path(__file__).resolve().parents[2])
    directory = tempfile.mkdtemp(prefix="granian-rsgi-")
    # The Python path's answers, checked once, are what the others must answer byte for byte.
    port = free_port()
    python = [sys.executable, "-m", "oipcodec", "serve", "--log-level", "error", "--http-port"]
    grpc = ["--grpc-port", str(free_port())]
    server = subprocess.Popen([*python, str(port), *grpc])
    try:
        wait_for(port, server)
        expected = {name: ask(port, case)[1] for name, case in _cases().items()}
    finally:
        server.terminate()
        server.wait(10)
    document = json.loads(expected["json"])
    values = document["outputs"][0]["data"]
    assert values == list(range(16)) and document["outputs"][0]["shape"] == [1, 16], document
    assert expected["binary"].endswith(_cases()["binary"][2][-64:]) and expected["health"] == _READY
    servers: dict[str, Server] = {}
    port = free_port()
    servers["nginx"] = (nginx_command(port, expected, directory), None, False)
    servers["python"] = ([*python, str(port), *grpc], None, True)
    for loop in args.loop or ["uvloop", "rloop", "asyncio"]:
        servers[f"granian-{loop}"] = (
            [
                sys.executable,
                "-m",
                "granian",
                "--interface",
                "rsgi",
                "--workers",
                "1",
                "--runtime-threads",
                "1",
                "--runtime-mode",
                "st",
                "--loop",
                loop,
                "--log-level",
                "error",
                "--no-ws",
                "--http",
                "1",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--working-dir",
                root,
                "benchmarks.load.granian_rsgi:app",
            ],
            None,
            True,
        )
    alternate(servers, args.rounds, port, expected, args.seconds, directory)


if __name__ == "__main__":
    main()
