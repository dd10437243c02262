"""The server's own account of a load window: the statistics extension (``GET
/v2/models/<model>/stats``, gRPC ModelStatistics) read before and after it, and the time per
request in each stage worked out as perf_analyzer does it.

Triton's figures are cumulative (a count and nanoseconds per stage); a window's figure is the
difference of two readings, each stage's nanoseconds divided by that stage's count. The
result uses perf_analyzer's names (its CSV columns: ``Server Queue``, ``Server Compute
Input``...), in microseconds. Servers without the extension (MLServer, KServe) are told apart
by the extension list of their metadata (``GET /v2``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from oipcodec.bench.connection import scheme

__all__ = [
    "COLUMNS",
    "STAGES",
    "Snapshot",
    "breakdown",
    "from_statistics",
    "offers_statistics",
    "reader",
    "snapshot",
]

#: The stages of a request in Triton's statistics, in the order they happen.
STAGES = ("queue", "compute_input", "compute_infer", "compute_output")
#: Each stage's name in perf_analyzer's CSV (microseconds per request).
COLUMNS = {
    "queue": "Server Queue",
    "compute_input": "Server Compute Input",
    "compute_infer": "Server Compute Infer",
    "compute_output": "Server Compute Output",
}


@dataclass(frozen=True)
class Snapshot:
    """One reading of a model's cumulative statistics (every version's summed).

    ``counts`` and ``ns`` hold, for ``success`` and each of :data:`STAGES`, the number of
    requests and their total nanoseconds since the server started.
    """

    model: str
    counts: dict[str, int] = field(default_factory=dict)
    ns: dict[str, int] = field(default_factory=dict)
    inference_count: int = 0
    execution_count: int = 0


def from_statistics(document: Mapping[str, Any], model: str) -> Snapshot:
    """The :class:`Snapshot` of ``model`` in a statistics answer (``{"model_stats": [...]}``,
    as the REST endpoint and :meth:`GrpcClient.model_statistics` give it). A figure the
    answer leaves out counts as 0 (protobuf's JSON form omits zeros)."""
    counts = dict.fromkeys(("success", *STAGES), 0)
    ns = dict.fromkeys(("success", *STAGES), 0)
    inferences = executions = 0
    for entry in document.get("model_stats", []):
        if entry.get("name") != model:
            continue
        inferences += int(entry.get("inference_count", 0))
        executions += int(entry.get("execution_count", 0))
        stats = entry.get("inference_stats", {})
        for stage in counts:
            figures = stats.get(stage, {})
            counts[stage] += int(figures.get("count", 0))
            ns[stage] += int(figures.get("ns", 0))
    return Snapshot(model, counts, ns, inferences, executions)


def _client(server: Any, timeout: float, headers: Mapping[str, str] | None,
            ssl_context: Any, credentials: Any) -> tuple[Any, bool]:  # fmt: skip
    """A client of ``server`` (a URL, a gRPC target, or a client already), and whether it was
    made here (then the caller closes it)."""
    if not isinstance(server, str):
        return server, False
    if scheme(server) in ("http", "https"):
        from oipcodec.client import HttpClient

        return HttpClient(server, timeout=timeout, headers=headers, ssl_context=ssl_context,
                          pool_size=1), True  # fmt: skip
    from oipcodec.client import GrpcClient

    return GrpcClient(server, timeout=timeout, headers=headers, credentials=credentials), True


def snapshot(
    server: Any,
    model: str,
    *,
    version: str | None = None,
    timeout: float = 10.0,
    headers: Mapping[str, str] | None = None,
    ssl_context: Any = None,
    credentials: Any = None,
) -> Snapshot:
    """Read ``model``'s statistics from ``server``: a REST URL (``http(s)://host:port``), a
    gRPC target (``host:port``), or an oipcodec client (HttpClient or GrpcClient) to reuse.
    ``headers``, ``ssl_context`` (REST) and ``credentials`` (gRPC) as the clients take them.
    Raises the client's errors (:class:`~oipcodec.client.ServerError` when the server has no
    such model or no statistics)."""
    client, made = _client(server, timeout, headers, ssl_context, credentials)
    try:
        return from_statistics(client.model_statistics(model, version, timeout=timeout), model)
    finally:
        if made:
            client.close()


def breakdown(before: Snapshot, after: Snapshot) -> dict[str, float]:
    """The window between two readings, perf_analyzer's way: ``Request count`` (successful
    requests), ``Inference count``, ``Execution count``, ``Avg request latency`` (the
    success nanoseconds over the request count), each of :data:`COLUMNS` (a stage's
    nanoseconds over that stage's count) and ``Server Overhead`` (what the request latency
    holds beyond queue and compute); times in microseconds. With no request in the window,
    only ``Request count: 0``, as perf_analyzer prints it."""
    if before.model != after.model:
        raise ValueError(f"readings of two models: {before.model!r} and {after.model!r}")

    def delta(table: str, stage: str) -> int:
        return int(getattr(after, table).get(stage, 0) - getattr(before, table).get(stage, 0))

    requests = delta("counts", "success")
    if requests <= 0:
        return {"Request count": 0}

    def average(stage: str) -> float:
        count = delta("counts", stage)
        return round(delta("ns", stage) / count / 1e3, 3) if count > 0 else 0.0

    result: dict[str, float] = {
        "Request count": requests,
        "Inference count": after.inference_count - before.inference_count,
        "Execution count": after.execution_count - before.execution_count,
        "Avg request latency": average("success"),
    }
    for stage in STAGES:
        result[COLUMNS[stage]] = average(stage)
    compute = sum(delta("ns", stage) for stage in STAGES[1:])
    compute_count = delta("counts", "compute_input")
    compute_us = compute / compute_count / 1e3 if compute_count > 0 else 0.0
    result["Server Overhead"] = round(
        max(0.0, result["Avg request latency"] - result["Server Queue"] - compute_us), 3
    )
    return result


def offers_statistics(metadata: Mapping[str, Any]) -> bool:
    """Whether a server's metadata (``GET /v2``) lists the statistics extension."""
    return "statistics" in metadata.get("extensions", ())


def reader(client: Any, model: str, timeout: float = 10.0) -> Callable[[], Snapshot] | None:
    """A call that reads ``model``'s statistics through ``client`` (an oipcodec client), or
    None when the server does not offer them (its metadata does not list the extension, or
    the first reading fails): the bench then reports no server-side breakdown."""
    try:
        if not offers_statistics(client.server_metadata(timeout=timeout)):
            return None
        snapshot(client, model, timeout=timeout)
    except Exception:  # no breakdown is the answer to any failure here
        return None
    return lambda: snapshot(client, model, timeout=timeout)
