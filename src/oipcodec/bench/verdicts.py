"""Medians, confidence intervals and verdicts: what a run may claim, given its noise.

Each figure of a row (requests/s, client and server CPU microseconds per request) has samples:
one per round with ``--rounds N`` (N of at least 2), else one per reported window. A figure is
their median, with a 95% bootstrap interval of the median (a fixed seed; with 3 to 5 samples
the interval is their whole range). Two rows differ only where their intervals do not overlap.

Native against pure on a path is read from ratios, one per round (the two measured seconds
apart, so the machine's load cancels out). It is named ``faster`` or ``slower`` only where CPU
per request differs by :data:`CPU_MARGIN` at least over the whole interval of its ratio and
requests/s agree by their median; otherwise it is "no difference within noise", with why.
CPU per request carries the verdict because it holds on a busy machine. "Best" of a payload is
the highest median requests/s; rows whose intervals reach it are tied, and a tie names no best.
Stability marks never decide a verdict (docs/benchmarks.md, "Rounds, intervals and verdicts").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from oipcodec.bench.load import level_of

__all__ = [
    "FIGURES",
    "CPU_MARGIN",
    "RESAMPLES",
    "STALL",
    "ahead",
    "best_and_tied",
    "interval",
    "merge_rounds",
    "native_verdicts",
    "row_key",
    "top_entry",
]

#: Bootstrap resamples per interval.
RESAMPLES = 2000
#: The figures that get an interval, and whether more of it is better.
FIGURES = {"rps": True, "client_cpu_us": False, "server_cpu_us": False, "cpu_us": False}

NO_DIFFERENCE = "no difference within noise"
#: The least ratio of CPU per request a verdict names. The rounds of a run share its
#: servers, so what differs from one run to the next (where each run's processes land) is not
#: in their spread: on a shared machine the ratio of rows where native and pure do the same
#: work moves by tens of percent between runs (docs/measurements.md), where the rows that
#: native's kernels speed up are twice as cheap or more.
CPU_MARGIN = 1.5
#: A round in which a side's requests/s are its median's over this or less is a stall.
STALL = 3.0


def interval(values: Sequence[float], confidence: float = 0.95) -> dict[str, Any] | None:
    """``{"median", "low", "high", "n"}`` of ``values`` (None when there are none)."""
    data = np.asarray([v for v in values if v is not None], dtype=float)
    if data.size == 0:
        return None
    median = float(np.median(data))
    if data.size == 1:
        return {"median": median, "low": median, "high": median, "n": 1}
    rng = np.random.default_rng(0)
    draws = rng.choice(data, size=(RESAMPLES, data.size), replace=True)
    medians = np.median(draws, axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return {"median": median, "low": float(low), "high": float(high), "n": int(data.size)}


def _samples(entry: dict[str, Any]) -> dict[str, list[float]]:
    """A load entry's samples of each figure: its rounds', else its reported windows'."""
    rounds = entry.get("rounds")
    source = rounds if rounds else entry.get("windows", [])[-3:]
    out: dict[str, list[float]] = {name: [] for name in FIGURES}
    for sample in source:
        if not sample.get("rps"):
            continue
        out["rps"].append(sample["rps"])
        client, server = sample.get("client_cpu_us"), sample.get("server_cpu_us")
        if client is not None:
            out["client_cpu_us"].append(client)
        if server is not None:
            out["server_cpu_us"].append(server)
        if client is not None and server is not None:
            out["cpu_us"].append(client + server)
    return out


def add_intervals(entry: dict[str, Any]) -> None:
    """Set ``entry["ci"]``: each figure's median and interval, and where the samples came
    from (``rounds`` or ``windows``)."""
    samples = _samples(entry)
    entry["ci"] = {name: interval(values) for name, values in samples.items()}
    entry["ci"]["source"] = "rounds" if entry.get("rounds") else "windows"


def row_key(record: dict[str, Any]) -> tuple[str, str, str]:
    return record["payload"], record["path"], record["implementation"]


#: A round's figures kept per load entry of a merged record.
_ROUND_FIGURES = ("rps", "p50_ms", "p99_ms", "client_cpu_us", "server_cpu_us", "stable")


