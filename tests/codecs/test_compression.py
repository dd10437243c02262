"""oipcodec.compression: the deflate library picked at import, standard bytes, inflate limits.

The streams are checked against the standard library's gzip and zlib (any peer reads them), the
size cap against bombs inflated by the fast library, and the fallback in subprocesses where the
fast libraries' imports fail.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import orjson
import pytest

from oipcodec import compression, rest
from oipcodec.errors import DecodeError, EncodeError, LimitError


def _bodies() -> dict[str, bytes]:
    rng = np.random.default_rng(7)
    values = rng.standard_normal(4096).astype(np.float32)
    return {
        "fp32": values.tobytes(),
        "int64 tokens": rng.integers(0, 32000, 8192, dtype=np.int64).tobytes(),
        "json": orjson.dumps({"inputs": [{"name": "x", "data": values.tolist()}]}),
        "empty": b"",
    }


BODIES = _bodies()


def test_rest_uses_the_compression_module() -> None:
    assert rest.compress is compression.compress
    assert rest.decompress is compression.decompress


def test_the_fast_library_is_picked_when_installed() -> None:
    pytest.importorskip("isal.isal_zlib")
    assert compression.BACKEND == "isal"
    assert (compression.LEVEL, compression.MAX_LEVEL) == (2, 3)


@pytest.mark.parametrize("name", BODIES)
def test_streams_are_standard_gzip_and_zlib(name: str) -> None:
    body = BODIES[name]
    assert gzip.decompress(compression.compress(body, "gzip")) == body
    assert zlib.decompress(compression.compress(body, "deflate")) == body  # zlib-wrapped
    assert compression.compress(body, " GZIP ")[:3] == b"\x1f\x8b\x08"


@pytest.mark.parametrize("name", BODIES)
def test_reads_what_the_standard_library_writes(name: str) -> None:
    body = BODIES[name]
    assert compression.decompress(gzip.compress(body), "gzip") == body
    assert compression.decompress(zlib.compress(body), "deflate") == body
    bare = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    assert compression.decompress(bare.compress(body) + bare.flush(), "deflate") == body


@pytest.mark.parametrize("level", [0, 1])
def test_explicit_levels_round_trip(level: int) -> None:
    body = BODIES["json"]
    assert compression.decompress(compression.compress(body, "gzip", level), "gzip") == body


@pytest.mark.parametrize("level", [-1, 10])
def test_level_out_of_range_names_the_range(level: int) -> None:
    with pytest.raises(EncodeError, match=f"level {level} is out of range: .* takes 0 to"):
        compression.compress(b"x", "gzip", level)


def test_unsupported_encoding_when_compressing() -> None:
    with pytest.raises(EncodeError, match="unsupported Content-Encoding 'br'"):
        compression.compress(b"x", "br")


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_bomb_stops_at_the_cap_while_inflating(encoding: str) -> None:
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    deflater = zlib.compressobj(9, zlib.DEFLATED, wbits)
    zeros = bytes(1 << 20)
    bomb = b"".join(deflater.compress(zeros) for _ in range(256)) + deflater.flush()
    assert len(bomb) < 300_000  # 256 MiB of zeros
    with pytest.raises(LimitError, match=f"the {encoding} body inflates past the limit of 1000"):
        compression.decompress(bomb, encoding, max_size=1000)
    # Exactly at the cap is allowed; one byte less is not.
    packed = compression.compress(bytes(5000), encoding)
    assert compression.decompress(packed, encoding, max_size=5000) == bytes(5000)
    with pytest.raises(LimitError):
        compression.decompress(packed, encoding, max_size=4999)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (gzip.compress(BODIES["json"])[:-5], "truncated"),
        (gzip.compress(BODIES["json"])[:100], "truncated"),
        (gzip.compress(b"{}") + b"xx", "2 bytes follow the end"),
        (b"\x1f\x8b\x08\x00" + bytes(20), "invalid gzip body"),
    ],
)
def test_broken_streams(data: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        compression.decompress(data, "gzip")


# Run in a fresh interpreter where importing the named modules fails, as if not installed.
_FALLBACK = textwrap.dedent(
    """
    import gzip, sys, zlib

    class Absent:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked for this test")
            return None

    sys.meta_path.insert(0, Absent())
    from oipcodec import compression
    from oipcodec.errors import LimitError

    body = bytes(range(256)) * 4000
    assert gzip.decompress(compression.compress(body, "gzip")) == body
    assert compression.decompress(zlib.compress(body), "deflate") == body
    try:
        compression.decompress(gzip.compress(bytes(1 << 22)), "gzip", max_size=1 << 20)
    except LimitError:
        pass
    else:
        raise AssertionError("the cap was not enforced")
    print(compression.BACKEND, compression.LEVEL, compression.MAX_LEVEL)
    """
)


@pytest.mark.parametrize(
    ("blocked", "expected"),
    [(("isal", "zlib_ng"), "zlib 6 9"), (("isal",), "zlib-ng 2 9")],
)
def test_fallback_when_the_fast_library_is_absent(blocked: tuple[str, ...], expected: str) -> None:
    if expected.startswith("zlib-ng"):
        pytest.importorskip("zlib_ng.zlib_ng")
    script = f"BLOCKED = {blocked!r}\n{_FALLBACK}"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == expected
