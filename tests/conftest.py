"""Shared fixtures.

- ``impl``: a kernel test that takes it runs once per implementation, native and pure, in one
  pytest run. Without a native build the native case is skipped, unless the run says native
  must be there (``OIPCODEC_EXPECT_NATIVE=1``, set by .ci/run), where it fails instead.
- ``OIPCODEC_TEST_HTTP_PROTOCOL=oipcodec`` (any of ``HTTP_PROTOCOLS``): every server a test
  starts with ``oipcodec.testing.background`` runs on that HTTP protocol unless the test
  chooses one itself; .ci/run runs the REST suites a second time so, on the Python protocol
  alone (the default is the native front end).
- ``OIPCODEC_TEST_GRPC_IMPL=native`` (any of ``GRPC_IMPLS``): the same for the gRPC server
  (``grpc_impl``); .ci/run sets it with the HTTP protocol's, so that run serves gRPC natively.
- A test taking the ``grpc`` fixture (tritonclient's gRPC client, tests/server/conftest.py) also
  answers to ``-k grpc``, whatever its name: .ci/run's native run selects the gRPC tests so.
- Every test fails if Python reports an exception it had to ignore ("Exception ignored in ..."),
  the symptom of an error swallowed in a destructor or a ``noexcept`` native function.
"""

from __future__ import annotations

import functools
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


def _serve_on(setting: str, value: str, choices: tuple[str, ...], default: str) -> None:
    """Make ``oipcodec.testing.background`` run its servers with ``setting=value`` where the
    test leaves the default (the test modules import it after this file ran)."""
    from oipcodec import testing

    if value not in choices:
        raise pytest.UsageError(f"the test run's {setting} must be one of {choices}")
    chosen = testing.background

    @functools.wraps(chosen)
    def background(models: Any = None, *, config: Any = None, **settings: Any) -> Any:
        config = testing.BACKGROUND_DEFAULTS if config is None else config
        if setting not in settings and getattr(config, setting) == default:
            settings[setting] = value
        return chosen(models, config=config, **settings)

    testing.background = background


def _serve_as_the_run_says() -> None:
    variables = ("OIPCODEC_TEST_HTTP_PROTOCOL", "OIPCODEC_TEST_GRPC_IMPL")
    if not any(os.environ.get(variable) for variable in variables):
        # Nothing to import: the server package needs the main environment's protobuf, and
        # the v1 reference's environment (protobuf 3.20) loads this file too.
        return
    from oipcodec.server.config import GRPC_IMPLS, HTTP_PROTOCOLS

    for variable, setting, choices, default in (
        ("OIPCODEC_TEST_HTTP_PROTOCOL", "http_protocol", HTTP_PROTOCOLS, "native"),
        ("OIPCODEC_TEST_GRPC_IMPL", "grpc_impl", GRPC_IMPLS, "grpcio"),
    ):
        if os.environ.get(variable):
            _serve_on(setting, os.environ[variable], choices, default)


_serve_as_the_run_says()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "grpc" in getattr(item, "fixturenames", ()):
            item.extra_keyword_matches.add("grpc")


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
