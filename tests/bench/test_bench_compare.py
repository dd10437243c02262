"""``oipcodec bench compare`` and ``--slo``: gates on saved results (oipcodec.bench.compare)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oipcodec import cli
from oipcodec.bench.compare import goodput, parse_slo, read_results


def _results(rounds: dict[str, list[tuple[float, float, float]]]) -> dict[str, Any]:
    """A saved run: per implementation, each round's (req/s, CPU us per request, p99 ms) at
    c=8 on REST JSON, as the runner writes them before merging."""
    records = []
    for implementation, figures in rounds.items():
        for number, (rps, cpu, p99) in enumerate(figures):
            records.append({
                "payload": "small", "path": "rest-json", "implementation": implementation,
                "error": None, "round": number,
                "load": [{"level": 8, "concurrency": 8, "requests": 100, "rps": rps,
                          "p50_ms": p99 / 2, "p99_ms": p99, "client_cpu_us": cpu,
                          "server_cpu_us": cpu, "stable": True, "windows": []}],
            })  # fmt: skip
    return {
        "results": records, "options": {"concurrency": [8]},
        "levels": {"mode": "concurrency", "values": [8]},
    }  # fmt: skip


BASE = {"native": [(1000, 100, 5), (1020, 98, 5), (990, 101, 5)],
        "pure": [(500, 300, 9), (510, 290, 9), (505, 295, 9)]}  # fmt: skip


def _save(tmp_path: Path, name: str, results: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(results))
    return str(path)


def test_compare_two_saved_results_within_noise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = {"native": [(1010, 99, 5), (995, 100, 5), (1005, 100, 5)], "pure": BASE["pure"]}
    base, new = _save(tmp_path, "base.json", _results(BASE)), _save(tmp_path, "new.json",
                                                                     _results(same))  # fmt: skip
    assert cli.main(["bench", "compare", base, new]) == 0
    out = capsys.readouterr().out
    assert "small REST JSON flat native c=8: req/s 1,000 -> 1,005 (+0.5%, within noise)" in out
    assert "0 regressions past 5%" in out


def test_compare_exits_1_on_a_regression_past_the_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slower = {"native": [(800, 130, 6), (810, 128, 6), (790, 131, 6)], "pure": BASE["pure"]}
    base, new = _save(tmp_path, "base.json", _results(BASE)), _save(tmp_path, "new.json",
                                                                     _results(slower))  # fmt: skip
    chart = tmp_path / "compare.png"
    assert cli.main(["bench", "compare", base, new, "--chart", str(chart)]) == 1
    out = capsys.readouterr().out
    (native,) = [line for line in out.splitlines() if " native c=8" in line]
    assert "-20.0%, significant" in native and native.endswith("REGRESSION")
    assert "1 regression past 5%" in out
    pytest.importorskip("matplotlib")
    assert chart.stat().st_size > 0
    # Past a threshold of 35% the same changes (-20% req/s, +30% CPU) are none.
    assert cli.main(["bench", "compare", base, new, "--threshold", "35"]) == 0


def test_compare_refuses_an_unreadable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert cli.main(["bench", "compare", str(bad), str(bad)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "bad.json: not a results.json of oipcodec bench" in line


def test_slo_goodput_and_exit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _save(tmp_path, "run.json", _results(BASE))
    report = goodput(read_results(path), parse_slo("p99<8ms"))
    assert report["missed"] == ["small rest-json/pure"]  # its p99 is 9 ms
    assert sorted(row["goodput"] for row in report["rows"]) == [0.0, 1000]
    assert cli.main(["bench", "compare", path, path, "--slo", "p99<8ms"]) == 1
    assert "SLO missed on 1 of 2 rows" in capsys.readouterr().out
    assert cli.main(["bench", "compare", path, path, "--slo", "p99<=9ms"]) == 0
    with pytest.raises(ValueError, match="'p99 under 9' is not a bound"):
        parse_slo("p99 under 9")
