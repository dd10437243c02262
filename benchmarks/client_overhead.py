"""Per-request cost of the HTTP libraries oipcodec's clients could be built on.

    python benchmarks/client_overhead.py [--requests 3000]

Starts the embedded server (demo models, subprocess) and sends the same small request
(identity model, one 1x16 FP32 input, binary tensor data extension, 205-byte body) over one
keep-alive connection, one request at a time, with each library; prints the mean and median
microseconds per request. The body is built once, so the figures are the library's cost plus
the server's, and the server's share is the same for every library: the differences are the
libraries'. ``http.client`` (standard library, no pooling) is the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import statistics
import time
from collections.abc import Awaitable, Callable

import numpy as np

from oipcodec import InferRequest, Tensor, rest
from oipcodec.server import background

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
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

    print(f"{len(body)}-byte request, {n} requests each, one connection, one at a time")
    print(f"{'library':<32} {'mean us':>9} {'median us':>10}")
    for name, times in results.items():
        mean = statistics.fmean(times) * 1e6
        median = statistics.median(times) * 1e6
        print(f"{name:<32} {mean:9.0f} {median:10.0f}")


if __name__ == "__main__":
    main()
