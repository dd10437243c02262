"""Run a KServe server script on 127.0.0.1 only, for the tests that run a documented script as
written: ``python kserve_loopback.py SCRIPT [KServe's arguments]`` runs SCRIPT as ``__main__``
with those arguments (KServe reads them when ``kserve.model_server`` is imported), after
:func:`kserve_models_stock._loopback_only` narrowed KServe's listen address (KServe itself
listens on every interface)."""

from __future__ import annotations

import runpy
import sys


def main() -> None:
    script, *arguments = sys.argv[1:]
    sys.argv = [script, *arguments]  # before kserve is imported: it parses them then
    from kserve_models_stock import _loopback_only

    _loopback_only()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
