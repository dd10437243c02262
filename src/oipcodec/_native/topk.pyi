from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["classification_strings", "top_k"]

def top_k(values: Any, k: Any) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]: ...
def classification_strings(
    values: Any, indices: Any, labels: Sequence[Any] | None = None
) -> np.ndarray[Any, Any]: ...
