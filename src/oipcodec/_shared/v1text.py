"""What the v1 header text reader and its pure twin share: the plain text form they read, the
fields and bounds, and the contract.

The plain form is the one clients write (protobuf's one-line text format of an
``InferRequestHeader`` as C++'s ``ShortDebugString`` and Python's ``MessageToString`` print
it): ``field: value`` and ``field { ... }`` (an optional ``:`` before ``{``), separated by ASCII
white space; values are decimal integers without leading zeros (text format reads ``010`` as
octal) and double-quoted strings without a backslash or line break. Every other text (escapes,
comments, ``,`` and ``;`` separators, ``< >``, list syntax, hex, unknown or repeated fields,
out-of-range numbers, non-ASCII white space) is not read: the kernel answers ``None`` and the
codec hands the text to google.protobuf's ``text_format``, whose result or error stands. So
whatever the kernel reads, it reads as text_format does (tests/kernels/test_v1text.py checks
it against text_format).
"""

from __future__ import annotations

__all__ = [
    "CONTRACTS",
    "HEADER_FIELDS",
    "INT64_MAX",
    "RESPONSE_FIELDS",
    "UINT32_MAX",
    "UINT64_MAX",
]

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
INT64_MAX = 2**63 - 1

#: The header's own scalar fields and their largest value (uint32 or uint64).
HEADER_FIELDS = {
    "batch_size": UINT32_MAX,
    "flags": UINT32_MAX,
    "id": UINT64_MAX,
    "correlation_id": UINT64_MAX,
}

#: The response header's own integer fields and their bounds (low, high): model_version is
#: an int64, batch_size a uint32, id a uint64 (model_name is its one string).
RESPONSE_FIELDS = {
    "model_version": (-INT64_MAX - 1, INT64_MAX),
    "batch_size": (0, UINT32_MAX),
    "id": (0, UINT64_MAX),
}

CONTRACTS: dict[str, str] = {
    "scan_request_header": """The fields of an ``InferRequestHeader`` written in the plain
    text form (see ``oipcodec._shared.v1text``), or ``None`` for any other text.

    ``text`` is a ``str``. Returns ``(fields, inputs, outputs)``: ``fields`` a dict of the
    header's scalar fields given (``batch_size``, ``flags``: uint32; ``id``,
    ``correlation_id``: uint64), ``inputs`` a list with one dict per ``input { }`` (``name``
    when given, ``dims``: a list of int64, always present, ``batch_byte_size`` when given:
    uint64), ``outputs`` a list with one dict per ``output { }`` (``name`` when given, ``cls``:
    the uint32 ``count`` of ``cls { count: N }`` when given), each in text order. A field given
    twice (but ``dims``), an unknown field, a value out of its type's range, or anything
    outside the plain form answers ``None``. Time is linear in the text's length.
    """,
    "scan_response_header": """The fields of an ``InferResponseHeader`` of RAW outputs
    written in the plain text form, or ``None`` for any other text (``batch_classes``
    included: classes carry floats, which text_format reads).

    ``text`` is a ``str``. Returns ``(fields, outputs)``: ``fields`` a dict of the header's
    scalar fields given (``model_name``: str, ``model_version``: int64, ``batch_size``:
    uint32, ``id``: uint64), ``outputs`` a list with one dict per ``output { }`` (``name``
    when given, ``raw``: a dict with ``dims``, a list of int64, always present, and
    ``batch_byte_size``, a uint64, when given; ``raw`` when a ``raw { }`` is given), in text
    order. The same rules as ``scan_request_header`` otherwise.
    """,
}
