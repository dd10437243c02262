"""The table ``oipcodec bench`` prints: per payload, the paths in order, each implementation's
requests/s, latency and MB/s, and the best path marked."""

from __future__ import annotations

import textwrap
from typing import Any

from oipcodec.bench.encoding import PATHS
from oipcodec.bench.load import level_label, level_of, run_levels
from oipcodec.bench.paths.peers import SERVER_PEERS
from oipcodec.bench.stream_load import render_stream_table
from oipcodec.bench.verdicts import top_entry

__all__ = ["TABLE_WIDTH", "plural", "render_table"]


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
TABLE_WIDTH = 104


def render_table(results: dict[str, Any], wide: bool | None = None) -> str:
    """The readable table: per payload, the paths in order, each path's implementations on
    adjacent rows with their requests/s against ``pure`` on the same path (``x pure``).
    At most two levels are columns (the lowest and the highest; a sweep of more has a line
    per row with every level after the table); ``wide`` adds MB/s and the codec columns."""
    if results["options"].get("streaming"):
        return render_stream_table(results)
    wide = results["options"].get("wide", False) if wide is None else wide
    records = results["results"]
    mode, levels = run_levels(results)
    shown = sorted({min(levels), max(levels)}) if levels else []
    top = max(levels) if levels else 0
    best = results["best"]
    tied = {(payload, key) for payload, keys in results.get("tied", {}).items() for key in keys}
    verdicts = results.get("verdicts", {})
    lines = _header_notes(results)
    head = f"  {'path':<17} {'impl':<12}"
    head += "".join(f" {level_label(mode, c) + ' req/s':>11}  " for c in shown)
    head += f" {'p50 ms':>8} {'p99 ms':>8} {'cli us':>7} {'srv us':>7} {'x pure':>6}"
    if wide:
        head += f" {'MB/s':>7} {'wire kB':>8} {'client us':>10} {'server us':>10}"
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
        pure = {r["path"]: top_entry(r) for r in rows if r["implementation"] == "pure"}
        for record in rows:
            key = f"{record['path']}/{record['implementation']}"
            mark = "*" if best.get(name) == key else "=" if (name, key) in tied else " "
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
                if wide:  # the load columns' width (14 a level, 49 the rest) less its space
                    measured = f" {record['codec_only']:<{14 * len(shown) + 48}}"
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
                    + f" {_cpu(load, 'client_cpu_us'):>7} {_cpu(load, 'server_cpu_us'):>7}"
                    + f" {_fmt(ratio, 2):>6}"
                )
                if wide:
                    measured += f" {_fmt(load.get('mb_per_s'), 1):>7}"
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
        lines += _verdict_lines(verdicts.get(name, {}), width)
    lines += _sweep_lines(results, width)
    lines.append("")
    options = results["options"]
    percentile = options.get("percentile")
    rounds = int(options.get("rounds", 1) or 1)
    source = f"the median of {rounds} rounds" if rounds > 1 else "the last 3 windows of one round"
    notes = [
        f"(*) most requests/s for the payload at the highest level, beyond the noise of every "
        f"other row; = rows within each other's noise at the top (no best). Figures: {source}; "
        "noise: 95% bootstrap intervals of the median (--rounds N for intervals across runs).",
        "cli us / srv us = CPU microseconds per request at the highest level: the client's "
        "load processes, and the server's processes (/proc; with --url, its /metrics' "
        "process_cpu_seconds_total, else /proc for a server on this machine; n/a without).",
        "x pure = req/s against pure on the same path"
        + (
            f". ~ never stable: the rounds' req/s differ by more than the stability "
            f"percentage ({options.get('stability_percentage', 10):g}%)"
            if rounds > 1
            else ". ~ never stable: the last 3 windows differ by more than the stability "
            f"percentage ({options.get('stability_percentage', 10):g}%) in req/s or "
            f"{'avg' if percentile is None else f'p{percentile:g}'} latency"
        )
        + "; ! the load generator used a whole core.",
    ]
    if wide:
        notes.append(
            "MB/s counts the tensor bytes both ways. wire kB = request + response body; "
            "client/server us = codec time per request (encode + decode), in-process."
        )
    if mode != "concurrency":
        notes.append("r=N: open loop at N req/s.")
    notes.append("Every level and window: results.json.")
    for note in notes:
        lines += textwrap.wrap(note, width, break_on_hyphens=False)
    for note in _shared_memory_note(results):
        lines += _wrap(note, width)
    servers = sorted({r["implementation"] for r in records} & set(SERVER_PEERS))
    if servers:
        lines += textwrap.wrap(
            f"{' / '.join(servers)} rows: that server's own codec (decode the request, encode "
            "the answer), in-process; requests/s only against such a server given by --url / "
            "--grpc-target.",
            width,
        )
    return "\n".join(lines)


