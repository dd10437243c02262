from collections.abc import Container, Sequence
from typing import Any

from oipcodec._shared.fusedrest import FusedPlan
from oipcodec.limits import Limits

__all__ = ["FusedPlan", "decode_inputs", "encode_outputs", "fused_plan"]

def decode_inputs(
    body: Any, plan: FusedPlan, header_length: int = -1
) -> tuple[dict[str, Any], str | None, list[str] | None, bool | set[str]] | None: ...
def encode_outputs(
    plan: FusedPlan,
    request_id: str | None,
    outputs: dict[str, Any],
    binary: bool | Container[str] = False,
) -> bytes | tuple[bytes, int] | None: ...
def fused_plan(
    model_name: str,
    model_version: str,
    inputs: Sequence[tuple[str, str, Sequence[int]]] | None,
    outputs: Sequence[tuple[str, str, Sequence[int], bool]] | None,
    limits: Limits = ...,
    max_output_bytes: int | None = None,
) -> FusedPlan | None: ...
