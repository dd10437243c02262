from typing import Any

import numpy as np

__all__ = ["bytes_offsets", "deserialize_bytes", "serialize_bytes"]

def serialize_bytes(values: Any) -> bytes: ...
def deserialize_bytes(
    buffer: Any, count: int | None = None, *, out: np.ndarray[Any, Any] | None = None
) -> np.ndarray[Any, Any]: ...
def bytes_offsets(
    buffer: Any, count: int | None = None
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]: ...