def _cpu(entry: dict[str, Any], key: str) -> str:
    """CPU microseconds per request, ``n/a`` when that side could not be read."""
    value = entry.get(key)
    return "n/a" if value is None else _fmt(value)


#: The embedded server's front ends unless --server-http-protocol / --server-grpc-impl say
#: (``oipcodec serve``'s defaults).
DEFAULT_FRONT_ENDS = ("native", "grpcio")
#: What a results.json older than those options ran (the server's defaults then).
_BEFORE_THE_OPTIONS = ("oipcodec", "grpcio")


def front_ends(results: dict[str, Any]) -> tuple[tuple[str, str], str] | None:
    """The embedded server's front ends asked for (HTTP/1.1, gRPC), and in words with each
    implementation's server that ran others (pure's, in place of the native ones); None for a
    server given by --url / --grpc-target. A results.json older than the options ran
    oipcodec's protocol and grpcio."""
    options = results["options"]
    if options.get("url") or options.get("grpc_target"):
        return None
    asked = (
        options.get("server_http_protocol") or _BEFORE_THE_OPTIONS[0],
        options.get("server_grpc_impl") or _BEFORE_THE_OPTIONS[1],
    )
    text = _words(asked)
    others = []
    for worker in results.get("workers", []):
        ran = worker.get("server_front_ends")
        if ran and (ran["http_protocol"], ran["grpc_impl"]) != asked:
            others.append(f"{worker['implementation']}'s {ran['http_protocol']}, "
                          f"{ran['grpc_impl']}")  # fmt: skip
    if others:
        text += f" ({'; '.join(others)}: the native front ends are native code)"
    return asked, text


def _words(front_ends: tuple[str, str]) -> str:
    return f"HTTP/1.1 {front_ends[0]}, gRPC {front_ends[1]}"


def _header_notes(results: dict[str, Any]) -> list[str]:
    """The paths a run against --url alone (or --grpc-target alone) left out, and how to
    measure them: said, rather than the rows missing silently."""
    options = results["options"]
    lines = []
    servers = front_ends(results)
    # Said unless every row's server ran the defaults.
    if servers is not None and servers[1] != _words(DEFAULT_FRONT_ENDS):
        lines += _wrap(f"the embedded server's front ends: {servers[1]}", TABLE_WIDTH)
    for protocol, given, flag in (("grpc", options.get("grpc_target"), "--grpc-target"),
                                  ("rest", options.get("url"), "--url")):  # fmt: skip
        other = options.get("url") if protocol == "grpc" else options.get("grpc_target")
        if other and not given:
            name = "gRPC" if protocol == "grpc" else "REST"
            lines.append(f"the {name} paths are not measured: give {flag} to measure them too")
    if options.get("url") or options.get("grpc_target"):
        lines.append(
            "x pure here compares the client's kernels only: every row talks to the same server"
        )
    return lines


def _verdict_lines(verdicts: dict[str, str], width: int) -> list[str]:
    """Native against pure per path, in words, grouped by verdict."""
    if not verdicts:
        return []
    groups: dict[str, list[str]] = {}
    for path, verdict in verdicts.items():
        groups.setdefault(verdict, []).append(PATHS[path].label if path in PATHS else path)
    text = "; ".join(f"{verdict} on {', '.join(paths)}" for verdict, paths in groups.items())
    return _wrap(f"  native against pure (req/s and CPU per request): {text}", width)


def _sweep_lines(results: dict[str, Any], width: int) -> list[str]:
    """With more than two levels, each measured row's requests/s at every level (the table
    shows the lowest and the highest)."""
    mode, levels = run_levels(results)
    if len(levels) <= 2:
        return []
    lines = ["", "requests/s at every level:"]
    for record in results["results"]:
        if record.get("error") or not record.get("load"):
            continue
        by_level = {level_of(e): e for e in record["load"]}
        cells = ", ".join(
            f"{level_label(mode, c)} {_fmt(by_level[c].get('rps'))}{_flags(by_level[c])}"
            for c in levels
            if c in by_level
        )
        label = PATHS[record["path"]].label if record["path"] in PATHS else record["path"]
        lines += _wrap(f"  {record['payload']} {label} {record['implementation']}: {cells}", width)
    return lines


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
            f"{'/'.join(level_label(mode, c) for c in levels)}:"
        )
        lines += [f"  {part}" for part in parts]
        lines.append(
            f"  one memcpy of its {record['payload_bytes']:,} bytes: {_fmt(memcpy, 1)} us "
            "(the copy into the region each shm request makes)"
        )
    return lines


def plural(number: int, noun: str) -> str:
    """``1 payload``, ``2 payloads``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
