"""Replay the committed fuzz corpus (fuzz/corpus/<harness>/) through every fuzz harness.

Each input must decode to the same result, or fail with the same OIPError and message, on
the native kernels and the pure twins, and nothing but an OIPError may escape. Crash inputs
found by fuzzing are kept in the corpus as ``regress-*`` files, so this is also their
regression test. Longer, random runs: see fuzz/README.md.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from oipcodec import kernels

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
HARNESSES = sorted(p.stem.removeprefix("fuzz_") for p in FUZZ.glob("fuzz_*.py"))

pytestmark = pytest.mark.skipif(
    not kernels.native_available(), reason="the harnesses compare native with pure"
)


@pytest.fixture(scope="module", autouse=True)
def _fuzz_on_path():
    sys.path.insert(0, str(FUZZ))
    yield
    sys.path.remove(str(FUZZ))


def test_every_harness_has_a_corpus() -> None:
    assert len(HARNESSES) >= 9
    for name in HARNESSES:
        assert any((FUZZ / "corpus" / name).glob("seed-*")), name


@pytest.mark.parametrize("name", HARNESSES)
def test_corpus_replays_clean(name: str) -> None:
    if name == "http_framing":  # (llhttp is the reference; see test_http_framing_differential)
        pytest.importorskip("httptools", reason="the server extra is not installed")
    harness = importlib.import_module(f"fuzz_{name}")
    files = sorted((FUZZ / "corpus" / name).iterdir())
    for path in files:
        harness.one_input(path.read_bytes())
