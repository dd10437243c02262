"""The models native_http.py serves for its ``batched`` case: the demo models and
``identity_batched``, the demo ``identity`` with dynamic batching (no delay: a batch takes
what queued while the previous one ran)."""

from __future__ import annotations

from oipcodec.server.demo import Identity, demo_models
from oipcodec.server.model_config import DynamicBatching


class IdentityBatched(Identity):
    name = "identity_batched"
    max_batch_size = 64
    dynamic_batching = DynamicBatching()


MODELS = [*demo_models(), IdentityBatched()]
