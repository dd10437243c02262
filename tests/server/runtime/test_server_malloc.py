"""glibc's M_TOP_PAD for the serving process (oipcodec/server/runtime/malloc.py): the setting takes
effect (the heap grows by the pad), the operator's environment wins, bad values are refused,
and ``oipcodec serve`` applies it unless told not to."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from oipcodec.server.config import DEFAULT_MALLOC_TOP_PAD
from oipcodec.server.runtime.malloc import _glibc, set_malloc_top_pad

GLIBC = _glibc() is not None

# In a fresh interpreter: set the pad (argv[1] bytes), then take 5 MB in 100 kB blocks (below
# glibc's mmap threshold, so they come from the main heap) and print how far the heap grew.
_PROBE = """
import ctypes, sys
from oipcodec.server.runtime.malloc import set_malloc_top_pad

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
applied = set_malloc_top_pad(int(sys.argv[1]))
before = libc.mallinfo2().arena
blocks = [bytearray(100_000) for _ in range(50)]
print(applied, libc.mallinfo2().arena - before)
"""


def _probe(pad: int, **env: str) -> tuple[bool, int]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_"))}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(pad)],
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    return out[0] == "True", int(out[1])


@pytest.mark.skipif(not GLIBC, reason="M_TOP_PAD is a glibc malloc parameter")
def test_the_heap_keeps_the_pad() -> None:
    applied, grown = _probe(DEFAULT_MALLOC_TOP_PAD)
    assert applied
    assert grown >= DEFAULT_MALLOC_TOP_PAD
    applied, grown = _probe(0)  # 0: malloc left alone, the heap grows by what was taken
    assert not applied
    assert 1_000_000 <= grown < DEFAULT_MALLOC_TOP_PAD // 2


@pytest.mark.skipif(not GLIBC, reason="M_TOP_PAD is a glibc malloc parameter")
@pytest.mark.parametrize(
    "variable, value",
    [
        ("MALLOC_TOP_PAD_", "1048576"),
        ("MALLOC_TRIM_THRESHOLD_", "268435456"),
        ("GLIBC_TUNABLES", "glibc.malloc.top_pad=1048576"),
    ],
)
def test_the_operators_environment_wins(variable: str, value: str) -> None:
    applied, grown = _probe(DEFAULT_MALLOC_TOP_PAD, **{variable: value})
    assert not applied
    assert grown < DEFAULT_MALLOC_TOP_PAD // 2


def test_zero_changes_nothing_and_negative_is_refused() -> None:
    assert set_malloc_top_pad(0) is False
    with pytest.raises(ValueError, match="malloc_top_pad must be >= 0 bytes, got -1"):
        set_malloc_top_pad(-1)


def test_the_server_entry_points_refuse_a_negative_pad() -> None:
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    from oipcodec.server import serve
    from oipcodec.testing import background

    with pytest.raises(ValueError, match="malloc_top_pad must be >= 0 bytes, got -5"):
        serve(malloc_top_pad=-5, log_level=None)
    with (
        pytest.raises(ValueError, match="malloc_top_pad must be >= 0 bytes, got -5"),
        background(malloc_top_pad=-5),
    ):
        pass  # pragma: no cover
