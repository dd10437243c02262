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


def _serve(args: argparse.Namespace) -> int:
    try:
        from oipcodec.server import serve
    except ImportError as exc:
        print(f"oipcodec serve needs the server extra: pip install 'oipcodec[server]' ({exc})")
        return 2
    from oipcodec.limits import Limits

    def port(value: int) -> int | None:
        return None if value < 0 else value

    size = args.max_body_bytes
    return serve(
        host=args.host,
        http_port=port(args.http_port),
        grpc_port=port(args.grpc_port),
        workers=args.workers,
        model_module=args.model_module,
        limits=Limits(max_body_bytes=size, max_decompressed_bytes=size),
        access_log=args.access_log,
        log_level=args.log_level,
    )


def _add_serve(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser(
        "serve",
        help="run an OIP server (REST + gRPC); without --model-module, the demo models",
        description="Serve models over the Open Inference Protocol: REST (uvicorn) and gRPC. "
        "Without --model-module it serves the demo models simple, simple_string, identity "
        "and add_sub. Stop with Ctrl+C or SIGTERM.",
    )
    add = serve.add_argument
    add("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    add("--http-port", type=int, default=8000, help="REST port, -1: no REST (default: 8000)")
    add("--grpc-port", type=int, default=8001, help="gRPC port, -1: no gRPC (default: 8001)")
    add("--model-module", metavar="MODULE", help="import MODULE and serve its MODELS")
    add("--workers", type=int, default=1, help="processes sharing the ports (SO_REUSEPORT)")
    add(
        "--max-body-bytes",
        type=int,
        default=64 * 1024 * 1024,
        help="largest request body, inflated size too (default: 64 MB, as Triton)",
    )
    add("--access-log", action="store_true", help="log every HTTP request")
    add("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.set_defaults(run=_serve)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oipcodec", description="Native tensor codec for the Open Inference Protocol."
    )
    parser.add_argument("--version", action="version", version=f"oipcodec {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    info = commands.add_parser("info", help="show the version and which kernels are in use")
    info.set_defaults(run=_info)
    _add_serve(commands)
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
