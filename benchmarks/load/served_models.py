"""The models native_http.py serves for its ``batched`` and ``async`` cases: the demo models,
``identity_batched``, the demo ``identity`` with dynamic batching (no delay: a batch takes
what queued while the previous one ran), and ``identity_async``, the demo ``identity`` as an
``async def predict`` that waits once (so each request runs as a task)."""

from __future__ import annotations

import asyncio
from typing import Any

from oipcodec.server.demo import Identity, demo_models
from oipcodec.server.model_config import DynamicBatching


class IdentityBatched(Identity):
    name = "identity_batched"
    max_batch_size = 64
    dynamic_batching = DynamicBatching()


class IdentityAsync(Identity):
    name = "identity_async"

    async def predict(self, inputs: dict[str, Any], parameters: dict[str, Any]) -> Any:  # type: ignore[override]
        await asyncio.sleep(0)
        return super().predict(inputs, parameters)


MODELS = [*demo_models(), IdentityBatched(), IdentityAsync()]
