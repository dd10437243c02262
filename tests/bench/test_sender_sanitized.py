"""The sender's C under AddressSanitizer and UBSan, with GCC and with clang: sender.c and a small
driver (sender_driver.c) are built as one program with ``-fsanitize=address,undefined
-fno-sanitize-recover=all`` and run against a real oipcodec server and the scripted servers of
test_sender.py (split and chunked answers, garbage, a close mid-answer, an oversized header, a
silent server). A memory or undefined-behaviour error ends the program with the sanitizer's
report, which fails the test. A missing compiler skips, unless ``OIPCODEC_REQUIRE_COMPILERS``
names it (as .ci/run's clang stage does). About ten seconds a compiler."""

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
