"""perf_analyzer's result files, as ``oipcodec bench`` writes them beside results.json: the CSV
of ``-f`` (``--csv``) and the profile export (``--profile-export``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oipcodec import __version__
from oipcodec.bench.load import level_of, run_levels
from oipcodec.bench.stream_load import stream_csv_rows

__all__ = ["CSV_COLUMNS", "OIPCODEC_CSV_COLUMNS", "csv_rows", "profile_document", "write_csv"]


#: perf_analyzer's ``-f`` columns with ``--verbose-csv`` and server statistics, in its order
#: (the first is ``Request Rate`` in open loop); oipcodec's columns follow.
CSV_COLUMNS = (
    "Concurrency",
    "Inferences/Second",
    "Client Send",
    "Network+Server Send/Recv",
    "Server Queue",
    "Server Compute Input",
    "Server Compute Infer",
    "Server Compute Output",
    "Client Recv",
    "p50 latency",
    "p90 latency",
    "p95 latency",
    "p99 latency",
    "Avg latency",
    "request/response",
    "response wait",
)
OIPCODEC_CSV_COLUMNS = (
    "Payload",
    "Path",
    "Implementation",
    "Stable",
    "Generator CPU",
    "Generator Saturated",
    "Max latency",
    "Client Codec us",
    "Server Codec us",
    "Client CPU us",
    "Server CPU us",
    "Rounds",
    "Inferences/Second low",
    "Inferences/Second high",
)


def csv_rows(results: dict[str, Any]) -> list[list[str]]:
    """The CSV: a header, then a row per measured record and level. Times are microseconds
    as perf_analyzer writes them. Client Send / Client Recv are the client codec's encode /
    decode time (in-process); the server columns come from the record's
    ``server_breakdown`` (0 when the server's statistics were not read). The CPU columns
    are microseconds per request on each side (``n/a`` where not read), the last two the
    95% interval of requests/s (oipcodec.bench.verdicts)."""
    if results["options"].get("streaming"):
        return stream_csv_rows(results)
    mode, _ = run_levels(results)
    header = list(CSV_COLUMNS) + list(OIPCODEC_CSV_COLUMNS)
    if mode != "concurrency":
        header[0] = "Request Rate"
    rows = [header]
    batch = int(results["options"].get("batch_size", 1) or 1)
    for record in results["results"]:
        codec = record.get("codec_us") or {}
        send = codec.get("client_encode", 0.0)
        receive = codec.get("client_decode", 0.0)
        for entry in record.get("load", []):
            if not entry.get("requests"):
                continue
            rps = (entry.get("ci") or {}).get("rps") or {}
            server = entry.get("server_breakdown") or {}
            queue = server.get("queue_us", 0.0)
            c_in = server.get("compute_input_us", 0.0)
            c_infer = server.get("compute_infer_us", 0.0)
            c_out = server.get("compute_output_us", 0.0)
            avg = entry["avg_ms"] * 1e3
            wait = max(0.0, avg - send - receive)
            network = max(0.0, wait - queue - c_in - c_infer - c_out)
            stable_text = {True: "yes", False: "no", None: "not checked"}[entry.get("stable")]
            values = [
                str(_number(level_of(entry))),
                f"{entry['rps'] * batch:.2f}",
                *(str(int(v)) for v in (send, network, queue, c_in, c_infer, c_out, receive)),
                *(str(int(entry[f"p{p}_ms"] * 1e3)) for p in (50, 90, 95, 99)),
                str(int(avg)),
                str(int(send + receive)),
                str(int(wait)),
                record["payload"],
                record["path"],
                record["implementation"],
                stable_text,
                f"{entry.get('generator_cpu', 0.0):.2f}",
                "yes" if entry.get("generator_saturated") else "no",
                str(int(entry["max_ms"] * 1e3)),
                f"{codec.get('client', 0.0):.1f}",
                f"{codec.get('server', 0.0):.1f}",
                *(_optional(entry.get(key)) for key in ("client_cpu_us", "server_cpu_us")),
                str(record.get("rounds", 1)),
                *(_optional(rps.get(end)) for end in ("low", "high")),
            ]
            rows.append(values)
    return rows


def _optional(value: float | None) -> str:
    """A figure that may be missing (a side whose CPU could not be read): ``n/a``."""
    return "n/a" if value is None else f"{value:.1f}"


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def write_csv(results: dict[str, Any], path: Path) -> None:
    """Write :func:`csv_rows` to ``path``."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(csv_rows(results))


def profile_document(results: dict[str, Any]) -> dict[str, Any]:
    """perf_analyzer's profile export: an experiment per record and level, each request's
    send timestamp and its response's (a stream's: each of its responses; ns since the
    epoch; in open loop the send timestamp is the request's scheduled time, from which its
    latency counts), and the windows' edges.
    Each experiment names its payload, path and implementation under ``oipcodec``."""
    mode, _ = run_levels(results)
    experiments = []
    sequence = 0
    for record in results["results"]:
        for entry in record.get("load", []):
            profile = entry.get("profile")
            if not profile:
                continue
            requests = []
            for start, *responses in profile["requests"]:  # a stream: several responses
                sequence += 1
                requests.append(
                    {"timestamp": start, "sequence_id": sequence, "response_timestamps": responses}
                )
            experiments.append(
                {
                    "experiment": {
                        "mode": "concurrency" if mode == "concurrency" else "request_rate",
                        "value": _number(level_of(entry)),
                    },
                    "requests": requests,
                    "window_boundaries": profile.get("window_boundaries", []),
                    "oipcodec": {
                        "payload": record["payload"],
                        "path": record["path"],
                        "implementation": record["implementation"],
                        "stable": entry.get("stable"),
                    },
                }
            )
    return {"experiments": experiments, "version": f"oipcodec {__version__}"}
