"""The fast path's HTTP/1.1 head parser (parse_head, csrc/oipcodec/http/head.h) on both twins:
its subset case by case, the differential fuzzer against llhttp (tools/http11_fuzz.py, seeded
and bounded here), the RFC 9112 and smuggling tables of the server's tests (none may be fast
unless llhttp agrees), and the C under AddressSanitizer and UndefinedBehaviorSanitizer, built
by GCC and by clang."""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from oipcodec._shared.http11 import HEAD_FAST, HEAD_OTHER, HEAD_PARTIAL
from tests.server.http11.test_server_protocol import MALFORMED, SMUGGLING

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc"
DRIVER = Path(__file__).resolve().parent / "http11_driver.c"
REQUIRED = {n.strip() for n in os.environ.get("OIPCODEC_REQUIRE_COMPILERS", "").split(",")}


def _tool(name: str) -> ModuleType:
    return _module(ROOT / "tools" / f"{name}.py")


def _module(path: Path) -> ModuleType:
    """A script of tools/ or fuzz/, imported once."""
    if path.stem in sys.modules:
        return sys.modules[path.stem]
    if not path.exists():
        pytest.skip(f"{path.parent.name}/ is not next to the tests (an installed wheel)")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = sys.modules[path.stem] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GET = b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\n"
POST = b"POST /v2/models/m/infer HTTP/1.1\r\nContent-Length: 12\r\nInference-Header-Content-Length: 4\r\n\r\n"


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_fast_heads_give_their_spans_and_lengths(impl: Any, kind: type) -> None:
    assert impl.parse_head(kind(GET + b"GET")) == (HEAD_FAST, len(GET), 20, -1, -1, True, False)
    assert impl.parse_head(kind(POST)) == (HEAD_FAST, len(POST), 23, 12, 4, True, False)
    v10 = b"POST /x HTTP/1.0\r\ncontent-length:\t007 \r\nCONNECTION: Close\r\n\r\n"
    assert impl.parse_head(kind(v10)) == (HEAD_FAST, len(v10), 7, 7, -1, False, True)
    close = b"GET / HTTP/1.1\r\nConnection: close\r\nAccept-Encoding: Identity\r\nX-E:\r\n\r\n"
    assert impl.parse_head(kind(close)) == (HEAD_FAST, len(close), 5, -1, -1, False, False)


def test_every_prefix_of_a_fast_head_is_partial(impl: Any) -> None:
    for head in (GET, POST):
        for end in range(len(head)):
            assert impl.parse_head(head[:end])[0] == HEAD_PARTIAL, head[:end]


OTHER = [
    b"HEAD / HTTP/1.1\r\n\r\n",
    b"get / HTTP/1.1\r\n\r\n",
    b"\r\nGET / HTTP/1.1\r\n\r\n",  # an empty line first (llhttp skips it; the Python path too)
    b"GET  / HTTP/1.1\r\n\r\n",
    b"GET /v2?x=1 HTTP/1.1\r\n\r\n",
    b"GET /v2/%41 HTTP/1.1\r\n\r\n",
    b"GET * HTTP/1.1\r\n\r\n",
    b"GET http://x/ HTTP/1.1\r\n\r\n",
    b"GET / HTTP/2.0\r\n\r\n",
    b"GET / HTTP/1.1\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\x00b\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: \x80\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
    b"GET / HTTP/1.1\r\n: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 1 1\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
    b"POST / HTTP/1.1\r\nInference-Header-Content-Length: x\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Encoding: gzip\r\n\r\n",
    b"GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
    b"GET / HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n",
    b"GET / HTTP/1.1\r\nConnection: upgrade\r\n\r\n",
    b"GET / HTTP/1.1\r\nConnection: close\r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"GET / HTTP/1.1\r\nProxy-Connection: close\r\n\r\n",
]


@pytest.mark.parametrize("head", OTHER, ids=range(len(OTHER)))
def test_heads_outside_the_subset_are_other(impl: Any, head: bytes) -> None:
    assert impl.parse_head(head) == (HEAD_OTHER, 0, 0, -1, -1, False, False)


def test_the_rfc_9112_and_smuggling_cases_are_fast_only_where_llhttp_agrees(impl: Any) -> None:
    """compare() raises where a fast head is not llhttp's; the heads the Python path refuses
    (400, 501, 505) are never fast, and the framing fuzzer's valid streams are."""
    fuzz = _tool("http11_fuzz")
    framing = _module(ROOT / "fuzz" / "fuzz_http_framing.py")
    refused = [c[1] for c in [*MALFORMED, *SMUGGLING]]
    for case in refused:
        assert fuzz.compare(case, impl.parse_head) in ("other", "partial"), case
    verdicts = [fuzz.compare(case, impl.parse_head) for case in framing.SEEDS]
    assert sum(v.startswith("fast") for v in verdicts) >= 3, verdicts


def test_the_fuzzer_finds_no_disagreement_with_llhttp(both: Any) -> None:
    fuzz = _tool("http11_fuzz")
    native, pure = both
    tally, failures = fuzz.run(20_000, 7, native.parse_head)
    assert failures == []
    assert tally["fast 1"] > 2_000 and tally["other"] > 2_000, tally  # both sides exercised
    for stream in fuzz.streams(20_000, 7):
        assert native.parse_head(stream) == pure.parse_head(stream), stream
    assert fuzz.run(20_000, 7, pure.parse_head)[1] == []


def test_a_disagreement_is_found() -> None:
    """The oracle can fail: a parser that takes a bare-LF line end for fast is caught."""
    fuzz = _tool("http11_fuzz")

    def lenient(data: bytes) -> tuple[Any, ...]:
        end = data.find(b"\n\n")
        line = data.split(b" HTTP/")[0]
        return (HEAD_FAST, end + 2, len(line), -1, -1, True, False)

    with pytest.raises(AssertionError, match="llhttp"):
        fuzz.compare(b"GET / HTTP/1.1\nHost: x\n\n", lenient)


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_the_parser_under_the_sanitizers(tmp_path: Path, compiler: str) -> None:
    """Every fuzzer input and its prefixes (up to 1 KiB), each in a heap block of exactly its size,
    through head.h built with -fsanitize=address,undefined; the answers equal the kernel's."""
    if not shutil.which(compiler):
        if compiler in REQUIRED or "all" in REQUIRED:
            pytest.fail(f"OIPCODEC_REQUIRE_COMPILERS names {compiler}, but it is not on PATH")
        pytest.skip(f"{compiler} is not on PATH")
    from oipcodec._native.http11 import parse_head

    fuzz = _tool("http11_fuzz")
    streams = list(fuzz.streams(1_000, 11))
    corpus = tmp_path / "corpus"
    corpus.write_bytes(b"".join(struct.pack("<I", len(s)) + s for s in streams))
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
    result = subprocess.run([str(driver), str(corpus)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and not result.stderr, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert len(lines) == len(streams)
    for stream, line in zip(streams, lines, strict=True):
        answer = parse_head(stream)
        fields = [int(f) for f in line.split()]
        if answer[0] == HEAD_FAST:
            assert tuple(fields[:7]) == tuple(int(a) for a in answer), stream
        assert fields[0] == answer[0], stream
        prefixes = [parse_head(stream[:end])[0] for end in range(min(len(stream), 1024))]
        assert fields[7:] == [prefixes.count(k) for k in (HEAD_PARTIAL, HEAD_FAST, HEAD_OTHER)]
