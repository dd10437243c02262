"""The table ``oipcodec bench`` prints: per payload, the paths in order, each implementation's
requests/s, latency and MB/s, and the best path marked."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from oipcodec.bench.encoding import PATHS
from oipcodec.bench.load import level_label, level_of, run_levels
from oipcodec.bench.paths.peers import SERVER_PEERS

__all__ = ["TABLE_WIDTH", "best_paths", "plural", "render_table"]


def _best_load(record: dict[str, Any]) -> dict[str, Any] | None:
    """The load summary at the highest level measured."""
    loads = [entry for entry in record.get("load", []) if entry.get("requests")]
    return max(loads, key=level_of) if loads else None


def best_paths(records: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Per payload, ``path/implementation`` of the highest requests/s at the highest level,
    among the rows whose figure is not marked unstable: an unstable window crowns nothing,
    so a payload whose rows all are has no best."""
    best: dict[str, tuple[float, str]] = {}
    for record in records:
        load = _best_load(record)
        if record.get("error") or load is None or load.get("stable") is False:
            continue
        key = f"{record['path']}/{record['implementation']}"
        if record["payload"] not in best or load["rps"] > best[record["payload"]][0]:
            best[record["payload"]] = (load["rps"], key)
    return {payload: key for payload, (_, key) in best.items()}


def _fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def _one_line(message: str, limit: int = 300) -> str:
    """An error message on one line of the table (cut at ``limit`` characters)."""
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _flags(entry: dict[str, Any]) -> str:
    """``~`` never stable, ``!`` the load generator saturated (``~!`` both), else blank."""
    return ("~" if entry.get("stable") is False else "") + (
        "!" if entry.get("generator_saturated") else ""
    )


def _rate_cell(entry: dict[str, Any] | None, width: int) -> str:
    if not entry:
        return f" {'-':>{width}}  "
    if not entry.get("rps"):  # no answer in the reported windows: still say if unstable
        return f" {'-':>{width}}{_flags(entry):<2}"
    return f" {_fmt(entry['rps']):>{width}}{_flags(entry):<2}"


#: The table's width: the default fits this many columns (the codec columns on --wide).
TABLE_WIDTH = 100


