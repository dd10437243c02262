"""The chart of ``oipcodec bench`` (``throughput.png``), drawn with matplotlib.

One figure per run, a row of panels per payload: requests/s at the highest concurrency level,
a horizontal bar per encoding path and implementation, on a log axis (JSON and binary paths
differ by orders of magnitude); latency at that level (p50 a bar, p99 a tick joined to it);
and, when peer servers' codecs were measured, each peer's server codec time per request next
to oipcodec's own, hatched: codec-only figures are never drawn among end-to-end ones. One
colour per implementation across the panels, one legend; a payload's most requests/s reads
"best", a figure that never stabilised "~ unstable"; the title names the machine (CPUs,
platform, Python) and the date of the run; a path an implementation cannot take reads "not
supported", a failed one "error".

matplotlib (the ``bench`` extra) is imported only when the chart is drawn, through its Agg
canvas, so the global backend of a process that imported :mod:`oipcodec.bench` stays as it
was; :func:`missing` says when it is not installed, and ``oipcodec bench`` then skips the
chart with a note.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oipcodec.bench.encoding import PATHS
from oipcodec.bench.load import level_label, level_of, run_levels
from oipcodec.bench.paths import IMPLEMENTATIONS
from oipcodec.bench.paths.peers import SERVER_PEERS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["COLOURS", "draw_chart", "missing", "write_chart", "write_pareto"]

#: Bar colours per implementation (others: grey), the same in every panel.
COLOURS = {
    "native": "#1f77b4",
    "pure": "#ff7f0e",
    "tritonclient": "#7f7f7f",
    "kserve": "#2ca02c",
    "mlserver": "#9467bd",
}
_OTHER = "#b0b0b0"
_INK = "#212529"
_MUTED = "#6c757d"
_FONT = 8.5
_DPI = 100
#: Inches per bar, and the gap between two encoding paths in bars.
_SLOT = 0.2
_GAP = 0.6
_WIDTH = {2: 13.0, 3: 17.0}
_COLUMNS = (
    "End to end: requests/s",
    "End to end: latency",
    "Codec only: the server's decode + encode, in-process",
)


def missing() -> str | None:
    """None when matplotlib can be imported, else a one-line note saying the chart is skipped."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "no chart: matplotlib is not installed (pip install 'oipcodec[bench]')"
    return None


@dataclass
class _Bar:
    path: str
    implementation: str
    value: float | None = None  # requests/s, or server codec microseconds
    p50: float | None = None
    p99: float | None = None
    note: str | None = None  # "not supported" / "error" instead of a bar
    best: bool = False
    unstable: bool = False  # never stable: its label says so


@dataclass
class _Panel:
    """The bars of one panel, grouped by encoding path in PATHS order."""

    bars: list[_Bar]

    def groups(self) -> list[tuple[str, list[_Bar]]]:
        order = {name: i for i, name in enumerate(PATHS)}
        rank = {name: i for i, name in enumerate(IMPLEMENTATIONS)}
        paths = sorted({b.path for b in self.bars}, key=lambda p: order.get(p, len(order)))
        return [
            (
                path,
                sorted(
                    (b for b in self.bars if b.path == path),
                    key=lambda b: rank.get(b.implementation, len(rank)),
                ),
            )
            for path in paths
        ]

    def positions(self) -> tuple[list[tuple[float, _Bar]], list[tuple[float, str]], float]:
        """Each bar's y, each path's label y (its group's middle), and the total height."""
        y = 0.0
        placed: list[tuple[float, _Bar]] = []
        labels: list[tuple[float, str]] = []
        for path, bars in self.groups():
            labels.append((y + (len(bars) - 1) / 2, PATHS[path].label if path in PATHS else path))
            for bar in bars:
                placed.append((y, bar))
                y += 1
            y += _GAP
        return placed, labels, y - _GAP


