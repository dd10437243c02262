"""Regenerate the Python modules of ``open_inference_grpc.proto`` and ``trtis_v1.proto``.

Usage: ``python -m oipcodec.proto.regenerate [OUTPUT_DIR]`` (default: this package's folder).
Needs grpcio-tools (the ``dev`` extra). protoc's output is post-processed in one way: the
descriptors go into a private descriptor pool instead of protobuf's default pool, so that these
classes and tritonclient's or KServe's (which also define ``inference.ModelInferRequest``...)
can be imported in the same process (for ``trtis_v1.proto``: tensorrtserver's
``nvidia.inferenceserver.*``). tests/codecs/test_proto.py runs this into a temporary folder and
fails when the result differs from the committed files.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
SOURCE_ROOT = PACKAGE.parent.parent  # src/
#: The .proto files, relative to ``SOURCE_ROOT``.
PROTOS = ("oipcodec/proto/open_inference_grpc.proto", "oipcodec/proto/trtis_v1.proto")
PROTO = PROTOS[0]
GENERATED = tuple(
    Path(proto).stem + suffix
    for proto in PROTOS
    for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")
)

_DEFAULT_POOL = "DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile("
_PRIVATE_POOL = (
    "# oipcodec: a private pool, so that other packages' inference.* classes can coexist.\n"
    "_POOL = _descriptor_pool.DescriptorPool()\n"
    "DESCRIPTOR = _POOL.AddSerializedFile("
)


def generate(output_dir: Path) -> list[Path]:
    """Run protoc (from grpcio-tools) into ``output_dir``; returns the files written."""
    from grpc_tools import protoc  # dev dependency

    with tempfile.TemporaryDirectory() as tmp:
        status = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{SOURCE_ROOT}",
                f"--python_out={tmp}",
                f"--pyi_out={tmp}",
                f"--grpc_python_out={tmp}",
                *(str(SOURCE_ROOT / proto) for proto in PROTOS),
            ]
        )
        if status != 0:
            raise RuntimeError(f"protoc failed with status {status}")
        output_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name in GENERATED:
            text = (Path(tmp) / "oipcodec" / "proto" / name).read_text(encoding="utf-8")
            if name.endswith("_pb2.py"):
                if text.count(_DEFAULT_POOL) != 1:
                    raise RuntimeError("protoc output changed: descriptor pool line not found")
                text = text.replace(_DEFAULT_POOL, _PRIVATE_POOL)
            target = output_dir / name
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    output = Path(args[0]) if args else PACKAGE
    for path in generate(output):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
