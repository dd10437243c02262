from typing import Any

__all__ = ["array_to_json"]

def array_to_json(
    array: Any, datatype: str, nested: bool = False, *, nonfinite: str = "tokens"
) -> bytes: ...
