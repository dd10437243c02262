"""What the twins of ``locate_data`` (``oipcodec._native.jsonscan``, ``oipcodec._pure.jsonscan``)
share: the section codes of the spans they return and the errors for text that is not JSON.
"""

from __future__ import annotations

from oipcodec.errors import DecodeError

__all__ = ["SECTION_INPUTS", "SECTION_OUTPUTS", "scan_error", "unbalanced", "unterminated_string"]

# Which array of the body a located ``data`` span belongs to.
SECTION_INPUTS = 0
SECTION_OUTPUTS = 1
C_CONSTANTS = ("SECTION_INPUTS", "SECTION_OUTPUTS")  # written to _native/jsonscan.pxd


def scan_error(data: bytes | memoryview, pos: int, expected: str) -> DecodeError:
    """The error for scanning text that stopped being JSON at byte ``pos``."""
    if pos >= len(data):
        return DecodeError(f"JSON ends early: expected {expected}", offset=pos)
    got = bytes(data[pos : pos + 1]).decode("latin-1")
    return DecodeError(f"invalid JSON: expected {expected}, got {got!r}", offset=pos)


def unterminated_string(pos: int) -> DecodeError:
    return DecodeError("JSON ends early: unterminated string", offset=pos)


def unbalanced(pos: int) -> DecodeError:
    return DecodeError("JSON ends early: unbalanced brackets", offset=pos)


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "locate_data": """Where the tensor ``data`` values of an OIP JSON body are.

    Keys are compared as written (a key spelled with escapes is not recognised, and its value
    is then left to the envelope parser).

    Parameters
    ----------
    buffer
        The body's JSON text (any buffer).

    Returns
    -------
    list
        ``(section, tensor_index, start, end)`` per ``data`` member found, in text order:
        ``section`` is 0 for the top-level ``inputs`` array and 1 for ``outputs``, and
        ``buffer[start:end]`` is the value's text.

    Raises
    ------
    DecodeError
        With the byte offset where the text stops being JSON-shaped.
    """,
}
