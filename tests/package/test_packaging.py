"""Packaging: the sdist holds everything, wheels hold no sources, one version everywhere.

The build tests run in a source checkout whose environment has the ``build`` package and the
build backend's requirements (setuptools, Cython: the ``dev`` extra); elsewhere, such as the
installed wheel cibuildwheel tests, they skip. They build without isolation (offline) from a
copy of the checkout in a temporary directory, so the working tree is left alone. About 30 s:
the sdist (Cython runs on every .pyx, as in a release) and a wheel built from it without the
extensions (``OIPCODEC_NO_EXTENSIONS=1``), which is enough to check what a wheel packs.
``OIPCODEC_TEST_WHEEL_BUILD=1`` compiles the native wheel instead (minutes) and also checks
that it holds every compiled kernel module.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pytest

import oipcodec
from oipcodec import kernels

ROOT = Path(__file__).resolve().parents[2]
IS_CHECKOUT = (ROOT / "setup.py").is_file() and (ROOT / "src" / "oipcodec").is_dir()
NATIVE_WHEEL = os.environ.get("OIPCODEC_TEST_WHEEL_BUILD", "") not in ("", "0")

# What a clean checkout does not have (.gitignore): build outputs, caches, virtual environments.
_IGNORED_NAMES = {".git", "build", "dist", "__pycache__", ".hypothesis", ".benchmarks"}
_IGNORED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".egg-info")
# Directories whose every file the sdist must carry: the C headers, the test suite and what
# it reads (examples/: the deployment recipes the compat tests check), the benchmarks, and the
# generator of csrc/oipcodec/common/pow5_table.h.
_SHIPPED_DIRS = ("csrc", "tests", "fuzz", "benchmarks", "tools", "docs", "examples")
_SOURCE_SUFFIXES = (".pyx", ".pxd", ".pxi", ".c", ".h")


def _ignored(directory: str, names: list[str]) -> set[str]:
    # Cython's .c and annotation .html: the kernels', the load generator's (bench/_sender) and the
    # HTTP/2 connection's (server/h2/_session)
    generated = (
        Path(directory)
        .as_posix()
        .endswith(("src/oipcodec/_native", "src/oipcodec/bench", "src/oipcodec/server/h2"))
    )
    return {
        n
        for n in names
        if n in _IGNORED_NAMES
        or n.endswith(_IGNORED_SUFFIXES)
        or (n.startswith(".") and n.endswith("cache"))
        or n in (".venv", ".ci-venv")
        or (generated and n.endswith((".c", ".html")))
    }


def _checkout_files(top: str, pattern: str = "*") -> set[str]:
    """Files of the checkout under ``top`` matching ``pattern``, as sdist-relative paths."""
    found = set()
    for path in (ROOT / top).rglob(pattern):
        parts = path.relative_to(ROOT).parts
        ignored = any(_ignored(str(path.parents[i]), [parts[-1 - i]]) for i in range(len(parts)))
        if path.is_file() and not ignored:
            found.add("/".join(parts))
    return found


def _version_in_checkout() -> str:
    text = (ROOT / "src" / "oipcodec" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    assert match, "src/oipcodec/_version.py must assign __version__ a string literal"
    return match.group(1)


def _cannot_build() -> str | None:
    if not IS_CHECKOUT:
        return "not a source checkout (the tests run against an installed wheel)"
    for module in ("build", "setuptools", "Cython"):
        if importlib.util.find_spec(module) is None:
            return f"{module!r} is not installed (pip install -e '.[dev]')"
    setuptools_major = int(importlib.metadata.version("setuptools").split(".")[0])
    if setuptools_major < 77:
        return "setuptools>=77 is needed to build without isolation"
    return None


def _build(source: Path, kind: str, outdir: Path, extra_env: dict[str, str]) -> Path:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OIPCODEC_")}
    env.update(extra_env)
    command = [sys.executable, "-m", "build", "--no-isolation", kind, "--outdir", str(outdir)]
    result = subprocess.run(
        [*command, str(source)], env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    (built,) = outdir.iterdir()
    return built


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = _cannot_build()
    if reason:
        pytest.skip(reason)
    checkout = tmp_path_factory.mktemp("checkout") / "oipcodec"
    shutil.copytree(ROOT, checkout, ignore=_ignored)
    return _build(checkout, "--sdist", tmp_path_factory.mktemp("sdist"), {})


@pytest.fixture(scope="module")
def wheel(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    unpacked = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(unpacked, filter="data")
        else:  # pragma: no cover - Python without the extraction filters
            tar.extractall(unpacked)
    (source,) = unpacked.iterdir()
    env = {} if NATIVE_WHEEL else {"OIPCODEC_NO_EXTENSIONS": "1"}
    return _build(source, "--wheel", tmp_path_factory.mktemp("wheel"), env)


def _sdist_files(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as tar:
        return {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile() and "/" in m.name}


def _missing(expected: Iterable[str], present: set[str]) -> str:
    """The expected files not present, summarised: '' when there are none."""
    missing = sorted(set(expected) - present)
    shown = ", ".join(missing[:12]) + (
        f" and {len(missing) - 12} more" if len(missing) > 12 else ""
    )
    return f"{len(missing)} missing: {shown}" if missing else ""


def test_sdist_holds_what_a_build_and_the_tests_need(sdist: Path) -> None:
    files = _sdist_files(sdist)
    kernel_sources = _checkout_files("src/oipcodec/_native", "*.pyx")
    cython_headers = _checkout_files("src/oipcodec", "*.pxd")
    cython_headers |= _checkout_files("src/oipcodec", "*.pxi")
    c_headers = _checkout_files("csrc", "*.h")
    protos = _checkout_files("src/oipcodec/proto", "*.proto")
    # Not vacuous: there are kernels, headers and a .proto to look for.
    assert kernel_sources and cython_headers and c_headers and protos
    expected = {"README.md", "LICENSE", "pyproject.toml", "setup.py", "MANIFEST.in"}
    expected |= {"CHANGELOG.md", "mkdocs.yml"}
    expected |= kernel_sources | cython_headers | c_headers | protos
    expected |= _checkout_files("src/oipcodec", "*.pyi") | {"src/oipcodec/py.typed"}
    for top in _SHIPPED_DIRS:
        if (ROOT / top).is_dir():
            expected |= _checkout_files(top)
    assert "tests/conftest.py" in expected
    missing = _missing(expected, files)
    assert not missing, f"the sdist lacks files: {missing}"


def test_sdist_holds_no_build_outputs(sdist: Path) -> None:
    stray = sorted(
        f
        for f in _sdist_files(sdist)
        if f.endswith((".so", ".pyd", ".o", ".obj", ".pyc"))
        or (
            f.startswith(("src/oipcodec/_native/", "src/oipcodec/bench/"))
            and f.endswith((".c", ".html"))
        )
    )
    assert not stray, f"build outputs in the sdist: {stray}"


def test_sdist_and_wheel_carry_the_version_of_version_py(sdist: Path, wheel: Path) -> None:
    version = _version_in_checkout()
    assert sdist.name == f"oipcodec-{version}.tar.gz"
    assert wheel.name.startswith(f"oipcodec-{version}-")
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(f"oipcodec-{version}/PKG-INFO")
        assert member is not None
        assert f"\nVersion: {version}\n" in member.read().decode()


def test_wheel_from_the_sdist_has_stubs_and_no_sources(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    sources = sorted(n for n in names if n.endswith(_SOURCE_SUFFIXES))
    assert not sources, f"sources in the wheel: {sources}"
    assert "oipcodec/py.typed" in names
    assert "oipcodec/proto/open_inference_grpc.proto" in names
    stubs = {f"oipcodec/_native/{family}.pyi" for family in kernels.FAMILIES}
    missing = _missing(stubs, names)
    assert not missing, f"the wheel lacks stubs: {missing}"
    if NATIVE_WHEEL:
        compiled = {n.split("/")[-1].split(".")[0] for n in names if n.endswith((".so", ".pyd"))}
        assert set(kernels.FAMILIES) <= compiled, set(kernels.FAMILIES) - compiled
        assert not wheel.name.endswith("-none-any.whl")


def test_installed_package_has_stubs_and_no_sources() -> None:
    package = Path(oipcodec.__file__).resolve().parent
    if (package.parent.parent / "setup.py").is_file():
        pytest.skip("oipcodec is imported from the source tree (editable or in-place build)")
    sources = sorted(str(p.relative_to(package)) for p in package.rglob("*") if p.is_file())
    sources = [s for s in sources if s.endswith(_SOURCE_SUFFIXES)]
    assert not sources, f"sources installed with the package: {sources}"
    assert (package / "py.typed").is_file()
    for family in kernels.FAMILIES:
        assert (package / "_native" / f"{family}.pyi").is_file(), family


def test_command_line_metadata_and_module_agree_on_the_version() -> None:
    try:
        installed = importlib.metadata.version("oipcodec")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("oipcodec is not installed (no distribution metadata)")
    # The console script of the environment running the tests (bin/ or Scripts/).
    script = shutil.which("oipcodec", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "oipcodec"]
    result = subprocess.run(
        [*command, "--version"], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == f"oipcodec {oipcodec.__version__}"
    assert installed == oipcodec.__version__, (
        f"installed metadata says {installed}, oipcodec._version says {oipcodec.__version__}: "
        "the package was installed from an older checkout (reinstall it)"
    )


def test_install_test_extra_installs_what_pyproject_lists() -> None:
    """tools/install_test_extra.py (tools/pythons_check.sh's install) reads the requirements from
    the installed metadata, as 3.10 has no tomllib: they must be pyproject.toml's, the
    project's own extras within the test extra expanded, markers evaluated here."""
    tomllib = pytest.importorskip("tomllib")  # 3.11+
    try:
        importlib.metadata.requires("oipcodec")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("oipcodec is not installed (no distribution metadata)")
    from pip._vendor.packaging.requirements import Requirement

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    spec = importlib.util.spec_from_file_location(
        "install_test_extra", ROOT / "tools" / "install_test_extra.py"
    )
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)

    def normal(requirements: Iterable[str]) -> set[str]:
        kept = set()
        for text in requirements:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate():
                req.marker = None
                kept.add(str(req))
        return kept

    extras = pyproject["project"]["optional-dependencies"]
    expected = {
        req
        for extra in ("test", "server", "fast-compression", "client", "tracing")
        for req in normal(extras[extra])
        if not req.startswith("oipcodec[")
    }
    assert tool.BUILD_REQUIRES[:-1] == pyproject["build-system"]["requires"]
    assert normal(tool.requirements(None, set())) == normal(pyproject["project"]["dependencies"])
    assert normal(tool.requirements("test", {"test"})) == expected
