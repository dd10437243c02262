from typing import Any

__all__ = ["parse_head"]

def parse_head(data: Any) -> tuple[int, int, int, int, int, bool, bool]: ...
