"""The HTTP/1.1 framing of oipcodec's protocol agrees with llhttp (httptools), byte stream by
byte stream: fuzz/fuzz_http_framing.py, for a bounded time.

Every committed stream of its corpus (fuzz/corpus/http_framing/: valid requests, the vectors
of issue 20, the inputs fuzzing found) and a fixed number of mutations of it, from a fixed
seed, so a run is the same every time. Longer, random runs: fuzz/README.md.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("httptools", reason="llhttp (httptools, in the server extra) is the reference")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
#: Mutated streams per run: about 10-20 s on two shared cores.
STREAMS = 15_000
SEED = 20


@pytest.fixture(scope="module")
def harness() -> Iterator[ModuleType]:
    sys.path.insert(0, str(FUZZ))
    try:
        import fuzz_http_framing

        yield fuzz_http_framing
    finally:
        sys.path.remove(str(FUZZ))


def test_the_corpus_agrees_with_llhttp(harness: ModuleType) -> None:
    files = sorted(harness.CORPUS.iterdir())
    assert len(files) >= len(harness.SEEDS)
    results = {path.name: harness.compare(path.read_bytes()) for path in files}
    # Each of issue 20's vectors is in it and agrees outright (no exception needed).
    for vector in harness.VECTORS:
        assert harness.compare(vector) == "agree", vector
    assert set(results.values()) <= {"agree", *(name for name, _, _ in harness.EXCEPTIONS)}


def test_mutated_streams_agree_with_llhttp(harness: ModuleType) -> None:
    tally = harness.run(STREAMS, SEED)
    assert sum(tally.values()) == STREAMS + len(harness.corpus())
    assert tally["agree"] > 0.9 * STREAMS, tally


def test_the_exceptions_are_few_and_each_is_met(harness: ModuleType) -> None:
    names = [name for name, _, _ in harness.EXCEPTIONS]
    assert len(names) <= 4
    met = {harness.compare(path.read_bytes()) for path in harness.CORPUS.iterdir()}
    assert set(names) <= met  # each is explained by an example in the corpus