def render_table(results: dict[str, Any], wide: bool | None = None) -> str:
    """The readable table: per payload, the paths in order, each path's implementations on
    adjacent rows with their requests/s against ``pure`` on the same path (``x pure``).
    At most two levels are columns (the lowest and the highest; every level is in
    results.json and the CSV); ``wide`` adds the codec columns."""
    wide = results["options"].get("wide", False) if wide is None else wide
    records = results["results"]
    mode, levels = run_levels(results)
    shown = sorted({min(levels), max(levels)}) if levels else []
    top = max(levels) if levels else 0
    best = results["best"]
    lines = []
    head = f"  {'path':<17} {'impl':<12}"
    head += "".join(f" {level_label(mode, c) + ' req/s':>11}  " for c in shown)
    head += f" {'p50 ms':>8} {'p99 ms':>8} {'MB/s':>7} {'x pure':>6}"
    if wide:
        head += f" {'wire kB':>8} {'client us':>10} {'server us':>10}"
    width = len(head) if wide else TABLE_WIDTH
    order = {name: i for i, name in enumerate(PATHS)}
    for name, payload in results["payloads"].items():
        rows = [r for r in records if r["payload"] == name]
        if not rows:
            continue
        rows.sort(key=lambda r: order.get(r["path"], len(order)))  # stable: impl order kept
        if "inputs" in payload:  # a model's generated request
            tensors = ", ".join(
                f"{t['name']} {'x'.join(map(str, t['shape']))} {t['datatype']}"
                for t in payload["inputs"]
            )
            title = f"model {name} ({tensors})"
        else:
            title = f"{name} ({'x'.join(map(str, payload['shape']))} {payload['datatype']})"
        lines.append("")
        lines.append(f"{title}; latency and MB/s at {level_label(mode, top)}")
        lines.append(head)
        pure = {r["path"]: _best_load(r) for r in rows if r["implementation"] == "pure"}
        for record in rows:
            mark = "*" if best.get(name) == f"{record['path']}/{record['implementation']}" else " "
            label = PATHS[record["path"]].label if record["path"] in PATHS else record["path"]
            start = f"{mark} {label:<17} {record['implementation']:<12}"
            if record.get("unsupported"):
                reason = record["unsupported"]
                if not reason.startswith("not supported"):  # the server's rows say it already
                    reason = f"not supported: {reason}"
                lines += _wrap(f"{start} {reason}", width)
                continue
            if record.get("error"):
                lines += _wrap(f"{start} error: {_one_line(record['error'])}", width)
                continue
            if record.get("codec_only"):
                measured = f" {record['codec_only']}"
                if wide:  # the load columns' width (14 a level, 33 the rest) less its space
                    measured = f" {record['codec_only']:<{14 * len(shown) + 32}}"
            else:
                by_level = {level_of(e): e for e in record.get("load", [])}
                load = by_level.get(top, {})
                reference = pure.get(record["path"])
                ratio = None
                if reference and reference.get("rps") and load.get("rps"):
                    ratio = load["rps"] / reference["rps"]
                measured = (
                    "".join(_rate_cell(by_level.get(c), 11) for c in shown)
                    + f" {_fmt(load.get('p50_ms'), 2):>8} {_fmt(load.get('p99_ms'), 2):>8}"
                    + f" {_fmt(load.get('mb_per_s'), 1):>7} {_fmt(ratio, 2):>6}"
                )
            line = start + measured
            if wide:
                codec = record.get("codec_us", {})
                wire = (record.get("request_bytes", 0) + record.get("response_bytes", 0)) / 1e3
                line += (
                    f" {_fmt(wire, 1):>8} {_fmt(codec.get('client')):>10}"
                    f" {_fmt(codec.get('server')):>10}"
                )
            lines.append(_cut(line.rstrip(), width))
            failed = [e for e in record.get("load", []) if e.get("errors")]
            if failed:  # some requests failed after the first answered: the first error
                count = sum(e["errors"] for e in failed)
                lines += _wrap(
                    f"    {plural(count, 'failed request')}, the first: "
                    f"{_one_line(failed[0].get('first_error', ''))}",
                    width,
                )
            if record.get("threshold_reached") is not None:
                lines.append(
                    f"    stopped after {level_label(mode, record['threshold_reached'])}: "
                    "its latency passed --latency-threshold"
                )
    lines.append("")
    lines.append(
        "(*) most requests/s for the payload at the highest level, of the stable rows. "
        "x pure = req/s"
    )
    lines.append(
        "against pure on the same path. ~ never stable: the last 3 windows differ by more than the"
    )
    options = results["options"]
    percentile = options.get("percentile")
    lines.append(
        f"stability percentage ({options.get('stability_percentage', 10):g}%) in req/s or "
        f"{'avg' if percentile is None else f'p{percentile:g}'} latency; ! the load "
        "generator used a whole core."
    )
    lines.append(
        "MB/s counts the tensor bytes both ways"
        + ("; r=N: open loop at N req/s" if mode != "concurrency" else "")
        + ". Every level and window: results.json."
    )
    if wide:
        lines.append(
            "wire kB = request + response body; client/server us = codec time per request "
            "(encode + decode), in-process."
        )
    lines += _shared_memory_note(results)
    servers = sorted({r["implementation"] for r in records} & set(SERVER_PEERS))
    if servers:
        lines.append(
            f"{' / '.join(servers)} rows: that server's own codec (decode the request, encode "
            "the answer),"
        )
        lines.append(
            "in-process; requests/s only against such a server given by --url / --grpc-target."
        )
    return "\n".join(lines)


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


#: A message's continuation lines are indented by this much.
WRAP_INDENT = " " * 6


def _wrap(line: str, width: int) -> list[str]:
    """A message row on as many lines as it takes (an error is never cut short)."""
    return textwrap.wrap(line, width, subsequent_indent=WRAP_INDENT, break_on_hyphens=False) or [
        line
    ]


#: The paths the shared-memory path is set beside in the table's closing note.
_BESIDE_SHM = ("rest-binary", "grpc-raw")


def _shared_memory_note(results: dict[str, Any]) -> list[str]:
    """Per payload and implementation with a measured ``shm`` row: its requests/s at each
    level and server codec microseconds, beside REST binary and gRPC raw, and one memcpy of
    the payload's bytes (what shared memory cannot go below)."""
    records = results["results"]
    mode, levels = run_levels(results)
    lines = []
    for record in records:
        if record["path"] != "shm" or record.get("error") or not record.get("load"):
            continue
        rows = [record] + [
            r
            for r in records
            if r["payload"] == record["payload"]
            and r["implementation"] == record["implementation"]
            and r["path"] in _BESIDE_SHM
            and not r.get("error")
            and r.get("load")
        ]
        parts = []
        for row in rows:
            by_level = {level_of(e): e.get("rps") for e in row["load"]}
            rps = " / ".join(_fmt(by_level.get(c)) for c in levels)
            server = row.get("codec_us", {}).get("server")
            codec = "" if server is None else f" (server {_fmt(server)} us)"
            parts.append(f"{PATHS[row['path']].label} {rps}{codec}")
        memcpy = record.get("codec_us", {}).get("memcpy")
        lines.append(
            f"shared memory, {record['payload']} {record['implementation']}, req/s at "
            f"{'/'.join(level_label(mode, c) for c in levels)}: " + "; ".join(parts)
        )
        lines.append(
            f"  one memcpy of its {record['payload_bytes']:,} bytes: {_fmt(memcpy, 1)} us "
            "(the copy into the region that each shm request makes)"
        )
    return lines


def plural(number: int, noun: str) -> str:
    """``1 payload``, ``2 payloads``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
