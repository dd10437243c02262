"""Every field of Triton's model configuration parses (config.pbtxt and config.json), the
fields the server does not act on are named once in a warning, and a model so configured
loads and serves; the schema matches tritonclient's copy of Triton's model_config.proto,
message by message and field by field (names, numbers, types)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oipcodec.proto import open_inference_grpc_pb2 as pb2
from oipcodec.server.repository import read_config
from oipcodec.testing import background

pytest.importorskip("uvicorn", reason="the server extra is not installed")
pytest.importorskip("tritonclient.grpc")
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.grpc import model_config_pb2 as triton

MODEL = """
from oipcodec.server import Model


class Twice(Model):
    def predict(self, inputs, parameters):
        return {"Y": inputs["X"] * 2}
"""

#: Every top-level field of Triton's ModelConfig but the two other members of the
#: scheduling oneof (SCHEDULING below), with dynamic_batching's queue policies.
EVERY_FIELD = """
name: "every_field"
platform: "oipcodec_python"
backend: "python"
runtime: "model.py"
version_policy { latest { num_versions: 1 } }
max_batch_size: 8
input [
  {
    name: "X" data_type: TYPE_FP32 format: FORMAT_NONE dims: [ 4 ]
    reshape { shape: [ 4 ] } is_shape_tensor: false allow_ragged_batch: false optional: false
    is_non_linear_format_io: false
  }
]
output [
  { name: "Y" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 4 ] } is_non_linear_format_io: false }
]
batch_input [
  { kind: BATCH_ELEMENT_COUNT target_name: "COUNT" data_type: TYPE_FP32 source_input: "X" }
]
batch_output [ { target_name: "Y" kind: BATCH_SCATTER_WITH_INPUT_SHAPE source_input: "X" } ]
optimization {
  graph { level: 1 }
  priority: PRIORITY_MAX
  cuda {
    graphs: true busy_wait_events: false output_copy_stream: true
    graph_spec {
      batch_size: 4
      input { key: "X" value { dim: [ 4 ] } }
      graph_lower_bound { batch_size: 1 input { key: "X" value { dim: [ 4 ] } } }
    }
  }
  execution_accelerators {
    cpu_execution_accelerator { name: "openvino" parameters { key: "k" value: "v" } }
  }
  input_pinned_memory { enable: true }
  output_pinned_memory { enable: false }
  gather_kernel_buffer_threshold: 2
  eager_batching: true
}
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
  preserve_ordering: true
  default_queue_policy {
    timeout_action: DELAY default_timeout_microseconds: 1000000
    allow_timeout_override: true max_queue_size: 16
  }
}
instance_group [
  {
    name: "cpu" kind: KIND_CPU count: 1
    rate_limiter { resources [ { name: "R" global: true count: 2 } ] priority: 1 }
    secondary_devices [ { kind: KIND_NVDLA device_id: 0 } ]
    profile: [ "p" ] passive: false host_policy: "h"
  }
]
default_model_filename: "model.py"
cc_model_filenames { key: "8.0" value: "model.py" }
metric_tags { key: "team" value: "a" }
parameters { key: "origin" value: { string_value: "config.pbtxt" } }
model_warmup [
  {
    name: "warm" batch_size: 1 count: 1
    inputs { key: "X" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } }
  }
]
model_operations { op_library_filename: [ "libop.so" ] }
model_transaction_policy { decoupled: false }
model_repository_agents { agents [ { name: "checksum" parameters { key: "k" value: "v" } } ] }
response_cache { enable: false }
model_metrics {
  metric_control [
    {
      metric_identifier { family: "nv_inference_request_duration_us" }
      histogram_options { buckets: [ 100, 1000 ] }
    }
  ]
}
"""

#: The scheduling oneof's two other members, each in a configuration of its own.
SCHEDULING = {
    "sequence_batching": """
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1 ] } ] }
  ]
  state [
    {
      input_name: "IN_STATE" output_name: "OUT_STATE" data_type: TYPE_FP32 dims: [ 1 ]
      initial_state [ { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "zero" } ]
      use_same_buffer_for_input_output: false use_growable_memory: false
    }
  ]
  oldest { max_candidate_sequences: 4 preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 10 preserve_ordering: true }
  iterative_sequence: false
}
""",
    "ensemble_scheduling": """
