"""Gates on results: ``oipcodec bench compare BASE.json NEW.json`` (row by row differences,
their significance, a regression past a threshold) and SLOs (``--slo "p99<0.01s"``: goodput,
the requests/s of the highest level that meets the SLO).

A difference is significant when the two 95% intervals of the row's figure do not overlap
(:mod:`oipcodec.bench.verdicts`); a regression is a significant change for the worse, in
requests/s or in CPU per request, by more than the threshold.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oipcodec.bench.encoding import PATHS
from oipcodec.bench.load import level_label, level_of, run_levels
from oipcodec.bench.table import front_ends
from oipcodec.bench.verdicts import add_intervals, interval, merge_rounds
from oipcodec.errors import BenchError

__all__ = [
    "Slo",
    "compare",
    "goodput",
    "parse_slo",
    "read_results",
    "render_comparison",
    "render_goodput",
    "write_comparison_chart",
]

#: The latencies an SLO may bound, and the load entry's key of each.
_LATENCIES = {"p50": "p50_ms", "p90": "p90_ms", "p95": "p95_ms", "p99": "p99_ms",
              "avg": "avg_ms", "max": "max_ms"}  # fmt: skip
_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}
_SLO = re.compile(r"^\s*(p50|p90|p95|p99|avg|max)\s*(<=|<)\s*([0-9.]+)\s*(us|ms|s)\s*$")


@dataclass(frozen=True)
class Slo:
    """One bound: ``latency`` (a key of the load entry) below ``limit_ms``."""

    text: str
    latency: str
    limit_ms: float
    inclusive: bool

    def met(self, entry: dict[str, Any]) -> bool:
        value = entry.get(self.latency)
        if value is None or not entry.get("rps"):
            return False
        return bool(value <= self.limit_ms if self.inclusive else value < self.limit_ms)


def parse_slo(text: str) -> list[Slo]:
    """``p99<0.01s`` (several separated by commas; p50, p90, p95, p99, avg, max; ``<`` or
    ``<=``; us, ms or s). ValueError naming the part that is not one."""
    slos = []
    for part in text.split(","):
        match = _SLO.match(part)
        if match is None:
            raise ValueError(
                f"--slo: {part.strip()!r} is not a bound such as p99<0.01s "
                "(p50, p90, p95, p99, avg or max; < or <=; us, ms or s)"
            )
        name, op, number, unit = match.groups()
        slos.append(Slo(part.strip(), _LATENCIES[name], float(number) * _UNITS[unit], op == "<="))
    return slos


def goodput(results: dict[str, Any], slos: list[Slo]) -> dict[str, Any]:
    """Per measured row, the highest requests/s among its levels that meet every bound (its
    goodput; 0 when none does), and ``missed``: the rows where none does."""
    mode, _ = run_levels(results)
    rows = []
    for record in results["results"]:
        loads = [e for e in record.get("load", []) if e.get("rps")]
        if record.get("error") or not loads:
            continue
        meeting = [e for e in loads if all(slo.met(e) for slo in slos)]
        top = max(meeting, key=lambda e: e["rps"]) if meeting else None
        rows.append({
            "payload": record["payload"], "path": record["path"],
            "implementation": record["implementation"],
            "goodput": top["rps"] if top else 0.0,
            "level": level_label(mode, level_of(top)) if top else None,
        })  # fmt: skip
    return {
        "slo": ",".join(slo.text for slo in slos),
        "rows": rows,
        "missed": [f"{r['payload']} {r['path']}/{r['implementation']}" for r in rows
                   if not r["goodput"]],
    }  # fmt: skip


def render_goodput(report: dict[str, Any]) -> list[str]:
    """The goodput lines printed after a table."""
    lines = ["", f"SLO {report['slo']}: goodput (req/s of the highest level meeting it)"]
    for row in report["rows"]:
        label = PATHS[row["path"]].label if row["path"] in PATHS else row["path"]
        figure = f"{row['goodput']:,.0f} at {row['level']}" if row["goodput"] else "missed"
        lines.append(f"  {row['payload']} {label} {row['implementation']}: {figure}")
    if report["missed"]:
        lines.append(f"SLO missed on {len(report['missed'])} of {len(report['rows'])} rows")
    return lines


def read_results(path: str) -> dict[str, Any]:
    """A results.json of ``oipcodec bench``, its rows merged (:func:`merge_rounds`) and each
    load entry given its intervals where the file predates them. BenchError when unreadable."""
    try:
        results = json.loads(Path(path).read_text(encoding="utf-8"))
        records = results["results"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BenchError(f"{path}: not a results.json of oipcodec bench ({exc})") from exc
    if results.get("options", {}).get("streaming"):
        # Its rows have no windows to draw intervals from: compared, every row would pass.
        raise BenchError(f"{path}: a --streaming run's results are not compared (yet)")
    if any("round" in r for r in records):
        records = merge_rounds(records)
    for record in records:
        for entry in record.get("load", []):
            if "ci" not in entry:
                add_intervals(entry)
    results["results"] = records
    return results


def _figure(entry: dict[str, Any], name: str) -> dict[str, Any] | None:
    ci = (entry.get("ci") or {}).get(name)
    if ci:
        return dict(ci)
    value = entry.get(name)
    return interval([value]) if value is not None else None


def compare(base: dict[str, Any], new: dict[str, Any], threshold: float) -> list[dict[str, Any]]:
    """Row by row, level by level: each figure's base and new median, the change and whether
    it is significant, and ``regression`` (a significant change for the worse past
    ``threshold``, a fraction). Rows in one file only are listed as such."""

    def rows(results: dict[str, Any]) -> dict[tuple[Any, ...], dict[str, Any]]:
        out = {}
        for record in results["results"]:
            if record.get("error"):
                continue
            for entry in record.get("load", []):
                if entry.get("rps"):
                    key = (record["payload"], record["path"], record["implementation"],
                           level_of(entry))  # fmt: skip
                    out[key] = entry
        return out

    mode, _ = run_levels(new)
    old_rows, new_rows = rows(base), rows(new)
    out = []
    for key in [*old_rows, *(k for k in new_rows if k not in old_rows)]:
        payload, path, implementation, level = key
        row: dict[str, Any] = {"payload": payload, "path": path,
                               "implementation": implementation,
                               "level": level_label(mode, level), "regression": False}  # fmt: skip
        if key not in new_rows or key not in old_rows:
            row["only_in"] = "base" if key in old_rows else "new"
            out.append(row)
            continue
        for name, more_is_better in (("rps", True), ("cpu_us", False), ("client_cpu_us", False)):
            a, b = _figure(old_rows[key], name), _figure(new_rows[key], name)
            if not a or not b or not a["median"]:
                continue
            change = b["median"] / a["median"] - 1
            significant = b["low"] > a["high"] or b["high"] < a["low"]
            worse = change < 0 if more_is_better else change > 0
            row[name] = {"base": a["median"], "new": b["median"], "change": change,
                         "significant": significant}  # fmt: skip
            if significant and worse and abs(change) > threshold:
                row["regression"] = True
            if name == "cpu_us":
                break  # the total stands for the client's share too
        out.append(row)
    return out


_NAMES = {"rps": "req/s", "cpu_us": "CPU us/req", "client_cpu_us": "client CPU us/req"}


def render_servers(base: dict[str, Any], new: dict[str, Any]) -> str | None:
    """The embedded server's front ends in each run, in a line (a change of them moves every
    row's figures); None when neither run started one."""
    servers = [front_ends(results) for results in (base, new)]
    if servers == [None, None]:
        return None
    base_text, new_text = (s[1] if s else "given by --url/--grpc-target" for s in servers)
    if base_text == new_text:
        return f"server front ends (both runs): {new_text}"
    return f"server front ends: {base_text} -> {new_text}"


