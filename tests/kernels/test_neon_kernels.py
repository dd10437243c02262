"""The NEON kernels equal the scalar code they stand in for, byte for byte.

x86 builds never compile NEON code, so each check cross-compiles it for AArch64 (GCC and
clang, -Wall -Wextra -Werror) and runs it under qemu-aarch64-static on a sample:
tools/check_neon_writers.sh (the FP32 and FP64 writers, rows in pieces of 1 to 71 elements),
tools/check_int_neon.sh (the integer rows, every type, NEON on and capped off) and
tools/check_lanes_neon.sh (the parser's comma and digit scans against SWAR). The full checks are the
scripts' defaults. Skips without Debian's gcc-aarch64-linux-gnu, clang and qemu-user-static,
unless OIPCODEC_REQUIRE_COMPILERS is set (as .ci/run's clang stage does), which fails instead.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
NEEDED = ("bash", "aarch64-linux-gnu-gcc", "clang") + (
    () if platform.machine() == "aarch64" else ("qemu-aarch64-static",)
)
MISSING = [tool for tool in NEEDED if shutil.which(tool) is None]

# script, its arguments (a sample), lines its output must hold
CHECKS = {
    "float writers": (
        "check_neon_writers.sh",
        ["65537", "0", "200000"],
        ["NEON path chosen by the dispatch: yes"],
    ),
    "integer rows": ("check_int_neon.sh", ["20000"], ["differences: 0"]),
    "parser comma scan": ("check_lanes_neon.sh", ["5000"], []),
}


@pytest.mark.parametrize("kernel", sorted(CHECKS))
def test_neon_kernel_equals_the_scalar_code_on_a_sample(kernel: str) -> None:
    script, arguments, required = CHECKS[kernel]
    if not (TOOLS / script).exists():
        pytest.skip(f"no {TOOLS / script} (an installed copy)")
    if MISSING:
        if os.environ.get("OIPCODEC_REQUIRE_COMPILERS"):
            pytest.fail(f"OIPCODEC_REQUIRE_COMPILERS is set, but {', '.join(MISSING)} missing")
        pytest.skip(f"needs {', '.join(MISSING)}")
    result = subprocess.run(
        ["bash", str(TOOLS / script), *arguments], capture_output=True, text=True, timeout=900
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    lines = result.stdout.splitlines()
    for line in required:
        assert line in lines, output
    counts = [line for line in lines if "differ" in line]
    assert counts, output  # the check reported what it compared
    assert all(line.rstrip().endswith((" 0", " 0 differing batches")) for line in counts), output
