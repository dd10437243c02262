"""The framing as nghttp2's own clients see it: ``nghttp`` (one request, its frames printed)
and ``h2load`` (many, over several connections). Debian's nghttp2-client; skipped without it."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tests.server.h2.conftest import Route, run, serve

NGHTTP, H2LOAD = shutil.which("nghttp"), shutil.which("h2load")
pytestmark = pytest.mark.skipif(not NGHTTP or not H2LOAD, reason="nghttp2-client is not installed")

ROUTES = {b"/t.S/Echo": Route(lambda stream, message: message)}
GRPC = ("-H", "content-type: application/grpc", "-H", "te: trailers")


async def _tool(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(process.communicate(), 30)
    return out.decode("utf-8", "replace")


@pytest.fixture
def body(tmp_path: Path) -> str:
    path = tmp_path / "body"
    path.write_bytes(b"\x00\x00\x00\x00\x05hello")
    return str(path)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (
            # An OK answer's headers and trailers (sent from ready lists) as they were built.
            GRPC,
            [
                ":status: 200",
                "content-type: application/grpc",
                "grpc-accept-encoding: identity,deflate,gzip",
                "grpc-status: 0",
                "DATA frame <length=10, flags=0x00",
            ],
        ),
        (
            (*GRPC, "-H", "grpc-encoding: br"),
            ["grpc-status: 12", "grpc-accept-encoding: identity,deflate,gzip"],
        ),
        (("-H", "content-type: text/plain"), [":status: 415"]),
    ],
)
def test_nghttp_sees_grpc_framing(body: str, headers: tuple[str, ...], expected: list[str]) -> None:
    async def main() -> str:
        async with serve(ROUTES) as (port, _, _):
            return await _tool(
                str(NGHTTP), "-nv", "-d", body, *headers, f"http://127.0.0.1:{port}/t.S/Echo"
            )

    out = run(main())
    for text in expected:
        assert text in out, out


def test_h2load_many_calls_on_eight_connections(body: str) -> None:
    async def main() -> str:
        async with serve(ROUTES) as (port, _, made):
            out = await _tool(
                str(H2LOAD),
                "-n",
                "400",
                "-c",
                "8",
                "-m",
                "4",
                "-d",
                body,
                *GRPC,
                f"http://127.0.0.1:{port}/t.S/Echo",
            )
            assert len(made) == 8 and all(p.active_streams == 0 for p in made)
            return out

    out = run(main())
    assert "400 succeeded, 0 failed, 0 errored" in out, out
    assert "status codes: 400 2xx" in out, out
