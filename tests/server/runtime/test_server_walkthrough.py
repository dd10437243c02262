"""docs/serving.md's walk-through, "From zero to your own model", done as a newcomer does it:
its files written into an empty folder, its shell commands run there in order with the
installed console script (the server in the background, as in a second terminal), each
program's output what its ``# prints:`` lines say.

One change to the commands: the server's ports. The page uses the defaults (8000, 8001); the
test serves on free ones, so it runs next to anything else on this machine, and writes those
ports wherever the page names 8000 or 8001 (the files, the commands) and gives them to
``oipcodec serve`` with ``--http-port`` / ``--grpc-port``.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.console import SCRIPT, script_env
from tests.support.ports import free_ports
from tests.support.serve_process import answers_ready, serve_process

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("tritonclient.http")
pytest.importorskip("tritonclient.grpc")

PAGE = Path(__file__).resolve().parents[3] / "docs" / "serving.md"
SECTION = "## From zero to your own model"
if not PAGE.is_file():  # the wheel tests run from copies of tests/ only
    pytest.skip("docs/ is not next to tests/", allow_module_level=True)
if SCRIPT is None:  # pragma: no cover - a source checkout without the package installed
    pytest.skip("the oipcodec console script is not installed", allow_module_level=True)

_FENCE = re.compile(
    r"(?:<!--\s*file:\s*(?P<path>\S+)\s*-->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```\s*$",
    re.MULTILINE | re.DOTALL,
)
_PRINTS = re.compile(r"#\s*prints:\s?(.*)$", re.MULTILINE)


@dataclass
class Step:
    """A file to write (``path`` set) or a shell command to run."""

    text: str
    path: str | None = None


def walkthrough() -> list[Step]:
    """The section's files and shell commands, in the page's order."""
    text = PAGE.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start : end if end >= 0 else len(text)]
    steps = []
    for match in _FENCE.finditer(section):
        if match["path"]:
            steps.append(Step(match["body"], match["path"]))
        elif match["lang"] == "bash":
            lines = match["body"].splitlines()
            steps += [Step(line.strip()) for line in lines if line.strip()]
    return steps


def test_the_walkthrough_has_its_steps() -> None:
    steps = walkthrough()
    commands = [step.text for step in steps if step.path is None]
    assert [step.path for step in steps if step.path] == ["my/models.py", "call.py"]
    assert commands == [
        "mkdir -p my",
        "touch my/__init__.py",
        "oipcodec serve --model-module my.models",
        "python call.py",
        "oipcodec bench --url http://127.0.0.1:8000 --model add_one --quick",
    ]


def test_the_walkthrough_runs(tmp_path: Path) -> None:
    http_port, grpc_port = free_ports(2)

    def ported(text: str) -> str:
        return text.replace("8000", str(http_port)).replace("8001", str(grpc_port))

    env = script_env()
    server: subprocess.Popen[str] | None = None
    with contextlib.ExitStack() as stack:
        for step in walkthrough():
            if step.path is not None:
                (tmp_path / step.path).write_text(ported(step.text))
                continue
            command = ported(step.text)
            if command.startswith("oipcodec serve"):
                # The console script found on the environment's PATH, as the shell finds it.
                program, _, *args = shlex.split(command)
                args += ["--http-port", str(http_port), "--grpc-port", str(grpc_port)]
                server = stack.enter_context(
                    serve_process(
                        *args, cwd=tmp_path, env=env, program=[program],
                        ready=answers_ready(f"127.0.0.1:{http_port}"),
                    )
                )  # fmt: skip
                continue
            result = subprocess.run(
                ["bash", "-c", command],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert result.returncode == 0, (command, result.stdout, result.stderr)
            if command.startswith("python "):
                program = (tmp_path / command.split()[1]).read_text()
                expected = _PRINTS.findall(program)
                assert expected and result.stdout.splitlines() == expected, result.stdout
            if command.startswith("oipcodec bench"):
                results = json.loads((tmp_path / "oipcodec-bench" / "results.json").read_text())
                assert results["model_metadata"]["name"] == "add_one"
                records = results["results"]
                assert records and not [r["error"] for r in records if r.get("error")]
                measured = [r for r in records if not r.get("unsupported")]
                assert measured and all(r["load"] for r in measured), records
        assert server is not None
        server.send_signal(signal.SIGINT)  # Ctrl+C
        output, _ = server.communicate(timeout=60)
        assert server.returncode == 0, output
        assert "Traceback" not in output
