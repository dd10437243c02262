"""Until the native connection is merged: its GrpcAbort, so the Python half can be tested."""

import importlib.machinery
import importlib.util
import sys
import types

if importlib.util.find_spec("oipcodec.server.h2._session") is None:

    class GrpcAbort(Exception):
        def __init__(self, code: int, details: str) -> None:
            super().__init__(code, details)
            self.code, self.details = code, details

    module = types.ModuleType("oipcodec.server.h2._session")
    module.__spec__ = importlib.machinery.ModuleSpec(module.__name__, None)
    module.GrpcAbort = GrpcAbort  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
