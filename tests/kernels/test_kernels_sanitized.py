"""The native request path's Cython under AddressSanitizer and UBSan, built by GCC and by clang:
the extension modules a REST request runs through on the native front end (``http11``, the
native HTTP/1.1 protocol; ``fusedrest``, the fused kernels; ``jsondecode`` and ``jsonencode``,
whose C they call; ``counters``, which counts each answer) are built with ``OIPCODEC_SANITIZE=1`` into a copy of the tree (the other
native modules are the installed ones, uninstrumented), then, with the compiler's ASan runtime
preloaded into this interpreter, the fused kernels' differential fuzzer runs a bounded count
and pytest runs the fused kernel tests and the native protocol's server tests (real servers on
127.0.0.1). The sanitizers' reports go to files of the run's (``log_path``), GCC's UBSan's to
standard error (uncaptured: pytest runs with ``-s``): any report, or a nonzero exit, fails the
test with the report in the message. A missing compiler or
runtime skips, unless ``OIPCODEC_REQUIRE_COMPILERS`` names it (as .ci/run's clang stage does);
without that variable the whole file skips (a few minutes: docs/development.md, "Sanitizers")."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest

import oipcodec

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = {n.strip() for n in os.environ.get("OIPCODEC_REQUIRE_COMPILERS", "").split(",")}
# The request path's modules; fusedrest cimports jsondecode and jsonencode, so those must be the
# sanitized builds too (their C runs inside fusedrest's calls); counters counts each answer.
MODULES = ("fusedrest", "jsondecode", "jsonencode", "http11", "counters")
# The compiler's shared ASan runtime, preloaded into a CPython that was not built with it. Both
# runtimes carry the UBSan handlers as well (clang's -shared objects leave them to the runtime).
RUNTIME = {"gcc": "libasan.so", "clang": "libclang_rt.asan-x86_64.so"}
# Bounded for CI's time (docs/development.md gives the figure); a long run is the tool's own.
FUZZ_CASES = 5_000
# The fused kernels' tests, and the servers on the native protocol: http11.pyx's Connection
# (test_server_native.py) and the fused path behind it (test_server_fused.py).
TESTS = [
    "tests/kernels/test_fusedrest.py",
    "tests/kernels/test_counters.py",
    "tests/server/http11/test_server_fused.py",
    "tests/server/http11/test_server_native.py",
]

pytestmark = [
    # Minutes, not seconds: not part of every suite run (nor of the other CPythons' runs) but of
    # the run that asks for the compilers, .ci/run's clang stage; by hand:
    # OIPCODEC_REQUIRE_COMPILERS=gcc pytest tests/kernels/test_kernels_sanitized.py
    pytest.mark.skipif(
        not REQUIRED - {""}, reason="runs where OIPCODEC_REQUIRE_COMPILERS is set (minutes)"
    ),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF runtimes (LD_PRELOAD)"),
    pytest.mark.skipif(
        not (ROOT / "setup.py").exists() or not (ROOT / "tools").exists(),
        reason="setup.py and tools/ are not next to the tests (an installed wheel)",
    ),
]


class Sanitized(NamedTuple):
    env: dict[str, str]
    #: under it, each run's directory for the sanitizers' reports (ASan's and UBSan's log_path)
    logs: Path


def _missing(compiler: str, why: str) -> None:
    if compiler in REQUIRED or "all" in REQUIRED:
        pytest.fail(f"OIPCODEC_REQUIRE_COMPILERS names {compiler}, but {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sources both compilers build from: Cython's C is written there once."""
    if importlib.util.find_spec("Cython") is None:
        pytest.fail(
            "setup.py runs in this environment: it needs pyproject.toml's build requirements"
            " (Cython, setuptools), which .ci/run installs into the clang stage's"
        )
    tree = tmp_path_factory.mktemp("sanitized-tree")
    shutil.copy2(ROOT / "setup.py", tree)
    ignore = shutil.ignore_patterns("*.so", "*.o", "__pycache__", "build")
    for part in ("src", "csrc"):
        shutil.copytree(ROOT / part, tree / part, ignore=ignore)
    return tree


