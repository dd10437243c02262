"""Send one gRPC inference with the real tritonclient, for tests/compat/test_compat_mlserver.py.

It runs in a process of its own: tritonclient.grpc and MLServer both register the
``inference.*`` protobuf messages in the default descriptor pool, so they cannot be imported
into one process (the test process imports MLServer).

    python mlserver_grpc_client.py TARGET MODEL INPUTS.npz OUTPUTS.npz [NAME,NAME...]

Sends every array of INPUTS.npz as an input of that name (raw contents, as tritonclient
does; an array named ``<name>.truncate`` cuts that many bytes off input ``<name>``), asks for
the outputs named (comma-separated; by default the inputs' names), and writes them to
OUTPUTS.npz; a refused request writes its error message to OUTPUTS.npz.error instead.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

# npz files have no BF16: such arrays travel as their uint16 bits under "<name>.bf16".
_BF16 = ".bf16"


def save(path: str, arrays: dict[str, np.ndarray[Any, Any]]) -> None:
    stored = {}
    for name, array in arrays.items():
        if array.dtype.name == "bfloat16":
            stored[name + _BF16] = array.view(np.uint16)
        else:
            stored[name] = array
    np.savez(path, **stored)  # type: ignore[arg-type]


def load(path: str) -> dict[str, np.ndarray[Any, Any]]:
    import ml_dtypes

    with np.load(path, allow_pickle=True) as stored:
        arrays = {name: stored[name] for name in stored.files}
    return {
        (name[: -len(_BF16)] if name.endswith(_BF16) else name): (
            array.view(ml_dtypes.bfloat16) if name.endswith(_BF16) else array
        )
        for name, array in arrays.items()
    }


def main(target: str, model: str, inputs_path: str, outputs_path: str, names: str = "") -> None:
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException, np_to_triton_dtype

    arrays = load(inputs_path)
    cuts = {
        name[: -len(".truncate")]: int(arrays.pop(name))
        for name in list(arrays)
        if name.endswith(".truncate")
    }
    inputs = []
    for name, array in arrays.items():
        datatype = "BYTES" if array.dtype == object else np_to_triton_dtype(array.dtype)
        tensor = grpcclient.InferInput(name, list(array.shape), datatype)
        tensor.set_data_from_numpy(array)
        if name in cuts:
            tensor._raw_content = tensor._raw_content[: -cuts[name]]
        inputs.append(tensor)
    wanted = names.split(",") if names else list(arrays)
    outputs = [grpcclient.InferRequestedOutput(name) for name in wanted]
    client = grpcclient.InferenceServerClient(target)
    try:
        result = client.infer(model, inputs, outputs=outputs, client_timeout=30.0)
    except InferenceServerException as exc:
        Path(outputs_path + ".error").write_text(str(exc))
        return
    finally:
        client.close()
    save(outputs_path, {name: result.as_numpy(name) for name in wanted})


if __name__ == "__main__":
    main(*sys.argv[1:6])
