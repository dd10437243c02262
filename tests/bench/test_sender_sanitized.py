"""The sender's C under AddressSanitizer and UBSan, with GCC and with clang: sender.c and a small
driver (sender_driver.c) are built as one program with ``-fsanitize=address,undefined
-fno-sanitize-recover=all`` and run against a real oipcodec server and the scripted servers of
test_sender.py (split and chunked answers, garbage, a close mid-answer, an oversized header, a
silent server); the HTTP/2 half (h2sender.c with the vendored nghttp2, its own driver
h2sender_driver.c) the same against a real grpcio server (calls, a bad grpc-status, an
answer past its bound, a timeout) and two broken servers (a close, an HTTP/1.1 answer). A
memory or undefined-behaviour error ends the program with the sanitizer's
report, which fails the test. A missing compiler skips, unless ``OIPCODEC_REQUIRE_COMPILERS``
names it (as .ci/run's clang stage does). About ten seconds a compiler, and fifteen more for the HTTP/2 half."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.test_sender import CHUNKED, OK, scripted_server

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc"
SOURCE = CSRC / "oipcodec" / "load" / "sender.c"
DRIVER = Path(__file__).resolve().parent / "sender_driver.c"
REQUIRED = {n.strip() for n in os.environ.get("OIPCODEC_REQUIRE_COMPILERS", "").split(",")}
REQUEST = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"

pytestmark = [
    pytest.mark.skipif(not SOURCE.exists(), reason=f"no C source at {SOURCE}"),
    pytest.mark.skipif(sys.platform == "win32", reason="the sender is POSIX only"),
]


@pytest.fixture(scope="module", params=["gcc", "clang"])
def driver(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = str(request.param)
    if not shutil.which(compiler):
        if compiler in REQUIRED or "all" in REQUIRED:
            pytest.fail(f"OIPCODEC_REQUIRE_COMPILERS names {compiler}, but it is not on PATH")
        pytest.skip(f"{compiler} is not on PATH")
    out = tmp_path_factory.mktemp(compiler) / "sender_driver"
    command = [
        compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
        "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
        "-I", str(CSRC), str(SOURCE), str(DRIVER), "-lm", "-o", str(out),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0 and "cannot find" in result.stderr and "asan" in result.stderr:
        pytest.skip(f"{compiler} has no sanitizer runtime here: {result.stderr.strip()[:200]}")
    assert result.returncode == 0, result.stderr
    return out


def _drive(driver: Path, port: int, *, connections: int = 2, count: int = 20,
           duration: float = 0.0, rate: float = 0.0, timeout: float = 2.0,
           max_answer: int = 1 << 20, capacity: int = 1000) -> tuple[dict[str, int], str]:  # fmt: skip
    args = [port, connections, count, duration, rate, timeout, max_answer, capacity]
    result = subprocess.run(
        [str(driver), *map(str, args), REQUEST],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0"},
    )
    assert result.returncode == 0 and "runtime error" not in result.stderr, result.stderr
    counts, _, first_error = result.stdout.partition("\n")
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counts)}, first_error.strip()


def test_against_oipcodec_closed_and_open_loop(driver: Path) -> None:
    from oipcodec.testing import background

    with background(process=True) as server:
        port = server.http_port
        counts, _ = _drive(driver, port, connections=4, count=200, capacity=50)
        assert counts["completed"] == 200 and counts["recorded"] == 50  # capacity bounds records
        counts, _ = _drive(driver, port, connections=4, count=0, duration=0.5, rate=200)
        assert counts["completed"] >= 90 and counts["e5"] == 0


@pytest.mark.parametrize(
    ("answer", "piece", "close", "kind"),
    [
        (OK, 1, False, None),
        (CHUNKED, 3, False, None),
        (b"HELLO\r\n\r\n", 0, False, "e3"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n", 0,
         False, "e4"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 20000 + b"\r\n\r\n", 0, False, "e4"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", 0, True, "e2"),
        (b"", 0, False, "e5"),
    ],
    ids=["split", "chunked", "garbage", "chunk-overflow", "header-too-large", "closed", "silent"],
)  # fmt: skip
def test_scripted_answers(
    driver: Path, answer: bytes, piece: int, close: bool, kind: str | None
) -> None:
    with scripted_server(lambda n: answer, piece, close) as server:
        counts, first_error = _drive(driver, server.port, count=6, timeout=0.5)
    if kind is None:
        assert counts["completed"] == 6 and counts["s200"] == 6, first_error
    else:
        assert counts["completed"] == 0 and counts[kind] >= 1, (counts, first_error)
        assert first_error.startswith("connection ")


def test_refused_port(driver: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        counts, first_error = _drive(driver, probe.getsockname()[1], duration=3.0, count=0)
    assert counts["completed"] == 0 and counts["e0"] >= 1 and "connect" in first_error


# The HTTP/2 half: h2sender.c with the vendored nghttp2 (compiled as setup.py compiles it, in
# the GNU dialect and without -Werror: its warnings are not ours) and sender.c, whose loop
# helpers it shares, against a real grpcio server and two broken ones.
NGHTTP2 = CSRC / "third_party" / "nghttp2" / "lib"
NGHTTP2_MACROS = ["-DBUILDING_NGHTTP2", "-DNGHTTP2_STATICLIB", "-DHAVE_ARPA_INET_H=1",
                  "-DHAVE_NETINET_IN_H=1", "-DHAVE_CLOCK_GETTIME=1",
                  "-DHAVE_DECL_CLOCK_MONOTONIC=1"]  # fmt: skip


@pytest.fixture(scope="module", params=["gcc", "clang"])
def h2_driver(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = str(request.param)
    if not shutil.which(compiler):
        if compiler in REQUIRED or "all" in REQUIRED:
            pytest.fail(f"OIPCODEC_REQUIRE_COMPILERS names {compiler}, but it is not on PATH")
        pytest.skip(f"{compiler} is not on PATH")
    out = tmp_path_factory.mktemp(compiler) / "h2sender_driver"
    command = [
        compiler, "-std=gnu11", "-O1", "-g", "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", *NGHTTP2_MACROS,
        "-I", str(CSRC), "-I", str(NGHTTP2), "-I", str(NGHTTP2 / "includes"),
        *map(str, sorted(NGHTTP2.glob("*.c"))), str(SOURCE), str(SOURCE.with_name("h2sender.c")),
        str(DRIVER.with_name("h2sender_driver.c")), "-lm", "-o", str(out),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0 and "cannot find" in result.stderr and "asan" in result.stderr:
        pytest.skip(f"{compiler} has no sanitizer runtime here: {result.stderr.strip()[:200]}")
    assert result.returncode == 0, result.stderr
    return out


def _drive_h2(driver: Path, port: int, path: str, *, streams: int = 2, count: int = 6,
              timeout: float = 2.0, max_answer: int = 1 << 20,
              message: str = "hello") -> tuple[dict[str, int], str]:  # fmt: skip
    args = [port, path, streams, count, timeout, max_answer, message]
    result = subprocess.run(
        [str(driver), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0"},
    )
    assert result.returncode == 0 and "runtime error" not in result.stderr, result.stderr
    counts, _, first_error = result.stdout.partition("\n")
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counts)}, first_error.strip()


def test_h2_against_grpcio(h2_driver: Path) -> None:
    from tests.bench.test_sender_grpc import grpc_server

    with grpc_server() as port:
        counts, _ = _drive_h2(h2_driver, port, "/t.T/Echo", streams=4, count=200)
        assert counts["completed"] == 200 and counts["recorded"] == 10
        counts, _ = _drive_h2(h2_driver, port, "/t.T/Echo", count=20, message="y" * 70000)
        assert counts["completed"] == 20  # past the 64 KiB default window: flow control
        counts, first = _drive_h2(h2_driver, port, "/t.T/Fail")
        assert counts["completed"] == 0 and counts["e6"] == 6 and "grpc-status 5" in first
        counts, _ = _drive_h2(h2_driver, port, "/t.T/Big", max_answer=1000)
        assert counts["completed"] == 0 and counts["e4"] == 6
        counts, _ = _drive_h2(h2_driver, port, "/t.T/Slow", count=2, timeout=0.2)
        assert counts["completed"] == 0 and counts["e5"] == 2


@pytest.mark.parametrize(
    ("answer", "kind"),
    [(None, "e2"), (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" * 4, "e3")],
    ids=["closed", "http1"],
)
def test_h2_broken_servers(h2_driver: Path, answer: bytes | None, kind: str) -> None:
    import socket
    import time

    from tests.support.hostile import HostileServer

    def script(conn: socket.socket, index: int) -> None:
        conn.recv(1 << 16)
        if answer is not None:
            conn.sendall(answer)
            time.sleep(0.2)

    with HostileServer(script) as server:
        counts, first_error = _drive_h2(h2_driver, server.port, "/t.T/Echo", count=3)
    assert counts["completed"] == 0 and counts[kind] >= 1, (counts, first_error)
