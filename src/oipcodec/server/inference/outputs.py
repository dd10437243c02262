"""What a request asks of its outputs beyond their data: classification (the ``k`` best
classes, docs/classification.md) and shared memory (written into a registered region).

Both are planned, and refused, before the model runs; the plan is applied to the checked
outputs of ``predict``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from oipcodec.errors import InvalidArgumentError, OIPError
from oipcodec.server.inference.classification import check_datatype, class_count, classify
from oipcodec.server.model import Model
from oipcodec.server.regions import SharedMemoryRegions, shared_memory_disabled
from oipcodec.sharedmem import Location, location, parameters_for
from oipcodec.types import RequestedOutput, Tensor

__all__ = ["OutputPlan"]


@dataclass(slots=True)
class OutputPlan:
    """The outputs to classify, with their k, and those to write into shared memory, with
    where (``regions``: the server's, None when the extension is off)."""

    classes: dict[str, int]
    in_shm: dict[str, Location]
    regions: SharedMemoryRegions | None

    @classmethod
    def of(
        cls,
        model: Model,
        asked: Sequence[RequestedOutput],
        regions: SharedMemoryRegions | None,
    ) -> OutputPlan | None:
        """The plan of the outputs a request ``asked`` for (None when there is nothing to
        do); :class:`InvalidArgumentError` for an output the model does not declare, a
        classification or a shared-memory location that cannot be.

        Parameters
        ----------
        model
            The model.
        asked
            The request's outputs.
        regions
            The server's shared-memory regions, or None.
        """
        classes: dict[str, int] = {}
        in_shm: dict[str, Location] = {}
        for output in asked:
            if output.parameters:
                where = _output_location(output)
                if where is not None:
                    if regions is None:
                        shared_memory_disabled(where, output.name, "output", True)
                    in_shm[output.name] = where
        if model.outputs is not None:
            declared = [s.name for s in model.outputs]
            for output in asked:
                if output.name not in declared:
                    raise InvalidArgumentError(
                        f"unexpected inference output '{output.name}' for model "
                        f"'{model.name}'; its outputs are {declared}"
                    )
        for output in asked:
            k = class_count(output) if output.parameters else None
            if k is not None:
                for spec in model.outputs or ():
                    if spec.name == output.name:
                        check_datatype(output.name, spec.datatype)
                classes[output.name] = k
        return cls(classes, in_shm, regions) if classes or in_shm else None

    def apply(self, model: Model, outputs: list[Tensor]) -> list[Tensor]:
        """The checked ``outputs`` classified, and written into shared memory, as planned.

        Parameters
        ----------
        model
            The model.
        outputs
            The answer's tensors.
        """
        classes = self.classes
        if classes:
            batched = model.max_batch_size > 0
            outputs = [
                classify(t, classes[t.name], batched, model.class_labels(t.name))
                if t.name in classes
                else t
                for t in outputs
            ]
        if self.in_shm:
            assert self.regions is not None
            for tensor in outputs:
                where = self.in_shm.get(tensor.name)
                if where is not None:
                    # Written into the region; the tensor then carries the location (its
                    # byte_size: the bytes written) and the encoders send no data for it.
                    tensor.parameters = parameters_for(self.regions.write(tensor, where))
        return outputs


def _output_location(asked: RequestedOutput) -> Location | None:
    try:
        return location(asked.parameters)
    except OIPError as exc:
        raise InvalidArgumentError(f"output '{asked.name}' {exc.reason}") from None
