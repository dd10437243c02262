"""The ModelServer of tests/support/kserve_models_stock.py with the guards a host puts on KServe's
FastAPI app before ``start``: an app dependency that refuses a POST without the header
``X-API-Key: secret`` (401; health and readiness probes carry no key and stay open) and a
middleware that refuses an infer request without ``X-Tenant`` (403). With ``--patched``, the one
call of docs/compat.md's KServe recipe is added. For tests/compat/test_compat_kserve_guards.py.

Run as ``python tests/support/kserve_models_guarded.py [--patched] --http_port P --grpc_port Q``.
"""

from __future__ import annotations

import argparse
from typing import Any

import kserve
from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from kserve.model_server import app
from kserve.model_server import parser as kserve_parser
from kserve_models_stock import Identity, _loopback_only

from oipcodec.compat.kserve import patch_dataplane

API_KEY = "secret"


async def api_key(request: Request) -> None:
    if request.method == "POST" and request.headers.get("x-api-key") != API_KEY:
        raise HTTPException(401, "an API key is required")


async def tenant(request: Request, call_next: Any) -> Any:
    if request.url.path.endswith("/infer") and "x-tenant" not in request.headers:
        return JSONResponse({"error": "no tenant"}, 403)
    return await call_next(request)


def main() -> None:
    parser = argparse.ArgumentParser(parents=[kserve_parser])
    parser.add_argument("--patched", action="store_true")
    args, _ = parser.parse_known_args()
    _loopback_only()
    app.router.dependencies.append(Depends(api_key))
    app.middleware("http")(tenant)
    server = kserve.ModelServer(
        http_port=args.http_port, grpc_port=args.grpc_port, workers=1, enable_docs_url=False
    )
    if args.patched:
        patch_dataplane(server.dataplane)
    server.start([Identity("identity")])


if __name__ == "__main__":
    main()
