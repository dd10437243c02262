"""Benchmark fixtures: each suite compares native vs pure vs a peer library in one run.

- benchmarks/kernels: pytest-benchmark suites, in-process: the kernels, the REST and protobuf
  codecs, and the compat adapters against the peers' own codecs (``bench_*.py``).
- benchmarks/load: scripts run against a server, ``python benchmarks/load/<script>.py``
  (their docstrings say what they measure); pytest collects nothing there.

docs/development.md, "Which script answers which question", says which suite or script (or
``oipcodec bench``) to run for a given question.

Run with ``pytest benchmarks`` (add ``--benchmark-columns=mean,ops`` for a compact table;
``--benchmark-disable`` runs each once, as CI does). Results are figures for this machine
only; the tests in tests/ never assert a timing.
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