def render_comparison(rows: list[dict[str, Any]], threshold: float) -> str:
    """The comparison in lines: a row per payload, path, implementation and level."""
    lines = []
    for row in rows:
        label = PATHS[row["path"]].label if row["path"] in PATHS else row["path"]
        head = f"{row['payload']} {label} {row['implementation']} {row['level']}:"
        if "only_in" in row:
            lines.append(f"  {head} only in the {row['only_in']} results")
            continue
        parts = []
        for name, text in _NAMES.items():
            figure = row.get(name)
            if figure is None:
                continue
            noise = "significant" if figure["significant"] else "within noise"
            parts.append(f"{text} {figure['base']:,.0f} -> {figure['new']:,.0f} "
                         f"({figure['change']:+.1%}, {noise})")  # fmt: skip
        mark = "  REGRESSION" if row["regression"] else ""
        lines.append(f"  {head} {'; '.join(parts)}{mark}")
    regressions = sum(row["regression"] for row in rows)
    lines.append(
        f"{regressions} regression{'' if regressions == 1 else 's'} past {threshold:.0%} "
        "(a significant change for the worse: intervals apart)"
    )
    return "\n".join(lines)


def write_comparison_chart(rows: list[dict[str, Any]], path: Path) -> bool:
    """A bar per compared row: the change of requests/s, regressions in red. False (nothing
    written) when matplotlib is not installed or no row has both figures."""
    from oipcodec.bench import chart

    if chart.missing() is not None:
        return False
    bars = [r for r in rows if "rps" in r]
    if not bars:
        return False
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    labels = [f"{r['payload']} {r['path']} {r['implementation']} {r['level']}" for r in bars]
    changes = [r["rps"]["change"] * 100 for r in bars]
    colors = ["tab:red" if r["regression"] else
              "tab:green" if r["rps"]["significant"] and r["rps"]["change"] > 0 else
              "tab:gray" for r in bars]  # fmt: skip
    figure = Figure(figsize=(9, 0.35 * len(bars) + 1.2), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)  # its own canvas: pyplot's global state left alone
    axes = figure.subplots()
    axes.barh(range(len(bars)), changes, color=colors)
    axes.set_yticks(range(len(bars)), labels, fontsize=8)
    axes.invert_yaxis()
    axes.axvline(0, color="black", linewidth=0.8)
    axes.set_xlabel("requests/s change, % (red: regression; grey: within noise)")
    figure.savefig(path, format="png")
    return True
