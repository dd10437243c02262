"""What the twins of ``json_to_array`` share: argument checks, the element rules and every
error message.

Both ``oipcodec._native.jsondecode`` and ``oipcodec._pure.jsondecode`` start from
:func:`prepare` and end with :meth:`Job.result`. The native kernel reports a problem as a code
plus where it stopped (byte offset, element index, the index path of the array it was in);
:meth:`Job.error` turns that into the exception, and for a bad element re-reads the token with
the rules written here, so both twins raise the same class with the same message. The grammar,
in the order the walk checks it (the first offending token in text order wins):
docs/kernels.md#the-twins-shared-rules-in-full ("jsondecode").
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec._shared.buffers import byte_view
from oipcodec.errors import DatatypeError, DecodeError, LimitError, ShapeError
from oipcodec.limits import element_count

__all__ = ["Job", "exact_side", "out_dtypes", "out_kind", "prepare"]

# Element kinds.
K_BOOL = 0
K_UINT8 = 1
K_UINT16 = 2
K_UINT32 = 3
K_UINT64 = 4
K_INT8 = 5
K_INT16 = 6
K_INT32 = 7
K_INT64 = 8
K_FP16 = 9
K_FP32 = 10
K_FP64 = 11
K_BF16 = 12  # stored as ml_dtypes.bfloat16 bit patterns
K_BF16_AS_FP32 = 13  # no ml_dtypes: BF16-rounded values stored as float32
K_BYTES = 14

# The element kinds and stop codes the native kernel takes as C constants (written to
# _native/jsondecode.pxd by tools/gen_constants.py).
C_CONSTANTS = (
    "K_BOOL", "K_UINT8", "K_UINT16", "K_UINT32", "K_UINT64", "K_INT8", "K_INT16", "K_INT32",
    "K_INT64", "K_FP16", "K_FP32", "K_FP64", "K_BF16", "K_BF16_AS_FP32", "K_BYTES",
    "OK", "EXPECTED_OPEN", "EXPECTED_ARRAY", "EXPECTED_SEP", "ELEMENT", "TOO_MANY", "TOO_FEW",
    "TRAILING", "DEPTH", "PYTHON_ERROR",
)  # fmt: skip

_KINDS = {
    "BOOL": K_BOOL,
    "UINT8": K_UINT8,
    "UINT16": K_UINT16,
    "UINT32": K_UINT32,
    "UINT64": K_UINT64,
    "INT8": K_INT8,
    "INT16": K_INT16,
    "INT32": K_INT32,
    "INT64": K_INT64,
    "FP16": K_FP16,
    "FP32": K_FP32,
    "FP64": K_FP64,
    "BF16": K_BF16,
    "BYTES": K_BYTES,
}

#: Inclusive range of each integer datatype.
INT_RANGE: dict[str, tuple[int, int]] = {
    name: (int(np.iinfo(name.lower()).min), int(np.iinfo(name.lower()).max))
    for name in ("UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64")
}

#: Binary formats of the float datatypes: (significand bits incl. the implicit one, smallest
#: and largest normal exponent). FP64 needs no entry: its rounding is the decimal's own.
FLOAT_FORMAT: dict[str, tuple[int, int, int]] = {
    "FP32": (24, -126, 127),
    "FP16": (11, -14, 15),
    "BF16": (8, -126, 127),
}

# Codes the walk stops with (the native kernel's enum has the same values).
OK = 0
EXPECTED_OPEN = 1  # no '[' where the data array must start
EXPECTED_ARRAY = 2  # a nested level needs '[' here
EXPECTED_SEP = 3  # ',' or ']' expected after an entry
ELEMENT = 4  # the token at the offset is not a valid element (described by its rules)
TOO_MANY = 5  # an array has more entries than its dimension
TOO_FEW = 6  # an array closed before its dimension was reached
TRAILING = 7  # something after the data array
DEPTH = 8  # '[' nested deeper than max_depth
PYTHON_ERROR = 9  # a Python helper failed inside the native kernel (out of memory)

WHITESPACE = b" \t\n\r"
#: A bare token: everything up to white space, a structural character or a quote.
BARE = re.compile(rb'[^ \t\n\r,\[\]{}:"]+')
NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
INTEGER = re.compile(rb"-?(?:0|[1-9][0-9]*)")
#: Non-finite tokens of the float datatypes (as Python's json module writes them) and null.
FLOAT_WORDS = {b"NaN": math.nan, b"null": math.nan, b"Infinity": math.inf, b"-Infinity": -math.inf}
BOOL_WORDS = {b"true": True, b"false": False}
_HEX4 = re.compile(rb"[0-9a-fA-F]{4}")
_STRING_RUN = re.compile(rb'[^"\\\x00-\x1f]*')
_SIMPLE_ESCAPES = {
    ord('"'): b'"',
    ord("\\"): b"\\",
    ord("/"): b"/",
    ord("b"): b"\b",
    ord("f"): b"\f",
    ord("n"): b"\n",
    ord("r"): b"\r",
    ord("t"): b"\t",
}


class ElementProblem(Exception):
    """A bad element, found by the element rules: the reason and the byte offset to report."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


