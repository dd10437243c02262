from typing import Any

from oipcodec._shared.counters import SlotLayout

__all__ = ["SlotLayout", "count_success", "slot_layout"]

def slot_layout() -> SlotLayout: ...
def count_success(
    slots: Any,
    model: int,
    path: int,
    batch: int,
    rows: int,
    received: int,
    checked: int,
    started: int,
    finished: int,
    encoded: int,
    request_bytes: int,
    response_bytes: int,
) -> None: ...
