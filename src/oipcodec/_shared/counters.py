"""What the twins of the statistics counting kernel (``oipcodec._native.counters``,
``oipcodec._pure.counters``) share: the layout of the server's blocks of 64-bit slots, the
kernel's contract and its errors.

The slots are the inference statistics of one process (:mod:`oipcodec.server.stats` makes
and reads them): a writable buffer of native-endian int64, a block of slots per model
version, per (model version, batch size) and per encoding path, at offsets the caller
allocates. The kernel counts one answered request into its blocks, each index checked
against the buffer's length before anything is written. A slot wraps past 2**63 - 1, as
the C integer does (a sum of nanoseconds gets there in 292 years).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "BATCH_FIELDS",
    "BATCH_WIDTH",
    "CONTRACTS",
    "MODEL_FIELDS",
    "MODEL_WIDTH",
    "SlotLayout",
    "M_EXTRA_ROWS",
    "M_INFER_NS",
    "M_INPUT_NS",
    "M_LAST",
    "M_OUTPUT_NS",
    "M_QUEUE_NS",
    "M_SUCCESS_NS",
    "PATH_FIELDS",
    "PATH_WIDTH",
    "block_outside",
    "not_slots",
    "slot_layout",
]

#: The slots of a model version's block (what each means: :mod:`oipcodec.server.stats`).
MODEL_FIELDS = (
    "success_count",
    "success_ns",
    "fail_count",
    "fail_ns",
    "failed_executions",
    "queue_ns",
    "compute_input_ns",
    "compute_infer_ns",
    "compute_output_ns",
    "extra_rows",
    "last_inference",
    "merged",
    "rejected",
)
#: The slots of a (model version, batch size) block.
BATCH_FIELDS = ("count", "compute_input_ns", "compute_infer_ns", "compute_output_ns")
#: The slots of an encoding path's block.
PATH_FIELDS = ("requests", "request_bytes", "response_bytes", "decode_ns", "encode_ns")


class SlotLayout(NamedTuple):
    """The names of the slots of each kind of block, in slot order."""

    model: tuple[str, ...]
    batch: tuple[str, ...]
    path: tuple[str, ...]


def slot_layout() -> SlotLayout:
    """The layout of the statistics' blocks of slots that ``count_success`` writes: the names
    of a model version's, a (model version, batch size)'s and an encoding path's slots."""
    return SlotLayout(MODEL_FIELDS, BATCH_FIELDS, PATH_FIELDS)


# The native kernel's slot indices and block widths, from the tables above.
MODEL_WIDTH, BATCH_WIDTH, PATH_WIDTH = len(MODEL_FIELDS), len(BATCH_FIELDS), len(PATH_FIELDS)
M_SUCCESS_NS = MODEL_FIELDS.index("success_ns")
M_QUEUE_NS = MODEL_FIELDS.index("queue_ns")
M_INPUT_NS = MODEL_FIELDS.index("compute_input_ns")
M_INFER_NS = MODEL_FIELDS.index("compute_infer_ns")
M_OUTPUT_NS = MODEL_FIELDS.index("compute_output_ns")
M_EXTRA_ROWS = MODEL_FIELDS.index("extra_rows")
M_LAST = MODEL_FIELDS.index("last_inference")

C_CONSTANTS = (
    "MODEL_WIDTH",
    "BATCH_WIDTH",
    "PATH_WIDTH",
    "M_SUCCESS_NS",
    "M_QUEUE_NS",
    "M_INPUT_NS",
    "M_INFER_NS",
    "M_OUTPUT_NS",
    "M_EXTRA_ROWS",
    "M_LAST",
)


def not_slots(readonly: bool, contiguous: bool, size: int) -> TypeError:
    """The error for a ``slots`` buffer that is read-only, not contiguous, or not whole int64
    slots."""
    if readonly:
        return TypeError("statistics slots: the buffer is read-only; expected a writable one")
    if not contiguous:
        return TypeError("statistics slots: the buffer is strided; expected a contiguous one")
    return TypeError(f"statistics slots: the buffer is {size} bytes; expected whole 8-byte slots")


def block_outside(block: str, base: int, width: int, slots: int) -> IndexError:
    """The error for a ``block`` whose ``width`` slots at ``base`` are not all in ``slots``."""
    return IndexError(
        f"statistics slots: the {block} block at slot {base} ({width} slots) is outside the "
        f"buffer's {slots} slots"
    )


CONTRACTS: dict[str, str] = {
    "count_success": """Count one answered inference request into the statistics ``slots``.

    Adds to the model block: 1 success, ``encoded - received`` success ns, ``started -
    checked`` queue ns, ``checked - received`` input ns, ``finished - started`` infer ns,
    ``encoded - finished`` output ns, ``rows - 1`` extra rows, and sets its last inference to
    ``received``; to the path block: 1 request, both sizes, the input and output ns as decode
    and encode ns; to the batch block: 1 and the input, infer and output ns. Each addition
    wraps as int64. The layout of the blocks is :func:`slot_layout`'s.

    Parameters
    ----------
    slots
        A writable, contiguous buffer of native-endian int64 slots (a ``memoryview`` of a
        memory map cast to ``"q"``, a ``bytearray``...).
    model
        The first slot of the model version's block.
    path
        The first slot of the encoding path's block.
    batch
        The first slot of the batch size's block, or -1: none.
    rows
        The request's batch size (1 for a model that does not batch).
    received, checked, started, finished, encoded
        ``perf_counter_ns`` readings: body received, request decoded and checked, predict
        started, predict finished, answer encoded.
    request_bytes, response_bytes
        The request's and the answer's sizes.

    Raises
    ------
    TypeError
        ``slots`` is read-only, strided, or not a whole number of 8-byte slots.
    IndexError
        A block is not wholly inside ``slots`` (nothing is written), named with its offset.
    OverflowError
        An argument does not fit in int64.
    """,
}
