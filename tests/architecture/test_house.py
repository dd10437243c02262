"""The rules of the kernel layout: one family, one name in _native, _pure and _shared; the
facade re-exports exactly the kernels; twins share their contract and their C constants."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

from oipcodec import _pure, _shared, kernels

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "oipcodec"


def test_families_are_the_pure_modules_and_each_has_a_shared_module() -> None:
    pure = {m.name for m in pkgutil.iter_modules(_pure.__path__) if not m.name.startswith("_")}
    shared = {m.name for m in pkgutil.iter_modules(_shared.__path__)}
    assert set(kernels.FAMILIES) == pure
    assert set(kernels.FAMILIES) <= shared


def test_facade_exports_exactly_the_kernels_of_one_implementation() -> None:
    pure = kernels.load("pure")
    names = set(vars(pure)) - {"IMPLEMENTATION"}
    facade_kernels = set(kernels.__all__) - {
        "FAMILIES",
        "IMPLEMENTATION",
        "Kernels",
        "load",
        "native_available",
    }
    assert facade_kernels == names
    chosen = kernels.load(kernels.IMPLEMENTATION)
    for name in names:
        assert getattr(kernels, name) is getattr(chosen, name), name


@pytest.mark.parametrize("family", kernels.FAMILIES)
def test_twins_carry_the_one_contract(both, family: str) -> None:
    contracts = importlib.import_module(f"oipcodec._shared.{family}").CONTRACTS
    module = importlib.import_module(f"oipcodec._pure.{family}")
    for impl in both:
        for name in module.__all__:
            kernel = getattr(impl, name)
            if name in contracts:
                assert kernel.__doc__ == contracts[name], (impl.IMPLEMENTATION, name)
            else:  # one function serving both twins (little_endian_view)
                assert kernel.__doc__, name


def test_no_native_module_imports_a_pure_one() -> None:
    for pyx in (SRC / "_native").glob("*.pyx"):
        assert not re.search(r"oipcodec\._pure|from oipcodec import _pure", pyx.read_text()), pyx


def test_c_constants_are_generated_from_the_shared_tables() -> None:
    if not (ROOT / "tools" / "gen_constants.py").exists() or not (SRC / "_native").is_dir():
        pytest.skip("tools/ is not next to the tests (an installed wheel)")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_constants.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
