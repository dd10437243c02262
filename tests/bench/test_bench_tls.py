"""`oipcodec bench` with headers (-H) and TLS (perf_analyzer's --ssl-* options), against our
server behind TLS with a self-signed certificate made here; the server refuses requests
without the header, so every path shows that it sends it (tests/support/tls_server.py)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from oipcodec import cli
from oipcodec.bench.connection import parse_header
from tests.support.tls_server import TlsServer, tls_server

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("aiohttp", reason="the client extra is not installed")

HEADER = ("X-Bench-Token", "s3cret")
#: Every path but shared memory (a local path: the TLS server offers no regions).
NETWORK_PATHS = "rest-json,rest-json-nested,rest-binary,rest-binary-gzip,grpc-raw,grpc-typed,"
NETWORK_PATHS += "v1-http-raw,v1-grpc,graphpipe"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsServer]:
    with tls_server(tmp_path_factory.mktemp("tls"), HEADER) as running:
        yield running


def _bench(tmp_path: Path, server: TlsServer, *args: str, url: str | None = None,
           grpc_target: str | None = None) -> tuple[int, dict[str, Any], str]:  # fmt: skip
    """``oipcodec bench`` against the server: the exit status, results.json ({} when none was
    written), and what it printed (stdout and stderr)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = cli.main(
            ["bench", "--url", url or server.url, "--grpc-target",
             grpc_target or server.grpc_target, "--payload", "small", "--concurrency", "1",
             "--duration", "0.1", "--no-chart", "--output-dir", str(tmp_path), *args]
        )  # fmt: skip
    path = tmp_path / "results.json"
    return status, json.loads(path.read_text()) if path.exists() else {}, out.getvalue()


def _trusted(server: TlsServer) -> list[str]:
    return ["--ssl-https-ca-certificates-file", str(server.certificate), "--ssl-grpc-use-ssl",
            "--ssl-grpc-root-certifications-file", str(server.certificate)]  # fmt: skip


def test_every_path_over_tls_with_the_header(server: TlsServer, tmp_path: Path) -> None:
    status, results, table = _bench(
        tmp_path, server, "--path", NETWORK_PATHS, "--implementation", "native,tritonclient",
        "-H", f"{HEADER[0]}: {HEADER[1]}", *_trusted(server),
    )  # fmt: skip
    assert status == 0, table
    measured = [r for r in results["results"] if not r.get("unsupported")]
    assert {r["path"] for r in measured if r["implementation"] == "native"} == set(
        NETWORK_PATHS.split(",")
    )
    assert {r["path"] for r in measured if r["implementation"] == "tritonclient"} == {
        "rest-json", "rest-binary", "rest-binary-gzip", "grpc-raw",
    }  # fmt: skip
    for record in measured:
        assert record["error"] is None, record
        assert record["load"][0]["rps"] > 0 and not record["load"][0].get("errors"), record
    assert results["options"]["connection"]["headers"] == {HEADER[0]: "<redacted>"}


def test_header_values_never_reach_a_result_file(server: TlsServer, tmp_path: Path) -> None:
    """A header may carry a credential: results.json keeps its name, and no file written holds
    its value."""
    csv, profile = tmp_path / "rows.csv", tmp_path / "profile.json"
    status, results, out = _bench(
        tmp_path, server, "--path", "rest-json", "--implementation", "native",
        "-H", f"{HEADER[0]}: {HEADER[1]}", *_trusted(server), "--csv", str(csv),
        "--profile-export", str(profile),
    )  # fmt: skip
    assert status == 0, out
    assert results["options"]["connection"]["headers"] == {HEADER[0]: "<redacted>"}
    for written in (tmp_path / "results.json", csv, profile):
        assert HEADER[1] not in written.read_text(), written


def test_an_upper_case_scheme_is_the_same_scheme(server: TlsServer, tmp_path: Path) -> None:
    """Schemes are case-insensitive (RFC 3986, 3.1): ``HTTPS://`` is TLS for every client
    (tritonclient's would otherwise speak plain HTTP and send the header in clear text), and
    ``GRPC://`` names the gRPC target."""
    status, results, out = _bench(
        tmp_path, server, "--path", "rest-json,grpc-raw", "--implementation", "native",
        "--implementation", "tritonclient", "-H", f"{HEADER[0]}: {HEADER[1]}", *_trusted(server),
        url=server.url.replace("https://", "HTTPS://"),
        grpc_target="GRPC://" + server.grpc_target,
    )  # fmt: skip
    assert status == 0, out
    assert len(results["results"]) == 4
    for record in results["results"]:
        assert record["error"] is None, record
        assert record["load"][0]["rps"] > 0, record


def test_without_the_header_the_server_refuses(server: TlsServer, tmp_path: Path) -> None:
    """The model's metadata is read before the sweep: the refusal is one line, exit 2."""
    for path, refusal in (("rest-json", "401"), ("grpc-raw", "UNAUTHENTICATED")):
        status, results, out = _bench(
            tmp_path, server, "--path", path, "--implementation", "native", *_trusted(server)
        )  # fmt: skip
        assert status == 2 and results == {}, out
        (line,) = out.splitlines()
        assert line.startswith("oipcodec bench: ") and refusal in line, line


def test_the_certificate_is_checked(server: TlsServer, tmp_path: Path) -> None:
    """Without the CA file the self-signed certificate is refused; --ssl-https-verify-peer 0
    takes it (perf_analyzer's switch)."""
    header = ["-H", f"{HEADER[0]}: {HEADER[1]}", "--path", "rest-binary", "--implementation",
              "native"]  # fmt: skip
    status, _, out = _bench(tmp_path / "a", server, *header)
    assert status == 2 and "CERTIFICATE_VERIFY_FAILED" in out, out
    status, results, _ = _bench(tmp_path / "b", server, *header, "--ssl-https-verify-peer", "0")
    assert status == 0 and results["results"][0]["error"] is None


def test_header_and_file_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_header("X-A: b c") == ("X-A", "b c")
    assert parse_header("X-A:b") == ("X-A", "b")
    for bad in ("no colon", ": value", " X-A: b"):
        with pytest.raises(ValueError, match="-H takes 'Name: value'"):
            parse_header(bad)
    assert cli.main(["bench", "--url", "http://127.0.0.1:1", "-H", "broken"]) == 2
    assert "-H takes 'Name: value', got 'broken'" in capsys.readouterr().err
    missing = ["bench", "--url", "https://127.0.0.1:1", "--ssl-https-ca-certificates-file",
               "/no/such.pem"]  # fmt: skip
    assert cli.main(missing) == 2
    assert "/no/such.pem: no such file" in capsys.readouterr().err
