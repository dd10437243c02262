"""The exceptions of oipcodec, shared by the native kernels and their pure twins.

Every error is an :class:`OIPError`, itself a :class:`ValueError`, so code that already catches
``ValueError`` around a codec keeps working. A message says where the problem is (the tensor,
the flat row-major element index, the byte offset) and what was expected there::

    DecodeError: input 'INPUT0': element 3 at byte offset 17: expected a JSON integer, got 1.5

Kernels do not know tensor names; the codec layer that does attaches it with
:meth:`OIPError.for_tensor`, which keeps the class and the location.
"""

from __future__ import annotations

__all__ = ["DatatypeError", "DecodeError", "EncodeError", "LimitError", "OIPError", "ShapeError"]


class OIPError(ValueError):
    """Base class of every oipcodec error.

    Attributes ``tensor``, ``index`` and ``offset`` carry the location when it is known
    (else ``None``); ``reason`` is the message without the location prefix.
    """

    def __init__(
        self,
        reason: str,
        *,
        tensor: str | None = None,
        index: int | None = None,
        offset: int | None = None,
        kind: str = "tensor",
    ) -> None:
        self.reason = reason
        self.tensor = tensor
        self.index = index
        self.offset = offset
        self.kind = kind
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = []
        if self.tensor is not None:
            where.append(f"{self.kind} '{self.tensor}'")
        if self.index is not None and self.offset is not None:
            where.append(f"element {self.index} at byte offset {self.offset}")
        elif self.index is not None:
            where.append(f"element {self.index}")
        elif self.offset is not None:
            where.append(f"byte offset {self.offset}")
        return ": ".join([*where, self.reason])

    def for_tensor(self, name: str, kind: str = "tensor", offset_base: int = 0) -> OIPError:
        """The same error, of the same class, located in tensor ``name``.

        ``kind`` names the role in messages: ``"input"``, ``"output"`` or ``"tensor"``.
        ``offset_base`` is added to the byte offset: where the text the error's offset counts
        from starts in a larger body.
        """
        offset = None if self.offset is None else self.offset + offset_base
        return type(self)(self.reason, tensor=name, index=self.index, offset=offset, kind=kind)

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only arguments need help to survive pickling (multiprocess servers).
        return (
            _rebuild,
            (type(self), self.reason, self.tensor, self.index, self.offset, self.kind),
        )


def _rebuild(
    cls: type[OIPError],
    reason: str,
    tensor: str | None,
    index: int | None,
    offset: int | None,
    kind: str,
) -> OIPError:
    return cls(reason, tensor=tensor, index=index, offset=offset, kind=kind)


class DecodeError(OIPError):
    """Bytes or text received from the wire do not form what the protocol says they must."""


class EncodeError(OIPError):
    """A value cannot be written in the requested wire form (wrong type, out of range...)."""


class LimitError(DecodeError):
    """A request exceeds a configured limit (size, element count, depth...).

    Raised before any memory is allocated for the oversized part.
    """


class DatatypeError(OIPError):
    """An unknown OIP datatype name, or a numpy dtype that no OIP datatype carries."""


class ShapeError(OIPError):
    """An invalid shape (negative or non-integer dimension), or data whose element count does
    not match its shape."""
