"""OIP REST clients: :class:`HttpClient` (its own pool on sockets) and :class:`AsyncHttpClient`
(aiohttp).

Both keep connections alive and build and read bodies with :mod:`oipcodec.rest`: inputs as
JSON (``binary=False``) or with the binary tensor data extension (``binary=True``, the
default), optionally gzip- or deflate-compressed (``compression=``). Binary outputs come back
as read-only numpy views of the response body; a compressed answer is inflated within
:class:`~oipcodec.Limits`' size cap.
"""

# Decision: the synchronous client runs on oipcodec.client._pool and the asyncio one on aiohttp,
# the cheapest transports per request measured (docs/measurements.md#http-clients). Nothing
# decompresses for us (aiohttp has auto_decompress=False): rest.decode_response inflates with
# its size cap.

from __future__ import annotations

import asyncio
import contextlib
import http.client
import ssl
import urllib.parse
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from oipcodec import rest
from oipcodec.client._pool import ConnectionPool, answer_too_large, connect_message
from oipcodec.client._request import Inputs, Outputs, build_request
from oipcodec.client.shm import (
    Action,
    AsyncSharedMemoryCalls,
    RegionTable,
    SharedMemoryCalls,
)
from oipcodec.errors import (
    DecodeError,
    RequestTimeoutError,
    ServerConnectionError,
    ServerError,
    grpc_code_for,
)
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.types import InferRequest, InferResponse, Parameters, RequestedOutput

__all__ = ["AsyncHttpClient", "HttpClient"]

_JSON = "application/json"
_BINARY = "application/octet-stream"


def _base_url(url: str) -> tuple[str, str]:
    """``(origin, path prefix)`` of a server URL; ``host:port`` alone means ``http://``."""
    if "://" not in url:
        url = "http://" + url
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")


def _model_path(model: str, version: str | None, action: str = "") -> str:
    path = "/v2/models/" + urllib.parse.quote(model, safe="")
    if version:
        path += "/versions/" + urllib.parse.quote(str(version), safe="")
    return path + action


def _infer_body(
    request: InferRequest, binary: bool, nested: bool, compression: str | None
) -> tuple[bytes, dict[str, str]]:
    body, header_length = rest.encode_request(request, binary=binary, nested=nested)
    headers = {"Content-Type": _JSON if header_length is None else _BINARY}
    if header_length is not None:
        headers[rest.HEADER_LENGTH] = str(header_length)
    if compression is not None:
        body = rest.compress(body, compression)
        headers["Content-Encoding"] = compression
        headers["Accept-Encoding"] = compression
    return body, headers


def _shm_path(name: str, action: str) -> str:
    """The system shared-memory endpoint ``action`` (status, register, unregister) for region
    ``name``, or for every region when ``name`` is empty (Triton's paths)."""
    region = f"/region/{urllib.parse.quote(name, safe='')}" if name else ""
    return f"/v2/systemsharedmemory{region}/{action}"


def _server_error(status: int, body: bytes, url: str, encoding: str | None) -> ServerError:
    """The error a non-2xx answer stands for; the message is the body's ``error`` string when
    it has one (OIP error bodies are ``{"error": "..."}``), else the body's text."""
    if encoding and encoding.strip().lower() not in ("", "identity"):
        with contextlib.suppress(DecodeError):
            body = rest.decompress(body, encoding, 1 << 20)
    message = ""
    try:
        document = orjson.loads(body)
        if isinstance(document, dict) and isinstance(document.get("error"), str):
            message = document["error"]
    except orjson.JSONDecodeError:
        pass
    if not message:
        text = body[:500].decode("utf-8", "replace").strip()
        message = text or "(empty body)"
    return ServerError(message, status=status, code=grpc_code_for(status), url=url)


def _document(status: int, body: bytes, url: str, encoding: str | None) -> Any:
    if status >= 300:
        raise _server_error(status, body, url, encoding)
    if not body.strip():
        return {}
    if encoding and encoding.strip().lower() not in ("", "identity"):
        body = rest.decompress(body, encoding)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise DecodeError(f"the answer from {url} is not JSON: {exc.msg}") from None