@pytest.fixture(scope="module", params=["gcc", "clang"])
def sanitized(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tree: Path
) -> Sanitized:
    """The environment that runs the request path's modules, built by this compiler with ASan and
    UBSan: PYTHONPATH on a package of its own, the runtime preloaded, reports to files."""
    compiler = str(request.param)
    if not shutil.which(compiler):
        _missing(compiler, f"{compiler} is not on PATH")
    found = subprocess.run(
        [compiler, f"-print-file-name={RUNTIME[compiler]}"], capture_output=True, text=True
    ).stdout.strip()
    if not os.path.isabs(found) or not os.path.exists(found):
        _missing(compiler, f"{compiler} has no shared ASan runtime ({RUNTIME[compiler]})")
    work = tmp_path_factory.mktemp(f"sanitized-{compiler}")
    build = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "-b", str(work), "-t", str(work / "obj")],
        cwd=tree,
        env={
            **os.environ,
            "CC": compiler,
            "OIPCODEC_SANITIZE": "1",
            "OIPCODEC_ONLY": ",".join(MODULES),
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    native = work / "oipcodec" / "_native"
    built = {so.name.split(".")[0]: so for so in native.glob("*.so")}
    assert sorted(built) == sorted(MODULES), built
    # The package around them: the copy's Python, the installed package's other native modules
    # (an editable install's or site-packages'), uninstrumented.
    shutil.copytree(tree / "src" / "oipcodec", work / "oipcodec", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.c", "*.so"))  # fmt: skip
    installed = Path(oipcodec.__file__).parent
    for so in installed.rglob("*.so"):
        target = work / "oipcodec" / so.relative_to(installed)
        if target.parent.exists() and not target.exists():
            shutil.copy2(so, target)
    logs = work / "logs"
    logs.mkdir()
    env = {
        **os.environ,
        "LD_PRELOAD": found,
        "PYTHONPATH": str(work),
        "OIPCODEC_EXPECT_NATIVE": "1",
        # CPython keeps memory at exit by design: no leak check. Each object in a heap block of
        # its own, so that a read past a small body is past ASan's redzone, not into an arena.
        "PYTHONMALLOC": "malloc",
    }
    sanitized = Sanitized(env, logs)
    # The modules imported are the sanitized builds.
    probe = "".join(f"import oipcodec._native.{m} as m; print(m.__file__)\n" for m in MODULES)
    assert _run(sanitized, "-c", probe).split() == [str(built[m]) for m in MODULES]
    return sanitized


def _run(sanitized: Sanitized, *args: str) -> str:
    """Run this interpreter under the sanitizers from the checkout; fail with the reports if
    there are any, or with the output's tail on a nonzero exit. Gives the standard output."""
    logs = Path(tempfile.mkdtemp(dir=sanitized.logs))  # this run's reports alone
    env = {
        **sanitized.env,
        "ASAN_OPTIONS": f"detect_leaks=0:halt_on_error=1:log_path={logs / 'asan'}",
        "UBSAN_OPTIONS": f"halt_on_error=1:print_stacktrace=1:log_path={logs / 'ubsan'}",
    }
    result = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    reports = sorted(logs.iterdir())
    text = "".join(f"--- {r.name}\n{r.read_text(errors='replace')[-6000:]}" for r in reports)
    assert not reports, f"a sanitizer report from {args[:2]}:\n{text}"
    # GCC's UBSan (libubsan, a runtime of its own) writes to standard error whatever log_path says.
    assert "runtime error:" not in result.stderr, (
        f"a UBSan report from {args[:2]}:\n{result.stderr}"
    )
    out = f"{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
    assert result.returncode == 0, f"{args[:2]} exited {result.returncode}:\n{out}"
    return result.stdout


def test_the_fused_kernels_fuzzer_under_the_sanitizers(sanitized: Sanitized) -> None:
    out = _run(sanitized, "tools/fusedrest_fuzz.py", "--count", str(FUZZ_CASES), "--seed", "5")
    assert f"{FUZZ_CASES} cases" in out and "new failures: 0" in out, out[-2000:]


def test_the_request_path_tests_under_the_sanitizers(sanitized: Sanitized) -> None:
    # -s: pytest's capture would keep a report on standard error (GCC's UBSan) from the output.
    out = _run(sanitized, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", "-s", *TESTS)
    # A skip would hide a test from the sanitizers (a missing peer, a protocol not built).
    assert " passed" in out and "skipped" not in out, out[-2000:]
