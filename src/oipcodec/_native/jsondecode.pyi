from typing import Any

import numpy as np

__all__ = ["json_to_array"]

def json_to_array(
    text: Any,
    datatype: str,
    shape: Any,
    *,
    max_depth: int = 100,
    out: np.ndarray[Any, Any] | None = None,
) -> np.ndarray[Any, Any]: ...
