"""Unary calls through H2Protocol, made by grpcio's own aio channel (identity serializers)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.server.h2.conftest import Route, run, serve, session

grpc = pytest.importorskip("grpc")


def _echo(stream: Any, message: bytes) -> bytes:
    return b"echo:" + message


async def _later(stream: Any, message: bytes) -> bytes:
    await asyncio.sleep(0.01)
    return b"later:" + message


def _refuse(stream: Any, message: bytes) -> bytes:
    raise session.GrpcAbort(grpc.StatusCode.INVALID_ARGUMENT.value[0], "no 100% é")


async def _refuse_later(stream: Any, message: bytes) -> bytes:
    await asyncio.sleep(0)
    raise session.GrpcAbort(grpc.StatusCode.NOT_FOUND.value[0], "gone")


def _broken(stream: Any, message: bytes) -> bytes:
    raise RuntimeError("bug")


async def _not_bytes_later(stream: Any, message: bytes) -> Any:
    return 42


SEEN: list[Any] = []


def _metadata(stream: Any, message: bytes) -> bytes:
    stream.initial_metadata.append(("x-first", "1"))
    stream.trailing_metadata.append(("x-last-bin", b"\x00\xff"))
    SEEN.append((stream.path, stream.peer.split(":")[:2], stream.metadata, stream.deadline))
    return b"ok"


ROUTES = {
    b"/t.S/Echo": Route(_echo),
    b"/t.S/Later": Route(_later),
    b"/t.S/Refuse": Route(_refuse),
    b"/t.S/RefuseLater": Route(_refuse_later),
    b"/t.S/Broken": Route(_broken),
    b"/t.S/Metadata": Route(_metadata),
    b"/t.S/NotBytes": Route(lambda stream, message: "text"),
    b"/t.S/NotBytesLater": Route(_not_bytes_later),
}


async def _call(port: int, path: str, message: bytes, **kwargs: Any) -> Any:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        method = channel.unary_unary(path)
        return await method(message, **kwargs)


def _status(port: int, path: str, message: bytes = b"x", **kwargs: Any) -> Any:
    async def main() -> Any:
        try:
            await _call(port, path, message, **kwargs)
        except grpc.aio.AioRpcError as exc:
            return exc.code(), exc.details()
        raise AssertionError("the call succeeded")

    return main()


def test_unary_bytes_and_coroutine() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, _):
            assert await _call(port, "/t.S/Echo", b"hi") == b"echo:hi"
            assert await _call(port, "/t.S/Later", b"hi") == b"later:hi"
            assert await _call(port, "/t.S/Echo", b"") == b"echo:"
            big = bytes(range(256)) * 4096  # 1 MiB: many DATA frames and window updates
            assert await _call(port, "/t.S/Echo", big) == b"echo:" + big

    run(main())


def test_many_calls_on_one_channel_at_once() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, _, made):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                echo = channel.unary_unary("/t.S/Echo")
                later = channel.unary_unary("/t.S/Later")
                calls = [(echo if i % 2 else later)(b"%d" % i) for i in range(200)]
                answers = await asyncio.gather(*calls)
            assert answers == [(b"echo:%d" if i % 2 else b"later:%d") % i for i in range(200)]
            assert len(made) == 1 and made[0].active_streams == 0

    run(main())


def test_abort_and_errors_give_their_status() -> None:
    async def main() -> None:
        async with serve(ROUTES) as (port, router, _):
            refused = await _status(port, "/t.S/Refuse")
            assert refused == (grpc.StatusCode.INVALID_ARGUMENT, "no 100% é")
            assert await _status(port, "/t.S/RefuseLater") == (grpc.StatusCode.NOT_FOUND, "gone")
            code, _ = await _status(port, "/t.S/Broken")
            assert code == grpc.StatusCode.INTERNAL
            code, _ = await _status(port, "/t.S/Nothing")
            assert code == grpc.StatusCode.UNIMPLEMENTED
            assert router.misses == [b"/t.S/Nothing"]

    run(main())


def test_a_handler_answering_wrong_is_internal_and_the_connection_lives() -> None:
    async def main() -> None:
        async with (
            serve(ROUTES) as (port, _, made),
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        ):
            for path in ("/t.S/NotBytes", "/t.S/NotBytesLater", "/t.S/RouterBug"):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await channel.unary_unary(path)(b"x")
                assert caught.value.code() == grpc.StatusCode.INTERNAL
                assert caught.value.details() == "Unexpected error in the gRPC handler"
                assert await channel.unary_unary("/t.S/Echo")(b"y") == b"echo:y"
            assert len(made) == 1

    run(main())


def test_metadata_both_ways() -> None:
    async def main() -> None:
        async with (
            serve(ROUTES) as (port, _, _),
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        ):
            call = channel.unary_unary("/t.S/Metadata")(
                b"", metadata=(("x-a", "b"), ("x-c-bin", b"\x01\x02"))
            )
            assert await call == b"ok"
            initial = await call.initial_metadata()
            trailing = await call.trailing_metadata()
        path, peer, metadata, deadline = SEEN.pop()
        assert deadline is None
        assert path == "/t.S/Metadata" and peer == ["ipv4", "127.0.0.1"]
        assert ("x-a", "b") in metadata and ("x-c-bin", b"\x01\x02") in metadata
        assert ("x-first", "1") in tuple(initial)
        assert ("x-last-bin", b"\x00\xff") in tuple(trailing)

    run(main())
