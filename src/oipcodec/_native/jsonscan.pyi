from typing import Any

__all__ = ["locate_data"]

def locate_data(buffer: Any) -> list[tuple[int, int, int, int]]: ...
