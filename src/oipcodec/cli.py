"""The ``oipcodec`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oipcodec import __version__, kernels

if TYPE_CHECKING:
    from oipcodec.server import ServerConfig


def _info(_: argparse.Namespace) -> int:
    import numpy as np

    print(f"oipcodec {__version__}")
    print(f"kernels: {kernels.IMPLEMENTATION} (native built: {kernels.native_available()})")
    print(f"kernel families: {', '.join(kernels.FAMILIES)}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    try:
        from oipcodec.server import ServerConfig
    except ImportError as exc:
        print(f"oipcodec serve needs the server extra: pip install 'oipcodec[server]' ({exc})")
        return 2
    from oipcodec.limits import Limits

    def port(value: int) -> int | None:
        return None if value < 0 else value

    size = args.max_body_bytes
    try:
        config = ServerConfig(
            host=args.host,
            http_port=port(args.http_port),
            grpc_port=port(args.grpc_port),
            workers=args.workers,
            model_module=args.model_module,
            **_repository_settings(args),
            limits=Limits(max_body_bytes=size, max_decompressed_bytes=size),
            access_log=args.access_log,
            log_level=args.log_level,
            malloc_top_pad=args.malloc_top_pad << 20,
            http_protocol=args.http_protocol,
            grpc_impl=args.grpc_impl,
            codec_threads=args.codec_threads,
            body_budget=None if args.body_budget is None else args.body_budget << 20,
            max_queued_requests=args.max_queued_requests,
            overload_retry_after=args.overload_retry_after,
            shared_memory=None if args.shared_memory == "none" else args.shared_memory,
            shared_memory_prefix=args.shared_memory_prefix,
            max_shm_regions=args.max_shm_regions,
            shared_memory_budget=args.shared_memory_budget << 20,
            metrics=not args.no_metrics,
            metrics_port=args.metrics_port,
            graphpipe_port=args.graphpipe_port,
            graphpipe_model=args.graphpipe_model,
            trace=args.trace,
            **({"server_name": args.server_name} if args.server_name else {}),
        )
    except (TypeError, ValueError) as exc:
        print(f"oipcodec serve: {exc}", file=sys.stderr)
        return 2
    return _serve_checked(config)


def _serve_checked(config: ServerConfig) -> int:
    """Serve ``config`` after the checks that can fail fast, each answered with one line on
    stderr and exit status 2: the ports free, then the model module imported and its models
    made (the serving processes import it again, workers > 1)."""
    from oipcodec.server.runtime import check_ports, load_model_module, serve

    try:
        check_ports(config)
    except OSError as exc:
        print(f"oipcodec serve: {exc.strerror or exc}", file=sys.stderr)
        return 2
    models = None
    if config.model_module is not None:
        # Modules in the working directory are found, as `python -m` and uvicorn find them.
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            models = load_model_module(config.model_module)
        except ValueError as exc:
            print(f"oipcodec serve: {exc}", file=sys.stderr)
            return 2
        if config.workers == 1:  # served as they are, not imported twice
            config = config.replace(model_module=None)
        else:
            models = None
    return serve(models, config=config)


def _repository_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The model repository's settings of ``oipcodec serve`` (docs/model-repository.md)."""
    if args.model_repository is None:
        if args.model_control != "none" or args.load_model or args.allow_repository_symlinks:
            raise ValueError(
                "--model-control, --load-model and --allow-repository-symlinks need "
                "--model-repository"
            )
        return {}
    if args.model_module is not None:
        raise ValueError(
            "--model-module and --model-repository cannot be used together: put the "
            "module's models into folders of the repository"
        )
    if args.load_model and args.model_control != "explicit":
        raise ValueError(
            "--load-model needs --model-control explicit (with none, every model of the "
            "repository is loaded at start)"
        )
    return {
        "model_repository": os.path.abspath(args.model_repository),
        "model_control": args.model_control,
        "load_models": tuple(args.load_model or ()),
        "allow_repository_symlinks": args.allow_repository_symlinks,
    }