def _panels(results: dict[str, Any]) -> list[tuple[str, _Panel, _Panel | None]]:
    """Per payload with an end-to-end figure: its title, the end-to-end bars and (when a peer
    server's codec was measured) the server codec bars."""
    _, levels = run_levels(results)
    top = max(levels)
    out = []
    for name, payload in results["payloads"].items():
        records = [r for r in results["results"] if r["payload"] == name]
        load: list[_Bar] = []
        codec: list[_Bar] = []
        for record in records:
            path, implementation = record["path"], record["implementation"]
            if record.get("unsupported"):
                load.append(_Bar(path, implementation, note="not supported"))
                if implementation in SERVER_PEERS:
                    codec.append(_Bar(path, implementation, note="not supported"))
                continue
            server_us = (record.get("codec_us") or {}).get("server")
            if server_us:
                codec.append(_Bar(path, implementation, server_us))
            if record.get("codec_only"):
                continue
            if record.get("error"):
                load.append(_Bar(path, implementation, note="error"))
                continue
            entry = next((e for e in record.get("load", []) if level_of(e) == top), None)
            if entry is None or not entry.get("rps"):
                continue
            best = results["best"].get(name) == f"{path}/{implementation}"
            load.append(
                _Bar(
                    path,
                    implementation,
                    entry["rps"],
                    entry.get("p50_ms"),
                    entry.get("p99_ms"),
                    best=best,
                    unstable=entry.get("stable") is False,
                )
            )
        if not any(b.value for b in load):
            continue
        # A peer server measured codec only has no row among the end-to-end ones.
        sent = {b.implementation for b in load if b.value or b.note == "error"}
        load = [b for b in load if b.implementation not in SERVER_PEERS or b.implementation in sent]
        peers = any(b.implementation in SERVER_PEERS for b in codec)
        shape = "x".join(map(str, payload["shape"]))
        title = f"{name} ({shape} {payload['datatype']})"
        out.append((title, _Panel(load), _Panel(codec) if peers else None))
    return out


def _rate(value: float) -> str:
    """A bar's requests/s: 0.52, 398, 1,982, 123k."""
    if value >= 1e5:
        return f"{value / 1e3:,.0f}k"
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _count(value: float) -> str:
    """A tick label: 0.5, 20, 1k, 20k, 1M."""
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    return f"{value / 1e3:g}k" if value >= 1e3 else f"{value:g}"


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 1 else f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def _latency_text(p50: float, p99: float | None) -> str:
    """p50 / p99 in ms, or in seconds (marked) when p99 reaches a second."""
    if (p99 or p50) < 1000:
        return _ms(p50) + (f" / {_ms(p99)}" if p99 else "")
    return _ms(p50 / 1e3) + (f" / {_ms(p99 / 1e3)}" if p99 else "") + " s"


def _seconds(value: float) -> str:
    """A tick label of the latency axis (ms): 0.1, 10, 100, 1 s, 10 s."""
    return f"{value / 1e3:g} s" if value >= 1e3 else f"{value:g}"


