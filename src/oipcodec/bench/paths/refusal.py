"""Whether a server takes a path: a first request it refused, read as "not supported by this
server" (and what it lacks) rather than as an error, whoever the client is."""

from __future__ import annotations

from collections.abc import Sequence

from oipcodec.bench.encoding import Encoding, EncodingPath

__all__ = ["NOT_SUPPORTED", "server_refusal"]

#: How a row that the server does not take begins (the table prints it as "not supported").
NOT_SUPPORTED = "not supported by this server"


def _lacks(path: EncodingPath) -> tuple[str, str | None] | None:
    """What a server that refuses ``path`` lacks, and the extension its metadata would list
    for it (None: no such listing); None for the paths every OIP server takes."""
    if path.encoding is Encoding.V1:
        return "no TensorRT Inference Server v1 API", None
    if path.encoding is Encoding.GRAPHPIPE:
        return "no GraphPipe endpoint", None
    if path.encoding is Encoding.SHARED_MEMORY:
        return "no system shared-memory extension", "system_shared_memory"
    if path.binary:
        return "no binary tensor data extension", "binary_tensor_data"
    if path.compression is not None:
        return f"no {path.compression}-compressed request bodies", None
    return None


#: The gRPC codes of a server that does not take what was sent (not of a model that failed).
_REFUSING_CODES = ("UNIMPLEMENTED", "INVALID_ARGUMENT", "NOT_FOUND", "UNAVAILABLE_METHOD")


def _refused(error: BaseException, server_error: type, decode_error: type) -> bool:
    """Whether ``error`` is a server's refusal of the request's form: an HTTP 4xx or 501, a
    gRPC code in :data:`_REFUSING_CODES`, or an answer that is not of the protocol (oipcodec's
    DecodeError: a v1 client answered by an OIP-only server); a model's failure (500,
    INTERNAL) is not."""
    if isinstance(error, decode_error):
        return True
    if isinstance(error, server_error):
        status, code = getattr(error, "status", None), getattr(error, "code", "")
        return (status is not None and (400 <= status < 500 or status == 501)) or (
            getattr(error, "protocol", "") == "grpc" and code in _REFUSING_CODES
        )
    # tritonclient's InferenceServerException (not imported: it may be absent): status() is
    # the HTTP status as text, or the gRPC StatusCode.
    if type(error).__name__ == "InferenceServerException":
        reader = getattr(error, "status", None)
        status = str(reader() if callable(reader) else "")
        return status.startswith("4") or any(code in status for code in _REFUSING_CODES)
    return False


def server_refusal(path: EncodingPath, error: BaseException,
                   extensions: Sequence[str] | None) -> str | None:  # fmt: skip
    """The "not supported by this server" reason for a first request on ``path`` that the
    server refused with ``error``, or None when it is an error to report (a path every OIP
    server takes, no answer at all, a wrong answer). ``extensions``: what the server's
    metadata lists (None: not known); the reason names the listing when it lacks the path's
    extension, else the server's first refusal."""
    from oipcodec.errors import DecodeError, ServerError

    lacks = _lacks(path)
    if lacks is None:
        return None
    what, extension = lacks
    unlisted = extension is not None and extensions is not None and extension not in extensions
    # A server whose metadata does not list the extension may fail it any way (MLServer
    # answers a binary body with 500); one that lists it must refuse the form to count.
    answered = isinstance(error, ServerError) or type(error).__name__ == "InferenceServerException"
    if not (_refused(error, ServerError, DecodeError) or (unlisted and answered)):
        return None
    if unlisted:
        why = f"its metadata (GET /v2) does not list {extension}"
    elif path.compression is not None:  # binary it lists (or takes): the compression it lacks
        what = f"no {path.compression}-compressed request bodies"
        why = "it refused the first request: " + " ".join(str(error).split())[:120]
    else:
        why = "it refused the first request: " + " ".join(str(error).split())[:120]
    return f"{NOT_SUPPORTED}: {what} ({why})"