def _events(lines: Iterable[bytes], where: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a server-sent event stream's ``data:`` events, from its lines; an
    ``{"error": ...}`` event raises :class:`ServerError` (the generate extension's error after
    its first response)."""
    data: list[bytes] = []
    for line in lines:
        line = line.rstrip(b"\r\n")
        if line.startswith(b"data:"):
            data.append(line[5:].removeprefix(b" "))
        elif not line and data:
            yield _event(b"\n".join(data), where)
            data = []
    if data:
        yield _event(b"\n".join(data), where)


def _event(data: bytes, where: str) -> dict[str, Any]:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise DecodeError(f"an event from {where} is not JSON: {exc.msg}") from None
    if not isinstance(document, dict):
        raise DecodeError(f"an event from {where} is not a JSON object")
    if isinstance(document.get("error"), str) and len(document) == 1:
        raise ServerError(document["error"], status=200, code="STREAM_ERROR", url=where)
    return document


class _Common:
    def __init__(self, url: str, timeout: float | None, headers: Mapping[str, str] | None,
                 limits: Limits) -> None:  # fmt: skip
        self.url = url
        self._origin, self._prefix = _base_url(url)
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.limits = limits
        #: The shared-memory regions registered through this client (outputs written there
        #: come back read from them).
        self.regions = RegionTable()

    def _where(self, path: str) -> str:
        return self._origin + self._prefix + path

    def _seconds(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is None else timeout

    def _event_stream(
        self, model: str, request: Mapping[str, Any], model_version: str | None
    ) -> tuple[str, bytes, dict[str, str]]:
        """A generate_stream request: its path (under the URL's prefix), body and headers (the
        client's with the stream's)."""
        path = _model_path(model, model_version, "/generate_stream")
        headers = {**self.headers, "Content-Type": _JSON, "Accept": "text/event-stream"}
        return path, orjson.dumps(request), headers

    def _response(
        self,
        status: int,
        body: bytes,
        headers: Mapping[str, str],
        path: str,
        requested: Sequence[RequestedOutput] | None = None,
    ) -> InferResponse:
        encoding = headers.get("Content-Encoding")
        if status != 200:
            raise _server_error(status, body, self._where(path), encoding)
        return rest.decode_response(
            body,
            headers.get(rest.HEADER_LENGTH),
            encoding,
            limits=self.limits,
            shared_memory=self.regions.resolve,
            requested=requested,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


class HttpClient(SharedMemoryCalls, _Common):
    """A synchronous OIP REST client over a pool of keep-alive HTTP/1.1 connections.

    A request that fails on a reused keep-alive connection before any byte of its answer
    arrived (the server had closed it) is sent once more on a new one; a connection whose
    answer is followed by bytes nobody asked for is closed, not reused. Thread-safe: share one
    client between threads. Close it (or use ``with``) when done.

    Parameters
    ----------
    url
        ``http://host:port`` or ``https://`` (a path prefix is kept; bare ``host:port`` means
        http).
    timeout
        Seconds, overridable per call, that bound the whole call: the wait for a free
        connection, the connect, the sends and the whole answer (head and body), so a server
        that trickles its answer is cut off at it with :class:`~oipcodec.RequestTimeoutError`;
        ``None`` waits forever.
    pool_size
        Connections kept alive, the most that run at once (more threads than that wait for a
        free one).
    headers
        Sent with every request.
    limits
        What an answer may hold: an answer body over ``limits.max_body_bytes`` is refused with
        :class:`~oipcodec.errors.LimitError` before it is read.
    ssl_context
        What https verifies the server against; by default the system's trusted certificates
        (``ssl.create_default_context()``).
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:8000",
        *,
        timeout: float | None = 60.0,
        pool_size: int = 10,
        headers: Mapping[str, str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(url, timeout, headers, limits)
        self._ssl_context = ssl_context
        parts = urllib.parse.urlsplit(self._origin)
        self._pool = ConnectionPool(
            parts.scheme, parts.hostname or "", parts.port, pool_size, ssl_context,
            limits.max_body_bytes,
        )  # fmt: skip

    # ------------------------------------------------------------------ transport

    def _request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> tuple[int, bytes, Mapping[str, str]]:
        seconds = self._seconds(timeout)
        return self._pool.request(
            method,
            self._prefix + path,
            body,
            {**self.headers, **headers} if headers else self.headers,
            seconds,
            self._where(path),
        )

    def _get(self, path: str, timeout: float | None = None) -> tuple[int, bytes, Mapping[str, str]]:
        return self._request("GET", path, timeout=timeout)

    def _post_json(self, path: str, document: Any, timeout: float | None = None) -> Any:
        status, body, headers = self._request(
            "POST", path, orjson.dumps(document), {"Content-Type": _JSON}, timeout
        )
        return _document(status, body, self._where(path), headers.get("Content-Encoding"))

    # ------------------------------------------------------------------ generate

    def generate(
        self,
        model: str,
        request: Mapping[str, Any],
        model_version: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Triton's generate extension: ``request`` (a JSON object: ``id``, the model's inputs
        by name, ``parameters``...) answered by one JSON object (docs/streaming.md).

        Parameters
        ----------
        model
            The model's name.
        request
            The generate request: each of the model's inputs by name (a value or a flat
            array), ``id``, ``parameters``, and any other key as a request parameter.
        model_version
            The model's version; default the server's choice.
        timeout
            Seconds, overriding the client's.

        Raises
        ------
        ServerError
            The server refused; a model that answers other than once is refused too.
        """
        path = _model_path(model, model_version, "/generate")
        answer: dict[str, Any] = self._post_json(path, request, timeout)
        return answer

    def generate_stream(
        self,
        model: str,
        request: Mapping[str, Any],
        model_version: str | None = None,
        timeout: float | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Triton's ``generate_stream``: each response's JSON object as its event arrives.
        It runs on a connection of its own (not the pool's), closed when the loop ends: a
        loop left early closes it, and the server then stops the model.

        Parameters
        ----------
        model, request, model_version
            As in :meth:`generate`.
        timeout
            Bounds the connect and each wait for the next event (not the whole stream).

        Raises
        ------
        ServerError
            The server refused (its status), or an error event (status 200).
        """
        path, body, headers = self._event_stream(model, request, model_version)
        where = self._where(path)
        parts = urllib.parse.urlsplit(self._origin)
        seconds = self._seconds(timeout)
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            context = self._ssl_context or ssl.create_default_context()
            connection = http.client.HTTPSConnection(
                parts.hostname or "", parts.port, timeout=seconds, context=context
            )
        else:
            connection = http.client.HTTPConnection(
                parts.hostname or "", parts.port, timeout=seconds
            )
        try:
            try:
                connection.request("POST", self._prefix + path, body, headers)
                answer = connection.getresponse()
            except TimeoutError:
                raise RequestTimeoutError(f"POST {where}: no answer within {seconds} s") from None
            except OSError as exc:
                raise ServerConnectionError(connect_message(where, exc), url=where) from None
            if answer.status != 200:
                error = answer.read(self.limits.max_body_bytes)
                raise _server_error(
                    answer.status, error, where, answer.getheader("Content-Encoding")
                )
            yield from _events(answer, where)
        finally:
            connection.close()

    # ------------------------------------------------------------------ inference

    def infer(
        self,
        model: str,
        inputs: Inputs,
        outputs: Outputs = None,
        binary: bool = True,
        compression: str | None = None,
        parameters: Parameters | None = None,
        id: str | None = None,
        model_version: str | None = None,
        timeout: float | None = None,
        *,
        nested: bool = False,
    ) -> InferResponse:
        """Run ``model`` on ``inputs``.

        Parameters
        ----------
        model
            The model's name.
        inputs
            A dict name -> ndarray, or a list of :class:`~oipcodec.Tensor`.
        outputs
            Names (or :class:`~oipcodec.RequestedOutput`) to ask for; default all.
        binary
            Send the inputs and ask for the outputs with the binary tensor data extension (else
            JSON).
        compression
            ``"gzip"`` or ``"deflate"`` for the request body and the answer.
        parameters
            The request's parameters.
        id
            The request's id, echoed in the answer.
        model_version
            The model's version; default the server's choice.
        timeout
            Seconds, overriding the client's (``None``: the client's).
        nested
            JSON data nested by shape (else flat).

        Raises
        ------
        ServerError
            The server refused (its status, code and message).
        RequestTimeoutError, ServerConnectionError
            No answer in time; no server.
        EncodeError, DecodeError
            The codec's, for the request or the answer.
        """
        request = build_request(model, inputs, outputs, parameters, id, model_version)
        return self.infer_request(request, binary, compression, timeout, nested=nested)

    def infer_request(
        self,
        request: InferRequest,
        binary: bool = True,
        compression: str | None = None,
        timeout: float | None = None,
        *,
        nested: bool = False,
    ) -> InferResponse:
        """:meth:`infer` for a ready-made :class:`~oipcodec.InferRequest`.

        Parameters
        ----------
        request
            The request; its ``model_name`` is the model.
        binary, compression, timeout, nested
            As in :meth:`infer`.
        """
        if not request.model_name:
            raise ValueError("the request has no model_name")
        body, headers = _infer_body(request, binary, nested, compression)
        path = _model_path(request.model_name, request.model_version, "/infer")
        status, data, answer_headers = self._request("POST", path, body, headers, timeout)
        return self._response(status, data, answer_headers, path, request.outputs)

    # ------------------------------------------------------------------ health and metadata

    def live(self, timeout: float | None = None) -> bool:
        """Whether the server is live (200 on ``v2/health/live``).

        Parameters
        ----------
        timeout
            Seconds, overriding the client's.
        """
        return self._get("/v2/health/live", timeout)[0] == 200

    def ready(self, timeout: float | None = None) -> bool:
        """Whether the server is ready (200 on ``v2/health/ready``).

        Parameters
        ----------
        timeout
            Seconds, overriding the client's.
        """
        return self._get("/v2/health/ready", timeout)[0] == 200

    def model_ready(
        self, model: str, version: str | None = None, timeout: float | None = None
    ) -> bool:
        """Whether the model (version) is ready; an unknown model is not ready.

        Parameters
        ----------
        model, version
            The model's name and version (default: the server's choice).
        timeout
            Seconds, overriding the client's.
        """
        return self._get(_model_path(model, version, "/ready"), timeout)[0] == 200

    def server_metadata(self, timeout: float | None = None) -> dict[str, Any]:
        """The server's metadata: ``{name, version, extensions}``.

        Parameters
        ----------
        timeout
            Seconds, overriding the client's.
        """
        status, body, headers = self._get("/v2", timeout)
        return _document(status, body, self._where("/v2"), headers.get("Content-Encoding"))

    def model_metadata(
        self, model: str, version: str | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """The model's metadata: ``{name, versions, platform, inputs, outputs}``.

        ``inputs`` and ``outputs`` are lists of ``{name, datatype, shape}``.

        Parameters
        ----------
        model, version
            The model's name and version (default: the server's choice).
        timeout
            Seconds, overriding the client's.
        """
        path = _model_path(model, version)
        status, body, headers = self._get(path, timeout)
        return _document(status, body, self._where(path), headers.get("Content-Encoding"))

    def repository_index(
        self, ready: bool = False, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """The repository's models: ``[{name, version, state, reason}]``.

        Parameters
        ----------
        ready
            List ready models only.
        timeout
            Seconds, overriding the client's.
        """
        document = {"ready": True} if ready else {}
        return self._post_json("/v2/repository/index", document, timeout)

    def model_statistics(
        self, model: str = "", version: str | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """The statistics extension's ``{"model_stats": [...]}``.

        Triton's cumulative counts and nanoseconds.

        Parameters
        ----------
        model
            The model; every model when empty.
        version
            The model's version.
        timeout
            Seconds, overriding the client's.
        """
        path = _model_path(model, version, "/stats") if model else "/v2/models/stats"
        status, body, headers = self._get(path, timeout)
        return _document(status, body, self._where(path), headers.get("Content-Encoding"))

    def load_model(self, model: str, timeout: float | None = None) -> None:
        """Ask the server to load ``model`` (repository extension).

        Parameters
        ----------
        model
            The model's name.
        timeout
            Seconds, overriding the client's.
        """
        self._post_json(f"/v2/repository/models/{urllib.parse.quote(model, safe='')}/load", {},
                        timeout)  # fmt: skip

    def unload_model(self, model: str, timeout: float | None = None) -> None:
        """Ask the server to unload ``model`` (repository extension).

        Parameters
        ----------
        model
            The model's name.
        timeout
            Seconds, overriding the client's.
        """
        self._post_json(f"/v2/repository/models/{urllib.parse.quote(model, safe='')}/unload",
                        {}, timeout)  # fmt: skip

    # ------------------------------------------------------------------ shared memory

    def _shm_request(
        self, action: Action, name: str, fields: dict[str, Any], timeout: float | None
    ) -> list[dict[str, Any]]:
        path = _shm_path(name, action)
        if action != "status":
            self._post_json(path, fields, timeout)
            return []
        status, body, headers = self._get(path, timeout)
        return _document(status, body, self._where(path), headers.get("Content-Encoding"))

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close the pooled connections."""
        self._pool.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncHttpClient(AsyncSharedMemoryCalls, _Common):
    """The asyncio twin of :class:`HttpClient` (aiohttp); the same methods, as coroutines.

    The session is opened on first use, in the running event loop; ``await client.close()``
    (or ``async with``) closes it. aiohttp reads the framing (llhttp): a chunk size that is not
    hex digits is refused, a :class:`~oipcodec.client.ServerConnectionError`.

    Parameters
    ----------
    url, headers
        As in :class:`HttpClient`.
    timeout
        Bounds the whole call (aiohttp's ``total``), overridable per call.
    pool_size
        Bounds the connections open at once.
    limits
        An answer body over ``limits.max_body_bytes`` is refused with
        :class:`~oipcodec.errors.LimitError` (chunked answers too, as the chunks arrive).
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:8000",
        *,
        timeout: float | None = 60.0,
        pool_size: int = 100,
        headers: Mapping[str, str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        import aiohttp

        super().__init__(url, timeout, headers, limits)
        self._aiohttp = aiohttp
        self._pool_size = pool_size
        self._session: Any = None

    def _get_session(self) -> Any:
        if self._session is None or self._session.closed:
            aiohttp = self._aiohttp
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size),
                auto_decompress=False,
                timeout=aiohttp.ClientTimeout(total=None),
                skip_auto_headers=("User-Agent",),
            )
        return self._session

    async def _request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> tuple[int, bytes, Mapping[str, str]]:
        aiohttp = self._aiohttp
        seconds = self._seconds(timeout)
        where = self._where(path)
        session = self._get_session()
        try:
            async with session.request(
                method,
                where,
                data=body,
                headers={**self.headers, **(headers or {})},
                timeout=aiohttp.ClientTimeout(total=seconds),
                allow_redirects=False,
            ) as response:
                # The body up to the client's limit, refused as soon as it is known to be over.
                limit = self.limits.max_body_bytes
                declared = response.content_length
                if declared is not None and declared > limit:
                    raise answer_too_large(method, where, str(declared), limit)
                parts, total = [], 0
                async for chunk in response.content.iter_chunked(1 << 20):
                    total += len(chunk)
                    if total > limit:
                        raise answer_too_large(method, where, f"more than {limit}", limit)
                    parts.append(chunk)
                return response.status, b"".join(parts), response.headers
        except aiohttp.ClientConnectorError as exc:
            raise ServerConnectionError(connect_message(where, exc), url=where) from None
        except asyncio.TimeoutError:
            raise RequestTimeoutError(
                f"{method} {where}: no answer within {seconds} s", url=where
            ) from None
        except aiohttp.ClientError as exc:
            raise ServerConnectionError(
                f"{method} {where}: {type(exc).__name__}: {exc}", url=where
            ) from None

    async def _post_json(self, path: str, document: Any, timeout: float | None = None) -> Any:
        status, body, headers = await self._request(
            "POST", path, orjson.dumps(document), {"Content-Type": _JSON}, timeout
        )
        return _document(status, body, self._where(path), headers.get("Content-Encoding"))

    async def generate(
        self,
        model: str,
        request: Mapping[str, Any],
        model_version: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """As :meth:`HttpClient.generate`.

        Parameters
        ----------
        model, request, model_version, timeout
            As in :meth:`HttpClient.generate`.
        """
        path = _model_path(model, model_version, "/generate")
        answer: dict[str, Any] = await self._post_json(path, request, timeout)
        return answer

    async def generate_stream(
        self,
        model: str,
        request: Mapping[str, Any],
        model_version: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """As :meth:`HttpClient.generate_stream`.

        Parameters
        ----------
        model, request, model_version
            As in :meth:`HttpClient.generate`.
        timeout
            Bounds the connect and each wait for the next event.
        """
        aiohttp = self._aiohttp
        path, body, headers = self._event_stream(model, request, model_version)
        where = self._where(path)
        seconds = self._seconds(timeout)
        try:
            async with self._get_session().post(
                where,
                data=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=seconds, sock_read=seconds),
            ) as answer:
                if answer.status != 200:
                    error = await answer.content.read(self.limits.max_body_bytes)
                    raise _server_error(
                        answer.status, error, where, answer.headers.get("Content-Encoding")
                    )
                lines: list[bytes] = []
                async for line in answer.content:
                    if line.strip():
                        lines.append(line)
                        continue
                    for event in _events(lines, where):
                        yield event
                    lines = []
                for event in _events(lines, where):
                    yield event
        except aiohttp.ClientConnectorError as exc:
            raise ServerConnectionError(connect_message(where, exc), url=where) from None
        except asyncio.TimeoutError:
            raise RequestTimeoutError(f"POST {where}: no event within {seconds} s") from None

    async def infer(
        self,
        model: str,
        inputs: Inputs,
        outputs: Outputs = None,
        binary: bool = True,
        compression: str | None = None,
        parameters: Parameters | None = None,
        id: str | None = None,
        model_version: str | None = None,
        timeout: float | None = None,
        *,
        nested: bool = False,
    ) -> InferResponse:
        """As :meth:`HttpClient.infer`.

        Parameters
        ----------
        model, inputs, outputs, binary, compression, parameters, id, model_version, timeout, nested
            As in :meth:`HttpClient.infer`.
        """
        request = build_request(model, inputs, outputs, parameters, id, model_version)
        return await self.infer_request(request, binary, compression, timeout, nested=nested)

    async def infer_request(
        self,
        request: InferRequest,
        binary: bool = True,
        compression: str | None = None,
        timeout: float | None = None,
        *,
        nested: bool = False,
    ) -> InferResponse:
        """As :meth:`HttpClient.infer_request`.

        Parameters
        ----------
        request, binary, compression, timeout, nested
            As in :meth:`HttpClient.infer_request`.
        """
        if not request.model_name:
            raise ValueError("the request has no model_name")
        body, headers = _infer_body(request, binary, nested, compression)
        path = _model_path(request.model_name, request.model_version, "/infer")
        status, data, answer_headers = await self._request("POST", path, body, headers, timeout)
        return self._response(status, data, answer_headers, path, request.outputs)

    async def live(self, timeout: float | None = None) -> bool:
        return (await self._request("GET", "/v2/health/live", timeout=timeout))[0] == 200

    async def ready(self, timeout: float | None = None) -> bool:
        return (await self._request("GET", "/v2/health/ready", timeout=timeout))[0] == 200

    async def model_ready(self, model: str, version: str | None = None,
                          timeout: float | None = None) -> bool:  # fmt: skip
        path = _model_path(model, version, "/ready")
        return (await self._request("GET", path, timeout=timeout))[0] == 200

    async def server_metadata(self, timeout: float | None = None) -> dict[str, Any]:
        status, body, headers = await self._request("GET", "/v2", timeout=timeout)
        return _document(status, body, self._where("/v2"), headers.get("Content-Encoding"))

    async def model_metadata(
        self, model: str, version: str | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        path = _model_path(model, version)
        status, body, headers = await self._request("GET", path, timeout=timeout)
        return _document(status, body, self._where(path), headers.get("Content-Encoding"))

    async def repository_index(self, ready: bool = False,
                               timeout: float | None = None) -> list[dict[str, Any]]:  # fmt: skip
        document = {"ready": True} if ready else {}
        return await self._post_json("/v2/repository/index", document, timeout)

    async def load_model(self, model: str, timeout: float | None = None) -> None:
        await self._post_json(
            f"/v2/repository/models/{urllib.parse.quote(model, safe='')}/load", {}, timeout
        )

    async def unload_model(self, model: str, timeout: float | None = None) -> None:
        await self._post_json(
            f"/v2/repository/models/{urllib.parse.quote(model, safe='')}/unload", {}, timeout
        )

    async def _shm_request(
        self, action: Action, name: str, fields: dict[str, Any], timeout: float | None
    ) -> list[dict[str, Any]]:
        path = _shm_path(name, action)
        if action != "status":
            await self._post_json(path, fields, timeout)
            return []
        status, body, headers = await self._request("GET", path, timeout=timeout)
        return _document(status, body, self._where(path), headers.get("Content-Encoding"))

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> AsyncHttpClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
