"""The payloads the harness sends: one input tensor each, echoed back by the identity model."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from oipcodec import datatypes
from oipcodec.types import Tensor

__all__ = ["PAYLOADS", "QUICK_PAYLOADS", "Payload", "custom_payload", "make_tensor"]

#: The input (and, through the identity model, output) tensor name.
INPUT = "INPUT0"


@dataclass(frozen=True)
class Payload:
    name: str
    datatype: str
    shape: tuple[int, ...]
    description: str

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    def label(self) -> str:
        return f"{self.name} ({'x'.join(map(str, self.shape))} {self.datatype})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "datatype": self.datatype,
            "shape": list(self.shape),
            "description": self.description,
        }


PAYLOADS: dict[str, Payload] = {
    p.name: p
    for p in (
        Payload("small", "FP32", (1, 16), "a small FP32 vector: per-request overhead"),
        Payload("image", "FP32", (1, 3, 224, 224), "an image batch of one, FP32 (602 kB)"),
        Payload("logits_bf16", "BF16", (1, 32000), "LLM logits over a 32k vocabulary, BF16"),
        Payload("logits_fp32", "FP32", (1, 32000), "LLM logits over a 32k vocabulary, FP32"),
        Payload("strings", "BYTES", (1000,), "a batch of 1k strings of 8-64 bytes"),
        Payload("tokens", "INT64", (8, 512), "INT64 token ids, a batch of 8 x 512"),
    )
}
#: What ``--quick`` sends: per-request overhead, and a payload where the codec shows.
QUICK_PAYLOADS = ("small", "tokens")


def custom_payload(shape: str, datatype: str) -> Payload:
    """A user's payload from ``--shape 4,128 --datatype FP16``."""
    row = datatypes.get(datatype)
    try:
        dims = tuple(int(d) for d in shape.replace("x", ",").split(",") if d.strip())
    except ValueError:
        raise ValueError(f"--shape must be integers separated by commas, got {shape!r}") from None
    if not dims or any(d < 0 for d in dims):
        raise ValueError(f"--shape must be non-negative integers, got {shape!r}")
    return Payload("custom", row.name, dims, f"your payload: {list(dims)} {row.name}")


def make_tensor(payload: Payload, seed: int = 0) -> Tensor:
    """The payload's input tensor, with deterministic pseudo-random values of a realistic
    kind (pixel values in [0, 1), normally distributed logits, token ids below 32000...)."""
    rng = np.random.default_rng(seed)
    shape, name = payload.shape, payload.datatype
    count = payload.elements
    data: np.ndarray[Any, Any]
    if name == "BYTES":
        lengths = rng.integers(8, 65, count)
        letters = rng.integers(97, 123, int(lengths.sum()), dtype=np.uint8).tobytes()
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        data = np.empty(count, dtype=object)
        for i in range(count):
            data[i] = letters[offsets[i] : offsets[i + 1]]
        data = data.reshape(shape)
    elif name == "BOOL":
        data = rng.integers(0, 2, shape).astype(np.bool_)
    elif name in ("FP16", "FP32", "FP64", "BF16"):
        if payload.name == "image":
            values = rng.random(shape, dtype=np.float32)
        else:
            values = rng.standard_normal(shape, dtype=np.float32) * 4
        data = _bf16(values) if name == "BF16" else values.astype(datatypes.to_numpy(name))
    else:
        dtype = datatypes.to_numpy(name)
        high = min(32000, int(np.iinfo(dtype).max))
        low = 0 if np.iinfo(dtype).min == 0 else -min(32000, high)
        data = rng.integers(low, high, shape).astype(dtype)
    return Tensor(INPUT, name, shape, data)


def _bf16(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """BF16 values: an ml_dtypes.bfloat16 array when installed, else float32 values that are
    exactly BF16 (so every codec and peer round-trips them bit for bit)."""
    if datatypes.BF16_DTYPE is not None:
        return values.astype(datatypes.BF16_DTYPE)
    bits = values.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)
