"""A GraphPipe client: ``Request`` flatbuffers POSTed to one URL (:mod:`oipcodec.graphpipe`).

::

    from oipcodec.client.graphpipe_client import GraphPipeClient

    with GraphPipeClient("http://127.0.0.1:8000/graphpipe/identity") as client:
        (out,) = client.infer([np.ones((1, 16), np.float32)], input_names=["INPUT0"])

It speaks to any GraphPipe server (oipcodec's ``/graphpipe/<model>`` or ``--graphpipe-port``,
GraphPipe's reference servers). Errors: an ``InferResponse`` that carries errors raises
:class:`~oipcodec.errors.ServerError` with the first error's message and its ``code`` as
``status``; any status but 200 raises :class:`~oipcodec.errors.ServerError` with the answer's
text; a body that is not a GraphPipe answer raises :class:`~oipcodec.errors.DecodeError`.
Answers' tensors are read-only views of the answer's bytes (String tensors: object arrays of
``bytes``). Needs only the standard library (the client's keep-alive pool).
"""

from __future__ import annotations

import ssl
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from oipcodec import graphpipe
from oipcodec.client._pool import ConnectionPool
from oipcodec.errors import ServerError, grpc_code_for
from oipcodec.kernels import Kernels
from oipcodec.limits import DEFAULT_LIMITS, Limits

__all__ = ["GraphPipeClient"]


class GraphPipeClient:
    """The GraphPipe endpoint at ``url``, over keep-alive connections. Thread-safe.

    Parameters
    ----------
    url
        The endpoint (``http://host:port/graphpipe/<model>`` on ``oipcodec serve``).
    timeout
        Bounds each call (connect, send, whole answer).
    pool_size
        The most connections kept alive.
    limits
        What the answers may hold.
    kernels
        The kernel implementation; the default is the facade's.
    headers
        Sent with every request.
    ssl_context
        Verifies an https server (default: the system's trusted certificates).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float | None = 60.0,
        pool_size: int = 4,
        limits: Limits = DEFAULT_LIMITS,
        kernels: Kernels | None = None,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http://host[:port][/path], got {url!r}")
        self.url = url
        self.timeout = timeout
        self.limits = limits
        self.kernels = kernels
        self._target = parts.path or "/"
        self.headers = dict(headers or {})
        self._pool = ConnectionPool(
            parts.scheme, parts.hostname, parts.port, pool_size, ssl_context,
            limits.max_body_bytes,
        )  # fmt: skip

    def __enter__(self) -> GraphPipeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._pool.close()

    def _post(self, body: bytes) -> bytes:
        status, answer, _ = self._pool.request(
            "POST", self._target, body, self.headers, self.timeout, self.url
        )
        if status != 200:
            text = bytes(answer[:2000]).decode("utf-8", "replace").strip()
            raise ServerError(
                text or f"HTTP {status}", status=status, code=grpc_code_for(status), url=self.url
            )
        return answer

    def metadata(self) -> graphpipe.MetadataResponse:
        """The server's ``MetadataResponse``."""
        answer = self._post(graphpipe.encode_metadata_request(kernels=self.kernels))
        return graphpipe.decode_metadata_response(answer, limits=self.limits, kernels=self.kernels)

    def infer(
        self,
        inputs: Sequence[Any],
        input_names: Sequence[str] | None = None,
        output_names: Sequence[str] | None = None,
        config: str | bytes | None = None,
    ) -> list[np.ndarray[Any, Any]]:
        """The outputs for ``inputs``.

        Parameters
        ----------
        inputs
            numpy arrays, in the order of ``input_names``, or of the model's inputs when there are
            none.
        input_names
            The inputs' names.
        output_names
            Selects outputs (default: all).
        config
            Passed to the server as it is.
        """
        body = b"".join(
            graphpipe.encode_request(
                inputs, input_names, output_names, config, kernels=self.kernels
            )
        )
        answer = graphpipe.decode_response(
            self._post(body), limits=self.limits, kernels=self.kernels
        )
        if answer.errors:
            code, message = answer.errors[0]
            raise ServerError(message, status=code, code=grpc_code_for(code), url=self.url)
        return answer.outputs
