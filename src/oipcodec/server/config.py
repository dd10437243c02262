"""The settings of a server run, in one place: :class:`ServerConfig`.

:func:`~oipcodec.server.serve`, :class:`~oipcodec.server.Server`,
:func:`oipcodec.testing.background` and ``oipcodec serve`` all take their settings from a
``ServerConfig``; their keyword arguments (``serve(http_port=9000)``) are its fields, which
override those of a ``config=`` given with them. A ``ServerConfig`` is checked when it is made,
so a wrong value is refused with a message naming the field before any process starts.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, TypedDict

from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.server.metadata import SERVER_NAME
from oipcodec.server.regions import DEFAULT_MAX_SHM_BYTES, DEFAULT_MAX_SHM_REGIONS, check_prefix
from oipcodec.server.repository import MODEL_CONTROL_MODES

__all__ = [
    "DEFAULT_MALLOC_TOP_PAD",
    "GRPC_IMPLS",
    "HTTP_PROTOCOLS",
    "SHARED_MEMORY_KINDS",
    "ServerConfig",
    "ServerSettings",
    "available_cpus",
]

#: What ``oipcodec serve`` and :func:`oipcodec.server.serve` set glibc's ``M_TOP_PAD`` to by
#: default, 64 MiB (oipcodec.server.runtime.malloc says why).
DEFAULT_MALLOC_TOP_PAD = 64 << 20

#: The HTTP/1.1 implementations the REST server can run on: oipcodec's own protocol for
#: uvicorn (server/http11/: a request body is received into one buffer), its native front end
#: (small inference requests and probes answered in C, the rest handed to oipcodec's), or
#: uvicorn's.
HTTP_PROTOCOLS = ("oipcodec", "native", "httptools", "h11")

#: The gRPC servers the gRPC port can run on: grpcio's asyncio server, or oipcodec's native
#: one (HTTP/2 in C on libnghttp2, server/h2/; every RPC of the grpcio one, over h2c only).
GRPC_IMPLS = ("grpcio", "native")

#: The shared-memory extensions a server can enable: ``"system"`` (POSIX shared memory,
#: docs/shared-memory.md); CUDA shared memory is answered as unsupported.
SHARED_MEMORY_KINDS = ("system",)

#: The log levels ``log_level`` takes (any case).
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

#: JSON text, or a copy out of shared memory, of this many bytes or more is worked in a codec
#: thread, never on the event loop: one request must not hold the loop the others share.
OFF_LOOP_BYTES = 1 << 20


@dataclass(frozen=True)
class ServerConfig:
    """How a server runs (not what it serves: the models are given beside it).

    Every field has the default of :func:`~oipcodec.server.serve` and ``oipcodec serve``.
    Make a variant with :meth:`replace`. Invalid values raise ``ValueError`` (``TypeError``
    for a value of the wrong type) naming the field.
    """

    host: str = "127.0.0.1"
    """The address to listen on (both protocols)."""
    http_port: int | None = 8000
    """The REST port; 0 picks a free one, ``None`` serves no REST."""
    grpc_port: int | None = 8001
    """The gRPC port; 0 picks a free one, ``None`` serves no gRPC."""
    workers: int = 1
    """Processes sharing the ports (SO_REUSEPORT), each with its own copy of the models."""
    model_module: str | None = None
    """A module whose ``MODELS`` (a list, or a function returning one) is served, in addition
    to the models given beside the config.
    """
    model_repository: str | None = None
    """A model repository on disk: each folder of it is a model (docs/model-repository.md).
    Not with ``model_module``, nor with models given beside the config.
    """
    model_control: str = "none"
    """Triton's model control mode for ``model_repository``: ``"none"`` (every model loaded
    at start; repository load and unload requests refused) or ``"explicit"`` (the models
    of ``load_models`` loaded at start; load and unload requests taken).
    """
    load_models: tuple[str, ...] = ()
    """The models an ``"explicit"`` ``model_control`` loads at start; ``"*"``: all of them."""
    allow_repository_symlinks: bool = False
    """Serve model folders (and their version folders and code) that are symlinks leading out
    of ``model_repository``; off, such a folder fails to load with a reason saying so
    (docs/model-repository.md, the trust model).
    """
    limits: Limits = DEFAULT_LIMITS
    """What a request may hold: ``limits.max_body_bytes`` is the largest request body (413) and
    gRPC message; ``limits.body_timeout_seconds`` bounds a stalled body (408).
    """
    access_log: bool = False
    """Log every HTTP request."""
    log_level: str | None = "info"
    """The logging level the server configures (one of :data:`LOG_LEVELS`); ``None`` leaves
    logging as the caller configured it.
    """
    malloc_top_pad: int = DEFAULT_MALLOC_TOP_PAD
    """Bytes of freed memory each glibc malloc arena of a serving process keeps for the next
    request (:func:`oipcodec.server.runtime.malloc.set_malloc_top_pad`); 0 leaves malloc alone.
    """
    http_protocol: str = "native"
    """The HTTP/1.1 implementation under uvicorn: one of :data:`HTTP_PROTOCOLS`; ``"native"``
    (small inference requests and probes answered in C) runs oipcodec's own where the kernels
    are pure."""
    grpc_impl: str = "grpcio"
    """The gRPC server: one of :data:`GRPC_IMPLS`; ``"native"`` needs the compiled kernels
    (without them the server runs grpcio's and logs a warning)."""
    codec_threads: int | None = None
    """Threads per process that parse and write large JSON bodies off the event loop; ``None``:
    the CPUs this process may use, divided among the ``workers`` (at least 1).
    """
    body_budget: int | None = None
    """Bytes of request-body buffers a process's REST connections may hold reserved for
    bodies still arriving, all together (oipcodec's HTTP protocol; see
    :class:`~oipcodec.server.http11.BodyBudget`): over it, a body is received in pieces
    as it arrives. ``None``: 4 times ``limits.max_body_bytes`` (256 MiB by default).
    """
    max_queued_requests: int = 0
    """The most requests a model without dynamic batching holds at once, running or waiting
    to run (a model's own ``max_queued_requests`` instead, when set); past it a request is
    refused at once as a full queue is. 0: no limit, as Triton's ``max_queue_size``. A model
    that batches has Triton's queue policy (docs/serving.md#overload).
    """
    overload_retry_after: int | None = None
    """``None``: a request refused for a full queue or a queue timeout is answered 503 (Triton's
    answer); seconds: 429 Too Many Requests with ``Retry-After`` of that many seconds, which
    clients and gateways back off on. gRPC answers UNAVAILABLE either way.
    """
    shared_memory: str | None = None
    """The shared-memory extension to enable: ``"system"`` (clients on this host pass
    tensors in POSIX shared-memory regions they register), or ``None``: off, the
    endpoints are absent and a tensor naming a region is refused. Needs ``workers=1``
    (regions are registered with one process).
    """
    shared_memory_prefix: str | None = None
    """Shared memory: the start every registered key must have (``"/inference-"``: only
    objects named ``/inference-...``); ``None``: any object the server's user can open,
    as Triton (docs/shared-memory.md, the trust model).
    """
    max_shm_regions: int = DEFAULT_MAX_SHM_REGIONS
    """Shared memory: the most regions registered at once (each holds a file descriptor)."""
    shared_memory_budget: int = DEFAULT_MAX_SHM_BYTES
    """Shared memory: the most bytes all registered regions span together, which is also the
    most the requests in flight may read from shared memory together (1 GiB by default).
    """
    metrics: bool = True
    """Count inference statistics and serve them (the statistics endpoints and RPC, and the
    Prometheus metrics at ``/metrics``); False: nothing is counted, and those answer
    UNAVAILABLE / 404.
    """
    metrics_port: int | None = None
    """A port of its own for ``GET /metrics`` (Triton's layout: 8000 REST, 8001 gRPC, 8002
    metrics); 0 picks a free one, ``None``: metrics only at ``/metrics`` on the REST port.
    """
    server_name: str = SERVER_NAME
    """The server's name in the server metadata (``GET /v2``, the ServerMetadata RPC). Clients
    written for Triton that check it (Triton's example clients expect ``"triton"``) work
    with ``server_name="triton"``.
    """
    graphpipe_port: int | None = None
    """A port of its own for GraphPipe (as GraphPipe's reference servers: one model, at ``/``);
    0 picks a free one, ``None``: GraphPipe only at ``/graphpipe/<model>`` on the REST port.
    """
    graphpipe_model: str | None = None
    """The model ``graphpipe_port`` serves (required with it)."""
    trace: bool = False
    """Make OpenTelemetry spans of the inference requests, exported over OTLP as the
    ``OTEL_*`` variables say, and serve Triton's trace extension (docs/tracing.md; needs
    ``oipcodec[tracing]``).
    """

    def __post_init__(self) -> None:
        _check_type("host", self.host, str)
        if not self.host:
            raise ValueError("host must be an address or a host name, got ''")
        for name in ("http_port", "grpc_port", "metrics_port", "graphpipe_port"):
            port = getattr(self, name)
            if port is not None:
                _check_int(name, port)
                if not 0 <= port <= 65535:
                    raise ValueError(
                        f"{name} must be 0 (a free port), a port up to 65535 or None "
                        f"(no server on that protocol), got {port}"
                    )
        if (self.graphpipe_port is None) != (self.graphpipe_model is None):
            raise ValueError("graphpipe_port and graphpipe_model go together: give both or neither")
        if self.graphpipe_model is not None:
            _check_type("graphpipe_model", self.graphpipe_model, str)
        _check_type("trace", self.trace, bool)
        _check_int("workers", self.workers)
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        if self.model_module is not None:
            _check_type("model_module", self.model_module, str)
        self._check_repository()
        _check_type("limits", self.limits, Limits)
        _check_type("access_log", self.access_log, bool)
        if self.log_level is not None:
            _check_type("log_level", self.log_level, str)
            if self.log_level.lower() not in LOG_LEVELS:
                raise ValueError(
                    f"log_level must be one of {', '.join(LOG_LEVELS)} or None, "
                    f"got {self.log_level!r}"
                )
        _check_int("malloc_top_pad", self.malloc_top_pad)
        _check_malloc_top_pad(self.malloc_top_pad)
        if self.http_protocol not in HTTP_PROTOCOLS:
            raise ValueError(
                f"http_protocol must be one of {', '.join(HTTP_PROTOCOLS)}, "
                f"got {self.http_protocol!r}"
            )
        if self.grpc_impl not in GRPC_IMPLS:
            raise ValueError(
                f"grpc_impl must be one of {', '.join(GRPC_IMPLS)}, got {self.grpc_impl!r}"
            )
        if self.codec_threads is not None:
            _check_int("codec_threads", self.codec_threads)
            if self.codec_threads < 1:
                raise ValueError(f"codec_threads must be at least 1, got {self.codec_threads}")
        if self.body_budget is not None:
            _check_int("body_budget", self.body_budget)
            if self.body_budget < 0:
                raise ValueError(f"body_budget must be >= 0 bytes, got {self.body_budget}")
        _check_int("max_queued_requests", self.max_queued_requests)
        if self.overload_retry_after is not None:
            _check_int("overload_retry_after", self.overload_retry_after)
        if self.max_queued_requests < 0 or (self.overload_retry_after or 0) < 0:
            raise ValueError("max_queued_requests and overload_retry_after are >= 0")
        if self.shared_memory is not None and self.shared_memory not in SHARED_MEMORY_KINDS:
            raise ValueError(
                f"shared_memory must be one of {', '.join(SHARED_MEMORY_KINDS)} or None, "
                f"got {self.shared_memory!r}"
            )
        if self.shared_memory is not None and self.workers > 1:
            raise ValueError(
                "shared_memory needs workers=1: regions are registered with one process, and "
                f"the {self.workers} workers would each see only the regions sent to it"
            )
        if self.shared_memory_prefix is not None:
            check_prefix(self.shared_memory_prefix)
        for name in ("max_shm_regions", "shared_memory_budget"):
            _check_int(name, getattr(self, name))
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        _check_type("metrics", self.metrics, bool)
        _check_type("server_name", self.server_name, str)
        if not self.server_name:
            raise ValueError("server_name must be a non-empty string")
        if self.metrics_port is not None and not self.metrics:
            raise ValueError("metrics_port needs metrics=True (the metrics are off)")

    def _check_repository(self) -> None:
        """The model repository's fields: a directory, a known mode, names only in
        ``explicit`` mode, not with ``model_module``."""
        _check_type("allow_repository_symlinks", self.allow_repository_symlinks, bool)
        if self.model_repository is not None:
            _check_type("model_repository", self.model_repository, str)
            if not os.path.isdir(self.model_repository):
                raise ValueError(f"model_repository {self.model_repository!r} is not a directory")
            if self.model_module is not None:
                raise ValueError(
                    "model_module and model_repository cannot be used together: put the "
                    "module's models into folders of the repository (docs/model-repository.md)"
                )
        if self.model_control not in MODEL_CONTROL_MODES:
            raise ValueError(
                f"model_control must be one of {', '.join(MODEL_CONTROL_MODES)}, "
                f"got {self.model_control!r}"
            )
        if self.model_control != "none" and self.model_repository is None:
            raise ValueError(f"model_control {self.model_control!r} needs a model_repository")
        if not isinstance(self.load_models, (str, tuple)):
            object.__setattr__(self, "load_models", tuple(self.load_models))
        if isinstance(self.load_models, str) or not all(
            isinstance(name, str) and name for name in self.load_models
        ):
            raise TypeError(f"load_models must be a tuple of model names, got {self.load_models!r}")
        if self.load_models and self.model_control != "explicit":
            raise ValueError(
                "load_models needs model_control 'explicit' (with 'none' every model of the "
                "repository is loaded at start)"
            )

    def body_budget_bytes(self) -> int:
        """``body_budget``, or its default: 4 times ``limits.max_body_bytes``."""
        if self.body_budget is not None:
            return self.body_budget
        return 4 * self.limits.max_body_bytes

    def replace(self, **changes: Any) -> ServerConfig:
        """A copy with some fields changed, checked as a new config.

        Parameters
        ----------
        **changes
            New values by field name (``http_port=9000``); an unknown name raises
            ``TypeError`` listing the known ones.
        """
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            fields = ", ".join(f.name for f in dataclasses.fields(self))
            raise TypeError(f"unknown server setting(s) {', '.join(unknown)}; known: {fields}")
        return dataclasses.replace(self, **changes)

    def codec_threads_per_process(self, cpus: int) -> int:
        """The codec threads each process runs: ``codec_threads``, or else the CPUs divided
        among the ``workers`` (at least 1).

        Parameters
        ----------
        cpus
            The CPUs the server may use (:func:`available_cpus`).
        """
        if self.codec_threads is not None:
            return self.codec_threads
        return max(1, cpus // self.workers)


def available_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the system has one, else
    the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _check_malloc_top_pad(nbytes: int) -> None:
    """Refuse a negative pad with ValueError (the servers check it before they start a
    process that would only say it failed to start)."""
    if nbytes < 0:
        raise ValueError(f"malloc_top_pad must be >= 0 bytes, got {nbytes}")


def _check_type(name: str, value: object, kind: type) -> None:
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__}, got {type(value).__name__} {value!r}")


def _check_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")


class ServerSettings(TypedDict, total=False):
    """The fields of :class:`ServerConfig` as keyword arguments (``serve(http_port=9000)``), so
    that type checkers and editors know them; tests keep the two lists equal."""

    host: str
    http_port: int | None
    grpc_port: int | None
    workers: int
    model_module: str | None
    model_repository: str | None
    model_control: str
    load_models: tuple[str, ...]
    allow_repository_symlinks: bool
    limits: Limits
    access_log: bool
    log_level: str | None
    malloc_top_pad: int
    http_protocol: str
    grpc_impl: str
    codec_threads: int | None
    body_budget: int | None
    max_queued_requests: int
    overload_retry_after: int | None
    shared_memory: str | None
    shared_memory_prefix: str | None
    max_shm_regions: int
    shared_memory_budget: int
    metrics: bool
    metrics_port: int | None
    server_name: str
    graphpipe_port: int | None
    graphpipe_model: str | None
    trace: bool
