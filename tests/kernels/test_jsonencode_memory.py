"""The native JSON writer's own buffers are visible to tracemalloc, so the leak tests see them.

It allocates with ``PyMem_RawMalloc`` (as framing.pyx does), which tracemalloc traces; libc's
``malloc`` is invisible to it, and a leak there would pass every tracemalloc test. Each test
here fails if the buffer goes back to libc: the BYTES pieces array (16 bytes per element)
shows in the peak of a call and is gone after it; the 16-bit float text table, built once per
process and kept, shows after the first call.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

from oipcodec import kernels

pytestmark = pytest.mark.skipif(not kernels.native_available(), reason="native kernels not built")

PIECE = 16  # sizeof(oipcodec_piece): a pointer and a ptrdiff_t


def test_bytes_pieces_buffer_is_traced_and_freed() -> None:
    native = kernels.load("native")
    n = 200_000
    values = np.array([b""] * n, dtype=object)
    native.array_to_json(values, "BYTES")  # warm up: first-call allocations are not counted
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        text = native.array_to_json(values, "BYTES")
        peak = tracemalloc.get_traced_memory()[1] - start
        size = len(text)
        del text
        gc.collect()
        after = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    # Without the pieces array the peak is the element list (8 bytes each) and the text.
    assert peak >= n * PIECE + size, f"peak {peak} bytes: the pieces array was not traced"
    assert after < 8 * 1024, f"{after} bytes still traced after the call"


def test_half_float_table_is_traced() -> None:
    # A fresh process: the table is built on the first FP16 call and kept for the process.
    code = textwrap.dedent(
        """
        import tracemalloc
        import numpy as np
        from oipcodec import kernels
        native = kernels.load("native")
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        native.array_to_json(np.zeros(4, np.float16), "FP16")
        print(tracemalloc.get_traced_memory()[0] - start)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    kept = int(result.stdout.split()[-1])
    assert kept >= 65536 * 17, f"{kept} bytes traced: the FP16 text table was not"
