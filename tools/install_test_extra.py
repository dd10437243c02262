"""Install the working tree with its test extra into the running interpreter's environment,
from wheels only; what has no wheel for this interpreter is left out and named.

Run by tools/pythons_check.sh from a copy of the working tree, with the venv's python:
``python tools/install_test_extra.py LEFT_OUT_FILE``. The project itself is built from the
tree (without build isolation: the build requirements are installed first). Its dependencies
come as wheels only, because a source build of a dependency on an interpreter its authors do
not publish wheels for is not what users get. When ``pip install ".[test]"`` fails that way,
each requirement of the core and the test extra (the project's own extras expanded) is installed
on its own, and the ones pip cannot install are written to LEFT_OUT_FILE, one a line with pip's
reason; a core requirement that cannot be installed fails the run. Written for every Python the
project supports (3.10 has no tomllib: the requirements are read from the installed metadata).
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

from pip._vendor.packaging.requirements import Requirement

PROJECT = "oipcodec"
# [build-system] requires of pyproject.toml, plus wheel for setuptools' bdist_wheel.
BUILD_REQUIRES = ["setuptools>=77", "Cython>=3.1,<4", "wheel"]


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def checked(result: subprocess.CompletedProcess[str]) -> None:
    if result.returncode:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(result.returncode)


def requirements(extra: str | None, seen: set[str]) -> list[str]:
    """The installed project's requirements for ``extra`` (None: the core), the project's own
    extras expanded, markers evaluated for this interpreter."""
    out = []
    for text in metadata.requires(PROJECT) or []:
        req = Requirement(text)
        if ("extra" in str(req.marker or "")) != (extra is not None):
            continue  # another extra's, or a core requirement while listing an extra's
        if req.marker is not None and not req.marker.evaluate({"extra": extra or ""}):
            continue
        if req.name == PROJECT:
            for sub in sorted(req.extras - seen):
                seen.add(sub)
                out += requirements(sub, seen)
            continue
        req.marker = None
        out.append(str(req))
    return out


def reason(result: subprocess.CompletedProcess[str]) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR:")]
    # The first says most: "Could not find a version that satisfies ... (from versions: ...)".
    return (errors or ["pip failed without an ERROR line"])[0].removeprefix("ERROR: ")


def main() -> None:
    left_out_file = Path(sys.argv[1])
    left_out_file.write_text("")
    checked(pip(*BUILD_REQUIRES))
    if pip("--no-build-isolation", "--only-binary=:all:", ".[test]").returncode == 0:
        return
    checked(pip("--no-build-isolation", "--no-deps", "."))
    checked(pip("--only-binary=:all:", *requirements(None, set())))
    left_out = []
    for req in dict.fromkeys(requirements("test", {"test"})):
        result = pip("--only-binary=:all:", req)
        if result.returncode:
            left_out.append(f"{req}: {reason(result)}")
    left_out_file.write_text("".join(line + "\n" for line in left_out))
    for line in left_out:
        print("left out:", line)


if __name__ == "__main__":
    main()