# Not frozen: a frozen dataclass's __init__ sets each field through object.__setattr__,
# several times the cost of a plain one, and one is made per call of the kernel.
@dataclass(slots=True)
class Job:
    """A checked call of ``json_to_array``: the text and what it must hold."""

    #: The text as one contiguous byte buffer (str arguments are UTF-8 encoded).
    data: memoryview
    datatype: str
    kind: int
    #: The shape as given (validated); () for a scalar.
    shape: tuple[int, ...]
    count: int
    #: Elements to allocate: ``count``, or fewer when the text is too short to hold ``count``
    #: elements (then it cannot be valid, and the walk fails before it would write that many;
    #: a 10-byte text declaring 2**31 elements allocates nothing big).
    alloc: int
    max_depth: int
    #: The caller's destination (``out=``), checked: C-contiguous, writable, ``count``
    #: elements of the datatype's dtype; None to allocate.
    out: np.ndarray[Any, Any] | None = None

    def storage(self) -> np.ndarray[Any, Any]:
        """The flat output buffer the walk writes to, ``alloc`` elements long, or the caller's
        ``out`` as a flat view of the walk's storage dtype (the walk writes at most ``alloc``
        elements, never more than ``out`` holds)."""
        if self.out is not None:
            flat = self.out.reshape(-1)  # a view: out is C-contiguous
            storage = np.dtype(_STORAGE[self.kind])
            return flat if flat.dtype == storage else flat.view(storage)
        return np.empty(self.alloc, dtype=_STORAGE[self.kind])

    def result(self, flat: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The filled buffer as the returned array: its shape, BF16 viewed as bfloat16; the
        caller's ``out`` itself when one was given."""
        if self.out is not None:
            return self.out
        if self.kind == K_BF16:
            dtype = datatypes.BF16_DTYPE
            assert dtype is not None
            flat = flat.view(dtype)
        return flat.reshape(self.shape)

    def error(self, code: int, offset: int, index: int, path: list[int], flat: bool) -> DecodeError:
        """The exception for a walk that stopped with ``code`` at byte ``offset``.

        ``index`` counts the elements read before it; ``path`` holds the entry counts of the
        arrays open at that point (outermost first), the last one being the array being filled;
        ``flat`` says the text was read as a flat array.
        """
        data = self.data
        shape = list(self.shape)
        if code == ELEMENT:
            problem = element_problem(data, offset, self.datatype)
            return DecodeError(problem.reason, index=index, offset=problem.offset)
        if code == DEPTH:
            return LimitError(
                f"arrays nested deeper than max_depth={self.max_depth}", index=index, offset=offset
            )
        got = describe(data, offset)
        if code == EXPECTED_OPEN:
            scalar = " (or the bare value, for shape [])" if not shape else ""
            return DecodeError(
                f"expected '[' opening the data array{scalar}, got {got}", offset=offset
            )
        if code == TRAILING:
            return DecodeError(f"unexpected {got} after the data array", offset=offset)
        if code == PYTHON_ERROR:  # pragma: no cover - needs an out-of-memory condition
            return DecodeError(
                "internal error while converting a number", index=index, offset=offset
            )
        level = len(path) - 1
        where = "data" + "".join(f"[{i}]" for i in path[:-1])
        if flat:
            dim = self.count
            form = f"the flat form of shape {shape}" if len(shape) != 1 else f"shape {shape}"
        else:
            dim = shape[level]
            form = f"shape {shape} at dimension {level}"
        if code == EXPECTED_ARRAY:
            return DecodeError(
                f"expected '[' opening {where}[{path[-1]}] (shape {shape} nests "
                f"{len(shape)} levels), got {got}{_trailing_comma(data, offset)}",
                index=index,
                offset=offset,
            )
        if code == EXPECTED_SEP:
            return DecodeError(
                f"expected ',' or ']' in {where}, got {got}", index=index, offset=offset
            )
        if code == TOO_MANY:
            return DecodeError(
                f"{where} has more than {dim} entries ({form})", index=index, offset=offset
            )
        if code == TOO_FEW:
            return DecodeError(
                f"{where} has {path[-1]} entries, {form} needs {dim}", index=index, offset=offset
            )
        raise AssertionError(f"unknown json_to_array stop code {code}")  # pragma: no cover


_STORAGE: dict[int, Any] = {
    K_BOOL: np.bool_,
    K_UINT8: np.uint8,
    K_UINT16: np.uint16,
    K_UINT32: np.uint32,
    K_UINT64: np.uint64,
    K_INT8: np.int8,
    K_INT16: np.int16,
    K_INT32: np.int32,
    K_INT64: np.int64,
    K_FP16: np.float16,
    K_FP32: np.float32,
    K_FP64: np.float64,
    K_BF16: np.uint16,
    K_BF16_AS_FP32: np.float32,
    K_BYTES: object,
}


def prepare(text: Any, datatype: str, shape: Any, max_depth: Any, out: Any = None) -> Job:
    """Check the arguments of ``json_to_array``.

    ``text`` is bytes, bytearray, memoryview (any contiguous buffer) or str (read as its UTF-8
    encoding: byte offsets in messages count in that encoding). The shape goes through
    :func:`oipcodec.limits.element_count`, which refuses absurd shapes before anything is
    allocated. ``out``, when given, is checked by :func:`out_kind`.
    """
    row = datatypes.get(datatype)
    if isinstance(text, str):
        try:
            text = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DecodeError(f"text is not encodable as UTF-8 ({exc.reason})") from None
    data = byte_view(text, "text")
    try:
        dims = tuple(shape)
    except TypeError:
        raise DecodeError(f"shape must be a sequence of integers, got {shape!r}") from None
    count = element_count(dims)
    dims = tuple(map(operator.index, dims))
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
        raise DecodeError(f"max_depth must be a non-negative integer, got {max_depth!r}")
    kind = _KINDS[row.name]
    if out is not None:
        kind = out_kind(out, row.name, kind, dims, count)
    elif kind == K_BF16 and datatypes.BF16_DTYPE is None:
        kind = K_BF16_AS_FP32
    # k elements take at least 2k - 1 bytes (one per element, a comma between each two).
    alloc = min(count, (len(data) + 1) // 2)
    return Job(data, row.name, kind, dims, count, alloc, max_depth, out)


def out_dtypes(datatype: str) -> tuple[np.dtype[Any], ...]:
    """The dtypes an ``out=`` destination of ``datatype`` may have (native byte order): the
    datatype's own; for BF16 ``ml_dtypes.bfloat16`` (when installed) and float32 (BF16-rounded
    values widened, as decoding without ml_dtypes returns them); object for BYTES."""
    if datatype == "BYTES":
        return (np.dtype(object),)
    if datatype == "BF16":
        own = () if datatypes.BF16_DTYPE is None else (datatypes.BF16_DTYPE,)
        return (*own, np.dtype(np.float32))
    dtype = datatypes.get(datatype).numpy_dtype
    assert dtype is not None
    return (dtype,)


def out_kind(out: Any, datatype: str, kind: int, shape: tuple[int, ...], count: int) -> int:
    """The element kind the walk writes into ``out`` (BF16: bit patterns into a bfloat16
    array, widened values into a float32 one), after checking that ``out`` is a writable,
    C-contiguous numpy array of an allowed dtype (:func:`out_dtypes`) holding exactly the
    ``count`` elements of ``shape``: the walk never writes past ``count`` elements."""
    if not isinstance(out, np.ndarray):
        raise DecodeError(f"out must be a numpy array, got {type(out).__name__}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise DecodeError("out must be a writable, C-contiguous numpy array")
    allowed = out_dtypes(datatype)
    if out.dtype not in allowed:
        names = " or ".join(str(d) for d in allowed)
        raise DatatypeError(f"out has dtype {out.dtype}; {datatype} data goes into {names}")
    if out.size != count:
        raise ShapeError(f"out holds {out.size} elements; shape {list(shape)} needs {count}")
    if kind == K_BF16 and out.dtype == np.float32:
        return K_BF16_AS_FP32
    return kind


# ---- describing tokens ----------------------------------------------------------------------


def _shorten(raw: bytes, limit: int = 40) -> str:
    text = raw[:limit].decode("utf-8", "backslashreplace")
    return text + ("..." if len(raw) > limit else "")


def string_token(data: Any, offset: int) -> bytes:
    """The string token starting at ``offset`` (a quote), up to its closing quote or the end."""
    end = offset + 1
    size = len(data)
    while end < size:
        byte = data[end]
        if byte == 0x22:
            return bytes(data[offset : end + 1])
        end += 2 if byte == 0x5C else 1
    return bytes(data[offset:size])


def describe(data: Any, offset: int) -> str:
    """What the text holds at ``offset``, for messages: "end of text", "an array", "','"..."""
    if offset >= len(data):
        return "end of text"
    byte = data[offset]
    if byte == 0x22:
        return f"a string {_shorten(string_token(data, offset))}"
    if byte == 0x5B:
        return "an array"
    if byte in b"]{},:":
        return repr(chr(byte))
    match = BARE.match(bytes(data[offset : offset + 64]))
    assert match is not None
    token = match.group()
    if len(token) == 64:  # longer than the window: take all of it
        end = offset + 64
        while end < len(data) and not _is_delimiter(data[end]):
            end += 1
        token = bytes(data[offset:end])
    return f"'{_shorten(token)}'"


def _is_delimiter(byte: int) -> bool:
    return byte in b' \t\n\r,[]{}:"'


def _trailing_comma(data: Any, offset: int) -> str:
    """A hint when the token at offset is ']' right after a comma."""
    if offset >= len(data) or data[offset] != 0x5D:
        return ""
    before = bytes(data[:offset]).rstrip(WHITESPACE)
    return " (trailing comma)" if before.endswith(b",") else ""


def wanted(datatype: str) -> str:
    """What an element of ``datatype`` must be, for messages."""
    if datatype == "BOOL":
        return "true or false for BOOL"
    if datatype == "BYTES":
        return "a JSON string for BYTES"
    if datatype in INT_RANGE:
        return f"a JSON integer for {datatype}"
    return f"a JSON number, NaN, Infinity, -Infinity or null for {datatype}"


# ---- the element rules ----------------------------------------------------------------------


def bare_token(data: bytes, offset: int) -> bytes | None:
    """The bare token at ``offset``, or None when a delimiter, a quote or the end is there."""
    match = BARE.match(data, offset)
    return match.group() if match else None


def element_problem(data: Any, offset: int, datatype: str) -> ElementProblem:
    """Why the element at ``offset`` is not a valid ``datatype`` element.

    This re-reads the token with the rules below; the native kernel calls it for the message
    of an element it refused, so its messages are the pure twin's.
    """
    raw = bytes(data)
    got = describe(raw, offset)
    expected = f"expected {wanted(datatype)}, got {got}{_trailing_comma(raw, offset)}"
    if datatype == "BYTES":
        if offset < len(raw) and raw[offset] == 0x22:
            try:
                decode_string(raw, offset)
            except ElementProblem as problem:
                return problem
        return ElementProblem(expected, offset)
    token = bare_token(raw, offset)
    if token is None or not lexically_valid(token, datatype):
        return ElementProblem(expected, offset)
    try:
        convert([token], [offset], datatype)
    except ElementProblem as problem:
        return problem
    raise AssertionError(  # pragma: no cover - the twins disagree: a bug
        f"json_to_array: the native kernel refused {got} for {datatype}, the rules accept it"
    )


def lexically_valid(token: bytes, datatype: str) -> bool:
    """Whether a bare token has the form a ``datatype`` element needs (ranges aside)."""
    if datatype in INT_RANGE:
        return INTEGER.fullmatch(token) is not None
    if datatype == "BOOL":
        return token in BOOL_WORDS
    if datatype == "BYTES":
        return False
    return token in FLOAT_WORDS or NUMBER.fullmatch(token) is not None


def decode_string(data: bytes, offset: int) -> tuple[bytes, int]:
    """The UTF-8 bytes of the JSON string whose opening quote is at ``offset``, and the offset
    after its closing quote.

    JSON strings (RFC 8259, section 7): raw control characters (below U+0020) must be escaped;
    the escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX, where a UTF-16 surrogate pair
    makes one code point and a lone surrogate is an error (UTF-8 cannot carry it); the raw text
    must be valid UTF-8. Problems raise :class:`ElementProblem` at the offending byte.
    """
    parts: list[bytes] = []
    size = len(data)
    pos = offset + 1
    while True:
        run = _STRING_RUN.match(data, pos)
        assert run is not None
        chunk = run.group()
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ElementProblem("invalid UTF-8 in string", pos + exc.start) from None
        parts.append(chunk)
        pos = run.end()
        if pos >= size:
            raise ElementProblem("unterminated string", offset)
        byte = data[pos]
        if byte == 0x22:
            return b"".join(parts), pos + 1
        if byte != 0x5C:
            raise ElementProblem(f"raw control character U+{byte:04X} in string (escape it)", pos)
        if pos + 1 >= size:
            raise ElementProblem("unterminated string", offset)
        escape = data[pos + 1]
        if escape in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[escape])
            pos += 2
            continue
        if escape != 0x75:  # 'u'
            shown = bytes([escape]).decode("utf-8", "backslashreplace")
            raise ElementProblem(f"invalid escape '\\{shown}' in string", pos)
        unit = _hex4(data, pos + 2)
        if unit is None:
            raise ElementProblem("invalid \\u escape in string (needs 4 hex digits)", pos)
        length = 6
        if 0xD800 <= unit <= 0xDBFF:
            low = _hex4(data, pos + 8) if data[pos + 6 : pos + 8] == b"\\u" else None
            if low is None or not 0xDC00 <= low <= 0xDFFF:
                raise ElementProblem(f"lone surrogate \\u{unit:04X} in string", pos)
            unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            length = 12
        elif 0xDC00 <= unit <= 0xDFFF:
            raise ElementProblem(f"lone surrogate \\u{unit:04X} in string", pos)
        parts.append(chr(unit).encode("utf-8"))
        pos += length


def _hex4(data: bytes, pos: int) -> int | None:
    match = _HEX4.match(data, pos)
    return int(match.group(), 16) if match and match.end() == pos + 4 else None


def convert(tokens: list[bytes], offsets: list[int], datatype: str) -> np.ndarray[Any, Any]:
    """Lexically valid tokens to values, as a flat array of the datatype's storage (BF16 as
    uint16 bit patterns); the first out-of-range token raises :class:`ElementProblem`."""
    if datatype == "BOOL":
        return np.array([BOOL_WORDS[t] for t in tokens], dtype=np.bool_)
    if datatype in INT_RANGE:
        return _integers(tokens, offsets, datatype)
    return _floats(tokens, offsets, datatype)


def _integers(tokens: list[bytes], offsets: list[int], datatype: str) -> np.ndarray[Any, Any]:
    low, high = INT_RANGE[datatype]
    values = []
    for token, offset in zip(tokens, offsets, strict=True):
        # 21 characters hold every 64-bit integer; longer ones are out of range without being
        # turned into (possibly huge) Python ints.
        value = int(token) if len(token) <= 21 else None
        if value is None or not low <= value <= high:
            raise ElementProblem(
                f"{_shorten(token)} is out of range for {datatype} ({low}..{high})", offset
            )
        values.append(value)
    return np.array(values, dtype=datatype.lower())


def _floats(tokens: list[bytes], offsets: list[int], datatype: str) -> np.ndarray[Any, Any]:
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
        return _floats_checked(tokens, offsets, datatype)


def _floats_checked(tokens: list[bytes], offsets: list[int], datatype: str) -> np.ndarray[Any, Any]:
    values = np.array([FLOAT_WORDS.get(t) or float(t) for t in tokens], dtype=np.float64)
    # `FLOAT_WORDS.get(t) or float(t)`: NaN is truthy; a 0.0 value never comes from the dict.
    if datatype == "FP64":
        rounded = values
    else:
        bits, emin_p = values.view(np.uint64), FLOAT_FORMAT[datatype]
        for i in np.flatnonzero(_midpoints(bits, *emin_p)):
            side = exact_side(tokens[i], float(values[i]))
            if side:
                values[i] = np.nextafter(values[i], math.inf * side)
        if datatype == "FP32":
            rounded = values.astype(np.float32)
        elif datatype == "FP16":
            rounded = values.astype(np.float16)  # numpy narrows float64 in one rounding
        else:
            rounded = bf16_bits(values)
    if datatype == "BF16":
        overflow = (rounded & np.uint16(0x7FFF)) == np.uint16(0x7F80)
    else:
        overflow = np.isinf(rounded)
    for i in np.flatnonzero(overflow):
        if tokens[i] not in FLOAT_WORDS:
            raise ElementProblem(
                f"{_shorten(tokens[i])} is out of range for {datatype} (rounds to infinity; "
                "only the token Infinity stands for an infinite value)",
                offsets[i],
            )
    return _canonical_nan(rounded, datatype, tokens)


#: The canonical quiet NaN of each float datatype (sign and payload cleared).
CANONICAL_NAN = {"FP16": 0x7E00, "FP32": 0x7FC00000, "FP64": 0x7FF8000000000000, "BF16": 0x7FC0}


def _canonical_nan(
    rounded: np.ndarray[Any, Any], datatype: str, tokens: list[bytes]
) -> np.ndarray[Any, Any]:
    bits = rounded.view(f"u{rounded.dtype.itemsize}")
    nan = np.array([t in (b"NaN", b"null") for t in tokens], dtype=bool)
    bits[nan] = CANONICAL_NAN[datatype]
    return rounded


def _midpoints(bits: np.ndarray[Any, Any], p: int, emin: int, emax: int) -> np.ndarray[Any, Any]:
    """Which float64s (as bits) lie exactly halfway between two adjacent values of the binary
    format (p significand bits, normal exponents emin..emax); see read/decimal_to_float.h's
    oipcodec_is_midpoint, the same rule in C."""
    biased = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    exponent = biased - 1023
    mantissa = (bits & np.uint64(0x000FFFFFFFFFFFFF)) | np.uint64(1 << 52)
    quantum = np.maximum(exponent, emin) - (p - 1)
    s = quantum - 1 - (exponent - 52)
    usable = (biased != 0) & (biased != 0x7FF) & (exponent <= emax) & (s >= 1) & (s <= 52)
    shift = np.where(usable, s, 1).astype(np.uint64)
    low = mantissa & ((np.uint64(2) << shift) - np.uint64(1))
    return usable & (low == (np.uint64(1) << shift))


def bf16_bits(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """float64 values rounded once, to nearest even, to BF16 bit patterns (uint16).

    float32 rounded to odd keeps enough of the float64 (16 bits more than BF16) for the final
    round-to-nearest-even to be the direct rounding; NaN becomes 0x7FC0 with its sign.
    """
    single = values.astype(np.float32)
    sbits = single.view(np.uint32).copy()
    back = single.astype(np.float64)
    finite = np.isfinite(values)
    inexact = finite & (back != values) & ((sbits & 1) == 0)
    # Rounding went away from zero where |back| > |values|: step back towards zero, else on.
    away = np.abs(back) > np.abs(values)
    sbits[inexact & away] -= np.uint32(1)
    sbits[inexact & ~away] += np.uint32(1)
    rounded = (sbits + np.uint32(0x7FFF) + ((sbits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(
        16
    )
    out = rounded.astype(np.uint16)
    nan = np.isnan(values)
    out[nan] = ((sbits[nan] >> np.uint32(16)) & np.uint32(0x8000)).astype(np.uint16) | np.uint16(
        0x7FC0
    )
    return out


def exact_side(token: bytes, value: float) -> int:
    """-1, 0 or 1 as the decimal number ``token`` is below, equal to or above ``value`` (a
    finite float).

    Only needed when ``value`` (the token's float64) lies exactly halfway between two values
    of a narrower format. Such a value is within a float64 step of the token, so at most ~800
    significant digits of the token can matter: later ones only say "a little more", which
    keeps the integers compared here small even for absurdly long tokens.
    """
    match = re.fullmatch(rb"(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?", token)
    assert match is not None
    sign, whole, fraction, exponent = match.groups()
    fraction = fraction or b""
    # |token| = int(whole + fraction) * 10**(exponent - len(fraction)); keep 800 digits of it.
    digits = (whole + fraction).lstrip(b"0")
    kept, rest = digits[:800], digits[800:]
    power = 0
    if exponent:  # leading zeros stripped first: int() refuses over 4300 digits
        power = int(exponent.lstrip(b"+-").lstrip(b"0") or b"0") * (
            -1 if exponent[:1] == b"-" else 1
        )
    scale = power - len(fraction) + len(rest)
    magnitude = Fraction(int(kept)) * Fraction(10) ** scale if kept else Fraction(0)
    more = rest.strip(b"0") != b""
    target = Fraction(abs(value))
    # Equal leading digits: the dropped ones decide.
    side = (magnitude > target) - (magnitude < target) if magnitude != target else int(more)
    return -side if sign else side


#: The contract of each kernel of the family, given to both twins as its docstring.
CONTRACTS: dict[str, str] = {
    "json_to_array": """The JSON array ``text`` as a numpy array of ``datatype`` and ``shape``.

    Integer datatypes take JSON integers in range, BOOL true/false, BYTES strings (an object
    array of UTF-8 bytes), FP16/FP32/FP64/BF16 any JSON number correctly rounded (round half to
    even; overflow is an error) or NaN, Infinity, -Infinity and null (NaN). BF16 gives an
    ``ml_dtypes.bfloat16`` array, or without ml_dtypes a float32 array of BF16-rounded values.

    Parameters
    ----------
    text
        Bytes, bytearray, memoryview or str holding one JSON array (white space around it
        allowed), flat (``prod(shape)`` elements) or nested exactly as ``shape``; for shape
        ``[]`` the bare value is accepted too.
    datatype
        The OIP datatype of the elements.
    shape
        The tensor's shape.
    max_depth
        The deepest nesting accepted.
    out
        Parse straight into this writable, C-contiguous array instead of a new one, and return
        it. It holds exactly ``prod(shape)`` elements (any shape: a batch buffer's rows) of the
        datatype's dtype (BF16: ``bfloat16`` or float32; BYTES: object), else
        :class:`ShapeError` / :class:`DatatypeError` before anything is read. Nothing is written
        past its elements; when the text is refused, what its elements hold is unspecified.

    Raises
    ------
    DecodeError
        Naming the flat element index and the byte offset; :class:`LimitError` for nesting
        deeper than ``max_depth``.
    """,
}
