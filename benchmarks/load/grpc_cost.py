"""Where a small gRPC request's CPU goes: oipcodec's server and clients against grpcio's floor.

    python benchmarks/load/grpc_cost.py [--requests 3000] [--threads 8] [--grpc-impl grpcio,native]

Sends the same small request (identity model, one 1x16 FP32 input) from ``--threads`` threads,
``--requests`` in all per row (bounded), and reports requests/s and the CPU time per request of
the server process and of the client process (user + system, from /proc; Linux only). On a
machine whose cores are shared (the client and the server on two cores, other jobs beside
them) requests/s move with the neighbours; CPU per request does not, and it decides how many
requests the two cores carry. Rows, in one run:

``--grpc-impl`` lists the gRPC servers ``oipcodec serve`` runs (``--grpc-impl``), one server per
name, in that order (``grpcio,native,grpcio,native`` alternates them); each gives the oipcodec
rows, named after it.

- oipcodec REST binary: HttpClient -> ``oipcodec serve`` (the path gRPC is compared with);
- oipcodec gRPC raw and typed: GrpcClient -> the same server;
- tritonclient gRPC (when installed): its client, raw contents, -> the same server;
- grpcio floor, asyncio server / sync server: a bare grpcio server whose handler returns the
  request bytes (an asyncio server as oipcodec's, or grpcio's thread-pool server), called with
  a bare channel (bytes in, bytes out): what any Python gRPC server and client pay per call
  before doing any work.
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from oipcodec import InferRequest, Tensor, pb

# Run as a script, this file has benchmarks/load on sys.path: the repository goes first,
# for the test suite's free-port helper.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support.ports import free_port, free_ports

MODEL = "identity"
METHOD = "/inference.GRPCInferenceService/ModelInfer"

ECHO_SERVER = """
import asyncio, sys
from concurrent import futures
import grpc

kind, port = sys.argv[1], int(sys.argv[2])
options = [("grpc.so_reuseport", 0)]


def handlers(function):
    method = grpc.unary_unary_rpc_method_handler(function)
    return (grpc.method_handlers_generic_handler("inference.GRPCInferenceService",
                                                 {"ModelInfer": method}),)


if kind == "asyncio":
    async def echo(data, context):
        return data

    async def main():
        server = grpc.aio.server(options=options)
        server.add_generic_rpc_handlers(handlers(echo))
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        print("ready", flush=True)
        await server.wait_for_termination()

    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main())
else:
    server = grpc.server(futures.ThreadPoolExecutor(8), options=options)
    server.add_generic_rpc_handlers(handlers(lambda data, context: data))
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    print("ready", flush=True)
    server.wait_for_termination()
"""


def process_cpu(pid: int) -> float:
    """Seconds of user + system time of process ``pid`` (all its threads)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(
    call: Callable[[], object], server_pid: int, threads: int, requests: int
) -> tuple[float, float, float]:
    """(requests/s, server us/request, client us/request) of ``requests`` calls from
    ``threads`` threads."""
    for _ in range(100):
        call()
    left = [requests]
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if left[0] <= 0:
                    return
                left[0] -= 1
            call()

    server0, client0, start = process_cpu(server_pid), time.process_time(), time.perf_counter()
    workers = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(600)
    seconds = time.perf_counter() - start
    server = process_cpu(server_pid) - server0
    client = time.process_time() - client0
    return requests / seconds, server / requests * 1e6, client / requests * 1e6


def wait_ready(check: Callable[[], object], process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            check()
            return
        except Exception:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.1)


def served(impl: str, request: InferRequest, args: argparse.Namespace) -> list[tuple[str, Any]]:
    """The rows of one ``oipcodec serve --grpc-impl impl``."""
    from oipcodec.client import GrpcClient, HttpClient

    rows: list[tuple[str, Any]] = []
    http_port, grpc_port = free_ports(2)
    command = (
        f"-m oipcodec serve --http-port {http_port} --grpc-port {grpc_port} --log-level warning "
        f"--grpc-impl {impl}"
    )
    server = subprocess.Popen([sys.executable, *command.split()])
    try:
        url = f"http://127.0.0.1:{http_port}"
        wait_ready(lambda: urllib.request.urlopen(f"{url}/v2/health/ready", timeout=1), server)
        with HttpClient(url, pool_size=args.threads) as http:
            cost = load(
                lambda: http.infer_request(request), server.pid, args.threads, args.requests
            )
            rows.append(("oipcodec REST binary", cost))
        with GrpcClient(f"127.0.0.1:{grpc_port}") as client:
            for raw in (True, False):
                call = functools.partial(client.infer_request, request, raw=raw)
                cost = load(call, server.pid, args.threads, args.requests)
                rows.append((f"oipcodec gRPC {'raw' if raw else 'typed'}", cost))
        try:
            import tritonclient.grpc as tg
        except ImportError:
            tg = None
        if tg is not None:
            triton = tg.InferenceServerClient(f"127.0.0.1:{grpc_port}")
            item = tg.InferInput("INPUT0", [1, 16], "FP32")
            item.set_data_from_numpy(request.inputs[0].data)
            cost = load(
                lambda: triton.infer(MODEL, [item]), server.pid, args.threads, args.requests
            )
            rows.append(("tritonclient gRPC", cost))
            triton.close()
    finally:
        server.terminate()
        server.wait(30)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--grpc-impl", default="grpcio", help="comma-separated (default: grpcio)")
    args = parser.parse_args()

    import grpc

    tensor = Tensor("INPUT0", "FP32", (1, 16), np.arange(16, dtype=np.float32).reshape(1, 16))
    request = InferRequest([tensor], model_name=MODEL)
    rows: list[tuple[str, Any]] = []

    for impl in args.grpc_impl.split(","):
        rows += [(f"{impl}: {name}", cost) for name, cost in served(impl, request, args)]
    data = pb.encode_request(request, raw=True)
    for kind in ("asyncio", "sync"):
        port = free_port()
        echo = subprocess.Popen(
            [sys.executable, "-c", ECHO_SERVER, kind, str(port)], stdout=subprocess.PIPE
        )
        try:
            assert echo.stdout is not None
            echo.stdout.readline()  # "ready"
            channel = grpc.insecure_channel(f"127.0.0.1:{port}")
            stub = channel.unary_unary(METHOD)
            call = functools.partial(stub, data, timeout=60)
            cost = load(call, echo.pid, args.threads, args.requests)
            rows.append((f"grpcio floor, {kind} server", cost))
            channel.close()
        finally:
            echo.terminate()
            echo.wait(30)

    print(f"{args.requests} small requests per row from {args.threads} threads")
    print(f"{'row':32} {'req/s':>8} {'server us':>10} {'client us':>10} {'total us':>9}")
    for name, (rate, server_us, client_us) in rows:
        total = server_us + client_us
        print(f"{name:32} {rate:8.0f} {server_us:10.0f} {client_us:10.0f} {total:9.0f}")


if __name__ == "__main__":
    main()
