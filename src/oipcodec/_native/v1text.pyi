from typing import Any

__all__ = ["scan_request_header", "scan_response_header"]

def scan_request_header(
    text: str,
) -> tuple[dict[str, int], list[dict[str, Any]], list[dict[str, Any]]] | None: ...
def scan_response_header(
    text: str,
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None: ...
