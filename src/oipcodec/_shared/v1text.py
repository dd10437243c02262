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

from typing import Any

__all__ = [
    "CONTRACTS",
    "COUNT",
    "DIMS",
    "INT64",
    "INT64_MAX",
    "MANY",
    "MESSAGES",
    "ONE",
    "STRING",
    "UINT32_MAX",
    "UINT64_MAX",
]

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
INT64_MAX = 2**63 - 1

INT64 = "int64"
STRING = "string"
DIMS = "dims"
COUNT = "count"
ONE = "one"
MANY = "many"

#: Each message of the plain form, field by field, with its kind: an int (unsigned, from 0 to
#: that bound), INT64, STRING, DIMS (int64s: the one scalar field that may repeat; ``[]`` when
#: absent), COUNT (``{ count: N }``, N a uint32, read as N), or ``(ONE, message)`` and
#: ``(MANY, message)`` (a nested message once, or repeated into a list in text order). Any other
#: field, or one given twice, is not the plain form. Both twins read the text by this table.
MESSAGES: dict[str, dict[str, Any]] = {
    "request": {
        "input": (MANY, "input"),
        "output": (MANY, "output"),
        "batch_size": UINT32_MAX,
        "flags": UINT32_MAX,
        "id": UINT64_MAX,
        "correlation_id": UINT64_MAX,
    },
    "input": {"name": STRING, "dims": DIMS, "batch_byte_size": UINT64_MAX},
    "output": {"name": STRING, "cls": COUNT},
    "response": {
        "output": (MANY, "response_output"),
        "model_name": STRING,
        "model_version": INT64,
        "batch_size": UINT32_MAX,
        "id": UINT64_MAX,
    },
    "response_output": {"name": STRING, "raw": (ONE, "raw")},
    "raw": {"dims": DIMS, "batch_byte_size": UINT64_MAX},
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
