from typing import Any

ERROR_KINDS: tuple[str, ...]

def run_load(
    family: int,
    address: str,
    port: int,
    requests: list[bytes],
    connections: int,
    duration: float,
    count: int,
    rate: float,
    timeout: float,
    max_answer: int,
    capacity: int,
    h2: tuple[str, str, int] | None = None,
) -> dict[str, Any]: ...
