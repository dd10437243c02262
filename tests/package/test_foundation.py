"""The package as a whole: version, facade, CLI, and the test harness itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import oipcodec
from oipcodec import kernels
from oipcodec.cli import main
from tests.conftest import EXPECT_NATIVE


def _implementation_with(env_extra: dict[str, str]) -> str:
    env = {**os.environ, **env_extra}
    out = subprocess.run(
        [sys.executable, "-c", "import oipcodec; print(oipcodec.kernels.IMPLEMENTATION)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_pure_env_selects_pure_twins() -> None:
    assert _implementation_with({"OIPCODEC_PURE": "1"}) == "pure"


@pytest.mark.skipif(not kernels.native_available(), reason="native kernels not built")
def test_default_is_native_when_built() -> None:
    assert _implementation_with({"OIPCODEC_PURE": ""}) == "native"


def test_native_built_when_expected() -> None:
    # .ci/run installs the package normally and says so: a silent fallback to pure fails here.
    if EXPECT_NATIVE:
        assert kernels.native_available()
        if os.environ.get("OIPCODEC_PURE", "") in ("", "0"):
            assert kernels.IMPLEMENTATION == "native"


def test_facade_reexports_every_kernel_of_every_family() -> None:
    pure = kernels.load("pure")
    names = {n for n in vars(pure) if n != "IMPLEMENTATION"}
    assert {"serialize_bytes", "deserialize_bytes"} <= names
    for name in names:
        assert callable(getattr(kernels, name)), name
        assert name not in vars(oipcodec), name  # kernels live in oipcodec.kernels only


def test_native_and_pure_export_the_same_names() -> None:
    pure = kernels.load("pure")
    try:
        native = kernels.load("native")
    except ImportError as exc:
        if EXPECT_NATIVE:
            raise
        pytest.skip(f"native kernels not built: {exc}")
    assert set(vars(native)) - {"IMPLEMENTATION"} == set(vars(pure)) - {"IMPLEMENTATION"}


def test_load_rejects_unknown_implementation() -> None:
    with pytest.raises(ValueError, match="native' or 'pure"):
        kernels.load("fast")


def test_version_is_single_sourced(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"oipcodec {oipcodec.__version__}"


def test_cli_info_names_the_implementation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info"]) == 0
    assert f"kernels: {kernels.IMPLEMENTATION}" in capsys.readouterr().out


def test_stubs_and_py_typed_are_shipped() -> None:
    package = Path(oipcodec.__file__).parent
    assert (package / "py.typed").exists()
    for family in kernels.FAMILIES:
        assert (package / "_native" / f"{family}.pyi").exists(), family


def test_ignored_exceptions_fail_the_test(pytester: pytest.Pytester) -> None:
    # The harness guard in conftest.py must turn "Exception ignored in ..." into a failure.
    pytester.makeconftest((Path(__file__).parents[1] / "conftest.py").read_text())
    pytester.makepyfile(
        """
        class Loud:
            def __del__(self):
                raise RuntimeError("boom in __del__")

        def test_drops_an_exception():
            Loud()
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    # The guard fires at teardown, which pytest reports as an error of the (passing) call.
    result.assert_outcomes(passed=1, errors=1)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*Exception ignored in*boom in __del__*"])


def test_a_test_taking_the_client_fixture_answers_to_its_name(pytester: pytest.Pytester) -> None:
    # .ci/run's native gRPC run selects by -k grpc: a test named otherwise but taking the
    # grpc fixture (tritonclient's client, tests/server/conftest.py) must be selected too.
    pytester.makeconftest(
        (Path(__file__).parents[1] / "conftest.py").read_text()
        + "\n\n@pytest.fixture\ndef grpc():\n    return None\n"
    )
    pytester.makepyfile(
        """
        def test_shapes(grpc):
            pass

        def test_rest_only():
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-k", "grpc")
    result.assert_outcomes(passed=1, deselected=1)


def test_codec_modules_are_attributes_and_the_server_loads_on_demand() -> None:
    code = (
        "import sys, oipcodec\n"
        "assert oipcodec.rest.decode_request and oipcodec.pb.decode_request\n"
        "assert 'oipcodec.server' not in sys.modules and 'oipcodec.client' not in sys.modules\n"
        "assert 'oipcodec.trtis_v1' not in sys.modules  # it loads google.protobuf\n"
        "assert oipcodec.server.Model and oipcodec.client.HttpClient\n"
        "assert oipcodec.testing.background and oipcodec.server.Server\n"
        "from oipcodec import graphpipe, trtis_v1\n"
        "assert oipcodec.trtis_v1 is trtis_v1 and oipcodec.graphpipe is graphpipe\n"
        "try:\n    oipcodec.no_such_thing\nexcept AttributeError:\n    pass\n"
        "else:\n    raise SystemExit('no AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_native_module_falls_back_to_pure_whole_with_a_warning() -> None:
    """One native family missing (a broken build): the facade warns and takes every kernel
    from the pure twins, none from the native modules that did import."""
    import subprocess
    import sys

    code = """
import sys, warnings
sys.modules["oipcodec._native.layout"] = None  # import of it now raises ImportError
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import oipcodec
from oipcodec import kernels
assert kernels.IMPLEMENTATION == "pure", kernels.IMPLEMENTATION
assert any(issubclass(w.category, RuntimeWarning) and "not built" in str(w.message)
           for w in caught), [str(w.message) for w in caught]
pure = kernels.load("pure")
for name in vars(pure):
    if name != "IMPLEMENTATION":
        assert getattr(kernels, name) is getattr(pure, name), name
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k != "OIPCODEC_PURE"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
