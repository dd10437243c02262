"""Fuzz oipcodec.graphpipe's decoders: GraphPipe flatbuffers through the flatbuf reader.
Input layout: byte 0 picks tight limits (bits 0-1) and the root (bits 2-3: a Request, an
InferResponse, a MetadataResponse); the rest is the flatbuffer."""

from __future__ import annotations

from typing import Any

from _harness import LIMITS, Reader, compare

import oipcodec.graphpipe

DECODERS = (
    oipcodec.graphpipe.decode_request,
    oipcodec.graphpipe.decode_response,
    oipcodec.graphpipe.decode_metadata_response,
    oipcodec.graphpipe.decode_request,
)


def one_input(data: bytes) -> tuple[Any, ...]:
    reader = Reader(data)
    flags = reader.byte()
    limits = LIMITS[flags & 3]
    decode = DECODERS[(flags >> 2) & 3]
    body = reader.rest()
    return compare(lambda k: decode(body, limits=limits, kernels=k), data)


if __name__ == "__main__":
    from _harness import main

    main(one_input)
