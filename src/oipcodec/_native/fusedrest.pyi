from typing import Any

from oipcodec._shared.fusedrest import FusedPlan

__all__ = ["decode_inputs", "encode_outputs"]

def decode_inputs(body: Any, plan: FusedPlan) -> tuple[dict[str, Any], str | None] | None: ...
def encode_outputs(
    plan: FusedPlan, request_id: str | None, outputs: dict[str, Any]
) -> bytes | None: ...
