"""benchmarks/load/adapters.py, without the peers: the page it writes from the rows the peers'
runners give, and a peer that cannot run here named with the reason instead of measured."""

from __future__ import annotations

import os

import pytest

from benchmarks.load import adapters


def _rows(peer: str, case: str, better: str, pairs: list[tuple[float, float]]) -> list[dict]:
    unit = "req/s" if better == "higher" else "ms"
    return [{"peer": peer, "case": case, "round": i + 1, "unit": unit, "better": better,
             "stock": s, "adapter": a} for i, (s, a) in enumerate(pairs)]  # fmt: skip


def test_gain_reads_rates_and_costs_each_their_way() -> None:
    assert adapters.gain(_rows("p", "c", "higher", [(10, 50)])[0]) == 5.0
    assert adapters.gain(_rows("p", "c", "lower", [(10, 2)])[0]) == 5.0


def test_page_gives_medians_gains_targets_and_what_was_not_measured() -> None:
    results = {
        "mlserver": (
            _rows("MLServer", "image JSON", "higher", [(20, 100), (25, 90), (22, 70)]),
            None,
        ),
        "tritonclient": (_rows("tritonclient", "image JSON FP32", "lower", [(150, 50)]), None),
        "kserve": ([], "ModuleNotFoundError: No module named 'x'"),
    }
    text = adapters.page(results, "python benchmarks/load/adapters.py", "today", "a machine")
    assert text.startswith("# What the adapters buy\n")
    # medians 22 and 90; gains 5.0, 3.6, 3.18 -> 3.6, under the 4x target
    assert "| MLServer | image JSON | req/s | 22 | 90 | 3.6x | 4x (not met) |" in text
    assert "| tritonclient | image JSON FP32 | ms | 150 | 50 | 3.0x | 5x (not met) |" in text
    assert "- kserve: not measured in this sitting (ModuleNotFoundError" in text
    assert "- Command: `python benchmarks/load/adapters.py`" in text
    assert "| MLServer | image JSON | 3 | 22 | 70 | 3.18x |" in text


def test_a_peer_that_cannot_run_is_named_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the Triton environment the Triton Python backend's runner cannot start a server.
    monkeypatch.delenv("OIPCODEC_TRITON_HOME", raising=False)
    rows, why = adapters.run_peer("triton-python", ["--rounds", "1"])
    assert rows == []
    assert why is not None and "OIPCODEC_TRITON_HOME" in why, why


def test_the_tritonclient_runner_gives_a_row_per_image_mode_and_round() -> None:
    """benchmarks/load/tritonclient_install.py, one request a round: the rows adapters.py
    reads, stock first in round 1, and install() undone after each round."""
    pytest.importorskip("tritonclient.http")
    pytest.importorskip("uvicorn")
    from benchmarks.load.tritonclient_install import run_tritonclient, summary
    from oipcodec.compat import tritonclient as compat

    rows = run_tritonclient(rounds=1, requests=1)
    cases = ["image JSON FP32", "image JSON UINT8", "BYTES binary 1,000 x 64 B"]
    assert [(r["case"], r["mode"]) for r in rows] == [
        (case, mode) for case in cases for mode in ("stock", "install()")
    ]
    assert all(r["total"] > 0 for r in rows)
    assert list(summary(rows)) == cases
    assert not compat.installed()


def test_the_mlserver_runners_load_counts_answers_and_server_cpu() -> None:
    """benchmarks/load/mlserver_adapter.py's closed loop and CPU count, against oipcodec's own
    server (MLServer itself needs its environment): answers counted, CPU per request of the
    server's process tree."""
    pytest.importorskip("uvicorn")
    from benchmarks.load import mlserver_adapter
    from oipcodec.testing import background

    body = mlserver_adapter.bodies()["small JSON"]
    assert mlserver_adapter.tree_cpu(os.getpid()) > 0
    with background() as server:
        assert server.http_port is not None
        rate, cost = mlserver_adapter.load(server.http_port, body, 1.0, 2, pid=os.getpid())
    assert rate > 0 and cost >= 0


def test_a_figure_of_zero_gives_no_ratio_instead_of_failing() -> None:
    row = _rows("p", "c", "lower", [(1.0, 0.0)])[0]
    assert adapters.gain(row) != adapters.gain(row)  # NaN
