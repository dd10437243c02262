"""`oipcodec bench --server-http-protocol / --server-grpc-impl`: the embedded server runs the
front ends asked for (seen from its model's ``predict``: which front-end modules called it),
pure's server oipcodec's protocol and grpcio in place of the native ones, results.json and the
table say which, `bench compare` too; refused with a server given by --url / --grpc-target."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import oipcodec
from oipcodec import cli
from oipcodec.bench.compare import render_servers

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")

FASTPATH = "oipcodec.server.http11.fastpath"  # the native HTTP/1.1 front end
CYCLE = "oipcodec.server.http11.cycle"  # oipcodec's Python protocol
NATIVE_GRPC = "oipcodec.server.h2.grpc_server"
GRPC_FRONTEND = "oipcodec.server.frontends.grpc_frontend"


def test_the_front_ends_asked_for_serve_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if oipcodec.kernels.IMPLEMENTATION != "native":
        pytest.skip("the native front ends need the native kernels")
    seen = tmp_path / "front_ends.txt"
    # The servers inherit the environment: support/bench_models.py's FrontEnds writes here.
    monkeypatch.setenv("OIPCODEC_TEST_FRONT_ENDS", str(seen))
    source = str(Path(oipcodec.__file__).parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([source, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.chdir(Path(__file__).parents[1] / "support")
    status = cli.main(
        ["bench", "--model-module", "bench_models", "--model", "front_ends",
         "--server-http-protocol", "native", "--server-grpc-impl", "native",
         "--implementation", "native,pure", "--path", "rest-json,grpc-raw", "--concurrency", "1",
         "--duration", "0.05", "--max-trials", "1", "--no-chart", "--output-dir", str(tmp_path)]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    calls: dict[str, list[list[str]]] = {"0": [], "1": []}  # by the server's OIPCODEC_PURE
    for line in seen.read_text().splitlines():
        kernels, *modules = line.split()
        calls[kernels].append(modules)
    native, pure = calls["0"], calls["1"]
    assert any(FASTPATH in modules for modules in native), native
    assert any(NATIVE_GRPC in modules for modules in native), native
    assert not any(FASTPATH in modules or NATIVE_GRPC in modules for modules in pure), pure
    assert any(CYCLE in modules for modules in pure), pure
    assert any(modules == [GRPC_FRONTEND] for modules in pure), pure  # grpcio's call
    results = json.loads((tmp_path / "results.json").read_text())
    options = results["options"]
    assert (options["server_http_protocol"], options["server_grpc_impl"]) == ("native", "native")
    ran = {w["implementation"]: w["server_front_ends"] for w in results["workers"]}
    assert ran == {
        "native": {"http_protocol": "native", "grpc_impl": "native"},
        "pure": {"http_protocol": "oipcodec", "grpc_impl": "grpcio"},
    }
    assert "the embedded server's front ends: HTTP/1.1 native, gRPC native (pure's " in out
    assert "HTTP/1.1 native, gRPC native)" in err  # the progress line's "against ..."


def test_front_ends_are_refused_with_a_server_given(capsys: pytest.CaptureFixture[str]) -> None:
    for server in (["--url", "http://127.0.0.1:1"], ["--grpc-target", "127.0.0.1:1"]):
        assert cli.main(["bench", *server, "--server-grpc-impl", "native"]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("oipcodec bench: --server-http-protocol and --server-grpc-impl")
    with pytest.raises(SystemExit):
        cli.main(["bench", "--server-http-protocol", "nghttp2"])
    assert "invalid choice: 'nghttp2'" in capsys.readouterr().err


def test_the_choices_are_the_configs() -> None:
    from oipcodec.server.config import GRPC_IMPLS, HTTP_PROTOCOLS

    commands: Any = next(a for a in cli.build_parser()._actions if a.dest == "command")
    bench = commands.choices["bench"]
    choices = {a.dest: tuple(a.choices or ()) for a in bench._actions}
    assert choices["server_http_protocol"] == HTTP_PROTOCOLS
    assert choices["server_grpc_impl"] == GRPC_IMPLS


def _results(http: str | None, grpc: str | None, url: str | None = None,
             workers: list[dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    options = {"url": url, "grpc_target": None}
    if http is not None:  # None: a results.json older than the options
        options |= {"server_http_protocol": http, "server_grpc_impl": grpc}
    return {"options": options, "workers": workers or [], "results": []}


def test_compare_says_which_front_ends_each_run_had() -> None:
    old, new = _results(None, None), _results("native", "grpcio")
    assert render_servers(old, new) == (
        "server front ends: HTTP/1.1 oipcodec, gRPC grpcio -> HTTP/1.1 native, gRPC grpcio"
    )
    both = _results("native", "native", workers=[
        {"implementation": "native", "server_front_ends": {"http_protocol": "native",
                                                           "grpc_impl": "native"}},
        {"implementation": "pure", "server_front_ends": {"http_protocol": "oipcodec",
                                                         "grpc_impl": "grpcio"}},
    ])  # fmt: skip
    assert render_servers(both, both) == (
        "server front ends (both runs): HTTP/1.1 native, gRPC native (pure's oipcodec, grpcio: "
        "the native front ends are native code)"
    )
    given = _results(None, None, url="http://127.0.0.1:8000")
    assert render_servers(given, given) is None
    assert render_servers(given, new) == (
        "server front ends: given by --url/--grpc-target -> HTTP/1.1 native, gRPC grpcio"
    )


def test_the_table_names_the_front_ends_unless_every_row_ran_the_defaults() -> None:
    from oipcodec.bench.table import DEFAULT_FRONT_ENDS, _header_notes

    assert DEFAULT_FRONT_ENDS == ("native", "grpcio")  # oipcodec serve's
    note = "the embedded server's front ends: "
    defaults = _results("native", "grpcio", workers=[
        {"implementation": "native", "server_front_ends": {"http_protocol": "native",
                                                           "grpc_impl": "grpcio"}},
    ])  # fmt: skip
    assert not any(line.startswith(note) for line in _header_notes(defaults))
    with_pure = _results("native", "grpcio", workers=[
        *defaults["workers"],
        {"implementation": "pure", "server_front_ends": {"http_protocol": "oipcodec",
                                                         "grpc_impl": "grpcio"}},
    ])  # fmt: skip
    assert any(line.startswith(note + "HTTP/1.1 native, gRPC grpcio (pure's oipcodec")
               for line in _header_notes(with_pure))  # fmt: skip
    older = _results(None, None)  # before the options: the server's defaults then
    assert f"{note}HTTP/1.1 oipcodec, gRPC grpcio" in _header_notes(older)
