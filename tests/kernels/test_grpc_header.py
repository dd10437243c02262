"""csrc/oipcodec/h2/grpc.h (the native gRPC path's message prefix, grpc-timeout and
content-type readers) under AddressSanitizer and UBSan, through tests/kernels/grpc_driver.c,
against the rules of the gRPC HTTP/2 protocol written here in Python."""

from __future__ import annotations

import os
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc"
DRIVER = Path(__file__).resolve().parent / "grpc_driver.c"
REQUIRED = {n.strip() for n in os.environ.get("OIPCODEC_REQUIRE_COMPILERS", "").split(",")}
UNITS = {b"H": 3600 * 10**9, b"M": 60 * 10**9, b"S": 10**9, b"m": 10**6, b"u": 10**3, b"n": 1}
INT64_MAX = 2**63 - 1


def expected(data: bytes) -> str:
    """The driver's line for ``data``, by the protocol's rules."""
    if len(data) < 5:
        prefix = "0 -1 0"
    elif data[0] > 1:
        prefix = "-1 -1 0"
    else:
        prefix = f"1 {data[0]} {int.from_bytes(data[1:5], 'big')}"
    if re.fullmatch(rb"[0-9]{1,8}[HMSmun]", data):
        timeout = f"0 {min(int(data[:-1]) * UNITS[data[-1:]], INT64_MAX)}"
    else:
        timeout = "-1 -1"
    head = b"application/grpc"
    grpc = data[:16].lower() == head and (len(data) == 16 or data[16:17] in (b"+", b";"))
    return f"{prefix} {timeout} {int(grpc)}"


def corpus() -> list[bytes]:
    rng = random.Random(47)
    inputs = [
        b"",
        b"\x00\x00\x00\x00\x05hello",
        b"\x01\xff\xff\xff\xff",
        b"\x02\x00\x00\x00\x00",
        b"1S",
        b"99999999H",
        b"100000000S",  # 9 digits: too many
        b"0n",
        b"12x",
        b"S",
        b"application/grpc",
        b"application/grpc+proto",
        b"Application/GRPC;charset=utf-8",
        b"application/grpcx",
        b"application/json",
    ]
    alphabet = b"0123456789HMSmunx+;/\x00\x01\xff" + b"application/grpc"
    for _ in range(300):
        n = rng.randrange(0, 24)
        inputs.append(bytes(rng.choice(alphabet) for _ in range(n)))
    return inputs


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_grpc_header_under_the_sanitizers(tmp_path: Path, compiler: str) -> None:
    if not shutil.which(compiler):
        if compiler in REQUIRED or "all" in REQUIRED:
            pytest.fail(f"OIPCODEC_REQUIRE_COMPILERS names {compiler}, but it is not on PATH")
        pytest.skip(f"{compiler} is not on PATH")
    if not DRIVER.exists() or not (CSRC / "oipcodec" / "h2" / "grpc.h").exists():
        pytest.skip("csrc/ is not next to the tests (an installed wheel)")
    inputs = corpus()
    path = tmp_path / "corpus"
    path.write_bytes(b"".join(struct.pack("<I", len(i)) + i for i in inputs))
    driver = tmp_path / "driver"
    sanitize = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    command = [compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g", *sanitize]
    build = subprocess.run(
        [*command, "-I", str(CSRC), "-o", str(driver), str(DRIVER)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    result = subprocess.run([str(driver), str(path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and not result.stderr, result.stderr[-3000:]
    want = [expected(i[:k]) for i in inputs for k in range(len(i) + 1)]
    assert result.stdout.splitlines() == want
