"""The documentation holds: its examples run, its figures come from one results file, the
README's commands are run, and no file cites a document the repository does not hold.

Examples: every fenced ``python`` block of README.md and docs/**/*.md runs in a fresh
interpreter, from the repository root, twice: saved as a file and run with ``python FILE`` (as a
reader runs a script: multiprocessing's spawn re-runs such a file in its children) and with
``python -c``. A block preceded by the line
``<!-- continue -->`` continues the block before it in the same file: the two (or more) run as
one program. A block preceded by ``<!-- requires: NAME[, NAME] -->`` needs those packages and is
skipped without them (``OIPCODEC_REQUIRE_PEERS`` makes a missing one an error, as in
tests/compat). Every ``# prints: TEXT`` comment in a program is one line of what it must print,
in order: when a program has any, its standard output must be exactly those lines (trailing
white space aside). A block preceded by ``<!-- file: PATH -->`` is a file of a walk-through
(docs/serving.md's): not run here, the walk-through's test writes it to PATH and runs it with
the page's commands (tests/server/runtime/test_server_walkthrough.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.support.serve_process import serve_command, serve_process

ROOT = Path(__file__).resolve().parent.parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"

if not README.is_file() or not DOCS.is_dir():  # the wheel tests run from copies of tests/ only
    pytest.skip("README.md and docs/ are not next to tests/", allow_module_level=True)

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!--\s*(continue|requires:[^>]*?|file:[^>]*?)\s*-->\s*$")
_PRINTS = re.compile(r"#\s*prints:\s?(.*)$", re.MULTILINE)
#: Seconds one example program may take (a few start a server or run the harness briefly).
EXAMPLE_TIMEOUT = 120


@dataclass
class Example:
    """One program: a python block, with the blocks that continue it."""

    where: str
    code: str
    requires: tuple[str, ...]


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def _examples(page: Path, root: Path = ROOT) -> list[Example]:
    text = page.read_text()
    examples: list[Example] = []
    for match in _FENCE.finditer(text):
        if match.group(1) != "python":
            continue
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.search(before)
        line = text.count("\n", 0, match.start()) + 1
        code = match.group(2)
        if marker and marker.group(1).startswith("file:"):
            continue  # a file of a walk-through: its own test writes it and runs it there
        if marker and marker.group(1) == "continue":
            assert examples, f"{page.name}:{line}: <!-- continue --> before the first block"
            examples[-1].code += "\n" + code
            continue
        requires: tuple[str, ...] = ()
        if marker and marker.group(1).startswith("requires:"):
            names = marker.group(1).split(":", 1)[1]
            requires = tuple(n.strip() for n in names.split(",") if n.strip())
        examples.append(Example(f"{page.relative_to(root)}:{line}", code, requires))
    return examples


EXAMPLES = [example for page in _pages() for example in _examples(page)]


def test_the_pages_hold_examples() -> None:
    # Not vacuous: the collector finds the README's examples and the guides'.
    where = {e.where.split(":")[0] for e in EXAMPLES}
    assert "README.md" in where
    assert len(where) >= 5, where


def _id(example: Example) -> str:
    """The test id: where the block starts, and what it needs (``-k needs`` selects those)."""
    return example.where + "".join(f"-needs-{name}" for name in example.requires)


#: How an example runs: saved as a file (``python FILE``), or with ``python -c``.
MODES = ("file", "-c")


def _failure(example: Example, mode: str = "file") -> str | None:
    """Run ``example`` (``mode``: see :data:`MODES`); None when it exits 0 and prints what its
    ``# prints:`` comments say, else what went wrong."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder, "example.py")
        script.write_text(example.code)
        argv = [str(script)] if mode == "file" else ["-c", example.code]
        result = subprocess.run(
            [sys.executable, *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=EXAMPLE_TIMEOUT,
        )
    if result.returncode != 0:
        return f"{example.where} ({mode}) failed:\n{result.stderr[-3000:]}"
    expected = [line.rstrip() for line in _PRINTS.findall(example.code)]
    printed = [line.rstrip() for line in result.stdout.splitlines()]
    if expected and printed != expected:
        return f"{example.where} ({mode}) printed:\n{result.stdout}\nexpected:\n" + "\n".join(
            expected
        )
    return None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("example", EXAMPLES, ids=[_id(e) for e in EXAMPLES])
def test_example_runs(example: Example, mode: str) -> None:
    # Looked up, not imported: the example runs in a process of its own, and some peers cannot
    # be imported into this one (KServe's protobuf modules register the same `inference.*`
    # names as tritonclient's, which other tests have loaded).
    required = {p for p in os.environ.get("OIPCODEC_REQUIRE_PEERS", "").split(",") if p}
    for name in example.requires:
        if importlib.util.find_spec(name) is None:
            if name in required:
                pytest.fail(f"{example.where} needs {name}, which this run requires")
            pytest.skip(f"{example.where} needs {name}, which is not installed")
    failure = _failure(example, mode)
    assert failure is None, failure


def test_the_runner_sees_wrong_output_and_errors() -> None:
    assert _failure(Example("ok", "print('a')  # prints: a\nprint(1)\n# prints: 1", ())) is None
    assert "printed" in (_failure(Example("wrong", "print('a')  # prints: b", ())) or "")
    assert "printed" in (_failure(Example("more", "print(1)\nprint(2)  # prints: 2", ())) or "")
    assert "failed" in (_failure(Example("raises", "1 / 0", ())) or "")
    # A file, not -c: what a spawned process re-runs is the script itself.
    spawn = "import multiprocessing as m\np = m.get_context('spawn').Process(target=print)\n"
    spawn += "p.start()\np.join()\nraise SystemExit(p.exitcode)"
    assert "failed" in (_failure(Example("unguarded", spawn, ())) or "")
    assert _failure(Example("unguarded", spawn, ()), "-c") is None


def test_continue_joins_blocks(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n\n<!-- continue -->\n```python\nprint(x)  # prints: 1\n```\n"
        "\n<!-- requires: kserve, mlserver -->\n```python\nimport kserve\n```\n"
    )
    examples = _examples(page, tmp_path)
    assert [e.code for e in examples] == ["x = 1\n\nprint(x)  # prints: 1\n", "import kserve\n"]
    assert examples[1].requires == ("kserve", "mlserver")


# ---------------------------------------------------------------------- figures, citations


def test_benchmark_pages_are_what_the_results_give() -> None:
    """docs/benchmarks.md and the README's excerpt are written by tools/bench_docs.py from
    docs/benchmarks/results.json; a hand edit or a new results file without a rerun fails."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "bench_docs.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_hand_edit_of_a_figure_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("bench_docs", ROOT / "tools" / "bench_docs.py")
    assert spec is not None and spec.loader is not None
    bench_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_docs)
    page, readme = tmp_path / "benchmarks.md", tmp_path / "README.md"
    readme.write_text(README.read_text())
    page.write_text((DOCS / "benchmarks.md").read_text())
    monkeypatch.setattr(bench_docs, "PAGE", page)
    monkeypatch.setattr(bench_docs, "README", readme)
    monkeypatch.setattr(bench_docs, "ROOT", tmp_path)
    assert bench_docs.main(["--check"]) == 0
    text = page.read_text()
    first_figure = re.search(r"\| native \| ([0-9,]+)[ ~!]* \|", text)  # ~ ! marks
    assert first_figure is not None
    page.write_text(text.replace(first_figure.group(0), "| native | 99,999 |", 1))
    assert bench_docs.main(["--check"]) == 1
    # The committed run has unstable rows: written only when asked, then saying so.
    unstable = bench_docs.unstable_rows(json.loads(bench_docs.RESULTS.read_text()))
    if unstable:
        assert bench_docs.main([]) == 2 and page.read_text() != text  # refused, not written
        assert f"{len(unstable)} of " in text and "never stabilised" in text
    assert bench_docs.main(["--allow-unstable"] if unstable else []) == 0  # writes it back
    assert page.read_text() == text


def _repository_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:  # an sdist: no git
        return [p for p in ROOT.rglob("*") if p.is_file() and "site" not in p.parts]
    return [ROOT / name for name in listed.stdout.splitlines() if (ROOT / name).is_file()]


def test_no_file_cites_a_document_the_repository_does_not_hold() -> None:
    # Spelt in pieces so that this file does not match itself.
    cited = [w.replace("|", "") for w in ("WIRE|-NOTES", "design| notes", "shared|/spec")]
    found = []
    for path in _repository_files():
        if path.suffix in (".png", ".so", ".c", ".json") or path == Path(__file__):
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{path.relative_to(ROOT)}: {w}" for w in cited if w.lower() in text.lower()]
    assert not found


def test_readme_is_a_front_door() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines"


# ---------------------------------------------------------------------- the README's commands


def _readme_commands() -> list[str]:
    """The README's commands: each line of its shell blocks, and each inline code span that
    starts with a command name."""
    text = README.read_text()
    commands = []
    for match in _FENCE.finditer(text):
        if match.group(1) not in ("bash", "sh", "shell", "console"):
            continue
        for line in match.group(2).splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                commands.append(line)
    spans = re.findall(r"`((?:oipcodec|pip|pytest|mkdocs|python) [^`]*)`", text)
    return commands + [span for span in spans if span not in commands]


#: How each command of the README is run. "ci": .ci/run runs it as written
#: (test_ci_runs_the_readme_commands); a test id: that test runs it, or, for
#: `oipcodec bench --quick`, a smaller selection of it.
RUN_BY = {
    'pip install ".[bench]" && oipcodec bench --quick': "ci + test_bench_command",
    'pip install ".[test]" && pytest': "ci",
    "oipcodec info": "test_info_command",
    "oipcodec serve": "test_serve_command_answers_and_stops",
    "oipcodec bench": "test_bench_command",
    "oipcodec bench --quick": "test_bench_command",
    "oipcodec bench compare": "tests/bench/test_bench_compare.py",
    "oipcodec serve --model-module my.models --workers 2": (
        "tests/server/runtime/test_server_command.py::test_a_module_in_the_working_directory_is_served"
    ),
    "oipcodec bench --model": "tests/server/runtime/test_server_walkthrough.py (with --url, --quick)",
    "oipcodec serve --model-repository models": (
        "tests/server/test_server_repository.py::test_serve_a_repository_from_the_command"
    ),
    "mkdocs build --strict": "ci",
}


def test_every_readme_command_is_run_by_a_test() -> None:
    commands = _readme_commands()
    assert 'pip install ".[test]" && pytest' in commands  # not vacuous
    assert [c for c in commands if c not in RUN_BY] == []


def test_ci_runs_the_readme_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'python -m pip install --quiet ".[test]"' in ci
    assert re.search(r"^python -m pytest$", ci, re.MULTILINE)
    # The bench extra: .ci/run installs dev, which holds it; and the docs extra.
    assert 'pip install --quiet ".[dev,integration,docs]"' in ci
    assert '"oipcodec[bench]"' in (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^mkdocs build --strict\b", ci, re.MULTILINE)


#: The command the README names: the installed script, else the module (a source checkout).
_OIPCODEC = serve_command()


def _oipcodec(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    command = [*_OIPCODEC, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def test_bench_command(tmp_path: Path) -> None:
    """`oipcodec bench --quick`, on one payload and two paths."""
    result = _oipcodec(
        "bench", "--quick", "--payload", "small", "--path", "rest-json", "--path", "grpc-raw",
        "--implementation", "native", "--concurrency", "1", "--no-chart",
        "--output-dir", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "REST JSON flat    native" in result.stdout
    assert (tmp_path / "results.json").is_file()


def test_info_command() -> None:
    result = _oipcodec("info")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("oipcodec ")
    assert "kernels: " in result.stdout


def test_getting_started_shows_the_kernel_families_info_prints() -> None:
    printed = _oipcodec("info").stdout
    families = [line for line in printed.splitlines() if line.startswith("kernel families:")]
    assert families, printed
    assert families[0] + "\n" in (DOCS / "getting-started.md").read_text()


def test_serve_command_answers_and_stops() -> None:
    """`oipcodec serve` (the README names it): its demo models answer, and SIGTERM stops it."""
    from oipcodec.client import HttpClient

    port = free_port()
    args = ["--http-port", str(port), "--grpc-port", "-1"]
    with (
        HttpClient(f"http://127.0.0.1:{port}") as client,
        serve_process(*args, program=_OIPCODEC, ready=lambda: _ready(client)) as server,
    ):
        answer = client.infer("simple", {"INPUT0": _ints(), "INPUT1": _ints()})
        assert answer.output("OUTPUT0").data.tolist() == [list(range(0, 32, 2))]
        server.terminate()
        out, _ = server.communicate(timeout=30)
    assert server.returncode == 0, out


def _ready(client: object) -> bool:
    from oipcodec.client import ClientError

    try:
        return bool(client.ready())  # type: ignore[attr-defined]
    except ClientError:
        return False


def _ints() -> object:
    import numpy as np

    return np.arange(16, dtype=np.int32).reshape(1, 16)


# ---------------------------------------------------------------------- install lines

#: ``pip install [options] "TARGET[EXTRAS]"`` (or unquoted), anywhere in a page's text.
_INSTALL = re.compile(r"pip install (?:-\S+ )*\"?([^\s\"\[]*)\[([^\]]+)\]\"?")


def _extras() -> set[str]:
    tomllib = pytest.importorskip("tomllib")  # 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


def _install_lines(text: str) -> list[tuple[str, str, list[str]]]:
    """(the line, the target, the extras) of each install line with extras."""
    found = []
    for line in text.splitlines():
        for match in _INSTALL.finditer(line):
            extras = [e.strip() for e in match.group(2).split(",")]
            found.append((line.strip(), match.group(1), extras))
    return found


def _install_line_problems(page: str, text: str, extras: set[str]) -> list[str]:
    """What is wrong with the install lines of ``text``: an extra pyproject.toml does not define,
    or a target that is not a checkout (``.``, ``path/to/oipcodec``) where the line does not say
    it means the published package (``package index``)."""
    problems = []
    for line, target, named in _install_lines(text):
        unknown = [e for e in named if e not in extras]
        if unknown:
            problems.append(f"{page}: {line}: no extra {unknown}")
        checkout = target == "." or target.endswith("/oipcodec")
        if not checkout and "package index" not in line:
            problems.append(f"{page}: {line}: {target!r} only installs from a package index")
    return problems


def test_every_install_line_names_extras_that_exist_and_works_from_a_checkout() -> None:
    extras = _extras()
    lines = [line for page in _pages() for line in _install_lines(page.read_text())]
    assert len(lines) >= 15, lines  # not vacuous
    problems = [
        problem
        for page in _pages()
        for problem in _install_line_problems(str(page.relative_to(ROOT)), page.read_text(), extras)
    ]
    assert problems == []


def test_the_install_line_check_sees_a_missing_extra_and_an_index_only_line() -> None:
    extras = {"server", "bench"}
    text = 'pip install ".[server]"\n`pip install -e ".[nope]"`\npip install "oipcodec[bench]"\n'
    text += 'the published one (a package index): pip install "oipcodec[server]"\n'
    text += 'pip install "path/to/oipcodec[bench]"  # your checkout'
    problems = _install_line_problems("page.md", text, extras)
    assert len(problems) == 2, problems
    assert "no extra ['nope']" in problems[0]
    assert "'oipcodec' only installs from a package index" in problems[1]


# ---------------------------------------------------------------------- the site


def test_docs_requirements_are_the_docs_extra_and_the_dependencies() -> None:
    """docs/requirements.txt builds the site without installing (building) oipcodec: the docs
    extra, and the package's own dependencies for the kernels the API reference imports."""
    tomllib = pytest.importorskip("tomllib")  # 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = (DOCS / "requirements.txt").read_text().splitlines()
    listed = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert listed == project["optional-dependencies"]["docs"] + project["dependencies"]


def test_the_site_opens_from_disk() -> None:
    assert re.search(r"^use_directory_urls: false$", (ROOT / "mkdocs.yml").read_text(), re.M)


def test_docstring_examples_become_highlighted_blocks() -> None:
    spec = importlib.util.spec_from_file_location(
        "griffe_docstrings", ROOT / "tools" / "griffe_docstrings.py"
    )
    if importlib.util.find_spec("griffe") is None:
        pytest.skip("griffe (the docs extra) is not installed")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "Run it::\n\n    with background() as s:\n        go(s)\n\nThen::\n\n    $ oipcodec serve\nend"
    assert module.fence_literal_blocks(text).split("\n") == [
        "Run it:", "", "```python", "with background() as s:", "    go(s)", "```", "",
        "Then:", "", "```bash", "$ oipcodec serve", "```", "", "end",
    ]  # fmt: skip


def test_no_page_shows_a_stray_triple_quote() -> None:
    """A docstring's closing quotes pasted into a page render as text (docs/serving.md had
    one); outside a fenced block no line is a bare triple quote."""
    stray = []
    for page in _pages():
        fenced = False
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and line.strip() in ('"""', "'''"):
                stray.append(f"{page.relative_to(ROOT)}:{number}")
    assert not stray, f"stray triple quotes: {stray}"
