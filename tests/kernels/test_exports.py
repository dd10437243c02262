"""Each compiled kernel module exports one symbol, its ``PyInit_<module>``: setup.py compiles
with ``-fvisibility=hidden`` (GCC and clang), so Cython's globals and the ``target_clones``
resolvers (which clang would otherwise export) stay inside the module. Run on whichever compiler
built the installed modules (.ci/run's clang stage runs it on clang's). ELF only (``nm -D``);
skips where the kernels are not built."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import oipcodec._native as native

BUILT = sorted(Path(native.__path__[0]).glob("*.so"))


@pytest.mark.skipif(not BUILT, reason="no compiled kernel module (.so) here")
@pytest.mark.parametrize("module", BUILT, ids=lambda p: p.name.partition(".")[0])
def test_module_exports_only_its_init(module: Path) -> None:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm is not on PATH")
    if module.read_bytes()[:4] != b"\x7fELF":
        pytest.skip(f"{module.name} is not ELF")
    listing = subprocess.run(
        [nm, "-D", "--defined-only", str(module)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    exported = {line.split()[-1] for line in listing.splitlines() if line.strip()}
    assert exported == {f"PyInit_{module.name.partition('.')[0]}"}, sorted(exported)
