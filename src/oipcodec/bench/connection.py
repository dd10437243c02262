"""How ``oipcodec bench`` reaches a server given by ``--url`` / ``--grpc-target``: the headers
sent with every request (``-H 'Name: value'``) and TLS (``https://`` URLs, gRPC with
``--ssl-grpc-use-ssl``), with perf_analyzer's option names (``--ssl-https-*``,
``--ssl-grpc-*``). Every client of every path is built from one :class:`Connection`: oipcodec's
(REST, gRPC, v1, GraphPipe) and tritonclient's.
"""

from __future__ import annotations

import argparse
import ssl
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["REDACTED", "Connection", "add_arguments", "from_arguments", "parse_header", "scheme"]

#: What a result file holds in place of a header's value.
REDACTED = "<redacted>"


def scheme(url: str) -> str:
    """``url``'s scheme in lower case ("" when it names none): schemes are case-insensitive
    (RFC 3986, 3.1), so ``HTTPS://`` is https and gets TLS."""
    name, separator, _ = url.partition("://")
    return name.lower() if separator else ""


def parse_header(text: str) -> tuple[str, str]:
    """``'Name: value'`` (perf_analyzer's ``-H`` form; the space is optional) as a pair;
    ValueError naming the text when it has no name or no colon."""
    name, colon, value = text.partition(":")
    if not colon or not name.strip() or name != name.strip():
        raise ValueError(f"-H takes 'Name: value', got {text!r}")
    return name, value.strip()


@dataclass
class Connection:
    """Headers and TLS settings for the clients of a bench run (JSON-able: the worker gets
    them in its spec). File options name PEM files."""

    headers: dict[str, str] = field(default_factory=dict)
    #: perf_analyzer's --ssl-https-verify-peer (0: no check of the server's certificate).
    https_verify_peer: int = 1
    #: --ssl-https-verify-host (0: the certificate need not name the host; 1 and 2: it must).
    https_verify_host: int = 2
    https_ca_certificates_file: str | None = None
    https_client_certificate_file: str | None = None
    https_private_key_file: str | None = None
    grpc_use_ssl: bool = False
    grpc_root_certifications_file: str | None = None
    grpc_private_key_file: str | None = None
    grpc_certificate_chain_file: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def redacted(self) -> dict[str, Any]:
        """:meth:`as_dict` with every header's value replaced by :data:`REDACTED` (the names
        kept): what a result file holds, since a header may carry a credential."""
        return {**self.as_dict(), "headers": dict.fromkeys(self.headers, REDACTED)}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> Connection:
        return cls(**dict(values or {}))

    def ssl_context(self) -> ssl.SSLContext:
        """The context oipcodec's REST clients verify an https server with."""
        context = ssl.create_default_context(cafile=self.https_ca_certificates_file)
        if not self.https_verify_host or not self.https_verify_peer:
            context.check_hostname = False
        if not self.https_verify_peer:
            context.verify_mode = ssl.CERT_NONE
        if self.https_client_certificate_file:
            context.load_cert_chain(self.https_client_certificate_file, self.https_private_key_file)
        return context

    def grpc_credentials(self) -> Any:
        """grpc's channel credentials with ``--ssl-grpc-use-ssl``, else None (plain text)."""
        if not self.grpc_use_ssl:
            return None
        import grpc

        def read(path: str | None) -> bytes | None:
            return Path(path).read_bytes() if path else None

        return grpc.ssl_channel_credentials(
            read(self.grpc_root_certifications_file),
            read(self.grpc_private_key_file),
            read(self.grpc_certificate_chain_file),
        )

    def http_options(self, url: str) -> dict[str, Any]:
        """Keyword arguments of oipcodec's REST clients for ``url``."""
        https = scheme(url) == "https"
        return {"headers": self.headers, "ssl_context": self.ssl_context() if https else None}

    def grpc_options(self) -> dict[str, Any]:
        """Keyword arguments of oipcodec's gRPC clients."""
        return {"headers": self.headers, "credentials": self.grpc_credentials()}

    def triton_http_options(self, url: str) -> dict[str, Any]:
        """Keyword arguments of tritonclient.http.InferenceServerClient for ``url``."""
        if scheme(url) != "https":
            return {}
        options: dict[str, Any] = {}
        if self.https_ca_certificates_file:
            options["ca_certs"] = self.https_ca_certificates_file
        if self.https_client_certificate_file:
            options["certfile"] = self.https_client_certificate_file
            options["keyfile"] = self.https_private_key_file
        insecure = not self.https_verify_peer or not self.https_verify_host
        return {"ssl": True, "ssl_options": options, "insecure": insecure}

    def triton_grpc_options(self) -> dict[str, Any]:
        """Keyword arguments of tritonclient.grpc.InferenceServerClient (file paths)."""
        if not self.grpc_use_ssl:
            return {}
        return {
            "ssl": True,
            "root_certificates": self.grpc_root_certifications_file,
            "private_key": self.grpc_private_key_file,
            "certificate_chain": self.grpc_certificate_chain_file,
        }


