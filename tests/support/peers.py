"""Importing a peer package (kserve, mlserver, tritonclient, ...) that a test module needs.

Without the peer the module is skipped, as ``pytest.importorskip`` does; but a peer named in
``OIPCODEC_REQUIRE_PEERS`` (a comma-separated list of top-level package names, set by .ci/run
in the environments that install the ``integration`` extras) must import, so that a broken
install fails the run instead of silently skipping the adapter tests.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType

import pytest

REQUIRED = frozenset(
    name.strip() for name in os.environ.get("OIPCODEC_REQUIRE_PEERS", "").split(",") if name.strip()
)


def require_peer(module: str) -> ModuleType:
    """Import ``module`` (dotted names allowed); skip the calling test module without it,
    unless its top-level package is required, where the ImportError propagates."""
    if module.split(".")[0] in REQUIRED:
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed")


def require_kserve() -> ModuleType:
    """``kserve`` (as :func:`require_peer`), its generated ``inference.*`` protobuf module
    loaded into a private descriptor pool first.

    KServe and tritonclient both register ``inference.*`` in protobuf's default pool, so
    whichever is imported second fails with a TypeError in one process (one pytest run). Loaded
    privately, KServe's module has the same classes and wire format and coexists with
    tritonclient's. Real deployments import only one of them and need none of this.
    """
    name = "kserve.protocol.grpc.grpc_predict_v2_pb2"
    if name not in sys.modules:
        spec = importlib.util.find_spec("kserve")
        if spec is not None and spec.submodule_search_locations:
            path = os.path.join(
                spec.submodule_search_locations[0], "protocol", "grpc", "grpc_predict_v2_pb2.py"
            )
            with open(path, encoding="utf-8") as file:
                source = file.read()
            module = ModuleType(name)
            module.__file__ = path
            exec(  # KServe's own generated module, with one pool swapped
                compile(
                    source.replace(
                        "_descriptor_pool.Default().AddSerializedFile(",
                        "_descriptor_pool.DescriptorPool().AddSerializedFile(",
                    ),
                    path,
                    "exec",
                ),
                module.__dict__,
            )
            sys.modules[name] = module
    return require_peer("kserve")
