"""The rules of the kernel layout: one family, one name in _native, _pure and _shared; the
facade re-exports exactly the kernels; twins share their contract and their C constants; the C
headers sit in csrc/oipcodec by job (common, read, write, protobuf, http) and by CPU (x86/, arm64/),
and include across those folders only downward."""

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
CHEADERS = ROOT / "csrc" / "oipcodec"


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


# The folders of csrc/oipcodec: the jobs, and under the JSON reader and writer the vector code of
# each CPU beside the scalar code that chooses it (the job's "generic dispatch"). http/ reads
# the native front end's request heads (a kernel family, twinned in _pure). load/ is the
# bench's HTTP load generator (oipcodec.bench._sender): a tool, not a codec kernel, so it has no
# pure twin in _pure (its Python twin is oipcodec.bench.sender) and its loop is a .c of its own.
# h2/ is the gRPC framing of the native gRPC path (oipcodec.server.h2._session, over the vendored
# libnghttp2 in csrc/third_party): not a kernel either, checked by its C driver under sanitizers.
JOBS = ("common", "read", "write", "protobuf", "http", "load", "h2")
CPUS = ("x86", "arm64")
_FOLDERS = {*JOBS, *(f"{job}/{cpu}" for job in ("read", "write") for cpu in CPUS)}
# What each job may include besides itself and its own CPU folders (downward only).
_MAY_INCLUDE = {
    "common": (),
    "read": ("common",),
    "write": ("common",),
    "protobuf": ("common",),
    "http": ("common",),
    "load": ("common",),
    "h2": ("common",),
}
_QUOTED = re.compile(r'^\s*#\s*include\s+"oipcodec/([^"]+)"', re.MULTILINE)
_EXTERN = re.compile(r'cdef extern from "oipcodec/([^"]+)"')
# Intrinsics beyond each CPU's baseline, by the names of their types and functions.
_INTRINSICS = {
    "x86": re.compile(r"\b(_mm256_|_mm512_|__m256|__m512)"),
    "arm64": re.compile(r"\b(v[a-z0-9]+q?_[usfp](8|16|32|64)\b|u?int(8|16|32|64)x\d+_t)"),
}


def layout_violations(headers: Path, sources: list[Path]) -> list[str]:
    """Every breach of the header layout under ``headers`` (csrc/oipcodec), and of the extern
    headers named by ``sources`` (the .pyx/.pxd files)."""
    found = []
    for path in sorted(headers.rglob("*.h")):
        name = path.relative_to(headers).as_posix()
        folder = name.rpartition("/")[0]
        job, _, cpu = folder.partition("/")
        if folder not in _FOLDERS:
            found.append(f"{name}: not in one of {sorted(_FOLDERS)}")
            continue
        text = path.read_text()
        if not text.startswith("/*"):
            found.append(f"{name}: does not open with what it is and whose methods it uses")
        for other_cpu, pattern in _INTRINSICS.items():
            if other_cpu != cpu and pattern.search(text):
                found.append(f"{name}: {other_cpu} intrinsics outside a {other_cpu}/ folder")
        for target in _QUOTED.findall(text):
            t_folder = target.rpartition("/")[0]
            t_job, _, t_cpu = t_folder.partition("/")
            if t_job != job and t_job not in _MAY_INCLUDE.get(job, ()):
                found.append(f"{name} includes {target}: {job}/ may not include {t_job}/")
            elif t_cpu and (t_job != job or (cpu and t_cpu != cpu)):
                found.append(f"{name} includes {target}: only {t_job}/ (its dispatch) may")
    for source in sources:
        for target in _EXTERN.findall(source.read_text()):
            if target.count("/") > 1:
                found.append(f"{source.name} names {target}: a CPU folder, not its dispatch")
    return found


def test_headers_keep_to_their_job_and_cpu_folders() -> None:
    if not CHEADERS.is_dir():
        pytest.skip("csrc/ is not next to the tests")
    sources = sorted([*(SRC / "_native").glob("*.pyx"), *(SRC / "_native").glob("*.pxd")])
    sources += sorted((SRC / "bench").glob("*.pyx"))
    assert layout_violations(CHEADERS, sources) == []
    # Not vacuous: each folder holds headers, and the vector writers are where the rule says.
    folders = {p.parent.relative_to(CHEADERS).as_posix() for p in CHEADERS.rglob("*.h")}
    assert folders == _FOLDERS - {"read/x86"}
    assert sum(bool(_EXTERN.search(s.read_text())) for s in sources) >= 5


def test_layout_rules_catch_each_breach(tmp_path: Path) -> None:
    cases = {
        "json.h": "",  # outside every folder
        "read/a.h": '#include "oipcodec/write/b.h"\n',  # read includes write
        "write/b.h": '#include "oipcodec/read/arm64/c.h"\n',  # another job's CPU header
        "read/arm64/c.h": "uint8x16_t v;\n",  # no opening comment
        "read/arm64/d.h": '#include "oipcodec/read/x86/e.h"\n',  # another CPU's header
        "read/x86/e.h": "__m512i v;\n",
        "common/f.h": '#include "oipcodec/read/a.h"\n',  # common includes a job
        "write/g.h": "__m256i v;\n",  # vector code outside x86/
        "http/h.h": '#include "oipcodec/read/a.h"\n',  # http includes a job
    }
    for name, text in cases.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        opening = "" if name == "read/arm64/c.h" else "/* what it is, whose methods */\n"
        (tmp_path / name).write_text(opening + text)
    pyx = tmp_path / "k.pyx"
    pyx.write_text('cdef extern from "oipcodec/write/x86/f32.h":\n    pass\n')
    found = layout_violations(tmp_path, [pyx])
    assert len(found) == 9, found
    for bad in (
        "json.h",
        "read/a.h",
        "write/b.h",
        "read/arm64/",
        "common/f.h",
        "write/g.h",
        "http/h.h",
    ):
        assert any(v.startswith(bad) for v in found), (bad, found)
    assert any(v.startswith("k.pyx") for v in found), found