ensemble_scheduling {
  step [
    {
      model_name: "every_field" model_version: -1 model_namespace: ""
      input_map { key: "X" value: "X" } output_map { key: "Y" value: "Y" }
    }
  ]
  max_inflight_requests: 2
}
""",
}


def _folder(root: Path, name: str, config: str, filename: str = "config.pbtxt") -> Path:
    (root / name).mkdir()
    (root / name / "model.py").write_text(MODEL)
    (root / name / filename).write_text(config)
    return root / name


@pytest.mark.grpc
def test_every_field_of_a_triton_configuration_parses_and_the_model_loads(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A config.pbtxt setting every top-level field of Triton's ModelConfig, with
    dynamic_batching's default_queue_policy and priority_queue_policy, is read (the fields
    kept, the ones not acted on named once), and the model loads and batches; before, the
    schema lacked those fields (a config.json was refused: 'has no field named
    default_queue_policy'; a config.pbtxt lost them)."""
    every = EVERY_FIELD.replace(
        "max_queue_size: 16\n  }",
        "max_queue_size: 16\n  }\n  priority_levels: 2 default_priority_level: 1\n"
        "  priority_queue_policy { key: 1 value { max_queue_size: 4 } }",
    )
    folder = _folder(tmp_path, "every_field", every)
    caplog.set_level(logging.WARNING, logger="oipcodec")
    config, _ = read_config(folder, "every_field")
    set_fields = {field.name for field, _ in config.ListFields()}
    scheduling = {"sequence_batching", "ensemble_scheduling"}
    assert set_fields == {f.name for f in triton.ModelConfig.DESCRIPTOR.fields} - scheduling
    assert config.dynamic_batching.default_queue_policy.max_queue_size == 16
    assert config.dynamic_batching.priority_queue_policy[1].max_queue_size == 4
    warnings = [r.getMessage() for r in caplog.records if "does not read" in r.getMessage()]
    assert len(warnings) == 1
    named = warnings[0].split("does not read: ")[1].split(", ")
    assert len(named) == len(set(named))  # each field once
    for field in ("instance_group", "optimization", "input.reshape", "model_warmup"):
        assert field in named, warnings[0]
    for field in ("max_batch_size", "parameters", "dynamic_batching.preferred_batch_size",
                  "dynamic_batching.default_queue_policy",
                  "dynamic_batching.priority_queue_policy"):  # fmt: skip
        assert field not in named  # acted on: not named
    for name, text in SCHEDULING.items():
        other, _ = read_config(_folder(tmp_path, name, f'name: "{name}"\n{text}'), name)
        assert other.HasField(name)
    with background(
        model_repository=str(tmp_path),
        model_control="explicit",
        load_models=("every_field",),
        log_level="critical",
    ) as server:
        grpc = grpcclient.InferenceServerClient(server.grpc_address)
        http = httpclient.InferenceServerClient(server.http_address)
        try:
            assert grpc.is_model_ready("every_field")
            tensor = grpcclient.InferInput("X", [1, 4], "FP32")
            tensor.set_data_from_numpy(np.ones((1, 4), np.float32))
            answer = grpc.infer("every_field", [tensor]).as_numpy("Y")
            np.testing.assert_array_equal(answer, np.full((1, 4), 2, np.float32))
            served = grpc.get_model_config("every_field").config  # Triton's message
            assert served.max_batch_size == 8
            assert list(served.dynamic_batching.preferred_batch_size) == [4, 8]
            queue = served.dynamic_batching  # the queue policies, as the file has them
            assert (queue.priority_levels, queue.default_priority_level) == (2, 1)
            assert queue.default_queue_policy.timeout_action == triton.ModelQueuePolicy.DELAY
            assert queue.default_queue_policy.default_timeout_microseconds == 1000000
            assert queue.default_queue_policy.allow_timeout_override
            assert queue.priority_queue_policy[1].max_queue_size == 4
            assert http.get_model_config("every_field")["max_batch_size"] == 8
            for name in SCHEDULING:  # parsed and loaded; the server does not act on them
                grpc.load_model(name)
                assert grpc.is_model_ready(name)
        finally:
            grpc.close()
            http.close()


def test_a_config_json_with_queue_policies_loads(tmp_path: Path) -> None:
    """Triton's JSON form of a configuration with dynamic_batching's queue policies; before,
    it was refused: 'has no field named default_queue_policy'."""
    document = {
        "max_batch_size": 4,
        "dynamic_batching": {
            "default_queue_policy": {"max_queue_size": 8, "timeout_action": "DELAY"},
            "priority_levels": 2,
            "priority_queue_policy": {"1": {"max_queue_size": 2}},
        },
        "instance_group": [{"count": 1, "kind": "KIND_CPU"}],
    }
    folder = _folder(tmp_path, "queued", json.dumps(document), "config.json")
    config, _ = read_config(folder, "queued")
    assert (
        config.dynamic_batching.default_queue_policy.timeout_action == triton.ModelQueuePolicy.DELAY
    )
    assert config.instance_group[0].count == 1


def _fields(descriptor: Any) -> dict[str, tuple[int, int, str]]:
    return {
        f.name: (f.number, f.type, f.message_type.name if f.message_type else "")
        for f in descriptor.fields
    }


def test_the_schema_is_tritons() -> None:
    """Every message of tritonclient's model_config.proto (nested ones too) is in
    open_inference_grpc.proto with the same fields (name, number, type), so the ModelConfig
    RPC's answers stay wire-compatible with Triton's."""
    pending = [m for m in triton.DESCRIPTOR.message_types_by_name.values()]
    seen = 0
    while pending:
        theirs = pending.pop()
        pending += [n for n in theirs.nested_types if not n.GetOptions().map_entry]
        ours = pb2.DESCRIPTOR.pool.FindMessageTypeByName(theirs.full_name)
        assert _fields(ours) == _fields(theirs), theirs.full_name
        seen += 1
    assert seen > 40
