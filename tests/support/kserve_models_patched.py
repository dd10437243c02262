"""The ModelServer of tests/support/kserve_models_stock.py (the same ``Identity`` model, KServe's
public API only) with the one call of docs/compat.md's KServe recipe added:
``oipcodec.compat.kserve.patch_dataplane(server.dataplane)`` before ``start``. The two run side
by side in tests/compat/test_compat_kserve_route.py and benchmarks/load/kserve_adapter.py.

Run as ``python tests/support/kserve_models_patched.py --http_port P --grpc_port Q``.
"""

from __future__ import annotations

import argparse

import kserve
from kserve.model_server import parser as kserve_parser
from kserve_models_stock import Identity, _loopback_only

from oipcodec.compat.kserve import patch_dataplane


def main() -> None:
    args, _ = argparse.ArgumentParser(parents=[kserve_parser]).parse_known_args()
    _loopback_only()
    server = kserve.ModelServer(
        http_port=args.http_port, grpc_port=args.grpc_port, workers=1, enable_docs_url=False
    )
    patch_dataplane(server.dataplane)
    server.start([Identity("identity")])


if __name__ == "__main__":
    main()
