"""The HTTP/2 fuzzer of tests/support/h2fuzz.py, sized for a test run: seeded hostile client
streams (malformed frames, window abuse, HPACK bombs and broken HPACK, rapid reset,
CONTINUATION floods, streams past the concurrency limit, bad gRPC framing, mutations of a
recorded grpcio ModelInfer) fed in-process to fresh connections, and a sample of them on real
sockets to the whole native gRPC server, then tritonclient's ModelInfer. Long runs:
``python tools/h2_fuzz.py --cases N --seed S`` (docs/development.md)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from tests.server.h2.conftest import run

pytest.importorskip("hpack", reason="the test extra's HPACK decoder reads the answers")

from tests.support import h2fuzz

#: In-process cases per run: about 10 s here on two shared cores.
CASES = 30_000
SEED = 47
#: Cases sent over sockets to the whole server, 20 connections at a time.
SOCKET_CASES = 300


def test_the_generator_is_seeded_and_covers_every_class() -> None:
    first = [h2fuzz.Generator(SEED).next() for _ in range(3)]
    again = [h2fuzz.Generator(SEED).next() for _ in range(3)]
    assert [c.data for c in first] == [c.data for c in again]
    gen = h2fuzz.Generator(SEED)
    kinds = {gen.next().kind for _ in range(5000)}
    # Each class of case_* (a few name their variants) and the mutations.
    assert len(kinds) > len(h2fuzz.classes()) and "mutated" in kinds
    assert set(h2fuzz.EXCEPTIONS) <= kinds


def test_the_recorded_grpcio_exchange_is_answered() -> None:
    recorded = h2fuzz.RECORDED.read_bytes()
    written, _ = run(h2fuzz.feed(recorded))
    answer = h2fuzz.read_answer(written)
    assert answer.statuses == {1: 0} and not answer.goaway and not answer.resets
    # The echo router answers the request message itself.
    (request,) = [f[3] for f in h2fuzz.parse_frames(recorded) if f[0] == h2fuzz.DATA]
    assert answer.data[1] == request


def test_seeded_cases_in_process() -> None:
    tally = run(h2fuzz.run(CASES, SEED, batch=10_000), timeout=240)
    assert sum(tally.values()) == CASES


def test_a_sample_on_sockets_to_the_native_server() -> None:
    grpcclient = pytest.importorskip("tritonclient.grpc")
    from oipcodec.server.h2.grpc_server import native_grpc_available
    from oipcodec.testing import background

    if not native_grpc_available():
        pytest.skip("the native gRPC server is not built")
    gen = h2fuzz.Generator(SEED + 1)
    cases: list[Any] = []
    while len(cases) < SOCKET_CASES:
        case = gen.next()
        if h2fuzz.for_any_server(case):
            cases.append(case)

    async def one(port: int, case: Any) -> None:
        written, closed = await h2fuzz.over_socket(port, case.data)
        try:
            answer = h2fuzz.read_answer(written)
            h2fuzz.check(case, answer)
            if any(code for _, code in answer.goaway):
                assert closed, "GOAWAY with an error, then the connection stayed open"
        except AssertionError as exc:
            raise AssertionError(f"{case.kind} {case.data[:120]!r}: {exc}") from exc

    with background(grpc_impl="native", http_port=None, log_level="critical") as server:
        port = server.grpc_port
        assert port is not None

        async def main() -> None:
            for at in range(0, len(cases), 20):
                await asyncio.gather(*(one(port, c) for c in cases[at : at + 20]))

        run(main(), timeout=120)
        client = grpcclient.InferenceServerClient(server.grpc_address)
        tensor = grpcclient.InferInput("INPUT0", [1, 16], "INT32")
        tensor.set_data_from_numpy(np.arange(16, dtype=np.int32).reshape(1, 16))
        other = grpcclient.InferInput("INPUT1", [1, 16], "INT32")
        other.set_data_from_numpy(np.ones((1, 16), dtype=np.int32))
        result = client.infer("simple", [tensor, other])
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), np.arange(1, 17).reshape(1, 16))
        client.close()
