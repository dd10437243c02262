from collections.abc import Mapping
from typing import Any

from oipcodec.limits import Limits

__all__ = ["read_infer_message", "write_infer_message"]

def read_infer_message(
    data: Any, kind: str = "request", limits: Limits = ...
) -> tuple[
    str,
    str,
    str,
    dict[str, Any],
    list[tuple[str, str, tuple[int, ...], dict[str, Any], dict[str, Any] | None, int, int]],
    list[tuple[str, dict[str, Any]]],
    list[memoryview],
]: ...
def write_infer_message(
    kind: str,
    model_name: str | None,
    model_version: str | None,
    id: str | None,
    parameters: Mapping[str, object] | None,
    tensors: list[tuple[Any, ...]],
    requested: list[tuple[str, Mapping[str, object] | None]] | None = None,
) -> bytes: ...
