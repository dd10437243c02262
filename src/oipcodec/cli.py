"""The ``oipcodec`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from oipcodec import __version__, kernels


def _info(_: argparse.Namespace) -> int:
    import numpy as np

    print(f"oipcodec {__version__}")
    print(f"kernels: {kernels.IMPLEMENTATION} (native built: {kernels.native_available()})")
    print(f"kernel families: {', '.join(kernels.FAMILIES)}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oipcodec", description="Native tensor codec for the Open Inference Protocol."
    )
    parser.add_argument("--version", action="version", version=f"oipcodec {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    info = commands.add_parser("info", help="show the version and which kernels are in use")
    info.set_defaults(run=_info)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    result: int = args.run(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
