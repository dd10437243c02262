"""The servicer context of a call on the native gRPC server: what a handler is handed as
``context``, the part of ``grpc.aio.ServicerContext`` oipcodec's handlers use, over one
:class:`~oipcodec.server.h2._session.Stream`.

A write into a stream the client has left raises ``grpc.aio.UsageError``, the error grpcio's
context raises for a write into a finished call, so the front ends' ``client_gone`` treats
both servers alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

import grpc

from oipcodec.server.h2._session import GrpcAbort

__all__ = ["CallContext", "Metadata"]

#: Metadata as the Stream carries it: ``(key, value)`` pairs, a ``-bin`` key's value bytes.
Metadata = tuple[tuple[str, str | bytes], ...]

#: What grpcio answers for a request message its deserializer refuses.
DESERIALIZE_FAILED = "Exception deserializing request!"


class CallContext:
    """The context of one call (``grpc.aio.ServicerContext``'s subset).

    Parameters
    ----------
    stream
        The call's stream (``path``, ``metadata``, ``deadline``, ``peer``, ``cancelled``,
        ``initial_metadata``, ``trailing_metadata``, ``read()``, ``write()``).
    deserialize, serialize
        The method's request deserializer and response serializer (None: bytes as they are).
    """

    __slots__ = ("_code", "_deserialize", "_details", "_done", "_serialize", "stream")

    def __init__(
        self,
        stream: Any,
        deserialize: Callable[[bytes], Any] | None = None,
        serialize: Callable[[Any], bytes] | None = None,
    ) -> None:
        self.stream = stream
        self._deserialize = deserialize
        self._serialize = serialize
        self._code: grpc.StatusCode | None = None
        self._details: str | None = None
        self._done = False

    # ------------------------------------------------------------------ ending the call

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Metadata = ()
    ) -> None:
        """End the call with ``code`` and ``details`` (raises, as grpcio's abort does)."""
        if code == grpc.StatusCode.OK:
            raise ValueError("abort with StatusCode.OK")  # grpcio refuses it too
        if trailing_metadata:
            self.set_trailing_metadata(trailing_metadata)
        self._code, self._details = code, details
        raise GrpcAbort(code.value[0], details)

    def set_code(self, code: grpc.StatusCode) -> None:
        """The status the call ends with when the handler returns."""
        self._code = code

    def set_details(self, details: str) -> None:
        """The status message the call ends with when the handler returns."""
        self._details = details

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def details(self) -> str | None:
        return self._details

    def ended(self) -> None:
        """The handler returned: raise :class:`GrpcAbort` if it set a status other than OK
        (grpcio sends that status, not the response)."""
        self._done = True
        code = self._code
        if code is not None and code != grpc.StatusCode.OK:
            raise GrpcAbort(code.value[0], self._details or "")

    def answer(self, response: Any) -> bytes:
        """The handler returned ``response``: its bytes, or :class:`GrpcAbort` for a status
        other than OK that it set (:meth:`ended`)."""
        self.ended()
        return response if self._serialize is None else self._serialize(response)

    def done(self) -> bool:
        return self._done

    # ------------------------------------------------------------------ about the call

    def invocation_metadata(self) -> Metadata:
        return self.stream.metadata

    def time_remaining(self) -> float | None:
        """Seconds left before the deadline, None without one."""
        deadline = self.stream.deadline
        if deadline is None:
            return None
        return max(0.0, deadline - asyncio.get_running_loop().time())

    def cancelled(self) -> bool:
        return self.stream.cancelled

    def peer(self) -> str:
        return self.stream.peer

    # ------------------------------------------------------------------ metadata

    async def send_initial_metadata(self, initial_metadata: Iterable[tuple[str, Any]]) -> None:
        """The response headers' metadata, sent with the first message (or the status)."""
        self.stream.initial_metadata = list(initial_metadata)

    def set_trailing_metadata(self, trailing_metadata: Iterable[tuple[str, Any]]) -> None:
        self.stream.trailing_metadata = list(trailing_metadata)

    def trailing_metadata(self) -> Metadata:
        return tuple(self.stream.trailing_metadata)

    # ------------------------------------------------------------------ messages

    def request(self, message: bytes) -> Any:
        """A request message deserialized; one the deserializer refuses ends the call with
        INTERNAL, as grpcio ends it."""
        if self._deserialize is None:
            return message
        try:
            return self._deserialize(message)
        except Exception:
            raise GrpcAbort(grpc.StatusCode.INTERNAL.value[0], DESERIALIZE_FAILED) from None

    def response(self, message: Any) -> bytes:
        """A response message serialized."""
        return message if self._serialize is None else self._serialize(message)

    async def read(self) -> Any:
        """The next request message, or ``grpc.aio.EOF`` once the client has sent them all."""
        message = await self.stream.read()
        return grpc.aio.EOF if message is None else self.request(message)

    async def write(self, message: Any) -> None:
        """One response message, sent when the stream's flow control lets it."""
        data = self.response(message)
        try:
            await self.stream.write(data)
        except _GONE as exc:
            raise grpc.aio.UsageError(f"the client has left the call ({exc})") from None
        # One loop turn per message, as grpcio's write takes: the stream's write returns at
        # once below its bound, and a handler that writes in a loop would otherwise hold the
        # loop (no flush, no RST_STREAM read) until a megabyte of messages is queued.
        await asyncio.sleep(0)

    async def requests(self) -> Any:
        """The request messages, as the async iterator a request-streaming handler takes."""
        stream = self.stream
        while (message := await stream.read()) is not None:
            yield self.request(message)


#: What ``Stream.write`` raises once the stream is gone (reset by the client, the connection
#: lost, the call ended).
_GONE = ConnectionError