def _add_repository_flags(serve: argparse.ArgumentParser) -> None:
    """``--model-repository``, ``--model-control``, ``--load-model`` and
    ``--allow-repository-symlinks`` of ``oipcodec serve``."""
    flag = serve.add_argument
    flag(
        "--model-repository",
        metavar="DIR",
        help="serve the models of a model repository: each folder of DIR is a model "
        "(DIR/NAME/[VERSION/]model.py, optional DIR/NAME/config.json or config.pbtxt); "
        "not with --model-module",
    )
    flag(
        "--model-control",
        choices=["none", "explicit"],  # server.repository.MODEL_CONTROL_MODES (tested)
        default="none",
        help="Triton's model control: none loads every model at start and refuses "
        "load/unload requests; explicit loads the --load-model ones and takes load/unload "
        "requests (default: %(default)s)",
    )
    flag(
        "--load-model",
        action="append",
        metavar="NAME",
        help="with --model-control explicit: a model to load at start (repeatable; '*': all)",
    )
    flag(
        "--allow-repository-symlinks",
        action="store_true",
        help="serve model folders that are symlinks leading out of the repository (refused "
        "by default: the repository is then all the code the server runs)",
    )


def _add_serve(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser(
        "serve",
        help="run an OIP server (REST + gRPC); without --model-module, the demo models",
        description="Serve models over the Open Inference Protocol: REST (uvicorn) and gRPC. "
        "Without --model-module it serves the demo models simple, simple_string, identity, "
        "add_sub, simple_identity, simple_int8, and the decoupled square_int32 and repeat_int32 "
        "(docs/streaming.md). The same models answer the TensorRT "
        "Inference Server v1 API on the same ports: GET /api/health/live, /api/health/ready, "
        "/api/status[/<model>]; POST /api/infer/<model>[/<version>], "
        "/api/modelcontrol/load/<model>, /api/modelcontrol/unload/<model>; and the gRPC "
        "service nvidia.inferenceserver.GRPCService (docs/v1.md). Stop with Ctrl+C or SIGTERM.",
    )
    add = serve.add_argument
    add("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    add("--http-port", type=int, default=8000, help="REST port, -1: no REST (default: 8000)")
    add("--grpc-port", type=int, default=8001, help="gRPC port, -1: no gRPC (default: 8001)")
    add("--model-module", metavar="MODULE", help="import MODULE and serve its MODELS")
    _add_repository_flags(serve)
    add(
        "--graphpipe-port",
        type=int,
        metavar="PORT",
        help="also serve --graphpipe-model over GraphPipe at / on this port (0: a free one); "
        "every model is at /graphpipe/<model> on the REST port anyway",
    )
    add("--graphpipe-model", metavar="NAME", help="the model --graphpipe-port serves")
    add("--workers", type=int, default=1, help="processes sharing the ports (SO_REUSEPORT)")
    add(
        "--max-body-bytes",
        type=int,
        default=64 * 1024 * 1024,
        help="largest request body, inflated size too (default: 64 MB, as Triton)",
    )
    add(
        "--malloc-top-pad",
        type=_non_negative,
        default=64,
        metavar="MIB",
        help="MiB of freed memory each glibc malloc arena keeps for the next request, "
        "so large bodies do not fault in fresh pages; 0: leave malloc alone (default: 64)",
    )
    add(
        "--http-protocol",
        choices=["oipcodec", "native", "httptools", "h11"],  # server.HTTP_PROTOCOLS (tested)
        default="native",
        help="HTTP/1.1 implementation under uvicorn: the native front end (small inference "
        "requests and probes answered in C, everything else by oipcodec's; oipcodec's where "
        "the kernels are pure), oipcodec's (a request body received into one buffer) or one "
        "of uvicorn's (default: %(default)s)",
    )
    add(
        "--grpc-impl",
        choices=["grpcio", "native"],  # server.GRPC_IMPLS (tested)
        default="grpcio",
        help="gRPC server: grpcio's asyncio server or oipcodec's native one (HTTP/2 in C, "
        "h2c only; needs the compiled kernels) (default: %(default)s)",
    )
    add(
        "--codec-threads",
        type=_positive,
        metavar="N",
        help="threads per process that parse and write large JSON bodies (default: the CPUs "
        "this process may use, divided among the workers)",
    )
    add(
        "--body-budget",
        type=_non_negative,
        metavar="MIB",
        help="MiB of request-body buffers a process may hold for bodies still arriving; "
        "over it, bodies are received in pieces as they come (default: 4 times "
        "--max-body-bytes)",
    )
    add(
        "--max-queued-requests",
        type=_non_negative,
        default=0,
        metavar="N",
        help="the most requests a model without dynamic batching holds at once, running or "
        "waiting; more are refused as a full queue is (default: 0, no limit)",
    )
    add(
        "--overload-retry-after",
        type=_non_negative,
        metavar="SECONDS",
        help="answer a request refused for a full queue or a queue timeout with HTTP 429 and "
        "Retry-After: SECONDS instead of Triton's 503 (gRPC: UNAVAILABLE either way)",
    )
    add(
        "--shared-memory",
        choices=["none", "system"],  # server.config.SHARED_MEMORY_KINDS and "none" (tested)
        default="none",
        help="enable the system shared-memory extension: clients on this host pass tensors "
        "in POSIX shared memory regions they register (default: %(default)s, off)",
    )
    add(
        "--shared-memory-prefix",
        metavar="PREFIX",
        help="shared memory: refuse to register an object whose key does not start with "
        "PREFIX (e.g. /inference-); without it any object the server's user can open may be "
        "registered, read and written by clients, as with Triton (default: no prefix)",
    )
    add(
        "--max-shm-regions",
        type=_positive,
        metavar="N",
        default=256,  # server.regions.DEFAULT_MAX_SHM_REGIONS (tested)
        help="shared memory: the most regions registered at once (default: %(default)s)",
    )
    add(
        "--shared-memory-budget",
        type=_positive,
        metavar="MIB",
        default=1024,  # server.regions.DEFAULT_MAX_SHM_BYTES in MiB (tested)
        help="shared memory: MiB all registered regions may span together, and the most the "
        "requests in flight may read from them together (default: %(default)s)",
    )
    add(
        "--metrics-port",
        type=_non_negative,
        metavar="PORT",
        help="also serve GET /metrics (Prometheus) on PORT, as Triton's 8002 (default: only "
        "at /metrics on the REST port)",
    )
    add(
        "--no-metrics",
        action="store_true",
        help="count no inference statistics: no /metrics, statistics endpoints unavailable",
    )
    add(
        "--server-name",
        metavar="NAME",
        help="the server's name in the server metadata (default: oipcodec; Triton's example "
        "clients expect 'triton')",
    )
    add(
        "--trace",
        action="store_true",
        help="OpenTelemetry spans of the inference requests, sent over OTLP as the OTEL_* "
        "variables say, and Triton's trace extension (needs oipcodec[tracing])",
    )
    add("--access-log", action="store_true", help="log every HTTP request")
    add("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.set_defaults(run=_serve)


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _above_zero(kind: type, items: str, above: str) -> Callable[[str], list[Any]]:
    """A parser of a comma-separated list of numbers of ``kind``, each above 0; ``items`` and
    ``above`` name them in its two errors (not numbers; not above 0)."""

    def parse(text: str) -> list[Any]:
        try:
            values = [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {items} separated by commas: {text!r}"
            ) from None
        if not values or any(v <= 0 for v in values):
            raise argparse.ArgumentTypeError(f"expected {above}: {text!r}")
        return values

    return parse


_int_list = _above_zero(int, "integers", "positive integers")
_rates = _above_zero(float, "requests/s", "request rates above 0")


def _concurrency(text: str) -> list[int]:
    """``--concurrency``: a list (1,8), or START:END[:FACTOR], multiplying by FACTOR (default
    2) from START up to END: 1:64 is 1,2,4,...,64."""
    if ":" not in text:
        return _int_list(text)
    parts = text.split(":")
    try:
        start, end, factor = (int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) > 2 else 2)
    except (ValueError, IndexError):
        raise argparse.ArgumentTypeError(f"expected START:END[:FACTOR]: {text!r}") from None
    if len(parts) > 3 or start < 1 or end < start or factor < 2:
        raise argparse.ArgumentTypeError(
            f"expected 1 <= START <= END and FACTOR >= 2 in START:END[:FACTOR]: {text!r}"
        )
    values = [start]
    while values[-1] * factor <= end:
        values.append(values[-1] * factor)
    return values


def _range(kind: type) -> Callable[[str], list[Any]]:
    """perf_analyzer's ``--concurrency-range`` / ``--request-rate-range``: START[:END[:STEP]],
    END and STEP default to START and 1; the levels go up by STEP (linear, as perf_analyzer)."""

    def parse(text: str) -> list[Any]:
        parts = text.split(":")
        try:
            start = kind(parts[0])
            end = kind(parts[1]) if len(parts) > 1 else start
            step = kind(parts[2]) if len(parts) > 2 else kind(1)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected START[:END[:STEP]]: {text!r}") from None
        if len(parts) > 3 or start <= 0 or end < start or step <= 0:
            raise argparse.ArgumentTypeError(
                f"expected 0 < START <= END and STEP > 0 in START:END:STEP: {text!r}"
            )
        values: list[Any] = []
        value = start
        while value <= end * (1 + 1e-9) and len(values) < 1000:
            values.append(value)
            value = value + step
        return values

    return parse


def _names(choices: Iterable[str]) -> Callable[[str], list[str]]:
    """An argparse type: names separated by commas, each one of ``choices``."""
    allowed = list(choices)

    def parse(text: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in allowed]
        if unknown or not names:
            raise argparse.ArgumentTypeError(
                f"unknown {unknown or text!r}; choose from {', '.join(allowed)}"
            )
        return names

    return parse


def _bench(args: argparse.Namespace) -> int:
    try:
        from oipcodec.bench import PATHS, PAYLOADS, BenchOptions, custom_payload, run
        from oipcodec.bench.connection import from_arguments
        from oipcodec.bench.runner import BenchError, failed_paths
        from oipcodec.bench.workload import WorkloadError, parse_shape
    except ImportError as exc:
        print(f"oipcodec bench needs the client and server extras: "
              f"pip install 'oipcodec[server,client]' ({exc})", file=sys.stderr)  # fmt: skip
        return 2
    options = BenchOptions.quick_defaults() if args.quick else BenchOptions()
    if not args.quick:
        options.payloads = list(PAYLOADS.values())
    if args.payload:
        unknown = [p for p in args.payload if p not in PAYLOADS]
        if unknown:
            print(f"unknown payload {unknown}; choose from {', '.join(PAYLOADS)}", file=sys.stderr)
            return 2
        options.payloads = [PAYLOADS[p] for p in args.payload]
    # --shape NAME:dims sizes a model's input (perf_analyzer's form); --shape dims (with
    # --datatype) is a payload of your own for the identity model.
    named = [s for s in args.shape or () if ":" in s]
    plain = [s for s in args.shape or () if ":" not in s]
    try:
        options.shapes = {name: list(dims) for name, dims in map(parse_shape, named)}
        if len(plain) > 1:
            raise ValueError("--shape without a NAME: is your own payload's; give it once")
        if plain or args.datatype is not None:
            custom = custom_payload(plain[0] if plain else "1,16", args.datatype or "FP32")
            options.payloads = ([] if not args.payload else options.payloads) + [custom]
    except ValueError as exc:
        print(f"oipcodec bench: {exc}", file=sys.stderr)
        return 2
    if args.model_module and (args.url or args.grpc_target):
        print("oipcodec bench: --model-module is for the embedded server; the server at "
              "--url/--grpc-target serves its own models", file=sys.stderr)  # fmt: skip
        return 2
    options.model_module = args.model_module
    if (args.server_http_protocol or args.server_grpc_impl) and (args.url or args.grpc_target):
        print("oipcodec bench: --server-http-protocol and --server-grpc-impl are for the "
              "embedded server; the server at --url/--grpc-target runs its own front ends",
              file=sys.stderr)  # fmt: skip
        return 2
    options.server_http_protocol = args.server_http_protocol or options.server_http_protocol
    options.server_grpc_impl = args.server_grpc_impl or options.server_grpc_impl
    options.batch_size = args.batch_size
    options.input_data = args.input_data
    if args.streaming:
        from oipcodec.bench.stream_load import STREAM_PATHS

        if args.stream_responses < 0:
            print("oipcodec bench: --stream-responses cannot be negative", file=sys.stderr)
            return 2
        options.streaming, options.stream_responses = True, args.stream_responses
        paths = dict(STREAM_PATHS)
        # Only oipcodec's clients stream here: native unless asked (pure's kernels add
        # little to a stream's small JSON or protobuf messages).
        options.implementations = ["native"]
    else:
        paths = dict(PATHS)  # type: ignore[arg-type]
    if args.path:
        unknown = [p for p in args.path if p not in paths]
        if unknown:
            print(f"unknown path {unknown}; choose from {', '.join(paths)}", file=sys.stderr)
            return 2
        options.paths = args.path
    elif args.streaming:
        options.paths = list(paths)
    if args.implementation:
        options.implementations = args.implementation
    elif args.no_peers:
        options.implementations = ["native", "pure"]
    if args.concurrency or args.concurrency_range:
        options.concurrency = args.concurrency or args.concurrency_range
    rates = args.request_rate or args.request_rate_range
    if (
        sum(x is not None for x in (rates, args.request_intervals))
        + bool(args.concurrency or args.concurrency_range)
        > 1
    ):
        print("oipcodec bench: give one load: --concurrency[-range], --request-rate[-range] "
              "or --request-intervals", file=sys.stderr)  # fmt: skip
        return 2
    if rates:
        options.request_rates = rates
    options.request_distribution = args.request_distribution
    if args.request_intervals is not None:
        from oipcodec.bench.load import read_intervals

        try:
            read_intervals(args.request_intervals)
        except (OSError, ValueError) as exc:
            print(f"oipcodec bench: --request-intervals: {exc}", file=sys.stderr)
            return 2
        options.request_intervals = args.request_intervals
    if args.duration is not None:
        options.duration = args.duration
    if args.measurement_interval is not None:
        options.duration = args.measurement_interval / 1e3
    for name in (
        "measurement_mode",
        "measurement_request_count",
        "stability_percentage",
        "max_trials",
        "latency_threshold",
        "max_threads",
        "csv",
        "profile_export",
        "load_processes",
        "sender",
        "rounds",
    ):
        if getattr(args, name) is not None:
            setattr(options, name, getattr(args, name))  # fmt: skip
    for name in ("max_trials", "measurement_request_count", "max_threads", "load_processes",
                 "rounds"):  # fmt: skip
        if getattr(args, name) is not None and getattr(args, name) < 1:
            print(f"oipcodec bench: --{name.replace('_', '-')} must be at least 1",
                  file=sys.stderr)  # fmt: skip
            return 2
    if args.streaming and (options.rounds > 1 or args.slo or options.mode() != "concurrency"):
        print("oipcodec bench: --streaming measures each row once in closed loop, without "
              "--rounds, --slo, --request-rate or --request-intervals",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.percentile is not None:
        options.percentile = None if args.percentile == "avg" else float(args.percentile)
    if args.warmup_request_count is not None:
        options.warmup_requests = args.warmup_request_count
    options.wide = args.wide
    if args.slo is not None:
        from oipcodec.bench.compare import parse_slo

        try:
            parse_slo(args.slo)
        except ValueError as exc:
            print(f"oipcodec bench: {exc}", file=sys.stderr)
            return 2
        options.slo = args.slo
    options.url = args.url
    options.grpc_target = args.grpc_target
    try:
        options.connection = from_arguments(args).as_dict()
    except ValueError as exc:
        print(f"oipcodec bench: {exc}", file=sys.stderr)
        return 2
    if (args.url or args.grpc_target) and not args.path:
        options.paths = [
            name for name, p in paths.items()
            if (p.protocol == "rest" and args.url) or (p.protocol == "grpc" and args.grpc_target)
        ]  # fmt: skip
    options.model = args.model or ("square_int32" if args.streaming else "identity")
    options.timeout = args.timeout
    options.output_dir = args.output_dir
    options.chart = not args.no_chart
    try:
        results = run(options)
    except (BenchError, WorkloadError) as exc:
        print(f"oipcodec bench: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    # As perf_analyzer does: a run that measured nothing on a path is a failure.
    failure = failed_paths(results)
    if failure is not None:
        print(f"oipcodec bench: {failure}", file=sys.stderr)
        return 2
    if results.get("slo", {}).get("missed"):
        missed = results["slo"]["missed"]
        print(f"oipcodec bench: SLO {results['slo']['slo']} missed on {', '.join(missed)}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


def _bench_compare(argv: Sequence[str]) -> int:
    """``oipcodec bench compare BASE.json NEW.json``: 0, 1 on a regression (or a missed
    --slo), 2 when a file cannot be read."""
    parser = _Parser(
        prog="oipcodec bench compare",
        description="Compare two results.json of oipcodec bench row by row: each figure's "
        "change and whether it is significant (the 95%% intervals apart). Exits 1 on a "
        "regression: a significant drop of requests/s, or rise of CPU per request, past "
        "--threshold.",
    )
    parser.add_argument("base", metavar="BASE.json")
    parser.add_argument("new", metavar="NEW.json")
    parser.add_argument("--threshold", type=float, default=5.0, metavar="PERCENT",
                        help="the change a regression must pass, %% (default 5)")  # fmt: skip
    parser.add_argument("--chart", metavar="FILE",
                        help="write a bar chart of the changes (needs matplotlib)")  # fmt: skip
    parser.add_argument("--slo", metavar="BOUND[,BOUND]",
                        help='also gate NEW on an SLO, e.g. "p99<0.01s" (exit 1 when a row '
                        "meets it at no level)")  # fmt: skip
    args = parser.parse_args(argv)
    from oipcodec.bench.compare import (
        compare,
        goodput,
        parse_slo,
        read_results,
        render_comparison,
        render_goodput,
        render_servers,
        write_comparison_chart,
    )
    from oipcodec.errors import BenchError

    try:
        slos = parse_slo(args.slo) if args.slo else None
        base, new = read_results(args.base), read_results(args.new)
    except (BenchError, ValueError) as exc:
        print(f"oipcodec bench compare: {exc}", file=sys.stderr)
        return 2
    threshold = args.threshold / 100
    rows = compare(base, new, threshold)
    servers = render_servers(base, new)
    if servers is not None:
        print(servers)
    print(render_comparison(rows, threshold))
    status = 1 if any(row["regression"] for row in rows) else 0
    if args.chart:
        if write_comparison_chart(rows, Path(args.chart)):
            print(f"wrote {args.chart}")
        else:
            print("no chart: matplotlib is not installed (pip install matplotlib), or no row "
                  "is in both files")  # fmt: skip
    if slos is not None:
        report = goodput(new, slos)
        print("\n".join(render_goodput(report)))
        status = 1 if report["missed"] else status
    return status


def _add_bench(commands: argparse._SubParsersAction) -> None:
    from oipcodec.bench.connection import add_arguments as add_connection_arguments
    from oipcodec.bench.encoding import PATHS
    from oipcodec.bench.paths import IMPLEMENTATIONS
    from oipcodec.bench.payloads import PAYLOADS
    from oipcodec.bench.stream_load import STREAM_PATHS

    bench = commands.add_parser(
        "bench",
        help="measure every encoding path end to end (the main job: start with --quick)",
        description="Start the embedded server (or use --url/--grpc-target) and measure, for "
        "each payload x encoding path x client implementation, requests/s, MB/s and latency "
        "percentiles at a few concurrency levels, plus the codec-only cost per request. "
        "Peers, where installed: tritonclient (its client codec, against the server), and "
        "KServe and MLServer (their server codec: decode the request, encode the identity "
        "answer, timed in-process; requests/s only when --url/--grpc-target point at such a "
        "server); a path a peer cannot take is listed as not supported, with the reason. "
        "Prints a table, writes results.json and throughput.png to --output-dir.",
    )
    add = bench.add_argument
    add("--quick", action="store_true",
        help="about a minute: the small and tokens payloads, concurrency 8 only, 3 rounds "
        "of two short windows a row, the implementations taking turns A B, B A, A B "
        "(--rounds 3 --measurement-interval 100 --max-trials 2)")  # fmt: skip
    add("--payload", action="extend", type=_names(PAYLOADS), metavar="NAME[,NAME]",
        help=f"payloads to measure (repeatable, or a,b): {', '.join(PAYLOADS)}")  # fmt: skip
    add("--shape", action="append", metavar="[NAME:]DIMS",
        help="NAME:d1,d2,... sets the shape of the --model's input NAME, for its -1 "
        "dimensions (repeatable; perf_analyzer's form; for a batching model without the "
        "batch dimension); without NAME: your own payload's shape for the identity model, "
        "e.g. 4,128 (with --datatype)")  # fmt: skip
    add("--datatype", help="your own payload's OIP datatype, e.g. FP16 (with --shape)")
    add("--path", action="extend", type=_names({**PATHS, **STREAM_PATHS}), metavar="PATH[,PATH]",
        help=f"encoding paths to measure (repeatable, or a,b): {', '.join(PATHS)}; with "
        f"--streaming: {', '.join(STREAM_PATHS)}")  # fmt: skip
    add("--streaming", action="store_true",
        help="the streaming workload: closed-loop streams of a model answering many "
        "responses (default --model square_int32) over REST generate_stream (SSE) and gRPC "
        "ModelStreamInfer: time to first response, inter-response latency, responses/s per "
        "stream and per server, stream latency, CPU per response (docs/benchmarks.md)")  # fmt: skip
    add("--stream-responses", type=int, default=64, metavar="N",
        help="with --streaming: the responses each stream asks for (square_int32's IN=N, "
        "repeat_int32's N elements; default 64)")  # fmt: skip
    # Lists as --concurrency takes them (a,b), or repeated: the two spellings people try.
    add("--implementation", action="extend", type=_names(IMPLEMENTATIONS), metavar="IMPL[,IMPL]",
        help=f"implementations (repeatable, or a,b): {', '.join(IMPLEMENTATIONS)} "
        "(default: all installed)")  # fmt: skip
    add("--no-peers", action="store_true", help="oipcodec native and pure only")
    load = bench.add_argument_group(
        "load and measurement (perf_analyzer's names; one load mode per run)"
    )
    load.add_argument("--concurrency", type=_concurrency, metavar="N,N|START:END[:FACTOR]",
        help="closed-loop levels: a list, e.g. 1,8 (the default; --quick: 8), or "
        "START:END[:FACTOR] multiplying by FACTOR (default 2): 1:64 is 1,2,4,...,64")  # fmt: skip
    load.add_argument("--concurrency-range", type=_range(int), metavar="START:END:STEP",
        help="closed-loop levels as perf_analyzer takes them: START to END by STEP "
        "(linear: 1:64:2 is 1,3,5,...)")  # fmt: skip
    load.add_argument("--request-rate", type=_rates, metavar="R[,R]",
        help="open loop at these requests/s: each request is due at its scheduled time "
        "and its latency counts from then, so a server that falls behind shows its "
        "queueing delay")  # fmt: skip
    load.add_argument("--request-rate-range", type=_range(float), metavar="START:END:STEP",
        help="open-loop rates as perf_analyzer takes them (linear)")  # fmt: skip
    load.add_argument("--request-distribution", choices=("constant", "poisson"),
        default="constant",
        help="open loop: the gaps between due times (default constant)")  # fmt: skip
    load.add_argument("--request-intervals", metavar="FILE",
        help="open loop at the gaps in FILE: one interval in microseconds a line, "
        "repeated (perf_analyzer's form)")  # fmt: skip
    load.add_argument("--max-threads", type=int, metavar="N",
        help="open loop: threads that send (default 16); a request due while all are "
        "busy waits, and its latency counts the wait")  # fmt: skip
    load.add_argument("--load-processes", type=int, metavar="N",
        help="processes that send, each with its own GIL, the threads spread over them "
        "(default: one per 16 threads, at most half the CPUs); a window where one used a "
        "whole core is flagged: the generator, not the server, was the limit")  # fmt: skip
    load.add_argument("--sender", choices=("native", "python", "client"),
        help="what loads the REST and gRPC rows of native and pure: the native load "
        "generator (default where built; HTTP/1.1, and HTTP/2 for gRPC), its Python twin "
        "(for gRPC: grpcio's channel), or the rows' own Python clients; tritonclient, v1 and "
        "TLS rows always use their clients")  # fmt: skip
    load.add_argument("--latency-threshold", type=float, metavar="MS",
        help="stop the sweep after the first level whose p99 latency (or --percentile's) "
        "is above MS")  # fmt: skip
    load.add_argument("--measurement-interval", type=float, metavar="MS",
        help="time window length, ms (default 1000; --quick 100)")  # fmt: skip
    load.add_argument("--duration", type=float, metavar="S",
        help="the same in seconds (the older spelling)")  # fmt: skip
    load.add_argument("--measurement-mode", choices=("time_windows", "count_windows"),
        help="windows of --measurement-interval, or of --measurement-request-count "
        "answers (default time_windows)")  # fmt: skip
    load.add_argument("--measurement-request-count", type=int, metavar="N",
        help="answers per count window (default 50)")  # fmt: skip
    load.add_argument("--stability-percentage", type=float, metavar="P",
        help="a level is stable when its last 3 windows' req/s and latency are within "
        "P%% of each other (max/min; default 10)")  # fmt: skip
    load.add_argument("--max-trials", type=int, metavar="N",
        help="windows at most per level before it is reported as never stable "
        "(default 10; --quick 2; below 3, stability is not checked)")  # fmt: skip
    load.add_argument("--rounds", type=int, metavar="N",
        help="measure every row N times, the implementations taking turns (A B C, C B A, ...), and "
        "report the medians with 95%% bootstrap intervals; verdicts (native against pure, "
        "best) only where the intervals part (default 1, --quick 3; one round takes its "
        "intervals from its windows)")  # fmt: skip
    load.add_argument("--percentile", choices=("50", "90", "95", "99", "avg"),
        help="the latency that decides stability (default avg, as perf_analyzer) and that "
        "--latency-threshold compares (default p99)")  # fmt: skip
    load.add_argument("--warmup-request-count", type=int, metavar="N",
        help="answers per level before the first window (default: one per thread)")  # fmt: skip
    out = bench.add_argument_group("output")
    out.add_argument("--csv", "-f", metavar="FILE",
        help="write a CSV in perf_analyzer's -f layout (its --verbose-csv columns, times in "
        "us), oipcodec's columns appended")  # fmt: skip
    out.add_argument("--profile-export", metavar="FILE",
        help="write every measured request's send and answer times (ns) in "
        "perf_analyzer's profile-export JSON")  # fmt: skip
    out.add_argument("--slo", metavar="BOUND[,BOUND]",
        help='a latency SLO, e.g. "p99<0.01s" (p50/p90/p95/p99/avg/max, < or <=, us/ms/s): '
        "each row's goodput (req/s of the highest level meeting it) is printed and kept in "
        "results.json; exit 1 when a row meets it at no level")  # fmt: skip
    out.add_argument("--wide", action="store_true",
        help="the table's codec columns too (wire kB, client and server codec us)")  # fmt: skip
    add("--url", help="measure this OIP REST server instead of starting one")
    add("--grpc-target", help="measure this OIP gRPC server (host:port) instead")
    add("--model",
        help="model to call (default: identity; with --streaming, square_int32). A model "
        "that declares its inputs gets requests generated from its metadata (random values "
        "of its datatypes and shapes; "
        "--payload is not used), and each answer must hold its declared outputs; a model "
        "that declares none must echo the payloads")  # fmt: skip
    add("--model-module", metavar="MODULE",
        help="the embedded server serves MODULE's MODELS instead of the demo models (as "
        "oipcodec serve --model-module), so that --model can name one of them")  # fmt: skip
    add("--server-http-protocol", choices=["oipcodec", "native", "httptools", "h11"],
        help="the embedded server's HTTP/1.1 implementation, as oipcodec serve "
        "--http-protocol (default: native; pure's server runs oipcodec's in place of "
        "native: the native front end is native code)")  # fmt: skip
    add("--server-grpc-impl", choices=["grpcio", "native"],
        help="the embedded server's gRPC server, as oipcodec serve --grpc-impl (default: "
        "grpcio; pure's server runs grpcio in place of native)")  # fmt: skip
    add("--batch-size", "-b", type=int, default=1, metavar="N",
        help="a batching --model's batch dimension (default 1)")  # fmt: skip
    add("--input-data", metavar="FILE",
        help="the --model's input values from a JSON file in perf_analyzer's form: "
        '{"data": [{"INPUT0": [...], "INPUT1": {"content": [...], "shape": [...]}}, ...]} '
        "(each entry a request, sent round robin)")  # fmt: skip
    add("--timeout", type=float, default=60.0, help="seconds per request (default: 60)")
    add("--output-dir", default="oipcodec-bench",
        help="where results.json and throughput.png go (default: ./oipcodec-bench)")  # fmt: skip
    add("--no-chart", action="store_true", help="do not write throughput.png")
    add_connection_arguments(bench)
    bench.set_defaults(run=_bench)


class _Parser(argparse.ArgumentParser):
    """argparse with a two-line error (what was wrong, where the options are) instead of
    the whole usage: bench's usage alone is dozens of lines above the one that matters."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message}\n({self.prog} --help lists the options)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="oipcodec", description="Native tensor codec for the Open Inference Protocol."
    )
    parser.add_argument("--version", action="version", version=f"oipcodec {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    info = commands.add_parser("info", help="show the version and which kernels are in use")
    info.set_defaults(run=_info)
    _add_serve(commands)
    _add_bench(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:2] == ["bench", "compare"]:
        return _bench_compare(arguments[2:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    result: int = args.run(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