def merge_rounds(
    records: Sequence[dict[str, Any]], stability: float = 0.10
) -> list[dict[str, Any]]:
    """One record per payload, path and implementation from the rounds' records (in the
    order first seen). A level's entry is the round whose requests/s is the median's (its
    latency and windows with it), its ``rps`` the median, ``rounds`` each round's figures
    (with the record's ``round`` and ``turn``, its place in the order measured), and
    ``stable`` whether the interval of the rounds' median requests/s is within
    ``stability`` (high / low - 1; with up to 5 rounds, their range); every entry gets its
    intervals (:func:`add_intervals`). An error in any round is the row's error."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(row_key(record), []).append(record)
    merged = []
    for group in groups.values():
        base = dict(group[0])
        base.pop("round", None)
        base.pop("turn", None)
        base["rounds"] = len(group)
        errors = [r["error"] for r in group if r.get("error")]
        if errors:
            base["error"] = errors[0]
        levels: dict[float, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        for record in group:
            for entry in record.get("load", []):
                levels.setdefault(level_of(entry), []).append((record, entry))
        if len(group) > 1 and levels:
            base["load"] = []
            for pairs in levels.values():
                entries = [entry for _, entry in pairs]
                answered = [e for e in entries if e.get("rps")]
                if not answered:
                    base["load"].append(entries[0])
                    continue
                answered.sort(key=lambda e: e["rps"])
                entry = dict(answered[(len(answered) - 1) // 2])
                entry["rps"] = float(np.median([e["rps"] for e in answered]))
                entry["rounds"] = [
                    {**{k: e.get(k) for k in _ROUND_FIGURES}, "round": r.get("round"),
                     "turn": r.get("turn")}
                    for r, e in pairs
                ]  # fmt: skip
                # The rounds are the samples: the interval of their median, not each round's
                # windows', is the noise a reader must see. With up to 5 rounds it is their
                # whole range; more rounds pin the median down past a stray round, where a
                # range could only widen.
                rates = interval([e["rps"] for e in answered])
                entry["stable"] = (
                    len(answered) == len(entries)
                    and rates is not None
                    and rates["high"] <= rates["low"] * (1 + stability)
                )
                base["load"].append(entry)
        for entry in base.get("load", []):
            add_intervals(entry)
        merged.append(base)
    return merged


def top_entry(record: dict[str, Any]) -> dict[str, Any] | None:
    """The load entry at the highest level that answered."""
    loads = [entry for entry in record.get("load", []) if entry.get("requests")]
    return max(loads, key=level_of) if loads else None


def _cpu(figures: dict[str, Any], total: bool) -> float | None:
    """CPU microseconds per request of a round or an entry: client + server with ``total``,
    else the client's."""
    client, server = figures.get("client_cpu_us"), figures.get("server_cpu_us")
    if not total:
        return client
    return None if client is None or server is None else client + server


def _ratios(a: dict[str, Any], b: dict[str, Any], total: bool) -> tuple[Any, Any]:
    """The intervals of ``a``'s requests/s and CPU per request over ``b``'s. With rounds on
    both, one ratio a round (the two measured seconds apart, so a change of the machine's
    load between rounds cancels out); else the ratio of the two intervals' far ends."""
    pairs = {r.get("round"): r for r in b.get("rounds") or ()}
    rounds = [(r, pairs[r.get("round")]) for r in a.get("rounds") or () if r.get("round") in pairs]
    rounds = [(x, y) for x, y in rounds if x.get("rps") and y.get("rps")]
    if len(rounds) >= 2:
        # A round in which the machine stalled either side (its requests/s a third of its
        # median or less) measures the machine: few answers carry the idle CPU, so its CPU
        # per request is inflated too. It is left out while two rounds remain.
        floors = [float(np.median([pair[i]["rps"] for pair in rounds])) / STALL for i in (0, 1)]
        kept = [(x, y) for x, y in rounds if x["rps"] > floors[0] and y["rps"] > floors[1]]
        rounds = kept if len(kept) >= 2 else rounds
        rates = [x["rps"] / y["rps"] for x, y in rounds]
        cpus = [(_cpu(x, total), _cpu(y, total)) for x, y in rounds]
        costs = [x / y for x, y in cpus if x and y]
        return interval(rates), interval(costs)
    ca, cb = a.get("ci") or {}, b.get("ci") or {}
    name = "cpu_us" if total else "client_cpu_us"
    out: list[dict[str, Any] | None] = []
    for x, y in ((ca.get("rps"), cb.get("rps")), (ca.get(name), cb.get(name))):
        if not x or not y or not y["low"] or not y["high"]:
            out.append(None)
            continue
        out.append({"median": x["median"] / y["median"], "low": x["low"] / y["high"],
                    "high": x["high"] / y["low"]})  # fmt: skip
    return out[0], out[1]


