"""Per-request cost of the HTTP libraries oipcodec's clients could be built on.

    python benchmarks/load/client_overhead.py [--requests 3000] [--threads 8] [--seconds 3]

Starts the embedded server (demo models, subprocess) and sends the same small request
(identity model, one 1x16 FP32 input, binary tensor data extension, 205-byte body):

1. over one keep-alive connection, one request at a time, with each library (and the
   connection pool under oipcodec's HttpClient); prints the mean and median microseconds per
   request. The body is built once, so the figures are the
   library's cost plus the server's, and the server's share is the same for every library:
   the differences are the libraries'. ``http.client`` (standard library, no pooling) is the
   floor.
2. from ``--threads`` threads for ``--seconds`` (bounded), the way a client is shared in a
   server or a load test: oipcodec's HttpClient (one client shared, its codec included),
   urllib3's pool shared (the body built once), tritonclient (one client per thread, its own
   codec included) and bare ``http.client`` connections, one per thread (the floor); prints
   requests/s and the client process's CPU time per request, the figure that decides how
   much of the machine the client leaves to everything else.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import importlib.metadata
import os
import statistics
import threading
import time
from collections.abc import Awaitable, Callable

import numpy as np

from oipcodec import InferRequest, Tensor, rest
from oipcodec.testing import RunningServer, background

PATH = "/v2/models/identity/infer"


def body_and_headers() -> tuple[bytes, dict[str, str]]:
    tensor = Tensor.from_array("INPUT0", np.arange(16, dtype=np.float32).reshape(1, 16))
    body, header_length = rest.encode_request(InferRequest([tensor]), binary=True)
    headers = {"Content-Type": "application/octet-stream", rest.HEADER_LENGTH: str(header_length)}
    return body, headers


def timed(call: Callable[[], object], count: int) -> list[float]:
    for _ in range(min(200, count)):
        call()
    out = []
    for _ in range(count):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


async def atimed(call: Callable[[], Awaitable[object]], count: int) -> list[float]:
    for _ in range(min(200, count)):
        await call()
    out = []
    for _ in range(count):
        start = time.perf_counter()
        await call()
        out.append(time.perf_counter() - start)
    return out


def shared_load(
    make_call: Callable[[], Callable[[], object]], threads: int, seconds: float
) -> tuple[float, float]:
    """``threads`` threads, each with its own ``make_call()``, calling back to back for
    ``seconds``: (requests/s, microseconds of this process's user + system time per request)."""
    counts = [0] * threads
    stop = time.perf_counter() + seconds

    def worker(index: int) -> None:
        call = make_call()
        while time.perf_counter() < stop:
            call()
            counts[index] += 1

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    before = os.times()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    after = os.times()
    done = max(sum(counts), 1)
    cpu = (after.user - before.user) + (after.system - before.system)
    return done / seconds, cpu / done * 1e6


def concurrent(
    server: RunningServer, threads: int, seconds: float
) -> dict[str, tuple[float, float]]:
    from oipcodec.client import HttpClient

    host, port = server.host, server.http_port
    body, headers = body_and_headers()
    data = np.arange(16, dtype=np.float32).reshape(1, 16)
    results = {}

    client = HttpClient(server.http_url, pool_size=threads)
    results["oipcodec HttpClient (shared)"] = shared_load(
        lambda: lambda: client.infer("identity", {"INPUT0": data}), threads, seconds
    )
    client.close()

    import urllib3

    pool = urllib3.HTTPConnectionPool(host, port, maxsize=threads, block=True, retries=False)
    results[f"urllib3 {urllib3.__version__} (shared pool)"] = shared_load(
        lambda: lambda: pool.urlopen("POST", PATH, body=body, headers=headers).data,
        threads,
        seconds,
    )
    pool.close()

    try:
        import tritonclient.http as triton
    except ImportError:
        pass
    else:

        def triton_call() -> Callable[[], object]:
            own = triton.InferenceServerClient(f"{host}:{port}")
            tensor = triton.InferInput("INPUT0", [1, 16], "FP32")
            tensor.set_data_from_numpy(data, binary_data=True)
            wanted = [triton.InferRequestedOutput("INPUT0", binary_data=True)]
            return lambda: own.infer("identity", [tensor], outputs=wanted)

        version = importlib.metadata.version("tritonclient")
        results[f"tritonclient {version} (per thread)"] = shared_load(triton_call, threads, seconds)

    def stdlib_call() -> Callable[[], object]:
        conn = http.client.HTTPConnection(host, port)

        def call() -> bytes:
            conn.request("POST", PATH, body=body, headers=headers)
            return conn.getresponse().read()

        return call

    results["http.client (per thread, floor)"] = shared_load(stdlib_call, threads, seconds)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    n = args.requests
    body, headers = body_and_headers()
    results: dict[str, list[float]] = {}
    with background(grpc_port=None) as server:
        host, port = server.host, server.http_port
        url = server.http_url + PATH
        assert port is not None

        conn = http.client.HTTPConnection(host, port)

        def stdlib() -> bytes:
            conn.request("POST", PATH, body=body, headers=headers)
            return conn.getresponse().read()

        results["http.client (stdlib, floor)"] = timed(stdlib, n)
        conn.close()

        from oipcodec.client._pool import ConnectionPool

        own = ConnectionPool("http", host, port, 1)
        results["oipcodec HttpClient's pool"] = timed(
            lambda: own.request("POST", PATH, body, headers, None, url), n
        )
        own.close()

        import urllib3

        pool = urllib3.HTTPConnectionPool(host, port, maxsize=1, retries=False)

        def with_urllib3() -> bytes:
            return pool.urlopen("POST", PATH, body=body, headers=headers).data

        results[f"urllib3 {urllib3.__version__}"] = timed(with_urllib3, n)
        pool.close()

        import httpx

        with httpx.Client() as client:
            results[f"httpx {httpx.__version__} (sync)"] = timed(
                lambda: client.post(url, content=body, headers=headers).content, n
            )

        async def run_async() -> None:
            import aiohttp

            async with aiohttp.ClientSession(auto_decompress=False) as session:

                async def with_aiohttp() -> bytes:
                    async with session.post(url, data=body, headers=headers) as response:
                        return await response.read()

                results[f"aiohttp {aiohttp.__version__}"] = await atimed(with_aiohttp, n)
            async with httpx.AsyncClient() as aclient:

                async def with_httpx() -> bytes:
                    return (await aclient.post(url, content=body, headers=headers)).content

                results[f"httpx {httpx.__version__} (async)"] = await atimed(with_httpx, n)

        try:
            import uvloop

            uvloop.run(run_async())
        except ImportError:
            asyncio.run(run_async())

        loaded = concurrent(server, args.threads, args.seconds)

    print(f"{len(body)}-byte request, {n} requests each, one connection, one at a time")
    print(f"{'library':<32} {'mean us':>9} {'median us':>10}")
    for name, times in results.items():
        mean = statistics.fmean(times) * 1e6
        median = statistics.median(times) * 1e6
        print(f"{name:<32} {mean:9.0f} {median:10.0f}")
    print()
    print(f"{args.threads} threads, {args.seconds:g} s each")
    print(f"{'client':<40} {'req/s':>8} {'client CPU us/req':>18}")
    for name, (rps, cpu) in loaded.items():
        print(f"{name:<40} {rps:8.0f} {cpu:18.0f}")


if __name__ == "__main__":
    main()