def _pem(kind: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value.upper() != "PEM":
            raise argparse.ArgumentTypeError(f"{kind} must be PEM (DER is not read), got {value!r}")
        return value

    return check


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``-H`` and perf_analyzer's ``--ssl-*`` options, on ``parser``."""
    add = parser.add_argument
    add("-H", "--header", dest="headers", action="append", metavar="'NAME: VALUE'",
        help="a header sent with every request, on every path (repeatable; over gRPC as "
        "metadata, the name in lower case); results.json keeps its name, never its "
        "value")  # fmt: skip
    add("--ssl-https-verify-peer", type=int, choices=(0, 1), default=1,
        help="1 (default): check the https server's certificate; 0: do not")  # fmt: skip
    add("--ssl-https-verify-host", type=int, choices=(0, 1, 2), default=2,
        help="0: the certificate need not name the host; 1 or 2 (default): it must")  # fmt: skip
    add(
        "--ssl-https-ca-certificates-file",
        metavar="FILE",
        help="PEM certificates to verify the https server with (default: the system's)",
    )
    add("--ssl-https-client-certificate-file", metavar="FILE",
        help="a PEM client certificate for the https server")  # fmt: skip
    add("--ssl-https-client-certificate-type", type=_pem("the client certificate type"),
        default="PEM", help="PEM (the only form read)")  # fmt: skip
    add("--ssl-https-private-key-file", metavar="FILE",
        help="the PEM private key of the client certificate")  # fmt: skip
    add("--ssl-https-private-key-type", type=_pem("the private key type"), default="PEM",
        help="PEM (the only form read)")  # fmt: skip
    add("--ssl-grpc-use-ssl", action="store_true",
        help="gRPC over TLS (--grpc-target); the certificate files below, if any")  # fmt: skip
    add("--ssl-grpc-root-certifications-file", metavar="FILE",
        help="PEM root certificates to verify the gRPC server with")  # fmt: skip
    add("--ssl-grpc-private-key-file", metavar="FILE",
        help="the PEM private key of a gRPC client certificate")  # fmt: skip
    add("--ssl-grpc-certificate-chain-file", metavar="FILE",
        help="the PEM certificate chain of a gRPC client certificate")  # fmt: skip


def from_arguments(args: argparse.Namespace) -> Connection:
    """The :class:`Connection` the options of :func:`add_arguments` describe; ValueError for
    a header without a colon, or a file that does not exist."""
    headers = dict(parse_header(text) for text in args.headers or ())
    connection = Connection(
        headers=headers,
        https_verify_peer=args.ssl_https_verify_peer,
        https_verify_host=args.ssl_https_verify_host,
        https_ca_certificates_file=args.ssl_https_ca_certificates_file,
        https_client_certificate_file=args.ssl_https_client_certificate_file,
        https_private_key_file=args.ssl_https_private_key_file,
        grpc_use_ssl=args.ssl_grpc_use_ssl,
        grpc_root_certifications_file=args.ssl_grpc_root_certifications_file,
        grpc_private_key_file=args.ssl_grpc_private_key_file,
        grpc_certificate_chain_file=args.ssl_grpc_certificate_chain_file,
    )
    for name, value in asdict(connection).items():
        if name.endswith("_file") and value and not Path(value).is_file():
            raise ValueError(f"--ssl-{name.replace('_', '-')} {value}: no such file")
    return connection
