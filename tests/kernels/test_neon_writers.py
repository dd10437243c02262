"""The NEON JSON writers (csrc/oipcodec/json_f32_neon.h, json_f64_neon.h) equal the scalar ones.

x86 builds never compile NEON code, so this cross-compiles it: tools/check_neon_writers.sh
builds the headers for AArch64 with -Wall -Wextra -Werror (GCC and clang) and runs its check
under qemu-aarch64-static on a sample (every 65,537th float32 bit pattern with the edge cases,
200,000 float64 values with theirs), the NEON writers given rows in pieces of 1 to 71 elements.
Skips without Debian's gcc-aarch64-linux-gnu and qemu-user-static (natively on AArch64, only
the compiler is needed). The full checks are the script's defaults and STRIDE 1.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "check_neon_writers.sh"
MISSING = [
    tool
    for tool in ("bash", "aarch64-linux-gnu-gcc")
    + (() if platform.machine() == "aarch64" else ("qemu-aarch64-static",))
    if shutil.which(tool) is None
]

pytestmark = [
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"no {SCRIPT} (an installed copy)"),
    pytest.mark.skipif(bool(MISSING), reason=f"needs {', '.join(MISSING)}"),
]


def test_neon_writers_equal_the_scalar_ones_on_a_sample() -> None:
    """Both NEON writers' text is byte for byte the scalar writers' on the sample."""
    result = subprocess.run(
        ["bash", str(SCRIPT), "65537", "0", "200000"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "NEON path chosen by the dispatch: yes" in lines
    assert any(
        line.startswith("FP32: ") and line.endswith(" 0 differing batches") for line in lines
    )
    assert any(
        line.startswith("FP64: ") and line.endswith(" 0 differing batches") for line in lines
    )
