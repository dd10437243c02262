"""Benchmark fixtures: each suite compares native vs pure vs a peer library in one run.

Run with ``pytest benchmarks`` (add ``--benchmark-columns=mean,ops`` for a compact table).
Results are figures for this machine only; the tests in tests/ never assert a timing.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from oipcodec import kernels


@pytest.fixture(scope="session")
def native() -> SimpleNamespace:
    return kernels.load("native", partial=True)


@pytest.fixture(scope="session")
def pure() -> SimpleNamespace:
    return kernels.load("pure")
