"""Shared fixtures.

- ``impl``: a kernel test that takes it runs once per implementation, native and pure, in one
  pytest run. Without a native build the native case is skipped, unless the run says native
  must be there (``OIPCODEC_EXPECT_NATIVE=1``, set by .ci/run), where it fails instead.
- Every test fails if Python reports an exception it had to ignore ("Exception ignored in ..."),
  the symptom of an error swallowed in a destructor or a ``noexcept`` native function.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from oipcodec import kernels

pytest_plugins = ["pytester"]

# The impl fixture is stateless, so sharing it across hypothesis examples is safe. No deadline:
# this machine is shared and noisy, and speed is measured in benchmarks/, not asserted here.
settings.register_profile(
    "oipcodec", suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None
)
settings.load_profile("oipcodec")

EXPECT_NATIVE = os.environ.get("OIPCODEC_EXPECT_NATIVE", "") not in ("", "0")


class _Kernels(SimpleNamespace):
    """A kernel namespace in which a kernel that is not built skips the test using it (or
    fails it, when the run expects every native kernel to be built)."""

    def __getattr__(self, name: str) -> Any:
        # Only a real kernel name (one the pure reference exports) skips: anything else, such
        # as hypothesis probing its arguments, must see an ordinary AttributeError.
        if name not in _KERNEL_NAMES:
            raise AttributeError(name)
        message = f"{self.IMPLEMENTATION} kernel {name!r} is not built"
        if EXPECT_NATIVE:
            pytest.fail(message)
        pytest.skip(message)


_KERNEL_NAMES = frozenset(vars(kernels.load("pure"))) - {"IMPLEMENTATION"}


def _kernels(implementation: str) -> SimpleNamespace:
    return _Kernels(**vars(kernels.load(implementation, partial=True)))


@pytest.fixture(params=["native", "pure"])
def impl(request: pytest.FixtureRequest) -> SimpleNamespace:
    """The kernels of one implementation, e.g. ``impl.serialize_bytes``."""
    return _kernels(request.param)


@pytest.fixture
def both() -> tuple[SimpleNamespace, SimpleNamespace]:
    """(native, pure), for tests that compare the twins on the same input."""
    return _kernels("native"), _kernels("pure")


@pytest.fixture(autouse=True)
def _fail_on_ignored_exceptions() -> Iterator[None]:
    ignored: list[Any] = []
    previous = sys.unraisablehook
    sys.unraisablehook = ignored.append
    try:
        yield
    finally:
        sys.unraisablehook = previous
    if ignored:
        first = ignored[0]
        pytest.fail(
            f"Exception ignored in {first.object!r}: "
            f"{type(first.exc_value).__name__}: {first.exc_value}"
        )