def _us(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def _log_axis(ax: Axes, low: float, high: float, text_inches: float,
              label: Callable[[float], str] = _count) -> None:  # fmt: skip
    """A log x axis from the decade below ``low`` to past ``high``, with room right of the
    longest bar for ``text_inches`` of text, ticks labelled by ``label``."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    left = math.floor(math.log10(low))
    width = ax.get_window_extent().width / _DPI  # inches, before the layout is done
    share = min(0.6, text_inches / max(width, 1e-6))
    right = (math.log10(high) - left * share) / (1 - share)
    ax.set_xscale("log")
    ax.set_xlim(10.0**left, 10.0**right)
    # Under two decades, 2 and 5 are labelled too.
    subs = (1.0, 2.0, 5.0) if right - left <= 2.2 else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10)), numticks=12))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: label(v)))
    ax.grid(axis="x", which="major", color="#dee2e6", linewidth=0.8)
    ax.grid(axis="x", which="minor", color="#f1f3f5", linewidth=0.5)
    ax.set_axisbelow(True)


def _frame(ax: Axes, panel: _Panel, labels: bool) -> list[tuple[float, _Bar]]:
    placed, groups, height = panel.positions()
    ax.set_ylim(height - 0.5 + 0.3, -0.5 - 0.3)
    ax.set_yticks([y for y, _ in groups])
    ax.set_yticklabels([label for _, label in groups])
    ax.tick_params(axis="y", length=0, labelsize=_FONT + 0.5, labelleft=labels)
    ax.tick_params(axis="x", labelsize=_FONT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return placed


def _note(ax: Axes, y: float, bar: _Bar) -> None:
    colour = "#c92a2a" if bar.note == "error" else _MUTED
    ax.annotate(
        f"{bar.implementation}: {bar.note}",
        (0, y),
        xycoords=("axes fraction", "data"),
        xytext=(4, 0),
        textcoords="offset points",
        va="center",
        fontsize=_FONT - 0.5,
        fontstyle="italic",
        color=colour,
    )


def _value_label(ax: Axes, x: float, y: float, text: str, bold: bool = False) -> None:
    """A bar's figure, just after the end of the bar (or of its p99 tick)."""
    ax.annotate(
        text,
        (x, y),
        xytext=(3, 0),
        textcoords="offset points",
        va="center",
        fontsize=_FONT - 0.5,
        fontweight="bold" if bold else "normal",
        color=_INK,
    )


def _at(mode: str, level: float) -> str:
    """``concurrency N`` or ``R req/s (open loop)``: the level the panels show, in words."""
    if mode == "concurrency":
        return f"concurrency {level:g}"
    return "the intervals' rate" if mode == "intervals" else f"{level:g} req/s (open loop)"


def _throughput(ax: Axes, panel: _Panel, top: str) -> None:
    placed = _frame(ax, panel, labels=True)
    values = [b.value for _, b in placed if b.value]
    _log_axis(ax, min(values), max(values), 0.75)
    for y, bar in placed:
        if bar.note:
            _note(ax, y, bar)
            continue
        assert bar.value is not None
        ax.barh(y, bar.value, height=0.8, color=COLOURS.get(bar.implementation, _OTHER))
        text = _rate(bar.value) + (" ~ unstable" if bar.unstable else "")
        _value_label(ax, bar.value, y, text + ("  best" if bar.best else ""), bar.best)
    ax.set_xlabel(f"requests/s at {top}, log scale (more is better)", fontsize=_FONT)


def _latency(ax: Axes, panel: _Panel, top: str) -> None:
    placed = _frame(ax, panel, labels=False)
    values = [v for _, b in placed for v in (b.p50, b.p99) if v]
    if not values:
        ax.text(
            0.5,
            0.5,
            "no latency figures",
            transform=ax.transAxes,
            ha="center",
            color=_MUTED,
            fontsize=_FONT,
        )
        ax.set_xticks([])
        return
    _log_axis(ax, min(values), max(values), 0.95, _seconds)
    for y, bar in placed:
        if bar.note:
            _note(ax, y, bar)
            continue
        if not bar.p50:
            continue
        colour = COLOURS.get(bar.implementation, _OTHER)
        ax.barh(y, bar.p50, height=0.8, color=colour)
        end, text = bar.p50, _latency_text(bar.p50, bar.p99)
        if bar.p99:
            ax.plot([bar.p50, bar.p99], [y, y], color=_INK, linewidth=0.8)
            ax.plot([bar.p99], [y], marker="|", markersize=7, markeredgewidth=1.5, color=_INK)
            end = bar.p99
        _value_label(ax, end, y, text)
    ax.set_xlabel(
        f"latency at {top}, ms, log scale: p50 bar / p99 tick (less is better)",
        fontsize=_FONT,
    )


def _codec(ax: Axes, panel: _Panel) -> None:
    placed = _frame(ax, panel, labels=True)
    values = [b.value for _, b in placed if b.value]
    _log_axis(ax, min(values), max(values), 0.5)
    for y, bar in placed:
        if bar.note:
            _note(ax, y, bar)
            continue
        assert bar.value is not None
        ax.barh(
            y,
            bar.value,
            height=0.8,
            color=COLOURS.get(bar.implementation, _OTHER),
            hatch="////",
            edgecolor="white",
            linewidth=0,
        )
        _value_label(ax, bar.value, y, _us(bar.value))
    ax.set_xlabel("server codec per request, µs, log scale (less is better)", fontsize=_FONT)


def _title(results: dict[str, Any]) -> tuple[str, str]:
    """The heading (version, mode) and the machine line (CPUs, platform, Python, date)."""
    machine = results.get("machine", {})
    cpus = machine.get("cpus")
    parts = [
        f"{cpus} CPU{'s' if cpus != 1 else ''}" if cpus else None,
        machine.get("platform"),
        f"Python {machine['python']}" if machine.get("python") else None,
        str(results["created"]) if results.get("created") else None,
    ]
    mode = []
    if results["options"].get("quick"):
        mode.append("--quick")
    if results.get("interrupted"):
        mode.append("interrupted: partial")
    version = results.get("oipcodec_version")
    heading = f"oipcodec {version} bench" if version else "oipcodec bench"
    heading += f" ({', '.join(mode)})" if mode else ""
    return heading, ", ".join(p for p in parts if p)


def draw_chart(results: dict[str, Any]) -> Figure | None:
    """The chart of a results document (``results.json``) as a matplotlib Figure with an Agg
    canvas, or None when no row has requests/s."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    panels = _panels(results)
    if not panels:
        return None
    mode, levels = run_levels(results)
    top = _at(mode, max(levels))
    columns = 3 if any(codec is not None for _, _, codec in panels) else 2
    heights = [
        max(load.positions()[2], codec.positions()[2] if codec else 0.0) * _SLOT + 1.1
        for _, load, codec in panels
    ]
    header = 0.9
    figure = Figure(
        figsize=(_WIDTH[columns], sum(heights) + header), dpi=_DPI, layout="constrained"
    )
    FigureCanvasAgg(figure)
    top_row, *rows = figure.subfigures(
        len(panels) + 1, 1, height_ratios=[header, *heights], squeeze=False
    )[:, 0]
    for index, (row, (title, load, codec)) in enumerate(zip(rows, panels, strict=True)):
        widths = [1.25, 1.0, 1.0][:columns]
        axes = row.subplots(1, columns, width_ratios=widths)
        if index == 0:
            for ax, heading in zip(axes, _COLUMNS, strict=False):
                ax.set_title(heading, fontsize=_FONT + 1.5, loc="left", color=_INK)
        row.suptitle(title, x=0.005, ha="left", fontsize=_FONT + 2, fontweight="bold")
        _throughput(axes[0], load, top)
        axes[1].sharey(axes[0])
        _latency(axes[1], load, top)
        if columns == 3:
            if codec is not None:
                _codec(axes[2], codec)
            else:
                axes[2].set_axis_off()
    present = {b.implementation for _, load, codec in panels for b in load.bars}
    present |= {b.implementation for _, _, codec in panels if codec for b in codec.bars}
    handles: list[Any] = [
        Patch(color=COLOURS.get(name, _OTHER), label=name)
        for name in sorted(present, key=lambda n: (*IMPLEMENTATIONS, n).index(n))
    ]
    if columns == 3:
        handles.append(
            Patch(
                facecolor=_OTHER,
                hatch="////",
                edgecolor="white",
                linewidth=0,
                label="hatched: codec only (server decode + encode, in-process, no network)",
            )
        )
    heading, machine = _title(results)
    top_row.text(0.5, 0.98, heading, ha="center", va="top", fontsize=_FONT + 4, fontweight="bold")
    top_row.text(0.5, 0.62, machine, ha="center", va="top", fontsize=_FONT + 1.5, color=_MUTED)
    top_row.legend(
        handles=handles,
        loc="lower center",
        ncols=len(handles),
        fontsize=_FONT + 1,
        frameon=False,
        borderaxespad=0.1,
    )
    return figure


def write_chart(results: dict[str, Any], path: str | Path) -> bool:
    """Draw the chart of ``results`` and write it as PNG to ``path``; False (nothing written)
    when no row has requests/s."""
    figure = draw_chart(results)
    if figure is None:
        return False
    figure.savefig(path, format="png")
    return True


def write_pareto(results: dict[str, Any], path: str | Path) -> bool:
    """Requests/s against p99 latency across a sweep's levels, a panel per path and payload,
    a line per implementation (each point a level): where more load stops buying requests/s
    and starts buying latency. False (nothing written) with fewer than three levels or no
    row measured at two of them."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    mode, levels = run_levels(results)
    if len(levels) < 3:
        return False
    panels: dict[tuple[str, str], list[tuple[str, list[dict[str, Any]]]]] = {}
    for record in results["results"]:
        points = sorted((e for e in record.get("load", []) if e.get("rps") and e.get("p99_ms")),
                        key=level_of)  # fmt: skip
        if record.get("error") or len(points) < 2:
            continue
        key = (record["payload"], record["path"])
        panels.setdefault(key, []).append((record["implementation"], points))
    if not panels:
        return False
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)
    figure = Figure(figsize=(5.0 * columns, 3.6 * rows), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for ax, ((payload, name), lines) in zip(axes, panels.items(), strict=False):
        for implementation, points in lines:
            ax.plot([e["p99_ms"] for e in points], [e["rps"] for e in points], marker="o",
                    color=COLOURS.get(implementation, _OTHER), label=implementation)  # fmt: skip
            for entry in points:
                ax.annotate(level_label(mode, level_of(entry)), (entry["p99_ms"], entry["rps"]),
                            fontsize=_FONT - 1.5, color=_MUTED, xytext=(3, 3),
                            textcoords="offset points")  # fmt: skip
        label = PATHS[name].label if name in PATHS else name
        ax.set_title(f"{payload}: {label}", fontsize=_FONT + 1, loc="left")
        ax.set_xlabel("p99 latency, ms", fontsize=_FONT)
        ax.set_ylabel("requests/s", fontsize=_FONT)
        ax.tick_params(labelsize=_FONT - 0.5)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=_FONT - 0.5, frameon=False)
    for ax in axes[len(panels) :]:
        ax.set_axis_off()
    figure.suptitle(_title(results)[0] + ": requests/s against p99 across the levels",
                    fontsize=_FONT + 2)  # fmt: skip
    figure.savefig(path, format="png")
    return True
