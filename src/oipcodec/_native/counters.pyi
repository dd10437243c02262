from typing import Any

__all__ = ["BATCH_FIELDS", "MODEL_FIELDS", "PATH_FIELDS", "count_success"]

MODEL_FIELDS: tuple[str, ...]
BATCH_FIELDS: tuple[str, ...]
PATH_FIELDS: tuple[str, ...]

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
