"""The native HTTP/1.1 front end against the Python one and nginx: requests per second and
server CPU per request, in one sitting, alternating.

    python benchmarks/load/native_http.py [--rounds 3] [--seconds 5] [--protocol native ...]
        [--connections 64] [--case json --case image-bin ...] [--no-nginx]
        [--max-queued-requests N]

Each round starts, one after another (in the reverse order every other round), nginx (one
process, ``return 200`` with a body the size of each small answer), then ``oipcodec serve``
with each ``--protocol`` (default: ``native`` and ``oipcodec``; a protocol this build does not
have is left out with a note); each server's answers are first checked against the Python
path's, byte for byte, then ``wrk -t1 -c<--connections> --latency`` (default 8 connections)
runs ``--seconds`` per case (``--case``, default all): small REST JSON and small binary (FP32
[1,16] to ``identity``), the readiness probe, image JSON and image binary (FP32
[1,3,224,224]; nginx is not asked those), ``batched`` (the small JSON request to
``identity_batched``, the same model with dynamic batching) and ``async`` (to
``identity_async``, the same model as an ``async def predict`` that waits once): served_models.py,
served with ``--model-module`` when either case is asked. It reports requests/s, the server's CPU (user +
system of the process tree, from /proc; Linux) per request and wrk's p99 latency, per round
and the median. ``--max-queued-requests N`` starts every oipcodec server with that overload
limit.
Needs ``wrk`` and ``nginx`` on PATH (``apt-get install wrk nginx-light``); it reuses the
helpers of granian_rsgi.py. docs/measurements.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# Run as a script, this file has benchmarks/load on sys.path.
from cpu_per_request import _HEAD, BINARY_BODY, JSON_BODY
from granian_rsgi import HEALTH, INFER, Server, alternate, ask, free_port, nginx_command, wait_for

from oipcodec import rest
from oipcodec.server.config import HTTP_PROTOCOLS

Case = tuple[str, str, bytes, dict[str, str]]

_IMAGE = np.linspace(0, 1, 3 * 224 * 224, dtype=np.float32).reshape(1, 3, 224, 224)
_IMAGE_HEAD = json.dumps(
    {
        "inputs": [
            {
                "name": "INPUT0",
                "datatype": "FP32",
                "shape": list(_IMAGE.shape),
                "parameters": {"binary_data_size": _IMAGE.nbytes},
            }
        ],
        "outputs": [{"name": "INPUT0", "parameters": {"binary_data": True}}],
    }
).encode()
_IMAGE_JSON = json.dumps(
    {
        "inputs": [
            {
                "name": "INPUT0",
                "datatype": "FP32",
                "shape": list(_IMAGE.shape),
                "data": _IMAGE.ravel().tolist(),
            }
        ]
    }
).encode()

CASES: dict[str, Case] = {
    "json": ("POST", INFER, JSON_BODY, {"Content-Type": "application/json"}),
    "binary": ("POST", INFER, BINARY_BODY, {rest.HEADER_LENGTH: str(len(_HEAD))}),
    "health": ("GET", HEALTH, b"", {}),
    "image-json": ("POST", INFER, _IMAGE_JSON, {"Content-Type": "application/json"}),
    "image-bin": (
        "POST",
        INFER,
        _IMAGE_HEAD + _IMAGE.tobytes(),
        {rest.HEADER_LENGTH: str(len(_IMAGE_HEAD))},
    ),
    "batched": (
        "POST",
        INFER.replace("identity", "identity_batched"),
        JSON_BODY,
        {"Content-Type": "application/json"},
    ),
    "async": (
        "POST",
        INFER.replace("identity", "identity_async"),
        JSON_BODY,
        {"Content-Type": "application/json"},
    ),
}
#: What nginx answers (a fixed body of each answer's size): the small cases.
NGINX_CASES = ("json", "binary", "health")


def _serves_natively() -> bool:
    """Whether this build has the native protocol (else ``native`` runs the Python one)."""
    try:
        import oipcodec.server.http11.native  # noqa: F401
    except ImportError:
        return False
    return True


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument(
        "--protocol",
        action="append",
        choices=HTTP_PROTOCOLS,
        help="--http-protocol of each oipcodec server (default: native, oipcodec)",
    )
    parser.add_argument("--no-nginx", action="store_true", help="leave nginx out")
    parser.add_argument(
        "--connections", type=int, default=8, help="wrk's connections (-c; default 8)"
    )
    parser.add_argument(
        "--case", action="append", choices=list(CASES), help="the cases (default: all)"
    )
    parser.add_argument(
        "--max-queued-requests",
        type=int,
        default=0,
        help="every oipcodec server's overload limit (default 0: none)",
    )
    return parser


def main() -> None:
    args = arguments().parse_args()
    for tool in ("wrk", *(() if args.no_nginx else ("nginx",))):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not on PATH (apt-get install wrk nginx-light)")
    protocols = args.protocol or ["native", "oipcodec"]
    if "native" in protocols and not _serves_natively():
        print("no native protocol in this build: 'native' left out", flush=True)
        protocols = [p for p in protocols if p != "native"]
    directory = tempfile.mkdtemp(prefix="native-http-")
    cases = {name: CASES[name] for name in args.case or CASES}
    python = [sys.executable, "-m", "oipcodec", "serve", "--log-level", "error"]
    if args.max_queued_requests:
        python += ["--max-queued-requests", str(args.max_queued_requests)]
    if "batched" in cases or "async" in cases:  # (their module sits beside this file)
        here = os.path.dirname(os.path.abspath(__file__))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [here, os.environ.get("PYTHONPATH")])
        )
        python += ["--model-module", "served_models"]
    python.append("--http-port")
    grpc = ["--grpc-port", str(free_port())]
    # The Python path's answers, checked once, are what every server must answer.
    port = free_port()
    server = subprocess.Popen([*python, str(port), *grpc, "--http-protocol", "oipcodec"])
    try:
        wait_for(port, server)
        expected = {name: ask(port, case)[1] for name, case in cases.items()}
    finally:
        server.terminate()
        server.wait(10)
    for name in ("json", "batched", "async"):
        if name in expected:
            document = json.loads(expected[name])
            assert document["outputs"][0]["data"] == list(range(16)), document
    assert "image-bin" not in expected or expected["image-bin"].endswith(_IMAGE.tobytes())
    servers: dict[str, Server] = {}
    port = free_port()
    small = {name: case for name, case in cases.items() if name in NGINX_CASES}
    if small and not args.no_nginx:
        servers["nginx"] = (nginx_command(port, expected, directory), small, False)
    for protocol in protocols:
        servers[protocol] = ([*python, str(port), *grpc, "--http-protocol", protocol], cases, True)
    alternate(servers, args.rounds, port, expected, args.seconds, directory, args.connections)


if __name__ == "__main__":
    main()
