"""oipcodec's server behind TLS with a self-signed certificate, for the bench's header and TLS
tests: the REST app (v1 API and GraphPipe mounted) under uvicorn with ``ssl_certfile``, and
the OIP and v1 gRPC services on a port with TLS credentials; both refuse a request that lacks
a given header (401, UNAUTHENTICATED), so a test sees whether every path sends it. Runs in a
thread of the test process on free 127.0.0.1 ports; stopped when the block exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.ports import free_ports


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for ``localhost`` and ``127.0.0.1`` and its key (PEM files in
    ``directory``): with the cryptography package when installed, else the openssl CLI."""
    cert, key = directory / "server.crt", directory / "server.key"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out", str(cert),
             "-days", "1", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


@dataclass(frozen=True)
class TlsServer:
    url: str  # https://127.0.0.1:PORT
    grpc_target: str  # 127.0.0.1:PORT, TLS
    certificate: Path


def _guarded(app: Any, name: str, value: str) -> Any:
    """``app``, answering 401 to an HTTP request without the header ``name: value``."""
    wanted = (name.lower().encode(), value.encode())

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and wanted not in list(scope["headers"]):
            body = f'{{"error":"the header {name} is missing"}}'.encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return guarded


def _interceptor(name: str, value: str) -> Any:
    import grpc

    async def refuse(request: Any, context: Any) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"the header {name} is missing")

    class Guard(grpc.aio.ServerInterceptor):  # type: ignore[misc]
        async def intercept_service(self, continuation: Any, details: Any) -> Any:
            if (name.lower(), value) in tuple(details.invocation_metadata or ()):
                return await continuation(details)
            return grpc.unary_unary_rpc_method_handler(refuse)

    return Guard()


@contextlib.contextmanager
def tls_server(directory: Path, header: tuple[str, str]) -> Iterator[TlsServer]:
    """Serve the demo models and the v1 paths' typed identity models over TLS (REST and
    gRPC), refusing requests without ``header``. The gRPC server is grpcio's whatever
    ``OIPCODEC_TEST_GRPC_IMPL`` says: the native one has no TLS."""
    import grpc
    import uvicorn

    from oipcodec.bench.paths import v1_models
    from oipcodec.server.demo import demo_models
    from oipcodec.server.frontends.grpc_frontend import InferenceServicer
    from oipcodec.server.frontends.trtis_frontend import V1Frontend, add_to_server
    from oipcodec.server.registry import ModelRegistry
    from oipcodec.server.runtime.apps import create_app

    cert, key = self_signed(directory)
    http_port, grpc_port = free_ports(2)
    started, failed = threading.Event(), []
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        registry = ModelRegistry([*demo_models(), *v1_models()])
        app = _guarded(create_app(registry), *header)
        config = uvicorn.Config(app, host="127.0.0.1", port=http_port, ssl_certfile=str(cert),
                                ssl_keyfile=str(key), log_level="warning", lifespan="on")  # fmt: skip
        http = uvicorn.Server(config)
        rpc = grpc.aio.server(interceptors=[_interceptor(*header)])
        servicer = InferenceServicer(registry)
        rpc.add_generic_rpc_handlers((servicer.handler(),))
        add_to_server(V1Frontend(registry, ready=lambda: True), rpc)
        credentials = grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
        rpc.add_secure_port(f"127.0.0.1:{grpc_port}", credentials)
        await rpc.start()
        task = asyncio.create_task(http.serve())
        while not http.started and not task.done():
            await asyncio.sleep(0.05)
        started.set()
        await stop.wait()
        http.should_exit = True
        await task
        await rpc.stop(0)

    def run() -> None:
        try:
            loop.run_until_complete(serve())
        except BaseException as exc:  # reported to the test
            failed.append(exc)
            started.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        if not started.wait(60) or failed:
            raise RuntimeError(f"the TLS server did not start: {failed}")
        yield TlsServer(f"https://127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}", cert)
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