def verdict(a: dict[str, Any], b: dict[str, Any]) -> str:
    """What entry ``a`` is against ``b`` (each with ``ci``, and ``rounds`` when measured in
    rounds): ``faster`` where its CPU per request is at most 1/:data:`CPU_MARGIN` of
    ``b``'s beyond the noise (the whole interval of the ratio) and its requests/s agree (the
    ratio's median above 1); ``slower`` the reverse; else no difference within noise, saying
    why when one figure parted."""
    total = bool((a.get("ci") or {}).get("cpu_us") and (b.get("ci") or {}).get("cpu_us"))
    rates, costs = _ratios(a, b, total)
    cost = 0
    if costs and costs["high"] <= 1 / CPU_MARGIN:
        cost = 1
    elif costs and costs["low"] >= CPU_MARGIN:
        cost = -1
    # Requests/s are what a busy machine moves most: one stalled round can put a side 5x
    # behind, so they must agree (their median) rather than part in every round.
    rate = 0 if not rates else 1 if rates["median"] > 1 else -1 if rates["median"] < 1 else 0
    if cost and rate == cost:
        return "faster" if rate > 0 else "slower"
    if cost:
        return f"{NO_DIFFERENCE} (requests/s and CPU per request disagree)"
    if rates and (rates["low"] > 1 or rates["high"] < 1):
        return f"{NO_DIFFERENCE} (requests/s {'higher' if rate > 0 else 'lower'}; CPU per " \
            f"request not {CPU_MARGIN:g}x apart)"  # fmt: skip
    return NO_DIFFERENCE


def ahead(verdict: str) -> str:
    """Which side a verdict puts ahead: ``native`` (faster), ``pure`` (slower) or
    ``neither`` (no difference within noise, whatever the note): what must not change
    between runs of the same rows."""
    if verdict.startswith("faster"):
        return "native"
    if verdict.startswith("slower"):
        return "pure"
    return "neither"


def native_verdicts(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Per payload and path, native against pure at the highest level: :func:`verdict`."""
    rows = {row_key(r): r for r in records if not r.get("error")}
    out: dict[str, dict[str, str]] = {}
    for (payload, path, implementation), record in rows.items():
        if implementation != "native" or (payload, path, "pure") not in rows:
            continue
        a, b = top_entry(record), top_entry(rows[(payload, path, "pure")])
        if a is None or b is None or "ci" not in a or "ci" not in b:
            continue
        out.setdefault(payload, {})[path] = verdict(a, b)
    return out


def best_and_tied(records: Sequence[dict[str, Any]]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Per payload: the best ``path/implementation`` (highest median requests/s at the
    highest level, beyond the noise of every other row), and, where rows are within the
    noise of the highest, those rows (then there is no best)."""
    tops: dict[str, list[tuple[dict[str, Any], str]]] = {}
    for record in records:
        entry = top_entry(record)
        if record.get("error") or entry is None or not entry.get("rps"):
            continue
        key = f"{record['path']}/{record['implementation']}"
        tops.setdefault(record["payload"], []).append((entry, key))
    best: dict[str, str] = {}
    tied: dict[str, list[str]] = {}
    for payload, entries in tops.items():
        entries.sort(key=lambda item: -item[0]["rps"])
        first, key = entries[0]
        first_ci = (first.get("ci") or {}).get("rps")
        within = [
            other_key
            for other, other_key in entries[1:]
            if first_ci
            and (other.get("ci") or {}).get("rps")
            and other["ci"]["rps"]["high"] >= first_ci["low"]
        ]
        if within:
            tied[payload] = [key, *within]
        else:
            best[payload] = key
    return best, tied
